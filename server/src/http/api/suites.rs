//! `GET /api/suites`, `GET /api/suites/{name}/tasks`, a task's images and `POST /api/score`:
//! the suites' own flows in the page. Scoring is the only way the API runs code: an answer to a task of a
//! suite whose scoring runs it (MatTools), in the sandbox, under the suite's limits.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use wire::{ReferencesRequest, ScoreRequest, ScoreResult, SuiteList, SuiteTask, SuiteTasks};

use super::{authorise, ApiError};
use crate::cpu::CpuPool;
use crate::http::AppState;

/// Largest answer `POST /api/score` takes (code or a model's reply).
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// `GET /api/suites`: every suite, its baselines and the tasks this server holds for it.
#[utoipa::path(get, path = "/api/suites", responses((status = 200, body = SuiteList)))]
pub async fn list_suites(State(state): State<AppState>) -> Json<SuiteList> {
    Json(SuiteList {
        suites: state.task_sets.list(state.runs.registry()),
    })
}

/// `GET /api/suites/{name}/tasks`: the tasks this server holds for suite `name`, each with
/// the exact prompt a model receives.
#[utoipa::path(get, path = "/api/suites/{name}/tasks",
    params(("name" = String, Path, description = "the suite")),
    responses((status = 200, body = SuiteTasks),
    (status = 404, description = "no such suite", body = wire::ApiError)))]
pub async fn suite_tasks(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<SuiteTasks>, ApiError> {
    let suite = state
        .runs
        .registry()
        .get(&name)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    let sets = state.task_sets.clone();
    let tasks = CpuPool::global()
        .run(move || sets.tasks(suite.as_ref()))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(SuiteTasks { tasks }))
}

/// `GET /api/suites/{name}/tasks/{id}/images/{stem}`: image `stem` of task `id` (an
/// OmniMatBench item's `image_url` names it), from the built-in demo images or the
/// configured images folder. A stem that is not a plain file name is refused (no path ever
/// leaves that folder); a stem the task does not name, or whose file is missing, is not
/// found.
#[utoipa::path(get, path = "/api/suites/{name}/tasks/{id}/images/{stem}",
    params(("name" = String, Path, description = "the suite"),
        ("id" = String, Path, description = "the task's key (OmniMatBench: subfield/id, percent-encoded)"),
        ("stem" = String, Path, description = "one of the task's image stems")),
    responses((status = 200, description = "the image (PNG, JPEG, GIF or WebP)"),
    (status = 400, description = "not a plain file name", body = wire::ApiError),
    (status = 404, description = "no such task or stem, or its file is unavailable",
        body = wire::ApiError)))]
pub async fn task_image(
    State(state): State<AppState>,
    Path((name, id, stem)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    if !benchmarks::omnimat::images::safe_stem(&stem) {
        return Err(ApiError::bad(format!(
            "image stem {stem:?} is not a plain file name"
        )));
    }
    let sets = state.task_sets.clone();
    let suite = state
        .runs
        .registry()
        .get(&name)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    let found = tokio::task::spawn_blocking(move || sets.image(suite.as_ref(), &id, &stem))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    match found {
        Ok(Some((bytes, media_type))) => Ok((
            [
                (header::CONTENT_TYPE, media_type),
                (header::CACHE_CONTROL, "private, max-age=300"),
            ],
            bytes,
        )
            .into_response()),
        Ok(None) => Err(ApiError::not_found(
            "no such task, or the task names no such image",
        )),
        Err(why) => Err(ApiError::not_found(why)),
    }
}

/// `POST /api/suites/{name}/references`: the task with its `k` nearest tasks of the server's
/// set for the suite as references, and the prompt that makes (AlchemyBench: its recipes, by
/// cosine over embeddings when an embeddings model is configured, `[limits]
/// embeddings_model`, computed through the gateway and cached, else by BM25, labelled as an
/// offline stand-in; the task's `retrieval` says which, with each reference's id and score).
/// Behind the passcode, as every route that may cost money.
#[utoipa::path(post, path = "/api/suites/{name}/references", request_body = ReferencesRequest,
    params(("name" = String, Path, description = "a suite that takes references (alchemy)")),
    responses((status = 200, body = SuiteTask),
    (status = 400, description = "not a task of the suite, or a K it does not take (AlchemyBench: \
        0, 1, 5, 10, 25)", body = wire::ApiError),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 404, description = "no such suite, or it takes no references",
        body = wire::ApiError),
    (status = 502, description = "the embeddings model failed (or 402, 503, 504 as for \
        completions)", body = wire::ApiError)))]
