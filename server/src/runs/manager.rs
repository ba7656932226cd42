//! The runs executing in this process: starting, cancelling, resuming them, and their live
//! progress. What the HTTP layer talks to; it talks to storage and the runner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wire::{Progress, RunSpec, RunStatus};

use super::RunError;
use crate::execution::CodeRunner;
use crate::llm::Gateway;
use crate::storage::{Renewed, Storage, Unfinished};
use crate::suites::Catalogue;

/// Why a run could not be started, cancelled or resumed.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// No such run.
    #[error("no run {0}")]
    NotFound(String),
    /// The run is in a state that does not allow it.
    #[error("{0}")]
    Conflict(String),
    /// The spec cannot run.
    #[error(transparent)]
    Invalid(#[from] RunError),
}

/// Runs of this process, cheap to clone.
#[derive(Clone)]
pub struct Runs {
    storage: Storage,
    gateway: Gateway,
    code: CodeRunner,
    suites: Catalogue,
    live: Arc<Mutex<HashMap<String, Progress>>>,
    /// Cancel flags of the runs executing in this process, by run id.
    active: Arc<Mutex<HashMap<String, sandbox::CancelToken>>>,
    /// On a shared store: this instance's leases of the runs it executes.
    lease: Option<Lease>,
}

/// How this instance holds the runs it executes on a shared store.
#[derive(Clone)]
struct Lease {
    /// This instance's name in the runs table (host, process and a random part).
    owner: Arc<str>,
    /// Seconds a lease lasts without renewal.
    secs: u64,
}

