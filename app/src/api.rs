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

/// What a streamed model call reports while it runs.
pub enum StreamNews {
    /// The answer so far grew by this piece.
    Piece(String),
    /// The server retries a broken stream from the start: the text so far is void.
    Restart(u32),
}

/// Ask `model` to answer `prompt`, hearing the answer piece by piece through `on`
/// (`POST /api/complete/stream`). Aborting `signal` stops the call (the server then
/// cancels the provider request).
pub async fn complete_stream(
    model: &str,
    prompt: &str,
    signal: &web_sys::AbortSignal,
    mut on: impl FnMut(StreamNews),
) -> Result<Completion, String> {
    use eventsource_stream::Eventsource;
    use futures_util::StreamExt;
    use wasm_bindgen::JsCast;

    let body = serde_json::json!({ "model": model, "prompt": prompt });
    let res = gloo_net::http::Request::post("/api/complete/stream")
        .abort_signal(Some(signal))
        .json(&body)
        .map_err(|e| e.to_string())?
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
    let raw = res.body().ok_or("the server sent no answer body")?;
    let chunks = wasm_streams::ReadableStream::from_raw(raw)
        .into_stream()
        .map(|chunk| match chunk {
            Ok(v) => v
                .dyn_into::<js_sys::Uint8Array>()
                .map(|a| a.to_vec())
                .map_err(|_| "the answer stream sent something other than bytes".to_string()),
            Err(_) => Err("the answer stream was interrupted".to_string()),
        });
    let mut events = chunks.eventsource();
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| e.to_string())?;
        let data: serde_json::Value = serde_json::from_str(&event.data)
            .map_err(|e| format!("unexpected stream event: {e}"))?;
        match event.event.as_str() {
            "delta" => on(StreamNews::Piece(
                data["text"].as_str().unwrap_or_default().to_string(),
            )),
            "restart" => on(StreamNews::Restart(
                data["attempt"].as_u64().unwrap_or(0) as u32
            )),
            "done" => {
                return serde_json::from_value(data).map_err(|e| format!("unexpected answer: {e}"))
            }
            "error" => {
                return Err(data["error"]["message"]
                    .as_str()
                    .unwrap_or("the model call failed")
                    .to_string())
            }
            _ => {}
        }
    }
    Err("the server closed the stream before the answer was complete".into())
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

/// Store `case` in the server's case store; returns its short id (`/c/<id>` opens it).
pub async fn put_case(case: &bench::case::Case) -> Result<String, String> {
    let res = gloo_net::http::Request::post("/api/cases")
        .json(case)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    let v: serde_json::Value = res.json().await.map_err(|e| e.to_string())?;
    v["id"].as_str().map(str::to_string).ok_or_else(|| {
        v["error"]["message"]
            .as_str()
            .unwrap_or("the server did not store the case")
            .to_string()
    })
}

/// The case stored under short id `id`.
pub async fn get_case(id: &str) -> Result<bench::case::Case, String> {
    let res = gloo_net::http::Request::get(&format!("/api/cases/{id}"))
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if res.status() == 404 {
        return Err(format!("no shared case '{id}' on this server"));
    }
    if !res.ok() {
        return Err(format!("server answered HTTP {}", res.status()));
    }
    let v: serde_json::Value = res.json().await.map_err(|e| e.to_string())?;
    bench::case::from_json(v).map_err(|e| format!("the stored case cannot be opened: {e}"))
}
