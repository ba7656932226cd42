//! `atomworld gen`: write a suite's seeded task set as JSON lines (one task per line), as its
//! generator draws it for a run with the same seed and size.

use std::io::Write;

use benchmarks::task::AnySuite;

use super::CliError;

/// Generate `per_group` tasks of each of `suite`'s groups with `seed` into `output`; returns
/// a one-line report.
pub fn run(
    suite: &dyn AnySuite,
    seed: u64,
    per_group: usize,
    mut output: impl Write,
) -> Result<String, CliError> {
    let generator = suite.generator(seed, per_group).ok_or_else(|| {
        CliError::input(format!(
            "suite {} has no task generator; its tasks come from files (`run --tasks`)",
            suite.name()
        ))
    })?;
    let (lines, report) = suite
        .generated_lines(&generator.params)
        .map_err(|e| CliError::failure(e.to_string()))?;
    for line in &lines {
        writeln!(output, "{line}")
            .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
    }
    Ok(report)
}
