//! Persistent state: SQLite in the data dir (the embedded default) or a PostgreSQL database
//! several instances share, chosen by [`Location`]. The tables' modules (cache, runs, cases,
//! rooms, human scores) write their queries once over [`engine::Db`]; each engine brings its
//! schema up to date on open.

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod batches;
mod cache;
mod cases;
pub mod engine;
mod human;
mod leases;
mod rooms;
mod runs;
mod sandbox_jobs;
mod signals;
mod slices;
mod spend;
pub mod testing;

pub use batches::{BatchItem, OpenBatch};
pub use cache::CacheImportError;
pub use cases::{CaseQuota, CaseStored};
pub use engine::sqlite::DB_FILE;
pub use leases::Renewed;
pub use rooms::{AttemptAdded, NewAttempt, RoomLimits, RoomOpened, RoomRecord};
pub use runs::Unfinished;
pub use sandbox_jobs::{ClaimedJob, JobOutcome, WORKER_ALIVE_SECS};
pub use signals::concerns as signal_concerns;
pub use spend::{Ledger, SpendClaim};

use engine::{params, Db};

/// Errors of the store.
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
    /// A schema migration of SQLite failed.
    #[error("schema migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    /// PostgreSQL refused an operation (or could not be reached).
    #[error("PostgreSQL: {}", postgres_detail(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A database URL that does not read.
    #[error("database URL {url}: {reason}")]
    Url {
        /// The URL, its password hidden.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The PostgreSQL database was migrated by a newer build than this one.
    #[error(
        "the database has {applied} schema migrations, this build knows {known}: run a newer build"
    )]
    NewerSchema {
        /// Migrations applied.
        applied: i64,
        /// Migrations this build has.
        known: i64,
    },
    /// The thread driving a PostgreSQL connection could not start or stopped.
    #[error("PostgreSQL connection thread: {0}")]
    Thread(String),
    /// A column holds another kind of value than the code reads.
    #[error("column {index}: expected {expected}, found {found}")]
    Column {
        /// The column's position.
        index: usize,
        /// What was expected.
        expected: &'static str,
        /// What was there.
        found: &'static str,
    },
    /// A PostgreSQL column of a type the store does not use.
    #[error("column {column} has type {ty}, which the store does not read")]
    ColumnType {
        /// The column.
        column: String,
        /// Its type.
        ty: String,
    },
    /// A query that must answer one row (an aggregate) answered none.
    #[error("no row from {0}…")]
    NoRow(String),
    /// A JSON document stored in a column does not read (or could not be written).
    #[error("stored JSON: {0}")]
    Json(String),
}

/// PostgreSQL's own message (the server's, where there is one: `tokio_postgres::Error`'s
/// display says only "db error").
fn postgres_detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// Where the store lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// SQLite, file [`DB_FILE`] in this directory.
    Sqlite(PathBuf),
    /// PostgreSQL at this URL.
    Postgres(String),
}

impl Location {
    /// The store named by `--database` (a `postgres://` or `postgresql://` URL), else SQLite
    /// in `data_dir`.
    pub fn new(database: Option<&str>, data_dir: &Path) -> Result<Self, StorageError> {
        match database.map(str::trim).filter(|d| !d.is_empty()) {
            None => Ok(Location::Sqlite(data_dir.to_path_buf())),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Location::Postgres(url.to_string()))
            }
            Some(other) => Err(StorageError::Url {
                url: other.split('@').next_back().unwrap_or("").to_string(),
                reason: "expected postgres://user:password@host:port/database (leave it out \
                         for SQLite in the data dir)"
                    .into(),
            }),
        }
    }
}

/// A handle to the database, cheap to clone and safe to share between tasks.
#[derive(Clone)]
pub struct Storage {
    db: Arc<Db>,
    signals: Arc<signals::Signals>,
}

impl Storage {
    /// Open (creating if needed) the SQLite database in `data_dir` and bring its schema up
    /// to date.
    pub fn open(data_dir: &Path) -> Result<Self, StorageError> {
        Self::open_at(&Location::Sqlite(data_dir.to_path_buf()))
    }

    /// Open the store at `location` and bring its schema up to date.
    pub fn open_at(location: &Location) -> Result<Self, StorageError> {
        let db = match location {
            Location::Sqlite(dir) => Db::Sqlite(engine::sqlite::Sqlite::open(dir)?),
            Location::Postgres(url) => {
                Db::Postgres(Box::new(engine::postgres::Postgres::connect(url)?))
            }
        };
        Ok(Self {
            db: Arc::new(db),
            signals: signals::Signals::new(),
        })
    }

