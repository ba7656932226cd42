//! The two sandbox runs of a tool-usage task, and reading their answers back.
//!
//! Stage 1 (`python/run_solution.py`) runs the model's code and prints its dict as tagged
//! JSON; stage 2 (`python/verify_result.py`) rebuilds the dict and calls the task's own
//! verification function. Nothing the model returns is evaluated outside the sandbox: the
//! host only reads JSON.

use serde_json::Value;

use crate::task::{RunEnv, RunProgram};

/// Stage 1's harness (`NAME`: the model's function).
const RUN_SOLUTION: &str = include_str!("python/run_solution.py");
/// Stage 2's harness (`NAME`: the task's verification function).
const VERIFY_RESULT: &str = include_str!("python/verify_result.py");
/// Marker before stage 1's result line.
pub const RESULT_MARKER: &str = "\x1eAWRESULT ";
/// Marker before stage 1's line saying whether the reference's parser reads the printed
/// result (`true`/`false`), just before the result line.
pub const REFREADS_MARKER: &str = "\x1eAWREFREADS ";
/// Marker before stage 2's answer line.
pub const VERIFY_MARKER: &str = "\x1eAWVERIFY ";
/// Where a task's data files appear in the scratch directory (the path the questions use).
pub const DATA_PATH: &str = "tool_source_code/pymatgen-analysis-defects/tests/test_files";
/// The name of the sandbox data set holding MatTools' test files.
pub const DATA_SET: &str = "mattools";
/// Wall-clock seconds a task's code may take (some tasks take 60–90 s on 2 cores).
pub const WALL_SECS: u64 = 180;
/// Seconds the verification may take.
pub const VERIFY_SECS: u64 = 60;
/// Memory a run may use beyond the warm interpreter (MiB); peak RSS of a task is ~220 MB.
pub const MEMORY_MB: u64 = 2048;

/// The documentation extractor (`python/extract_docs.py`; prints one JSON line after
/// [`DOCS_MARKER`]).
pub const EXTRACT_DOCS: &str = include_str!("python/extract_docs.py");
/// Marker before the extractor's JSON line.
pub const DOCS_MARKER: &str = "\x1eAWDOCS ";

/// The code chunker (`python/extract_code.py`; prints one JSON line after [`CODE_MARKER`]).
pub const EXTRACT_CODE: &str = include_str!("python/extract_code.py");
/// Marker before the code chunker's JSON line.
pub const CODE_MARKER: &str = "\x1eAWCODE ";

/// The run that extracts the documentation of the pinned stack (cached by the server).
pub fn docs_run() -> (RunEnv, RunProgram) {
    extraction_run(EXTRACT_DOCS)
}

/// The documentation extractor asked for each object's source code too (the model-written
/// documentation's input; [`super::model_docs::SourcedObject`] its entries).
pub fn objects_program() -> String {
    format!(
        "SOURCE_CHARS = {}\n{EXTRACT_DOCS}",
        super::model_docs::SOURCE_CHARS
    )
}

/// The run of [`objects_program`] (cached by the server).
pub fn objects_run() -> (RunEnv, RunProgram) {
    extraction_run(&objects_program())
}

/// The run that cuts the pinned stack's source code into chunks (cached by the server).
pub fn code_chunks_run() -> (RunEnv, RunProgram) {
    extraction_run(EXTRACT_CODE)
}

/// A run of an extractor in the pymatgen sandbox, with room for its one long line.
fn extraction_run(program: &str) -> (RunEnv, RunProgram) {
    (
        RunEnv::Pymatgen,
        RunProgram {
            code: program.to_string(),
            wall_secs: 300,
            memory_mb: MEMORY_MB,
            output_bytes: 16 << 20,
            ..RunProgram::default()
        },
    )
}

/// Stage 1: the model's `code`, calling `name` (a checked identifier).
pub fn solution_run(code: &str, name: &str) -> (RunEnv, RunProgram) {
    (
        RunEnv::Pymatgen,
        RunProgram {
            code: RUN_SOLUTION.replace("\"NAME\"", &format!("{name:?}")),
            files: vec![("solution.py".into(), code.to_string())],
            data_links: vec![(DATA_PATH.into(), DATA_SET.into())],
            wall_secs: WALL_SECS,
            memory_mb: MEMORY_MB,
            output_bytes: 0,
        },
    )
}

/// Stage 2: the verification `source` of task `task` on stage 1's `result` (tagged JSON).
pub fn verification_run(task: &str, source: &str, result: &str) -> (RunEnv, RunProgram) {
    (
        RunEnv::Pymatgen,
        RunProgram {
            code: VERIFY_RESULT.replace("\"NAME\"", &format!("{task:?}")),
            files: vec![
                ("verify.py".into(), source.to_string()),
                ("result.json".into(), result.to_string()),
            ],
            data_links: Vec::new(),
            wall_secs: VERIFY_SECS,
            memory_mb: MEMORY_MB,
            output_bytes: 0,
        },
    )
}

