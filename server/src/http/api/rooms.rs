//! `/api/rooms`: workshop rooms. A host opens a room (behind the passcode, when one is set)
//! and keeps its host token; participants send attempts with the room's code; the server
//! scores every attempt itself with the benchmark's evaluator (a verdict sent by a browser
//! is never read) and the host reads the tally with the token. Rooms expire when the host
//! said, or when the host closes them.

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use benchmarks::atomworld::evaluate::{evaluate_with_same_crystal, parse_target, scoring_scale};
use rand::Rng;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast::error::RecvError;
use wire::{
    AttemptDetail, AttemptKind, AttemptScored, RoomAttempt, RoomCreate, RoomCreated, RoomInfo,
    RoomSummary,
};

use super::{authorise, ApiError};
use crate::cpu::CpuPool;
use crate::http::AppState;
use crate::storage::{signal_concerns, AttemptAdded, NewAttempt, RoomOpened, RoomRecord};

/// The letters of a room code: no 0/O, 1/I/L, so a code read aloud or off a screen is
/// typed right.
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Characters in a room code.
pub const CODE_LEN: usize = 6;
/// Longest room name (characters).
pub const MAX_NAME_CHARS: usize = 80;
/// Longest nickname (characters).
pub const MAX_WHO_CHARS: usize = 40;
/// Longest model name (characters).
pub const MAX_MODEL_CHARS: usize = 80;
/// Largest input CIF or answer of an attempt (bytes).
pub const MAX_ATTEMPT_TEXT_BYTES: usize = 256 * 1024;
/// Longest action sentence (bytes).
pub const MAX_PROMPT_BYTES: usize = 4 * 1024;
/// The header that carries the host token.
pub const HOST_TOKEN_HEADER: &str = "x-room-token";

fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(
        format!("atomworld-room-host:{token}").as_bytes(),
    ))
}

/// A code as typed (any case, spaces or dashes) in its stored form, if it can be one.
fn normalise(code: &str) -> Option<String> {
    let c: String = code
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (c.len() == CODE_LEN && c.bytes().all(|b| CODE_ALPHABET.contains(&b))).then_some(c)
}

fn new_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

fn new_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    hex::encode(bytes)
}

/// A short single-line text: trimmed, 1 to `max` characters, no control characters.
fn short_text(what: &str, text: &str, max: usize) -> Result<String, ApiError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ApiError::bad(format!("give a {what}")));
    }
    if t.chars().count() > max {
        return Err(ApiError::bad(format!(
            "a {what} may have at most {max} characters"
        )));
    }
    if t.chars().any(char::is_control) {
        return Err(ApiError::bad(format!("a {what} is one line of text")));
    }
    Ok(t.to_string())
}

fn storage_error(e: crate::storage::StorageError) -> ApiError {
    ApiError::internal(e.to_string())
}

/// A request's client address, when the server knows it.
type ClientAddr = Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>;

/// The live room `code` (404 when it is missing, expired or not a code). Each code asked for
/// that names no open room counts against `client`'s allowance of unknown codes; once spent,
/// lookups are answered 429 until it refills, so codes cannot be found by trying them.
fn live_room(state: &AppState, code: &str, client: &ClientAddr) -> Result<RoomRecord, ApiError> {
    let ip = client.as_ref().map(|c| c.0 .0.ip());
    if let Err(wait) = state.room_misses.check(ip) {
        return Err(ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_unknown_rooms",
            format!(
                "this address asked for more than {} room codes that name no open room in \
                 the last minute; check the code and try again in {wait} s",
                state.room_misses.per_minute()
            ),
        ));
    }
    let missing = || {
        let _ = state.room_misses.take(ip);
        ApiError::not_found("no open room with this code (it may have expired)")
    };
    let Some(code) = normalise(code) else {
        return Err(missing());
    };
    state
        .storage
        .room(&code)
        .map_err(storage_error)?
        .ok_or_else(missing)
}

/// The live room `code`, if the request carries its host token.
fn hosted_room(
    state: &AppState,
    code: &str,
    headers: &HeaderMap,
    client: &ClientAddr,
) -> Result<RoomRecord, ApiError> {
    let room = live_room(state, code, client)?;
    let given = headers
        .get(HOST_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    // Hashes compared whole: equal-length strings, no early exit on a prefix.
    let ok = hash_token(given)
        .bytes()
        .zip(room.host_hash.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0;
    if given.is_empty() || !ok {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "host_token_required",
            "only the room's host (the browser that opened it) may do this".into(),
        ));
    }
    Ok(room)
}

