//! `atomworld eval --suite NAME IN.jsonl -o OUT.jsonl`: score recorded responses offline, for
//! any suite of the registry.
//!
//! Each input line is the suite's task plus `"response"` (AtomWorld: `{"input_cif",
//! "action_prompt", "target_cif" (or null), "response"}`, a null target computed from the
//! input and the prompt); each output line is the same object plus `"verdict"` as the suite
//! writes it for `eval`. Scoring is offline: a suite that needs a judge gets a judge failure.

use std::io::{BufRead, Write};

use bench::task::summary::{Row, Summary};
use bench::task::{AnySuite, Need, NeedAnswer, Outcome, Registry};
use engine::interrupt::Interrupt;
use serde_json::{Map, Value};

use super::CliError;

/// Score every line of `input` into `output` with the AtomWorld suite; returns the table.
pub fn run(input: impl BufRead, output: impl Write) -> Result<String, CliError> {
    run_suite(&Registry::standard(), "atomworld", input, output)
}

/// Score every line of `input` into `output` with suite `suite` of `registry`; returns the
/// results table (and, for lines imported with a recorded verdict, how many agree).
pub fn run_suite(
    registry: &Registry,
    suite: &str,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<String, CliError> {
    let suite = registry
        .get(suite)
        .map_err(|e| CliError::input(e.to_string()))?;
    let mut scored: Vec<(String, Outcome)> = Vec::new();
    // Lines imported from the reference's evaluation results carry its verdict: compare.
    let (mut recorded, mut agree) = (0usize, 0usize);
    for (n, line) in input.lines().enumerate() {
        let n = n + 1;
        let mut text = line.map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        if n == 1 {
            // A byte-order mark, as some editors write, is not part of the first object.
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_string();
            }
        }
        if text.trim().is_empty() {
            continue;
        }
        let mut object: Map<String, Value> = serde_json::from_str(&text)
            .map_err(|e| CliError::input(format!("line {n}: not a JSON object: {e}")))?;
        let (group, outcome, verdict) = score_line(suite.as_ref(), &object)
            .map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        if let Some(label) = recorded_label(&object) {
            recorded += 1;
            agree += usize::from(label == outcome.label);
        }
        object.insert("verdict".into(), verdict);
        let out = serde_json::to_string(&Value::Object(object))
            .map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        writeln!(output, "{out}").map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        scored.push((group, outcome));
    }
    let table = Summary::of(scored.iter().map(|(group, outcome)| Row {
        group,
        outcome: Some(outcome),
        tokens: 0,
        cost_usd: 0.0,
    }));
    let mut text = table.table(suite.columns());
    if recorded > 0 {
        text.push_str(&format!(
            "recorded verdicts (reference run): {agree} of {recorded} agree with ours\n"
        ));
    }
    Ok(text)
}

/// One line scored: its group, outcome and the verdict as written.
fn score_line(
    suite: &dyn AnySuite,
    object: &Map<String, Value>,
) -> Result<(String, Outcome, Value), String> {
    let response = object
        .get("response")
        .and_then(Value::as_str)
        .ok_or("no \"response\" text")?;
    let task = suite
        .prepare_json(&Value::Object(object.clone()))
        .map_err(|e| e.to_string())?;
    let answers: Vec<NeedAnswer> = suite
        .needs(&task, response)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|need| match need {
            Need::Judge { .. } => NeedAnswer::Failed {
                error: "eval scores offline: no judge model is called".into(),
            },
        })
        .collect();
    let scored = suite
        .score(&task, response, &answers, &Interrupt::default())
        .map_err(|e| e.to_string())?;
    Ok((task.group, scored.outcome, scored.compact))
}

/// The recorded label of an eval input line, if it came from `import` of evaluation results.
fn recorded_label(line: &Map<String, Value>) -> Option<&str> {
    line.get("recorded_verdict")?.get("label")?.as_str()
}
