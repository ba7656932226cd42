//! MatTools' tool-usage tasks as a [`Suite`]: two sandbox runs per answer (the code, then the
//! verification), met by the server through [`Need::Run`].

use engine::interrupt::Interrupt;

use super::agent::AgentKind;
use super::extract::extract;
use super::harness::{solution_run, verification_run};
use super::prompt::messages;
use super::task::CodeTask;
use super::verdict::Metrics;
use super::verdict::{after_solution, after_verification, CodeVerdict, ErrorClass, Label};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::PaperTemperatures;
use crate::task::{
    Headline, Need, NeedAnswer, Outcome, Prepared, RunEnv, RunResult, Suite, TaskError, VerdictView,
};

/// MatTools' figures and its error taxonomy.
const LAYOUTS: [Layout; 2] = [
    Layout {
        title: "Function Runnable Rate and Task Success Rate",
        source: "MatTools, Figs. 4-6 (mean ± std of 3 runs)",
        row_heading: "rate",
        rows: Rows::Listed(&[
            ("Function Runnable Rate", "function_runnable_rate"),
            ("Task Success Rate", "task_success_rate"),
            (
                "Function Runnable Rate, as the reference counts",
                "as_the_reference_counts.function_runnable_rate",
            ),
            (
                "Task Success Rate, as the reference counts",
                "as_the_reference_counts.task_success_rate",
            ),
        ]),
        values: &[("", "")],
        mean_row: false,
    },
    Layout {
        title: "Failed answers by error class",
        source: "MatTools, Table 2",
        row_heading: "error class",
        rows: Rows::Listed(&[
            ("Import Error", "counts.error_classes.Import Error"),
            (
                "API Hallucination",
                "counts.error_classes.API Hallucination",
            ),
            (
                "Incorrect Parameter",
                "counts.error_classes.Incorrect Parameter",
            ),
            ("Syntax Error", "counts.error_classes.Syntax Error"),
            ("Type Mismatch", "counts.error_classes.Type Mismatch"),
            ("Logic Error", "counts.error_classes.Logic Error"),
            ("Other", "counts.error_classes.Other"),
        ]),
        values: &[("", "")],
        mean_row: false,
    },
];

/// The agents of [`Suite::agents`]: [`AgentKind`]'s names.
const AGENTS: [&str; 8] = [
    "single",
    "rag",
    "reflect",
    "rag-code",
    "reflect-code",
    "rag-model-doc",
    "reflect-model-doc",
    "agentic",
];

/// The suite (`mattools-code`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MatToolsCode;

/// The baseline whose code returns the values the verification expects.
pub const REFERENCE: &str = "reference";
/// The baseline whose function returns `{}` (a FunctionError everywhere).
pub const EMPTY: &str = "empty";
/// The group of tasks whose data files are available.
pub const WITH_DATA: &str = "tool-usage";
/// The group of tasks whose data files are missing.
pub const WITHOUT_DATA: &str = "data unavailable";

const COLUMNS: [(&str, &str); 4] = [
    ("Partial", "Partial"),
    ("FunctionError", "FuncErr"),
    ("DataUnavailable", "NoData"),
    ("NotRun", "NotRun"),
];

/// What a stage's need was answered with.
enum Stage<'a> {
    Ran(&'a RunResult),
    Failed(&'a str),
}

fn stage(answer: Option<&NeedAnswer>) -> Option<Stage<'_>> {
    match answer? {
        NeedAnswer::Ran { result } => Some(Stage::Ran(result)),
        NeedAnswer::Failed { error } => Some(Stage::Failed(error)),
        NeedAnswer::Judge { .. } => Some(Stage::Failed("a judge answered a run")),
    }
}

impl Suite for MatToolsCode {
    const NAME: &'static str = "mattools-code";
    type Task = CodeTask;
    type State = CodeTask;
    type Verdict = CodeVerdict;

    fn key(task: &CodeTask) -> String {
        task.name.clone()
    }

