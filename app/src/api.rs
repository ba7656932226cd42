//! Calls to the AtomWorld server's JSON API.

use serde::de::DeserializeOwned;
use wire::{
    ApiError, CaseCreated, CompleteRequest, Completion, Health, ModelInfo, ModelList, RunCreated,
    RunRequest, StreamDelta, StreamRestart,
};

/// Why the server's health could not be read.
pub struct Unhealthy {
    /// What happened, in words.
    pub message: String,
    /// The server may still come: it did not answer, or it is being built
    /// (`scripts/serve-page.py` answers code `starting` meanwhile). Worth asking again.
    pub transient: bool,
}

/// Ask the server how it is. An error means no server (static hosting), one that is still
/// starting, or a broken one.
pub async fn health() -> Result<Health, Unhealthy> {
    let res = gloo_net::http::Request::get("/api/health")
        .send()
        .await
        .map_err(|e| Unhealthy {
            message: format!("server unreachable: {e}"),
            transient: true,
        })?;
    if !res.ok() {
        let status = res.status();
        return Err(match res.json::<ApiError>().await {
            Ok(e) => Unhealthy {
                transient: e.error.code == "starting",
                message: e.error.message,
            },
            Err(_) => Unhealthy {
                message: format!("server answered HTTP {status}"),
                transient: false,
            },
        });
    }
    res.json::<Health>().await.map_err(|e| Unhealthy {
        message: format!("unexpected health answer: {e}"),
        transient: false,
    })
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
        .map(|l: ModelList| l.models)
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// What a streamed model call reports while it runs.
pub enum StreamNews {
    /// The answer so far grew by this piece.
    Piece(String),
    /// The server retries a broken stream from the start: the text so far is void.
    Restart(u32),
}

/// Ask `model` to answer `prompt` (or, when `messages` is not empty, exactly those
/// messages), hearing the answer piece by piece through `on` (`POST /api/complete/stream`).
/// Aborting `signal` stops the call (the server then cancels the provider request).
pub async fn complete_stream(
    model: &str,
    prompt: &str,
    messages: &[benchmarks::task::Message],
    signal: &web_sys::AbortSignal,
    mut on: impl FnMut(StreamNews),
) -> Result<Completion, String> {
    use eventsource_stream::Eventsource;
    use futures_util::StreamExt;
    use wasm_bindgen::JsCast;

    let body = CompleteRequest {
        model: model.to_string(),
        prompt: prompt.to_string(),
        messages: messages.to_vec(),
        sample: 0,
    };
    let res = post("/api/complete/stream")
        .abort_signal(Some(signal))
        .json(&body)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        let status = res.status();
        return Err(format!("HTTP {status}: {}", error_message(res).await));
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
        let data = event.data.as_str();
        match event.event.as_str() {
            "delta" => on(StreamNews::Piece(decode::<StreamDelta>(data)?.text)),
            "restart" => on(StreamNews::Restart(decode::<StreamRestart>(data)?.attempt)),
            "done" => return decode::<Completion>(data),
            "error" => return Err(decode::<ApiError>(data)?.error.message),
            _ => {}
        }
    }
    Err("the server closed the stream before the answer was complete".into())
}

/// Start a run on the server; returns its id.
pub async fn start_run(
    suite: &str,
    model: &str,
    (per_group, seed, variant): (usize, u64, Option<String>),
    concurrency: usize,
) -> Result<String, String> {
    let body = RunRequest {
        model: model.to_string(),
        suite: suite.into(),
        per_group,
        seed,
        concurrency,
        samples: wire::defaults::SAMPLES,
        tasks: None,
        agent: None,
        variant,
        batch: false,
    };
    let created = send::<RunCreated>(post("/api/runs").json(&body)).await?;
    keep_run_token(&created.run_id, &created.run_token);
    Ok(created.run_id)
}

/// Where this browser keeps the token of a run it started.
fn run_token_key(id: &str) -> String {
    format!("atomworld-run-token:{id}")
}