    /// Hear which rooms take attempts from now on (through any instance on this store):
    /// each message is a room's code, or [`signals::ANY_ROOM`] when some may have been
    /// missed.
    pub fn room_signals(&self) -> tokio::sync::broadcast::Receiver<String> {
        let db = self.db.clone();
        self.signals.subscribe(move |forward| {
            if let Db::Postgres(pg) = &*db {
                pg.listen(signals::ROOMS_CHANNEL, forward);
            }
        })
    }

    /// Where the store is, as a person may be shown it (a file path, or the URL without its
    /// password).
    pub fn describe(&self) -> String {
        match &*self.db {
            Db::Sqlite(db) => db.path().display().to_string(),
            Db::Postgres(db) => db.shown_url().to_string(),
        }
    }

    /// The engine: `sqlite` or `postgres`.
    pub fn engine_name(&self) -> &'static str {
        self.db.engine_name()
    }

    /// Whether other instances may use this store too (PostgreSQL); SQLite's file is this
    /// process's alone.
    pub fn is_shared(&self) -> bool {
        matches!(*self.db, Db::Postgres(_))
    }

    /// The schema version (number of the engine's migrations applied).
    pub fn schema_version(&self) -> Result<i64, StorageError> {
        self.db.schema_version()
    }

    /// Whether a write goes through: a row is written in a transaction that is then rolled
    /// back (a read-only file, a full disk or a read-only replica fails here, not at the
    /// next real write).
    pub fn check_writable(&self) -> Result<(), StorageError> {
        self.db.rehearse(|c| {
            c.execute(
                "INSERT INTO health_probe (id, at) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET at = excluded.at",
                params![engine::now()],
            )
        })?;
        Ok(())
    }

    /// Refuse (or accept again) every write through this handle, as a maintenance switch
    /// (a backup in progress): reads go on, and the health check reports the database
    /// unavailable for writes.
    pub fn set_read_only(&self, on: bool) -> Result<(), StorageError> {
        self.db.set_read_only(on)
    }

    /// The engine underneath, for the tables' modules.
    fn db(&self) -> &Db {
        &self.db
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::engine::sqlite::migrations;
    use rusqlite::Connection;

    #[test]
    fn migrations_are_valid() {
        assert!(migrations::all().validate().is_ok());
    }

    #[test]
    fn locations_are_sqlite_or_a_postgres_url() {
        let dir = Path::new("/data");
        assert_eq!(
            Location::new(None, dir).unwrap(),
            Location::Sqlite(dir.into())
        );
        assert_eq!(
            Location::new(Some("postgresql://u@h/db"), dir).unwrap(),
            Location::Postgres("postgresql://u@h/db".into())
        );
        let e = Location::new(Some("mysql://u:pw@h/db"), dir)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected postgres://") && !e.contains("pw"),
            "{e}"
        );
    }

    #[test]
    fn the_health_probe_writes_nothing() {
        testing::each_engine(|s| {
            s.check_writable().unwrap();
            let left = s
                .db()
                .query_one("SELECT COUNT(*) FROM health_probe", &[])
                .unwrap();
            assert_eq!(left.int(0).unwrap(), 0);
        });
    }

    /// Scores given before scorers had names survive the migration as the unnamed scorer's.
    #[test]
    fn human_scores_keep_their_values_when_scorers_get_names() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            migrations::all().to_version(&mut conn, 9).unwrap();
            conn.execute(
                "INSERT INTO human_scores (run_id, task_id, sample, criterion, score)
                 VALUES ('r', 't', 0, 'overall_score', 4.5)",
                [],
            )
            .unwrap();
        }
        let s = Storage::open(dir.path()).unwrap();
        assert_eq!(s.schema_version().unwrap(), 19);
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
            migrations::all().to_version(&mut conn, 10).unwrap();
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
        let Db::Sqlite(db) = s.db() else {
            panic!("SQLite expected")
        };
        assert!(db.path().is_file());
        assert_eq!(db.journal_mode().unwrap(), "wal");
        assert_eq!(s.schema_version().unwrap(), 19);
        drop(s);
        let again = Storage::open(&dir.path().join("nested")).unwrap();
        assert_eq!(again.schema_version().unwrap(), 19);
    }

    #[test]
    fn postgres_is_migrated_once_and_reopens() {
        testing::each_postgres(|url| {
            let s = Storage::open_at(&Location::Postgres(url.into())).unwrap();
            let known = engine::postgres::known_migrations();
            assert_eq!(s.schema_version().unwrap(), known);
            drop(s);
            let again = Storage::open_at(&Location::Postgres(url.into())).unwrap();
            assert_eq!(again.schema_version().unwrap(), known);
            assert_eq!(again.engine_name(), "postgres");
        });
    }
}
