//! `atomworld run`: a headless benchmark run on the same runner the server uses, with a
//! progress bar and the summary table at the end. Re-running the same command resumes an
//! unfinished run of the same spec instead of starting over.

use std::path::PathBuf;

use benchmarks::task::{AnySuite, Registry};
use indicatif::{ProgressBar, ProgressStyle};
use wire::{defaults, ImportedTasks, RunSpec, TaskSource};

use super::store::StoreArgs;
use super::CliError;
use crate::config::Config;
use crate::llm::{Gateway, GatewayOptions};
use crate::runs;
use crate::suites::EmbeddingUse;
use crate::suites::{Catalogue, LoadError, Preparation, SuiteHost};

/// Arguments of `atomworld run`.
#[derive(Clone, Debug, clap::Args)]
pub struct RunArgs {
    /// The suite.
    #[arg(long, default_value = Registry::DEFAULT)]
    pub suite: String,
    /// Model name from the configuration, or a baseline of the suite (AtomWorld:
    /// copy-input, reference).
    #[arg(long)]
    pub model: String,
    /// Tasks per group of a generated set (AtomWorld: per action).
    #[arg(long, visible_alias = "per-action", default_value_t = defaults::PER_ACTION_CLI)]
    pub per_group: usize,
    /// Seed of a generated set.
    #[arg(long, default_value_t = defaults::SEED)]
    pub seed: u64,
    /// Tasks in flight at once.
    #[arg(long, default_value_t = defaults::CONCURRENCY)]
    pub concurrency: usize,
    /// Samples per task: independent repeats of the run, each stored apart (sample k of every
    /// task is repeat k); `atomworld report` gives mean ± std over them.
    #[arg(long, visible_alias = "repeats", default_value_t = defaults::SAMPLES)]
    pub samples: u32,
    /// Where runs are stored.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Configuration file (models, prices, limits).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Do not use the response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Answer only from the response cache (no network, no keys).
    #[arg(long)]
    pub replay_only: bool,
    /// Write the summary as JSON to this file.
    #[arg(long)]
    pub summary_json: Option<PathBuf>,
    /// Send the model's requests as one provider batch (OpenAI's Batch API, Anthropic's
    /// Message Batches): half the price, answers within a day. The batch's id is stored, so
    /// the same command run again (after a restart) waits for the same batch.
    #[arg(long)]
    pub batch: bool,
    /// Run the tasks of this file or folder instead of a generated set: for AtomWorld, what
    /// `atomworld import` reads (task triples, data/simple, evaluation results); for
    /// alchemy, recipes as JSONL or Parquet (the upstream files); for MatTools' code tasks,
    /// their data folder; for OmniMatBench, one subfield's file or the release folder (its
    /// `cal/` or `qa/` folder, all 19 subfields); for other suites, JSON lines of their tasks.
    /// A folder is read whole (every .json/.jsonl file below it); a task key that repeats is
    /// an error naming both places.
    #[arg(long = "tasks")]
    pub tasks_file: Option<PathBuf>,
    /// The agent that answers instead of one model call, one of the suite's (`GET
    /// /api/suites` lists them): MatTools' code tasks `single` (one call), `rag` (with the
    /// top-5 documentation entries of the pinned pymatgen) or `reflect` (up to 5 rounds of
    /// retrieve, generate, run, critique); OmniMatBench's `python` (the model may run up to 3
    /// standard-library Python programs before it answers: our own setting, not the
    /// benchmark's).
    #[arg(long)]
    pub agent: Option<String>,
    /// AlchemyBench's RAG condition: give each recipe its K nearest train recipes (exact
    /// cosine over `contributions_embedding`) as references; 0 is the one-shot prompt.
    /// Several (`0,1,5,10,25`, the paper's Fig. 4) run one after another, then print their
    /// report side by side.
    #[arg(long, value_delimiter = ',', default_value = "0", num_args = 1)]
    pub rag_k: Vec<usize>,
    /// A variant of the suite's generated set (`GET /api/suites` lists them; AtomWorld: the
    /// prompt's wording, `data2026`, `newest` as the paper's Table 1, `four_decimal`,
    /// `oldest`). Several (`data2026,newest,four_decimal`: a prompt ablation) run one after
    /// another, then print their report side by side.
    #[arg(long, value_delimiter = ',', num_args = 1)]
    pub variant: Vec<String>,
    /// The run's condition beyond model and agent, for reports (set by a sweep, a K above 0
    /// or a variant).
    #[arg(skip)]
    pub condition: Option<String>,
    /// The train split (recipes as JSONL or Parquet, with or without embeddings) that
    /// --rag-k retrieves from.
    #[arg(long)]
    pub train: Option<PathBuf>,
    /// The embeddings model (`[[embeddings]]` in the configuration) that retrieval uses:
    /// MatTools' documentation search (agents rag and reflect; else BM25) and AlchemyBench's
    /// recipes without stored embeddings. Default: `[limits] embeddings_model`; `none`:
    /// BM25 and stored embeddings only.
    #[arg(long)]
    pub embeddings_model: Option<String>,
    /// The folder of OmniMatBench's images (`<stem>.png`, `.jpg`, …), for items that name
    /// images (`image_url`); default `[suites] omnimat_images_dir`. An item whose images are
    /// not there is asked of no model and counted apart as "images unavailable".
    #[arg(long = "images")]
    pub images_dir: Option<PathBuf>,
}

