//! `atomworld eval --suite atomworld IN.jsonl -o OUT.jsonl`: score recorded responses offline.
//!
//! Each input line is `{"input_cif", "action_prompt", "target_cif" (or null), "response"}`;
//! each output line is the same object plus `"verdict"`. A null target is computed from the
//! input and the prompt with the reference semantics.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use bench::atomworld::evaluate::{aggregate, evaluate, parse_target, Comparison, Label, Verdict};
use bench::atomworld::{apply, parse_prompt, ActionKind, Semantics};
use engine::cif::{read_cif, write_cif};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::CliError;

#[derive(Deserialize)]
struct Line {
    input_cif: String,
    action_prompt: String,
    target_cif: Option<String>,
    response: String,
}

/// The verdict object written for each line.
fn verdict_json(v: &Verdict) -> Value {
    json!({
        "label": v.label.name(),
        "rms": v.rms,
        "max_dist": v.max_dist,
        "max_dist_angstrom": v.max_dist_angstrom,
        "detail": v.detail,
    })
}

/// Score one line; the action kind (if the prompt parses) and the verdict.
fn score(line: &Line) -> Result<(Option<ActionKind>, Verdict), String> {
    let input = read_cif(&line.input_cif).map_err(|e| format!("input_cif: {e}"))?;
    let action = parse_prompt(&line.action_prompt, &input).ok();
    let target_cif = match &line.target_cif {
        Some(t) => t.clone(),
        None => {
            let action = action
                .as_ref()
                .ok_or("target_cif is null and the action prompt does not parse")?;
            let target = apply(&input, action, Semantics::Reference)
                .map_err(|e| format!("target from prompt: {e}"))?;
            write_cif(&target.structure.wrapped())
        }
    };
    let target = parse_target(&target_cif).map_err(|e| e.to_string())?;
    let comparison = match action.as_ref().map(|a| a.kind()) {
        Some(ActionKind::MoveAll) => Comparison::Ordered,
        _ => Comparison::Matcher,
    };
    Ok((
        action.map(|a| a.kind()),
        evaluate(&target, &line.response, comparison),
    ))
}

/// Score every line of `input` into `output`; returns the per-action summary text.
pub fn run(input: impl BufRead, mut output: impl Write) -> Result<String, CliError> {
    let mut by_action: BTreeMap<String, Vec<Verdict>> = BTreeMap::new();
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
        let parsed: Line = serde_json::from_value(Value::Object(object.clone()))
            .map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        let (kind, verdict) =
            score(&parsed).map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        if let Some(label) = super::import::recorded_label(&Value::Object(object.clone())) {
            recorded += 1;
            agree += usize::from(label == verdict.label.name());
        }
        object.insert("verdict".into(), verdict_json(&verdict));
        let out = serde_json::to_string(&Value::Object(object))
            .map_err(|e| CliError::input(format!("line {n}: {e}")))?;
        writeln!(output, "{out}").map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        let key = kind.map_or("unparsed".to_string(), |k| k.name().to_string());
        by_action.entry(key).or_default().push(verdict);
    }
    let mut text = summary(&by_action);
    if recorded > 0 {
        text.push_str(&format!(
            "recorded verdicts (reference run): {agree} of {recorded} agree with ours\n"
        ));
    }
    Ok(text)
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.4}"))
}

/// The per-action table (success rate, mean max_dist over successes, error counts).
fn summary(by_action: &BTreeMap<String, Vec<Verdict>>) -> String {
    let mut s = format!(
        "{:<16} {:>5} {:>8} {:>9} {:>6} {:>6} {:>6} {:>6}\n",
        "action", "n", "success", "max_dist", "Format", "Parse", "Count", "Match"
    );
    let all: Vec<&Verdict> = by_action.values().flatten().collect();
    let rows = by_action
        .iter()
        .map(|(k, v)| (k.as_str(), aggregate(v)))
        .chain(std::iter::once(("overall", aggregate(all))));
    for (name, a) in rows {
        let c = |l: Label| a.labels.get(&l).copied().unwrap_or(0);
        s.push_str(&format!(
            "{:<16} {:>5} {:>8.3} {:>9} {:>6} {:>6} {:>6} {:>6}\n",
            name,
            a.n,
            a.success_rate,
            fmt(a.max_dist.mean),
            c(Label::OutputFormatError),
            c(Label::CifParsingError),
            c(Label::AtomCountMismatch),
            c(Label::StructureMismatch),
        ));
    }
    s
}
