//! Sandbox runs on other machines: on a shared store, an instance whose environment is
//! not usable here queues the program for a worker that has it (`atomworld worker --role
//! sandbox`), and waits for its outcome; the worker side claims, runs and answers.

use std::time::Duration;

use benchmarks::task::{RunEnv, RunProgram, RunResult};
use sandbox::SandboxError;

use super::CodeRunner;
use crate::storage::{ClaimedJob, Storage, WORKER_ALIVE_SECS};

/// How often an asker looks for its job's outcome (at first; then less often, up to
/// [`LONGEST_LOOK`]).
const FIRST_LOOK: Duration = Duration::from_millis(50);
const LONGEST_LOOK: Duration = Duration::from_millis(500);

/// A job is given up when no worker has its environment for this long.
const ORPHANED_AFTER: Duration = Duration::from_secs(60);

/// The name a store knows an environment by.
pub fn env_name(env: RunEnv) -> &'static str {
    match env {
        RunEnv::Python => "python",
        RunEnv::Pymatgen => "pymatgen",
    }
}

/// The environment of a stored name.
fn env_of(name: &str) -> Option<RunEnv> {
    match name {
        "python" => Some(RunEnv::Python),
        "pymatgen" => Some(RunEnv::Pymatgen),
        _ => None,
    }
}

fn store_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend {
        backend: "remote",
        message: format!("the shared store: {e}"),
    }
}

/// Run `p` in `env` on a worker of `storage`, stopping (and withdrawing the job) when
/// `cancel` fires.
pub(super) async fn run_need(
    storage: &Storage,
    env: RunEnv,
    p: &RunProgram,
    cancel: Option<&sandbox::CancelToken>,
) -> Result<RunResult, SandboxError> {
    let id = format!("job-{:032x}", rand::random::<u128>());
    let program = serde_json::to_string(p).map_err(store_error)?;
    let queued = {
        let (storage, id) = (storage.clone(), id.clone());
        tokio::task::spawn_blocking(move || storage.queue_job(&id, env_name(env), &program))
    };
    queued.await.map_err(store_error)?.map_err(store_error)?;
    let never = sandbox::CancelToken::new();
    let cancel = cancel.unwrap_or(&never);
    let mut look = FIRST_LOOK;
    let mut without_worker = Duration::ZERO;
    let outcome = loop {
        tokio::select! {
            () = tokio::time::sleep(look) => {}
            () = cancel.cancelled() => break Err(SandboxError::Cancelled),
        }
        let asked = {
            let (storage, id) = (storage.clone(), id.clone());
            tokio::task::spawn_blocking(move || {
                let outcome = storage.job_outcome(&id)?;
                let workers = match outcome {
                    Some(_) => 1,
                    None => storage.workers_with(env_name(env))?,
                };
                Ok::<_, crate::storage::StorageError>((outcome, workers))
            })
        };
        match asked.await.map_err(store_error)? {
            Ok((Some(done), _)) => {
                break done.map_err(|message| SandboxError::Backend {
                    backend: "remote",
                    message,
                })
            }
            Ok((None, 0)) => {
                without_worker += look;
                if without_worker >= ORPHANED_AFTER {
                    break Err(SandboxError::Unavailable {
                        backend: "remote",
                        reason: format!(
                            "no worker of the shared store runs the {} sandbox any more",
                            env_name(env)
                        ),
                    });
                }
            }
            Ok((None, _)) => without_worker = Duration::ZERO,
            // A store that stumbles is asked again; the job waits there meanwhile.
            Err(e) => tracing::warn!("asking for sandbox job {id}: {e}"),
        }
        look = (look * 2).min(LONGEST_LOOK);
    };
    let dropped = {
        let storage = storage.clone();
        tokio::task::spawn_blocking(move || storage.drop_job(&id))
    };
    if let Ok(Err(e)) = dropped.await {
        tracing::warn!("a finished sandbox job stays in the store: {e}");
    }
    serde_json::from_str(&outcome?).map_err(store_error)
}

/// Run one claimed job with `code` (this worker's own sandboxes); its outcome as stored.
pub async fn answer(code: &CodeRunner, job: &ClaimedJob) -> Result<String, String> {
    let env = env_of(&job.env).ok_or_else(|| format!("unknown environment {}", job.env))?;
    let program: RunProgram =
        serde_json::from_str(&job.program).map_err(|e| format!("the job's program: {e}"))?;
    let result = code
        .run_here(env, &program)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::to_string(&result).map_err(|e| e.to_string())
}