/// The embeddings model a run uses: the flag (`none`: none), else the configuration's
/// default, where the suite and agent retrieve at all.
fn embeddings_choice(
    args: &RunArgs,
    config: &Config,
    registry: &Registry,
) -> Result<Option<String>, CliError> {
    let chosen = match args.embeddings_model.as_deref() {
        Some("none") => return Ok(None),
        Some(name) => Some(name.to_string()),
        None => config.limits.embeddings_model.clone(),
    };
    let Some(name) = chosen else {
        return Ok(None);
    };
    if config.embedding_model(&name).is_none() {
        return Err(CliError::input(format!(
            "no embeddings model named '{name}' is configured ([[embeddings]])"
        )));
    }
    let retrieves = registry
        .get(&args.suite)
        .is_ok_and(|s| s.retrieves(args.agent.as_deref(), args.k()));
    match (retrieves, args.embeddings_model.is_some()) {
        (true, _) => Ok(Some(name)),
        // The configuration's default only serves runs that retrieve.
        (false, false) => Ok(None),
        (false, true) => Err(CliError::input(format!(
            "--embeddings-model serves runs that retrieve (an agent that searches, or --rag-k K); \
             {} with these settings retrieves nothing",
            args.suite
        ))),
    }
}

/// The tasks of `path` for `suite`, read and prepared by its host, each checked; unusable
/// ones are left out, kept in the spec with their places and reasons, and reported on
/// stderr. The second value: what computing embeddings for them used.
async fn imported(
    path: &std::path::Path,
    suite: &dyn AnySuite,
    host: &dyn SuiteHost,
    args: &RunArgs,
    gateway: &Gateway,
    embeddings: Option<&str>,
) -> Result<(TaskSource, EmbeddingUse), CliError> {
    let read = host.read(suite, path).map_err(load_error)?;
    if let Some(first) = read.skipped.first() {
        eprintln!(
            "{} of {} tasks read cannot run and are left out (the run's summary counts them); \
             first: {}: {}",
            read.skipped.len(),
            read.read(),
            first.place,
            first.why
        );
    }
    if read.tasks.is_empty() {
        return Err(CliError::input(format!(
            "{} holds no task that can run",
            path.display()
        )));
    }
    let how = Preparation {
        gateway,
        embeddings,
        references: args.k(),
        reference_pool: args.train.as_deref(),
    };
    let (tasks, used) = host.prepare(read.tasks, &how).await.map_err(load_error)?;
    if used.computed > 0 {
        eprintln!(
            "embeddings of {} entries by {}: {} from the cache, {} tokens, ${:.4}",
            used.computed,
            embeddings.unwrap_or_default(),
            used.cached,
            used.input_tokens,
            used.cost_usd
        );
    }
    Ok((
        TaskSource::Imported(ImportedTasks {
            imported_from: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            tasks,
            skipped: read.skipped,
            // Files the person running the CLI chose: theirs to vouch for.
            unverified: 0,
        }),
        used,
    ))
}

