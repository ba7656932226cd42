//! The verdict on a tool-usage answer, the paper's error taxonomy, and the suite's metrics.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::harness::{marked, printed, python_repr, REFREADS_MARKER, RESULT_MARKER, VERIFY_MARKER};
use super::task::CodeTask;
use crate::task::{RunResult, VerdictView, ViewTable};

/// Most characters of program output kept in a verdict.
const OUTPUT_KEPT: usize = 4000;

/// How an answer fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Label {
    /// The verification returned "ok": every property right.
    Success,
    /// The code ran and returned a dict; some properties are wrong (k of n right).
    Partial,
    /// No code or name, the code raised or timed out, or it returned no non-empty dict.
    FunctionError,
    /// The task's data files are not available here: not a model failure.
    DataUnavailable,
    /// The sandbox could not run the code (not the model's fault): not scored.
    NotRun,
}

impl Label {
    /// The label's name as tables and files write it.
    pub fn name(self) -> &'static str {
        match self {
            Label::Success => "Success",
            Label::Partial => "Partial",
            Label::FunctionError => "FunctionError",
            Label::DataUnavailable => "DataUnavailable",
            Label::NotRun => "NotRun",
        }
    }
}

/// Why code failed, in the paper's taxonomy (MatTools, Table 2), plus `Other` for what it
/// does not name (a timeout, an exception outside the taxonomy, no code at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorClass {
    /// A module or name that cannot be imported.
    ImportError,
    /// A function, class, method or attribute that does not exist.
    ApiHallucination,
    /// A call with wrong arguments or argument values.
    IncorrectParameter,
    /// The code does not parse.
    SyntaxError,
    /// A result (or an intermediate) of an unexpected type.
    TypeMismatch,
    /// The code runs but computes wrong values.
    LogicError,
    /// Outside the taxonomy (timeouts, other exceptions, no code).
    Other,
}

impl ErrorClass {
    /// Every class, in the paper's order (Other last).
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::ImportError,
        ErrorClass::ApiHallucination,
        ErrorClass::IncorrectParameter,
        ErrorClass::SyntaxError,
        ErrorClass::TypeMismatch,
        ErrorClass::LogicError,
        ErrorClass::Other,
    ];

    /// The class's name as the paper writes it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ImportError => "Import Error",
            ErrorClass::ApiHallucination => "API Hallucination",
            ErrorClass::IncorrectParameter => "Incorrect Parameter",
            ErrorClass::SyntaxError => "Syntax Error",
            ErrorClass::TypeMismatch => "Type Mismatch",
            ErrorClass::LogicError => "Logic Error",
            ErrorClass::Other => "Other",
        }
    }
}

/// One property's check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropertyCheck {
    /// The property.
    pub name: String,
    /// The recorded value (`properties.json`).
    pub expected: Value,
    /// What the code returned, written as Python prints it (`None` when absent).
    pub returned: Option<String>,
    /// Whether the verification found no error about it.
    pub ok: bool,
}

/// The verdict on one answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodeVerdict {
    /// How it fared.
    pub label: Label,
    /// Properties right (subtasks solved).
    pub correct: usize,
    /// Properties asked (the task's subtasks).
    pub total: usize,
    /// Why it failed, for FunctionError and Partial.
    pub error_class: Option<ErrorClass>,
    /// The error (the exception line, the verification's messages, what was missing).
    pub detail: String,
    /// Each property's expected and returned value.
    #[serde(default)]
    pub properties: Vec<PropertyCheck>,
    /// What the code printed, then its stderr (traceback), cut to a few thousand characters.
    #[serde(default)]
    pub output: String,
    /// Why the reference's evaluation counts this runnable answer (Success or Partial here)
    /// as a function error: it printed other text besides the dict, its printed dict is one
    /// the reference's parser cannot read, or the verification crashed on it. `None`: the
    /// reference counts it as we do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_function_error: Option<String>,
}