/// How often a worker says it lives ([`WORKER_ALIVE_SECS`] / 3).
const SEEN_EVERY: Duration = Duration::from_secs(WORKER_ALIVE_SECS as u64 / 3);

/// How long a worker holds a job it runs before another may take it (its worker lives and
/// says so meanwhile: this bounds only a worker that hangs).
const CLAIM_SECS: i64 = 3600;

/// The sandbox side of a worker: it says it lives (with its environments), claims the jobs
/// of its environments and stores their outcomes.
pub struct Worker {
    stop: sandbox::CancelToken,
    tasks: tokio::task::JoinSet<()>,
    storage: Storage,
    id: String,
}

impl Worker {
    /// Start serving jobs of `envs` from `storage` with `code`, `slots` at a time.
    pub fn start(storage: Storage, code: CodeRunner, roles: &str, envs: Vec<&'static str>) -> Self {
        let id = format!("worker-{:016x}", rand::random::<u64>());
        let stop = sandbox::CancelToken::new();
        let mut tasks = tokio::task::JoinSet::new();
        {
            let (storage, id, roles, envs, stop) = (
                storage.clone(),
                id.clone(),
                roles.to_string(),
                envs.clone(),
                stop.clone(),
            );
            tasks.spawn(async move {
                loop {
                    let (s, i, r, e) = (storage.clone(), id.clone(), roles.clone(), envs.clone());
                    let seen = tokio::task::spawn_blocking(move || s.worker_seen(&i, &r, &e)).await;
                    if let Ok(Err(e)) = seen {
                        tracing::warn!("telling the store this worker lives: {e}");
                    }
                    tokio::select! {
                        () = tokio::time::sleep(SEEN_EVERY) => {}
                        () = stop.cancelled() => break,
                    }
                }
            });
        }
        for _ in 0..code.job_slots() {
            let (storage, code, id, envs, stop) = (
                storage.clone(),
                code.clone(),
                id.clone(),
                envs.clone(),
                stop.clone(),
            );
            tasks.spawn(async move { serve(&storage, &code, &id, &envs, &stop).await });
        }
        Self {
            stop,
            tasks,
            storage,
            id,
        }
    }

    /// Stop claiming, let the jobs in flight finish, and leave the store's list of workers.
    pub async fn stop(mut self) {
        self.stop.cancel();
        while self.tasks.join_next().await.is_some() {}
        let (storage, id) = (self.storage.clone(), self.id.clone());
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || storage.worker_gone(&id)).await {
            tracing::warn!("leaving the store's list of workers: {e}");
        }
    }
}

/// One slot: claim a job, answer it, store the outcome; wait a little when none waits.
async fn serve(
    storage: &Storage,
    code: &CodeRunner,
    id: &str,
    envs: &[&'static str],
    stop: &sandbox::CancelToken,
) {
    let mut idle = FIRST_LOOK;
    while !stop.is_cancelled() {
        let claimed = {
            let (s, i, e) = (storage.clone(), id.to_string(), envs.to_vec());
            tokio::task::spawn_blocking(move || s.claim_job(&i, &e, CLAIM_SECS)).await
        };
        let job = match claimed {
            Ok(Ok(Some(job))) => job,
            Ok(Ok(None)) => {
                tokio::select! {
                    () = tokio::time::sleep(idle) => {}
                    () = stop.cancelled() => break,
                }
                idle = (idle * 2).min(LONGEST_LOOK);
                continue;
            }
            Ok(Err(e)) => {
                tracing::warn!("claiming a sandbox job: {e}");
                tokio::time::sleep(LONGEST_LOOK).await;
                continue;
            }
            Err(e) => {
                tracing::error!("claiming a sandbox job: {e}");
                break;
            }
        };
        idle = FIRST_LOOK;
        let outcome = answer(code, &job).await;
        let (s, i) = (storage.clone(), id.to_string());
        let stored = tokio::task::spawn_blocking(move || s.finish_job(&job.id, &i, &outcome)).await;
        match stored {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => tracing::info!("a sandbox job was given up by its asker"),
            Ok(Err(e)) => tracing::warn!("storing a sandbox job's outcome: {e}"),
            Err(e) => tracing::error!("storing a sandbox job's outcome: {e}"),
        }
    }
}
