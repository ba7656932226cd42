//! The JSON API: models, completions, runs, results export and share-link cases.
//!
//! Errors have one shape: `{"error": {"code": "...", "message": "..."}}` with a fitting HTTP
//! status. The browser can only name configured models, never an upstream URL.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bench::atomworld::generator::TaskSetSpec;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::AppState;
use crate::cpu::CpuPool;
use crate::llm::{LlmError, Message, StreamEvent};
use crate::runs::{self, Answerer, Progress, RunSpec};
use crate::storage::CaseStored;

/// Largest share-link case body (bytes).
pub const MAX_CASE_BYTES: usize = 256 * 1024;
/// Largest run the API starts (task samples), to keep a public demo bounded.
pub const MAX_RUN_TASKS: usize = 5_000;

/// An API error with its HTTP status.
pub struct ApiError(StatusCode, &'static str, String);

impl ApiError {
    fn bad(message: impl Into<String>) -> Self {
        ApiError(StatusCode::BAD_REQUEST, "bad_request", message.into())
    }
    fn not_found(message: impl Into<String>) -> Self {
        ApiError(StatusCode::NOT_FOUND, "not_found", message.into())
    }
    fn conflict(message: impl Into<String>) -> Self {
        ApiError(StatusCode::CONFLICT, "conflict", message.into())
    }
    fn internal(message: impl Into<String>) -> Self {
        let m = message.into();
        tracing::error!("internal error: {m}");
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error (see the server log)".into(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.0,
            Json(json!({"error": {"code": self.1, "message": self.2}})),
        )
            .into_response()
    }
}

impl From<LlmError> for ApiError {
    fn from(e: LlmError) -> Self {
        let (status, code) = match &e {
            LlmError::UnknownModel(_) => (StatusCode::NOT_FOUND, "unknown_model"),
            LlmError::MissingKey(_) => (StatusCode::SERVICE_UNAVAILABLE, "missing_key"),
            LlmError::SpendCap(_) => (StatusCode::PAYMENT_REQUIRED, "spend_cap"),
            LlmError::NotCached => (StatusCode::NOT_FOUND, "not_cached"),
            LlmError::Timeout(_) => (StatusCode::GATEWAY_TIMEOUT, "provider_timeout"),
            _ => (StatusCode::BAD_GATEWAY, "provider_error"),
        };
        ApiError(status, code, e.to_string())
    }
}

/// Live progress of runs executing in this process.
pub type LiveRuns = Arc<Mutex<HashMap<String, Progress>>>;

/// Cancel flags of the runs executing in this process, by run id.
pub type ActiveRuns = Arc<Mutex<HashMap<String, Arc<AtomicBool>>>>;

/// Checks the passcode (when one is configured) for model and run endpoints.
pub fn authorise(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(expected) = &state.passcode else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .or_else(|| {
            headers
                .get("x-atomworld-passcode")
                .and_then(|v| v.to_str().ok())
        });
    // Compare all bytes so timing does not reveal a prefix.
    let ok = given.is_some_and(|g| {
        g.len() == expected.len()
            && g.bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if ok {
        Ok(())
    } else {
        Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "passcode_required",
            "this server needs a passcode for model and run endpoints".into(),
        ))
    }
}

/// `GET /api/models`: configured models and the baselines (names and providers only).
pub async fn models(State(state): State<AppState>) -> Json<serde_json::Value> {
    let mut list: Vec<serde_json::Value> = state
        .gateway
        .config()
        .models
        .iter()
        .map(|m| json!({"name": m.name, "provider": m.provider, "baseline": false}))
        .collect();
    for b in [Answerer::REFERENCE, Answerer::COPY_INPUT] {
        list.push(json!({"name": b, "provider": "baseline", "baseline": true}));
    }
    Json(json!({ "models": list }))
}

/// Body of `POST /api/complete`.
#[derive(Deserialize)]
pub struct CompleteBody {
    model: String,
    prompt: String,
    #[serde(default)]
    sample: u32,
}

/// `POST /api/complete`: one model call (through cache, retries and caps).
pub async fn complete(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<CompleteBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    authorise(&state, &headers)?;
    if Answerer::is_baseline_name(&body.model) {
        return Err(ApiError::bad("baselines answer whole tasks; use a run"));
    }
    let c = state
        .gateway
        .complete(&body.model, &[Message::user(body.prompt)], body.sample)
        .await?;
    Ok(Json(json!(c)))
}