impl CodeVerdict {
    /// What a page shows: the properties right, the error class, each property's expected
    /// and returned value, the reference's counting where it differs, the program's output.
    pub fn view(&self) -> VerdictView {
        let mut view = VerdictView::default();
        if self.total > 0 && matches!(self.label, Label::Success | Label::Partial) {
            view.facts
                .push(format!("{} of {} properties", self.correct, self.total));
        }
        view.tags
            .extend(self.error_class.map(|c| c.name().to_string()));
        if !self.properties.is_empty() {
            let table = self.properties.iter().fold(
                ViewTable::new(&["Property", "Expected", "Returned"]),
                |t, p| {
                    t.row(
                        vec![
                            p.name.clone(),
                            p.expected.to_string(),
                            p.returned.clone().unwrap_or_else(|| "(missing)".into()),
                        ],
                        Some(p.ok),
                    )
                },
            );
            view.table = Some(table);
        }
        // A failure's detail is its `Outcome::why` already.
        let detail = if self.label == Label::Success {
            self.detail.as_str()
        } else {
            ""
        };
        view.text("Detail", detail, true)
            .text(
                "As the reference counts it",
                self.reference_function_error.as_deref().unwrap_or_default(),
                true,
            )
            .text("Output", &self.output, false)
    }

    fn new(label: Label, task: &CodeTask, detail: impl Into<String>) -> Self {
        CodeVerdict {
            label,
            correct: 0,
            total: task.properties.len(),
            error_class: None,
            detail: detail.into(),
            properties: Vec::new(),
            output: String::new(),
            reference_function_error: None,
        }
    }

    /// A verdict without a run: the data is missing.
    pub fn unavailable(task: &CodeTask, why: &str) -> Self {
        Self::new(Label::DataUnavailable, task, why)
    }

    /// A FunctionError of `class` with `detail`.
    pub fn function_error(task: &CodeTask, class: ErrorClass, detail: impl Into<String>) -> Self {
        CodeVerdict {
            error_class: Some(class),
            ..Self::new(Label::FunctionError, task, detail)
        }
    }

    /// The sandbox could not run a program.
    pub fn not_run(task: &CodeTask, why: &str) -> Self {
        Self::new(
            Label::NotRun,
            task,
            format!("the sandbox could not run the code: {why}"),
        )
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let tail: String = text
        .chars()
        .rev()
        .take(max)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

/// The run's output as a verdict keeps it.
pub fn kept_output(run: &RunResult) -> String {
    let mut out = printed(&run.stdout);
    if !run.stderr.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&run.stderr);
    }
    cut(&out, OUTPUT_KEPT)
}

/// The exception that ended a Python program: (type name, message) from the traceback's last
/// line that looks like `Name: message` (or a bare `Name`).
pub fn exception(stderr: &str) -> Option<(String, String)> {
    stderr.lines().rev().map(str::trim).find_map(|line| {
        let (name, message) = line.split_once(':').unwrap_or((line, ""));
        let short = name.rsplit('.').next().unwrap_or(name);
        let looks = !short.is_empty()
            && short.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && short.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && (short.ends_with("Error")
                || short.ends_with("Exception")
                || short == "KeyboardInterrupt"
                || short == "SystemExit"
                || short == "StopIteration");
        looks.then(|| (short.to_string(), message.trim().to_string()))
    })
}

/// The taxonomy class of an exception.
pub fn classify(name: &str, message: &str) -> ErrorClass {
    match name {
        "ModuleNotFoundError" | "ImportError" => ErrorClass::ImportError,
        "AttributeError" | "NameError" | "UnboundLocalError" => ErrorClass::ApiHallucination,
        "SyntaxError" | "IndentationError" | "TabError" => ErrorClass::SyntaxError,
        "TypeError"
            if ["argument", "positional", "keyword", "takes", "missing"]
                .iter()
                .any(|w| message.contains(w)) =>
        {
            ErrorClass::IncorrectParameter
        }
        "TypeError" => ErrorClass::TypeMismatch,
        "ValueError" | "FileNotFoundError" | "KeyError" => ErrorClass::IncorrectParameter,
        _ => ErrorClass::Other,
    }
}