/// `POST /api/rooms`: open a room for `ttl_hours` hours.
#[utoipa::path(post, path = "/api/rooms", request_body = RoomCreate, responses(
    (status = 201, body = RoomCreated),
    (status = 400, description = "no name, or a time outside 1 hour to 7 days", body = wire::ApiError),
    (status = 401, description = "passcode required", body = wire::ApiError),
    (status = 429, description = "rate limited, or this address has as many open rooms as it may",
     body = wire::ApiError),
    (status = 507, description = "the server has as many open rooms as it may", body = wire::ApiError)))]
pub async fn create_room(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    Json(body): Json<RoomCreate>,
) -> Result<(StatusCode, Json<RoomCreated>), ApiError> {
    authorise(&state, &headers)?;
    let name = short_text("room name", &body.name, MAX_NAME_CHARS)?;
    let max = state.rooms.max_ttl_hours;
    if body.ttl_hours == 0 || body.ttl_hours > max {
        return Err(ApiError::bad(format!(
            "a room is kept from 1 to {max} hours; {} asked",
            body.ttl_hours
        )));
    }
    let who = client.map_or_else(|| "unknown".to_string(), |c| c.0 .0.ip().to_string());
    let who = hex::encode(Sha256::digest(
        format!("atomworld-room-client:{who}").as_bytes(),
    ));
    let token = new_token();
    let host_hash = hash_token(&token);
    for _ in 0..8 {
        let code = new_code();
        let opened = state
            .storage
            .create_room(
                &code,
                &name,
                &host_hash,
                &who[..16],
                body.ttl_hours,
                &state.rooms,
            )
            .map_err(storage_error)?;
        match opened {
            RoomOpened::Opened(expires_at) => {
                return Ok((
                    StatusCode::CREATED,
                    Json(RoomCreated {
                        code,
                        host_token: token,
                        expires_at,
                    }),
                ))
            }
            RoomOpened::CodeTaken => continue,
            RoomOpened::ClientQuota(what) => {
                return Err(ApiError(
                    StatusCode::TOO_MANY_REQUESTS,
                    "room_quota",
                    format!(
                        "this address has as many open rooms as it may ({what}); close one first"
                    ),
                ))
            }
            RoomOpened::StoreFull(what) => {
                return Err(ApiError(
                    StatusCode::INSUFFICIENT_STORAGE,
                    "room_store_full",
                    format!(
                        "the server has as many open rooms as it may ({what}); ask the operator"
                    ),
                ))
            }
        }
    }
    Err(ApiError::internal("no free room code after 8 draws"))
}

/// `GET /api/rooms/{code}`: a room's name and expiry (what a participant sees on joining).
#[utoipa::path(get, path = "/api/rooms/{code}",
    params(("code" = String, Path, description = "the room's code")),
    responses((status = 200, body = RoomInfo),
    (status = 404, description = "no open room with this code", body = wire::ApiError)))]
pub async fn get_room(
    State(state): State<AppState>,
    client: ClientAddr,
    Path(code): Path<String>,
) -> Result<Json<RoomInfo>, ApiError> {
    live_room(&state, &code, &client).map(|r| Json(r.info))
}

/// `DELETE /api/rooms/{code}`: close the room now, deleting it and every attempt in it
/// (host token required).
#[utoipa::path(delete, path = "/api/rooms/{code}",
    params(("code" = String, Path, description = "the room's code"),
           ("X-Room-Token" = String, Header, description = "the host token")),
    responses((status = 204, description = "closed and deleted"),
    (status = 403, description = "not the host", body = wire::ApiError),
    (status = 404, description = "no open room with this code", body = wire::ApiError)))]
