//! Persistent state in SQLite (the embedded default): one database file in the data dir,
//! WAL mode, schema versioned by migrations that run on open.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

mod cases;
mod human;
mod rooms;
mod runs;

pub use cases::{CaseQuota, CaseStored};
pub use rooms::{AttemptAdded, NewAttempt, RoomLimits, RoomOpened, RoomRecord};
pub use runs::Unfinished;

/// The database file name inside the data dir.
pub const DB_FILE: &str = "atomworld.sqlite3";

/// Errors opening or migrating the database.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The data directory could not be created.
    #[error("cannot create data dir {path}: {source}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A schema migration failed.
    #[error("schema migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),
}

/// Errors importing a cache file.
#[derive(Debug, thiserror::Error)]
pub enum CacheImportError {
    /// A line is not a cache entry.
    #[error("line {0}: {1}")]
    Line(usize, String),
    /// SQLite refused the entry.
    #[error("database error: {0}")]
    Storage(String),
}

/// Schema migrations, applied in order; never edit a released one, append a new one.
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            "CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO server_meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));",
        ),
        M::up(
            "CREATE TABLE llm_cache (
                 key TEXT PRIMARY KEY,
                 model TEXT NOT NULL,
                 response TEXT NOT NULL,
                 input_tokens INTEGER NOT NULL,
                 output_tokens INTEGER NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE TABLE llm_spend (day INTEGER PRIMARY KEY, cost_usd REAL NOT NULL);
             CREATE TABLE runs (
                 id TEXT PRIMARY KEY,
                 spec TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE TABLE results (
                 run_id TEXT NOT NULL REFERENCES runs(id),
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 action TEXT NOT NULL,
                 prompt TEXT NOT NULL,
                 response TEXT,
                 verdict TEXT,
                 label TEXT,
                 error TEXT,
                 input_tokens INTEGER NOT NULL DEFAULT 0,
                 output_tokens INTEGER NOT NULL DEFAULT 0,
                 cost_usd REAL NOT NULL DEFAULT 0,
                 latency_ms INTEGER NOT NULL DEFAULT 0,
                 cached INTEGER NOT NULL DEFAULT 0,
                 PRIMARY KEY (run_id, task_id, sample));
             CREATE TABLE cases (
                 id TEXT PRIMARY KEY,
                 body TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));",
        ),
        // Automatic resumes at start-up and the progress each found (a run that made none
        // since the last one is not resumed again); who stored a case and its size (quotas);
        // a row the health check writes (and rolls back) to prove the database is writable.
        M::up(
            "ALTER TABLE runs ADD COLUMN startup_resumes INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE runs ADD COLUMN done_at_resume INTEGER;
             ALTER TABLE cases ADD COLUMN client TEXT;
             ALTER TABLE cases ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
             UPDATE cases SET bytes = length(body);
             CREATE INDEX cases_by_client ON cases(client);
             CREATE INDEX cases_by_age ON cases(created_at);
             CREATE TABLE health_probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL);",
        ),
        // Each result keeps its task (for AtomWorld: input, action prompt, target), so a
        // row opens as a case without taking the prompt apart.
        M::up(
            "ALTER TABLE results ADD COLUMN task TEXT;
             ALTER TABLE results ADD COLUMN outcome TEXT;",
        ),
        // An agent's rounds (MatTools' self-reflection: prompts, retrieved entries, runs,
        // critiques), kept with the result they led to.
        M::up("ALTER TABLE results ADD COLUMN transcript TEXT;"),
        // A person's own 1-5 scores next to the judge's (AlchemyBench's human scoring).
        M::up(
            "CREATE TABLE human_scores (
                 run_id TEXT NOT NULL,
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 criterion TEXT NOT NULL,
                 score REAL NOT NULL,
                 updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 PRIMARY KEY (run_id, task_id, sample, criterion));",
        ),
        // Workshop rooms (kept until the host's expiry, or closed by the host) and the
        // attempts sent to them, scored by the server; deleting a room deletes its attempts.
        M::up(
            "CREATE TABLE rooms (
                 code TEXT PRIMARY KEY,
                 name TEXT NOT NULL,
                 host_hash TEXT NOT NULL,
                 client TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 expires_at TEXT NOT NULL);
             CREATE INDEX rooms_by_client ON rooms(client);
             CREATE INDEX rooms_by_expiry ON rooms(expires_at);
             CREATE TABLE room_attempts (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 room TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                 who TEXT NOT NULL,
                 kind TEXT NOT NULL,
                 model TEXT,
                 side TEXT NOT NULL,
                 action TEXT NOT NULL,
                 input_cif TEXT NOT NULL,
                 prompt TEXT NOT NULL,
                 answer TEXT NOT NULL,
                 label TEXT NOT NULL,
                 max_dist REAL,
                 same_crystal INTEGER,
                 bytes INTEGER NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE INDEX room_attempts_by_room ON room_attempts(room, id);",
        ),
        // Embeddings computed through the gateway, one row per (endpoint, model, dimensions,
        // text): the vector as little-endian f32.
        M::up(
            "CREATE TABLE embedding_cache (
                 key TEXT PRIMARY KEY,
                 model TEXT NOT NULL,
                 dim INTEGER NOT NULL,
                 vector BLOB NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));",
        ),
        // What preparing a run's tasks cost before its first answer (AlchemyBench's
        // embeddings), counted in the run's spend.
        M::up("ALTER TABLE runs ADD COLUMN preparation_cost_usd REAL NOT NULL DEFAULT 0;"),
        // Several people may score the same results (their agreement is AlchemyBench's
        // ICC(3,k)): a score belongs to its scorer too; earlier scores are the unnamed one's.
        M::up(
            "CREATE TABLE human_scores_by_scorer (
                 run_id TEXT NOT NULL,
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 criterion TEXT NOT NULL,
                 scorer TEXT NOT NULL DEFAULT '',
                 score REAL NOT NULL,
                 updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 PRIMARY KEY (run_id, task_id, sample, criterion, scorer));
             INSERT INTO human_scores_by_scorer (run_id, task_id, sample, criterion, score, updated_at)
                 SELECT run_id, task_id, sample, criterion, score, updated_at FROM human_scores;
             DROP TABLE human_scores;
             ALTER TABLE human_scores_by_scorer RENAME TO human_scores;",
        ),
        // What a list of runs shows of each (suite, model, agent, condition, repeats, how
        // many tasks were given) and its status, in a table of its own: a run's row holds its
        // whole spec, and SQLite reads every overflow page of a long spec to reach the
        // columns after it, so a list read from `runs` would read every task list.
        M::up(
            "CREATE TABLE run_briefs (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE REFERENCES runs(id),
                 suite TEXT NOT NULL,
                 brief TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created_at TEXT NOT NULL);
             CREATE INDEX run_briefs_by_suite ON run_briefs(suite, seq);
             INSERT INTO run_briefs (id, suite, brief, status, created_at)
                 SELECT id, json_extract(spec, '$.suite'), json_object(
                     'model', json_extract(spec, '$.model'),
                     'agent', json_extract(spec, '$.agent'),
                     'condition', json_extract(spec, '$.condition'),
                     'samples', json_extract(spec, '$.samples'),
                     'given_tasks', json_array_length(spec, '$.tasks.tasks')),
                     status, created_at
                 FROM runs WHERE json_extract(spec, '$.suite') IS NOT NULL ORDER BY rowid;",
        ),
        // Who may stop or resume a run started over HTTP: the digest of the token its
        // starter was given. Runs without a row (the CLI's) are the operator's.
        M::up(
            "CREATE TABLE run_owners (
                 id TEXT PRIMARY KEY REFERENCES runs(id),
                 token_digest TEXT NOT NULL);",
        ),
    ])
}

