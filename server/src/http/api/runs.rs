//! Runs: start, cancel, resume, status, progress events and results exports.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use benchmarks::task::report::csv_field;
use serde::Deserialize;
use wire::{
    defaults, ImportedTasks, ProgressEvent, ResultRow, Results, RunAction, RunCreated, RunList,
    RunListQuery, RunRequest, RunSpec, RunStatus, RunView, TaskSource,
};

use super::{authorise, ApiError};
use crate::cpu::CpuPool;
use crate::http::AppState;
use crate::runs;

/// Largest run the API starts (task samples), to keep a public demo bounded.
pub const MAX_RUN_TASKS: usize = 5_000;

fn too_many() -> ApiError {
    ApiError::bad(format!("a run must have 1 to {MAX_RUN_TASKS} task samples"))
}

/// How many of `given` are not tasks of `held` (the server's own set): none with the same
/// key, or one whose content differs (a changed reference or verification).
fn not_held(
    suite: &dyn benchmarks::task::AnySuite,
    given: &[serde_json::Value],
    held: &[serde_json::Value],
) -> usize {
    let own: std::collections::HashMap<String, &serde_json::Value> = held
        .iter()
        .filter_map(|t| Some((suite.key_of(t).ok()?, t)))
        .collect();
    given
        .iter()
        .filter(|t| {
            let key = suite.key_of(t).ok();
            key.and_then(|k| own.get(&k)).is_none_or(|held| held != t)
        })
        .count()
}

/// `POST /api/runs`: create a run and start it in the background.
#[utoipa::path(post, path = "/api/runs", request_body = RunRequest, responses(
    (status = 201, body = RunCreated),
    (status = 400, description = "a task that cannot run (named), or too many", body = wire::ApiError),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 404, description = "no such model", body = wire::ApiError)))]
pub async fn start_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<RunRequest>,
) -> Result<(StatusCode, Json<RunCreated>), ApiError> {
    authorise(&state, &headers)?;
    let (generator, condition) = match state.runs.registry().get(&body.suite) {
        Ok(suite) => {
            let variant = body.variant.as_deref();
            if variant.is_some() && body.tasks.is_some() {
                return Err(ApiError::bad(
                    "`variant` chooses a generated set; `tasks` gives the tasks instead",
                ));
            }
            let generator = suite
                .generator_for(body.seed, body.per_group, variant)
                .map_err(|e| ApiError::bad(e.to_string()))?;
            let condition = suite
                .variants()
                .iter()
                .find(|v| Some(v.name) == variant)
                .map(|v| v.condition.to_string());
            (generator, condition)
        }
        Err(_) => (None, None),
    };
    let source = match (body.tasks, &generator) {
        (None, Some(generator)) => TaskSource::Generated(generator.params.clone()),
        // Other suites: the task set the server holds for them (GET /api/suites).
        (None, None) => {
            let (tasks, source) = state.task_sets.raw(&body.suite);
            if tasks.is_empty() {
                return Err(ApiError::bad(format!(
                    "suite {} has no tasks on this server ({source}); send them in `tasks`",
                    body.suite
                )));
            }
            TaskSource::Imported(ImportedTasks {
                imported_from: source,
                tasks,
                skipped: Vec::new(),
                unverified: 0,
            })
        }
        (Some(list), _) => {
            if list.len() > MAX_RUN_TASKS {
                return Err(too_many());
            }
            // Every task must be runnable: a bad one is named, not silently dropped. Preparing
            // (parsing, applying actions) is CPU work: off the async threads.
            let suite = state
                .runs
                .registry()
                .get(&body.suite)
                .map_err(|e| ApiError::bad(e.to_string()))?;
            let held = state.task_sets.raw(&body.suite).0;
            let own = suite.clone();
            let list = CpuPool::global()
                .run(move || {
                    for (n, t) in list.iter().enumerate() {
                        if let Err(e) = suite.prepare_json(t) {
                            let id = t["id"].as_str().map_or(n.to_string(), str::to_string);
                            return Err(format!("task {id}: {e}"));
                        }
                    }
                    Ok(list)
                })
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?
                .map_err(ApiError::bad)?;
            TaskSource::Imported(ImportedTasks {
                imported_from: "api".into(),
                unverified: not_held(own.as_ref(), &list, &held),
                tasks: list,
                skipped: Vec::new(),
            })
        }
    };
    let per_sample = match &source {
        TaskSource::Generated(_) => generator.map_or(0, |g| g.at_most),
        TaskSource::Imported(set) => set.tasks.len(),
    };
    let total = per_sample.saturating_mul(body.samples.max(1) as usize);
    if total == 0 || total > MAX_RUN_TASKS {
        return Err(too_many());
    }
    let spec = RunSpec {
        tasks: source,
        model: body.model,
        samples: body.samples.max(1),
        concurrency: body.concurrency.clamp(1, defaults::MAX_CONCURRENCY),
        // The configured embeddings model serves retrieval during the run (an agent's
        // documentation search; none: BM25). Tasks given with references (AlchemyBench's)
        // arrive here with them resolved: their run retrieves nothing.
        embeddings: (state
            .runs
            .registry()
            .get(&body.suite)
            .is_ok_and(|s| s.retrieves(body.agent.as_deref(), 0)))
        .then(|| state.gateway.config().limits.embeddings_model.clone())
        .flatten(),
        suite: body.suite,
        agent: body.agent,
        condition,
        batch: body.batch,
    };
    let run_id = state.runs.start(&spec)?;
    let run_token = owner::new_token();
    state
        .storage
        .set_run_owner(&run_id, &owner::digest(&run_token))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok((StatusCode::CREATED, Json(RunCreated { run_id, run_token })))
}

