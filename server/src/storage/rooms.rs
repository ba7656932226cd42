//! Workshop rooms and their attempts: a room has a short code, a hashed host token, the
//! client that opened it (quotas) and an expiry the host chose; deleting a room deletes its
//! attempts (`ON DELETE CASCADE`). Expired rooms are never read and are swept on every
//! write and by the server's sweeper.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use wire::{
    AttemptDetail, AttemptKind, AttemptView, LabelCount, RoomActionRow, RoomCell, RoomInfo,
    RoomSummary,
};

use super::engine::{now, now_plus, params, Row};
use super::signals::ROOMS_CHANNEL;
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

/// How many attempts the summary lists.
const LATEST: i64 = 50;

const VIEW_COLUMNS: &str = "id, who, kind, model, side, action, label, max_dist, created_at";

/// An attempt as listed (columns in [`VIEW_COLUMNS`]' order).
fn view_of(r: &Row) -> Result<AttemptView, StorageError> {
    Ok(AttemptView {
        id: r.int(0)?,
        who: r.text(1)?,
        kind: AttemptKind::from_name(&r.text(2)?).unwrap_or(AttemptKind::Pasted),
        model: r.opt_text(3)?,
        side: r.text(4)?,
        action: r.text(5)?,
        label: r.text(6)?,
        max_dist: r.opt_real(7)?,
        created_at: r.text(8)?,
    })
}

/// Deletes the rooms (and their attempts) expired by now.
const SWEEP: &str = "DELETE FROM rooms WHERE expires_at <= ?1";

impl Storage {
    /// Delete expired rooms and their attempts; how many rooms went.
    pub fn sweep_rooms(&self) -> Result<usize, StorageError> {
        let n = self.db().execute(SWEEP, params![now()])?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
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
        self.db().tx(|c| {
            c.execute(SWEEP, params![now()])?;
            if c.query_opt("SELECT 1 FROM rooms WHERE code = ?1", params![code])?
                .is_some()
            {
                return Ok(RoomOpened::CodeTaken);
            }
            let mine = c
                .query_one(
                    "SELECT COUNT(*) FROM rooms WHERE client = ?1",
                    params![client],
                )?
                .count(0)?;
            if mine >= limits.max_per_client {
                return Ok(RoomOpened::ClientQuota(format!(
                    "{} open rooms per address",
                    limits.max_per_client
                )));
            }
            let all = c.query_one("SELECT COUNT(*) FROM rooms", &[])?.count(0)?;
            if all >= limits.max_total {
                return Ok(RoomOpened::StoreFull(format!(
                    "{} open rooms in all",
                    limits.max_total
                )));
            }
            let expires_at = now_plus(i64::from(ttl_hours) * 3_600);
            c.execute(
                "INSERT INTO rooms (code, name, host_hash, client, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![code, name, host_hash, client, now(), &expires_at],
            )?;
            Ok(RoomOpened::Opened(expires_at))
        })
    }

    /// Room `code`, unless it is missing or expired.
    pub fn room(&self, code: &str) -> Result<Option<RoomRecord>, StorageError> {
        let row = self.db().query_opt(
            "SELECT code, name, expires_at, host_hash FROM rooms
             WHERE code = ?1 AND expires_at > ?2",
            params![code, now()],
        )?;
        row.map(|r| {
            Ok(RoomRecord {
                info: RoomInfo {
                    code: r.text(0)?,
                    name: r.text(1)?,
                    expires_at: r.text(2)?,
                },
                host_hash: r.text(3)?,
            })
        })
        .transpose()
    }

    /// Delete room `code` and its attempts; whether there was one.
    pub fn close_room(&self, code: &str) -> Result<bool, StorageError> {
        let closed = self
            .db()
            .execute("DELETE FROM rooms WHERE code = ?1", params![code])?
            > 0;
        if closed {
            self.announce_room(code);
        }
        Ok(closed)
    }

