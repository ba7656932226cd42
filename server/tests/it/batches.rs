//! Runs sent as provider batches (`atomworld run --batch`) against a local fake of OpenAI's
//! Batch API and Anthropic's Message Batches: the batch's id is stored before the run
//! waits, a run killed while it waits resumes by polling the same batch (no second batch,
//! no synchronous call), and its results are those of the same run asked synchronously, at
//! half the price.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::common;
use common::bin;

/// The fake's state: files, batches, and what was asked of it.
#[derive(Default)]
struct Fake {
    base: String,
    files: HashMap<String, String>,
    /// Batch id → its requests (custom id, body).
    batches: HashMap<String, Vec<(String, Value)>>,
    /// Whether batches have ended (the test decides when).
    released: bool,
    sync_calls: usize,
    /// Requests that came without the configured key.
    keyless: usize,
}

type Shared = Arc<Mutex<Fake>>;

const KEY: &str = "sk-fake-batch-key-0123456789";

/// The fake's answer to a request body: the same text for the same messages, whichever way
/// it is asked, and token counts that follow the prompt's length.
fn answer_of(body: &Value) -> (String, u64, u64) {
    let asked = body["messages"].to_string();
    let digest = asked
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    (
        format!("<cif>\ndata_fake_{}\n</cif>", digest % 997),
        asked.len() as u64 / 4,
        12,
    )
}

fn openai_completion(body: &Value) -> Value {
    let (text, input, output) = answer_of(body);
    json!({"choices": [{"message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": input, "completion_tokens": output}})
}

fn anthropic_message(body: &Value) -> Value {
    let (text, input, output) = answer_of(body);
    json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}],
           "usage": {"input_tokens": input, "output_tokens": output}})
}

fn keyed(fake: &Shared, headers: &HeaderMap) {
    let bearer = format!("Bearer {KEY}");
    let ok = headers
        .get("authorization")
        .is_some_and(|v| v == bearer.as_str())
        || headers.get("x-api-key").is_some_and(|v| v == KEY);
    if !ok {
        fake.lock().unwrap().keyless += 1;
    }
}

/// The `file` part of a multipart body (the fake reads only what our client sends).
fn file_part(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let start = text.find("name=\"file\"").expect("a file part");
    let content = &text[start..];
    let from = content.find("\r\n\r\n").unwrap() + 4;
    let to = content[from..].find("\r\n--").unwrap();
    content[from..from + to].to_string()
}

