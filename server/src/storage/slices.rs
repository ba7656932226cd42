//! A run's tasks in slices, on a store several instances share: the instance executing a run
//! and any other that executes runs claim its slices one at a time (on PostgreSQL with
//! `FOR UPDATE SKIP LOCKED`, so no two instances ever hold one slice), renew the claims they
//! hold, and mark a slice done once every result of its tasks is stored. A slice whose
//! instance died (its claim ran out) is claimed again; its stored results are kept, so only
//! the tasks it had in flight are asked again.

use super::engine::{now, now_plus, params};
use super::{Storage, StorageError};

impl Storage {
    /// Opens run `id`'s slices `0..count` for an execution of the run: the missing ones are
    /// made and those done are opened again (their tasks whose call failed are asked again;
    /// those with a verdict are skipped), while claims held now stay as they are.
    pub fn open_slices(&self, id: &str, count: usize) -> Result<(), StorageError> {
        self.db().tx(|c| {
            for slice in 0..count {
                c.execute(
                    "INSERT INTO run_slices (run_id, slice) VALUES (?1, ?2)
                     ON CONFLICT (run_id, slice) DO NOTHING",
                    params![id, slice as i64],
                )?;
            }
            c.execute(
                "UPDATE run_slices SET done = 0, owner = NULL WHERE run_id = ?1 AND done = 1",
                params![id],
            )?;
            Ok(())
        })
    }

    /// Claims for `owner`, for `secs` seconds, the first slice of run `id` that is not done
    /// and that no live claim holds, while the run is running and nobody asked to cancel it;
    /// its number, or `None` when there is none.
    pub fn claim_slice(
        &self,
        id: &str,
        owner: &str,
        secs: u64,
    ) -> Result<Option<usize>, StorageError> {
        // SQLite has one writer at a time and no row locks to skip.
        let skip_locked = if self.is_shared() {
            "FOR UPDATE SKIP LOCKED"
        } else {
            ""
        };
        let row = self.db().query_opt(
            &format!(
                "UPDATE run_slices SET owner = ?2, lease_until = ?3
                 WHERE run_id = ?1 AND slice = (
                     SELECT s.slice FROM run_slices s
                     WHERE s.run_id = ?1 AND s.done = 0
                       AND (s.owner IS NULL OR s.lease_until < ?4)
                       AND EXISTS (SELECT 1 FROM runs r WHERE r.id = ?1
                                   AND r.status = 'running' AND r.cancel_requested = 0)
                     ORDER BY s.slice LIMIT 1 {skip_locked})
                 RETURNING slice"
            ),
            params![id, owner, now_plus(lease_secs(secs)), now()],
        )?;
        row.map(|r| Ok(r.count(0)? as usize)).transpose()
    }