impl Lease {
    fn new(secs: u64) -> Self {
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

    /// How often the lease is renewed (and orphaned runs looked for).
    fn period(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.secs * 1000 / 3)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runs {
    /// A manager over `storage`, calling models through `gateway` and running programs in
    /// `code`, with the suites of `suites`.
    pub fn new(storage: Storage, gateway: Gateway, code: CodeRunner, suites: Catalogue) -> Self {
        let lease = storage
            .is_shared()
            .then(|| Lease::new(gateway.config().limits.run_lease_secs));
        Self {
            lease,
            storage,
            gateway,
            code,
            suites,
            live: Default::default(),
            active: Default::default(),
        }
    }

    /// The suites runs may use.
    pub fn registry(&self) -> &benchmarks::task::Registry {
        &self.suites.registry
    }

    /// The suites runs may use, with their hosts.
    pub fn suites(&self) -> &Catalogue {
        &self.suites
    }

    /// Record a run of `spec` (checked first) and start it; its id.
    pub fn start(&self, spec: &RunSpec) -> Result<String, SpawnError> {
        super::check_spec(spec, self.gateway.config(), &self.suites.registry)?;
        let id = self
            .storage
            .create_run(spec)
            .map_err(|e| SpawnError::Invalid(RunError::Storage(e)))?;
        self.spawn(id.clone());
        Ok(id)
    }

    /// Execute run `id` in the background, keeping its live progress; `false` when it is
    /// already executing in this process, or (on a shared store) another instance holds it.
    pub fn spawn(&self, id: String) -> bool {
        let cancel = sandbox::CancelToken::new();
        {
            let mut active = lock(&self.active);
            if active.contains_key(&id) {
                return false;
            }
            active.insert(id.clone(), cancel.clone());
        }
        if !self.claim(&id) {
            lock(&self.active).remove(&id);
            return false;
        }
        let me = self.clone();
        let renewal = self
            .lease
            .clone()
            .map(|l| tokio::spawn(renew(self.storage.clone(), l, id.clone(), cancel.clone())));
        tokio::spawn(async move {
            let live = me.live.clone();
            let key = id.clone();
            let result = super::execute_until(
                &me.storage,
                &me.gateway,
                &me.code,
                &me.suites,
                &id,
                move |p| {
                    lock(&live).insert(key.clone(), p.progress.clone());
                },
                cancel,
            )
            .await;
            if let Err(e) = result {
                tracing::error!(run = id, "run failed: {e}");
            }
            if let (Some(renewal), Some(lease)) = (renewal, &me.lease) {
                renewal.abort();
                let (storage, owner, run) = (me.storage.clone(), lease.owner.clone(), id.clone());
                let released =
                    tokio::task::spawn_blocking(move || storage.release_run(&run, &owner)).await;
                if let Ok(Err(e)) = released {
                    tracing::warn!(run = id, "cannot release the run's lease: {e}");
                }
            }
            lock(&me.active).remove(&id);
        });
        true
    }

    /// Whether this instance may execute run `id`: always on a store of its own; on a
    /// shared one, once it holds the run's lease.
    fn claim(&self, id: &str) -> bool {
        let Some(lease) = &self.lease else {
            return true;
        };
        match self.storage.claim_run(id, &lease.owner, lease.secs) {
            Ok(held) => held,
            Err(e) => {
                tracing::error!(run = id, "cannot claim the run: {e}");
                false
            }
        }
    }

    /// Stop run `id`: no new task starts and the sandbox work of those in flight stops
    /// (see [`super::execute_until`]). On a shared store a run another instance executes is
    /// cancelled there, at its next lease renewal.
    pub fn cancel(&self, id: &str) -> Result<(), SpawnError> {
        if let Some(token) = lock(&self.active).get(id) {
            token.cancel();
            return Ok(());
        }
        // Executing on another instance: it cancels the run at its next renewal.
        if self.lease.is_some()
            && self
                .storage
                .request_cancel(id)
                .map_err(|e| SpawnError::Invalid(RunError::Storage(e)))?
        {
            return Ok(());
        }
        match self.status(id)? {
            None => Err(SpawnError::NotFound(id.to_string())),
            Some(status) => Err(SpawnError::Conflict(format!(
                "run {id} is not running (status {})",
                status.name()
            ))),
        }
    }

    /// Execute an unfinished run again from where it stopped.
    pub fn resume(&self, id: &str) -> Result<(), SpawnError> {
        match self.status(id)? {
            None => Err(SpawnError::NotFound(id.to_string())),
            Some(RunStatus::Finished) => Err(SpawnError::Conflict(format!(
                "run {id} has finished; nothing to resume"
            ))),
            Some(_) if !self.spawn(id.to_string()) => Err(SpawnError::Conflict(format!(
                "run {id} is already running{}",
                if self.lease.is_some() {
                    " (here or on another instance)"
                } else {
                    ""
                }
            ))),
            Some(_) => Ok(()),
        }
    }

    fn status(&self, id: &str) -> Result<Option<RunStatus>, SpawnError> {
        Ok(self
            .storage
            .load_run(id)
            .map_err(|e| SpawnError::Invalid(RunError::Storage(e)))?
            .map(|(_, s)| s))
    }

    /// Whether run `id` executes in this process now.
    pub fn is_executing(&self, id: &str) -> bool {
        lock(&self.active).contains_key(id)
    }

    /// The live progress of run `id`, if it executed in this process.
    pub fn progress(&self, id: &str) -> Option<Progress> {
        lock(&self.live).get(id).cloned()
    }

    /// Restart runs that were executing when the server stopped, except one that stored
    /// nothing since its previous automatic restart (it may be what stopped the server):
    /// that one is marked `interrupted` and named in the log, for a person to resume.
    ///
    ///
    /// On a store several instances share, a run left executing may be executing on another
    /// instance right now: instead, this instance looks for runs whose lease ran out, now
    /// and then every renewal period, and takes them over.
    pub fn resume_at_startup(&self) {
        if let Some(lease) = self.lease.clone() {
            tokio::spawn(self.clone().adopt_orphans(lease));
            return;
        }
        let unfinished = match self.storage.unfinished_at_startup() {
            Ok(u) => u,
            Err(e) => {
                tracing::error!("cannot list unfinished runs: {e}");
                return;
            }
        };
        for u in unfinished {
            match u {
                Unfinished::Resume(id) => {
                    tracing::info!(run = id, "resuming run");
                    self.spawn(id);
                }
                Unfinished::Held(id) => tracing::warn!(
                    run = id,
                    "run made no progress since the last restart; marked interrupted, not \
                     resumed (POST /api/runs/{id}/resume to try again)"
                ),
            }
        }
    }

    /// Takes over, for ever, the runs whose instance stopped renewing their lease.
    async fn adopt_orphans(self, lease: Lease) {
        let mut tick = tokio::time::interval(lease.period());
        loop {
            tick.tick().await;
            let storage = self.storage.clone();
            let orphans = match tokio::task::spawn_blocking(move || storage.orphaned_runs()).await {
                Ok(Ok(ids)) => ids,
                Ok(Err(e)) => {
                    tracing::warn!("cannot look for runs to take over: {e}");
                    continue;
                }
                Err(_) => continue,
            };
            for id in orphans {
                if self.spawn(id.clone()) {
                    tracing::info!(
                        run = id,
                        "took over a run whose instance stopped renewing it"
                    );
                }
            }
        }
    }
}

/// Renews this instance's lease of run `id` every period until aborted, and cancels the run
/// (`cancel`) when a person asked for it through another instance. A lease found taken (this
/// instance stalled longer than the lease, another took the run over) is logged: both then
/// work on the run, and its results keep the first answer of each task.
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