/// Runs started over HTTP belong to their starters: cancelling or resuming one takes the token
/// its starter was given (any passcode holder could stop anyone's run otherwise). Runs the CLI
/// started are the operator's, with no token.
mod owner {
    use sha2::{Digest, Sha256};

    /// A fresh token: 128 random bits in hex.
    pub fn new_token() -> String {
        format!("{:032x}", rand::random::<u128>())
    }

    /// What the server keeps of a token.
    pub fn digest(token: &str) -> String {
        hex::encode(Sha256::digest(
            format!("atomworld-run-owner:{token}").as_bytes(),
        ))
    }
}

/// Whether the request may act on run `id`: a run with an owner needs its token.
fn owns(state: &AppState, headers: &HeaderMap, id: &str) -> Result<(), ApiError> {
    let Some(expected) = state
        .storage
        .run_owner(id)
        .map_err(|e| ApiError::internal(e.to_string()))?
    else {
        return Ok(());
    };
    let given = headers
        .get(wire::RUN_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(owner::digest);
    if given.as_deref() == Some(expected.as_str()) {
        return Ok(());
    }
    Err(ApiError(
        StatusCode::FORBIDDEN,
        "not_your_run",
        format!(
            "run {id} was started by someone else: cancelling or resuming it takes the token \
             its starter was given (header {})",
            wire::RUN_TOKEN_HEADER
        ),
    ))
}

/// `POST /api/runs/{id}/cancel`: stop starting new tasks (those in flight finish and are
/// kept); the run's status becomes `cancelled` once they have.
#[utoipa::path(post, path = "/api/runs/{id}/cancel", params(("id" = String, Path, description = "run id")), responses(
    (status = 202, body = RunAction), (status = 404, body = wire::ApiError),
    (status = 403, description = "a run started by someone else (its token is missing)", body = wire::ApiError),
    (status = 409, description = "not running", body = wire::ApiError)))]
pub async fn cancel_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<RunAction>), ApiError> {
    authorise(&state, &headers)?;
    owns(&state, &headers, &id)?;
    state.runs.cancel(&id)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RunAction {
            run_id: id,
            status: "cancelling".into(),
        }),
    ))
}

/// `POST /api/runs/{id}/resume`: execute an unfinished run again from where it stopped.
#[utoipa::path(post, path = "/api/runs/{id}/resume", params(("id" = String, Path, description = "run id")), responses(
    (status = 202, body = RunAction), (status = 404, body = wire::ApiError),
    (status = 403, description = "a run started by someone else (its token is missing)", body = wire::ApiError),
    (status = 409, description = "finished or already running", body = wire::ApiError)))]
pub async fn resume_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<RunAction>), ApiError> {
    authorise(&state, &headers)?;
    owns(&state, &headers, &id)?;
    state.runs.resume(&id)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RunAction {
            run_id: id,
            status: RunStatus::Running.name().into(),
        }),
    ))
}

/// `GET /api/runs`: all runs, newest first.
/// `GET /api/runs`: one page of runs, newest first, each as a list shows it (suite, model,
/// status, how many tasks were given: never the tasks themselves).
#[utoipa::path(get, path = "/api/runs", params(RunListQuery), responses(
    (status = 200, body = RunList),
    (status = 401, description = "passcode required", body = wire::ApiError)))]
pub async fn list_runs(
    State(state): State<AppState>,
    Query(q): Query<RunListQuery>,
) -> Result<Json<RunList>, ApiError> {
    let limit = q
        .limit
        .unwrap_or(RunListQuery::DEFAULT_LIMIT)
        .clamp(1, RunListQuery::MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    let storage = state.storage.clone();
    let (runs, total) = tokio::task::spawn_blocking(move || {
        storage.list_run_items(q.suite.as_deref(), limit, offset)
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(RunList {
        runs,
        total,
        offset,
        limit,
    }))
}

/// The run's spec and status, or a 404.
pub(super) fn run_of(state: &AppState, id: &str) -> Result<(RunSpec, RunStatus), ApiError> {
    state
        .storage
        .load_run(id)
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))
}

