//! PostgreSQL, the store several instances share (`--database postgres://…`), through
//! `tokio-postgres`.
//!
//! The storage API is synchronous (SQLite's is), and is called from async handlers as well as
//! from plain threads. So the connection is driven by a thread of its own, with its own
//! single-threaded runtime, and callers wait for their statements' futures with a plain
//! `block_on`: a `tokio-postgres` client's futures only talk to that connection through
//! channels and need no runtime of the caller's (a blocking wait from inside the server's
//! runtime would panic with the `postgres` crate, which drives the connection on the
//! caller's thread). One connection behind a mutex, as SQLite has; it is opened again when
//! the server lost it.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::{Mutex, MutexGuard};

use bytes::BytesMut;
use futures_executor::block_on;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, IsolationLevel, NoTls, Statement};

use super::{Conn, Row, Value};
use crate::storage::StorageError;

mod listener;
mod migrations;

/// How often a serializable transaction that conflicted with another instance's is tried.
const TX_ATTEMPTS: usize = 8;

/// An open PostgreSQL database.
pub struct Postgres {
    config: Config,
    inner: Mutex<Inner>,
    shown: String,
}

/// The connection and the statements prepared on it.
struct Inner {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl Postgres {
    /// Connect to the database of `url` (`postgres://user:password@host:port/db`) and bring
    /// its schema up to date (instances starting together take turns: an advisory lock).
    pub fn connect(url: &str) -> Result<Self, StorageError> {
        let config: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| StorageError::Url {
                url: redact(url),
                reason: e.to_string(),
            })?;
        let mut client = open(&config)?;
        migrations::apply(&mut client)?;
        Ok(Self {
            config,
            inner: Mutex::new(Inner {
                client,
                statements: HashMap::new(),
            }),
            shown: redact(url),
        })
    }

    /// Hear `NOTIFY`s on `channel` from now on: a connection of its own, driven by a thread
    /// of its own, passes each payload to `forward` until `forward` returns false. A lost
    /// connection is opened again after a second, and `forward` is then given
    /// [`ANY_ROOM`](crate::storage::signals::ANY_ROOM): what was sent meanwhile is unknown.
    pub fn listen(&self, channel: &'static str, forward: Box<dyn Fn(String) -> bool + Send>) {
        let config = self.config.clone();
        let spawned = std::thread::Builder::new()
            .name("postgres-listen".into())
            .spawn(move || listener::run(config, channel, forward));
        if let Err(e) = spawned {
            tracing::warn!("cannot listen for other instances' changes: {e}");
        }
    }

    /// The URL without its password, as logs and the health check may show it.
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// Create database `name` on the server of `admin_url` (a database that exists there,
    /// such as `postgres`), with `options` after its name (trusted SQL: a template, a
    /// locale); `name` must be a plain identifier.
    pub fn create_database(admin_url: &str, name: &str, options: &str) -> Result<(), StorageError> {
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StorageError::Url {
                url: name.to_string(),
                reason: "a database name of letters, digits and _".into(),
            });
        }
        let config: Config =
            admin_url
                .parse()
                .map_err(|e: tokio_postgres::Error| StorageError::Url {
                    url: redact(admin_url),
                    reason: e.to_string(),
                })?;
        let client = open(&config)?;
        block_on(client.batch_execute(&format!("CREATE DATABASE {name} {options}")))?;
        Ok(())
    }

    pub(super) fn schema_version(&self) -> Result<i64, StorageError> {
        self.query("SELECT COUNT(*) FROM schema_migrations", &[])?
            .first()
            .map_or(Ok(0), |r| r.int(0))
    }

    pub(super) fn set_read_only(&self, on: bool) -> Result<(), StorageError> {
        let inner = self.lock()?;
        let value = if on { "on" } else { "off" };
        block_on(
            inner
                .client
                .batch_execute(&format!("SET default_transaction_read_only = {value}")),
        )?;
        Ok(())
    }

    pub(super) fn tx<T>(
        &self,
        mut f: impl FnMut(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let mut inner = self.lock()?;
        let Inner { client, statements } = &mut *inner;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let tx = block_on(
                client
                    .build_transaction()
                    .isolation_level(IsolationLevel::Serializable)
                    .start(),
            )?;
            let done = f(&mut PgConn {
                client: &tx,
                statements,
            });
            let outcome = done.and_then(|v| block_on(tx.commit()).map(|()| v).map_err(Into::into));
            match outcome {
                Err(StorageError::Postgres(e)) if conflicted(&e) && attempt < TX_ATTEMPTS => {
                    // Dropping the transaction rolled it back; wait a little and try again.
                    std::thread::sleep(std::time::Duration::from_millis(2 << attempt));
                }
                other => return other,
            }
        }
    }

    pub(super) fn rehearse<T>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let mut inner = self.lock()?;
        let Inner { client, statements } = &mut *inner;
        let tx = block_on(client.transaction())?;
        let out = f(&mut PgConn {
            client: &tx,
            statements,
        });
        block_on(tx.rollback())?;
        out
    }

    pub(super) fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StorageError> {
        let mut inner = self.lock()?;
        let Inner { client, statements } = &mut *inner;
        PgConn {
            client: &*client,
            statements,
        }
        .execute(sql, params)
    }

    pub(super) fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError> {
        let mut inner = self.lock()?;
        let Inner { client, statements } = &mut *inner;
        PgConn {
            client: &*client,
            statements,
        }
        .query(sql, params)
    }

    /// The connection, opened again if the server closed it (a restart of PostgreSQL, an
    /// idle timeout): the statement that finds it closed fails, the next one reconnects.
    fn lock(&self) -> Result<MutexGuard<'_, Inner>, StorageError> {
        // A panic while holding the lock leaves at worst an open transaction, which the
        // dropped `Transaction` rolled back: the connection is safe to reuse.
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.client.is_closed() {
            tracing::warn!("PostgreSQL connection to {} lost: reconnecting", self.shown);
            inner.client = open(&self.config)?;
            inner.statements.clear();
        }
        Ok(inner)
    }
}

