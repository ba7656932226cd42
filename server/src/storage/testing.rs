//! For tests (this crate's and the integration tests): the storage tests run against every engine: SQLite in a temporary directory, and
//! PostgreSQL in a fresh database of the server `ATOMWORLD_TEST_POSTGRES` names (an admin
//! URL such as `postgres://postgres@127.0.0.1:5432/postgres`; `scripts/test.sh` starts a
//! throwaway cluster and sets it). With `ATOMWORLD_REQUIRE_POSTGRES=1` (the test script
//! sets it) a missing server fails the tests instead of leaving PostgreSQL out.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::engine::postgres::Postgres;
use super::{Location, Storage};

/// The spec of a run of no tasks (the reference baseline), for tests of the runs' tables.
pub fn empty_run_spec() -> wire::RunSpec {
    serde_json::from_value(serde_json::json!({
        "suite": benchmarks::task::Registry::DEFAULT, "model": "reference", "samples": 1,
        "concurrency": 1, "tasks": {"imported_from": "t", "tasks": []}
    }))
    .expect("a valid run spec")
}

/// Run `test` on a fresh store of each engine.
pub fn each_engine(test: impl Fn(&Storage)) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    test(&Storage::open(dir.path()).expect("SQLite opens"));
    each_postgres(|url| {
        test(&Storage::open_at(&Location::Postgres(url.into())).expect("PostgreSQL opens"));
    });
}

/// Run `test` with the URL of a fresh, empty PostgreSQL database, if a server is configured.
pub fn each_postgres(test: impl FnOnce(&str)) {
    let Some(admin) = std::env::var("ATOMWORLD_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            std::env::var("ATOMWORLD_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "ATOMWORLD_REQUIRE_POSTGRES=1 but ATOMWORLD_TEST_POSTGRES names no server"
        );
        eprintln!("PostgreSQL left out: ATOMWORLD_TEST_POSTGRES is not set");
        return;
    };
    test(&fresh_database(&admin));
}

/// A new database on the server of `admin` (named by process, a counter and the time, so
/// parallel tests and runs never share one); its URL. Its text collation is ICU's en-US, as
/// many a production database's is, not byte order: the store must order text as SQLite
/// does all the same.
pub fn fresh_database(admin: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!(
        "aw_test_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    Postgres::create_database(
        admin,
        &name,
        "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    )
    .expect("CREATE DATABASE on the test server");
    let (base, _) = admin
        .rsplit_once('/')
        .expect("an admin URL ending in /database");
    format!("{base}/{name}")
}

impl Storage {
    /// Run a statement of a test's own (ageing rows, emptying a table); rows changed.
    pub fn execute_for_test(&self, sql: &str) -> u64 {
        self.db().execute(sql, &[]).expect(sql)
    }

    /// The integer a test's own query answers (a count).
    pub fn int_for_test(&self, sql: &str) -> i64 {
        self.db()
            .query_one(sql, &[])
            .and_then(|r| r.int(0))
            .expect(sql)
    }
}
