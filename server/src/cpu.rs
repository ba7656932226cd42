//! CPU-bound work (parsing, actions, matching) off the async threads.
//!
//! Architecture invariant: a handler or run never parses, applies an action or matches on
//! an async worker thread; it goes through [`CpuPool`], which runs at most one job per core
//! on tokio's blocking threads, so `/api/health` and every other request keep answering
//! whatever the jobs cost. Jobs that can be long (matching) get a time budget and an
//! [`Interrupt`] that stops them when it runs out or when the caller goes away.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use engine::interrupt::Interrupt;
use tokio::sync::Semaphore;

/// Why a job gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The job panicked (a bug; the server keeps running).
    #[error("internal error: a computation failed ({0})")]
    Panicked(String),
    /// The pool is shutting down.
    #[error("the server is shutting down")]
    Closed,
}

/// A bounded pool for CPU-bound jobs.
#[derive(Clone, Debug)]
pub struct CpuPool {
    permits: Arc<Semaphore>,
}

impl CpuPool {
    /// A pool running at most `jobs` jobs at once.
    pub fn new(jobs: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(jobs.max(1))),
        }
    }

    /// The process's pool: one job per available core.
    pub fn global() -> &'static CpuPool {
        static POOL: OnceLock<CpuPool> = OnceLock::new();
        POOL.get_or_init(|| {
            CpuPool::new(std::thread::available_parallelism().map_or(2, usize::from))
        })
    }

    /// Wait for a free slot.
    async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, CpuError> {
        self.permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| CpuError::Closed)
    }

    /// Run `job` on a blocking thread once a slot is free.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, CpuError> {
        let _slot = self.slot().await?;
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|e| CpuError::Panicked(e.to_string()))
    }

    /// Run `job` with an interrupt that is raised after `budget` (counted from when the job
    /// starts) or when this future is dropped; the job decides what an interrupted
    /// computation returns.
    pub async fn run_within<T: Send + 'static>(
        &self,
        budget: Duration,
        job: impl FnOnce(&Interrupt) -> T + Send + 'static,
    ) -> Result<T, CpuError> {
        let _slot = self.slot().await?;
        let interrupt = Interrupt::new();
        let _raise_on_drop = RaiseOnDrop(interrupt.clone());
        let inner = interrupt.clone();
        let mut handle = tokio::task::spawn_blocking(move || job(&inner));
        tokio::select! {
            done = &mut handle => done.map_err(|e| CpuError::Panicked(e.to_string())),
            () = tokio::time::sleep(budget) => {
                interrupt.raise();
                handle.await.map_err(|e| CpuError::Panicked(e.to_string()))
            }
        }
    }
}

/// Raises an interrupt when dropped (the caller stopped waiting).
struct RaiseOnDrop(Interrupt);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.raise();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_job_past_its_budget_is_interrupted() {
        let pool = CpuPool::new(1);
        let started = std::time::Instant::now();
        let stopped = pool
            .run_within(Duration::from_millis(50), |i| {
                while !i.is_raised() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                "stopped"
            })
            .await
            .unwrap();
        assert_eq!(stopped, "stopped");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(pool.run(|| 2 + 2).await.unwrap(), 4);
        assert!(matches!(
            pool.run(|| -> u8 { panic!("boom") }).await,
            Err(CpuError::Panicked(_))
        ));
    }
}