fn load_error(e: LoadError) -> CliError {
    match e {
        LoadError::Input(m) => CliError::input(m),
        LoadError::Failure(m) => CliError::failure(m),
        LoadError::Llm(e) => CliError::failure(e.to_string()),
    }
}

/// Run (or resume) the benchmark; returns the summary table.
pub async fn run(args: RunArgs) -> Result<String, CliError> {
    run_with(args, &Catalogue::standard()).await
}

/// [`run`] with `suites`: one run, or one per K of a `--rag-k` sweep followed by their
/// report.
pub async fn run_with(args: RunArgs, suites: &Catalogue) -> Result<String, CliError> {
    let sweep = args.sweep(&suites.registry)?;
    if sweep.len() == 1 {
        let single = sweep.into_iter().next().unwrap_or(args);
        return one(single, suites).await.map(|(_, text)| text);
    }
    let mut ids = Vec::new();
    let mut out = String::new();
    for single in sweep {
        let heading = single.condition.clone().unwrap_or_default();
        let (id, text) = one(single, suites).await?;
        out.push_str(&format!("## {heading} ({id})\n\n{text}\n"));
        ids.push(id);
    }
    let storage = args.store.open()?;
    let report = crate::runs::report::report(&storage, &ids, &suites.registry)
        .map_err(|e| CliError::failure(e.to_string()))?;
    out.push_str(&report.markdown());
    Ok(out)
}

impl RunArgs {
    /// The one K of a single run.
    fn k(&self) -> usize {
        self.rag_k.first().copied().unwrap_or(0)
    }

    /// The runs these arguments ask for: one per K of `--rag-k` and variant of `--variant`
    /// (every pair when both sweep), each with one K, at most one variant and its condition
    /// in words. A variant the suite lacks is an error naming those it has.
    fn sweep(&self, registry: &Registry) -> Result<Vec<RunArgs>, CliError> {
        let suite = registry
            .get(&self.suite)
            .map_err(|e| CliError::input(e.to_string()))?;
        let mut variants: Vec<Option<(String, &str)>> = Vec::new();
        for name in &self.variant {
            if self.tasks_file.is_some() {
                return Err(CliError::input(
                    "--variant chooses a generated set; --tasks gives the tasks instead",
                ));
            }
            suite
                .generator_for(self.seed, self.per_group, Some(name))
                .map_err(|e| CliError::input(e.to_string()))?;
            let condition = suite
                .variants()
                .iter()
                .find(|v| v.name == name)
                .map_or(name.as_str(), |v| v.condition);
            variants.push(Some((name.clone(), condition)));
        }
        if variants.is_empty() {
            variants.push(None);
        }
        let ks = if self.rag_k.is_empty() {
            vec![0]
        } else {
            self.rag_k.clone()
        };
        let mut sweep = Vec::new();
        for &k in &ks {
            for variant in &variants {
                let mut single = self.clone();
                single.rag_k = vec![k];
                single.variant = variant.iter().map(|(name, _)| name.clone()).collect();
                let mut words: Vec<String> = Vec::new();
                if k > 0 || ks.len() > 1 {
                    words.push(format!("K = {k}"));
                }
                words.extend(variant.iter().map(|(_, c)| c.to_string()));
                single.condition = (!words.is_empty()).then(|| words.join(", "));
                sweep.push(single);
            }
        }
        Ok(sweep)
    }
}