async fn fake_provider() -> (Shared, String) {
    let fake: Shared = Arc::default();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|State(f): State<Shared>, h: HeaderMap, Json(body): Json<Value>| async move {
                keyed(&f, &h);
                f.lock().unwrap().sync_calls += 1;
                Json(openai_completion(&body))
            }),
        )
        .route(
            "/v1/messages",
            post(|State(f): State<Shared>, h: HeaderMap, Json(body): Json<Value>| async move {
                keyed(&f, &h);
                f.lock().unwrap().sync_calls += 1;
                Json(anthropic_message(&body))
            }),
        )
        .route(
            "/v1/files",
            post(|State(f): State<Shared>, h: HeaderMap, body: Bytes| async move {
                keyed(&f, &h);
                let mut f = f.lock().unwrap();
                let id = format!("file-{}", f.files.len());
                f.files.insert(id.clone(), file_part(&body));
                Json(json!({"id": id, "object": "file", "purpose": "batch"}))
            }),
        )
        .route(
            "/v1/files/{id}/content",
            get(|State(f): State<Shared>, h: HeaderMap, Path(id): Path<String>| async move {
                keyed(&f, &h);
                f.lock().unwrap().files.get(&id).cloned().unwrap_or_default()
            }),
        )
        .route(
            "/v1/batches",
            post(|State(f): State<Shared>, h: HeaderMap, Json(req): Json<Value>| async move {
                keyed(&f, &h);
                let mut f = f.lock().unwrap();
                assert_eq!(req["endpoint"], "/v1/chat/completions");
                let file = f.files[req["input_file_id"].as_str().unwrap()].clone();
                let requests = file
                    .lines()
                    .map(|l| {
                        let v: Value = serde_json::from_str(l).unwrap();
                        assert_eq!(v["url"], "/v1/chat/completions");
                        (v["custom_id"].as_str().unwrap().to_string(), v["body"].clone())
                    })
                    .collect();
                let id = format!("batch_{}", f.batches.len());
                f.batches.insert(id.clone(), requests);
                Json(json!({"id": id, "status": "validating"}))
            }),
        )
        .route(
            "/v1/batches/{id}",
            get(|State(f): State<Shared>, h: HeaderMap, Path(id): Path<String>| async move {
                keyed(&f, &h);
                let mut f = f.lock().unwrap();
                if !f.released {
                    return Json(json!({"id": id, "status": "in_progress"}));
                }
                let out: String = f.batches[&id]
                    .iter()
                    .map(|(custom_id, body)| {
                        json!({"custom_id": custom_id,
                               "response": {"status_code": 200, "body": openai_completion(body)},
                               "error": null})
                        .to_string()
                            + "\n"
                    })
                    .collect();
                let file = format!("file-out-{id}");
                f.files.insert(file.clone(), out);
                Json(json!({"id": id, "status": "completed", "output_file_id": file}))
            }),
        )
        .route(
            "/v1/messages/batches",
            post(|State(f): State<Shared>, h: HeaderMap, Json(req): Json<Value>| async move {
                keyed(&f, &h);
                let mut f = f.lock().unwrap();
                let requests = req["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (r["custom_id"].as_str().unwrap().to_string(), r["params"].clone()))
                    .collect();
                let id = format!("msgbatch_{}", f.batches.len());
                f.batches.insert(id.clone(), requests);
                Json(json!({"id": id, "type": "message_batch", "processing_status": "in_progress"}))
            }),
        )
        .route(
            "/v1/messages/batches/{id}",
            get(|State(f): State<Shared>, h: HeaderMap, Path(id): Path<String>| async move {
                keyed(&f, &h);
                let f = f.lock().unwrap();
                let status = if f.released { "ended" } else { "in_progress" };
                Json(json!({"id": id, "processing_status": status,
                            "results_url": f.released.then(|| format!("{}/messages/batches/{id}/results", f.base))}))
            }),
        )
        .route(
            "/v1/messages/batches/{id}/results",
            get(|State(f): State<Shared>, h: HeaderMap, Path(id): Path<String>| async move {
                keyed(&f, &h);
                let f = f.lock().unwrap();
                f.batches[&id]
                    .iter()
                    .map(|(custom_id, params)| {
                        json!({"custom_id": custom_id,
                               "result": {"type": "succeeded", "message": anthropic_message(params)}})
                        .to_string()
                            + "\n"
                    })
                    .collect::<String>()
            }),
        )
        .with_state(fake.clone());
    let base = common::spawn_app(app).await;
    fake.lock().unwrap().base = base.clone();
    (fake, base)
}

/// A configuration whose model `fake` is `provider`'s, served at `base`, priced, polled
/// for batches every second.
fn config(dir: &std::path::Path, provider: &str, base: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{provider}.toml"));
    std::fs::write(
        &path,
        format!(
            "[[models]]\nname = \"fake\"\nprovider = \"{provider}\"\nmodel = \"f-1\"\n\
             base_url = \"{base}\"\napi_key_env = \"FAKE_BATCH_KEY\"\n{}\n\
             [limits]\nbatch_poll_secs = 1\nbatch_poll_max_secs = 1\n",
            common::PRICED
        ),
    )
    .unwrap();
    path
}

