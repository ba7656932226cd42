//! `atomworld import FILE -o OUT.jsonl`: tasks (and recorded answers) from the upstream
//! AtomWorld layouts (task triples, `data/simple/*.json`, `evaluation_results.json`) as JSON
//! lines. Lines that carry a model answer are in the input format of `atomworld eval`, so the
//! reference's recorded answers can be re-scored and the verdicts compared.

use std::io::Write;

use benchmarks::atomworld::import::{import, Layout};
use serde_json::json;

use super::CliError;

/// Import `content` into `output`; returns a one-line report.
pub fn run(content: &str, mut output: impl Write) -> Result<String, CliError> {
    let (layout, tasks) = import(content).map_err(|e| CliError::input(e.to_string()))?;
    let mut parsed = 0;
    for t in &tasks {
        let mut line = json!(t.task);
        match &t.action {
            Ok(a) => {
                parsed += 1;
                line["action"] = json!(a.kind().name());
                line["parameters"] = json!(a);
            }
            Err(e) => line["parse_error"] = json!(e),
        }
        if let Some(r) = &t.response {
            line["response"] = json!(r);
        }
        if let Some(v) = &t.recorded {
            line["recorded_verdict"] = json!({
                "correct": v.correct,
                "label": v.label.map(|l| l.name()),
                "wrong_type": v.wrong_type,
                "rms": v.rms,
                "max_dist": v.max_dist,
            });
        }
        writeln!(output, "{line}")
            .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
    }
    let name = match layout {
        Layout::Triples => "task triples",
        Layout::TaskData => "task data (data/simple)",
        Layout::EvaluationResults => "evaluation results",
    };
    let answers = tasks.iter().filter(|t| t.response.is_some()).count();
    Ok(format!(
        "{} records of {name}: {parsed} prompts parsed, {} not; {answers} with a model answer",
        tasks.len(),
        tasks.len() - parsed
    ))
}