/// Stage 1's outcome: the tagged result text, or the FunctionError verdict.
pub fn after_solution(task: &CodeTask, run: &RunResult) -> Result<String, CodeVerdict> {
    let output = kept_output(run);
    let fail = |class: ErrorClass, detail: String| {
        let mut v = CodeVerdict::function_error(task, class, detail);
        v.output = output.clone();
        v
    };
    if let Some(limit) = &run.stopped_by {
        if limit != "output_truncated" {
            return Err(fail(
                ErrorClass::Other,
                format!("stopped by the sandbox: {limit}"),
            ));
        }
    }
    match marked(&run.stdout, RESULT_MARKER) {
        Some((text, value)) if run.exit_code == Some(0) => {
            let non_empty_dict = value
                .get("$dict")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if non_empty_dict {
                Ok(text)
            } else {
                Err(fail(
                    ErrorClass::TypeMismatch,
                    format!(
                        "the function returned {}, not a non-empty dict",
                        python_repr(&value)
                    ),
                ))
            }
        }
        _ => {
            let (class, detail) = match exception(&run.stderr) {
                Some((name, message)) => (classify(&name, &message), format!("{name}: {message}")),
                // The result is printed last: past the output cap it is cut off.
                None if run.stopped_by.as_deref() == Some("output_truncated") => (
                    ErrorClass::Other,
                    "the program printed more than the sandbox keeps (output_truncated), \
                     so its result was cut off"
                        .to_string(),
                ),
                None => (
                    ErrorClass::Other,
                    format!(
                        "the program ended without a result (exit status {:?})",
                        run.exit_code
                    ),
                ),
            };
            Err(fail(class, detail))
        }
    }
}

/// Why the reference counts a runnable answer whose code ran as `run` as a function error,
/// if it does: its stdout must be the printed dict alone, readable by its parser.
pub fn reference_reading(run: &RunResult) -> Option<String> {
    if !printed(&run.stdout).trim().is_empty() {
        return Some(
            "the code printed other text besides the returned dict, and the reference parses \
             stdout as one dict"
                .into(),
        );
    }
    match marked(&run.stdout, REFREADS_MARKER) {
        Some((_, Value::Bool(false))) => Some(
            "the reference's parser cannot read the printed dict (an object, nan or inf, or an \
             array dtype outside numpy's namespace)"
                .into(),
        ),
        _ => None,
    }
}

