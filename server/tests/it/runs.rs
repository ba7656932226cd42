//! Benchmark runs through the `atomworld run` CLI: baselines bound the table, a killed run
//! resumes with nothing lost or repeated, and a cached repeat is free and identical.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::routing::post;
use axum::Router;

use crate::common;

use common::bin;

fn summary(dir: &std::path::Path, model: &str, extra: &[&str]) -> serde_json::Value {
    let out = dir.join(format!("{model}.json"));
    let run = bin()
        .args([
            "run",
            "--model",
            model,
            "--per-action",
            "3",
            "--seed",
            "8",
            "--data-dir",
        ])
        .arg(dir.join("data"))
        .arg("--summary-json")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

#[test]
fn baselines_bound_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let r = summary(dir.path(), "reference", &[]);
    assert_eq!(r["overall"]["n"], 30);
    assert_eq!(r["overall"]["success_rate"], 1.0);
    let c = summary(dir.path(), "copy-input", &[]);
    assert_eq!(c["overall"]["success_rate"], 0.0);
    for (action, label) in [
        ("remove", "AtomCountMismatch"),
        ("add", "AtomCountMismatch"),
        ("super_cell", "AtomCountMismatch"),
        ("move", "StructureMismatch"),
        ("swap", "StructureMismatch"),
        ("rotate_around", "StructureMismatch"),
    ] {
        assert_eq!(
            c["per_group"][action]["errors"][label], 3,
            "{action}: {}",
            c["per_group"][action]
        );
    }
}

