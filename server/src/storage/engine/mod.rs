//! The two database engines behind [`super::Storage`]: SQLite (embedded, the default) and
//! PostgreSQL (shared by several instances). The tables' modules write their SQL once, in the
//! subset both engines read alike (`?N` parameters, `ON CONFLICT`, `RETURNING`, `CAST(… AS
//! BIGINT)` around sums), and read rows as [`Value`]s; each engine keeps its own migrations.

use super::StorageError;

pub mod postgres;
pub mod sqlite;

/// A parameter or a column's value, as both engines store it: integers (booleans too) as
/// 64-bit integers, reals as doubles, text, bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer (or a boolean as 0/1).
    Int(i64),
    /// A double.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "bytes",
        }
    }
}

macro_rules! value_from {
    ($($t:ty => $v:ident $(as $cast:ty)?),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Self {
                Value::$v(x $(as $cast)?)
            }
        }
    )*};
}
value_from!(i64 => Int, u32 => Int as i64, i32 => Int as i64, f64 => Real, String => Text);

impl From<u64> for Value {
    /// Counts and sizes; beyond `i64::MAX` (never reached by a count) saturates.
    fn from(x: u64) -> Self {
        Value::Int(i64::try_from(x).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Value {
    fn from(x: usize) -> Self {
        Value::from(x as u64)
    }
}

impl From<bool> for Value {
    fn from(x: bool) -> Self {
        Value::Int(i64::from(x))
    }
}

impl From<&str> for Value {
    fn from(x: &str) -> Self {
        Value::Text(x.to_string())
    }
}

impl From<&String> for Value {
    fn from(x: &String) -> Self {
        Value::Text(x.clone())
    }
}

impl From<Vec<u8>> for Value {
    fn from(x: Vec<u8>) -> Self {
        Value::Blob(x)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(x: Option<T>) -> Self {
        x.map_or(Value::Null, Into::into)
    }
}

/// Parameters from a list of expressions of any type that converts to [`Value`].
macro_rules! params {
    ($($x:expr),* $(,)?) => {
        &[$($crate::storage::engine::Value::from($x)),*][..]
    };
}
pub(crate) use params;

/// One row of a query's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn at(&self, i: usize) -> Result<&Value, StorageError> {
        self.0.get(i).ok_or(StorageError::Column {
            index: i,
            expected: "a column",
            found: "none",
        })
    }

    fn mismatch(&self, i: usize, expected: &'static str) -> StorageError {
        StorageError::Column {
            index: i,
            expected,
            found: self.0.get(i).map_or("none", Value::kind),
        }
    }

    /// Column `i` as an integer.
    pub fn int(&self, i: usize) -> Result<i64, StorageError> {
        self.opt_int(i)?
            .ok_or_else(|| self.mismatch(i, "an integer"))
    }

    /// Column `i` as an integer or NULL.
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, StorageError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Int(x) => Ok(Some(*x)),
            _ => Err(self.mismatch(i, "an integer")),
        }
    }

    /// Column `i` as a count (an integer that is never negative).
    pub fn count(&self, i: usize) -> Result<u64, StorageError> {
        u64::try_from(self.int(i)?).map_err(|_| self.mismatch(i, "a count"))
    }

    /// Column `i` as a real (an integer column reads as its value).
    pub fn real(&self, i: usize) -> Result<f64, StorageError> {
        self.opt_real(i)?.ok_or_else(|| self.mismatch(i, "a real"))
    }

    /// Column `i` as a real or NULL.
    pub fn opt_real(&self, i: usize) -> Result<Option<f64>, StorageError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Real(x) => Ok(Some(*x)),
            Value::Int(x) => Ok(Some(*x as f64)),
            _ => Err(self.mismatch(i, "a real")),
        }
    }

    /// Column `i` as a boolean stored as 0/1.
    pub fn bool(&self, i: usize) -> Result<bool, StorageError> {
        Ok(self.int(i)? != 0)
    }

    /// Column `i` as a boolean stored as 0/1, or NULL.
    pub fn opt_bool(&self, i: usize) -> Result<Option<bool>, StorageError> {
        Ok(self.opt_int(i)?.map(|x| x != 0))
    }

    /// Column `i` as text.
    pub fn text(&self, i: usize) -> Result<String, StorageError> {
        self.opt_text(i)?.ok_or_else(|| self.mismatch(i, "text"))
    }

    /// Column `i` as text or NULL.
    pub fn opt_text(&self, i: usize) -> Result<Option<String>, StorageError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Text(x) => Ok(Some(x.clone())),
            _ => Err(self.mismatch(i, "text")),
        }
    }

    /// Column `i` as bytes.
    pub fn blob(&self, i: usize) -> Result<Vec<u8>, StorageError> {
        match self.at(i)? {
            Value::Blob(x) => Ok(x.clone()),
            _ => Err(self.mismatch(i, "bytes")),
        }
    }
}

