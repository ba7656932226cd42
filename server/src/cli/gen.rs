//! `atomworld gen`: write a task set as JSON lines (one task per line).

use std::io::Write;

use benchmarks::atomworld::generator::{generate, TaskSetSpec};
use benchmarks::atomworld::noop::copy_would_pass;
use serde_json::json;

use super::CliError;

/// Generate `per_action` tasks of each benchmark action with `seed` into `output`;
/// returns a one-line report.
pub fn run(seed: u64, per_action: usize, mut output: impl Write) -> Result<String, CliError> {
    let spec = TaskSetSpec::per_action(seed, per_action);
    let (tasks, report) = generate(&spec, &copy_would_pass);
    for t in &tasks {
        let line = json!({
            "id": t.id,
            "action": t.action.kind().name(),
            "structure": t.structure_name,
            "input_cif": t.input_cif,
            "action_prompt": t.prompt,
            "target_cif": t.target_cif,
            "parameters": t.action,
            "readings_differ": t.readings_differ,
        });
        writeln!(output, "{line}")
            .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
    }
    let rejected: usize = report.no_ops_rejected.values().sum();
    let failed: usize = report.failed.values().sum();
    Ok(format!(
        "{} tasks (seed {seed}, pool {}); {rejected} no-op draws rejected; {failed} tasks impossible",
        tasks.len(),
        spec.pool
    ))
}