/// A slow OpenAI-compatible fake whose every answer differs (a counter), so that identical
/// results can only come from the cache.
async fn fake_provider(delay: Duration) -> (Arc<AtomicUsize>, String) {
    async fn answer(
        State((n, delay)): State<(Arc<AtomicUsize>, Duration)>,
    ) -> axum::Json<serde_json::Value> {
        let k = n.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(delay).await;
        axum::Json(serde_json::json!({
            "choices": [{"message": {"content": format!("answer number {k}, no tags")}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10}
        }))
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state((hits.clone(), delay));
    (hits, common::spawn_app(app).await)
}

fn config(dir: &std::path::Path, base: &str) -> std::path::PathBuf {
    common::fake_model_config(dir, base, common::PRICED)
}

fn run_args(dir: &std::path::Path, cfg: &std::path::Path) -> Command {
    let mut c = bin();
    c.args([
        "run",
        "--model",
        "fake",
        "--per-action",
        "3",
        "--seed",
        "5",
        "--concurrency",
        "2",
    ])
    .arg("--data-dir")
    .arg(dir.join("data"))
    .arg("--config")
    .arg(cfg);
    c
}

fn stored(dir: &std::path::Path) -> Vec<(String, i64, String)> {
    let conn = rusqlite::Connection::open(dir.join("data/atomworld.sqlite3")).unwrap();
    let mut st = conn
        .prepare("SELECT task_id, sample, response FROM results ORDER BY run_id, task_id, sample")
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_run_resumes_without_loss_or_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let (hits, base) = fake_provider(Duration::from_millis(150)).await;
    let cfg = config(dir.path(), &base);
    let mut child = run_args(dir.path(), &cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until some, but not all, results are stored, then SIGKILL.
    let t0 = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = if dir.path().join("data/atomworld.sqlite3").exists() {
            stored(dir.path()).len()
        } else {
            0
        };
        if n >= 6 || t0.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = stored(dir.path());
    assert!(
        !before.is_empty() && before.len() < 30,
        "{} stored before the kill",
        before.len()
    );
    let calls_before = hits.load(Ordering::SeqCst);

    let out = run_args(dir.path(), &cfg).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("resuming"));
    let after = stored(dir.path());
    assert_eq!(after.len(), 30, "every task stored exactly once");
    for row in &before {
        assert!(after.contains(row), "{row:?} changed after resume");
    }
    // Only unfinished tasks were asked again: at most the two that were in flight repeat.
    let calls = hits.load(Ordering::SeqCst);
    assert!(
        calls <= 30 + 2,
        "{calls} provider calls for 30 tasks ({calls_before} before the kill)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_repeat_is_free_and_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (hits, base) = fake_provider(Duration::from_millis(1)).await;
    let cfg = config(dir.path(), &base);
    let first = run_args(dir.path(), &cfg)
        .arg("--summary-json")
        .arg(dir.path().join("a.json"))
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let calls = hits.load(Ordering::SeqCst);
    assert_eq!(calls, 30);
    let second = run_args(dir.path(), &cfg)
        .arg("--summary-json")
        .arg(dir.path().join("b.json"))
        .output()
        .unwrap();
    assert!(second.status.success());
    assert_eq!(
        hits.load(Ordering::SeqCst),
        30,
        "the repeat made no provider call"
    );
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a.json")).unwrap()).unwrap();
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("b.json")).unwrap()).unwrap();
    assert_eq!(a["per_group"], b["per_group"]);
    assert_eq!(b["cost_usd"], 0.0);
    assert!(a["cost_usd"].as_f64().unwrap() > 0.0);
    // Both runs stored the same responses, task by task.
    let rows = stored(dir.path());
    let (r1, r2) = rows.split_at(30);
    let strip = |r: &[(String, i64, String)]| {
        let mut v: Vec<_> = r.iter().map(|x| (x.0.clone(), x.1, x.2.clone())).collect();
        v.sort();
        v
    };
    assert_eq!(strip(r1), strip(r2));
}

#[test]
fn imported_tasks_run_and_unusable_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    let gen = bin()
        .args(["gen", "--seed", "5", "--per-action", "1", "-o"])
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    // One triple without a target (computed from the prompt); two whose prompt is nonsense,
    // one with its target (scored by the matcher under "unparsed"), one without (cannot run).
    let first: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&tasks)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let mut extra = String::new();
    for (id, prompt, target) in [
        (
            "no-target",
            "Remove the atom at index 0 from the cif file.",
            serde_json::Value::Null,
        ),
        (
            "nonsense-with-target",
            "Paint the atoms red.",
            first["target_cif"].clone(),
        ),
        ("nonsense", "Paint the atoms blue.", serde_json::Value::Null),
    ] {
        let line = serde_json::json!({"id": id, "input_cif": first["input_cif"], "action_prompt": prompt, "target_cif": target});
        extra.push_str(&format!("{line}\n"));
    }
    let mut text = std::fs::read_to_string(&tasks).unwrap();
    text.push_str(&extra);
    std::fs::write(&tasks, text).unwrap();

    let out = dir.path().join("summary.json");
    let run = bin()
        .args(["run", "--model", "reference", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--tasks")
        .arg(&tasks)
        .arg("--summary-json")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "1 of 13 tasks read cannot run and are left out (the run's summary counts them); \
             first: tasks.jsonl item 13: not recognised as an AtomWorld action"
        ),
        "{stderr}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    // Counted, with its place and reason kept in the run's spec.
    let counts = &s["counts"];
    assert_eq!(
        (counts["read"].as_u64(), counts["skipped"].as_u64()),
        (Some(13), Some(1))
    );
    assert_eq!(
        (counts["in_run"].as_u64(), counts["scored"].as_u64()),
        (Some(12), Some(12))
    );
    assert_eq!(s["overall"]["n"], 12);
    assert_eq!(s["overall"]["success_rate"], 1.0);
    assert_eq!(s["per_group"]["unparsed"]["n"], 1);
    assert_eq!(
        s["per_group"]["remove"]["n"], 2,
        "the generated remove task and the imported one"
    );
}

/// A provider that answers every request with broken JSON.
async fn broken_provider() -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(|| async { ([("content-type", "application/json")], "{\"choices\": [") }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_provider_answers_are_recorded_errors_not_a_crashed_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = broken_provider().await;
    let cfg = config(dir.path(), &base);
    let out = tokio::task::spawn_blocking({
        let (d, c) = (dir.path().to_path_buf(), cfg.clone());
        move || run_args(&d, &c).output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The run goes through every task and ends; each task holds its error, none a verdict.
    assert!(out.status.success(), "{stderr}");
    let conn = rusqlite::Connection::open(dir.path().join("data/atomworld.sqlite3")).unwrap();
    let (rows, errors, verdicts): (i64, i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), COUNT(error), COUNT(verdict) FROM results",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((rows, errors, verdicts), (30, 30, 0));
    let error: String = conn
        .query_row("SELECT error FROM results LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert!(error.contains("malformed provider answer"), "{error}");
    let status: String = conn
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        status, "incomplete",
        "a later run of the same command retries them"
    );
}