/// What a statement runs on: the database itself or an open transaction.
pub trait Conn {
    /// Run a statement; how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StorageError>;
    /// Run a query; its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError>;
}

impl dyn Conn + '_ {
    /// The first row of a query, if any.
    pub fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, StorageError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row a query must give (an aggregate's).
    pub fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, StorageError> {
        self.query_opt(sql, params)?
            .ok_or(StorageError::NoRow(first_words(sql)))
    }
}

/// The first words of a statement, to name it in an error.
fn first_words(sql: &str) -> String {
    sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ")
}

/// An open database of either engine.
pub enum Db {
    /// SQLite in a file of the data dir.
    Sqlite(sqlite::Sqlite),
    /// A PostgreSQL database (boxed: its connection settings are large).
    Postgres(Box<postgres::Postgres>),
}

impl Db {
    /// Run `f` in one transaction, committed if it returns `Ok`, rolled back otherwise.
    /// PostgreSQL runs it serializable and runs it again (up to a few times) when another
    /// instance's transaction conflicted with it, so `f` must only touch the database.
    pub fn tx<T>(
        &self,
        f: impl FnMut(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        match self {
            Db::Sqlite(db) => db.tx(f),
            Db::Postgres(db) => db.tx(f),
        }
    }

    /// Run `f` in a transaction that is then rolled back, whatever it returns (a rehearsal:
    /// proves a write would go through).
    pub fn rehearse<T>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        match self {
            Db::Sqlite(db) => db.rehearse(f),
            Db::Postgres(db) => db.rehearse(f),
        }
    }

    /// Run one statement outside any transaction of ours; how many rows it changed.
    pub fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StorageError> {
        match self {
            Db::Sqlite(db) => db.execute(sql, params),
            Db::Postgres(db) => db.execute(sql, params),
        }
    }

    /// Run one query; its rows.
    pub fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError> {
        match self {
            Db::Sqlite(db) => db.query(sql, params),
            Db::Postgres(db) => db.query(sql, params),
        }
    }

    /// The first row of a query, if any.
    pub fn query_opt(&self, sql: &str, params: &[Value]) -> Result<Option<Row>, StorageError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row a query must give (an aggregate's).
    pub fn query_one(&self, sql: &str, params: &[Value]) -> Result<Row, StorageError> {
        self.query_opt(sql, params)?
            .ok_or(StorageError::NoRow(first_words(sql)))
    }

    /// Refuse (or accept again) every write on this handle: reads go on, a write fails as
    /// on a read-only file or replica.
    pub fn set_read_only(&self, on: bool) -> Result<(), StorageError> {
        match self {
            Db::Sqlite(db) => db.set_read_only(on),
            Db::Postgres(db) => db.set_read_only(on),
        }
    }

    /// How many of the engine's migrations have been applied.
    pub fn schema_version(&self) -> Result<i64, StorageError> {
        match self {
            Db::Sqlite(db) => db.schema_version(),
            Db::Postgres(db) => db.schema_version(),
        }
    }

    /// The engine's name, as the health check reports it.
    pub fn engine_name(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }
}

/// Now, UTC, as the tables store times (`2026-12-03T05:10:00Z`: sorts as it reads).
pub fn now() -> String {
    stamp(chrono::Utc::now())
}

/// `seconds` from now (negative: ago), UTC, as the tables store times.
pub fn now_plus(seconds: i64) -> String {
    stamp(chrono::Utc::now() + chrono::TimeDelta::seconds(seconds))
}

fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_stored_as_sortable_utc_text() {
        let (past, now, later) = (now_plus(-86_400), now(), now_plus(3_600));
        assert_eq!(now.len(), 20);
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
        assert!(past < now && now < later, "{past} {now} {later}");
    }

    #[test]
    fn rows_read_their_columns_by_kind() {
        let row = Row(vec![
            Value::Int(3),
            Value::Null,
            Value::Text("x".into()),
            Value::Real(0.5),
        ]);
        assert_eq!(row.int(0).unwrap(), 3);
        assert_eq!(row.real(0).unwrap(), 3.0);
        assert_eq!(row.opt_text(1).unwrap(), None);
        assert_eq!(row.text(2).unwrap(), "x");
        let e = row.int(2).unwrap_err().to_string();
        assert!(
            e.contains("column 2") && e.contains("an integer") && e.contains("text"),
            "{e}"
        );
        assert!(row.text(9).is_err());
        assert_eq!(row.real(3).unwrap(), 0.5);
    }
}
