//! `POST /api/complete` and `/api/complete/stream`: one model call.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use wire::{CompleteRequest, StreamDelta, StreamRestart};

use super::{authorise, ApiError};
use crate::http::AppState;
use crate::llm::{Completion, LlmError, Message, StreamEvent};

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `POST /api/complete`: one model call (through cache, retries and caps).
#[utoipa::path(post, path = "/api/complete", request_body = CompleteRequest, responses(
    (status = 200, body = Completion),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 402, description = "a spend cap is reached", body = wire::ApiError),
    (status = 404, description = "no such model", body = wire::ApiError),
    (status = 429, description = "rate limited", body = wire::ApiError),
    (status = 502, description = "the provider failed", body = wire::ApiError)))]
pub async fn complete(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<CompleteRequest>,
) -> Result<Json<Completion>, ApiError> {
    authorise(&state, &headers)?;
    if state.runs.registry().is_baseline(&body.model) {
        return Err(ApiError::bad("baselines answer whole tasks; use a run"));
    }
    let c = state
        .gateway
        .complete(
            &body.model,
            &messages_of(body.prompt, body.messages),
            body.sample,
        )
        .await?;
    Ok(Json(c))
}

/// What a completion request sends: its messages when given (a suite task's system and user
/// messages), else its prompt as the one user message.
fn messages_of(prompt: String, messages: Vec<Message>) -> Vec<Message> {
    if messages.is_empty() {
        vec![Message::user(prompt)]
    } else {
        messages
    }
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
#[utoipa::path(post, path = "/api/complete/stream", request_body = CompleteRequest, responses(
    (status = 200, description = "text/event-stream: delta (StreamDelta), restart \
     (StreamRestart), then done (Completion) or error (ApiError)"),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 404, description = "no such model", body = wire::ApiError),
    (status = 429, description = "rate limited", body = wire::ApiError)))]
pub async fn complete_stream(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<CompleteRequest>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError>
{
    authorise(&state, &headers)?;
    if state.runs.registry().is_baseline(&body.model) {
        return Err(ApiError::bad("baselines answer whole tasks; use a run"));
    }
    if state.gateway.config().model(&body.model).is_none() {
        return Err(LlmError::UnknownModel(body.model).into());
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let gateway = state.gateway.clone();
    let task = tokio::spawn(async move {
        let messages = messages_of(body.prompt, body.messages);
        let on = |e: StreamEvent<'_>| {
            let event = match e {
                StreamEvent::Delta(text) => {
                    Event::default().event("delta").data(to_json(&StreamDelta {
                        text: text.to_string(),
                    }))
                }
                StreamEvent::Restart { attempt } => Event::default()
                    .event("restart")
                    .data(to_json(&StreamRestart { attempt })),
            };
            let _ = tx.send(event);
        };
        let result = gateway
            .complete_stream(&body.model, &messages, body.sample, on)
            .await;
        let last = match result {
            Ok(c) => Event::default().event("done").data(to_json(&c)),
            Err(e) => Event::default()
                .event("error")
                .data(to_json(&ApiError::from(e).body())),
        };
        let _ = tx.send(last);
    });
    let stream =
        futures_util::stream::unfold((rx, AbortOnDrop(task)), |(mut rx, guard)| async move {
            rx.recv().await.map(|e| (Ok(e), (rx, guard)))
        });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
