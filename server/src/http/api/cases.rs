//! `POST /api/cases` and `GET /api/cases/{id}`: share-link cases.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sha2::{Digest, Sha256};
use wire::CaseCreated;

use super::{authorise, ApiError};
use crate::http::AppState;
use crate::storage::CaseStored;

/// Largest share-link case body (bytes).
pub const MAX_CASE_BYTES: usize = 256 * 1024;

/// `POST /api/cases`: store a case (any JSON ≤ 256 KiB) under its content hash, within the
/// client's and the store's quotas (and behind the passcode, when one is set).
#[utoipa::path(post, path = "/api/cases", request_body(content = Object,
    description = "any JSON of at most 256 KiB (the page's case)"), responses(
    (status = 201, body = CaseCreated),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 413, description = "too large", body = wire::ApiError),
    (status = 429, description = "rate limited, or the address's case quota is used up",
     body = wire::ApiError),
    (status = 507, description = "the store is full", body = wire::ApiError)))]
pub async fn put_case(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<CaseCreated>), ApiError> {
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
            Json(CaseCreated {
                url: format!("/c/{id}"),
                id,
            }),
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
#[utoipa::path(get, path = "/api/cases/{id}", params(("id" = String, Path, description = "case id")),
    responses((status = 200, description = "the case as stored", body = Object),
              (status = 404, description = "no such case (or expired)", body = wire::ApiError)))]
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
