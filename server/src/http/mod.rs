//! The HTTP surface: JSON API under `/api`, the built app for everything else.

use std::path::Path;

use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post, put};
use axum::{Json, Router};
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::services::{ServeDir, ServeFile};

use crate::build_info::build_info;
use crate::config::Config;
use crate::llm::{Gateway, GatewayOptions};
use crate::runs::Runs;
use crate::storage::Storage;
use crate::suites::Catalogue;
use wire::{Health, HealthStatus};

pub mod api;
pub mod assets;
mod errors;
mod headers;
pub mod listener;
pub mod proxy;
mod rate_limit;
/// Requests per minute per client on the limited endpoints unless configured.
pub use rate_limit::DEFAULT_PER_MINUTE as DEFAULT_RATE_LIMIT;

/// Unknown room codes a client address may ask for a minute (bursts as many): a participant
/// who mistypes a code a few times is not slowed; trying codes finds one of 1,000 open rooms
/// among the 31⁶ codes (about 890 million) in about a month.
pub const ROOM_MISSES_PER_MINUTE: u32 = 20;

/// Scorings (`POST /api/score`) one client address may have in progress: one verifying and
/// a few waiting, as the CPU pool allows a participant.
pub const SCORINGS_PER_CLIENT: usize = 1 + crate::cpu::MAX_WAITING;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct AppState {
    storage: Storage,
    gateway: Gateway,
    passcode: Option<String>,
    runs: Runs,
    code: crate::execution::CodeRunner,
    task_sets: crate::task_sets::TaskSets,
    limiter: rate_limit::Limiter,
    /// Room codes asked for that name no open room, per client address: a code is found by
    /// the people who were given it, not by trying codes.
    room_misses: rate_limit::Limiter,
    /// `POST /api/score` requests in progress per client address.
    scorings: rate_limit::InFlight,
    rooms: crate::storage::RoomLimits,
    /// The load balancers whose `X-Forwarded-For` names the client.
    proxies: proxy::TrustedProxies,
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
    /// minute on model and run endpoints), running the standard suites.
    pub fn with_gateway(
        storage: Storage,
        gateway: Gateway,
        passcode: Option<String>,
        per_minute: u32,
    ) -> Self {
        Self::with_suites(
            storage,
            gateway,
            passcode,
            per_minute,
            Catalogue::standard(),
        )
    }

    /// [`with_gateway`](Self::with_gateway) running `suites`.
    pub fn with_suites(
        storage: Storage,
        gateway: Gateway,
        passcode: Option<String>,
        per_minute: u32,
        suites: Catalogue,
    ) -> Self {
        let config = gateway.config();
        let hosts = &suites.hosts;
        // The suites' folders bring the data their programs read (MatTools' test files).
        let sandbox = hosts.with_sandbox_data(config.sandbox.clone(), &config.suites, None);
        let code = crate::execution::CodeRunner::from_config(&sandbox);
        // On a shared store, what this instance cannot run goes to a worker that can.
        let code = if storage.is_shared() {
            code.with_remote(storage.clone())
        } else {
            code
        };
        let task_sets = crate::task_sets::TaskSets::load(&config.suites, hosts);
        Self {
            code: code.clone(),
            task_sets,
            runs: Runs::new(storage.clone(), gateway.clone(), code, suites),
            storage,
            gateway,
            passcode,
            limiter: rate_limit::Limiter::new(per_minute),
            room_misses: rate_limit::Limiter::new(ROOM_MISSES_PER_MINUTE),
            scorings: rate_limit::InFlight::new(SCORINGS_PER_CLIENT),
            rooms: crate::storage::RoomLimits::default(),
            proxies: proxy::TrustedProxies::default(),
        }
    }

    /// The same state believing `proxies`' `X-Forwarded-For` (serving behind them).
    pub fn with_trusted_proxies(mut self, proxies: proxy::TrustedProxies) -> Self {
        self.proxies = proxies;
        self
    }

    /// The same state executing no run itself: the runs it records or resumes wait for an
    /// instance or `atomworld worker` that executes runs (a shared store only).
    pub fn web_only(mut self) -> Self {
        self.runs = self.runs.web_only();
        self
    }

    /// The sandboxes this state runs code in.
    pub fn code(&self) -> &crate::execution::CodeRunner {
        &self.code
    }

    /// The same state with other workshop-room limits.
    pub fn with_room_limits(mut self, limits: crate::storage::RoomLimits) -> Self {
        self.rooms = limits;
        self
    }

    /// Check the code sandbox in the background (its first load compiles the interpreter);
    /// `/api/health` reports the answer once it is known.
    pub fn check_sandbox(&self) {
        let code = self.code.clone();
        // With MatTools' tasks listed, code will run: start the warm workers now.
        let prestart = self.task_sets.runs_pymatgen(self.runs.registry());
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            for (env, state) in [
                ("python", code.check()),
                ("pymatgen", code.check_pymatgen()),
            ] {
                tracing::info!(
                    env,
                    backend = state.backend,
                    available = state.available,
                    "sandbox: {}",
                    state.detail
                );
            }
            if prestart {
                match runtime.block_on(code.prestart_pymatgen()) {
                    Some(Ok(detail)) => tracing::info!(env = "pymatgen", "sandbox: {detail}"),
                    Some(Err(e)) => {
                        tracing::warn!(env = "pymatgen", "sandbox: workers not started: {e}")
                    }
                    None => {}
                }
            }
        });
    }

    /// Restart runs that were executing when the server stopped (see
    /// [`Runs::resume_at_startup`]).
    pub fn resume_runs(&self) {
        self.runs.resume_at_startup();
    }
}