/// The JSON after the last `marker` line of `stdout`, if it parses.
pub fn marked(stdout: &str, marker: &str) -> Option<(String, Value)> {
    let start = stdout.rfind(marker)? + marker.len();
    let line = stdout[start..].lines().next()?;
    let value = serde_json::from_str(line).ok()?;
    Some((line.to_string(), value))
}

/// The text after the last `marker` up to the end of its line (unparsed: large JSON).
pub fn marked_line<'a>(stdout: &'a str, marker: &str) -> Option<&'a str> {
    let start = stdout.rfind(marker)? + marker.len();
    stdout[start..].lines().next()
}

/// `stdout` without the harness's marker lines (what the model's code printed).
pub fn printed(stdout: &str) -> String {
    let mut out = stdout.to_string();
    for marker in [RESULT_MARKER, VERIFY_MARKER, REFREADS_MARKER] {
        if let Some(i) = out.rfind(marker) {
            out.truncate(i.saturating_sub(usize::from(out[..i].ends_with('\n'))));
        }
    }
    out
}

/// A tagged-JSON value written as Python would print it (for showing returned values).
pub fn python_repr(v: &Value) -> String {
    let list = |items: &[Value], open: &str, close: &str| {
        let parts: Vec<String> = items.iter().map(python_repr).collect();
        format!("{open}{}{close}", parts.join(", "))
    };
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(f) => engine::python::py_repr(f),
            None => n.to_string(),
        },
        Value::String(s) => engine::python::py_str_repr(s),
        Value::Array(items) => list(items, "[", "]"),
        Value::Object(o) => {
            let items = |key: &str| o.get(key).and_then(Value::as_array).map(Vec::as_slice);
            if let Some(items) = items("$tuple") {
                if items.len() == 1 {
                    return format!("({},)", python_repr(&items[0]));
                }
                return list(items, "(", ")");
            }
            if let Some(items) = items("$set") {
                return if items.is_empty() {
                    "set()".into()
                } else {
                    list(items, "{", "}")
                };
            }
            if let Some(items) = items("$ndarray") {
                return format!("array({})", list(items, "[", "]"));
            }
            if let Some(pairs) = items("$dict") {
                let parts: Vec<String> = pairs
                    .iter()
                    .filter_map(Value::as_array)
                    .filter(|p| p.len() == 2)
                    .map(|p| format!("{}: {}", python_repr(&p[0]), python_repr(&p[1])))
                    .collect();
                return format!("{{{}}}", parts.join(", "));
            }
            for (tag, shown) in [
                ("$float", "float"),
                ("$element", "Element"),
                ("$species", "Species"),
            ] {
                if let Some(s) = o.get(tag).and_then(Value::as_str) {
                    return format!("{shown}('{s}')");
                }
            }
            if let Some(s) = o.get("$repr").and_then(Value::as_str) {
                return s.to_string();
            }
            if let Some(c) = items("$complex") {
                return format!("complex({})", list(c, "", ""));
            }
            Value::Object(o.clone()).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn programs_name_their_function_and_data() {
        let (env, p) = solution_run("def f(): return {}", "f");
        assert_eq!(env, RunEnv::Pymatgen);
        assert!(p.code.contains("_FN = \"f\""));
        assert_eq!(p.files[0].0, "solution.py");
        assert_eq!(
            p.data_links,
            [(DATA_PATH.to_string(), DATA_SET.to_string())]
        );
        let (_, v) = verification_run("test_x", "def test_x(p): return 'ok'", "{}");
        assert!(v.code.contains("_TASK = \"test_x\""));
    }

    #[test]
    fn markers_take_the_last_line() {
        let out = "hi\n\x1eAWRESULT {\"a\": 1}\nprinted\n\x1eAWRESULT [1]\n";
        assert_eq!(marked(out, RESULT_MARKER).unwrap().1, json!([1]));
        assert_eq!(printed("hi\n\n\x1eAWRESULT 1\n"), "hi\n");
        assert_eq!(
            printed("hi\n\x1eAWREFREADS true\n\x1eAWRESULT 1\n"),
            "hi",
            "the harness's lines are not the model's output"
        );
        assert_eq!(printed("\n\x1eAWREFREADS true\n\x1eAWRESULT 1\n"), "");
        assert!(marked("\x1eAWRESULT nope\n", RESULT_MARKER).is_none());
    }

    #[test]
    fn tagged_values_print_as_python() {
        let v = json!({"$dict": [["a", {"$tuple": [1, 2.5]}], [{"$tuple": [1]}, {"$set": []}],
            ["e", {"$element": "Fe"}], ["arr", {"$ndarray": [[1, 2]], "dtype": "int64"}],
            ["n", null], ["b", true], ["f", {"$float": "nan"}]]});
        assert_eq!(
            python_repr(&v),
            "{'a': (1, 2.5), (1,): set(), 'e': Element('Fe'), 'arr': array([[1, 2]]), \
             'n': None, 'b': True, 'f': float('nan')}"
        );
    }
}