/// Keep run `id`'s token (it alone resumes or cancels the run) in this browser.
fn keep_run_token(id: &str, token: &str) {
    if let Some(store) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = store.set_item(&run_token_key(id), token);
    }
}

/// The token of run `id`, if this browser started it.
fn run_token(id: &str) -> Option<String> {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(&run_token_key(id)).ok().flatten())
}

/// Send a request with a JSON body and read the JSON answer as its wire type (an API error
/// answer gives its message).
async fn send<T: DeserializeOwned>(
    request: Result<gloo_net::http::Request, gloo_net::Error>,
) -> Result<T, String> {
    let res = request
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(error_message(res).await);
    }
    res.json()
        .await
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// GET a JSON document of the server's API as its wire type.
pub async fn get<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    let res = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        let status = res.status();
        return Err(format!(
            "server answered HTTP {status}: {}",
            error_message(res).await
        ));
    }
    res.json()
        .await
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// The message of an API error answer.
async fn error_message(res: gloo_net::http::Response) -> String {
    match res.json::<ApiError>().await {
        Ok(e) => e.error.message,
        Err(_) => "request failed".into(),
    }
}

/// One server-sent event's data as its wire type.
fn decode<T: DeserializeOwned>(data: &str) -> Result<T, String> {
    serde_json::from_str(data).map_err(|e| format!("unexpected stream event: {e}"))
}

/// Store `case` (the playground's or a suite's) in the server's case store; returns its
/// short id (`/c/<id>` opens it).
pub async fn put_case<T: serde::Serialize>(case: &T) -> Result<String, String> {
    send::<CaseCreated>(post("/api/cases").json(case))
        .await
        .map(|c| c.id)
}

/// The case stored under short id `id`.
pub async fn get_case(id: &str) -> Result<wire::case::StoredCase, String> {
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
    wire::case::stored_from_json(v).map_err(|e| format!("the stored case cannot be opened: {e}"))
}

/// The suites the server knows and the tasks it holds for each.
pub async fn suites() -> Result<Vec<wire::SuiteInfo>, String> {
    get::<wire::SuiteList>("/api/suites")
        .await
        .map(|l| l.suites)
}

/// The tasks the server holds for suite `name`.
pub async fn suite_tasks(name: &str) -> Result<Vec<wire::SuiteTask>, String> {
    get::<wire::SuiteTasks>(&format!("/api/suites/{name}/tasks"))
        .await
        .map(|t| t.tasks)
}

/// Score one answer on the server (which may run its code in the sandbox). Aborting
/// `signal` drops the request, and the server stops the scoring it was doing for it.
pub async fn score(
    request: &wire::ScoreRequest,
    signal: &web_sys::AbortSignal,
) -> Result<wire::ScoreResult, String> {
    send(post("/api/score").abort_signal(Some(signal)).json(request)).await
}

/// A task of `suite` with its `k` nearest tasks among the server's as references
/// (AlchemyBench: recipes).
pub async fn suite_references(
    suite: &str,
    request: &wire::ReferencesRequest,
) -> Result<wire::SuiteTask, String> {
    let url = format!(
        "/api/suites/{}/references",
        String::from(js_sys::encode_uri_component(suite))
    );
    send(post(&url).json(request)).await
}

/// Set (or with `None`, remove) one of a person's scores; the scores and agreement after.
pub async fn put_human_score(
    run: &str,
    score: &wire::HumanScore,
) -> Result<wire::HumanScores, String> {
    send(put(&format!("/api/runs/{run}/human-scores")).json(score)).await
}

/// Open a workshop room (`passcode` when the server asks for one).
pub async fn create_room(
    request: &wire::RoomCreate,
    passcode: &str,
) -> Result<wire::RoomCreated, String> {
    let mut req = post("/api/rooms");
    if !passcode.trim().is_empty() {
        req = req.header("X-Atomworld-Passcode", passcode.trim());
    }
    send(req.json(request)).await
}

