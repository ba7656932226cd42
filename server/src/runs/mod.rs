//! Benchmark runs: a suite, a task set, a model and settings, executed task by task with
//! every result stored as it finishes, so that a killed server resumes without losing or
//! repeating work. Suite-neutral: the run loop knows tasks only through
//! [`benchmarks::task::AnySuite`], found in a [`Registry`] by the spec's suite name.

mod batch;
pub mod lease;
mod manager;
pub mod needs;
pub mod report;
mod runner;

pub use manager::{Runs, SpawnError};
pub use runner::{execute, execute_until, RunError, RunOutcome};

use std::sync::Arc;

use benchmarks::task::summary::{Row, Summary};
use benchmarks::task::{AnySuite, Registry};
use wire::{ResultRow, RunSpec, RunSummary, TaskCounts, TaskSource};

use crate::config::Config;

/// Who answers the tasks of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answerer {
    /// A configured model, by name.
    Model(String),
    /// One of the suite's baselines (needs no key), by name.
    Baseline(&'static str),
}

impl Answerer {
    /// The answerer called `name` in `suite`: one of its baselines, else a model.
    pub fn of(suite: &dyn AnySuite, name: &str) -> Self {
        match suite.baselines().iter().find(|b| **b == name) {
            Some(b) => Answerer::Baseline(b),
            None => Answerer::Model(name.to_string()),
        }
    }
}

/// Whether `spec` can run under `config`: a suite of `registry` and one of its baselines or
/// a configured model. Checked before a run is recorded, so a typo never leaves a run that
/// start-up would try again and again.
pub fn check_spec(
    spec: &RunSpec,
    config: &Config,
    registry: &Registry,
) -> Result<Arc<dyn AnySuite>, RunError> {
    let suite = registry
        .get(&spec.suite)
        .map_err(|e| RunError::UnknownSuite(e.to_string()))?;
    if let Some(agent) = &spec.agent {
        if !suite.agents().contains(&agent.as_str()) {
            return Err(RunError::UnknownSuite(agent_refused(
                registry,
                suite.as_ref(),
                agent,
            )));
        }
    }
    if let Some(name) = &spec.embeddings {
        if config.embedding_model(name).is_none() {
            return Err(RunError::UnknownSuite(format!(
                "no embeddings model named '{name}' is configured ([[embeddings]])"
            )));
        }
        // A run's references are resolved before it starts: asked as if it has some.
        if !suite.retrieves(spec.agent.as_deref(), 1) {
            return Err(RunError::UnknownSuite(format!(
                "embeddings serve {}, not {}{}",
                retrievers(registry),
                spec.suite,
                spec.agent
                    .as_deref()
                    .map(|a| format!(" with agent {a}"))
                    .unwrap_or_default()
            )));
        }
    }
    if let TaskSource::Imported(set) = &spec.tasks {
        unique_keys(suite.as_ref(), &set.tasks)?;
    }
    if matches!(spec.tasks, TaskSource::Generated(_)) && !suite.generates() {
        return Err(RunError::UnknownSuite(format!(
            "suite '{}' has no task generator: give its tasks",
            spec.suite
        )));
    }
    let answerer = Answerer::of(suite.as_ref(), &spec.model);
    if let Answerer::Model(name) = &answerer {
        if config.model(name).is_none() {
            return Err(RunError::UnknownModel(name.clone()));
        }
    }
    if spec.batch {
        batch::check(spec, config, &answerer)?;
    }
    Ok(suite)
}

/// The suites (and agents) that retrieve by embeddings, in words.
fn retrievers(registry: &Registry) -> String {
    let mut who = Vec::new();
    for suite in registry
        .names()
        .into_iter()
        .filter_map(|n| registry.get(n).ok())
    {
        if suite.retrieves(None, 1) {
            who.push(suite.name().to_string());
        }
        for agent in suite.agents() {
            if suite.retrieves(Some(agent), 1) {
                who.push(format!("{}'s {agent} agent", suite.name()));
            }
        }
    }
    who.join(", ")
}

/// Why `agent` cannot answer `suite`'s tasks: which suites it answers, or that no suite
/// has it, and the suite's own agents.
fn agent_refused(registry: &Registry, suite: &dyn AnySuite, agent: &str) -> String {
    let answers: Vec<&str> = registry
        .names()
        .into_iter()
        .filter_map(|n| registry.get(n).ok())
        .filter(|s| s.agents().contains(&agent))
        .map(|s| s.name())
        .collect();
    let own = match suite.agents() {
        [] => format!("{} has none", suite.name()),
        list => format!("{}'s: {}", suite.name(), list.join(", ")),
    };
    if answers.is_empty() {
        format!("no agent named '{agent}' ({own})")
    } else {
        format!(
            "the {agent} agent answers {} tasks, not {} ({own})",
            answers.join(" and "),
            suite.name()
        )
    }
}

