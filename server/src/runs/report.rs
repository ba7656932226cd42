//! A report over stored runs (`atomworld report`, `GET /api/report`): each run's repeats read
//! from storage, grouped by suite in the order the runs are named, then tabled by
//! [`benchmarks::task::report::Report`] (the papers' tables and every headline number).

use std::collections::BTreeMap;

use benchmarks::task::layout::SuiteRuns;
use benchmarks::task::report::{Repeat, Report, RunColumn};
use benchmarks::task::Registry;

use crate::storage::Storage;

/// Why a report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No stored run has this id.
    #[error("no run {0}")]
    NoRun(String),
    /// A run names a suite this server does not have.
    #[error("{0}")]
    Suite(String),
    /// The database failed.
    #[error("{0}")]
    Storage(String),
}

/// The report of the stored runs `ids`.
pub fn report(
    storage: &Storage,
    ids: &[String],
    registry: &Registry,
) -> Result<Report, ReportError> {
    let mut by_suite: Vec<(String, Vec<RunColumn>)> = Vec::new();
    for id in ids {
        let (spec, _) = storage
            .load_run(id)
            .map_err(|e| ReportError::Storage(e.to_string()))?
            .ok_or_else(|| ReportError::NoRun(id.clone()))?;
        let rows = storage
            .results(id)
            .map_err(|e| ReportError::Storage(e.to_string()))?;
        let mut repeats: BTreeMap<u32, Repeat> = BTreeMap::new();
        for row in &rows {
            let repeat = repeats.entry(row.sample).or_default();
            // Tasks no one was asked are in the suite's headline, not in the success rate.
            repeat.answers += usize::from(!row.unasked());
            if row.table_outcome().is_some_and(|o| o.success) {
                repeat.successes += 1;
            }
            if let Some(v) = row
                .verdict
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok())
            {
                repeat.verdicts.push((row.group.clone(), v));
            }
        }
        // Tasks a client gave that the server does not hold are not the benchmark's.
        let unverified = match &spec.tasks {
            wire::TaskSource::Imported(set) if set.unverified > 0 => {
                format!(" UNVERIFIED: {} client tasks", set.unverified)
            }
            _ => String::new(),
        };
        // What sets the run apart beside its model: its agent (the papers' with/without
        // tools tables) and its condition.
        let condition: String = spec
            .agent
            .iter()
            .map(|a| format!(" · agent {a}"))
            .chain(spec.condition.iter().map(|c| format!(" · {c}")))
            .collect();
        let column = RunColumn {
            heading: format!("{}{condition} ({id}){unverified}", spec.model),
            model: format!("{}{unverified}", spec.model),
            repeats: repeats.into_values().collect(),
        };
        match by_suite.iter_mut().find(|(s, _)| *s == spec.suite) {
            Some((_, columns)) => columns.push(column),
            None => by_suite.push((spec.suite.clone(), vec![column])),
        }
    }
    let suites = by_suite
        .iter()
        .map(|(name, _)| {
            registry
                .get(name)
                .map_err(|e| ReportError::Suite(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let runs: Vec<SuiteRuns> = suites
        .iter()
        .zip(&by_suite)
        .map(|(suite, (_, columns))| SuiteRuns {
            suite: suite.as_ref(),
            runs: columns,
        })
        .collect();
    Ok(Report::of(&runs))
}