pub async fn suite_references(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Json(body): Json<ReferencesRequest>,
) -> Result<Json<SuiteTask>, ApiError> {
    authorise(&state, &headers)?;
    let suite = state
        .runs
        .registry()
        .get(&name)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    let host = state.task_sets.host(&name);
    let pool = state.task_sets.raw(&name).0;
    let model = state.gateway.config().limits.embeddings_model.clone();
    let Some(found) =
        host.with_references(body.task, body.k, pool, &state.gateway, model.as_deref())
    else {
        return Err(ApiError::not_found(format!(
            "suite {name} takes no references"
        )));
    };
    let json = found.await.map_err(|e| match e {
        crate::suites::LoadError::Llm(e) => ApiError::from(e),
        crate::suites::LoadError::Input(m) => ApiError::bad(m),
        crate::suites::LoadError::Failure(m) => ApiError::internal(m),
    })?;
    state
        .task_sets
        .task(suite.as_ref(), &json)
        .map(Json)
        .map_err(ApiError::bad)
}

/// When a refused scoring may find room: about one verification's time.
const SCORING_RETRY_SECS: u64 = 10;

/// `POST /api/score`: the verdict on one answer. Runs the answer's code in the sandbox when
/// the suite's scoring does (MatTools) and calls the configured judge when it needs one.
#[utoipa::path(post, path = "/api/score", request_body = ScoreRequest, responses(
    (status = 200, body = ScoreResult),
    (status = 400, description = "not a task of the suite, or the answer is too long",
        body = wire::ApiError),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 404, description = "no such suite", body = wire::ApiError),
    (status = 429, description = "rate limited", body = wire::ApiError)))]
pub async fn score(
    State(state): State<AppState>,
    client: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    Json(body): Json<ScoreRequest>,
) -> Result<Json<ScoreResult>, ApiError> {
    authorise(&state, &headers)?;
    let ip = client.map(|c| c.0 .0.ip());
    // A person's scorings in progress are bounded; past that, "busy" with when to retry.
    let _scoring = state.scorings.enter(ip).map_err(|busy| {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            "busy",
            format!(
                "busy: {busy} of your scorings are in progress; retry in {} s",
                SCORING_RETRY_SECS
            ),
        )
    })?;
    if body.response.len() > MAX_RESPONSE_BYTES {
        return Err(ApiError::bad(format!(
            "the answer has {} bytes; at most {MAX_RESPONSE_BYTES} are scored",
            body.response.len()
        )));
    }
    let suite = state
        .runs
        .registry()
        .get(&body.suite)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    let prepared = {
        let (suite, task) = (suite.clone(), body.task.clone());
        CpuPool::global()
            .run(move || suite.prepare_json(&task))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .map_err(|e| ApiError::bad(e.to_string()))?
    };
    let answers = crate::runs::needs::meet_all(
        suite.as_ref(),
        &prepared,
        &body.response,
        Some(&state.gateway),
        &state
            .code
            .for_client(ip.map_or_else(|| "address unknown".into(), |ip| ip.to_string())),
    )
    .await
    .map_err(ApiError::bad)?;
    let budget = Duration::from_secs(state.gateway.config().limits.match_budget_secs)
        * prepared.scoring_scale;
    let response = body.response;
    let scored = CpuPool::global()
        .run_within(budget, move |interrupt| {
            suite.score(&prepared, &response, &answers, interrupt)
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::bad(e.to_string()))?;
    Ok(Json(ScoreResult {
        outcome: scored.outcome,
        verdict: scored.verdict,
        view: scored.view,
    }))
}