/// Aborts a spawned task when the response that needs it is dropped (the client left).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `POST /api/complete/stream`: one model call whose answer arrives as server-sent events:
/// `delta` (`{"text"}`: the next piece), `restart` (`{"attempt"}`: a broken stream is being
/// retried, forget the pieces so far), then `done` (the completion, as `/api/complete`
/// returns it) or `error` (`{"error": {"code", "message"}}`). Closing the connection
/// cancels the provider call.
pub async fn complete_stream(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<CompleteBody>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError>
{
    authorise(&state, &headers)?;
    if Answerer::is_baseline_name(&body.model) {
        return Err(ApiError::bad("baselines answer whole tasks; use a run"));
    }
    if state.gateway.config().model(&body.model).is_none() {
        return Err(LlmError::UnknownModel(body.model).into());
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let gateway = state.gateway.clone();
    let task = tokio::spawn(async move {
        let messages = [Message::user(body.prompt)];
        let on = |e: StreamEvent<'_>| {
            let event = match e {
                StreamEvent::Delta(text) => Event::default()
                    .event("delta")
                    .data(json!({ "text": text }).to_string()),
                StreamEvent::Restart { attempt } => Event::default()
                    .event("restart")
                    .data(json!({ "attempt": attempt }).to_string()),
            };
            let _ = tx.send(event);
        };
        let result = gateway
            .complete_stream(&body.model, &messages, body.sample, on)
            .await;
        let last = match result {
            Ok(c) => Event::default().event("done").data(json!(c).to_string()),
            Err(e) => {
                let ApiError(_, code, message) = e.into();
                Event::default()
                    .event("error")
                    .data(json!({"error": {"code": code, "message": message}}).to_string())
            }
        };
        let _ = tx.send(last);
    });
    let stream =
        futures_util::stream::unfold((rx, AbortOnDrop(task)), |(mut rx, guard)| async move {
            rx.recv().await.map(|e| (Ok(e), (rx, guard)))
        });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Body of `POST /api/runs`.
#[derive(Deserialize)]
pub struct RunBody {
    model: String,
    #[serde(default = "default_per_action")]
    per_action: usize,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default = "default_concurrency")]
    concurrency: usize,
    #[serde(default = "default_samples")]
    samples: u32,
    /// Imported tasks to run instead of a seeded set (`per_action` and `seed` then unused).
    #[serde(default)]
    tasks: Option<Vec<runs::TaskTriple>>,
}

fn default_per_action() -> usize {
    25
}
fn default_seed() -> u64 {
    2026
}
fn default_concurrency() -> usize {
    4
}
fn default_samples() -> u32 {
    1
}

/// `POST /api/runs`: create a run and start it in the background.
pub async fn start_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<RunBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    authorise(&state, &headers)?;
    let source = match body.tasks {
        None => runs::TaskSource::Generated(TaskSetSpec::per_action(body.seed, body.per_action)),
        Some(list) => {
            if list.len() > MAX_RUN_TASKS {
                return Err(ApiError::bad(format!(
                    "a run must have 1 to {MAX_RUN_TASKS} task samples"
                )));
            }
            // Every imported task must be runnable: a bad one is named, not silently dropped.
            // Parsing and applying actions is CPU work: off the async threads.
            let list = CpuPool::global()
                .run(move || {
                    for t in &list {
                        if let Err(e) = runs::RunTask::from_triple(t) {
                            return Err(format!("task {}: {e}", t.id));
                        }
                    }
                    Ok(list)
                })
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?
                .map_err(ApiError::bad)?;
            runs::TaskSource::Imported(runs::ImportedTasks {
                imported_from: "api".into(),
                tasks: list,
            })
        }
    };
    let per_sample = match &source {
        runs::TaskSource::Generated(_) => body.per_action.saturating_mul(10),
        runs::TaskSource::Imported(set) => set.tasks.len(),
    };
    let total = per_sample.saturating_mul(body.samples.max(1) as usize);
    if total == 0 || total > MAX_RUN_TASKS {
        return Err(ApiError::bad(format!(
            "a run must have 1 to {MAX_RUN_TASKS} task samples"
        )));
    }
    if let Answerer::Model(name) = Answerer::from_name(&body.model) {
        if state.gateway.config().model(&name).is_none() {
            return Err(LlmError::UnknownModel(name).into());
        }
    }
    let spec = RunSpec {
        suite: "atomworld".into(),
        tasks: source,
        model: body.model,
        samples: body.samples.max(1),
        concurrency: body.concurrency.clamp(1, 32),
    };
    let id =
        runs::create_run(&state.storage, &spec).map_err(|e| ApiError::internal(e.to_string()))?;
    spawn_run(&state, id.clone());
    Ok((StatusCode::CREATED, Json(json!({ "run_id": id }))))
}