    /// Add an attempt to room `code`, within `limits`.
    pub fn add_attempt(
        &self,
        code: &str,
        a: &NewAttempt,
        limits: &RoomLimits,
    ) -> Result<AttemptAdded, StorageError> {
        let bytes = (a.input_cif.len() + a.prompt.len() + a.answer.len() + a.who.len()) as u64;
        let added = self.db().tx(|c| {
            c.execute(SWEEP, params![now()])?;
            if c.query_opt("SELECT 1 FROM rooms WHERE code = ?1", params![code])?
                .is_none()
            {
                return Ok(AttemptAdded::NoRoom);
            }
            let used = c.query_one(
                "SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM room_attempts
                 WHERE room = ?1",
                params![code],
            )?;
            if used.count(0)? >= limits.max_attempts {
                return Ok(AttemptAdded::RoomFull(format!(
                    "{} attempts per room",
                    limits.max_attempts
                )));
            }
            if used.count(1)? + bytes > limits.max_room_bytes {
                return Ok(AttemptAdded::RoomFull(format!(
                    "{} bytes of attempts per room",
                    limits.max_room_bytes
                )));
            }
            let id = c
                .query_one(
                    "INSERT INTO room_attempts (room, who, kind, model, side, action, input_cif,
                         prompt, answer, label, max_dist, same_crystal, bytes, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                     RETURNING id",
                    params![
                        code,
                        &a.who,
                        a.kind.name(),
                        a.model.as_deref(),
                        a.side(),
                        &a.action,
                        &a.input_cif,
                        &a.prompt,
                        &a.answer,
                        &a.label,
                        a.max_dist,
                        a.same_crystal,
                        bytes,
                        now()
                    ],
                )?
                .int(0)?;
            Ok(AttemptAdded::Added(id))
        })?;
        if matches!(added, AttemptAdded::Added(_)) {
            self.announce_room(code);
        }
        Ok(added)
    }

    /// Wake whoever waits on room `code`'s tally, on this instance and (PostgreSQL) on the
    /// others. A signal that fails to go out only delays a dashboard to its next read.
    fn announce_room(&self, code: &str) {
        self.signals.announce(code);
        if self.is_shared() {
            let sent = self.db().execute(
                &format!("SELECT pg_notify('{ROOMS_CHANNEL}', ?1)"),
                params![code],
            );
            if let Err(e) = sent {
                tracing::warn!("telling other instances about room {code}: {e}");
            }
        }
    }

    /// Attempt `id` of room `code` in full.
    pub fn room_attempt(&self, code: &str, id: i64) -> Result<Option<AttemptDetail>, StorageError> {
        let row = self.db().query_opt(
            &format!(
                "SELECT {VIEW_COLUMNS}, input_cif, prompt, answer FROM room_attempts
                 WHERE room = ?1 AND id = ?2"
            ),
            params![code, id],
        )?;
        row.map(|r| {
            Ok(AttemptDetail {
                attempt: view_of(&r)?,
                input_cif: r.text(9)?,
                prompt: r.text(10)?,
                answer: r.text(11)?,
            })
        })
        .transpose()
    }

