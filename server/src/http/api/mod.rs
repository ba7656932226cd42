//! The JSON API, one file per resource: models, completions, runs, share-link cases, suites
//! (their task sets and the scoring of one answer), workshop rooms.
//!
//! Errors have one shape: `{"error": {"code": "...", "message": "..."}}` with a fitting HTTP
//! status. The browser can only name configured models, never an upstream URL. Bodies and
//! answers are the types of `wire`, which the page reads too.

mod cases;
mod complete;
mod human;
mod models;
mod openapi;
mod report;
mod rooms;
mod runs;
mod suites;

pub use cases::{get_case, put_case, MAX_CASE_BYTES};
pub use complete::{complete, complete_stream};
pub use human::{get_human_scores, human_scores_csv, put_human_score};
pub use models::models;
pub use report::report;
pub use rooms::{
    close_room, create_room, get_attempt, get_room, post_attempt, room_summary, SUMMARY_WAIT,
};
pub use runs::{
    cancel_run, get_run, list_runs, resume_run, run_events, run_results, start_run, MAX_RUN_TASKS,
};
pub use suites::{
    list_suites, score, suite_references, suite_tasks, task_image, MAX_RESPONSE_BYTES,
};

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use wire::{ApiError as WireError, ErrorBody};

use super::AppState;
use crate::llm::LlmError;
use crate::runs::SpawnError;

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

    /// The error's code and message as the wire carries them.
    fn body(&self) -> WireError {
        WireError {
            error: ErrorBody {
                code: self.1.to_string(),
                message: self.2.clone(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(self.body())).into_response()
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

impl From<crate::cpu::CpuError> for ApiError {
    fn from(e: crate::cpu::CpuError) -> Self {
        match e {
            crate::cpu::CpuError::Busy { .. } => {
                ApiError(StatusCode::TOO_MANY_REQUESTS, "busy", e.to_string())
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<SpawnError> for ApiError {
    fn from(e: SpawnError) -> Self {
        match e {
            SpawnError::NotFound(_) => ApiError::not_found(e.to_string()),
            SpawnError::Conflict(m) => ApiError::conflict(m),
            SpawnError::Invalid(crate::runs::RunError::UnknownModel(m)) => ApiError(
                StatusCode::NOT_FOUND,
                "unknown_model",
                format!("no model named '{m}' is configured"),
            ),
            SpawnError::Invalid(crate::runs::RunError::Storage(s)) => {
                ApiError::internal(s.to_string())
            }
            SpawnError::Invalid(other) => ApiError::bad(other.to_string()),
        }
    }
}

/// Checks the passcode (when one is configured) for the endpoints that cost money, start
/// work or store data.
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
            "this server needs a passcode for model, run and share endpoints, and to read runs"
                .into(),
        ))
    }
}

/// Middleware for the reads that show other people's prompts, answers and scores (runs, their
/// results and events, reports, human scores): the passcode, when one is configured. Reads
/// that stay open say why beside their routes ([`crate::http::router`]).
pub async fn private_read(
    axum::extract::State(state): axum::extract::State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match authorise(&state, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(e) => axum::response::IntoResponse::into_response(e),
    }
}

pub use openapi::{openapi, ApiDoc};
