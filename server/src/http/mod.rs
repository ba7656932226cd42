//! The HTTP surface: JSON API under `/api`, the built app for everything else.

use std::path::Path;

use axum::extract::State;
use axum::http::{header, HeaderValue, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use tower_http::compression::CompressionLayer;
use tower_http::services::{ServeDir, ServeFile};

use crate::build_info::{build_info, BuildInfo};
use crate::storage::Storage;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct AppState {
    storage: Storage,
}

impl AppState {
    /// State over an opened storage.
    pub fn new(storage: Storage) -> Self {
        Self { storage }
    }
}

/// The answer of `GET /api/health`.
#[derive(Serialize)]
pub struct Health {
    /// Always `"ok"` when the server answers and its database is readable.
    pub status: &'static str,
    /// Version and build facts.
    #[serde(flatten)]
    pub build: BuildInfo,
    /// Database schema version.
    pub schema_version: i64,
}

async fn health(State(state): State<AppState>) -> Response {
    match state.storage.schema_version() {
        Ok(schema_version) => Json(Health {
            status: "ok",
            build: build_info(),
            schema_version,
        })
        .into_response(),
        Err(e) => {
            tracing::error!("health check failed: {e}");
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({"status": "error", "error": "database unavailable"})),
            )
                .into_response()
        }
    }
}

/// True for file names that carry Trunk's content hash (`app-0123456789abcdef_bg.wasm`),
/// which may be cached forever.
fn is_hashed_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split(['-', '_', '.'])
        .any(|part| part.len() == 16 && part.chars().all(|c| c.is_ascii_hexdigit()))
}

async fn cache_headers(req: Request<axum::body::Body>, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut res = next.run(req).await;
    let value = if path.starts_with("/api/") {
        "no-store"
    } else if is_hashed_asset(&path) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    res
}

/// The full router: API routes, then the app from `dist` with an SPA fallback to
/// `index.html` so that client routes such as `/c/<id>` load the app.
pub fn router(state: AppState, dist: &Path) -> Router {
    let static_files = ServeDir::new(dist).fallback(ServeFile::new(dist.join("index.html")));
    Router::new()
        .route("/api/health", get(health))
        .with_state(state)
        .fallback_service(static_files)
        .layer(middleware::from_fn(cache_headers))
        .layer(CompressionLayer::new().gzip(true).br(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_asset_names() {
        assert!(is_hashed_asset("/app-1a2b3c4d5e6f7a8b_bg.wasm"));
        assert!(is_hashed_asset("/app-1a2b3c4d5e6f7a8b.js"));
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/c/abc"));
    }
}
