//! The share-link case store: content-addressed JSON bodies with per-client and total quotas
//! and an optional expiry.

use rusqlite::{params, OptionalExtension};

use super::{Storage, StorageError};

pub use crate::config::CaseQuota;

/// What storing a case did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseStored {
    /// Stored (or already there with the same content).
    Stored,
    /// The client's quota is used up: what was exceeded.
    ClientQuota(String),
    /// The store is full: what was exceeded.
    StoreFull(String),
}

/// The SQL condition that a case is still alive under `ttl_days` (`?9` is the TTL in days or
/// NULL).
const ALIVE: &str =
    "(?9 IS NULL OR created_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-' || ?9 || ' days'))";

impl Storage {
    /// Store case `body` under `id` for `client` (an opaque client key), within `quota`.
    /// Expired cases are purged first; storing content that is already there costs nothing.
    pub fn put_case(
        &self,
        id: &str,
        body: &str,
        client: &str,
        quota: &CaseQuota,
    ) -> Result<CaseStored, StorageError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        if let Some(days) = quota.ttl_days {
            tx.execute(
                "DELETE FROM cases WHERE created_at < strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-' || ?1 || ' days')",
                [days],
            )?;
        }
        let exists: bool = tx
            .query_row("SELECT 1 FROM cases WHERE id = ?1", [id], |_| Ok(()))
            .optional()?
            .is_some();
        if exists {
            return Ok(CaseStored::Stored);
        }
        let bytes = body.len() as u64;
        let (mine, mine_bytes): (u64, u64) = tx.query_row(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM cases WHERE client = ?1",
            [client],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )?;
        if mine + 1 > quota.max_per_client {
            return Ok(CaseStored::ClientQuota(format!(
                "{} cases per client",
                quota.max_per_client
            )));
        }
        if mine_bytes + bytes > quota.max_bytes_per_client {
            return Ok(CaseStored::ClientQuota(format!(
                "{} bytes of cases per client",
                quota.max_bytes_per_client
            )));
        }
        let (all, all_bytes): (u64, u64) = tx.query_row(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM cases",
            [],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )?;
        if all + 1 > quota.max_total || all_bytes + bytes > quota.max_total_bytes {
            return Ok(CaseStored::StoreFull(format!(
                "{} cases or {} bytes in all",
                quota.max_total, quota.max_total_bytes
            )));
        }
        tx.execute(
            "INSERT INTO cases (id, body, client, bytes) VALUES (?1, ?2, ?3, ?4)",
            params![id, body, client, bytes as i64],
        )?;
        tx.commit()?;
        Ok(CaseStored::Stored)
    }

    /// The body of case `id`, unless it is missing or expired under `ttl_days`.
    pub fn get_case(
        &self,
        id: &str,
        ttl_days: Option<u32>,
    ) -> Result<Option<String>, StorageError> {
        let conn = self.lock();
        let sql = format!(
            "SELECT body FROM cases WHERE id = ?1 AND {}",
            ALIVE.replace("?9", "?2")
        );
        Ok(conn
            .query_row(&sql, params![id, ttl_days], |r| r.get(0))
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota() -> CaseQuota {
        CaseQuota {
            max_per_client: 2,
            max_bytes_per_client: 100,
            max_total: 3,
            max_total_bytes: 1000,
            ttl_days: None,
        }
    }

    #[test]
    fn quotas_per_client_and_in_total() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path()).unwrap();
        let q = quota();
        assert_eq!(s.put_case("a", "{}", "c1", &q).unwrap(), CaseStored::Stored);
        assert_eq!(s.put_case("b", "{}", "c1", &q).unwrap(), CaseStored::Stored);
        // The same content again is free; a third case is over the client's quota.
        assert_eq!(s.put_case("b", "{}", "c1", &q).unwrap(), CaseStored::Stored);
        assert!(matches!(
            s.put_case("c", "{}", "c1", &q).unwrap(),
            CaseStored::ClientQuota(_)
        ));
        let big = "x".repeat(101);
        assert!(matches!(
            s.put_case("d", &big, "c2", &q).unwrap(),
            CaseStored::ClientQuota(_)
        ));
        assert_eq!(s.put_case("e", "{}", "c2", &q).unwrap(), CaseStored::Stored);
        assert!(matches!(
            s.put_case("f", "{}", "c3", &q).unwrap(),
            CaseStored::StoreFull(_)
        ));
        assert_eq!(s.get_case("a", None).unwrap().as_deref(), Some("{}"));
        assert_eq!(s.get_case("c", None).unwrap(), None);
    }

    #[test]
    fn expired_cases_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path()).unwrap();
        let q = CaseQuota {
            ttl_days: Some(7),
            ..quota()
        };
        s.put_case("old", "{}", "c1", &q).unwrap();
        s.with_conn(|c| {
            c.execute(
                "UPDATE cases SET created_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-8 days')",
                [],
            )
        })
        .unwrap();
        assert_eq!(s.get_case("old", Some(7)).unwrap(), None);
        assert_eq!(s.get_case("old", None).unwrap().as_deref(), Some("{}"));
        // A write purges it, and its quota is free again.
        s.put_case("new", "{}", "c1", &q).unwrap();
        assert_eq!(s.get_case("old", None).unwrap(), None);
    }
}