/// A room's name and expiry (`Ok(None)`: no open room with this code).
pub async fn room(code: &str) -> Result<Option<wire::RoomInfo>, String> {
    let res = gloo_net::http::Request::get(&format!("/api/rooms/{}", url_part(code)))
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if res.status() == 404 {
        return Ok(None);
    }
    if !res.ok() {
        return Err(error_message(res).await);
    }
    res.json()
        .await
        .map(Some)
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// Send an attempt to a room; the server's own verdict on it.
pub async fn send_attempt(
    code: &str,
    attempt: &wire::RoomAttempt,
) -> Result<wire::AttemptScored, String> {
    send(post(&format!("/api/rooms/{}/attempts", url_part(code))).json(attempt)).await
}

/// Resume run `id` (one that was cancelled, stopped, incomplete or interrupted).
pub async fn resume_run(id: &str) -> Result<wire::RunAction, String> {
    // Run ids are `run-` and hex digits: nothing else goes into the path.
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let mut req = post(&format!("/api/runs/{id}/resume"));
    if let Some(token) = run_token(&id) {
        req = req.header(wire::RUN_TOKEN_HEADER, &token);
    }
    send(req.json(&())).await
}

/// GET a host-only room document with the host token.
async fn get_hosted<T: DeserializeOwned>(url: &str, token: &str) -> Result<T, String> {
    let res = gloo_net::http::Request::get(url)
        .header("X-Room-Token", token)
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(error_message(res).await);
    }
    res.json()
        .await
        .map_err(|e| format!("unexpected answer: {e}"))
}

/// The host's live tally of a room; with `after` (the total shown), the server answers once
/// the room holds other than that many attempts, or after its wait.
pub async fn room_summary(
    code: &str,
    token: &str,
    after: Option<u64>,
) -> Result<wire::RoomSummary, String> {
    let wait = after.map(|n| format!("?after={n}")).unwrap_or_default();
    get_hosted(
        &format!("/api/rooms/{}/summary{wait}", url_part(code)),
        token,
    )
    .await
}

/// One attempt of a room in full (host only).
pub async fn room_attempt(code: &str, id: i64, token: &str) -> Result<wire::AttemptDetail, String> {
    get_hosted(
        &format!("/api/rooms/{}/attempts/{id}", url_part(code)),
        token,
    )
    .await
}

/// Close a room now: the server deletes it and its attempts.
pub async fn close_room(code: &str, token: &str) -> Result<(), String> {
    let res = gloo_net::http::Request::delete(&format!("/api/rooms/{}", url_part(code)))
        .header("X-Room-Token", token)
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if res.ok() || res.status() == 404 {
        Ok(())
    } else {
        Err(error_message(res).await)
    }
}

/// A user-typed text made safe as one path segment (room codes are letters and digits).
fn url_part(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// `text` as one URL path segment or query value (everything but unreserved characters
/// percent-encoded).
pub fn url_segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A POST to the server's API, naming this tab's session (the server's rate limits count per
/// session, so a workshop behind one address is not one client).
fn post(url: &str) -> gloo_net::http::RequestBuilder {
    gloo_net::http::Request::post(url).header(wire::SESSION_HEADER, session())
}

/// A PUT to the server's API, naming this tab's session.
fn put(url: &str) -> gloo_net::http::RequestBuilder {
    gloo_net::http::Request::put(url).header(wire::SESSION_HEADER, session())
}

/// This tab's session name: 32 random hex digits, made once per page load.
fn session() -> &'static str {
    thread_local! {
        static SESSION: &'static str = Box::leak(
            (0..4)
                .map(|_| format!("{:08x}", (js_sys::Math::random() * 4_294_967_296.0) as u32))
                .collect::<String>()
                .into_boxed_str(),
        );
    }
    SESSION.with(|s| *s)
}
