//! PostgreSQL's schema migrations, applied in order on connect and counted in
//! `schema_migrations`. The first is SQLite's schema as its first twelve migrations left it, in
//! PostgreSQL's types: integers (booleans too) `BIGINT`, reals `DOUBLE PRECISION`, bytes
//! `BYTEA`, times UTC text as SQLite keeps them, so one set of queries reads both. Never edit
//! a released migration; append a new one (and SQLite's twin).
//!
//! Written here rather than with a migration crate: `rusqlite_migration` is SQLite's only,
//! and the runner is one transaction under an advisory lock.

use futures_executor::block_on;
use tokio_postgres::Client;

use crate::storage::StorageError;

/// The advisory lock instances take while migrating (any fixed number; this one spells
/// the project's name in a phone keypad's digits).
const MIGRATION_LOCK: i64 = 286_696_753;

/// The default of a column holding when a row was written.
macro_rules! now {
    () => {
        "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    };
}

/// The migrations, in order.
const ALL: &[&str] = &[
    concat!(
        "CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     INSERT INTO server_meta (key, value) VALUES ('created_at', ",
        now!(),
        ");
     CREATE TABLE llm_cache (
         key TEXT PRIMARY KEY,
         model TEXT NOT NULL,
         response TEXT NOT NULL,
         input_tokens BIGINT NOT NULL,
         output_tokens BIGINT NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ");
     CREATE TABLE llm_spend (day BIGINT PRIMARY KEY, cost_usd DOUBLE PRECISION NOT NULL);
     -- `rowid` is named as SQLite's implicit one, so the queries that order by it read alike.
     CREATE TABLE runs (
         rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
         id TEXT PRIMARY KEY,
         spec TEXT NOT NULL,
         status TEXT NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ",
         startup_resumes BIGINT NOT NULL DEFAULT 0,
         done_at_resume BIGINT,
         preparation_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0);
     CREATE TABLE results (
         run_id TEXT NOT NULL REFERENCES runs(id),
         task_id TEXT NOT NULL,
         sample BIGINT NOT NULL,
         action TEXT NOT NULL,
         prompt TEXT NOT NULL,
         response TEXT,
         verdict TEXT,
         label TEXT,
         error TEXT,
         input_tokens BIGINT NOT NULL DEFAULT 0,
         output_tokens BIGINT NOT NULL DEFAULT 0,
         cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
         latency_ms BIGINT NOT NULL DEFAULT 0,
         cached BIGINT NOT NULL DEFAULT 0,
         task TEXT,
         outcome TEXT,
         transcript TEXT,
         PRIMARY KEY (run_id, task_id, sample));
     CREATE TABLE cases (
         id TEXT PRIMARY KEY,
         body TEXT NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ",
         client TEXT,
         bytes BIGINT NOT NULL DEFAULT 0);
     CREATE INDEX cases_by_client ON cases(client);
     CREATE INDEX cases_by_age ON cases(created_at);
     CREATE TABLE health_probe (id BIGINT PRIMARY KEY, at TEXT NOT NULL);
     CREATE TABLE human_scores (
         run_id TEXT NOT NULL,
         task_id TEXT NOT NULL,
         sample BIGINT NOT NULL,
         criterion TEXT NOT NULL,
         scorer TEXT NOT NULL DEFAULT '',
         score DOUBLE PRECISION NOT NULL,
         updated_at TEXT NOT NULL DEFAULT ",
        now!(),
        ",
         PRIMARY KEY (run_id, task_id, sample, criterion, scorer));
     CREATE TABLE rooms (
         code TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         host_hash TEXT NOT NULL,
         client TEXT NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ",
         expires_at TEXT NOT NULL);
     CREATE INDEX rooms_by_client ON rooms(client);
     CREATE INDEX rooms_by_expiry ON rooms(expires_at);
     CREATE TABLE room_attempts (
         id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
         max_dist DOUBLE PRECISION,
         same_crystal BIGINT,
         bytes BIGINT NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ");
     CREATE INDEX room_attempts_by_room ON room_attempts(room, id);
     CREATE TABLE embedding_cache (
         key TEXT PRIMARY KEY,
         model TEXT NOT NULL,
         dim BIGINT NOT NULL,
         vector BYTEA NOT NULL,
         created_at TEXT NOT NULL DEFAULT ",
        now!(),
        ");
     CREATE TABLE run_briefs (
         seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         id TEXT NOT NULL UNIQUE REFERENCES runs(id),
         suite TEXT NOT NULL,
         brief TEXT NOT NULL,
         status TEXT NOT NULL,
         created_at TEXT NOT NULL);
     CREATE INDEX run_briefs_by_suite ON run_briefs(suite, seq);
     CREATE TABLE run_owners (
         id TEXT PRIMARY KEY REFERENCES runs(id),
         token_digest TEXT NOT NULL);"
    ),
    // Which instance executes a run and until when it holds it.
    "ALTER TABLE runs ADD COLUMN lease_owner TEXT;
     ALTER TABLE runs ADD COLUMN lease_until TEXT;",
    // What calls in flight hold against the daily spend cap (shared by instances).
    "CREATE TABLE spend_claims (
         id TEXT PRIMARY KEY,
         day BIGINT NOT NULL,
         usd DOUBLE PRECISION NOT NULL,
         expires_at TEXT NOT NULL);
     CREATE INDEX spend_claims_by_day ON spend_claims(day);",
    // A person asked, through any instance, to cancel a run another instance executes.
    "ALTER TABLE runs ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0;",
    // The text the queries order by compares as bytes, as in SQLite, whatever the database's
    // own collation (an en-US one puts "a_b" before "a-b" and "a10" after "a9" differently).
    "ALTER TABLE results ALTER COLUMN task_id TYPE TEXT COLLATE \"C\";
     ALTER TABLE human_scores ALTER COLUMN task_id TYPE TEXT COLLATE \"C\";
     ALTER TABLE human_scores ALTER COLUMN criterion TYPE TEXT COLLATE \"C\";
     ALTER TABLE human_scores ALTER COLUMN scorer TYPE TEXT COLLATE \"C\";
     ALTER TABLE llm_cache ALTER COLUMN key TYPE TEXT COLLATE \"C\";
     ALTER TABLE embedding_cache ALTER COLUMN key TYPE TEXT COLLATE \"C\";
     ALTER TABLE room_attempts ALTER COLUMN label TYPE TEXT COLLATE \"C\";",
    // A run's requests sent as a provider batch: the batch's id, which task sample each
    // request answers, and whether its answers are stored yet.
    "CREATE TABLE run_batches (
         run_id TEXT NOT NULL REFERENCES runs(id),
         batch_id TEXT NOT NULL,
         model TEXT NOT NULL,
         items TEXT NOT NULL,
         status TEXT NOT NULL,
         provider_status TEXT,
         submitted_at TEXT NOT NULL,
         PRIMARY KEY (run_id, batch_id));",
    // Workers and what they offer (roles, sandbox environments), and the sandbox jobs an
    // instance without an environment leaves to a worker that has it.
    "CREATE TABLE workers (
             id TEXT PRIMARY KEY,
             roles TEXT NOT NULL,
             envs TEXT NOT NULL,
             seen_at TEXT NOT NULL);
         CREATE TABLE sandbox_jobs (
             id TEXT PRIMARY KEY,
             env TEXT NOT NULL,
             program TEXT NOT NULL,
             status TEXT NOT NULL,
             worker TEXT,
             claimed_until TEXT,
             result TEXT,
             error TEXT,
             created_at TEXT NOT NULL);
         CREATE INDEX sandbox_jobs_waiting ON sandbox_jobs(status, env, created_at);",
    // A run's tasks in slices that instances sharing the store claim one at a time.
    "CREATE TABLE run_slices (
         run_id TEXT NOT NULL REFERENCES runs(id),
         slice BIGINT NOT NULL,
         owner TEXT,
         lease_until TEXT,
         done BIGINT NOT NULL DEFAULT 0,
         PRIMARY KEY (run_id, slice));",
    // A run's spend and the claims of its calls in flight, for a run cap that holds while
    // several instances execute the run's slices.
    "CREATE TABLE run_spend (
         run_id TEXT PRIMARY KEY,
         cost_usd DOUBLE PRECISION NOT NULL);
     CREATE TABLE run_spend_claims (
         id TEXT PRIMARY KEY,
         run_id TEXT NOT NULL,
         usd DOUBLE PRECISION NOT NULL,
         expires_at TEXT NOT NULL);
     CREATE INDEX run_spend_claims_by_run ON run_spend_claims(run_id);",
];

/// Bring the schema up to date: the missing migrations, in one transaction, while holding
/// the migration lock (another instance starting at the same time waits, then finds them
/// applied).
pub fn apply(client: &mut Client) -> Result<(), StorageError> {
    let tx = block_on(client.transaction())?;
    block_on(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))?;
    block_on(tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version BIGINT PRIMARY KEY,
             applied_at TEXT NOT NULL)",
    ))?;
    let applied: i64 =
        block_on(tx.query_one("SELECT COUNT(*) FROM schema_migrations", &[]))?.try_get(0)?;
    let known = ALL.len() as i64;
    if applied > known {
        return Err(StorageError::NewerSchema { applied, known });
    }
    for (version, sql) in ALL.iter().enumerate().skip(applied as usize) {
        block_on(tx.batch_execute(sql))?;
        block_on(tx.execute(
            concat!(
                "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, ",
                now!(),
                ")"
            ),
            &[&(version as i64 + 1)],
        ))?;
    }
    block_on(tx.commit())?;
    Ok(())
}

/// How many migrations this build knows.
pub fn known() -> i64 {
    ALL.len() as i64
}
