//! The HTTP surface: JSON API under `/api`, the built app for everything else.

use std::path::Path;

use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::{header, HeaderValue, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use tower_http::compression::CompressionLayer;
use tower_http::services::{ServeDir, ServeFile};

use crate::build_info::{build_info, BuildInfo};
use crate::config::Config;
use crate::llm::{Gateway, GatewayOptions};
use crate::storage::Storage;

pub mod api;
mod rate_limit;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct AppState {
    storage: Storage,
    gateway: Gateway,
    passcode: Option<String>,
    live: api::LiveRuns,
    /// Cancel flags of the runs executing in this process.
    active: api::ActiveRuns,
    limiter: rate_limit::Limiter,
}

impl AppState {
    /// State over an opened storage with no configured models (baselines only).
    pub fn new(storage: Storage) -> Result<Self, crate::llm::LlmError> {
        let gateway = Gateway::new(
            Config::default(),
            storage.clone(),
            GatewayOptions::default(),
        )?;
        Ok(Self::with_gateway(
            storage,
            gateway,
            None,
            rate_limit::DEFAULT_PER_MINUTE,
        ))
    }

    /// State with a gateway, an optional passcode and a per-client rate limit (requests per
    /// minute on model and run endpoints).
    pub fn with_gateway(
        storage: Storage,
        gateway: Gateway,
        passcode: Option<String>,
        per_minute: u32,
    ) -> Self {
        Self {
            storage,
            gateway,
            passcode,
            live: Default::default(),
            active: Default::default(),
            limiter: rate_limit::Limiter::new(per_minute),
        }
    }

    /// Restart runs that were executing when the server stopped.
    pub fn resume_runs(&self) {
        let ids: Vec<String> = self
            .storage
            .with_conn(|c| {
                let mut st =
                    c.prepare("SELECT id FROM runs WHERE status IN ('running', 'created')")?;
                let rows = st.query_map([], |r| r.get(0))?;
                rows.collect()
            })
            .unwrap_or_default();
        for id in ids {
            tracing::info!(run = id, "resuming run");
            api::spawn_run(self, id);
        }
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

/// Largest request body accepted (bytes).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

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
    let limited = Router::new()
        .route("/api/complete", post(api::complete))
        .route("/api/complete/stream", post(api::complete_stream))
        .route("/api/runs", post(api::start_run))
        .route("/api/runs/{id}/cancel", post(api::cancel_run))
        .route("/api/runs/{id}/resume", post(api::resume_run))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            rate_limit::limit,
        ));
    Router::new()
        .route("/api/health", get(health))
        .route("/api/models", get(api::models))
        .route("/api/runs", get(api::list_runs))
        .route("/api/runs/{id}", get(api::get_run))
        .route("/api/runs/{id}/results", get(api::run_results))
        .route("/api/runs/{id}/events", get(api::run_events))
        .route("/api/cases", post(api::put_case))
        .route("/api/cases/{id}", get(api::get_case))
        .route("/api/openapi.json", get(api::openapi))
        .merge(limited)
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
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