fn sandbox_health(s: crate::execution::SandboxState) -> wire::SandboxHealth {
    wire::SandboxHealth {
        backend: s.backend,
        available: s.available,
        detail: s.detail,
    }
}

/// `GET /api/health`: the server's version and build, and whether its database takes a write.
#[utoipa::path(get, path = "/api/health", responses(
    (status = 200, description = "serving; the database takes writes", body = Health),
    (status = 503, description = "the database does not take writes", body = wire::ApiError)))]
pub async fn health(State(state): State<AppState>) -> Response {
    let storage = state.storage.clone();
    // A write that is rolled back: a read-only or full database is not "ok".
    let checked = tokio::task::spawn_blocking(move || {
        storage.check_writable()?;
        storage.schema_version()
    })
    .await;
    let checked = match checked {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match checked {
        Ok(schema_version) => {
            let build = build_info();
            Json(Health {
                status: HealthStatus::Ok,
                version: build.version.to_string(),
                commit: build.commit.to_string(),
                profile: build.profile.to_string(),
                target: build.target.to_string(),
                schema_version,
                database: state.storage.engine_name().to_string(),
                sandbox: Some(sandbox_health(state.code.state())),
                pymatgen: Some(sandbox_health(state.code.pymatgen_state())),
            })
            .into_response()
        }
        Err(e) => {
            tracing::error!("health check failed: {e}");
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({
                    "status": "error",
                    "error": {"code": "database_unavailable", "message": "the database does not take writes (see the server log)"}
                })),
            )
                .into_response()
        }
    }
}

/// How often expired workshop rooms are deleted (they are never read once expired).
const ROOM_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Delete expired workshop rooms now and every [`ROOM_SWEEP_EVERY`] (when a runtime is
/// running, as it is for the server).
fn sweep_rooms(state: &AppState) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    let storage = state.storage.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(ROOM_SWEEP_EVERY);
        loop {
            every.tick().await;
            let s = storage.clone();
            match tokio::task::spawn_blocking(move || s.sweep_rooms()).await {
                Ok(Ok(n)) if n > 0 => tracing::info!(rooms = n, "expired workshop rooms deleted"),
                Ok(Err(e)) => tracing::warn!("sweeping expired rooms failed: {e}"),
                _ => {}
            }
        }
    });
}

