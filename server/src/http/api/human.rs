//! `GET/PUT /api/runs/{id}/human-scores` and `GET /api/runs/{id}/human-scores.csv`: people's
//! own 1-5 scores of an AlchemyBench run's results, each under their name (`?scorer=`), next
//! to the judge's; how a person agrees with the judge (Pearson and Spearman with p-values per
//! criterion over what they scored) and how the people agree among themselves (ICC(3,k)).

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use benchmarks::alchemy::judge::KEYS;
use serde::Deserialize;
use wire::{CriterionAgreement, CriterionConsensus, HumanScore, HumanScores, ResultRow};

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

/// Per criterion, ICC(3,k) among everyone who scored it, over the results all of them scored.
fn consensus(all: &[HumanScore]) -> Vec<CriterionConsensus> {
    KEYS.iter()
        .map(|criterion| {
            let mine: Vec<&HumanScore> = all
                .iter()
                .filter(|s| s.criterion == *criterion && s.score.is_some())
                .collect();
            let mut people: Vec<&str> = mine.iter().map(|s| s.scorer.as_str()).collect();
            people.sort_unstable();
            people.dedup();
            let mut results: Vec<(&str, u32)> = mine
                .iter()
                .map(|s| (s.task_id.as_str(), s.sample))
                .collect();
            results.sort_unstable();
            results.dedup();
            let matrix: Vec<Vec<f64>> = results
                .iter()
                .filter_map(|(task, sample)| {
                    people
                        .iter()
                        .map(|p| {
                            mine.iter()
                                .find(|s| {
                                    s.scorer == *p && s.task_id == *task && s.sample == *sample
                                })
                                .and_then(|s| s.score)
                        })
                        .collect::<Option<Vec<f64>>>()
                })
                .collect();
            CriterionConsensus {
                criterion: criterion.to_string(),
                raters: people.len(),
                items: matrix.len(),
                icc3k: benchmarks::alchemy::summary::icc3k(&matrix),
            }
        })
        .collect()
}

/// Who scores: `?scorer=NAME` (absent: the unnamed scorer).
#[derive(Debug, Default, Deserialize)]
pub struct ScorerQuery {
    #[serde(default)]
    scorer: String,
}

/// The most characters of a scorer's name.
const MAX_SCORER_CHARS: usize = 40;

fn load(state: &AppState, id: &str, scorer: &str) -> Result<HumanScores, ApiError> {
    run_of(state, id)?;
    let rows = rows_of(state, id)?;
    let all = state
        .storage
        .human_scores(id)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mut scorers: Vec<(String, usize)> = Vec::new();
    for s in &all {
        match scorers.iter_mut().find(|(n, _)| *n == s.scorer) {
            Some((_, count)) => *count += 1,
            None => scorers.push((s.scorer.clone(), 1)),
        }
    }
    let scores: Vec<HumanScore> = all.iter().filter(|s| s.scorer == scorer).cloned().collect();
    Ok(HumanScores {
        agreement: agreement(&rows, &scores),
        consensus: consensus(&all),
        scorers,
        scores,
    })
}

/// `GET /api/runs/{id}/human-scores`: the scores given and the agreement with the judge.
#[utoipa::path(get, path = "/api/runs/{id}/human-scores",
    params(("id" = String, Path, description = "run id"),
        ("scorer" = Option<String>, Query, description = "whose scores (absent: the unnamed scorer's)")),
    responses((status = 200, body = HumanScores), (status = 404, body = wire::ApiError)))]
pub async fn get_human_scores(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ScorerQuery>,
) -> Result<Json<HumanScores>, ApiError> {
    load(&state, &id, q.scorer.trim()).map(Json)
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
    Json(mut score): Json<HumanScore>,
) -> Result<Json<HumanScores>, ApiError> {
    authorise(&state, &headers)?;
    score.scorer = score.scorer.trim().to_string();
    if score.scorer.chars().count() > MAX_SCORER_CHARS || score.scorer.chars().any(char::is_control)
    {
        return Err(ApiError::bad(format!(
            "a scorer's name has at most {MAX_SCORER_CHARS} characters and no control characters"
        )));
    }
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
    load(&state, &id, &score.scorer).map(Json)
}

/// `GET /api/runs/{id}/human-scores.csv`: one line per result and criterion with the judge's
/// and the person's (`?scorer=`) score.
#[utoipa::path(get, path = "/api/runs/{id}/human-scores.csv",
    params(("id" = String, Path, description = "run id"),
        ("scorer" = Option<String>, Query, description = "whose scores (absent: the unnamed scorer's)")),
    responses((status = 200, description = "text/csv"), (status = 404, body = wire::ApiError)))]
pub async fn human_scores_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ScorerQuery>,
) -> Result<Response, ApiError> {
    let scores = load(&state, &id, q.scorer.trim())?.scores;
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
