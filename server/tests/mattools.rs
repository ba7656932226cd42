//! MatTools' tool-usage suite end to end on the real sandbox (bwrap + the pinned venv) and
//! the upstream tasks in `shared/data/mattools`: the `reference` baseline passes every task
//! with data, `empty` fails every one, and the reference's faults are absent.
//!
//! Needs bubblewrap, the venv (`scripts/mattools-venv.sh`) and the shared data: without them
//! the test fails under CI and is skipped with a notice otherwise.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::path::PathBuf;

use bench::task::Registry;
use serde_json::{json, Value};
use server::cli::eval::{context, run_with, Context};

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1")
}

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/mattools")
}

/// The eval context over the shared tasks, or `None` to skip.
fn setup() -> Option<Context> {
    match context("mattools-code", Some(&data()), None) {
        Ok(c) => Some(c),
        Err(e) if required() => panic!("{e:?} (required under CI)"),
        Err(e) => {
            eprintln!("SKIPPED: {e:?}");
            None
        }
    }
}

fn eval(context: &Context, lines: &[Value]) -> (Vec<Value>, String) {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut out = Vec::new();
    let summary = run_with(
        &Registry::standard(),
        "mattools-code",
        input.as_bytes(),
        &mut out,
        context,
    )
    .unwrap();
    let verdicts = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["verdict"].clone())
        .collect();
    (verdicts, summary)
}

fn answer(code: &str, name: &str) -> String {
    format!("<answer><code>```python\n{code}\n```</code><name>{name}</name></answer>")
}

#[test]
fn baselines_and_the_reference_faults() {
    let Some(context) = setup() else { return };
    let registry = Registry::standard();
    let suite = registry.get("mattools-code").unwrap();
    let mut names: Vec<&String> = context.tasks.keys().collect();
    names.sort();
    assert_eq!(names.len(), 49);
    // Shuffled order: tasks are keyed by name, never by position.
    names.reverse();
    let subtasks: usize = context
        .tasks
        .values()
        .map(|t| t["properties"].as_array().unwrap().len())
        .sum();
    assert_eq!(subtasks, 138);

    let lines_for = |baseline: &str| -> Vec<Value> {
        names
            .iter()
            .map(|n| {
                let task = suite.prepare_json(&context.tasks[*n]).unwrap();
                json!({"task": n, "response": suite.baseline_answer(baseline, &task).unwrap()})
            })
            .collect()
    };
    let (verdicts, summary) = eval(&context, &lines_for("reference"));
    let mut with_data = 0;
    for (name, v) in names.iter().zip(&verdicts) {
        match v["label"].as_str().unwrap() {
            "DataUnavailable" => {}
            "Success" => with_data += 1,
            other => panic!("reference baseline on {name}: {other}: {v}"),
        }
    }
    assert_eq!(with_data, 29, "{summary}");
    assert!(
        summary.contains("Function Runnable Rate (tasks with data): 100.00 %"),
        "{summary}"
    );

    let (verdicts, summary) = eval(&context, &lines_for("empty"));
    for v in &verdicts {
        let label = v["label"].as_str().unwrap();
        assert!(matches!(label, "FunctionError" | "DataUnavailable"), "{v}");
    }
    assert!(
        summary.contains("Function Runnable Rate (tasks with data): 0.00 %"),
        "{summary}"
    );

    // Printing "ok" (and a fake verification line) does not pass; a wrong value is Partial
    // with the expected and returned values shown; a hallucinated API is classified.
    let fake = answer(
        "def f():\n    print('ok')\n    print('\\x1eAWVERIFY \"ok\"')\n    return {'antisite_defect_names': ['N_Ga']}",
        "f",
    );
    let hallucinated = answer(
        "from pymatgen.core import Structure\ndef g():\n    return {'x': Structure.from_nowhere()}",
        "g",
    );
    let missing_import = answer("import dscribe\ndef h():\n    return {'a': 1}", "h");
    let lines = [
        json!({"task": "test_antisite_generator", "response": fake}),
        json!({"task": "test_antisite_generator", "response": hallucinated}),
        json!({"task": "test_antisite_generator", "response": missing_import}),
        json!({"task": "test_antisite_generator", "response": "no code here"}),
    ];
    let (v, _) = eval(&context, &lines);
    assert_eq!(v[0]["label"], "Partial", "{}", v[0]);
    assert_eq!(v[0]["correct"], 0);
    assert_eq!(v[1]["label"], "FunctionError");
    assert_eq!(v[1]["error_class"], "API Hallucination", "{}", v[1]);
    assert_eq!(v[2]["error_class"], "Import Error", "{}", v[2]);
    assert_eq!(v[3]["label"], "FunctionError");
}

/// The page's flow through the API: the server pointed at MatTools' folder lists the tasks
/// and scores hand-written code in the sandbox; a passcode guards scoring; long answers are
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_lists_tasks_and_scores_code_in_the_sandbox() {
    if setup().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = data();
    let server = common::Server::start(dir.path(), &[], |cmd| {
        cmd.env("ATOMWORLD_MATTOOLS_DIR", &data)
            .env("ATOMWORLD_PASSCODE", "sesame");
    })
    .await;
    let c = reqwest::Client::new();
    let suites = common::get_json(&c, format!("{}/api/suites", server.base)).await;
    let count = |name: &str| {
        suites["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["tasks"].as_u64().unwrap())
    };
    assert_eq!(count("mattools-code"), Some(49), "{suites}");
    assert!(count("mattools-qa").unwrap() >= 60, "{suites}");
    assert!(count("omnimat-cal").unwrap() >= 10, "{suites}");
    let tasks = common::get_json(
        &c,
        format!("{}/api/suites/mattools-code/tasks", server.base),
    )
    .await;
    let task = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "test_antisite_generator")
        .unwrap()
        .clone();
    assert!(task["prompt"].as_str().unwrap().contains("<name>"));
    let code = "from pymatgen.core import Structure\n\
        from pymatgen.analysis.defects.generators import AntiSiteGenerator\n\
        def names():\n    s = Structure.from_file('tool_source_code/pymatgen-analysis-defects/tests/test_files/GaN.vasp')\n\
        \x20   return {'antisite_defect_names': sorted(d.name for d in AntiSiteGenerator().get_defects(s))}\n";
    let score = |response: String| {
        let c = c.clone();
        let url = format!("{}/api/score", server.base);
        let body = json!({"suite": "mattools-code", "task": task["task"], "response": response});
        async move {
            c.post(url)
                .bearer_auth("sesame")
                .json(&body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let right = score(answer(code, "names")).await;
    assert_eq!(right["outcome"]["label"], "Success", "{right}");
    let wrong = score(answer(&code.replace("d.name", "d.nmae"), "names")).await;
    assert_eq!(wrong["outcome"]["label"], "FunctionError", "{wrong}");
    assert_eq!(
        wrong["verdict"]["error_class"], "ApiHallucination",
        "{wrong}"
    );
    // Without the passcode, nothing runs.
    let refused = c
        .post(format!("{}/api/score", server.base))
        .json(&json!({"suite": "mattools-code", "task": task["task"], "response": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let long = score("x".repeat(300 * 1024)).await;
    assert_eq!(long["error"]["code"], "bad_request", "{long}");
}
