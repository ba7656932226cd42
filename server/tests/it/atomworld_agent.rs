//! AtomWorld's tool-augmented agent end to end on the real pymatgen sandbox (bwrap + the
//! pinned venv): a scripted model's program fails, is shown its error, and its corrected
//! program's structure is scored a success; another program writes the wrong structure and
//! is scored as such; every attempt is stored with the result.
//!
//! Needs bubblewrap and the venv (`scripts/mattools-venv.sh`): without them the test fails
//! under CI and is skipped with a notice otherwise.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::extract::State;
use serde_json::{json, Value};

type Seen = Arc<Mutex<Vec<String>>>;

/// A program that turns site `index` into `element` and writes output.cif.
fn program(index: usize, element: &str) -> String {
    format!(
        "```python\nfrom pymatgen.core import Structure\nfrom pymatgen.io.cif import CifWriter\n\
         s = Structure.from_file('input.cif')\ns.replace({index}, '{element}')\n\
         CifWriter(s).write_file('output.cif')\n```"
    )
}

/// The scripted model: for the task on site 0, first a program that fails, then (shown the
/// error) the right one; for the task on site 1, a program that writes rubidium instead.
async fn reply(State(seen): State<Seen>, axum::Json(body): axum::Json<Value>) -> axum::Json<Value> {
    let prompt = body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    seen.lock().unwrap().push(prompt.clone());
    let text = if prompt.contains("Action: Change the atom at index 1") {
        program(1, "Rb")
    } else if prompt.contains("Your previous program failed") {
        program(0, "K")
    } else {
        "```python\nfrom pymatgen.core import Structure\nStructure.from_fiel('input.cif')\n```"
            .to_string()
    };
    common::completion(&text, 100)
}

/// Whether the pymatgen sandbox can run here.
fn sandbox_ready() -> bool {
    let venv = std::env::var("ATOMWORLD_MATTOOLS_VENV").map_or_else(
        |_| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/atomworld/venv-mattools")
        },
        std::path::PathBuf::from,
    );
    let bwrap = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    bwrap && venv.join("bin/python").exists()
}

/// Runs `agent` with the fake model at `base` on two tasks of rock salt's conventional cell
/// (site 0, then site 1, into K; the input as the benchmark writes it): the run's id and
/// stored rows, with the folder holding them.
async fn run_two_tasks(
    agent: &str,
    base: &str,
) -> (tempfile::TempDir, String, Vec<wire::ResultRow>) {
    let dir = tempfile::tempdir().unwrap();
    let cif = engine::cif::write_cif(&engine::cif::read_cif(&common::nacl_conventional()).unwrap());
    let tasks: String = [0, 1]
        .iter()
        .map(|i| {
            let action = format!(
                "Change the atom at index {i} into K in the cif file. The indices of atoms are \
                 started from 0."
            );
            format!("{}\n", json!({"input_cif": cif, "action_prompt": action}))
        })
        .collect();
    let file = dir.path().join("tasks.jsonl");
    std::fs::write(&file, tasks).unwrap();
    let config = common::fake_model_config(dir.path(), base, "");
    let data = dir.path().join("data");
    let out = common::run_fake(&config, &data)
        .args(["--agent", agent, "--concurrency", "1", "--tasks"])
        .arg(&file)
        .env("FAKE_API_KEY", "unused")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (id, spec, rows) = common::only_run(&data);
    assert_eq!(spec.agent.as_deref(), Some(agent));
    (dir, id, rows)
}

