//! The server's side of each suite: what it does that needs files, the network or the
//! configuration (task folders and sets, recipes and their references, images). The suite's
//! pure side (prompts, scoring, its files' layout, its agents and needs) is its
//! [`benchmarks::task::Suite`]; the generic layers (runs, CLI, HTTP) reach a suite only through
//! these two, found by the suite's name in [`Hosts`] and in the [`benchmarks::task::Registry`].
//!
//! A suite without effects of its own needs no host here: [`Hosts::get`] gives it the plain
//! one (its tasks read from files by [`crate::task_files`], asked as they are).

pub mod alchemy;
pub mod atomworld;
pub mod mattools;
pub mod omnimat;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use benchmarks::task::{AnySuite, Registry};
use futures_util::future::BoxFuture;
use serde::Serialize;

pub use crate::config::SuitesConfig;
use crate::llm::Gateway;
use crate::task_files::ReadTasks;

/// Why a suite's tasks could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The input's fault (a missing file, a bad layout, a missing option).
    #[error("{0}")]
    Input(String),
    /// Not the input's fault.
    #[error("{0}")]
    Failure(String),
    /// A model or embeddings call failed.
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
}

/// What computing embeddings for a run's tasks used (AlchemyBench's references).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmbeddingUse {
    /// Recipes whose embedding was computed (or taken from the embeddings cache).
    pub computed: usize,
    /// Of those, how many came from the cache.
    pub cached: usize,
    /// Input tokens sent.
    pub input_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
}

/// An agent's answer, suite-neutral: its rounds as JSON (stored with the result).
pub type AgentReply = crate::agents::AgentAnswer<serde_json::Value>;

/// Why an agent gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A model call failed (a spend cap among them).
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
    /// The task cannot be answered this way.
    #[error("{0}")]
    Task(String),
}

/// `answer` with its rounds as JSON.
pub fn neutral<R: Serialize>(answer: crate::agents::AgentAnswer<R>) -> AgentReply {
    crate::agents::AgentAnswer {
        rounds: answer
            .rounds
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(serde_json::Value::Null))
            .collect(),
        response: answer.response,
        input_tokens: answer.input_tokens,
        output_tokens: answer.output_tokens,
        cost_usd: answer.cost_usd,
        cached: answer.cached,
    }
}

/// What an agent answers: the prepared task (its messages) and the task as its suite's
/// JSON, and the sample.
pub struct AgentTask<'a> {
    /// The prepared task.
    pub prepared: &'a benchmarks::task::PreparedTask,
    /// The task as its suite's JSON.
    pub json: &'a serde_json::Value,
    /// The sample index.
    pub sample: u32,
}

/// A task set the server offers for a suite, and where it comes from (a sentence).
pub type TaskSet = (Vec<serde_json::Value>, String);

/// What preparing a run's tasks may use: the gateway (for embeddings) and the run's options.
pub struct Preparation<'a> {
    /// Model and embeddings calls, within the spend caps.
    pub gateway: &'a Gateway,
    /// The embeddings model chosen for the run, if any.
    pub embeddings: Option<&'a str>,
    /// References retrieved per task (AlchemyBench's K; 0: none).
    pub references: usize,
    /// Where references are retrieved from (AlchemyBench's train split).
    pub reference_pool: Option<&'a Path>,
}

/// The server's side of one suite. Every method has the plain behaviour by default.
pub trait SuiteHost: Send + Sync {
    /// The suite's name (its [`benchmarks::task::Suite::NAME`]).
    fn name(&self) -> &'static str;

    /// The task set the server offers the page and runs given no tasks, if any.
    fn task_set(&self, _config: &SuitesConfig) -> Option<TaskSet> {
        None
    }

    /// Read-only data sets the sandbox shows this suite's programs (name, folder): from the
    /// folder a run's tasks come from (`tasks`), else from the suite's configured folder
    /// (MatTools' data folder brings the test files its questions read).
    fn sandbox_data(
        &self,
        _tasks: Option<&Path>,
        _config: &SuitesConfig,
    ) -> Vec<(String, PathBuf)> {
        Vec::new()
    }

    /// The tasks at `path` (a file or a folder), each checked, those the suite cannot run
    /// left out with their places and reasons.
    fn read(&self, suite: &dyn AnySuite, path: &Path) -> Result<ReadTasks, LoadError> {
        crate::task_files::read_tasks(suite, path).map_err(|e| LoadError::Input(e.to_string()))
    }