    /// MatTools' paper samples at 0.7.
    fn paper_temperatures(&self) -> PaperTemperatures {
        PaperTemperatures {
            answer: Some(0.7),
            judge: None,
        }
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "task group",
            metric: "share of properties right",
        }
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn agents(&self) -> &'static [&'static str] {
        &AGENTS
    }

    /// Every agent but `single` searches the documentation or the code.
    fn retrieves(&self, agent: Option<&str>, _references: usize) -> bool {
        agent
            .and_then(AgentKind::from_name)
            .is_some_and(|k| k.source().is_some())
    }

    fn scoring_env(&self) -> Option<RunEnv> {
        Some(RunEnv::Pymatgen)
    }

    fn code_answers(&self) -> bool {
        true
    }

    fn prepare(&self, task: &CodeTask) -> Result<Prepared<CodeTask>, TaskError> {
        let ident = task
            .name
            .chars()
            .all(|c| c == '_' || c.is_ascii_alphanumeric())
            && !task.name.starts_with(|c: char| c.is_ascii_digit());
        if !ident || task.name.is_empty() {
            return Err(TaskError(format!(
                "task name {:?} is not a Python identifier",
                task.name
            )));
        }
        Ok(Prepared {
            messages: messages(&task.question),
            group: if task.unavailable.is_some() {
                WITHOUT_DATA
            } else {
                WITH_DATA
            }
            .to_string(),
            state: task.clone(),
        })
    }

    fn needs(&self, task: &CodeTask, response: &str) -> Vec<Need> {
        if task.unavailable.is_some() {
            return Vec::new();
        }
        match extract(response) {
            Ok(e) => {
                let (env, program) = solution_run(&e.code, &e.name);
                vec![Need::Run { env, program }]
            }
            Err(_) => Vec::new(),
        }
    }

    fn more_needs(&self, task: &CodeTask, _response: &str, answered: &[NeedAnswer]) -> Vec<Need> {
        if answered.len() != 1 {
            return Vec::new();
        }
        match stage(answered.first()) {
            Some(Stage::Ran(run)) => match after_solution(task, run) {
                Ok(result) => {
                    let (env, program) = verification_run(&task.name, &task.verification, &result);
                    vec![Need::Run { env, program }]
                }
                Err(_) => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn score(
        &self,
        task: &CodeTask,
        response: &str,
        answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> CodeVerdict {
        if let Some(why) = &task.unavailable {
            return CodeVerdict::unavailable(task, why);
        }
        if let Err(e) = extract(response) {
            return CodeVerdict::function_error(task, ErrorClass::Other, e.to_string());
        }
        let run = match stage(answers.first()) {
            Some(Stage::Ran(run)) => run,
            Some(Stage::Failed(why)) => return CodeVerdict::not_run(task, why),
            None => return CodeVerdict::not_run(task, "no run was made"),
        };
        let result = match after_solution(task, run) {
            Ok(result) => result,
            Err(verdict) => return verdict,
        };
        let mut verdict = match stage(answers.get(1)) {
            Some(Stage::Ran(check)) => after_verification(task, &result, check),
            Some(Stage::Failed(why)) => CodeVerdict::not_run(task, why),
            None => CodeVerdict::not_run(task, "the verification was not run"),
        };
        if verdict.output.is_empty() {
            verdict.output = super::verdict::kept_output(run);
        }
        if verdict.reference_function_error.is_none()
            && matches!(verdict.label, Label::Success | Label::Partial)
        {
            verdict.reference_function_error = super::verdict::reference_reading(run);
        }
        verdict
    }

    /// `{"label", "correct", "total", "error_class", "detail"}`, and
    /// `"reference_function_error"` when the reference's evaluation counts the answer as a
    /// function error and ours does not.
    fn eval_verdict(v: &CodeVerdict) -> serde_json::Value {
        let mut out = serde_json::json!({
            "label": v.label.name(),
            "correct": v.correct,
            "total": v.total,
            "error_class": v.error_class.map(ErrorClass::name),
            "detail": v.detail,
        });
        if let Some(why) = &v.reference_function_error {
            out["reference_function_error"] = serde_json::json!(why);
        }
        out
    }

    fn outcome(v: &CodeVerdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == Label::Success,
            metric: (v.total > 0 && matches!(v.label, Label::Success | Label::Partial))
                .then(|| v.correct as f64 / v.total as f64),
            why: (v.label != Label::Success && !v.detail.is_empty()).then(|| v.detail.clone()),
        }
    }

    fn view(v: &CodeVerdict) -> VerdictView {
        v.view()
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    /// Function Runnable Rate and Task Success Rate, over the tasks with data and over all.
    fn headline(&self, rows: &[(&str, &CodeVerdict)]) -> Option<Headline> {
        let m = Metrics::of(rows.iter().map(|(_, v)| *v));
        let (runnable_all, success_all) = m.rates_over_all();
        Some(Headline {
            text: m.lines(),
            json: serde_json::json!({
                "function_runnable_rate": m.runnable_rate(),
                "task_success_rate": m.success_rate(),
                "over_all_tasks": {"function_runnable_rate": runnable_all, "task_success_rate": success_all},
                "as_the_reference_counts": {
                    "function_runnable_rate": m.reference_rates().0,
                    "task_success_rate": m.reference_rates().1,
                },
                "counts": m,
            }),
        })
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE, EMPTY]
    }

    fn baseline_answer(&self, name: &str, task: &CodeTask) -> Option<String> {
        let code = match name {
            REFERENCE => reference_code(task)?,
            EMPTY => "def answer():\n    return {}\n".to_string(),
            _ => return None,
        };
        Some(format!(
            "<answer><code>```python\n{code}```</code><name>answer</name></answer>"
        ))
    }
}

/// Code returning the values the task's verification expects: its `expected_properties`
/// literal and its imports (copied from the verification source), each value rebuilt as the
/// check wants it where the record is written differently: a list where the format is
/// `tuple`/`set`, a number written as text where it is `float`, `int` or `np.allclose`, and
/// a value just above the bound where the record is a condition such as `"> 0"`
/// (`test_kumagai`). `None` when the literal is not found.
pub fn reference_code(task: &CodeTask) -> Option<String> {
    let src = &task.verification;
    let start = src.find("expected_properties = {")? + "expected_properties = ".len();
    let literal = balanced(&src[start..])?;
    let imports: Vec<String> = src
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .map(|l| format!("    {l}\n"))
        .collect();
    let mut lines = literal.lines();
    let first = lines.next().unwrap_or("{").trim();
    let rest: String = lines.map(|l| format!("    {}\n", l.trim_end())).collect();
    Some(format!(
        "import numpy as np\n\n\ndef answer():\n{imports}    expected_properties = {first}\n{rest}\
         \x20   kinds = {{'tuple': tuple, 'set': set, 'frozenset': frozenset}}\n\
         \x20   out = {{}}\n\
         \x20   for key, info in expected_properties.items():\n\
         \x20       value, fmt = info['value'], info['format']\n\
         \x20       if fmt in kinds and isinstance(value, list):\n\
         \x20           value = kinds[fmt](value)\n\
         \x20       if isinstance(value, str) and fmt in ('float', 'int', 'np.allclose'):\n\
         \x20           text = value.strip()\n\
         \x20           if text.startswith('>'):\n\
         \x20               value = float(text[1:]) + 1.0\n\
         \x20           else:\n\
         \x20               value = int(text) if fmt == 'int' else float(text)\n\
         \x20       out[key] = value\n\
         \x20   return out\n",
        imports = imports.concat(),
    ))
}

/// The text of the `{…}` that `text` starts with, braces inside strings ignored.
fn balanced(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&text[..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_code_copies_the_expected_literal() {
        let verification = "def test_t(properties):\n    import numpy as np\n    expected_properties = {\n        \"a\": {\n            \"format\": \"tuple\",\n            \"value\": [1, 2]\n        },\n        \"b}\": {\"format\": \"str\", \"value\": \"x}\"}\n    }\n    return 'ok'\n";
        let task = CodeTask {
            name: "test_t".into(),
            question: String::new(),
            properties: Vec::new(),
            verification: verification.into(),
            unavailable: None,
        };
        let code = reference_code(&task).unwrap();
        assert!(
            code.contains("\"b}\": {\"format\": \"str\", \"value\": \"x}\"}"),
            "{code}"
        );
        assert!(
            code.contains("def answer():\n    import numpy as np\n    expected_properties = {\n"),
            "{code}"
        );
        let names: Vec<&str> = AgentKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(AGENTS.to_vec(), names);
        let answer = MatToolsCode.baseline_answer(REFERENCE, &task).unwrap();
        let e = extract(&answer).unwrap();
        assert_eq!(e.name, "answer");
        assert!(MatToolsCode.needs(&task, "no code").is_empty());
    }
}