pub async fn close_room(
    State(state): State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Result<StatusCode, ApiError> {
    let room = hosted_room(&state, &code, &headers, &client)?;
    state
        .storage
        .close_room(&room.info.code)
        .map_err(storage_error)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/rooms/{code}/attempts`: send an attempt. The server scores it (the benchmark's
/// evaluator, reference reading, under the match budget) and answers its verdict.
#[utoipa::path(post, path = "/api/rooms/{code}/attempts", request_body = RoomAttempt,
    params(("code" = String, Path, description = "the room's code")),
    responses((status = 201, body = AttemptScored),
    (status = 400, description = "no nickname, a task that cannot be scored, or too long",
     body = wire::ApiError),
    (status = 404, description = "no open room with this code", body = wire::ApiError),
    (status = 429, description = "rate limited", body = wire::ApiError),
    (status = 507, description = "the room is full", body = wire::ApiError)))]
pub async fn post_attempt(
    State(state): State<AppState>,
    client: ClientAddr,
    Path(code): Path<String>,
    Json(body): Json<RoomAttempt>,
) -> Result<(StatusCode, Json<AttemptScored>), ApiError> {
    let room = live_room(&state, &code, &client)?;
    let who = short_text("nickname", &body.who, MAX_WHO_CHARS)?;
    let model = match body.model.as_deref().map(str::trim) {
        Some(m) if !m.is_empty() => Some(short_text("model name", m, MAX_MODEL_CHARS)?),
        _ => None,
    };
    if body.kind == AttemptKind::Model && model.is_none() {
        return Err(ApiError::bad("a model's attempt names its model"));
    }
    for (what, text, max) in [
        ("input CIF", &body.input_cif, MAX_ATTEMPT_TEXT_BYTES),
        ("answer", &body.answer, MAX_ATTEMPT_TEXT_BYTES),
        ("action sentence", &body.prompt, MAX_PROMPT_BYTES),
    ] {
        if text.len() > max {
            return Err(ApiError::bad(format!(
                "the {what} has {} bytes; at most {max} are taken",
                text.len()
            )));
        }
    }
    // The budget grows with the task's target (resolved on the pool: the cost of a task's
    // size falls on its own slot).
    let base = Duration::from_secs(state.gateway.config().limits.match_budget_secs);
    let (input, prompt, answer) = (
        body.input_cif.clone(),
        body.prompt.clone(),
        body.answer.clone(),
    );
    // Each participant's attempts share the pool fairly with everyone else's.
    let participant = format!("room:{code}:{who}");
    let client = crate::cpu::Client {
        name: &participant,
        max_waiting: crate::cpu::MAX_WAITING,
    };
    // The task first (its target, within one budget), then the answer within the budget its
    // target's size gives.
    let resolved = CpuPool::global()
        .run_within_for(Some(client), base, move |_| {
            let resolved = benchmarks::atomworld::task::resolve(&input, &prompt, None)
                .map_err(|e| e.to_string())?;
            let target = parse_target(&resolved.target_cif).map_err(|e| e.to_string())?;
            Ok::<_, String>((resolved.group().to_string(), resolved.comparison(), target))
        })
        .await
        .map_err(ApiError::from)?
        .map_err(|e| ApiError::bad(format!("this task cannot be scored: {e}")))?;
    let (group, comparison, target) = resolved;
    let budget = base * scoring_scale(target.structure.len());
    let client = crate::cpu::Client {
        name: &participant,
        max_waiting: crate::cpu::MAX_WAITING,
    };
    let scored = CpuPool::global()
        .run_within_for(Some(client), budget, move |interrupt| {
            let verdict = evaluate_with_same_crystal(&target, &answer, comparison, interrupt);
            Ok::<_, String>((group, verdict))
        })
        .await
        .map_err(ApiError::from)?
        .map_err(|e| ApiError::bad(format!("this task cannot be scored: {e}")))?;
    let (action, verdict) = scored;
    let attempt = NewAttempt {
        who,
        kind: body.kind,
        model,
        action: action.clone(),
        input_cif: body.input_cif,
        prompt: body.prompt,
        answer: body.answer,
        label: verdict.label.name().to_string(),
        max_dist: verdict.max_dist,
        same_crystal: verdict.same_crystal.map(|s| s.fit),
    };
    let added = state
        .storage
        .add_attempt(&room.info.code, &attempt, &state.rooms)
        .map_err(storage_error)?;
    match added {
        AttemptAdded::Added(id) => Ok((
            StatusCode::CREATED,
            Json(AttemptScored {
                id,
                action,
                label: attempt.label,
                max_dist: attempt.max_dist,
                same_crystal: attempt.same_crystal,
            }),
        )),
        AttemptAdded::NoRoom => Err(ApiError::not_found(
            "the room closed while the attempt was scored",
        )),
        AttemptAdded::RoomFull(what) => Err(ApiError(
            StatusCode::INSUFFICIENT_STORAGE,
            "room_full",
            format!("this room is full ({what}); the host can open another"),
        )),
    }
}

/// How long a summary asked with `?after=` waits for a new attempt before it answers as it
/// stands (a dashboard then asks again at once).
pub const SUMMARY_WAIT: Duration = Duration::from_secs(20);

/// `?after=N`: answer once the room holds other than N attempts (at most [`SUMMARY_WAIT`]).
#[derive(Debug, Default, Deserialize)]
pub struct SummaryQuery {
    after: Option<u64>,
}

/// `GET /api/rooms/{code}/summary`: the live tally (host token required). With `?after=N`
/// (the `total` the dashboard shows) it waits until an attempt arrives, through this
/// instance or any other on the same database, so a dashboard is current within moments
/// without asking every second.
#[utoipa::path(get, path = "/api/rooms/{code}/summary",
    params(("code" = String, Path, description = "the room's code"),
           ("X-Room-Token" = String, Header, description = "the host token"),
           ("after" = Option<u64>, Query, description = "wait (up to 20 s) until the room holds other than this many attempts")),
    responses((status = 200, body = RoomSummary),
    (status = 403, description = "not the host", body = wire::ApiError),
    (status = 404, description = "no open room with this code", body = wire::ApiError)))]
pub async fn room_summary(
    State(state): State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    Path(code): Path<String>,
    Query(q): Query<SummaryQuery>,
) -> Result<Json<RoomSummary>, ApiError> {
    let room = hosted_room(&state, &code, &headers, &client)?;
    // Hear signals before reading, so an attempt landing between the two is not missed.
    let mut signals = state.storage.room_signals();
    let summary = read_summary(&state, room.info.clone()).await?;
    let Some(after) = q.after.filter(|after| *after == summary.total) else {
        return Ok(Json(summary));
    };
    let deadline = tokio::time::Instant::now() + SUMMARY_WAIT;
    let code = room.info.code.clone();
    loop {
        match tokio::time::timeout_at(deadline, signals.recv()).await {
            // The wait ran out, or no signal can come any more: as it stands.
            Err(_) | Ok(Err(RecvError::Closed)) => return Ok(Json(summary)),
            Ok(Ok(heard)) if !signal_concerns(&heard, &code) => continue,
            // This room's signal, or a lag (some were missed): read again.
            Ok(_) => {}
        }
        // Closed meanwhile: the dashboard learns it now.
        let room = hosted_room(&state, &code, &headers, &client)?;
        let now = read_summary(&state, room.info).await?;
        if now.total != after {
            return Ok(Json(now));
        }
    }
}

/// Room `room`'s tally, read off the runtime's threads.
async fn read_summary(state: &AppState, room: RoomInfo) -> Result<RoomSummary, ApiError> {
    let storage = state.storage.clone();
    tokio::task::spawn_blocking(move || storage.room_summary(room))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(storage_error)
}

/// `GET /api/rooms/{code}/attempts/{id}`: one attempt in full, to open as a case (host
/// token required).
#[utoipa::path(get, path = "/api/rooms/{code}/attempts/{id}",
    params(("code" = String, Path, description = "the room's code"),
           ("id" = i64, Path, description = "the attempt's number"),
           ("X-Room-Token" = String, Header, description = "the host token")),
    responses((status = 200, body = AttemptDetail),
    (status = 403, description = "not the host", body = wire::ApiError),
    (status = 404, description = "no such room or attempt", body = wire::ApiError)))]
pub async fn get_attempt(
    State(state): State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    Path((code, id)): Path<(String, i64)>,
) -> Result<Json<AttemptDetail>, ApiError> {
    let room = hosted_room(&state, &code, &headers, &client)?;
    state
        .storage
        .room_attempt(&room.info.code, id)
        .map_err(storage_error)?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no attempt {id} in this room")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unambiguous_and_read_leniently() {
        for _ in 0..100 {
            let c = new_code();
            assert_eq!(normalise(&c).as_deref(), Some(c.as_str()));
            assert!(!c.contains(['0', 'O', '1', 'I', 'L']));
        }
        assert_eq!(normalise(" abc-def ").as_deref(), Some("ABCDEF"));
        assert_eq!(normalise("ABCDE0"), None);
        assert_eq!(normalise("ABC"), None);
        assert_ne!(new_token(), new_token());
    }
}