/// Execute a run in the background, keeping its live progress; `false` when it is already
/// executing in this process.
pub fn spawn_run(state: &AppState, id: String) -> bool {
    let cancel = Arc::new(AtomicBool::new(false));
    match state.active.lock() {
        Ok(mut active) if !active.contains_key(&id) => {
            active.insert(id.clone(), cancel.clone());
        }
        _ => return false,
    }
    let (storage, gateway, live, active) = (
        state.storage.clone(),
        state.gateway.clone(),
        state.live.clone(),
        state.active.clone(),
    );
    tokio::spawn(async move {
        let l = live.clone();
        let key = id.clone();
        let result = runs::execute_until(
            &storage,
            &gateway,
            &id,
            move |p| {
                if let Ok(mut m) = l.lock() {
                    m.insert(key.clone(), p.clone());
                }
            },
            cancel,
        )
        .await;
        if let Err(e) = result {
            tracing::error!(run = id, "run failed: {e}");
        }
        if let Ok(mut a) = active.lock() {
            a.remove(&id);
        }
    });
    true
}

/// `POST /api/runs/{id}/cancel`: stop starting new tasks (those in flight finish and are
/// kept); the run's status becomes `cancelled` once they have.
pub async fn cancel_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    authorise(&state, &headers)?;
    let flag = state.active.lock().ok().and_then(|a| a.get(&id).cloned());
    match flag {
        Some(f) => {
            f.store(true, Ordering::SeqCst);
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({ "run_id": id, "status": "cancelling" })),
            ))
        }
        None => Err(run_not_active(&state, &id)?),
    }
}

/// `POST /api/runs/{id}/resume`: execute an unfinished run again from where it stopped.
pub async fn resume_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    authorise(&state, &headers)?;
    let (_, status) = runs::load_run(&state.storage, &id)
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    if status == "finished" {
        return Err(ApiError::conflict(format!(
            "run {id} has finished; nothing to resume"
        )));
    }
    if !spawn_run(&state, id.clone()) {
        return Err(ApiError::conflict(format!("run {id} is already running")));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "run_id": id, "status": "running" })),
    ))
}

/// The error for cancelling a run that is not executing: unknown, or not running.
fn run_not_active(state: &AppState, id: &str) -> Result<ApiError, ApiError> {
    let found =
        runs::load_run(&state.storage, id).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(match found {
        None => ApiError::not_found(format!("no run {id}")),
        Some((_, status)) => {
            ApiError::conflict(format!("run {id} is not running (status {status})"))
        }
    })
}