fn run(data: &std::path::Path, cfg: &std::path::Path, batch: bool) -> std::process::Command {
    let mut c = bin();
    c.args([
        "run",
        "--model",
        "fake",
        "--per-action",
        "2",
        "--seed",
        "11",
    ])
    .args(["--concurrency", "3", "--config"])
    .arg(cfg)
    .arg("--data-dir")
    .arg(data)
    .env("FAKE_BATCH_KEY", KEY);
    if batch {
        c.arg("--batch");
    }
    c
}

/// The stored results: (task, sample) → (response, label, cost).
fn results(data: &std::path::Path) -> HashMap<(String, i64), (String, String, f64)> {
    let db = rusqlite::Connection::open(data.join(server::storage::DB_FILE)).unwrap();
    let mut st = db
        .prepare("SELECT task_id, sample, response, label, cost_usd FROM results")
        .unwrap();
    st.query_map([], |r| {
        Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?, r.get(4)?)))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn open_batches(data: &std::path::Path) -> Vec<(String, String)> {
    let Ok(db) = rusqlite::Connection::open(data.join(server::storage::DB_FILE)) else {
        return Vec::new();
    };
    let Ok(mut st) = db.prepare("SELECT batch_id, status FROM run_batches") else {
        return Vec::new();
    };
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A batched run killed while it waits, resumed after the batch ended, gives the
/// synchronous run's results at half their cost, from one batch and no synchronous call.
async fn batch_survives_a_restart(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (fake, base) = fake_provider().await;
    let cfg = config(dir.path(), provider, &base);

    let sync_data = dir.path().join("sync");
    let out = run(&sync_data, &cfg, false).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sync = results(&sync_data);
    assert_eq!(sync.len(), 20, "ten actions, two tasks each");
    let sync_calls = fake.lock().unwrap().sync_calls;
    assert_eq!(sync_calls, 20);

    let data = dir.path().join("batched");
    let mut first = run(&data, &cfg, true)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while open_batches(&data).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no batch was stored"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Let it poll once or twice ("in_progress"), then kill it while it waits.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(open_batches(&data).len(), 1);
    assert_eq!(open_batches(&data)[0].1, "waiting");
    assert!(
        results(&data).is_empty(),
        "nothing answered before the batch ended"
    );

    fake.lock().unwrap().released = true;
    let out = run(&data, &cfg, true).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");

    let f = fake.lock().unwrap();
    assert_eq!(
        f.batches.len(),
        1,
        "the restarted run polled the stored batch"
    );
    assert_eq!(f.batches.values().next().unwrap().len(), 20);
    assert_eq!(
        f.sync_calls, sync_calls,
        "no synchronous call in a batched run"
    );
    assert_eq!(f.keyless, 0, "every request carried the key");
    drop(f);
    assert_eq!(open_batches(&data)[0].1, "collected");
    let batched = results(&data);
    assert_eq!(batched.len(), sync.len());
    for (key, (response, label, cost)) in &sync {
        let (b_response, b_label, b_cost) = &batched[key];
        assert_eq!((b_response, b_label), (response, label), "{key:?}");
        assert!(*cost > 0.0);
        assert!(
            (b_cost - cost / 2.0).abs() < 1e-12,
            "{key:?}: {b_cost} vs {cost}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_batch_survives_a_restart() {
    batch_survives_a_restart("openai").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_batch_survives_a_restart() {
    batch_survives_a_restart("anthropic").await;
}

#[test]
fn batches_are_refused_where_they_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let compatible = common::fake_model_config(dir.path(), "http://127.0.0.1:9/v1", "");
    let out = bin()
        .args([
            "run",
            "--model",
            "fake",
            "--per-action",
            "1",
            "--batch",
            "--config",
        ])
        .arg(&compatible)
        .arg("--data-dir")
        .arg(dir.path().join("d"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no batch API"), "{stderr}");
    let out = bin()
        .args([
            "run",
            "--model",
            "reference",
            "--per-action",
            "1",
            "--batch",
        ])
        .arg("--data-dir")
        .arg(dir.path().join("d"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("baseline"), "{stderr}");
}
