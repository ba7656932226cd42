//! Bounded load test of the non-LLM endpoints (127.0.0.1 only; stops by itself).
//!
//! Starts the real router on a loopback port with a temporary data dir, a finished
//! `reference` run and a stored case, then 100 concurrent clients request health, a static
//! file, the run's status and the case for 30 s (override: LOAD_SECONDS, LOAD_CLIENTS).
//! Prints requests, errors, and p50/p99 latency.
//!
//!     cargo run --release -p server --example load
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use server::http::{router, AppState};
use server::storage::Storage;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let seconds: u64 = std::env::var("LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let clients: usize = std::env::var("LOAD_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("index.html"),
        "<!doctype html><title>AtomWorld</title>",
    )?;
    std::fs::write(
        dir.path().join("app-0123456789abcdef.js"),
        "x".repeat(50_000),
    )?;
    let storage = Storage::open(&dir.path().join("data"))?;
    let state = AppState::new(storage)?;
    let app = router(state, dir.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // The binary's accept loop and connection limits, as `atomworld serve` runs them.
    let limits = server::http::listener::ConnectionLimits::default().within_descriptor_limit();
    tokio::spawn(server::http::listener::serve(
        listener,
        app,
        limits,
        std::future::pending(),
    ));
    let base = format!("http://{addr}");
    let c = reqwest::Client::new();
    let run: serde_json::Value = c
        .post(format!("{base}/api/runs"))
        .json(&serde_json::json!({"model": "reference", "per_action": 2}))
        .send()
        .await?
        .json()
        .await?;
    let run_id = run["run_id"].as_str().unwrap_or_default().to_string();
    let case: serde_json::Value = c
        .post(format!("{base}/api/cases"))
        .json(&serde_json::json!({"v": 1, "prompt": "p"}))
        .send()
        .await?
        .json()
        .await?;
    let case_id = case["id"].as_str().unwrap_or_default().to_string();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let urls = Arc::new(vec![
        format!("{base}/api/health"),
        format!("{base}/app-0123456789abcdef.js"),
        format!("{base}/api/runs/{run_id}"),
        format!("{base}/api/cases/{case_id}"),
    ]);
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(Mutex::new(0usize));
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for k in 0..clients {
        let (c, urls, latencies, errors) =
            (c.clone(), urls.clone(), latencies.clone(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = k;
            while Instant::now() < end {
                let url = &urls[i % urls.len()];
                i += 1;
                let t0 = Instant::now();
                let ok = match c.get(url).send().await {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                let dt = t0.elapsed();
                if ok {
                    latencies.lock().map(|mut l| l.push(dt)).ok();
                } else {
                    errors.lock().map(|mut e| *e += 1).ok();
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let mut l = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    l.sort();
    let pct = |p: f64| {
        l.get(((l.len() as f64 * p) as usize).min(l.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let errors = errors.lock().map(|e| *e).unwrap_or(0);
    println!(
        "{clients} clients, {seconds} s: {} requests ({:.0}/s), {errors} errors, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        l.len(),
        l.len() as f64 / seconds as f64,
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        l.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
    Ok(())
}
