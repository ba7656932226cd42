//! `atomworld eval --suite NAME IN.jsonl -o OUT.jsonl`: score recorded responses offline, for
//! any suite of the registry.
//!
//! Each input line is the suite's task plus `"response"` (AtomWorld: `{"input_cif",
//! "action_prompt", "target_cif" (or null), "response"}`, a null target computed from the
//! input and the prompt); each output line is the same object plus `"verdict"` as the suite
//! writes it for `eval`. Scoring is offline: a suite that needs a judge gets a judge failure;
//! a suite that runs code (MatTools) runs it in the configured sandbox.
//!
//! OmniMatBench's CAL lines are `{"id", "final_answer_list", "prediction"}` (prediction: the
//! raw answer text or a list).
//!
//! Lines may name their task instead of carrying it (`{"task": "<id>", "response"}`) when
//! [`Context::tasks`] holds the task set (MatTools: `--tasks DIR`).

use std::collections::HashMap;
use std::io::{BufRead, Write};

use benchmarks::task::summary::{Row, Summary};
use benchmarks::task::{AnySuite, NeedAnswer, Outcome, PreparedTask, Registry};
use engine::interrupt::Interrupt;
use serde_json::{Map, Value};

use super::CliError;
use crate::execution::CodeRunner;

/// What `eval` scores with besides the lines: the sandbox and a task set to look names up in.
pub struct Context {
    /// The sandboxes (by default none: a suite whose scoring runs code gets a run failure).
    pub code: CodeRunner,
    /// Tasks by id, as their suite's JSON.
    pub tasks: HashMap<String, Value>,
}

