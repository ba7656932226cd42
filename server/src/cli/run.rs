//! `atomworld run`: a headless benchmark run on the same runner the server uses, with a
//! progress bar and the summary table at the end. Re-running the same command resumes an
//! unfinished run of the same spec instead of starting over.

use std::path::PathBuf;

use bench::atomworld::generator::TaskSetSpec;
use indicatif::{ProgressBar, ProgressStyle};

use super::CliError;
use crate::config::Config;
use crate::llm::{Gateway, GatewayOptions};
use crate::runs::{self, ImportedTasks, RunSpec, RunTask, TaskSource, TaskTriple};
use crate::storage::Storage;

/// Arguments of `atomworld run`.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// Suite name.
    pub suite: String,
    /// Model or baseline name.
    pub model: String,
    /// Tasks per action.
    pub per_action: usize,
    /// Seed of the task set.
    pub seed: u64,
    /// Tasks in flight.
    pub concurrency: usize,
    /// Samples per task.
    pub samples: u32,
    /// Data directory (SQLite database).
    pub data_dir: PathBuf,
    /// Configuration file.
    pub config: Option<PathBuf>,
    /// Use the response cache.
    pub cache: bool,
    /// Serve answers only from the cache.
    pub replay_only: bool,
    /// Where to write the summary JSON.
    pub summary_json: Option<PathBuf>,
    /// Run these imported tasks (any file `atomworld import` reads) instead of a seeded set.
    pub tasks_file: Option<PathBuf>,
}

/// The imported tasks of `path`, each checked (prompt parsed, target known or computable);
/// unusable ones are left out and reported on stderr.
fn imported(path: &std::path::Path) -> Result<TaskSource, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))?;
    let (_, records) = bench::atomworld::import::import(&text)
        .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    let mut tasks = Vec::new();
    let mut skipped = Vec::new();
    for r in records {
        let triple = TaskTriple {
            id: r.id,
            input_cif: r.input_cif,
            action_prompt: r.action_prompt,
            target_cif: r.target_cif,
        };
        match RunTask::from_triple(&triple) {
            Ok(_) => tasks.push(triple),
            Err(e) => {
                let prompt: String = triple.action_prompt.chars().take(60).collect();
                skipped.push(format!("record {} (\"{prompt}\"): {e}", triple.id));
            }
        }
    }
    if !skipped.is_empty() {
        eprintln!(
            "{} of {} imported tasks cannot run and are left out; first: {}",
            skipped.len(),
            skipped.len() + tasks.len(),
            skipped[0]
        );
    }
    if tasks.is_empty() {
        return Err(CliError::input(format!(
            "{} holds no task that can run",
            path.display()
        )));
    }
    Ok(TaskSource::Imported(ImportedTasks {
        imported_from: path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        tasks,
    }))
}

/// Run (or resume) the benchmark; returns the summary table.
pub async fn run(args: RunArgs) -> Result<String, CliError> {
    let config =
        Config::load(args.config.as_deref()).map_err(|e| CliError::input(e.to_string()))?;
    let storage = Storage::open(&args.data_dir).map_err(|e| CliError::failure(e.to_string()))?;
    let gateway = Gateway::new(
        config,
        storage.clone(),
        GatewayOptions {
            cache: args.cache,
            replay_only: args.replay_only,
        },
    )
    .map_err(|e| CliError::failure(e.to_string()))?;
    let tasks = match &args.tasks_file {
        Some(path) => imported(path)?,
        None => TaskSource::Generated(TaskSetSpec::per_action(args.seed, args.per_action)),
    };
    let what = match &tasks {
        TaskSource::Generated(_) => format!("{} per action, seed {}", args.per_action, args.seed),
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
    };
    runs::check_spec(&spec, gateway.config()).map_err(|e| CliError::input(e.to_string()))?;
    let run_id = match runs::find_unfinished(&storage, &spec)
        .map_err(|e| CliError::failure(e.to_string()))?
    {
        Some(id) => {
            eprintln!("resuming {id}");
            id
        }
        None => runs::create_run(&storage, &spec).map_err(|e| CliError::failure(e.to_string()))?,
    };
    eprintln!("run {run_id}: {} on {} ({what})", args.model, args.suite);
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} tasks · {msg} · ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let b = bar.clone();
    let outcome = runs::execute(&storage, &gateway, &run_id, move |p| {
        b.set_length(p.total as u64);
        b.set_position(p.done as u64);
        let rate = if p.done == 0 {
            0.0
        } else {
            p.successes as f64 / p.done as f64
        };
        b.set_message(format!(
            "success {rate:.3} · {} tokens · ${:.4}",
            p.tokens, p.cost_usd
        ));
    })
    .await
    .map_err(|e| match e {
        runs::RunError::UnknownModel(_) | runs::RunError::UnknownSuite(_) => {
            CliError::input(e.to_string())
        }
        other_error => CliError::failure(other_error.to_string()),
    })?;
    bar.finish();
    if let Some(why) = &outcome.stopped {
        eprintln!("stopped: {why}");
    }
    let rows =
        runs::store_results(&storage, &run_id).map_err(|e| CliError::failure(e.to_string()))?;
    let summary = runs::summarise(&run_id, &args.model, &rows);
    if let Some(path) = &args.summary_json {
        let text =
            serde_json::to_string_pretty(&summary).map_err(|e| CliError::failure(e.to_string()))?;
        std::fs::write(path, text)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(summary.table())
}
