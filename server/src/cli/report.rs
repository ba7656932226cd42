//! `atomworld report RUN… [--format md|csv|json|svg]`: the papers' tables (as bar charts in
//! `svg`) and every headline
//! number of finished (or partial) runs, one column per run, each number the mean ±
//! standard deviation over the run's repeats ([`crate::runs::report`]).

use benchmarks::task::report::Report;
use benchmarks::task::Registry;

use super::store::{describe, StoreArgs};
use super::CliError;
use crate::runs::report::{report, ReportError};

pub use benchmarks::task::report::FORMATS;

/// The report of `runs` (ids) in the store `store` names.
pub fn tables(runs: &[String], store: &StoreArgs, registry: &Registry) -> Result<Report, CliError> {
    let storage = store.open()?;
    let place = describe(&store.location()?);
    report(&storage, runs, registry).map_err(|e| match e {
        ReportError::NoRun(id) => CliError::input(format!("no run {id} {}", place)),
        ReportError::Suite(e) => CliError::input(e),
        ReportError::Storage(e) => CliError::failure(e),
    })
}

/// `report` written in `format` (one of [`FORMATS`]).
pub fn render(report: &Report, format: &str) -> Result<String, CliError> {
    report.render(format).map_err(CliError::input)
}
