//! The runs executing in this process: starting, cancelling, resuming them, and their live
//! progress. What the HTTP layer talks to; it talks to storage and the runner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wire::{Progress, RunSpec, RunStatus};

use super::lease::{Holding, Lease};
use super::RunError;
use crate::execution::CodeRunner;
use crate::llm::Gateway;
use crate::storage::{Storage, Unfinished};
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
    /// Cancel flags of the runs whose slices this instance helps another execute.
    helping: Arc<Mutex<HashMap<String, sandbox::CancelToken>>>,
    /// On a shared store: this instance's leases of the runs it executes.
    lease: Option<Lease>,
    /// Whether this instance executes runs (a web-only instance leaves them to others).
    executes: bool,
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
            executes: true,
            storage,
            gateway,
            code,
            suites,
            live: Default::default(),
            active: Default::default(),
            helping: Default::default(),
        }
    }

    /// The same manager executing no run (a web-only instance of a shared store: the runs it
    /// records or resumes wait for an instance or worker that executes runs).
    pub fn web_only(mut self) -> Self {
        self.executes = false;
        self
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
        let holding = match self.claim(&id, &cancel) {
            Ok(holding) => holding,
            Err(()) => {
                lock(&self.active).remove(&id);
                return false;
            }
        };
        let me = self.clone();
        let slicing = self.slicing(false);
        tokio::spawn(async move {
            let live = me.live.clone();
            let key = id.clone();
            let progress = move |p: &super::RunOutcome| {
                lock(&live).insert(key.clone(), p.progress.clone());
            };
            let result = me.execute(&id, progress, cancel, slicing).await;
            if let Err(e) = result {
                tracing::error!(run = id, "run failed: {e}");
            }
            if let Some(holding) = holding {
                holding.release().await;
            }
            lock(&me.active).remove(&id);
        });
        true
    }

    /// Executes run `id` here (all of it, or the slices `slicing` says).
    async fn execute(
        &self,
        id: &str,
        progress: impl Fn(&super::RunOutcome) + Send + Sync + 'static,
        cancel: sandbox::CancelToken,
        slicing: Option<super::runner::Slicing>,
    ) -> Result<super::RunOutcome, RunError> {
        let (storage, gateway, code, suites) =
            (&self.storage, &self.gateway, &self.code, &self.suites);
        super::runner::execute_part(
            storage, gateway, code, suites, id, progress, cancel, slicing,
        )
        .await
    }

    /// How this instance takes part in runs' slices: on a shared store (a run's spend cap is
    /// then counted in the database).
    fn slicing(&self, helper: bool) -> Option<super::runner::Slicing> {
        Some(self.lease.as_ref()?.slicing(helper))
    }

    /// Executes slices of run `id`, which another instance holds, until none is left to
    /// claim; `false` when this instance helps with it already or takes no part in slices.
    pub fn help(&self, id: String) -> bool {
        let Some(slicing) = self.slicing(true).filter(|_| self.executes) else {
            return false;
        };
        let cancel = sandbox::CancelToken::new();
        {
            let mut helping = lock(&self.helping);
            if helping.contains_key(&id) {
                return false;
            }
            helping.insert(id.clone(), cancel.clone());
        }
        let me = self.clone();
        tokio::spawn(async move {
            let result = me.execute(&id, |_| {}, cancel, Some(slicing)).await;
            if let Err(e) = result {
                tracing::warn!(run = id, "helping with the run failed: {e}");
            }
            lock(&me.helping).remove(&id);
        });
        true
    }

    /// Whether this instance may execute run `id` now: always on a store of its own; on a
    /// shared one once it holds the run's lease (kept while the holding lives).
    fn claim(&self, id: &str, cancel: &sandbox::CancelToken) -> Result<Option<Holding>, ()> {
        if !self.executes {
            return Err(());
        }
        let Some(lease) = &self.lease else {
            return Ok(None);
        };
        match lease.hold(&self.storage, id, cancel.clone()) {
            Ok(Some(holding)) => Ok(Some(holding)),
            Ok(None) => Err(()),
            Err(e) => {
                tracing::error!(run = id, "cannot claim the run: {e}");
                Err(())
            }
        }
    }

    /// Stop run `id`: no new task starts and the sandbox work of those in flight stops
    /// (see [`super::execute_until`]). On a shared store a run another instance executes is
    /// cancelled there, at its next lease renewal.
    pub fn cancel(&self, id: &str) -> Result<(), SpawnError> {
        if let Some(token) = lock(&self.helping).get(id) {
            token.cancel();
        }
        if let Some(token) = lock(&self.active).get(id) {
            token.cancel();
            return Ok(());
        }
        // Executing on another instance: it cancels the run at its next renewal. Held by
        // none (waiting for an instance, or its instance stopped renewing the lease):
        // cancelled where it is.
        if self.lease.is_some() {
            let storage_error = |e| SpawnError::Invalid(RunError::Storage(e));
            if self.storage.request_cancel(id).map_err(storage_error)?
                || self.storage.cancel_unheld(id).map_err(storage_error)?
            {
                return Ok(());
            }
        }
        match self.status(id)? {
            None => Err(SpawnError::NotFound(id.to_string())),
            Some(status) => Err(SpawnError::Conflict(format!(
                "run {id} is not running (status {})",
                status.name()
            ))),
        }
    }

    /// Execute an unfinished run again from where it stopped (a web-only instance marks it
    /// `created`, for an instance that executes runs to take).
    pub fn resume(&self, id: &str) -> Result<(), SpawnError> {
        match self.status(id)? {
            None => Err(SpawnError::NotFound(id.to_string())),
            Some(RunStatus::Finished) => Err(SpawnError::Conflict(format!(
                "run {id} has finished; nothing to resume"
            ))),
            Some(_) if !self.executes => {
                let requeued = self
                    .storage
                    .requeue_run(id)
                    .map_err(|e| SpawnError::Invalid(RunError::Storage(e)))?;
                if requeued {
                    Ok(())
                } else {
                    Err(SpawnError::Conflict(format!(
                        "run {id} is already running on another instance"
                    )))
                }
            }
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
    /// On a store several instances share, a run left executing may be executing on another
    /// instance right now: instead, an instance that executes runs looks for claimable ones
    /// (whose lease ran out, or that no instance claimed), now and every renewal period.
    pub fn resume_at_startup(&self) {
        if let Some(lease) = self.lease.clone() {
            if self.executes {
                tokio::spawn(self.clone().take_claimable(lease));
            }
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

    /// Executes, for ever, the runs no instance holds (those whose instance stopped renewing
    /// their lease, and those recorded by a web-only instance), and helps with the slices
    /// of runs other instances hold.
    async fn take_claimable(self, lease: Lease) {
        let mut tick = tokio::time::interval(lease.period());
        loop {
            tick.tick().await;
            let storage = self.storage.clone();
            let claimable =
                match tokio::task::spawn_blocking(move || storage.claimable_runs()).await {
                    Ok(Ok(ids)) => ids,
                    Ok(Err(e)) => {
                        tracing::warn!("cannot look for runs to execute: {e}");
                        continue;
                    }
                    Err(_) => continue,
                };
            for id in claimable {
                if self.spawn(id.clone()) {
                    tracing::info!(run = id, "executing a run no instance held");
                }
            }
            if self.slicing(true).is_none() {
                continue;
            }
            let (storage, me) = (self.storage.clone(), lease.owner().to_string());
            if let Ok(Ok(ids)) =
                tokio::task::spawn_blocking(move || storage.runs_to_help(&me)).await
            {
                for id in ids.into_iter().filter(|id| !self.is_executing(id)) {
                    if self.help(id.clone()) {
                        tracing::info!(run = id, "helping another instance with a run's slices");
                    }
                }
            }
        }
    }
}