pub(super) fn rows_of(state: &AppState, id: &str) -> Result<Vec<ResultRow>, ApiError> {
    state
        .storage
        .results(id)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Run `id`'s summary over `rows`, with what preparing its tasks cost (AlchemyBench's
/// embeddings).
fn summary_of(
    state: &AppState,
    id: &str,
    spec: &wire::RunSpec,
    rows: &[ResultRow],
    suite: Option<&dyn benchmarks::task::AnySuite>,
) -> Result<wire::RunSummary, ApiError> {
    let preparation = state
        .storage
        .preparation_cost(id)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(runs::summarise(id, spec, rows, suite, preparation))
}

/// `GET /api/runs/{id}`: spec, status, live progress and the summary so far.
#[utoipa::path(get, path = "/api/runs/{id}", params(("id" = String, Path, description = "run id")), responses(
    (status = 200, body = RunView), (status = 404, body = wire::ApiError)))]
pub async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    let (spec, status) = run_of(&state, &id)?;
    let rows = rows_of(&state, &id)?;
    let suite = state.runs.registry().get(&spec.suite).ok();
    let summary = summary_of(&state, &id, &spec, &rows, suite.as_deref())?;
    Ok(Json(RunView {
        progress: state.runs.progress(&id),
        id,
        spec,
        status,
        summary,
    }))
}

/// How often the progress stream looks for news.
const EVENT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// `GET /api/runs/{id}/events`: the run's progress as server-sent events (`event: progress`,
/// data [`ProgressEvent`]), one whenever it changes; the stream ends after the event that
/// reports a run no longer executing.
#[utoipa::path(get, path = "/api/runs/{id}/events", params(("id" = String, Path, description = "run id")), responses(
    (status = 200, description = "text/event-stream of progress events (ProgressEvent)"),
    (status = 404, body = wire::ApiError)))]
pub async fn run_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError>
{
    run_of(&state, &id)?;
    // (state, id, last payload sent, finished)
    let stream = futures_util::stream::unfold(
        (state, id, String::new(), false),
        |(state, id, last, ended)| async move {
            if ended {
                return None;
            }
            loop {
                let status = state.storage.load_run(&id).ok().flatten().map(|(_, s)| s);
                let executing = state.runs.is_executing(&id);
                let event = ProgressEvent {
                    status: status.unwrap_or(RunStatus::Interrupted),
                    progress: state.runs.progress(&id),
                };
                let payload = serde_json::to_string(&event).unwrap_or_default();
                let over = !executing && !status.is_some_and(RunStatus::is_active);
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

fn csv(rows: &[ResultRow]) -> String {
    let mut body = String::from("task_id,sample,action,label,rms,max_dist,max_dist_angstrom,same_crystal,error,input_tokens,output_tokens,cost_usd,latency_ms,cached\n");
    for r in rows {
        let v = r.verdict.as_ref().and_then(|v| v.atomworld());
        let num = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
        body.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(&r.task_id),
            r.sample,
            csv_field(&r.group),
            csv_field(r.label.as_deref().unwrap_or("")),
            num(v.and_then(|v| v.rms)),
            num(v.and_then(|v| v.max_dist)),
            num(v.and_then(|v| v.max_dist_angstrom)),
            v.and_then(|v| v.same_crystal)
                .map_or("", |s| if s.fit { "yes" } else { "no" }),
            csv_field(r.error.as_deref().unwrap_or("")),
            r.input_tokens,
            r.output_tokens,
            r.cost_usd,
            r.latency_ms,
            r.cached
        ));
    }
    body
}

/// `GET /api/runs/{id}/results?format=json|jsonl|csv|table` (`table`: the per-action summary
/// in the paper's layout, as plain text).
#[utoipa::path(get, path = "/api/runs/{id}/results", params(
    ("id" = String, Path, description = "run id"),
    ("format" = Option<String>, Query, description = "json (default), jsonl, csv or table")),
    responses((status = 200, description = "json: Results; jsonl: one ResultRow a line; csv; \
     table: the results table as text", body = Results),
    (status = 400, description = "unknown format", body = wire::ApiError), (status = 404, body = wire::ApiError)))]
pub async fn run_results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let (spec, _) = run_of(&state, &id)?;
    let rows = rows_of(&state, &id)?;
    Ok(match q.format.as_deref().unwrap_or("json") {
        "json" => Json(Results { results: rows }).into_response(),
        "jsonl" => {
            let body: String = rows
                .iter()
                .filter_map(|r| serde_json::to_string(r).ok())
                .map(|l| l + "\n")
                .collect();
            ([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response()
        }
        "csv" => ([(header::CONTENT_TYPE, "text/csv")], csv(&rows)).into_response(),
        "table" => {
            let suite = state.runs.registry().get(&spec.suite).ok();
            let summary = summary_of(&state, &id, &spec, &rows, suite.as_deref())?;
            let table = runs::summary_text(&summary, suite.as_deref());
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], table).into_response()
        }
        other => {
            return Err(ApiError::bad(format!(
                "unknown format '{other}' (json, jsonl, csv, table)"
            )))
        }
    })
}
