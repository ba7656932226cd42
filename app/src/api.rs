//! Calls to the AtomWorld server's JSON API.

use serde::Deserialize;

/// The server's `GET /api/health` answer (the fields the page shows).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Health {
    /// `"ok"` when healthy.
    pub status: String,
    /// Server version.
    pub version: String,
    /// Git commit of the server build.
    pub commit: String,
}

/// Ask the server how it is. An error means no server (static hosting) or a broken one.
pub async fn health() -> Result<Health, String> {
    let res = gloo_net::http::Request::get("/api/health")
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(format!("server answered HTTP {}", res.status()));
    }
    res.json::<Health>()
        .await
        .map_err(|e| format!("unexpected health answer: {e}"))
}

/// A model the server offers.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ModelInfo {
    /// Its name.
    pub name: String,
    /// Built-in baseline (answers whole tasks, not prompts).
    pub baseline: bool,
}

#[derive(Deserialize)]
struct ModelList {
    models: Vec<ModelInfo>,
}

/// The models the server offers (empty without a server).
pub async fn models() -> Result<Vec<ModelInfo>, String> {
    let res = gloo_net::http::Request::get("/api/models")
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(format!("server answered HTTP {}", res.status()));
    }
    res.json::<ModelList>()
        .await
        .map(|l| l.models)
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// A completion as the server reports it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Completion {
    /// The answer.
    pub text: String,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
    /// Served from the server's cache.
    pub cached: bool,
}

/// Ask `model` to answer `prompt` through the server.
pub async fn complete(model: &str, prompt: &str) -> Result<Completion, String> {
    let body = serde_json::json!({ "model": model, "prompt": prompt });
    let req = gloo_net::http::Request::post("/api/complete")
        .json(&body)
        .map_err(|e| e.to_string())?;
    let res = req
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        let v: serde_json::Value = res.json().await.unwrap_or_default();
        let msg = v["error"]["message"]
            .as_str()
            .unwrap_or("request failed")
            .to_string();
        return Err(format!("HTTP {}: {msg}", res.status()));
    }
    res.json::<Completion>()
        .await
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// Start a run on the server; returns its id.
pub async fn start_run(
    model: &str,
    per_action: usize,
    seed: u64,
    concurrency: usize,
) -> Result<String, String> {
    let body = serde_json::json!({ "model": model, "per_action": per_action, "seed": seed, "concurrency": concurrency });
    let res = gloo_net::http::Request::post("/api/runs")
        .json(&body)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    let v: serde_json::Value = res.json().await.map_err(|e| e.to_string())?;
    v["run_id"].as_str().map(str::to_string).ok_or_else(|| {
        v["error"]["message"]
            .as_str()
            .unwrap_or("the run did not start")
            .to_string()
    })
}

/// GET a JSON document from the server.
pub async fn get_json(url: &str) -> Result<serde_json::Value, String> {
    let res = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(format!("server answered HTTP {}", res.status()));
    }
    res.json().await.map_err(|e| e.to_string())
}