/// How many schema migrations this build knows.
pub fn known_migrations() -> i64 {
    migrations::known()
}

/// Open a connection, driven by a thread of its own until it closes.
fn open(config: &Config) -> Result<Client, StorageError> {
    let config = config.clone();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("postgres".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = sender.send(Err(StorageError::Thread(e.to_string())));
                    return;
                }
            };
            runtime.block_on(async move {
                match config.connect(NoTls).await {
                    Ok((client, connection)) => {
                        let _ = sender.send(Ok(client));
                        if let Err(e) = connection.await {
                            tracing::warn!("PostgreSQL connection ended: {e}");
                        }
                    }
                    Err(e) => {
                        let _ = sender.send(Err(e.into()));
                    }
                }
            });
        })
        .map_err(|e| StorageError::Thread(e.to_string()))?;
    receiver
        .recv()
        .map_err(|e| StorageError::Thread(e.to_string()))?
}

/// Whether a transaction failed only because another one conflicted with it (trying again
/// may succeed).
fn conflicted(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// `url` with its password replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// Statements on a client or a transaction, prepared once per connection.
struct PgConn<'a, C> {
    client: &'a C,
    statements: &'a mut HashMap<String, Statement>,
}

impl<C: tokio_postgres::GenericClient + Sync> PgConn<'_, C> {
    fn statement(&mut self, sql: &str) -> Result<Statement, StorageError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = block_on(self.client.prepare(&placeholders(sql)))?;
        self.statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

impl<C: tokio_postgres::GenericClient + Sync> Conn for PgConn<'_, C> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StorageError> {
        let st = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        Ok(block_on(self.client.execute(&st, &params))?)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StorageError> {
        let st = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        block_on(self.client.query(&st, &params))?
            .iter()
            .map(row)
            .collect()
    }
}

/// SQLite's `?N` parameters as PostgreSQL's `$N` (outside quoted text).
fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '?' if !quoted && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

fn row(r: &tokio_postgres::Row) -> Result<Row, StorageError> {
    let mut values = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let ty = col.type_();
        let v = match *ty {
            Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Value::Int),
            Type::INT4 => r
                .try_get::<_, Option<i32>>(i)?
                .map(|x| Value::Int(x.into())),
            Type::INT2 => r
                .try_get::<_, Option<i16>>(i)?
                .map(|x| Value::Int(x.into())),
            Type::BOOL => r
                .try_get::<_, Option<bool>>(i)?
                .map(|x| Value::Int(x.into())),
            Type::FLOAT8 => r.try_get::<_, Option<f64>>(i)?.map(Value::Real),
            Type::FLOAT4 => r
                .try_get::<_, Option<f32>>(i)?
                .map(|x| Value::Real(x.into())),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                r.try_get::<_, Option<String>>(i)?.map(Value::Text)
            }
            Type::BYTEA => r.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
            _ => {
                return Err(StorageError::ColumnType {
                    column: col.name().to_string(),
                    ty: ty.name().to_string(),
                })
            }
        };
        values.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(values))
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(x), &Type::INT8) => x.to_sql(ty, out),
            (Value::Int(x), &Type::INT4) => i32::try_from(*x)?.to_sql(ty, out),
            (Value::Int(x), &Type::INT2) => i16::try_from(*x)?.to_sql(ty, out),
            (Value::Int(x), &Type::BOOL) => (*x != 0).to_sql(ty, out),
            (Value::Int(x), &Type::FLOAT8) => (*x as f64).to_sql(ty, out),
            (Value::Real(x), &Type::FLOAT8) => x.to_sql(ty, out),
            (Value::Real(x), &Type::FLOAT4) => (*x as f32).to_sql(ty, out),
            (Value::Text(x), _) if <&str as ToSql>::accepts(ty) => x.as_str().to_sql(ty, out),
            (Value::Blob(x), &Type::BYTEA) => x.as_slice().to_sql(ty, out),
            (v, ty) => Err(format!("{} for a parameter of type {ty}", v.kind()).into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_renumbered_outside_quotes() {
        assert_eq!(
            placeholders("SELECT '?1', x FROM t WHERE a = ?1 AND b = ?12 OR c = ?"),
            "SELECT '?1', x FROM t WHERE a = $1 AND b = $12 OR c = ?"
        );
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("postgres://aw:secret@db:5432/atomworld"),
            "postgres://aw:***@db:5432/atomworld"
        );
        assert_eq!(redact("postgres://aw@db/x"), "postgres://aw@db/x");
    }
}
