//! Workshop rooms and their attempts: a room has a short code, a hashed host token, the
//! client that opened it (quotas) and an expiry the host chose; deleting a room deletes its
//! attempts (`ON DELETE CASCADE`). Expired rooms are never read and are swept on every
//! write and by the server's sweeper.

use std::collections::BTreeMap;

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use wire::{
    AttemptDetail, AttemptKind, AttemptView, LabelCount, RoomActionRow, RoomCell, RoomInfo,
    RoomSummary,
};

use super::{Storage, StorageError};

/// Limits of the room store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoomLimits {
    /// Open rooms one client address may have.
    pub max_per_client: u64,
    /// Open rooms in all.
    pub max_total: u64,
    /// Attempts one room takes.
    pub max_attempts: u64,
    /// Bytes of attempts (task and answer) one room takes.
    pub max_room_bytes: u64,
    /// Longest time a host may keep a room, in hours.
    pub max_ttl_hours: u32,
}

impl Default for RoomLimits {
    fn default() -> Self {
        Self {
            max_per_client: 20,
            max_total: 1_000,
            max_attempts: 2_000,
            max_room_bytes: 64 * 1024 * 1024,
            max_ttl_hours: 7 * 24,
        }
    }
}

/// What opening a room did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomOpened {
    /// Opened; it expires then (UTC, RFC 3339).
    Opened(String),
    /// Another room has this code (draw another).
    CodeTaken,
    /// The client has as many open rooms as it may: what was exceeded.
    ClientQuota(String),
    /// The store has as many rooms as it may: what was exceeded.
    StoreFull(String),
}

/// An attempt as stored: what was sent and the server's own verdict on it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAttempt {
    /// The participant's nickname.
    pub who: String,
    /// How the answer was made.
    pub kind: AttemptKind,
    /// The model named, if any.
    pub model: Option<String>,
    /// The task's action.
    pub action: String,
    /// The task's input CIF.
    pub input_cif: String,
    /// The task's action sentence.
    pub prompt: String,
    /// The answer.
    pub answer: String,
    /// The server's label.
    pub label: String,
    /// The match's largest normalised distance.
    pub max_dist: Option<f64>,
    /// The second opinion, when computed.
    pub same_crystal: Option<bool>,
}

impl NewAttempt {
    /// The column the attempt is counted in: hand edits are the people's, a model call is
    /// its model's, a pasted answer is its named model's or "pasted".
    pub fn side(&self) -> String {
        match (self.kind, &self.model) {
            (AttemptKind::HandEdit, _) => PEOPLE.to_string(),
            (AttemptKind::Model | AttemptKind::Pasted, Some(m)) => m.clone(),
            (AttemptKind::Model | AttemptKind::Pasted, None) => PASTED.to_string(),
        }
    }
}

/// The column of hand edits.
pub const PEOPLE: &str = "people";
/// The column of pasted answers that name no model.
pub const PASTED: &str = "pasted";

/// What adding an attempt did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptAdded {
    /// Stored under this id.
    Added(i64),
    /// No such room (or it expired).
    NoRoom,
    /// The room is full: what was exceeded.
    RoomFull(String),
}

/// A room as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomRecord {
    /// What anyone with the code may see.
    pub info: RoomInfo,
    /// The SHA-256 of the host token (hex).
    pub host_hash: String,
}

/// The SQL timestamp of now.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
/// How many attempts the summary lists.
const LATEST: i64 = 50;

fn view_of(r: &Row<'_>) -> rusqlite::Result<AttemptView> {
    let kind: String = r.get(2)?;
    Ok(AttemptView {
        id: r.get(0)?,
        who: r.get(1)?,
        kind: AttemptKind::from_name(&kind).unwrap_or(AttemptKind::Pasted),
        model: r.get(3)?,
        side: r.get(4)?,
        action: r.get(5)?,
        label: r.get(6)?,
        max_dist: r.get(7)?,
        created_at: r.get(8)?,
    })
}