/// A handle to the database, cheap to clone and safe to share between tasks.
#[derive(Clone)]
pub struct Storage {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl Storage {
    /// Open (creating if needed) the database in `data_dir` and bring its schema up to date.
    pub fn open(data_dir: &Path) -> Result<Self, StorageError> {
        std::fs::create_dir_all(data_dir).map_err(|source| StorageError::DataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let path = data_dir.join(DB_FILE);
        let mut conn = Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations().to_latest(&mut conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// Where the database file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version (number of applied migrations).
    pub fn schema_version(&self) -> Result<i64, StorageError> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Whether a write goes through: a row is written in a transaction that is then rolled
    /// back (a read-only file or a full disk fails here, not at the next real write).
    pub fn check_writable(&self) -> Result<(), StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT OR REPLACE INTO health_probe (id, at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
            [],
        )?;
        tx.rollback()?;
        Ok(())
    }

    /// The SQLite journal mode in force (`wal` for the embedded default).
    pub fn journal_mode(&self) -> Result<String, StorageError> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?)
    }

    /// A cached response: (text, input tokens, output tokens).
    pub fn cache_get(&self, key: &str) -> Result<Option<(String, u64, u64)>, StorageError> {
        let conn = self.lock();
        let mut st = conn.prepare_cached(
            "SELECT response, input_tokens, output_tokens FROM llm_cache WHERE key = ?1",
        )?;
        let mut rows = st.query([key])?;
        Ok(match rows.next()? {
            Some(r) => Some((
                r.get(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)? as u64,
            )),
            None => None,
        })
    }

