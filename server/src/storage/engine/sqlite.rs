//! SQLite, the embedded default: one file in the data dir, WAL mode, one connection behind
//! a mutex (SQLite serialises writers anyway), schema versioned by `rusqlite_migration`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::{Conn, Row, Value};
use crate::storage::StorageError;

pub(crate) mod migrations;

/// The database file name inside the data dir.
pub const DB_FILE: &str = "atomworld.sqlite3";

/// An open SQLite database.
pub struct Sqlite {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl Sqlite {
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
        migrations::all().to_latest(&mut conn)?;
        Ok(Self {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// Where the database file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The journal mode in force (`wal`).
    pub fn journal_mode(&self) -> Result<String, StorageError> {
        Ok(self
            .lock()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))?)
    }

    pub(super) fn set_read_only(&self, on: bool) -> Result<(), StorageError> {
        Ok(self.lock().pragma_update(None, "query_only", on)?)
    }

    pub(super) fn schema_version(&self) -> Result<i64, StorageError> {
        Ok(self
            .lock()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    pub(super) fn tx<T>(
        &self,
        mut f: impl FnMut(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let out = f(&mut Tx(&tx))?;
        tx.commit()?;
        Ok(out)
    }

    pub(super) fn rehearse<T>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let out = f(&mut Tx(&tx));
        tx.rollback()?;
        out
    }

    pub(super) fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StorageError> {
        Tx(&self.lock()).execute(sql, params)
    }

    pub(super) fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError> {
        Tx(&self.lock()).query(sql, params)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (each statement is
        // atomic, an open transaction rolls back when dropped), so a poisoned lock is safe to
        // reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Statements on a connection (a transaction derefs to one).
struct Tx<'a>(&'a Connection);

impl Conn for Tx<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StorageError> {
        let mut st = self.0.prepare_cached(sql)?;
        let n = st.execute(rusqlite::params_from_iter(params.iter().map(to_sql)))?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError> {
        let mut st = self.0.prepare_cached(sql)?;
        let width = st.column_count();
        let mut rows = st.query(rusqlite::params_from_iter(params.iter().map(to_sql)))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(from_sql(r.get_ref(i)?));
            }
            out.push(Row(values));
        }
        Ok(out)
    }
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Int(x) => V::Integer(*x),
        Value::Real(x) => V::Real(*x),
        Value::Text(x) => V::Text(x.clone()),
        Value::Blob(x) => V::Blob(x.clone()),
    }
}

fn from_sql(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(x) => Value::Int(x),
        ValueRef::Real(x) => Value::Real(x),
        ValueRef::Text(x) => Value::Text(String::from_utf8_lossy(x).into_owned()),
        ValueRef::Blob(x) => Value::Blob(x.to_vec()),
    }
}