const VIEW_COLUMNS: &str = "id, who, kind, model, side, action, label, max_dist, created_at";

impl Storage {
    /// Delete expired rooms and their attempts; how many rooms went.
    pub fn sweep_rooms(&self) -> Result<usize, StorageError> {
        self.with_conn(|c| c.execute(&format!("DELETE FROM rooms WHERE expires_at <= {NOW}"), []))
    }

    /// Open room `code` for `ttl_hours` hours, opened by `client` (an opaque key), within
    /// `limits`.
    pub fn create_room(
        &self,
        code: &str,
        name: &str,
        host_hash: &str,
        client: &str,
        ttl_hours: u32,
        limits: &RoomLimits,
    ) -> Result<RoomOpened, StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        tx.execute(&format!("DELETE FROM rooms WHERE expires_at <= {NOW}"), [])?;
        let taken = tx
            .query_row("SELECT 1 FROM rooms WHERE code = ?1", [code], |_| Ok(()))
            .optional()?
            .is_some();
        if taken {
            return Ok(RoomOpened::CodeTaken);
        }
        let mine: i64 = tx.query_row(
            "SELECT COUNT(*) FROM rooms WHERE client = ?1",
            [client],
            |r| r.get(0),
        )?;
        if mine as u64 >= limits.max_per_client {
            return Ok(RoomOpened::ClientQuota(format!(
                "{} open rooms per address",
                limits.max_per_client
            )));
        }
        let all: i64 = tx.query_row("SELECT COUNT(*) FROM rooms", [], |r| r.get(0))?;
        if all as u64 >= limits.max_total {
            return Ok(RoomOpened::StoreFull(format!(
                "{} open rooms in all",
                limits.max_total
            )));
        }
        let expires_at: String = tx.query_row(
            "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '+' || ?1 || ' hours')",
            [ttl_hours],
            |r| r.get(0),
        )?;
        tx.execute(
            "INSERT INTO rooms (code, name, host_hash, client, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![code, name, host_hash, client, expires_at],
        )?;
        tx.commit()?;
        Ok(RoomOpened::Opened(expires_at))
    }

    /// Room `code`, unless it is missing or expired.
    pub fn room(&self, code: &str) -> Result<Option<RoomRecord>, StorageError> {
        self.with_conn(|c| {
            c.query_row(
                &format!(
                    "SELECT code, name, expires_at, host_hash FROM rooms
                     WHERE code = ?1 AND expires_at > {NOW}"
                ),
                [code],
                |r| {
                    Ok(RoomRecord {
                        info: RoomInfo {
                            code: r.get(0)?,
                            name: r.get(1)?,
                            expires_at: r.get(2)?,
                        },
                        host_hash: r.get(3)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Delete room `code` and its attempts; whether there was one.
    pub fn close_room(&self, code: &str) -> Result<bool, StorageError> {
        self.with_conn(|c| Ok(c.execute("DELETE FROM rooms WHERE code = ?1", [code])? > 0))
    }

    /// Add an attempt to room `code`, within `limits`.
    pub fn add_attempt(
        &self,
        code: &str,
        a: &NewAttempt,
        limits: &RoomLimits,
    ) -> Result<AttemptAdded, StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        tx.execute(&format!("DELETE FROM rooms WHERE expires_at <= {NOW}"), [])?;
        let alive = tx
            .query_row("SELECT 1 FROM rooms WHERE code = ?1", [code], |_| Ok(()))
            .optional()?
            .is_some();
        if !alive {
            return Ok(AttemptAdded::NoRoom);
        }
        let bytes = (a.input_cif.len() + a.prompt.len() + a.answer.len() + a.who.len()) as u64;
        let (n, used): (i64, i64) = tx.query_row(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM room_attempts WHERE room = ?1",
            [code],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if n as u64 >= limits.max_attempts {
            return Ok(AttemptAdded::RoomFull(format!(
                "{} attempts per room",
                limits.max_attempts
            )));
        }
        if used as u64 + bytes > limits.max_room_bytes {
            return Ok(AttemptAdded::RoomFull(format!(
                "{} bytes of attempts per room",
                limits.max_room_bytes
            )));
        }
        tx.execute(
            "INSERT INTO room_attempts (room, who, kind, model, side, action, input_cif, prompt,
                 answer, label, max_dist, same_crystal, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                code,
                a.who,
                a.kind.name(),
                a.model,
                a.side(),
                a.action,
                a.input_cif,
                a.prompt,
                a.answer,
                a.label,
                a.max_dist,
                a.same_crystal,
                bytes as i64
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(AttemptAdded::Added(id))
    }

    /// Attempt `id` of room `code` in full.
    pub fn room_attempt(&self, code: &str, id: i64) -> Result<Option<AttemptDetail>, StorageError> {
        self.with_conn(|c| {
            c.query_row(
                &format!(
                    "SELECT {VIEW_COLUMNS}, input_cif, prompt, answer FROM room_attempts
                     WHERE room = ?1 AND id = ?2"
                ),
                params![code, id],
                |r| {
                    Ok(AttemptDetail {
                        attempt: view_of(r)?,
                        input_cif: r.get(9)?,
                        prompt: r.get(10)?,
                        answer: r.get(11)?,
                    })
                },
            )
            .optional()
        })
    }

    /// The tally of room `room`: per action and column, the failure labels, the latest
    /// attempts.
    pub fn room_summary(&self, room: RoomInfo) -> Result<RoomSummary, StorageError> {
        self.with_conn(|c| {
            let code = room.code.clone();
            let mut st = c.prepare(
                "SELECT action, side, COUNT(*), SUM(label = 'Success') FROM room_attempts
                 WHERE room = ?1 GROUP BY action, side",
            )?;
            let cells: Vec<(String, String, i64, i64)> = st
                .query_map([&code], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<Result<_, _>>()?;
            let mut sides: Vec<String> = cells.iter().map(|c| c.1.clone()).collect();
            sides.sort_by_key(|s| {
                (
                    match s.as_str() {
                        PEOPLE => 0,
                        PASTED => 1,
                        _ => 2,
                    },
                    s.clone(),
                )
            });
            sides.dedup();
            let mut by_action: BTreeMap<String, BTreeMap<String, (u64, u64)>> = BTreeMap::new();
            for (action, side, n, ok) in &cells {
                by_action
                    .entry(action.clone())
                    .or_default()
                    .insert(side.clone(), (*n as u64, *ok as u64));
            }
            let actions = by_action
                .into_iter()
                .map(|(action, row)| RoomActionRow {
                    action,
                    cells: sides
                        .iter()
                        .map(|side| {
                            let (attempts, successes) = row.get(side).copied().unwrap_or((0, 0));
                            RoomCell {
                                side: side.clone(),
                                attempts,
                                successes,
                            }
                        })
                        .collect(),
                })
                .collect();
            let mut st = c.prepare(
                "SELECT label, COUNT(*) AS n FROM room_attempts
                 WHERE room = ?1 AND label <> 'Success' GROUP BY label ORDER BY n DESC, label",
            )?;
            let failures = st
                .query_map([&code], |r| {
                    Ok(LabelCount {
                        label: r.get(0)?,
                        count: r.get::<_, i64>(1)? as u64,
                    })
                })?
                .collect::<Result<_, _>>()?;
            let mut st = c.prepare(&format!(
                "SELECT {VIEW_COLUMNS} FROM room_attempts WHERE room = ?1 ORDER BY id DESC LIMIT ?2"
            ))?;
            let latest = st
                .query_map(params![code, LATEST], view_of)?
                .collect::<Result<_, _>>()?;
            let (total, participants): (i64, i64) = c.query_row(
                "SELECT COUNT(*), COUNT(DISTINCT who) FROM room_attempts WHERE room = ?1",
                [&code],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            Ok(RoomSummary {
                room,
                total: total as u64,
                participants: participants as u64,
                sides,
                actions,
                failures,
                latest,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(who: &str, kind: AttemptKind, label: &str) -> NewAttempt {
        NewAttempt {
            who: who.into(),
            kind,
            model: (kind == AttemptKind::Model).then(|| "m1".to_string()),
            action: "remove".into(),
            input_cif: "data_x".into(),
            prompt: "Remove the atom at index 0 from the cif file.".into(),
            answer: "<cif></cif>".into(),
            label: label.into(),
            max_dist: None,
            same_crystal: None,
        }
    }

    #[test]
    fn quotas_tally_and_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path()).unwrap();
        let limits = RoomLimits {
            max_per_client: 1,
            max_total: 2,
            max_attempts: 3,
            ..RoomLimits::default()
        };
        assert!(matches!(
            s.create_room("AAAAAA", "a", "h", "c1", 1, &limits).unwrap(),
            RoomOpened::Opened(_)
        ));
        assert_eq!(
            s.create_room("AAAAAA", "a", "h", "c2", 1, &limits).unwrap(),
            RoomOpened::CodeTaken
        );
        assert!(matches!(
            s.create_room("BBBBBB", "b", "h", "c1", 1, &limits).unwrap(),
            RoomOpened::ClientQuota(_)
        ));
        s.create_room("BBBBBB", "b", "h", "c2", 1, &limits).unwrap();
        assert!(matches!(
            s.create_room("CCCCCC", "c", "h", "c3", 1, &limits).unwrap(),
            RoomOpened::StoreFull(_)
        ));
        for (who, kind, label) in [
            ("ann", AttemptKind::HandEdit, "Success"),
            ("bob", AttemptKind::Pasted, "StructureMismatch"),
            ("cy", AttemptKind::Model, "Success"),
        ] {
            assert!(matches!(
                s.add_attempt("AAAAAA", &attempt(who, kind, label), &limits)
                    .unwrap(),
                AttemptAdded::Added(_)
            ));
        }
        assert!(matches!(
            s.add_attempt(
                "AAAAAA",
                &attempt("d", AttemptKind::Pasted, "Success"),
                &limits
            )
            .unwrap(),
            AttemptAdded::RoomFull(_)
        ));
        let info = s.room("AAAAAA").unwrap().unwrap().info;
        let sum = s.room_summary(info).unwrap();
        assert_eq!(sum.sides, ["people", "pasted", "m1"]);
        assert_eq!(sum.total, 3);
        assert_eq!(sum.actions.len(), 1);
        let cells: Vec<(u64, u64)> = sum.actions[0]
            .cells
            .iter()
            .map(|c| (c.attempts, c.successes))
            .collect();
        assert_eq!(cells, [(1, 1), (1, 0), (1, 1)]);
        assert_eq!(sum.failures[0].label, "StructureMismatch");
        assert_eq!(sum.latest[0].who, "cy");
        let id = sum.latest[0].id;
        assert!(s.room_attempt("AAAAAA", id).unwrap().is_some());
        assert!(s.room_attempt("BBBBBB", id).unwrap().is_none());
        // An expired room is gone, with its attempts, at the next sweep.
        s.with_conn(|c| {
            c.execute(
                "UPDATE rooms SET expires_at = '2000-01-01T00:00:00Z' WHERE code = 'AAAAAA'",
                [],
            )
        })
        .unwrap();
        assert!(s.room("AAAAAA").unwrap().is_none());
        assert_eq!(s.sweep_rooms().unwrap(), 1);
        let left: i64 = s
            .with_conn(|c| c.query_row("SELECT COUNT(*) FROM room_attempts", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(left, 0);
        assert!(s.close_room("BBBBBB").unwrap());
        assert!(!s.close_room("BBBBBB").unwrap());
    }
}
