//! Who executes a run: on a store several instances share, the instance that claims a run
//! holds it for a lease it renews while executing; a run whose lease ran out (its instance
//! was killed or lost the database) is claimed by another, which resumes it where the
//! stored results stop.

use super::engine::{now, now_plus, params};
use super::{Storage, StorageError};

/// What renewing a lease found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewed {
    /// Still held; go on.
    Held,
    /// Still held, and a person asked (through any instance) to cancel the run.
    CancelAsked,
    /// Another instance holds the run now.
    Lost,
}

impl Storage {
    /// Claims run `id` for `owner` for `secs` seconds, unless another owner holds an
    /// unexpired lease or the run has finished; whether `owner` holds it now.
    pub fn claim_run(&self, id: &str, owner: &str, secs: u64) -> Result<bool, StorageError> {
        let changed = self.db().execute(
            "UPDATE runs SET lease_owner = ?2, lease_until = ?3, cancel_requested = 0
             WHERE id = ?1 AND status <> 'finished'
               AND (lease_owner IS NULL OR lease_owner = ?2 OR lease_until < ?4)",
            params![id, owner, now_plus(lease(secs)), now()],
        )?;
        Ok(changed > 0)
    }

    /// Extends `owner`'s lease of run `id` by `secs` seconds from now: [`Renewed::Lost`]
    /// when `owner` no longer holds it (another instance took it over), else whether a
    /// person asked to cancel the run meanwhile.
    pub fn renew_run(&self, id: &str, owner: &str, secs: u64) -> Result<Renewed, StorageError> {
        let row = self.db().query_opt(
            "UPDATE runs SET lease_until = ?3 WHERE id = ?1 AND lease_owner = ?2
             RETURNING cancel_requested",
            params![id, owner, now_plus(lease(secs))],
        )?;
        Ok(match row {
            None => Renewed::Lost,
            Some(r) if r.bool(0)? => Renewed::CancelAsked,
            Some(_) => Renewed::Held,
        })
    }

    /// Asks whichever instance executes run `id` to cancel it (it sees the request at its
    /// next renewal); whether an instance holds the run now.
    pub fn request_cancel(&self, id: &str) -> Result<bool, StorageError> {
        let changed = self.db().execute(
            "UPDATE runs SET cancel_requested = 1
             WHERE id = ?1 AND status IN ('created', 'running') AND lease_until >= ?2",
            params![id, now()],
        )?;
        Ok(changed > 0)
    }

    /// Puts unfinished run `id` back to wait for an instance (`created`), unless an instance
    /// holds it now; whether it did.
    pub fn requeue_run(&self, id: &str) -> Result<bool, StorageError> {
        self.set_status_unheld(id, "status <> 'finished'", "created")
    }

    /// Cancels run `id` where no instance holds it: it waits for one (`created`), or the
    /// instance executing it stopped renewing its lease (`running`, the lease run out) and
    /// no other has taken it over; whether it did. The request is recorded as well, so that
    /// an instance that renews its lease late still cancels the run there.
    pub fn cancel_unheld(&self, id: &str) -> Result<bool, StorageError> {
        self.db().tx(|c| {
            let changed = c.execute(
                "UPDATE runs SET status = 'cancelled', cancel_requested = 1
                 WHERE id = ?1 AND status IN ('created', 'running')
                   AND (lease_until IS NULL OR lease_until < ?2)",
                params![id, now()],
            )?;
            if changed > 0 {
                c.execute(
                    "UPDATE run_briefs SET status = 'cancelled' WHERE id = ?1",
                    params![id],
                )?;
            }
            Ok(changed > 0)
        })
    }

    /// Sets run `id`'s status to `to` where `condition` holds and no instance holds the run,
    /// in one transaction with its list entry; whether it did.
    fn set_status_unheld(&self, id: &str, condition: &str, to: &str) -> Result<bool, StorageError> {
        self.db().tx(|c| {
            let changed = c.execute(
                &format!(
                    "UPDATE runs SET status = ?3 WHERE id = ?1 AND {condition}
                       AND (lease_until IS NULL OR lease_until < ?2)"
                ),
                params![id, now(), to],
            )?;
            if changed > 0 {
                c.execute(
                    "UPDATE run_briefs SET status = ?2 WHERE id = ?1",
                    params![id, to],
                )?;
            }
            Ok(changed > 0)
        })
    }