impl Default for Context {
    fn default() -> Self {
        let none = crate::execution::SandboxConfig {
            backend: "none".into(),
            pymatgen: crate::execution::PymatgenConfig {
                backend: "none".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        Context {
            code: CodeRunner::from_config(&none),
            tasks: HashMap::new(),
        }
    }
}

/// Score every line of `input` into `output` with the default suite (AtomWorld); returns the
/// table.
pub fn run(input: impl BufRead, output: impl Write) -> Result<String, CliError> {
    run_suite(&Registry::standard(), Registry::DEFAULT, input, output)
}

/// Score every line of `input` into `output` with suite `suite` of `registry`; returns the
/// results table (and, for lines imported with a recorded verdict, how many agree).
pub fn run_suite(
    registry: &Registry,
    suite: &str,
    input: impl BufRead,
    output: impl Write,
) -> Result<String, CliError> {
    run_with(registry, suite, input, output, &Context::default())
}

/// [`run_suite`] with a sandbox and a task set.
pub fn run_with(
    registry: &Registry,
    suite: &str,
    input: impl BufRead,
    mut output: impl Write,
    context: &Context,
) -> Result<String, CliError> {
    let suite = registry
        .get(suite)
        .map_err(|e| CliError::input(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("starting a runtime: {e}")))?;
    let mut verdicts: Vec<(String, Value)> = Vec::new();
    let mut scored: Vec<(String, Outcome)> = Vec::new();
    // Lines imported from the reference's evaluation results carry its verdict: compare.
    // Recorded verdicts compared like with like: per recorded label, how many we agree with.
    let mut by_label: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut skipped: Vec<String> = Vec::new();
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
        // A line that cannot be scored is named and skipped; the others are scored.
        let scoring = (|| {
            let object: Map<String, Value> =
                serde_json::from_str(&text).map_err(|e| format!("not a JSON object: {e}"))?;
            let task = task_of(&object, context)?;
            let scored = score_line(suite.as_ref(), &object, &task, context, &runtime)?;
            Ok::<_, String>((object, scored))
        })();
        let (mut object, (group, outcome, verdict, full)) = match scoring {
            Ok(x) => x,
            Err(e) => {
                skipped.push(format!("line {n}: {e}"));
                continue;
            }
        };
        verdicts.push((group.clone(), full));
        if let Some(label) = recorded_label(&object) {
            let e = by_label.entry(label.to_string()).or_default();
            e.0 += 1;
            e.1 += usize::from(label == outcome.label);
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
    if scored.is_empty() && !skipped.is_empty() {
        return Err(CliError::input(format!(
            "no line could be scored:\n{}",
            skipped.join("\n")
        )));
    }
    let mut text = table.table(suite.columns(), suite.table_words());
    if !skipped.is_empty() {
        text.push_str(&format!(
            "{} lines scored, {} skipped:\n{}\n",
            scored.len(),
            skipped.len(),
            skipped.join("\n")
        ));
    }
    if let Some(h) = suite.headline(&verdicts) {
        text.push_str(&h.text);
    }
    if !by_label.is_empty() {
        let (recorded, agree) = by_label
            .values()
            .fold((0, 0), |(n, a), (n2, a2)| (n + n2, a + a2));
        let parts: Vec<String> = by_label
            .iter()
            .map(|(label, (n, a))| format!("{label} {a}/{n}"))
            .collect();
        text.push_str(&format!(
            "recorded verdicts (reference run): {agree} of {recorded} agree with ours ({})\n",
            parts.join(", ")
        ));
    }
    Ok(text)
}

/// The task a line is about: the line itself, or (with `"task": "<id>"`) the task of that id
/// from the context's task set, with the line's fields on top.
fn task_of(object: &Map<String, Value>, context: &Context) -> Result<Value, String> {
    match object.get("task").and_then(Value::as_str) {
        Some(id) if !context.tasks.is_empty() => {
            let mut task = context
                .tasks
                .get(id)
                .cloned()
                .ok_or_else(|| format!("no task named {id:?} in the task set"))?;
            if let Value::Object(t) = &mut task {
                for (k, v) in object {
                    if k != "task" {
                        t.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            Ok(task)
        }
        _ => Ok(Value::Object(object.clone())),
    }
}

/// One line scored: its group, outcome, the verdict as written and the suite's whole verdict.
fn score_line(
    suite: &dyn AnySuite,
    object: &Map<String, Value>,
    task: &Value,
    context: &Context,
    runtime: &tokio::runtime::Runtime,
) -> Result<(String, Outcome, Value, Value), String> {
    // OmniMatBench's recorded answers carry "prediction" (text or a list) instead.
    let predicted;
    let response = match (object.get("response"), object.get("prediction")) {
        (Some(Value::String(r)), _) => r.as_str(),
        (None, Some(p)) => {
            predicted = benchmarks::omnimat::cal::prediction_text(p);
            predicted.as_str()
        }
        _ => return Err("no \"response\" text (or \"prediction\")".into()),
    };
    let task: PreparedTask = suite.prepare_json(task).map_err(|e| e.to_string())?;
    let answers: Vec<NeedAnswer> = runtime.block_on(crate::runs::needs::meet_all(
        suite,
        &task,
        response,
        None,
        &context.code,
    ))?;
    let scored = suite
        .score(&task, response, &answers, &Interrupt::default())
        .map_err(|e| e.to_string())?;
    Ok((task.group, scored.outcome, scored.compact, scored.verdict))
}

/// The recorded label of an eval input line, if it came from `import` of evaluation results.
fn recorded_label(line: &Map<String, Value>) -> Option<&str> {
    line.get("recorded_verdict")?.get("label")?.as_str()
}

/// The context `atomworld eval --suite SUITE [--tasks PATH] [--config FILE]` scores with:
/// the tasks at PATH by key, read by the suite's host (MatTools: its data folder), and for a
/// suite that scores by running code, the configured sandbox with the data PATH brings.
pub fn context(
    suite: &str,
    tasks: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
) -> Result<Context, CliError> {
    let mut context = Context::default();
    let registry = Registry::standard();
    let s = registry
        .get(suite)
        .map_err(|e| CliError::input(e.to_string()))?;
    let runs_code = s.scoring_env() == Some(benchmarks::task::RunEnv::Pymatgen);
    let Some(path) = tasks else {
        if runs_code {
            return Err(CliError::input(format!(
                "{suite} scores by running code: give --tasks DIR (the task folder its lines name)"
            )));
        }
        return Ok(context);
    };
    let hosts = crate::suites::Hosts::standard();
    let read = hosts
        .get(suite)
        .read(s.as_ref(), path)
        .map_err(|e| CliError::input(e.to_string()))?;
    for task in read.tasks {
        let key = s
            .key_of(&task)
            .map_err(|e| CliError::input(e.to_string()))?;
        context.tasks.insert(key, task);
    }
    if !runs_code {
        return Ok(context);
    }
    let config = crate::config::Config::load(config).map_err(|e| CliError::input(e.to_string()))?;
    let sandbox = hosts.with_sandbox_data(config.sandbox, &config.suites, Some((suite, path)));
    let code = CodeRunner::from_config(&sandbox);
    let state = code.check_pymatgen();
    if !state.available {
        return Err(CliError::failure(format!(
            "the pymatgen sandbox ({}) is unavailable: {}",
            state.backend, state.detail
        )));
    }
    context.code = code;
    Ok(context)
}