/// `GET /api/runs`: all runs.
pub async fn list_runs(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let rows: Vec<(String, String, String)> = state
        .storage
        .with_conn(|c| {
            let mut st = c.prepare("SELECT id, spec, status FROM runs ORDER BY rowid DESC")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let runs: Vec<serde_json::Value> = rows
        .into_iter()
        .map(|(id, spec, status)| {
            let spec: serde_json::Value = serde_json::from_str(&spec).unwrap_or_default();
            json!({"id": id, "spec": spec, "status": status})
        })
        .collect();
    Ok(Json(json!({ "runs": runs })))
}

/// `GET /api/runs/{id}`: spec, status, live progress and the summary so far.
pub async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let (spec, status) = runs::load_run(&state.storage, &id)
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    let rows =
        runs::store_results(&state.storage, &id).map_err(|e| ApiError::internal(e.to_string()))?;
    let summary = runs::summarise(&id, &spec.model, &rows);
    let progress = state.live.lock().ok().and_then(|m| m.get(&id).cloned());
    Ok(Json(json!({
        "id": id,
        "spec": spec,
        "status": status,
        "progress": progress.as_ref().map(progress_json),
        "summary": summary,
    })))
}

/// A run's live progress as the API shows it (in `GET /api/runs/{id}` and the events).
fn progress_json(p: &Progress) -> serde_json::Value {
    json!({
        "done": p.done,
        "total": p.total,
        "successes": p.successes,
        "tokens": p.tokens,
        "cost_usd": p.cost_usd,
    })
}

/// How often the progress stream looks for news.
const EVENT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// `GET /api/runs/{id}/events`: the run's progress as server-sent events (`event: progress`,
/// data `{status, done, total, successes, tokens, cost_usd}`), one whenever it changes; the
/// stream ends after the event that reports a run no longer executing.
pub async fn run_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError>
{
    if runs::load_run(&state.storage, &id)
        .map_err(|e| ApiError::internal(e.to_string()))?
        .is_none()
    {
        return Err(ApiError::not_found(format!("no run {id}")));
    }
    // (state, id, last payload sent, finished)
    let stream = futures_util::stream::unfold(
        (state, id, String::new(), false),
        |(state, id, last, ended)| async move {
            if ended {
                return None;
            }
            loop {
                let status = runs::load_run(&state.storage, &id)
                    .ok()
                    .flatten()
                    .map_or_else(|| "unknown".to_string(), |(_, s)| s);
                let executing = state
                    .active
                    .lock()
                    .map(|a| a.contains_key(&id))
                    .unwrap_or(false);
                let p = state.live.lock().ok().and_then(|m| m.get(&id).cloned());
                let mut payload = p.as_ref().map_or_else(|| json!({}), progress_json);
                payload["status"] = json!(status);
                let payload = payload.to_string();
                let over = !executing && status != "running" && status != "created";
                if payload != last || over {
                    let event = Event::default().event("progress").data(payload.clone());
                    return Some((Ok(event), (state, id, payload, over)));
                }
                tokio::time::sleep(EVENT_INTERVAL).await;
            }
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Query of the results export.
#[derive(Deserialize)]
pub struct ExportQuery {
    #[serde(default)]
    format: Option<String>,
}

/// One CSV cell: quoted when needed, and a text that a spreadsheet would take for a formula
/// (leading `=`, `+`, `-`, `@`, tab or carriage return) prefixed with `'` so it stays text.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// `GET /api/runs/{id}/results?format=json|jsonl|csv|table` (`table`: the per-action summary
/// in the paper's layout, as plain text).
pub async fn run_results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let (spec, _) = runs::load_run(&state.storage, &id)
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    let rows =
        runs::store_results(&state.storage, &id).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(match q.format.as_deref().unwrap_or("json") {
        "json" => Json(json!({ "results": rows })).into_response(),
        "jsonl" => {
            let body: String = rows
                .iter()
                .filter_map(|r| serde_json::to_string(r).ok())
                .map(|l| l + "\n")
                .collect();
            ([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response()
        }
        "csv" => {
            let mut body = String::from("task_id,sample,action,label,rms,max_dist,max_dist_angstrom,error,input_tokens,output_tokens,cost_usd,latency_ms,cached\n");
            for r in &rows {
                let v = r.verdict.as_ref();
                let num = |k: &str| {
                    v.and_then(|v| v[k].as_f64())
                        .map_or(String::new(), |x| x.to_string())
                };
                body.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                    csv_field(&r.task_id),
                    r.sample,
                    csv_field(&r.action),
                    csv_field(r.label.as_deref().unwrap_or("")),
                    num("rms"),
                    num("max_dist"),
                    num("max_dist_angstrom"),
                    csv_field(r.error.as_deref().unwrap_or("")),
                    r.input_tokens,
                    r.output_tokens,
                    r.cost_usd,
                    r.latency_ms,
                    r.cached
                ));
            }
            ([(header::CONTENT_TYPE, "text/csv")], body).into_response()
        }
        "table" => {
            let table = runs::summarise(&id, &spec.model, &rows).table();
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], table).into_response()
        }
        other => {
            return Err(ApiError::bad(format!(
                "unknown format '{other}' (json, jsonl, csv, table)"
            )))
        }
    })
}

/// `POST /api/cases`: store a case (any JSON ≤ 256 KiB) under its content hash, within the
/// client's and the store's quotas (and behind the passcode, when one is set).
pub async fn put_case(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    authorise(&state, &headers)?;
    if body.len() > MAX_CASE_BYTES {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("a case may have at most {MAX_CASE_BYTES} bytes"),
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| ApiError::bad(format!("not JSON: {e}")))?;
    let text = value.to_string();
    let id = hex::encode(Sha256::digest(text.as_bytes()))[..12].to_string();
    // The client's address, hashed: quotas need only tell clients apart.
    let who = client.map_or_else(|| "unknown".to_string(), |c| c.0 .0.ip().to_string());
    let who = hex::encode(Sha256::digest(
        format!("atomworld-case-client:{who}").as_bytes(),
    ));
    let quota = &state.gateway.config().cases;
    let stored = state
        .storage
        .put_case(&id, &text, &who[..16], quota)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    match stored {
        CaseStored::Stored => Ok((
            StatusCode::CREATED,
            Json(json!({"id": id, "url": format!("/c/{id}")})),
        )),
        CaseStored::ClientQuota(what) => Err(ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            "case_quota",
            format!("this address has used its share-link quota ({what})"),
        )),
        CaseStored::StoreFull(what) => Err(ApiError(
            StatusCode::INSUFFICIENT_STORAGE,
            "case_store_full",
            format!("the share-link store is full ({what}); ask the operator"),
        )),
    }
}

/// `GET /api/cases/{id}`.
pub async fn get_case(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let ttl = state.gateway.config().cases.ttl_days;
    let body = state
        .storage
        .get_case(&id, ttl)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let body = body.ok_or_else(|| ApiError::not_found(format!("no case {id}")))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `GET /api/openapi.json`: the API description.
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        include_str!("openapi.json"),
    )
        .into_response()
}
