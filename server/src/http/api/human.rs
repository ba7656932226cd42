//! `GET/PUT /api/runs/{id}/human-scores` and `GET /api/runs/{id}/human-scores.csv`: a
//! person's own 1-5 scores of an AlchemyBench run's results, next to the judge's, and how
//! the two agree (Pearson and Spearman per criterion over what the person scored).

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use benchmarks::alchemy::judge::KEYS;
use wire::{CriterionAgreement, HumanScore, HumanScores, ResultRow};

use super::runs::{rows_of, run_of};
use super::{authorise, ApiError};
use crate::http::AppState;
use benchmarks::task::report::csv_field;

/// The judge's score of `row` on `criterion`, if it scored it.
fn judge_score(row: &ResultRow, criterion: &str) -> Option<f64> {
    let v = serde_json::to_value(row.verdict.as_ref()?).ok()?;
    v.get("scores")?.get(criterion)?.as_f64()
}

fn agreement(rows: &[ResultRow], scores: &[HumanScore]) -> Vec<CriterionAgreement> {
    KEYS.iter()
        .map(|criterion| {
            let pairs: Vec<(f64, f64)> = scores
                .iter()
                .filter(|s| s.criterion == *criterion)
                .filter_map(|s| {
                    let row = rows
                        .iter()
                        .find(|r| r.task_id == s.task_id && r.sample == s.sample)?;
                    Some((judge_score(row, criterion)?, s.score?))
                })
                .collect();
            let a = benchmarks::alchemy::summary::agreement(&pairs);
            CriterionAgreement {
                criterion: criterion.to_string(),
                n: a.n,
                pearson: a.pearson,
                pearson_p: a.pearson_p,
                spearman: a.spearman,
                spearman_p: a.spearman_p,
            }
        })
        .collect()
}

fn load(state: &AppState, id: &str) -> Result<HumanScores, ApiError> {
    run_of(state, id)?;
    let rows = rows_of(state, id)?;
    let scores = state
        .storage
        .human_scores(id)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(HumanScores {
        agreement: agreement(&rows, &scores),
        scores,
    })
}

/// `GET /api/runs/{id}/human-scores`: the scores given and the agreement with the judge.
#[utoipa::path(get, path = "/api/runs/{id}/human-scores",
    params(("id" = String, Path, description = "run id")),
    responses((status = 200, body = HumanScores), (status = 404, body = wire::ApiError)))]
pub async fn get_human_scores(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<HumanScores>, ApiError> {
    load(&state, &id).map(Json)
}

/// `PUT /api/runs/{id}/human-scores`: set (or with `score: null`, remove) one score; answers
/// the scores and agreement as they now stand.
#[utoipa::path(put, path = "/api/runs/{id}/human-scores", request_body = HumanScore,
    params(("id" = String, Path, description = "run id")),
    responses((status = 200, body = HumanScores),
    (status = 400, description = "not a criterion, a result of the run, or a score 1-5 in steps of 0.5",
        body = wire::ApiError),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 404, body = wire::ApiError)))]
pub async fn put_human_score(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Json(score): Json<HumanScore>,
) -> Result<Json<HumanScores>, ApiError> {
    authorise(&state, &headers)?;
    if !KEYS.contains(&score.criterion.as_str()) {
        return Err(ApiError::bad(format!(
            "criterion {:?} is not one of the judge's: {}",
            score.criterion,
            KEYS.join(", ")
        )));
    }
    if let Some(s) = score.score {
        if !(1.0..=5.0).contains(&s) || (s * 2.0).fract() != 0.0 {
            return Err(ApiError::bad(format!(
                "score {s}: give 1 to 5 in steps of 0.5"
            )));
        }
    }
    run_of(&state, &id)?;
    let rows = rows_of(&state, &id)?;
    if !rows
        .iter()
        .any(|r| r.task_id == score.task_id && r.sample == score.sample)
    {
        return Err(ApiError::bad(format!(
            "run {id} has no result for task {} sample {}",
            score.task_id, score.sample
        )));
    }
    state
        .storage
        .put_human_score(&id, &score)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    load(&state, &id).map(Json)
}

/// `GET /api/runs/{id}/human-scores.csv`: one line per result and criterion with the judge's
/// and the person's score.
#[utoipa::path(get, path = "/api/runs/{id}/human-scores.csv",
    params(("id" = String, Path, description = "run id")),
    responses((status = 200, description = "text/csv"), (status = 404, body = wire::ApiError)))]
pub async fn human_scores_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let scores = load(&state, &id)?.scores;
    let rows = rows_of(&state, &id)?;
    let mut body = String::from("task_id,sample,criterion,judge,person\n");
    for r in &rows {
        for criterion in KEYS {
            let person = scores
                .iter()
                .find(|s| {
                    s.task_id == r.task_id && s.sample == r.sample && s.criterion == criterion
                })
                .and_then(|s| s.score);
            let num = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
            body.push_str(&format!(
                "{},{},{},{},{}\n",
                csv_field(&r.task_id),
                r.sample,
                criterion,
                num(judge_score(r, criterion)),
                num(person)
            ));
        }
    }
    Ok(([(header::CONTENT_TYPE, "text/csv")], body).into_response())
}
