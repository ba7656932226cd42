//! The server as an attacker or a careless operator would try it, through the real binary:
//! a provider that echoes the key, spend caps under concurrency, and the limits that keep
//! one request from taking the server down.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use common::{bin, Server};

const KEY: &str = "sk-live-ECHOED-0123456789abcdefXYZ";

/// A provider that puts the Authorization header it got into everything it says: error
/// bodies (the key straddling the 300th character), stream error events and answer text.
async fn echoing_provider() -> String {
    async fn answer(
        State(n): State<Arc<AtomicUsize>>,
        headers: HeaderMap,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> Response {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
        let k = n.fetch_add(1, Ordering::SeqCst);
        if prompt.contains("stream-error") {
            let event = serde_json::json!({"error": {"message": format!("bad key {auth}")}});
            return sse(vec![format!("data: {event}\n\n")]);
        }
        if prompt.contains("stream-echo") {
            // The key split across three events, inside an otherwise good answer.
            let (a, rest) = auth.split_at(12);
            let (b, c) = rest.split_at(9);
            let mut events: Vec<String> = ["your key is ", a, b, c, " ok"]
                .iter()
                .map(|p| {
                    let chunk = serde_json::json!({"choices": [{"delta": {"content": p}}]});
                    format!("data: {chunk}\n\n")
                })
                .collect();
            events.push("data: [DONE]\n\n".into());
            return sse(events);
        }
        // Server errors are retried (and logged) before the error reaches the caller.
        let message = format!("{}{auth} is not valid (attempt {k})", "x".repeat(290));
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(serde_json::json!({"error": {"message": message}})),
        )
            .into_response()
    }
    fn sse(events: Vec<String>) -> Response {
        let chunks = futures_util::stream::iter(
            events
                .into_iter()
                .map(Ok::<_, std::convert::Infallible>)
                .collect::<Vec<_>>(),
        );
        (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(chunks),
        )
            .into_response()
    }
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(Arc::new(AtomicUsize::new(0)));
    common::spawn_app(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_echoing_the_key_never_gets_it_shown_or_logged() {
    let base = echoing_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[models]]\nname = \"echo\"\nprovider = \"openai-compatible\"\nmodel = \"e\"\n\
             base_url = \"{base}\"\napi_key_env = \"AW_ECHO_KEY\"\n\n[limits]\nmax_retries = 2\n\
             backoff_base_ms = 10\nbackoff_max_ms = 20\n"
        ),
    )
    .unwrap();
    let server = Server::start(dir.path(), &["--config", cfg.to_str().unwrap()], |c| {
        c.env("AW_ECHO_KEY", KEY);
    })
    .await;
    let c = reqwest::Client::new();
    let mut shown = String::new();
    for (path, prompt) in [
        ("/api/complete", "plain"),
        ("/api/complete/stream", "plain"),
        ("/api/complete/stream", "stream-error"),
        ("/api/complete/stream", "stream-echo"),
    ] {
        let r = c
            .post(format!("{}{path}", server.base))
            .json(&serde_json::json!({"model": "echo", "prompt": prompt}))
            .send()
            .await
            .unwrap();
        shown.push_str(&r.text().await.unwrap());
    }
    let log = server.stop();
    // The requests went through every path: retried errors, stream errors, echoed text.
    assert!(log.contains("retrying"), "{log}");
    assert!(shown.contains("event: error"), "{shown}");
    assert!(shown.contains("your key is "), "{shown}");
    for (what, text) in [("responses", &shown), ("log", &log)] {
        // Not whole, not in part: no 10-character piece of the key anywhere.
        for i in 0..KEY.len() - 10 {
            assert!(
                !text.contains(&KEY[i..i + 10]),
                "{what} hold part of the key: {}",
                &KEY[i..i + 10]
            );
        }
        assert!(text.contains("[redacted]"), "{what}: {text}");
    }
}

/// A provider whose every answer costs 1,000 input and 500 output tokens, after a short
/// wait so that calls overlap.
async fn priced_provider() -> (Arc<AtomicUsize>, String) {
    async fn answer(State(n): State<Arc<AtomicUsize>>) -> axum::Json<serde_json::Value> {
        n.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(40)).await;
        axum::Json(serde_json::json!({
            "choices": [{"message": {"content": "no tags"}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500}
        }))
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(hits.clone());
    (hits, common::spawn_app(app).await)
}

/// `atomworld run` at concurrency 32 under `limits`; the summary's cost.
fn capped_run(dir: &std::path::Path, base: &str, limits: &str) -> f64 {
    let cfg = dir.join("config.toml");
    // $1/M input, $10/M output: a call costs $0.006; max_tokens 600 bounds its worst case
    // by prompt bytes × $1/M + $0.006.
    std::fs::write(
        &cfg,
        format!(
            "[[models]]\nname = \"paid\"\nprovider = \"openai-compatible\"\nmodel = \"p\"\n\
             base_url = \"{base}\"\nmax_tokens = 600\nprice_input_per_mtok = 1.0\n\
             price_output_per_mtok = 10.0\n\n[limits]\nmax_concurrency_per_provider = 32\n{limits}"
        ),
    )
    .unwrap();
    let out = dir.join("summary.json");
    let run = bin()
        .args([
            "run",
            "--model",
            "paid",
            "--per-action",
            "10",
            "--seed",
            "3",
        ])
        .args(["--concurrency", "32", "--no-cache", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(&cfg)
        .arg("--summary-json")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("spend cap"), "{stderr}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    s["cost_usd"].as_f64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spend_caps_hold_at_concurrency_32() {
    // A bound on one call's worst case: every prompt of the set is below 16 KB.
    let worst = 16_384.0 * 1e-6 + 64e-6 + 600.0 * 10e-6;
    let (_, base) = priced_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let spent = capped_run(dir.path(), &base, "run_spend_usd = 0.10\n");
    assert!(
        spent >= 0.10 - 0.006 && spent <= 0.10 + worst,
        "run cap: ${spent}"
    );

    let dir = tempfile::tempdir().unwrap();
    let spent = capped_run(dir.path(), &base, "daily_spend_usd = 0.05\n");
    assert!(
        spent >= 0.05 - 0.006 && spent <= 0.05 + worst,
        "daily cap: ${spent}"
    );
}