    /// The tally of room `room`: per action and column, the failure labels, the latest
    /// attempts.
    pub fn room_summary(&self, room: RoomInfo) -> Result<RoomSummary, StorageError> {
        let code = room.code.clone();
        // One transaction: the tally, the failures and the latest attempts agree.
        self.db().tx(|db| {
            let mut cells = Vec::new();
            for r in db.query(
                "SELECT action, side, COUNT(*),
                    CAST(SUM(CASE WHEN label = 'Success' THEN 1 ELSE 0 END) AS BIGINT)
             FROM room_attempts WHERE room = ?1 GROUP BY action, side",
                params![&code],
            )? {
                cells.push((r.text(0)?, r.text(1)?, r.count(2)?, r.count(3)?));
            }
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
            for (action, side, n, ok) in cells {
                by_action.entry(action).or_default().insert(side, (n, ok));
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
            let failures = db
                .query(
                    "SELECT label, COUNT(*) AS n FROM room_attempts
                 WHERE room = ?1 AND label <> 'Success' GROUP BY label ORDER BY n DESC, label",
                    params![&code],
                )?
                .iter()
                .map(|r| {
                    Ok(LabelCount {
                        label: r.text(0)?,
                        count: r.count(1)?,
                    })
                })
                .collect::<Result<_, StorageError>>()?;
            let latest = db
                .query(
                    &format!(
                        "SELECT {VIEW_COLUMNS} FROM room_attempts WHERE room = ?1
                     ORDER BY id DESC LIMIT ?2"
                    ),
                    params![&code, LATEST],
                )?
                .iter()
                .map(view_of)
                .collect::<Result<_, _>>()?;
            let totals = db.query_one(
                "SELECT COUNT(*), COUNT(DISTINCT who) FROM room_attempts WHERE room = ?1",
                params![&code],
            )?;
            Ok(RoomSummary {
                room: room.clone(),
                total: totals.count(0)?,
                participants: totals.count(1)?,
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
    use std::time::Duration;

    use super::super::testing::each_engine;
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

    /// The next signal heard within `within` that is not [`ANY_ROOM`] (a listener says that
    /// when it connects).
    fn next_room(
        heard: &mut tokio::sync::broadcast::Receiver<String>,
        within: std::time::Duration,
    ) -> Option<String> {
        let until = std::time::Instant::now() + within;
        while std::time::Instant::now() < until {
            match heard.try_recv() {
                Ok(code) if code != super::super::signals::ANY_ROOM => return Some(code),
                Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        None
    }

    #[test]
    fn attempts_and_closes_are_signalled_to_every_instance() {
        let limits = RoomLimits::default();
        each_engine(|s| {
            s.create_room("DDDDDD", "d", "h", "c1", 1, &limits).unwrap();
            let mut heard = s.room_signals();
            s.add_attempt(
                "DDDDDD",
                &attempt("ann", AttemptKind::HandEdit, "Success"),
                &limits,
            )
            .unwrap();
            assert_eq!(
                next_room(&mut heard, Duration::from_secs(2)).as_deref(),
                Some("DDDDDD")
            );
            // A refused attempt changes nothing and says nothing.
            let _ = s.add_attempt(
                "NOROOM",
                &attempt("bob", AttemptKind::Pasted, "Success"),
                &limits,
            );
            assert!(s.close_room("DDDDDD").unwrap());
            assert_eq!(
                next_room(&mut heard, Duration::from_secs(2)).as_deref(),
                Some("DDDDDD")
            );
        });
        // Two instances on one PostgreSQL database: B's attempt wakes A's listener.
        super::super::testing::each_postgres(|url| {
            let location = super::super::Location::Postgres(url.into());
            let a = Storage::open_at(&location).unwrap();
            let b = Storage::open_at(&location).unwrap();
            a.create_room("EEEEEE", "e", "h", "c1", 1, &limits).unwrap();
            let mut heard = a.room_signals();
            // The listener says ANY_ROOM once it listens; only then can it hear B.
            let until = std::time::Instant::now() + Duration::from_secs(5);
            while heard.try_recv().as_deref() != Ok(super::super::signals::ANY_ROOM) {
                assert!(
                    std::time::Instant::now() < until,
                    "the listener never connected"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            let sent = std::time::Instant::now();
            b.add_attempt(
                "EEEEEE",
                &attempt("ann", AttemptKind::HandEdit, "Success"),
                &limits,
            )
            .unwrap();
            assert_eq!(
                next_room(&mut heard, Duration::from_secs(1)).as_deref(),
                Some("EEEEEE")
            );
            eprintln!("A heard B's attempt after {:?}", sent.elapsed());
        });
    }

    #[test]
    fn quotas_tally_and_expiry() {
        each_engine(|s| {
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
            s.execute_for_test(
                "UPDATE rooms SET expires_at = '2000-01-01T00:00:00Z' WHERE code = 'AAAAAA'",
            );
            assert!(s.room("AAAAAA").unwrap().is_none());
            assert_eq!(s.sweep_rooms().unwrap(), 1);
            let left = s.int_for_test("SELECT COUNT(*) FROM room_attempts");
            assert_eq!(left, 0);
            assert!(s.close_room("BBBBBB").unwrap());
            assert!(!s.close_room("BBBBBB").unwrap());
        });
    }
}
