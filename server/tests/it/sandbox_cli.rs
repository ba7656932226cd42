//! The code sandbox through the binary: `atomworld sandbox run` and `check`, and
//! `/api/health` reporting it. Built only with the `wasm-sandbox` feature (scripts/test.sh
//! runs it so, after scripts/python-wasm.sh fetched the interpreter).
#![cfg(feature = "wasm-sandbox")]

use crate::common;

use common::{bin, get_json, Server};

fn run(code: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.py");
    std::fs::write(&file, code).unwrap();
    let out = bin()
        .args(["sandbox", "run"])
        .args(extra)
        .arg(&file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_program_runs_and_its_outcome_is_one_json_object() {
    let (status, stdout, stderr) = run("import json\nprint(json.dumps({'x': 6 * 7}))\n", &[]);
    assert_eq!(status, Some(0), "{stderr}");
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(outcome["stdout"], "{\"x\": 42}\n");
    assert_eq!(outcome["exit_code"], 0);
    assert!(outcome["stopped_by"].is_null());
}

#[test]
fn limits_from_the_command_line_stop_a_program() {
    let (status, stdout, stderr) = run("while True:\n    pass\n", &["--timeout", "1"]);
    assert_eq!(status, Some(0), "{stderr}");
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(outcome["stopped_by"], "timed_out", "{outcome}");
    let (_, stdout, _) = run("x = bytearray(512 * 1024 * 1024)\n", &["--memory-mb", "64"]);
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(outcome["stopped_by"], "memory_exceeded", "{outcome}");
    let (status, stdout, stderr) = run("import os\nprint(os.getuid())\n", &["--backend", "bwrap"]);
    assert_eq!(status, Some(0), "{stderr}");
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(outcome["stdout"], "65534\n", "{outcome}");
    // The container backend runs where an engine and its image exist (test.sh builds the
    // image); elsewhere it says why not.
    let (status, stdout, stderr) = run(
        "import os\nprint(os.getuid())\n",
        &["--backend", "container"],
    );
    if status == Some(0) {
        let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(outcome["stdout"], "65534\n", "{outcome}");
    } else {
        assert!(
            stderr.contains("scripts/container-image.sh") || stderr.contains("container engine"),
            "{stderr}"
        );
    }
}

#[test]
fn check_names_every_backend_and_why_one_does_not_work() {
    let out = bin().args(["sandbox", "check"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("wasm") && l.contains("works")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("bwrap") && l.contains("works")),
        "{text}"
    );
    assert!(text.contains("container"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[], |_| {}).await;
    let c = reqwest::Client::new();
    let mut health = serde_json::Value::Null;
    for _ in 0..300 {
        health = get_json(&c, format!("{}/api/health", server.base)).await;
        if health["sandbox"]["available"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(health["sandbox"]["backend"], "wasm");
    assert_eq!(health["sandbox"]["available"], true, "{health}");
}