    /// Gives up `owner`'s lease of run `id` (it stopped executing there).
    pub fn release_run(&self, id: &str, owner: &str) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE runs SET lease_owner = NULL, lease_until = NULL
             WHERE id = ?1 AND lease_owner = ?2",
            params![id, owner],
        )?;
        Ok(())
    }

    /// The runs to execute that no instance holds: `created` or `running`, with a lease that
    /// ran out (its instance stopped renewing) or none (recorded by a web-only instance).
    /// Oldest first.
    pub fn claimable_runs(&self) -> Result<Vec<String>, StorageError> {
        self.db()
            .query(
                "SELECT id FROM runs WHERE status IN ('created', 'running')
                   AND (lease_until IS NULL OR lease_until < ?1) ORDER BY rowid",
                params![now()],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
    }
}

/// A lease's length in seconds as stored.
fn lease(secs: u64) -> i64 {
    i64::try_from(secs).unwrap_or(i64::MAX / 2)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{each_engine, empty_run_spec as spec};
    use super::Renewed;
    use wire::RunStatus;

    #[test]
    fn one_instance_holds_a_run_until_its_lease_runs_out() {
        each_engine(|s| {
            // A run waiting for an instance is cancelled where it waits.
            let waiting = s.create_run(&spec()).unwrap();
            assert!(s.cancel_unheld(&waiting).unwrap());
            assert!(!s.cancel_unheld(&waiting).unwrap());
            assert!(s.claimable_runs().unwrap().is_empty());
            let (_, status) = s.load_run(&waiting).unwrap().unwrap();
            assert_eq!(status, RunStatus::Cancelled);
            // Resumed through a web-only instance, it waits again.
            assert!(s.requeue_run(&waiting).unwrap());
            assert_eq!(s.claimable_runs().unwrap(), vec![waiting.clone()]);
            assert!(s.cancel_unheld(&waiting).unwrap());
            let id = s.create_run(&spec()).unwrap();
            assert_eq!(
                s.claimable_runs().unwrap(),
                vec![id.clone()],
                "no one holds it"
            );
            assert!(s.claim_run(&id, "a", 60).unwrap());
            assert!(
                !s.cancel_unheld(&id).unwrap(),
                "a holds it: cancelled there"
            );
            assert!(!s.requeue_run(&id).unwrap(), "a holds it: not put back");
            assert!(!s.claim_run(&id, "b", 60).unwrap(), "a holds it");
            assert!(s.claim_run(&id, "a", 60).unwrap(), "a may claim again");
            assert_eq!(s.renew_run(&id, "a", 60).unwrap(), Renewed::Held);
            assert_eq!(s.renew_run(&id, "b", 60).unwrap(), Renewed::Lost);
            assert!(s.claimable_runs().unwrap().is_empty());
            // a stops renewing: its lease runs out and b takes the run over.
            s.execute_for_test("UPDATE runs SET lease_until = '2000-01-01T00:00:00Z'");
            assert_eq!(s.claimable_runs().unwrap(), vec![id.clone()]);
            assert!(s.claim_run(&id, "b", 60).unwrap());
            assert_eq!(
                s.renew_run(&id, "a", 60).unwrap(),
                Renewed::Lost,
                "a lost it"
            );
            // A cancel asked through any instance reaches b at its next renewal.
            s.set_status(&id, RunStatus::Running).unwrap();
            assert!(s.request_cancel(&id).unwrap());
            assert_eq!(s.renew_run(&id, "b", 60).unwrap(), Renewed::CancelAsked);
            // b falls behind with its renewals: its lease runs out while no one has taken
            // the run over. A cancel then stops the run where it is (it is no longer there
            // to take over), and b, renewing late, still learns of it.
            s.execute_for_test("UPDATE runs SET lease_until = '2000-01-01T00:00:00Z'");
            assert!(!s.request_cancel(&id).unwrap(), "no one holds it");
            assert!(s.cancel_unheld(&id).unwrap());
            let (_, status) = s.load_run(&id).unwrap().unwrap();
            assert_eq!(status, RunStatus::Cancelled);
            assert!(s.claimable_runs().unwrap().is_empty());
            assert_eq!(s.renew_run(&id, "b", 60).unwrap(), Renewed::CancelAsked);
            assert!(s.claimable_runs().unwrap().is_empty());
            s.release_run(&id, "a").unwrap();
            assert!(
                !s.claim_run(&id, "c", 60).unwrap(),
                "a's release is not b's"
            );
            s.release_run(&id, "b").unwrap();
            assert!(s.claim_run(&id, "c", 60).unwrap());
            // A finished run is never claimed.
            s.set_status(&id, RunStatus::Finished).unwrap();
            s.release_run(&id, "c").unwrap();
            assert!(!s.claim_run(&id, "a", 60).unwrap());
        });
    }
}
