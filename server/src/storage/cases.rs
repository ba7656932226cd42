//! The share-link case store: content-addressed JSON bodies with per-client and total quotas
//! and an optional expiry.

use super::engine::{now_plus, params};
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

/// The oldest time a case may have been stored at and still be alive under `ttl_days`.
fn oldest_alive(ttl_days: u32) -> String {
    now_plus(-i64::from(ttl_days) * 86_400)
}

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
        let bytes = body.len() as u64;
        self.db().tx(|c| {
            if let Some(days) = quota.ttl_days {
                c.execute(
                    "DELETE FROM cases WHERE created_at < ?1",
                    params![oldest_alive(days)],
                )?;
            }
            if c.query_opt("SELECT 1 FROM cases WHERE id = ?1", params![id])?
                .is_some()
            {
                return Ok(CaseStored::Stored);
            }
            let mine = c.query_one(
                "SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM cases
                 WHERE client = ?1",
                params![client],
            )?;
            if mine.count(0)? + 1 > quota.max_per_client {
                return Ok(CaseStored::ClientQuota(format!(
                    "{} cases per client",
                    quota.max_per_client
                )));
            }
            if mine.count(1)? + bytes > quota.max_bytes_per_client {
                return Ok(CaseStored::ClientQuota(format!(
                    "{} bytes of cases per client",
                    quota.max_bytes_per_client
                )));
            }
            let all = c.query_one(
                "SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM cases",
                &[],
            )?;
            if all.count(0)? + 1 > quota.max_total || all.count(1)? + bytes > quota.max_total_bytes
            {
                return Ok(CaseStored::StoreFull(format!(
                    "{} cases or {} bytes in all",
                    quota.max_total, quota.max_total_bytes
                )));
            }
            c.execute(
                "INSERT INTO cases (id, body, client, bytes, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, body, client, bytes, super::engine::now()],
            )?;
            Ok(CaseStored::Stored)
        })
    }

    /// The body of case `id`, unless it is missing or expired under `ttl_days`.
    pub fn get_case(
        &self,
        id: &str,
        ttl_days: Option<u32>,
    ) -> Result<Option<String>, StorageError> {
        let oldest = ttl_days.map(oldest_alive).unwrap_or_default();
        self.db()
            .query_opt(
                "SELECT body FROM cases WHERE id = ?1 AND created_at >= ?2",
                params![id, oldest],
            )?
            .map(|r| r.text(0))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;
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
        each_engine(|s| {
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
        });
    }

    #[test]
    fn expired_cases_are_gone() {
        each_engine(|s| {
            let q = CaseQuota {
                ttl_days: Some(7),
                ..quota()
            };
            s.put_case("old", "{}", "c1", &q).unwrap();
            s.execute_for_test("UPDATE cases SET created_at = '2000-01-01T00:00:00Z'");
            assert_eq!(s.get_case("old", Some(7)).unwrap(), None);
            assert_eq!(s.get_case("old", None).unwrap().as_deref(), Some("{}"));
            // A write purges it, and its quota is free again.
            s.put_case("new", "{}", "c1", &q).unwrap();
            assert_eq!(s.get_case("old", None).unwrap(), None);
        });
    }
}