/// The verdict once the verification ran on stage 1's `result` (tagged JSON text).
pub fn after_verification(task: &CodeTask, result: &str, run: &RunResult) -> CodeVerdict {
    let returned: Vec<(String, Value)> = serde_json::from_str::<Value>(result)
        .ok()
        .and_then(|v| v.get("$dict").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pair| {
            let pair = pair.as_array()?;
            Some((pair.first()?.as_str()?.to_string(), pair.get(1)?.clone()))
        })
        .collect();
    let shown = |name: &str| {
        returned
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| python_repr(v))
    };
    let total = task.properties.len();
    let checks = |errors: &[String]| -> Vec<PropertyCheck> {
        task.properties
            .iter()
            .map(|p| PropertyCheck {
                name: p.name.clone(),
                expected: p.value.clone(),
                returned: shown(&p.name),
                ok: !errors.iter().any(|e| mentions_property(e, &p.name)),
            })
            .collect()
    };
    let answer = marked(&run.stdout, VERIFY_MARKER).map(|(_, v)| v);
    match answer {
        Some(Value::String(s)) if s == "ok" && run.exit_code == Some(0) => CodeVerdict {
            label: Label::Success,
            correct: total,
            total,
            error_class: None,
            detail: "every property verified".into(),
            properties: checks(&[]),
            output: String::new(),
            reference_function_error: None,
        },
        Some(Value::Array(items)) if run.exit_code == Some(0) => {
            let errors: Vec<String> = items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            // The list ends with the number of errors and of properties (the reference's
            // layout); the count of errors is taken from the list when present.
            let numbers: Vec<i64> = items.iter().filter_map(Value::as_i64).collect();
            let n_errors = match numbers.as_slice() {
                [.., e, _] => usize::try_from(*e).unwrap_or(errors.len()),
                _ => errors.len(),
            };
            let correct = total.saturating_sub(n_errors);
            let class = if errors.iter().any(|e| e.contains("is not of type")) {
                ErrorClass::TypeMismatch
            } else {
                ErrorClass::LogicError
            };
            CodeVerdict {
                label: if correct == total {
                    Label::Success
                } else {
                    Label::Partial
                },
                correct,
                total,
                error_class: (correct < total).then_some(class),
                detail: errors.join("\n"),
                properties: checks(&errors),
                output: String::new(),
                reference_function_error: None,
            }
        }
        other => {
            // The verification itself failed on what the code returned (a type it cannot
            // compare): the code ran, no property is counted right.
            let why = match (other, exception(&run.stderr)) {
                (_, Some((name, message))) => format!("the verification raised {name}: {message}"),
                (Some(v), None) => format!("the verification answered {v}"),
                (None, None) => match &run.stopped_by {
                    Some(limit) => format!("the verification was stopped: {limit}"),
                    None => "the verification gave no answer".into(),
                },
            };
            CodeVerdict {
                label: Label::Partial,
                correct: 0,
                total,
                error_class: Some(ErrorClass::TypeMismatch),
                detail: why,
                properties: checks(
                    &task
                        .properties
                        .iter()
                        .map(|p| p.name.clone())
                        .collect::<Vec<_>>(),
                ),
                output: cut(&run.stderr, OUTPUT_KEPT),
                reference_function_error: Some(
                    "the verification crashed on the returned value, which the reference \
                     counts as a function error"
                        .into(),
                ),
            }
        }
    }
}

/// Whether a verification message is about property `name` (messages start with it).
fn mentions_property(error: &str, name: &str) -> bool {
    error
        .strip_prefix(name)
        .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(' '))
        || error == name
}

/// The suite's headline numbers over a set of verdicts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Tasks scored with their data available (neither DataUnavailable nor NotRun).
    pub tasks_with_data: usize,
    /// Their subtasks.
    pub subtasks_with_data: usize,
    /// Tasks whose code ran and returned a dict (Success + Partial).
    pub runnable: usize,
    /// Subtasks solved.
    pub correct_subtasks: usize,
    /// All tasks, data or not.
    pub tasks: usize,
    /// All their subtasks.
    pub subtasks: usize,
    /// Runnable tasks as the reference counts them (see
    /// [`CodeVerdict::reference_function_error`]).
    #[serde(default)]
    pub reference_runnable: usize,
    /// Subtasks solved as the reference counts them (none of its function errors').
    #[serde(default)]
    pub reference_correct_subtasks: usize,
    /// Answers that failed (function errors and partial results) by the paper's error class
    /// (Table 2's taxonomy, plus Other), every class present.
    #[serde(default)]
    pub error_classes: std::collections::BTreeMap<String, usize>,
}