/// One run (or its resumption); returns its id and summary table.
async fn one(args: RunArgs, suites: &Catalogue) -> Result<(String, String), CliError> {
    let mut config =
        Config::load(args.config.as_deref()).map_err(|e| CliError::input(e.to_string()))?;
    let (registry, hosts) = (&suites.registry, &suites.hosts);
    // The folder of the run's tasks brings the data their programs read (MatTools' test
    // files).
    if let Some(tasks) = args.tasks_file.as_deref() {
        config.sandbox = hosts.with_sandbox_data(
            config.sandbox.clone(),
            &config.suites,
            Some((&args.suite, tasks)),
        );
    }
    if let Some(dir) = &args.images_dir {
        if !dir.is_dir() {
            return Err(CliError::input(format!(
                "--images {}: not a folder",
                dir.display()
            )));
        }
        config.suites.omnimat_images_dir = Some(dir.clone());
    }
    let storage = args.store.open()?;
    let gateway = Gateway::new(
        config,
        storage.clone(),
        GatewayOptions {
            cache: !args.no_cache,
            replay_only: args.replay_only,
        },
    )
    .map_err(|e| CliError::failure(e.to_string()))?;
    let suite = registry
        .get(&args.suite)
        .map_err(|e| CliError::input(e.to_string()))?;
    let embeddings = embeddings_choice(&args, gateway.config(), registry)?;
    // The run records the model when the run itself retrieves with it; references resolved
    // here, before the run (AlchemyBench's), record it only when they computed embeddings
    // (stored ones need none).
    let mut spec_embeddings = embeddings
        .clone()
        .filter(|_| suite.retrieves(args.agent.as_deref(), 0));
    let mut preparation_cost = 0.0;
    let tasks = match &args.tasks_file {
        Some(path) => {
            let host = hosts.get(suite.name());
            let (tasks, used) = imported(
                path,
                suite.as_ref(),
                host.as_ref(),
                &args,
                &gateway,
                embeddings.as_deref(),
            )
            .await?;
            if used.computed > 0 {
                spec_embeddings = embeddings.clone();
            }
            preparation_cost = used.cost_usd;
            tasks
        }
        None if suite.generates() => TaskSource::Generated(
            suite
                .generator_for(
                    args.seed,
                    args.per_group,
                    args.variant.first().map(String::as_str),
                )
                .map_err(|e| CliError::input(e.to_string()))?
                .map(|g| g.params)
                .unwrap_or_default(),
        ),
        // Other suites run the task set the server holds for them (our demo items, or the
        // folder [suites] points at).
        None => {
            let sets = crate::task_sets::TaskSets::load(&gateway.config().suites, hosts);
            let (tasks, source) = sets.raw(suite.name());
            if tasks.is_empty() {
                return Err(CliError::input(format!(
                    "suite {} has no built-in tasks here ({source}); give --tasks",
                    suite.name()
                )));
            }
            TaskSource::Imported(wire::ImportedTasks {
                imported_from: source,
                tasks,
                skipped: Vec::new(),
                unverified: 0,
            })
        }
    };
    let what = match &tasks {
        TaskSource::Generated(_) => format!("{} per group, seed {}", args.per_group, args.seed),
        TaskSource::Imported(set) => {
            format!("{} tasks from {}", set.tasks.len(), set.imported_from)
        }
    };
    let spec = RunSpec {
        suite: args.suite.clone(),
        tasks,
        model: args.model.clone(),
        samples: args.samples.max(1),
        concurrency: args.concurrency.max(1),
        agent: args.agent.clone(),
        embeddings: spec_embeddings,
        condition: args.condition.clone(),
        batch: args.batch,
    };
    runs::check_spec(&spec, gateway.config(), registry)
        .map_err(|e| CliError::input(e.to_string()))?;
    let run_id = match storage
        .find_unfinished(&spec)
        .map_err(|e| CliError::failure(e.to_string()))?
    {
        Some(id) => {
            eprintln!("resuming {id}");
            id
        }
        None => storage
            .create_run(&spec)
            .map_err(|e| CliError::failure(e.to_string()))?,
    };
    if preparation_cost > 0.0 {
        storage
            .add_preparation_cost(&run_id, preparation_cost)
            .map_err(|e| CliError::failure(e.to_string()))?;
    }
    eprintln!("run {run_id}: {} on {} ({what})", args.model, args.suite);
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} tasks · {msg} · ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let b = bar.clone();
    let code = crate::execution::CodeRunner::from_config(&gateway.config().sandbox);
    // On a shared store, what this process cannot run goes to a worker that can.
    let code = if storage.is_shared() {
        code.with_remote(storage.clone())
    } else {
        code
    };
    if suite.scoring_env() == Some(benchmarks::task::RunEnv::Pymatgen) {
        let c = code.clone();
        let state = tokio::task::spawn_blocking(move || c.check_pymatgen())
            .await
            .map_err(|e| CliError::failure(e.to_string()))?;
        if !state.available {
            return Err(CliError::failure(format!(
                "suite {} runs code in the pymatgen sandbox ({}), which is unavailable: {}",
                args.suite, state.backend, state.detail
            )));
        }
    }
    // On a shared store the run is held like a server's: no instance takes it meanwhile, a
    // cancel sent through a server reaches it, and should this process die an instance
    // takes it over once the lease runs out.
    let cancel = sandbox::CancelToken::new();
    let holding = if storage.is_shared() {
        let lease = runs::lease::Lease::new(gateway.config().limits.run_lease_secs);
        let held = lease
            .hold(&storage, &run_id, cancel.clone())
            .map_err(|e| CliError::failure(e.to_string()))?;
        Some(held.ok_or_else(|| {
            CliError::failure(format!(
                "run {run_id} is executing on an instance of this database (or has finished)"
            ))
        })?)
    } else {
        None
    };
    let outcome = runs::execute_until(
        &storage,
        &gateway,
        &code,
        suites,
        &run_id,
        move |o| {
            let p = &o.progress;
            b.set_length(p.total as u64);
            b.set_position(p.done as u64);
            let rate = if p.done == 0 {
                0.0
            } else {
                p.successes as f64 / p.done as f64
            };
            match &p.waiting_for_batch {
                Some(batch) => b.set_message(format!("waiting for the provider's batch {batch}")),
                None => b.set_message(format!(
                    "success {rate:.3} · {} tokens · ${:.4}",
                    p.tokens, p.cost_usd
                )),
            }
        },
        cancel,
    )
    .await;
    if let Some(holding) = holding {
        holding.release().await;
    }
    let outcome = outcome.map_err(|e| match e {
        runs::RunError::UnknownModel(_)
        | runs::RunError::UnknownSuite(_)
        | runs::RunError::BadTasks(_) => CliError::input(e.to_string()),
        other_error => CliError::failure(other_error.to_string()),
    })?;
    bar.finish();
    if let Some(why) = &outcome.stopped {
        eprintln!("stopped: {why}");
    }
    let rows = storage
        .results(&run_id)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let preparation = storage
        .preparation_cost(&run_id)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let summary = runs::summarise(&run_id, &spec, &rows, Some(suite.as_ref()), preparation);
    if let Some(path) = &args.summary_json {
        let text =
            serde_json::to_string_pretty(&summary).map_err(|e| CliError::failure(e.to_string()))?;
        std::fs::write(path, text)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok((run_id, runs::summary_text(&summary, Some(suite.as_ref()))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn choice(args: &[&str], config: &Config) -> Result<Option<String>, String> {
        let cli = Cli::try_parse_from(["run", "--model", "m"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        embeddings_choice(&cli.run, config, &Registry::standard()).map_err(|e| e.message)
    }

    #[test]
    fn the_embeddings_model_of_a_run() {
        let config = Config::from_toml(
            "[[embeddings]]\nname = \"e\"\nprovider = \"openai\"\nmodel = \"x\"\n\
             [limits]\nembeddings_model = \"e\"\n",
            "t",
        )
        .unwrap();
        let rag = ["--suite", "mattools-code", "--agent", "rag"];
        let e = Ok(Some("e".to_string()));
        assert_eq!(choice(&rag, &config), e, "the configured default");
        assert_eq!(
            choice(
                &[&rag[..], &["--embeddings-model", "none"]].concat(),
                &config
            ),
            Ok(None)
        );
        assert_eq!(
            choice(&["--suite", "mattools-code", "--agent", "single"], &config),
            Ok(None),
            "the default only serves runs that retrieve"
        );
        assert_eq!(choice(&["--suite", "alchemy", "--rag-k", "5"], &config), e);
        assert_eq!(choice(&["--suite", "alchemy"], &config), Ok(None));
        let err = choice(
            &["--suite", "atomworld", "--embeddings-model", "e"],
            &config,
        );
        assert!(err.unwrap_err().contains("serves runs that retrieve"));
        let err = choice(&[&rag[..], &["--embeddings-model", "f"]].concat(), &config);
        assert!(err.unwrap_err().contains("no embeddings model named 'f'"));
        assert_eq!(
            choice(&rag, &Config::default()),
            Ok(None),
            "BM25 by default"
        );
    }
}
