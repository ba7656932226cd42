//! `atomworld prepare --suite S --model M`: what a suite's runs retrieve and a model writes
//! once (MatTools: the model-written documentation), written through the gateway (its cache,
//! keys and spend caps) and the suite's sandbox.

use std::path::PathBuf;

use super::store::StoreArgs;
use super::CliError;
use crate::agents::Effects;
use crate::config::Config;
use crate::llm::spend::Budget;
use crate::llm::{Gateway, GatewayOptions};
use crate::suites::Catalogue;

/// The command's arguments.
#[derive(clap::Args, Debug)]
pub struct PrepareArgs {
    /// The suite.
    #[arg(long)]
    pub suite: String,
    /// The model that writes.
    #[arg(long)]
    pub model: String,
    /// Write at most this many items now (writing again goes on where it stopped).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Configuration file (models, prices, limits, the sandbox); keys from the environment.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where the response cache is.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Writes what `args.suite` prepares; the suite's line saying what was written.
pub async fn prepare(args: PrepareArgs) -> Result<String, CliError> {
    let suites = Catalogue::standard();
    suites
        .registry
        .get(&args.suite)
        .map_err(|e| CliError::input(e.to_string()))?;
    let config =
        Config::load(args.config.as_deref()).map_err(|e| CliError::input(e.to_string()))?;
    let storage = args.store.open()?;
    let gateway = Gateway::new(
        config,
        storage,
        GatewayOptions {
            cache: true,
            replay_only: false,
        },
    )
    .map_err(|e| CliError::failure(e.to_string()))?;
    let code = crate::execution::CodeRunner::from_config(&gateway.config().sandbox);
    // The whole preparation counts against one run's cap, when one is set.
    let budget = gateway
        .config()
        .limits
        .run_spend_usd
        .map(|cap| Budget::for_run(cap, 0.0));
    let fx = Effects {
        gateway: &gateway,
        budget: budget.as_ref(),
        code: &code,
        embeddings: None,
    };
    let host = suites.hosts.get(&args.suite);
    let Some(work) = host.prepare_with_model(&args.model, args.limit, &fx) else {
        return Err(CliError::input(format!(
            "suite {} has nothing a model writes beforehand",
            args.suite
        )));
    };
    work.await
        .map(|line| format!("{line}\n"))
        .map_err(CliError::failure)
}
