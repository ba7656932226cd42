//! How an instance holds the runs it executes on a store several instances share: it claims
//! a run's lease before executing it, renews it every third of its length while executing
//! (cancelling the run when a person asked for it through another instance), and gives it
//! back when it stops. A run whose lease ran out, or that no instance ever claimed, is
//! claimable by any instance that executes runs.

use std::sync::Arc;
use std::time::Duration;

use crate::storage::{Renewed, Storage, StorageError};

/// This instance's name in the runs table and the length of its leases.
#[derive(Clone)]
pub struct Lease {
    /// Host, process and a random part.
    owner: Arc<str>,
    /// Seconds a lease lasts without renewal.
    secs: u64,
}

impl Lease {
    /// Leases of `secs` seconds (at least 3) under a fresh name for this instance.
    pub fn new(secs: u64) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let owner = format!(
            "{host}:{}:{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        Self {
            owner: owner.into(),
            secs: secs.max(3),
        }
    }

    /// How this instance takes part in a run's slices: as the run's holder, or a helper.
    pub fn slicing(&self, helper: bool) -> super::runner::Slicing {
        // A helper claims under a name of its own: the same instance may come to hold the
        // run too (taking it over), and each gives back only its own claims.
        let owner = if helper {
            format!("{}/helper", self.owner).into()
        } else {
            self.owner.clone()
        };
        super::runner::Slicing {
            owner,
            secs: self.secs,
            helper,
        }
    }

    /// This instance's name in the runs table.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// How often a lease is renewed (and claimable runs looked for).
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.secs * 1000 / 3)
    }

    /// Claims run `id` and keeps renewing it (in a task of the current runtime) until the
    /// holding is released or dropped; `None` when another instance holds it or it finished.
    pub fn hold(
        &self,
        storage: &Storage,
        id: &str,
        cancel: sandbox::CancelToken,
    ) -> Result<Option<Holding>, StorageError> {
        if !storage.claim_run(id, &self.owner, self.secs)? {
            return Ok(None);
        }
        let renewal = tokio::spawn(renew(storage.clone(), self.clone(), id.to_string(), cancel));
        Ok(Some(Holding {
            renewal,
            storage: storage.clone(),
            owner: self.owner.clone(),
            id: id.to_string(),
        }))
    }
}

/// A run this instance holds; renewed until released or dropped.
pub struct Holding {
    renewal: tokio::task::JoinHandle<()>,
    storage: Storage,
    owner: Arc<str>,
    id: String,
}

impl Holding {
    /// Stops renewing and gives the run back (another instance may claim it at once).
    pub async fn release(self) {
        self.renewal.abort();
        let (storage, owner, id) = (self.storage.clone(), self.owner.clone(), self.id.clone());
        let released = tokio::task::spawn_blocking(move || storage.release_run(&id, &owner)).await;
        if let Ok(Err(e)) = released {
            tracing::warn!(run = self.id, "cannot give the run's lease back: {e}");
        }
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        // Released or not, renewing stops: an unreleased lease runs out on its own.
        self.renewal.abort();
    }
}

/// Renews `lease`'s hold of run `id` every period, and cancels the run (`cancel`) when a
/// person asked for it through another instance. A lease found taken (this instance
/// stalled longer than the lease, another took the run over) is logged: both then work on
/// the run, and its results keep the first answer of each task.
async fn renew(storage: Storage, lease: Lease, id: String, cancel: sandbox::CancelToken) {
    let mut tick = tokio::time::interval(lease.period());
    tick.tick().await;
    loop {
        tick.tick().await;
        let (storage, owner, run, secs) =
            (storage.clone(), lease.owner.clone(), id.clone(), lease.secs);
        match tokio::task::spawn_blocking(move || storage.renew_run(&run, &owner, secs)).await {
            Ok(Ok(Renewed::Held)) => {}
            Ok(Ok(Renewed::CancelAsked)) => {
                tracing::info!(run = id, "cancelled through another instance");
                cancel.cancel();
            }
            Ok(Ok(Renewed::Lost)) => {
                tracing::warn!(run = id, "another instance took this run over");
                return;
            }
            Ok(Err(e)) => tracing::warn!(run = id, "cannot renew the run's lease: {e}"),
            Err(_) => return,
        }
    }
}
