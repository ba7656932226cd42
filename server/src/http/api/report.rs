//! `GET /api/report?runs=ID,ID&format=json|csv|md|svg`: the papers' tables and every headline
//! number of the named runs, as `atomworld report` prints them ([`crate::runs::report`]).

use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::ApiError;
use crate::cpu::CpuPool;
use crate::http::AppState;
use crate::runs::report::{report as report_of, ReportError};

/// The most runs one report tables.
pub const MAX_REPORT_RUNS: usize = 24;

/// The query of `GET /api/report`.
#[derive(Debug, Deserialize)]
pub struct ReportQuery {
    /// The run ids, comma-separated, in column order.
    runs: String,
    /// `json` (default), `csv`, `md` or `svg`.
    #[serde(default)]
    format: Option<String>,
}

/// The report of the named runs.
#[utoipa::path(get, path = "/api/report", params(
    ("runs" = String, Query, description = "run ids, comma-separated (at most 24)"),
    ("format" = Option<String>, Query, description = "json (default), csv, md or svg")),
    responses((status = 200, description = "json: {paper: [table], numbers: [table]}; csv: \
        table,row,column,mean,std,n; md: Markdown tables; svg: the papers' tables as bars"),
    (status = 400, description = "no runs named, too many, or an unknown format",
        body = wire::ApiError),
    (status = 404, description = "no such run", body = wire::ApiError)))]
pub async fn report(
    State(state): State<AppState>,
    Query(q): Query<ReportQuery>,
) -> Result<Response, ApiError> {
    let ids: Vec<String> = q
        .runs
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if ids.is_empty() {
        return Err(ApiError::bad("name the runs to report: ?runs=ID,ID"));
    }
    if ids.len() > MAX_REPORT_RUNS {
        return Err(ApiError::bad(format!(
            "{} runs named; a report tables at most {MAX_REPORT_RUNS}",
            ids.len()
        )));
    }
    let format = q.format.unwrap_or_else(|| "json".into());
    if !benchmarks::task::report::FORMATS.contains(&format.as_str()) {
        return Err(ApiError::bad(format!(
            "unknown format '{format}' ({})",
            benchmarks::task::report::FORMATS.join(", ")
        )));
    }
    let (storage, registry) = (state.storage.clone(), state.runs.registry().clone());
    let report = CpuPool::global()
        .run(move || report_of(&storage, &ids, &registry))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| match e {
            ReportError::NoRun(_) => ApiError::not_found(e.to_string()),
            ReportError::Suite(_) => ApiError::bad(e.to_string()),
            ReportError::Storage(_) => ApiError::internal(e.to_string()),
        })?;
    Ok(match format.as_str() {
        "json" => Json(report).into_response(),
        other => {
            let (kind, file) = match other {
                "csv" => ("text/csv; charset=utf-8", "report.csv"),
                "svg" => ("image/svg+xml", "report.svg"),
                _ => ("text/markdown; charset=utf-8", "report.md"),
            };
            let body = report.render(other).map_err(ApiError::bad)?;
            (
                [
                    (header::CONTENT_TYPE, kind.to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"{file}\""),
                    ),
                ],
                body,
            )
                .into_response()
        }
    })
}