    /// The tasks as a run asks them, prepared with effects (AlchemyBench's references) before
    /// the run is recorded; and what computing embeddings for them used.
    fn prepare<'a>(
        &'a self,
        tasks: Vec<serde_json::Value>,
        _how: &'a Preparation<'a>,
    ) -> BoxFuture<'a, Result<(Vec<serde_json::Value>, EmbeddingUse), LoadError>> {
        Box::pin(async move { Ok((tasks, EmbeddingUse::default())) })
    }

    /// The numbers of references a person may ask one task to retrieve on the page
    /// (AlchemyBench's K); empty when the suite takes none.
    fn reference_counts(&self) -> &'static [usize] {
        &[]
    }

    /// `task` with its `k` nearest tasks of `pool` (the server's task set) as references,
    /// found through the gateway's embeddings model `embeddings` when one is configured;
    /// `None` when the suite takes no references.
    fn with_references<'a>(
        &'a self,
        _task: serde_json::Value,
        _k: usize,
        _pool: Vec<serde_json::Value>,
        _gateway: &'a Gateway,
        _embeddings: Option<&'a str>,
    ) -> Option<BoxFuture<'a, Result<serde_json::Value, LoadError>>> {
        None
    }

    /// The answer of agent `agent` (one of the suite's [`AnySuite::agents`]) with model
    /// `model` to `task`; `None` when the suite has no such agent.
    fn answer_with<'a>(
        &'a self,
        _agent: &'a str,
        _model: &'a str,
        _task: AgentTask<'a>,
        _fx: &'a crate::agents::Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        None
    }

    /// Writes, with model `model`, what the suite's runs later retrieve and a model writes
    /// once (MatTools: the model-written documentation), going on where it stopped; at most
    /// `limit` items this time. A line saying what was written; `None` when the suite has
    /// nothing to write.
    fn prepare_with_model<'a>(
        &'a self,
        _model: &'a str,
        _limit: Option<usize>,
        _fx: &'a crate::agents::Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<String, String>>> {
        None
    }

    /// A task as it is asked (OmniMatBench: with its images read); the stored task stays
    /// the file's.
    fn asked(&self, task: &serde_json::Value, _config: &SuitesConfig) -> serde_json::Value {
        task.clone()
    }

    /// The image stems `task` names (shown by the page, served by the API).
    fn image_stems(&self, _task: &serde_json::Value) -> Vec<String> {
        Vec::new()
    }

    /// Image `stem` (bytes and media type), or why it is unavailable.
    fn image(&self, stem: &str, _config: &SuitesConfig) -> Result<(Vec<u8>, &'static str), String> {
        Err(format!("image {stem}: this suite has no images"))
    }
}

/// The host of a suite with no effects of its own.
struct Plain;

impl SuiteHost for Plain {
    fn name(&self) -> &'static str {
        ""
    }
}

/// The suites' hosts, by name.
#[derive(Clone)]
pub struct Hosts {
    hosts: Vec<Arc<dyn SuiteHost>>,
}

impl Hosts {
    /// The hosts of the product's suites.
    pub fn standard() -> Self {
        Hosts {
            hosts: vec![
                Arc::new(atomworld::AtomWorld),
                Arc::new(mattools::MatToolsCode),
                Arc::new(mattools::MatToolsQa),
                Arc::new(omnimat::OmniMat::CAL),
                Arc::new(omnimat::OmniMat::QA),
                Arc::new(alchemy::Alchemy),
            ],
        }
    }

    /// The host of suite `name` (the plain one when the suite has none).
    pub fn get(&self, name: &str) -> Arc<dyn SuiteHost> {
        self.hosts
            .iter()
            .find(|h| h.name() == name)
            .cloned()
            .unwrap_or_else(|| Arc::new(Plain))
    }

    /// Every host.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn SuiteHost>> {
        self.hosts.iter()
    }

    /// `sandbox` with the data sets every suite brings under `config` (for the server), or
    /// that suite `suite` brings from `tasks` (for a run of the CLI); configured ones win.
    pub fn with_sandbox_data(
        &self,
        mut sandbox: crate::config::SandboxConfig,
        config: &SuitesConfig,
        run: Option<(&str, &Path)>,
    ) -> crate::config::SandboxConfig {
        let data: Vec<(String, PathBuf)> = match run {
            Some((suite, tasks)) => self.get(suite).sandbox_data(Some(tasks), config),
            None => self
                .all()
                .flat_map(|h| h.sandbox_data(None, config))
                .collect(),
        };
        for (name, folder) in data {
            sandbox.pymatgen.data.entry(name).or_insert(folder);
        }
        sandbox
    }
}

/// The suites a server runs: each suite's pure side (the [`Registry`]) and its host here.
/// A suite is added as one [`benchmarks::task::Suite`] and, when it has effects, one
/// [`SuiteHost`]; nothing else names it.
#[derive(Clone)]
pub struct Catalogue {
    /// The suites' pure sides.
    pub registry: Registry,
    /// Their hosts.
    pub hosts: Hosts,
}

impl Catalogue {
    /// The product's suites.
    pub fn standard() -> Self {
        Catalogue {
            registry: Registry::standard(),
            hosts: Hosts::standard(),
        }
    }

    /// The same with `suite` (and `host`, when it has effects) added; a suite of the same
    /// name is replaced with its host, as the registry replaces it.
    pub fn with<S: benchmarks::task::Suite>(
        mut self,
        suite: S,
        host: Option<Arc<dyn SuiteHost>>,
    ) -> Self {
        self.registry = self.registry.with(suite);
        self.hosts.hosts.retain(|h| h.name() != S::NAME);
        self.hosts.hosts.extend(host);
        self
    }
}

impl Default for Catalogue {
    fn default() -> Self {
        Self::standard()
    }
}

impl Default for Hosts {
    fn default() -> Self {
        Self::standard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every host belongs to a suite of the standard registry, once.
    #[test]
    fn hosts_name_registered_suites() {
        let registry = benchmarks::task::Registry::standard();
        let hosts = Hosts::standard();
        let mut names: Vec<&str> = hosts.all().map(|h| h.name()).collect();
        for name in &names {
            assert!(registry.get(name).is_ok(), "{name}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), hosts.all().count());
    }
}