    /// Store a response in the cache (first answer wins: repeated runs stay identical).
    pub fn cache_put(
        &self,
        key: &str,
        model: &str,
        response: &str,
        input_tokens: u64,
        output_tokens: u64,
    ) -> Result<(), StorageError> {
        self.lock().execute(
            "INSERT OR IGNORE INTO llm_cache (key, model, response, input_tokens, output_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                key,
                model,
                response,
                input_tokens as i64,
                output_tokens as i64
            ],
        )?;
        Ok(())
    }

    /// The cached embeddings of `keys`, in order (`None` where there is none, or where the
    /// stored blob is not a whole number of `f32`s).
    pub fn embeddings_get(&self, keys: &[String]) -> Result<Vec<Option<Vec<f32>>>, StorageError> {
        let conn = self.lock();
        let mut st = conn.prepare_cached("SELECT vector FROM embedding_cache WHERE key = ?1")?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let mut rows = st.query([key])?;
            out.push(match rows.next()? {
                Some(r) => {
                    let blob: Vec<u8> = r.get(0)?;
                    (blob.len().is_multiple_of(4) && !blob.is_empty()).then(|| {
                        blob.chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            .collect()
                    })
                }
                None => None,
            });
        }
        Ok(out)
    }

    /// Store embeddings `(key, vector)` of `model` in one transaction (first one wins).
    pub fn embeddings_put(
        &self,
        model: &str,
        entries: &[(String, Vec<f32>)],
    ) -> Result<(), StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR IGNORE INTO embedding_cache (key, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (key, v) in entries {
                let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                st.execute(rusqlite::params![key, model, v.len() as i64, blob])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Add to the spend of day `day` (days since the Unix epoch, UTC).
    pub fn add_spend(&self, day: i64, cost_usd: f64) -> Result<(), StorageError> {
        self.lock().execute(
            "INSERT INTO llm_spend (day, cost_usd) VALUES (?1, ?2)
             ON CONFLICT(day) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd",
            rusqlite::params![day, cost_usd],
        )?;
        Ok(())
    }

    /// The spend of day `day` in USD.
    pub fn spend_on(&self, day: i64) -> Result<f64, StorageError> {
        let conn = self.lock();
        let v: Option<f64> = conn
            .query_row(
                "SELECT cost_usd FROM llm_spend WHERE day = ?1",
                [day],
                |r| r.get(0),
            )
            .ok();
        Ok(v.unwrap_or(0.0))
    }

    /// Export the response cache as JSON lines (for replaying a workshop offline): the
    /// answers, then the embeddings (`"kind": "embedding"`, the vector as base64 of its
    /// little-endian `f32`s).
    pub fn cache_export(&self) -> Result<Vec<String>, StorageError> {
        use base64::Engine;
        let conn = self.lock();
        let mut st = conn.prepare(
            "SELECT key, model, response, input_tokens, output_tokens FROM llm_cache ORDER BY key",
        )?;
        let rows = st.query_map([], |r| {
            Ok(serde_json::json!({
                "key": r.get::<_, String>(0)?,
                "model": r.get::<_, String>(1)?,
                "response": r.get::<_, String>(2)?,
                "input_tokens": r.get::<_, i64>(3)?,
                "output_tokens": r.get::<_, i64>(4)?,
            })
            .to_string())
        })?;
        let mut lines = rows.collect::<Result<Vec<_>, _>>()?;
        let mut st = conn.prepare("SELECT key, model, vector FROM embedding_cache ORDER BY key")?;
        let rows = st.query_map([], |r| {
            Ok(serde_json::json!({
                "kind": "embedding",
                "key": r.get::<_, String>(0)?,
                "model": r.get::<_, String>(1)?,
                "vector": base64::engine::general_purpose::STANDARD.encode(r.get::<_, Vec<u8>>(2)?),
            })
            .to_string())
        })?;
        for line in rows {
            lines.push(line?);
        }
        Ok(lines)
    }

    /// Import cache lines written by [`Storage::cache_export`]; returns how many were new.
    /// Existing entries are kept (first answer wins).
    pub fn cache_import(&self, lines: &[String]) -> Result<usize, CacheImportError> {
        let mut added = 0;
        let conn = self.lock();
        for (n, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| CacheImportError::Line(n + 1, e.to_string()))?;
            let field = |k: &str| {
                v[k].as_str()
                    .map(str::to_string)
                    .ok_or_else(|| CacheImportError::Line(n + 1, format!("missing \"{k}\"")))
            };
            if v["kind"] == "embedding" {
                use base64::Engine;
                let (key, model, vector) = (field("key")?, field("model")?, field("vector")?);
                let blob = base64::engine::general_purpose::STANDARD
                    .decode(vector)
                    .ok()
                    .filter(|b| !b.is_empty() && b.len().is_multiple_of(4))
                    .ok_or_else(|| {
                        CacheImportError::Line(n + 1, "\"vector\" is not base64 of f32s".into())
                    })?;
                added += conn
                    .execute(
                        "INSERT OR IGNORE INTO embedding_cache (key, model, dim, vector)
                         VALUES (?1, ?2, ?3, ?4)",
                        rusqlite::params![key, model, (blob.len() / 4) as i64, blob],
                    )
                    .map_err(|e| CacheImportError::Storage(e.to_string()))?;
                continue;
            }
            let (key, model, response) = (field("key")?, field("model")?, field("response")?);
            let tokens = |k: &str| v[k].as_i64().unwrap_or(0);
            added += conn
                .execute(
                    "INSERT OR IGNORE INTO llm_cache (key, model, response, input_tokens, output_tokens)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![key, model, response, tokens("input_tokens"), tokens("output_tokens")],
                )
                .map_err(|e| CacheImportError::Storage(e.to_string()))?;
        }
        Ok(added)
    }

    /// Run a closure with the connection (for the modules that own their tables).
    pub fn with_conn<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StorageError> {
        Ok(f(&self.lock())?)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (each statement is
        // atomic), so a poisoned lock is safe to reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_export_import_round_trip() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = Storage::open(a.path()).unwrap();
        s.cache_put("k1", "m", "answer one", 3, 4).unwrap();
        s.cache_put("k2", "m", "answer two", 5, 6).unwrap();
        let v = vec![0.25f32, -1.5e-7, 3.0];
        s.embeddings_put("e", &[("ek".into(), v.clone())]).unwrap();
        let lines = s.cache_export().unwrap();
        let t = Storage::open(b.path()).unwrap();
        assert_eq!(t.cache_import(&lines).unwrap(), 3);
        assert_eq!(t.cache_import(&lines).unwrap(), 0);
        assert_eq!(t.embeddings_get(&["ek".into()]).unwrap(), vec![Some(v)]);
        let e = t
            .cache_import(&[
                "{\"kind\": \"embedding\", \"key\": \"x\", \"model\": \"e\", \"vector\": \"AAA\"}"
                    .into(),
            ])
            .unwrap_err();
        assert!(e.to_string().contains("base64 of f32s"), "{e}");
        assert_eq!(
            t.cache_get("k2").unwrap(),
            Some(("answer two".into(), 5, 6))
        );
        let e = t.cache_import(&["{\"key\": 1}".into()]).unwrap_err();
        assert!(e.to_string().starts_with("line 1:"), "{e}");
    }

    #[test]
    fn embeddings_round_trip_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path()).unwrap();
        let v = vec![0.1f32, -3.5e-12, f32::MAX];
        s.embeddings_put("m", &[("k".into(), v.clone())]).unwrap();
        s.embeddings_put("m", &[("k".into(), vec![9.0])]).unwrap();
        assert_eq!(
            s.embeddings_get(&["x".into(), "k".into()]).unwrap(),
            vec![None, Some(v)]
        );
    }

    #[test]
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }

    /// Scores given before scorers had names survive the migration as the unnamed scorer's.
    #[test]
    fn human_scores_keep_their_values_when_scorers_get_names() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            migrations().to_version(&mut conn, 9).unwrap();
            conn.execute(
                "INSERT INTO human_scores (run_id, task_id, sample, criterion, score)
                 VALUES ('r', 't', 0, 'overall_score', 4.5)",
                [],
            )
            .unwrap();
        }
        let s = Storage::open(dir.path()).unwrap();
        assert_eq!(s.schema_version().unwrap(), 12);
        let kept = s.human_scores("r").unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!((kept[0].score, kept[0].scorer.as_str()), (Some(4.5), ""));
    }

    /// Runs stored before briefs existed get theirs from their specs.
    #[test]
    fn runs_before_briefs_are_listed_from_their_specs() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            migrations().to_version(&mut conn, 10).unwrap();
            conn.execute(
                "INSERT INTO runs (id, spec, status) VALUES ('run-old', ?1, 'finished')",
                [
                    r#"{"suite":"alchemy","model":"m","samples":2,"concurrency":1,
                     "condition":"K = 5","tasks":{"imported_from":"f","tasks":[{},{},{}]}}"#,
                ],
            )
            .unwrap();
        }
        let s = Storage::open(dir.path()).unwrap();
        let (items, total) = s.list_run_items(None, 10, 0).unwrap();
        assert_eq!(total, 1);
        let r = &items[0];
        assert_eq!(
            (r.id.as_str(), r.suite.as_str(), r.model.as_str()),
            ("run-old", "alchemy", "m")
        );
        assert_eq!(
            (r.samples, r.given_tasks, r.condition.as_deref()),
            (2, Some(3), Some("K = 5"))
        );
        assert_eq!(r.agent, None);
    }

    #[test]
    fn open_creates_wal_database_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(&dir.path().join("nested")).unwrap();
        assert!(s.path().is_file());
        assert_eq!(s.journal_mode().unwrap(), "wal");
        assert_eq!(s.schema_version().unwrap(), 12);
        drop(s);
        let again = Storage::open(&dir.path().join("nested")).unwrap();
        assert_eq!(again.schema_version().unwrap(), 12);
    }
}
