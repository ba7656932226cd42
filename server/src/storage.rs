//! Persistent state in SQLite (the embedded default): one database file in the data dir,
//! WAL mode, schema versioned by migrations that run on open.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

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

/// Schema migrations, applied in order; never edit a released one, append a new one.
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![M::up(
        "CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO server_meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));",
    )])
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

    /// The SQLite journal mode in force (`wal` for the embedded default).
    pub fn journal_mode(&self) -> Result<String, StorageError> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?)
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
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }

    #[test]
    fn open_creates_wal_database_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(&dir.path().join("nested")).unwrap();
        assert!(s.path().is_file());
        assert_eq!(s.journal_mode().unwrap(), "wal");
        assert_eq!(s.schema_version().unwrap(), 1);
        drop(s);
        let again = Storage::open(&dir.path().join("nested")).unwrap();
        assert_eq!(again.schema_version().unwrap(), 1);
    }
}