/// Largest request body accepted (bytes).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The full router: API routes, then the app from `dist` with an SPA fallback to
/// `index.html` so that client routes such as `/c/<id>` load the app.
pub fn router(state: AppState, dist: &Path) -> Router {
    sweep_rooms(&state);
    let proxies = state.proxies.clone();
    let static_files = ServeDir::new(dist)
        .precompressed_br()
        .precompressed_gzip()
        .fallback(ServeFile::new(dist.join("index.html")));
    let csp = HeaderValue::from_str(&headers::content_security_policy(dist))
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"));
    // Endpoints that cost money, start work or store data: rate limited per client.
    let limited = Router::new()
        .route("/api/complete", post(api::complete))
        .route("/api/complete/stream", post(api::complete_stream))
        .route("/api/runs", post(api::start_run))
        .route("/api/runs/{id}/cancel", post(api::cancel_run))
        .route("/api/runs/{id}/resume", post(api::resume_run))
        .route("/api/cases", post(api::put_case))
        .route("/api/score", post(api::score))
        .route("/api/suites/{name}/references", post(api::suite_references))
        .route("/api/runs/{id}/human-scores", put(api::put_human_score))
        .route("/api/rooms", post(api::create_room))
        .route("/api/rooms/{code}/attempts", post(api::post_attempt))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            rate_limit::limit,
        ));
    // Reads of what people asked and answered in runs: the passcode, when one is set.
    let private_reads = Router::new()
        .route("/api/runs", get(api::list_runs))
        .route("/api/runs/{id}", get(api::get_run))
        .route("/api/runs/{id}/results", get(api::run_results))
        .route("/api/runs/{id}/events", get(api::run_events))
        .route("/api/report", get(api::report))
        .route("/api/runs/{id}/human-scores", get(api::get_human_scores))
        .route(
            "/api/runs/{id}/human-scores.csv",
            get(api::human_scores_csv),
        )
        .layer(middleware::from_fn_with_state(
            state.clone(),
            api::private_read,
        ));
    // Open reads: the server's state and its own tasks (no one's answers); a case by its id
    // (a share link is made to be passed on: its unguessable id admits); a room by its code
    // (participants hold the code, not the passcode); the API's description.
    let api = Router::new()
        .route("/api/health", get(health))
        .route("/api/models", get(api::models))
        .route("/api/cases/{id}", get(api::get_case))
        .route("/api/suites", get(api::list_suites))
        .route("/api/suites/{name}/tasks", get(api::suite_tasks))
        .route(
            "/api/suites/{name}/tasks/{id}/images/{stem}",
            get(api::task_image),
        )
        .route(
            "/api/rooms/{code}",
            get(api::get_room).delete(api::close_room),
        )
        .route("/api/rooms/{code}/summary", get(api::room_summary))
        .route("/api/rooms/{code}/attempts/{id}", get(api::get_attempt))
        .route("/api/openapi.json", get(api::openapi))
        .route("/api/{*rest}", any(errors::no_such_route))
        .merge(limited)
        .merge(private_reads)
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(errors::json_errors));
    api.fallback_service(static_files)
        .layer(middleware::from_fn_with_state(
            std::sync::Arc::new(csp),
            headers::add,
        ))
        // What is compressed here is made per request (API answers; the app's files have
        // their siblings made once, see `assets`): the fastest level, since brotli's default
        // (quality 11) spends milliseconds per kilobyte that every other request waits for.
        .layer(
            CompressionLayer::new()
                .gzip(true)
                .br(true)
                .quality(CompressionLevel::Fastest),
        )
        // Outermost: every layer and handler below sees the client a trusted proxy names.
        .layer(middleware::from_fn_with_state(
            proxies,
            proxy::forwarded_client,
        ))
}
