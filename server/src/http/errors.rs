//! One error shape for the whole API: `{"error": {"code", "message"}}`. Handlers build it
//! themselves ([`super::api::ApiError`]); this middleware rewrites what the framework answers
//! on its own (a body that is not JSON, too large or of the wrong type, an unknown route or
//! method) into the same shape, so a client never has to parse plain text.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// Longest framework error text kept (its messages are a line or two).
const MAX_TEXT: usize = 4096;

/// The stable code of a status the framework answers with.
fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid_body",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        s if s.is_server_error() => "internal",
        _ => "error",
    }
}

/// Middleware for `/api`: error answers that are not JSON become JSON.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let (parts, body) = res.into_parts();
    let text = to_bytes(body, MAX_TEXT).await.unwrap_or_default();
    let mut message = String::from_utf8_lossy(&text).trim().to_string();
    if message.is_empty() {
        message = status.canonical_reason().unwrap_or("error").to_lowercase();
    }
    let mut out = (
        status,
        Json(serde_json::json!({"error": {"code": code_of(status), "message": message}})),
    )
        .into_response();
    // Keep the framework's other headers (Allow, Retry-After), not its content type.
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    out
}

/// `/api/*` routes that do not exist: a JSON 404 (not the app's page).
pub async fn no_such_route(req: Request<Body>) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(serde_json::json!({"error": {
            "code": "not_found",
            "message": format!("no API route {} {}", req.method(), req.uri().path()),
        }})),
    )
        .into_response()
}