impl Metrics {
    /// Adds up `verdicts`.
    pub fn of<'a>(verdicts: impl IntoIterator<Item = &'a CodeVerdict>) -> Metrics {
        let mut m = Metrics {
            error_classes: ErrorClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), 0))
                .collect(),
            ..Metrics::default()
        };
        for v in verdicts {
            m.add(v);
        }
        m
    }

    fn add(&mut self, v: &CodeVerdict) {
        let (label, correct, total) = (v.label, v.correct, v.total);
        if let (Label::FunctionError | Label::Partial, Some(class)) = (label, v.error_class) {
            *self
                .error_classes
                .entry(class.name().to_string())
                .or_default() += 1;
        }
        let runnable = matches!(label, Label::Success | Label::Partial);
        if runnable && v.reference_function_error.is_none() {
            self.reference_runnable += 1;
            self.reference_correct_subtasks += correct;
        }
        self.tasks += 1;
        self.subtasks += total;
        if !matches!(label, Label::DataUnavailable | Label::NotRun) {
            self.tasks_with_data += 1;
            self.subtasks_with_data += total;
        }
        if matches!(label, Label::Success | Label::Partial) {
            self.runnable += 1;
        }
        self.correct_subtasks += correct;
    }

    /// Function Runnable Rate over the tasks with data.
    pub fn runnable_rate(&self) -> f64 {
        ratio(self.runnable, self.tasks_with_data)
    }

    /// Task Success Rate over the subtasks of the tasks with data.
    pub fn success_rate(&self) -> f64 {
        ratio(self.correct_subtasks, self.subtasks_with_data)
    }

    /// The same two over every task (as the paper counts: 49 tasks, 138 subtasks).
    pub fn rates_over_all(&self) -> (f64, f64) {
        (
            ratio(self.runnable, self.tasks),
            ratio(self.correct_subtasks, self.subtasks),
        )
    }

    /// The two rates over every task as the reference's evaluation counts (an answer that
    /// printed stray text, or whose dict its parser cannot read, or whose verification
    /// crashed, is a function error there).
    pub fn reference_rates(&self) -> (f64, f64) {
        (
            ratio(self.reference_runnable, self.tasks),
            ratio(self.reference_correct_subtasks, self.subtasks),
        )
    }

    /// The headline lines, labelled.
    pub fn lines(&self) -> String {
        let (r_all, s_all) = self.rates_over_all();
        let (r_ref, s_ref) = self.reference_rates();
        let mut text = format!(
            "tasks with data: {} of {} ({} of {} subtasks)\n\
             Function Runnable Rate (tasks with data): {:.2} %  [{} / {}]\n\
             Task Success Rate (subtasks of tasks with data): {:.2} %  [{} / {}]\n\
             over all tasks, as the paper counts: runnable {:.2} % of {}, success {:.2} % of {} subtasks\n\
             over all tasks, with the reference's stricter reading (stray printed text, a dict its parser cannot read or a crashed verification is a function error): runnable {:.2} % of {}, success {:.2} % of {} subtasks\n",
            self.tasks_with_data,
            self.tasks,
            self.subtasks_with_data,
            self.subtasks,
            100.0 * self.runnable_rate(),
            self.runnable,
            self.tasks_with_data,
            100.0 * self.success_rate(),
            self.correct_subtasks,
            self.subtasks_with_data,
            100.0 * r_all,
            self.tasks,
            100.0 * s_all,
            self.subtasks,
            100.0 * r_ref,
            self.tasks,
            100.0 * s_ref,
            self.subtasks,
        );
        let classes: Vec<String> = ErrorClass::ALL
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c.name(),
                    self.error_classes.get(c.name()).unwrap_or(&0)
                )
            })
            .collect();
        text.push_str(&format!(
            "failed answers by error class (the paper's Table 2): {}\n",
            classes.join(", ")
        ));
        text
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mattools::code::task::Property;

    fn task() -> CodeTask {
        let p = |n: &str| Property {
            name: n.into(),
            description: String::new(),
            format: "int".into(),
            value: Value::from(1),
        };
        CodeTask {
            name: "test_t".into(),
            question: String::new(),
            properties: vec![p("a"), p("ab"), p("c")],
            verification: String::new(),
            unavailable: None,
        }
    }

    fn ran(stdout: &str, stderr: &str, exit: i32) -> RunResult {
        RunResult {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code: Some(exit),
            ..RunResult::default()
        }
    }

    #[test]
    fn exceptions_are_classified() {
        let tb = "Traceback (most recent call last):\n  File \"solution.py\", line 1\nModuleNotFoundError: No module named 'dscribe'\n";
        assert_eq!(
            exception(tb),
            Some((
                "ModuleNotFoundError".into(),
                "No module named 'dscribe'".into()
            ))
        );
        let cases = [
            (
                "ImportError",
                "cannot import name 'Specie'",
                ErrorClass::ImportError,
            ),
            (
                "AttributeError",
                "'Structure' object has no attribute 'foo'",
                ErrorClass::ApiHallucination,
            ),
            (
                "TypeError",
                "f() got an unexpected keyword argument 'x'",
                ErrorClass::IncorrectParameter,
            ),
            (
                "TypeError",
                "unsupported operand type(s)",
                ErrorClass::TypeMismatch,
            ),
            ("SyntaxError", "invalid syntax", ErrorClass::SyntaxError),
            ("ZeroDivisionError", "division by zero", ErrorClass::Other),
        ];
        for (name, message, class) in cases {
            assert_eq!(classify(name, message), class, "{name}");
        }
        let e = exception("  File \"x\"\nnumpy.linalg.LinAlgError: Singular matrix\n").unwrap();
        assert_eq!(e.0, "LinAlgError");
    }

    #[test]
    fn stage_one_failures_are_function_errors() {
        let t = task();
        let v = after_solution(
            &t,
            &ran("", "Traceback\nAttributeError: no attribute 'x'\n", 1),
        )
        .unwrap_err();
        assert_eq!(
            (v.label, v.error_class),
            (Label::FunctionError, Some(ErrorClass::ApiHallucination))
        );
        let v = after_solution(&t, &ran("\n\x1eAWRESULT {\"$dict\": []}\n", "", 0)).unwrap_err();
        assert_eq!(v.error_class, Some(ErrorClass::TypeMismatch));
        assert!(v.detail.contains("returned {}"), "{}", v.detail);
        let v = after_solution(&t, &ran("\x1eAWRESULT [1]\n", "", 0)).unwrap_err();
        assert!(v.detail.contains("returned [1]"), "{}", v.detail);
        let stopped = RunResult {
            stopped_by: Some("timed_out".into()),
            exit_code: None,
            ..RunResult::default()
        };
        assert_eq!(
            after_solution(&t, &stopped).unwrap_err().error_class,
            Some(ErrorClass::Other)
        );
        // Output past the cap lost the result: the detail says so.
        let cut = RunResult {
            stopped_by: Some("output_truncated".into()),
            ..ran("xxxx", "", 0)
        };
        let v = after_solution(&t, &cut).unwrap_err();
        assert!(v.detail.contains("output_truncated"), "{}", v.detail);
        // Printed text containing "ok" or a fake marker before the real one changes nothing.
        let ok = after_solution(
            &t,
            &ran(
                "ok\n\x1eAWRESULT 1\n\x1eAWRESULT {\"$dict\": [[\"a\", 1]]}\n",
                "",
                0,
            ),
        );
        assert_eq!(ok.unwrap(), "{\"$dict\": [[\"a\", 1]]}");
    }

    #[test]
    fn verification_answers_become_success_or_partial() {
        let t = task();
        let result = r#"{"$dict": [["a", 1], ["ab", 2]]}"#;
        let v = after_verification(&t, result, &ran("\x1eAWVERIFY \"ok\"\n", "", 0));
        assert_eq!((v.label, v.correct, v.total), (Label::Success, 3, 3));
        let errs = "\x1eAWVERIFY [\"ab: Expected 1 but got 2\", \"c not found in input properties\", 2, 3]\n";
        let v = after_verification(&t, result, &ran(errs, "", 0));
        assert_eq!(
            (v.label, v.correct, v.error_class),
            (Label::Partial, 1, Some(ErrorClass::LogicError))
        );
        let oks: Vec<_> = v
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.ok, p.returned.clone()))
            .collect();
        assert_eq!(
            oks,
            [
                ("a", true, Some("1".into())),
                ("ab", false, Some("2".into())),
                ("c", false, None)
            ]
        );
        // "ok" anywhere but as the verification's own answer is not a pass.
        let v = after_verification(&t, result, &ran("ok\n\x1eAWVERIFY [\"ok\", 1, 3]\n", "", 0));
        assert_eq!((v.label, v.correct), (Label::Partial, 2));
        let v = after_verification(&t, result, &ran("", "Traceback\nTypeError: bad\n", 1));
        assert_eq!((v.label, v.correct), (Label::Partial, 0));
        // More errors than properties floors at 0.
        let v = after_verification(&t, result, &ran("\x1eAWVERIFY [\"x\", 9, 3]\n", "", 0));
        assert_eq!(v.correct, 0);
    }

    #[test]
    fn metrics_count_tasks_with_data_apart() {
        let t = task();
        let s = CodeVerdict {
            label: Label::Success,
            correct: 3,
            ..CodeVerdict::new(Label::Success, &t, "")
        };
        let u = CodeVerdict::unavailable(&t, "no data");
        let f = CodeVerdict::function_error(&t, ErrorClass::Other, "x");
        let m = Metrics::of([&s, &u, &f]);
        assert_eq!(
            (m.tasks, m.tasks_with_data, m.runnable, m.correct_subtasks),
            (3, 2, 1, 3)
        );
        assert!((m.runnable_rate() - 0.5).abs() < 1e-12);
        assert!((m.success_rate() - 0.5).abs() < 1e-12);
        assert!(m.lines().contains("Function Runnable Rate"));
    }

    #[test]
    fn the_reference_counts_stray_output_unreadable_dicts_and_crashed_checks_as_errors() {
        let t = task();
        let result = "\x1eAWRESULT {\"$dict\": [[\"a\", 1]]}\n";
        let clean = ran(&format!("\n\x1eAWREFREADS true\n{result}"), "warning\n", 0);
        assert_eq!(reference_reading(&clean), None, "stderr is not stdout");
        let chatty = ran(&format!("done\n\x1eAWREFREADS true\n{result}"), "", 0);
        assert!(reference_reading(&chatty)
            .unwrap()
            .contains("printed other text"));
        let unreadable = ran(&format!("\n\x1eAWREFREADS false\n{result}"), "", 0);
        assert!(reference_reading(&unreadable)
            .unwrap()
            .contains("cannot read"));
        let crashed = after_verification(
            &t,
            r#"{"$dict": [["a", 1]]}"#,
            &ran("", "Traceback\nTypeError: bad\n", 1),
        );
        assert!(crashed.reference_function_error.is_some());

        // One Success as both count it, one Partial (2 of 3) that the reference counts as a
        // function error, one FunctionError.
        let s = CodeVerdict {
            correct: 3,
            ..CodeVerdict::new(Label::Success, &t, "")
        };
        let p = CodeVerdict {
            correct: 2,
            reference_function_error: Some("stray".into()),
            ..CodeVerdict::new(Label::Partial, &t, "")
        };
        let f = CodeVerdict::function_error(&t, ErrorClass::Other, "x");
        let m = Metrics::of([&s, &p, &f]);
        assert_eq!((m.runnable, m.correct_subtasks), (2, 5));
        assert_eq!((m.reference_runnable, m.reference_correct_subtasks), (1, 3));
        // The failed answers by class: the function error (Other); the partial one has none.
        assert_eq!(m.error_classes.len(), 7);
        assert_eq!(m.error_classes["Other"], 1);
        assert_eq!(m.error_classes.values().sum::<usize>(), 1);
        let (r, s) = m.reference_rates();
        assert!((r - 1.0 / 3.0).abs() < 1e-12 && (s - 3.0 / 9.0).abs() < 1e-12);
        assert!(m.lines().contains("reference's stricter reading"));
    }
}
