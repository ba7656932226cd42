//! `atomworld report RUN… [--format md|csv|json]`: the tables of finished (or partial) runs,
//! one column per run, each number the mean ± standard deviation over the run's repeats
//! (`benchmarks::task::report`). Runs of several suites give one table per suite, in the order
//! their first run is named.

use std::collections::BTreeMap;
use std::path::Path;

use benchmarks::task::report::{report, Repeat, RunColumn, Table};
use benchmarks::task::Registry;

use super::CliError;
use crate::storage::Storage;

/// The formats `report` writes.
pub const FORMATS: [&str; 3] = ["md", "csv", "json"];

/// The tables of `runs` (ids) in the database under `data_dir`.
pub fn tables(
    runs: &[String],
    data_dir: &Path,
    registry: &Registry,
) -> Result<Vec<Table>, CliError> {
    let storage = Storage::open(data_dir).map_err(|e| CliError::failure(e.to_string()))?;
    let mut by_suite: Vec<(String, Vec<RunColumn>)> = Vec::new();
    for id in runs {
        let (spec, _) = storage
            .load_run(id)
            .map_err(|e| CliError::failure(e.to_string()))?
            .ok_or_else(|| CliError::input(format!("no run {id} in {}", data_dir.display())))?;
        let rows = storage
            .results(id)
            .map_err(|e| CliError::failure(e.to_string()))?;
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
        let column = RunColumn {
            heading: format!("{} ({id}){unverified}", spec.model),
            repeats: repeats.into_values().collect(),
        };
        match by_suite.iter_mut().find(|(s, _)| *s == spec.suite) {
            Some((_, columns)) => columns.push(column),
            None => by_suite.push((spec.suite.clone(), vec![column])),
        }
    }
    by_suite
        .into_iter()
        .map(|(name, columns)| {
            let suite = registry
                .get(&name)
                .map_err(|e| CliError::input(e.to_string()))?;
            Ok(report(suite.as_ref(), &columns))
        })
        .collect()
}

/// `tables` written in `format` (one of [`FORMATS`]).
pub fn render(tables: &[Table], format: &str) -> Result<String, CliError> {
    match format {
        "md" => Ok(tables
            .iter()
            .map(Table::markdown)
            .collect::<Vec<_>>()
            .join("\n")),
        "csv" => Ok(format!(
            "suite,number,column,mean,std,n\n{}",
            tables.iter().map(Table::csv).collect::<String>()
        )),
        "json" => serde_json::to_string_pretty(tables)
            .map(|s| s + "\n")
            .map_err(|e| CliError::failure(e.to_string())),
        other => Err(CliError::input(format!(
            "no format {other} (one of {})",
            FORMATS.join(", ")
        ))),
    }
}