/// The row of the task that changes `site`.
fn row_of(rows: &[wire::ResultRow], site: usize) -> &wire::ResultRow {
    rows.iter()
        .find(|r| {
            r.prompt
                .contains(&format!("Change the atom at index {site} "))
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pymatgen_agent_runs_its_programs_and_is_scored_by_what_they_write() {
    if !sandbox_ready() {
        assert!(
            !common::required(),
            "bwrap and the MatTools venv are required under CI"
        );
        eprintln!("SKIPPED: no bwrap or no MatTools venv");
        return;
    }
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(reply))
        .with_state(seen.clone());
    let base = common::spawn_app(app).await;
    let (dir, id, rows) = run_two_tasks("pymatgen", &base).await;
    let data = dir.path().join("data");
    let row = |key: &str| row_of(&rows, key[1..].parse().unwrap());
    let attempts = |key: &str| {
        row(key)
            .transcript
            .clone()
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };

    // Site 0: the first program fails (no such method), the second writes the answer.
    assert_eq!(
        row("k0").label.as_deref(),
        Some("Success"),
        "{:?}",
        row("k0")
    );
    let a = attempts("k0");
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a[0]["run"]["stderr"]
            .as_str()
            .unwrap()
            .contains("from_fiel"),
        "{}",
        a[0]
    );
    assert_eq!(a[0]["written"], Value::Null);
    assert_eq!(a[0]["retrieved"].as_array().unwrap().len(), 5, "{}", a[0]);
    assert!(a[1]["written"].as_str().unwrap().contains("K0"), "{}", a[1]);
    assert!(row("k0")
        .response
        .as_deref()
        .unwrap()
        .starts_with("<cif>\n"));
    // The second prompt showed the failed program and its traceback.
    let prompts = seen.lock().unwrap().clone();
    let retry = prompts
        .iter()
        .find(|p| p.contains("Your previous program failed"))
        .unwrap();
    assert!(
        retry.contains("AttributeError") && retry.contains("from_fiel"),
        "{retry}"
    );

    // Site 1: the program writes Rb for K: a structure, but not the target's composition.
    assert_eq!(
        row("k1").label.as_deref(),
        Some("AtomCountMismatch"),
        "{:?}",
        row("k1")
    );
    assert_eq!(attempts("k1").len(), 1);
    assert_eq!(prompts.len(), 3, "two attempts for k0, one for k1");

    // The report names the agent in the run's column (Table 11: with and without tools).
    let out = common::bin()
        .args(["report", &id, "--format", "json", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let columns = report["paper"][0]["columns"].to_string();
    assert!(
        columns.contains(&format!("fake · agent pymatgen ({id})")),
        "{columns}"
    );
}

/// The scripted model of the engine-tools agent: it reads the structure, applies an action
/// (K on site 0 for the task on site 0, Rb for the other) and writes the CIF, one call a
/// turn, as OpenAI-style tool calls; each request's tool offer is recorded.
async fn tool_reply(
    State(seen): State<Seen>,
    axum::Json(body): axum::Json<Value>,
) -> axum::Json<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let results = messages.iter().filter(|m| m["role"] == "tool").count();
    let task = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.contains("Action prompt"))
        .unwrap_or_default();
    seen.lock().unwrap().push(body["tools"].to_string());
    let element = if task.contains("index 1 ") { "Rb" } else { "K" };
    let site = if task.contains("index 1 ") { 1 } else { 0 };
    let (name, arguments) = match results {
        0 => ("read_structure", "{}".to_string()),
        1 => (
            "apply_action",
            json!({"action": {"action": "change", "index": site, "element": element}}).to_string(),
        ),
        _ => ("write_cif", "{}".to_string()),
    };
    axum::Json(json!({
        "choices": [{"message": {"content": null, "tool_calls": [
            {"id": format!("c{results}"), "type": "function",
             "function": {"name": name, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5}
    }))
}

/// Our engine-tools agent end to end with a scripted model speaking OpenAI's function
/// calling: three turns (read, apply, write), the written structure scored, every call and
/// its result stored; the wrong element is scored as such; the tools were offered each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_tools_agent_calls_tools_and_is_scored_by_what_it_writes() {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(tool_reply))
        .with_state(seen.clone());
    let base = common::spawn_app(app).await;
    let (_dir, _, rows) = run_two_tasks("engine-tools", &base).await;
    let row = |site: usize| row_of(&rows, site);
    assert_eq!(row(0).label.as_deref(), Some("Success"), "{:?}", row(0));
    assert_eq!(
        row(1).label.as_deref(),
        Some("AtomCountMismatch"),
        "{:?}",
        row(1)
    );
    let turns = row(0).transcript.clone().unwrap();
    let turns = turns.as_array().unwrap();
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert_eq!(turns[0]["calls"][0]["name"], "read_structure");
    assert!(turns[0]["calls"][0]["result"]
        .as_str()
        .unwrap()
        .contains("\"sites\""));
    assert_eq!(
        turns[1]["calls"][0]["result"],
        "done: the working structure has 8 sites"
    );
    assert_eq!(turns[2]["calls"][0]["name"], "write_cif");
    assert!(row(0).response.as_deref().unwrap().contains("\n  K  "));
    // Every request offered the five tools.
    let offers = seen.lock().unwrap().clone();
    assert_eq!(offers.len(), 6, "three turns per task");
    assert!(offers
        .iter()
        .all(|t| t.contains("apply_action") && t.contains("write_cif")));
}