    /// Extends every claim `owner` holds on run `id`'s slices by `secs` seconds from now.
    pub fn renew_slices(&self, id: &str, owner: &str, secs: u64) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE run_slices SET lease_until = ?3 WHERE run_id = ?1 AND owner = ?2 AND done = 0",
            params![id, owner, now_plus(lease_secs(secs))],
        )?;
        Ok(())
    }

    /// Marks slice `slice` of run `id` done (every result of its tasks is stored).
    pub fn finish_slice(&self, id: &str, slice: usize) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE run_slices SET done = 1, lease_until = NULL WHERE run_id = ?1 AND slice = ?2",
            params![id, slice as i64],
        )?;
        Ok(())
    }

    /// Gives back the claims `owner` holds on run `id`'s slices that are not done (it stopped
    /// early: cancelled, or a spend cap was reached).
    pub fn release_slices(&self, id: &str, owner: &str) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE run_slices SET owner = NULL, lease_until = NULL
             WHERE run_id = ?1 AND owner = ?2 AND done = 0",
            params![id, owner],
        )?;
        Ok(())
    }

    /// How many of run `id`'s slices are not done.
    pub fn slices_left(&self, id: &str) -> Result<usize, StorageError> {
        let row = self.db().query_one(
            "SELECT COUNT(*) FROM run_slices WHERE run_id = ?1 AND done = 0",
            params![id],
        )?;
        Ok(row.count(0)? as usize)
    }

    /// Who did run `id`'s slices that are done, and how many each did.
    pub fn slice_owners(&self, id: &str) -> Result<Vec<(String, usize)>, StorageError> {
        self.db()
            .query(
                "SELECT owner, COUNT(*) FROM run_slices WHERE run_id = ?1 AND done = 1
                 GROUP BY owner ORDER BY owner",
                params![id],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, r.count(1)? as usize)))
            .collect()
    }

    /// Running runs another instance than `me` holds that have a slice no live claim
    /// holds: work an idle instance can help with. Oldest first.
    pub fn runs_to_help(&self, me: &str) -> Result<Vec<String>, StorageError> {
        self.db()
            .query(
                "SELECT r.id FROM runs r
                 WHERE r.status = 'running' AND r.cancel_requested = 0
                   AND r.lease_until >= ?1 AND r.lease_owner <> ?2
                   AND EXISTS (SELECT 1 FROM run_slices s WHERE s.run_id = r.id AND s.done = 0
                               AND (s.owner IS NULL OR s.lease_until < ?1))
                 ORDER BY r.rowid",
                params![now(), me],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
    }
}

/// A claim's length in seconds as stored.
fn lease_secs(secs: u64) -> i64 {
    i64::try_from(secs).unwrap_or(i64::MAX / 4)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{each_engine, empty_run_spec};
    use wire::RunStatus;

    fn running_run(s: &super::Storage) -> String {
        let id = s.create_run(&empty_run_spec()).unwrap();
        s.set_status(&id, RunStatus::Running).unwrap();
        id
    }

    #[test]
    fn slices_are_claimed_once_renewed_and_done() {
        each_engine(|s| {
            let id = running_run(s);
            s.open_slices(&id, 3).unwrap();
            s.open_slices(&id, 3).unwrap();
            assert_eq!(s.slices_left(&id).unwrap(), 3);
            assert_eq!(s.claim_slice(&id, "a", 60).unwrap(), Some(0));
            assert_eq!(s.claim_slice(&id, "b", 60).unwrap(), Some(1));
            s.finish_slice(&id, 0).unwrap();
            assert_eq!(s.claim_slice(&id, "a", 60).unwrap(), Some(2));
            // Every slice is done or held.
            assert_eq!(s.claim_slice(&id, "c", 60).unwrap(), None);
            s.release_slices(&id, "b").unwrap();
            assert_eq!(s.claim_slice(&id, "c", 60).unwrap(), Some(1));
            s.finish_slice(&id, 1).unwrap();
            s.finish_slice(&id, 2).unwrap();
            assert_eq!(s.slices_left(&id).unwrap(), 0);
            assert_eq!(
                s.slice_owners(&id).unwrap(),
                [("a".to_string(), 2), ("c".to_string(), 1)]
            );
            // A new execution of the run walks every slice again.
            s.open_slices(&id, 3).unwrap();
            assert_eq!(s.slices_left(&id).unwrap(), 3);
        });
    }

    #[test]
    fn a_lapsed_claim_is_taken_again_and_a_stopped_run_gives_none() {
        each_engine(|s| {
            let id = running_run(s);
            s.open_slices(&id, 1).unwrap();
            // A claim of 0 s has lapsed a second later.
            assert_eq!(s.claim_slice(&id, "dead", 0).unwrap(), Some(0));
            std::thread::sleep(std::time::Duration::from_millis(1_100));
            assert_eq!(s.claim_slice(&id, "b", 60).unwrap(), Some(0));
            s.release_slices(&id, "b").unwrap();
            s.set_status(&id, RunStatus::Cancelled).unwrap();
            assert_eq!(s.claim_slice(&id, "b", 60).unwrap(), None);
        });
    }
}