/// Every task's key is unique: results are stored by key, so a repeat would overwrite. A
/// task that is not the suite's is named too.
fn unique_keys(suite: &dyn AnySuite, tasks: &[serde_json::Value]) -> Result<(), RunError> {
    let mut seen = std::collections::HashMap::new();
    for (n, task) in tasks.iter().enumerate() {
        let key = suite
            .key_of(task)
            .map_err(|e| RunError::BadTasks(format!("task {}: {e}", n + 1)))?;
        if let Some(first) = seen.insert(key.clone(), n) {
            return Err(RunError::BadTasks(format!(
                "tasks {} and {} share the key {key:?}: results would overwrite each other",
                first + 1,
                n + 1
            )));
        }
    }
    Ok(())
}

/// The tasks of a run as their suite's JSON (CPU work: generation matches for no-op
/// rejection).
pub fn tasks_of(
    suite: &dyn AnySuite,
    source: &TaskSource,
) -> Result<Vec<serde_json::Value>, RunError> {
    match source {
        TaskSource::Generated(params) => suite
            .generate(params)
            .map_err(|e| RunError::BadTasks(format!("generating {}'s tasks: {e}", suite.name()))),
        TaskSource::Imported(set) => Ok(set.tasks.clone()),
    }
}

/// How the tasks of `spec` (a run of given tasks) were accounted for in `rows`; `None` for
/// a generated set, whose size is known only once generated.
pub fn task_counts(spec: &RunSpec, rows: &[ResultRow]) -> Option<TaskCounts> {
    let TaskSource::Imported(set) = &spec.tasks else {
        return None;
    };
    let samples = spec.samples.max(1);
    let in_run = set.tasks.len();
    let unasked = rows.iter().filter(|r| r.unasked()).count();
    let scored = rows.iter().filter(|r| r.verdict.is_some()).count() - unasked;
    let failed = rows.iter().filter(|r| r.verdict.is_none()).count();
    Some(TaskCounts {
        read: in_run + set.skipped.len(),
        skipped: set.skipped.len(),
        in_run,
        samples,
        scored,
        unasked,
        failed,
        pending: (in_run * samples as usize).saturating_sub(rows.len()),
        unverified: set.unverified,
    })
}

/// The counts as a line of the summary text.
fn counts_text(c: &TaskCounts) -> String {
    let per = if c.samples > 1 {
        format!(" × {} samples", c.samples)
    } else {
        String::new()
    };
    let mut text = format!(
        "tasks: {} read = {} in the run + {} left out (the run's spec says why); answers \
         ({}{per}): {} scored, {} not asked, {} failed, {} not yet run\n",
        c.read, c.in_run, c.skipped, c.in_run, c.scored, c.unasked, c.failed, c.pending
    );
    if let Some(why) = c.unverified_text() {
        text.push_str(&why);
        text.push('\n');
    }
    text
}

/// The results table of stored rows (the paper's layout).
pub fn summarise(
    run_id: &str,
    spec: &RunSpec,
    rows: &[ResultRow],
    suite: Option<&dyn AnySuite>,
    preparation_cost_usd: f64,
) -> RunSummary {
    let outcomes: Vec<Option<benchmarks::task::Outcome>> =
        rows.iter().map(ResultRow::table_outcome).collect();
    let table = Summary::of(rows.iter().zip(&outcomes).map(|(r, o)| Row {
        group: &r.group,
        outcome: o.as_ref(),
        tokens: r.input_tokens + r.output_tokens,
        cost_usd: r.cost_usd,
    }));
    let headline = suite.and_then(|s| {
        let verdicts: Vec<(String, serde_json::Value)> = rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.group.clone(),
                    serde_json::to_value(r.verdict.as_ref()?).ok()?,
                ))
            })
            .collect();
        s.headline(&verdicts)
    });
    RunSummary {
        run_id: run_id.to_string(),
        model: spec.model.clone(),
        table,
        headline,
        preparation_cost_usd,
        counts: task_counts(spec, rows),
    }
}

/// The summary as text: the table with `suite`'s columns and words, its headline, and what
/// preparing the tasks cost when it cost anything.
pub fn summary_text(summary: &RunSummary, suite: Option<&dyn AnySuite>) -> String {
    let (columns, words) = suite.map_or((&[][..], Default::default()), |s| {
        (s.columns(), s.table_words())
    });
    let mut text = summary.table.table(columns, words);
    if let Some(h) = &summary.headline {
        text.push_str(&h.text);
    }
    if let Some(c) = &summary.counts {
        text.push_str(&counts_text(c));
    }
    if summary.preparation_cost_usd > 0.0 {
        text.push_str(&format!(
            "preparing the tasks (embeddings) cost ${:.4} more; the run's spend is ${:.4}\n",
            summary.preparation_cost_usd,
            summary.table.cost_usd + summary.preparation_cost_usd
        ));
    }
    text
}
