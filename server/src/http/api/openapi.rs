//! `GET /api/openapi.json`: the API description, generated from the handlers' annotations
//! and the wire types (`wire`), so it cannot drift from what the server answers.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;

/// The API's OpenAPI document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "AtomWorld Playground API",
        description = "Every error is {\"error\": {\"code\", \"message\"}} (ApiError). Model, run \
            and share endpoints need `Authorization: Bearer <passcode>` (or \
            `X-Atomworld-Passcode`) when the server has ATOMWORLD_PASSCODE set, and are rate \
            limited per client address."
    ),
    paths(
        crate::http::health,
        crate::http::api::report::report,
        super::models::models,
        super::complete::complete,
        super::complete::complete_stream,
        super::runs::start_run,
        super::runs::list_runs,
        super::runs::get_run,
        super::runs::cancel_run,
        super::runs::resume_run,
        super::runs::run_events,
        super::runs::run_results,
        super::cases::put_case,
        super::cases::get_case,
        super::suites::list_suites,
        super::suites::suite_tasks,
        super::suites::task_image,
        super::suites::score,
        super::suites::suite_references,
        super::human::get_human_scores,
        super::human::put_human_score,
        super::human::human_scores_csv,
        super::rooms::create_room,
        super::rooms::get_room,
        super::rooms::close_room,
        super::rooms::post_attempt,
        super::rooms::room_summary,
        super::rooms::get_attempt,
        openapi,
    ),
    components(schemas(
        wire::ApiError,
        wire::ErrorBody,
        wire::Health,
        wire::HealthStatus,
        wire::SandboxHealth,
        wire::ModelInfo,
        wire::ModelList,
        wire::CompleteRequest,
        wire::Completion,
        wire::StreamDelta,
        wire::StreamRestart,
        wire::RunRequest,
        wire::RunCreated,
        wire::RunSpec,
        wire::TaskSource,
        wire::ImportedTasks,
        wire::SkippedTask,
        wire::TaskCounts,
        wire::RunStatus,
        wire::Progress,
        wire::ProgressEvent,
        wire::RunList,
        wire::RunListItem,
        wire::RunView,
        wire::RunSummary,
        wire::ResultRow,
        wire::ResultVerdict,
        wire::Results,
        wire::RunAction,
        wire::CaseCreated,
        wire::SuiteInfo,
        wire::VariantInfo,
        wire::SuiteList,
        wire::SuiteTask,
        wire::SuiteTasks,
        wire::ScoreRequest,
        wire::ReferencesRequest,
        wire::ScoreResult,
        wire::HumanScore,
        wire::HumanScores,
        wire::CriterionAgreement,
        wire::CriterionConsensus,
        wire::RoomCreate,
        wire::RoomCreated,
        wire::RoomInfo,
        wire::AttemptKind,
        wire::RoomAttempt,
        wire::AttemptScored,
        wire::AttemptView,
        wire::AttemptDetail,
        wire::RoomCell,
        wire::RoomActionRow,
        wire::LabelCount,
        wire::RoomSummary,
        benchmarks::task::Outcome,
        benchmarks::task::VerdictView,
        benchmarks::task::ViewTable,
        benchmarks::task::ViewRow,
        benchmarks::task::ViewText,
    ))
)]
pub struct ApiDoc;

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", responses(
    (status = 200, description = "OpenAPI 3.1", content_type = "application/json")))]
pub async fn openapi() -> Response {
    let text = ApiDoc::openapi().to_pretty_json().unwrap_or_else(|e| {
        format!("{{\"error\": {{\"code\": \"internal\", \"message\": \"{e}\"}}}}")
    });
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}
