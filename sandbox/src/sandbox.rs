//! The front: one backend, a queue behind a concurrency limit, cancellation.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::backend::Backend;
use crate::cancel::CancelToken;
use crate::error::SandboxError;
use crate::limits::Limits;
use crate::outcome::Outcome;
use crate::program::Program;

/// Runs programs on one [`Backend`], at most `max_concurrent` at a time (the rest wait in
/// FIFO order). Cheap to clone; clones share the queue.
#[derive(Clone)]
pub struct Sandbox {
    backend: Arc<dyn Backend>,
    permits: Arc<Semaphore>,
    max_concurrent: usize,
    default_limits: Limits,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("backend", &self.backend.name())
            .field("max_concurrent", &self.max_concurrent)
            .field("default_limits", &self.default_limits)
            .finish()
    }
}

impl Sandbox {
    /// A sandbox over `backend` running at most `max_concurrent` programs at once (at least 1).
    pub fn new(backend: Arc<dyn Backend>, max_concurrent: usize) -> Self {
        let max_concurrent = max_concurrent.max(1);
        Sandbox {
            backend,
            permits: Arc::new(Semaphore::new(max_concurrent)),
            max_concurrent,
            default_limits: Limits::default(),
        }
    }

    /// Sets the limits [`Sandbox::run`] uses (builder style).
    pub fn with_default_limits(mut self, limits: Limits) -> Self {
        self.default_limits = limits;
        self
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The concurrency limit.
    pub fn max_concurrent(&self) -> usize {
        self.max_concurrent
    }

    /// The default limits.
    pub fn default_limits(&self) -> &Limits {
        &self.default_limits
    }

    /// Runs currently executing (not queued).
    pub fn running(&self) -> usize {
        self.max_concurrent - self.permits.available_permits()
    }

    /// Whether the backend can run here (see [`Backend::availability`]; blocking I/O).
    pub fn availability(&self) -> Result<(), SandboxError> {
        self.backend.availability()
    }

    /// Runs `program` under the default limits. Dropping the future cancels the run.
    pub async fn run(&self, program: &Program) -> Result<Outcome, SandboxError> {
        let limits = self.default_limits.clone();
        self.run_with(program, &limits, &CancelToken::new()).await
    }

    /// Runs `program` under `limits`; waits for a free slot first. The run stops when `cancel`
    /// fires (while queued or running: `Err(Cancelled)`) or when this future is dropped. The
    /// slot is freed at once; a stopped `wasm` run winds down within about one epoch tick
    /// (10 ms) on its own thread.
    pub async fn run_with(
        &self,
        program: &Program,
        limits: &Limits,
        cancel: &CancelToken,
    ) -> Result<Outcome, SandboxError> {
        program.validate()?;
        // A token of our own, cancelled when this future is dropped or `cancel` fires.
        let inner = CancelToken::new();
        let guard = inner.drop_guard();
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(SandboxError::Cancelled),
            result = self.queued_run(program, limits, &inner) => result,
        };
        // Either finished or cancelled: in both cases the inner token may fire (it stops a run
        // still winding down after `cancel`).
        drop(guard);
        result
    }

    async fn queued_run(
        &self,
        program: &Program,
        limits: &Limits,
        cancel: &CancelToken,
    ) -> Result<Outcome, SandboxError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| SandboxError::Cancelled)?;
        tracing::debug!(backend = self.backend.name(), "sandbox run starts");
        self.backend.run(program, limits, cancel).await
    }

    /// Stops accepting runs: queued and later runs fail with `Cancelled` (running ones finish).
    pub fn close(&self) {
        self.permits.close();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::backend::BoxFuture;

    /// Sleeps `code.len()` ms (or until cancelled) and records how many ran at once.
    #[derive(Default)]
    struct Fake {
        now: AtomicUsize,
        max: AtomicUsize,
        cancelled: AtomicUsize,
    }

    impl Backend for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn availability(&self) -> Result<(), SandboxError> {
            Ok(())
        }
        fn run<'a>(
            &'a self,
            program: &'a Program,
            _limits: &'a Limits,
            cancel: &'a CancelToken,
        ) -> BoxFuture<'a, Result<Outcome, SandboxError>> {
            Box::pin(async move {
                let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
                self.max.fetch_max(n, Ordering::SeqCst);
                let ms = program.code.len() as u64;
                let r = tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(Outcome {
                        stdout: program.code.clone(),
                        stderr: String::new(),
                        exit_code: Some(0),
                        stopped_by: None,
                        trap: None,
                        wall_time: Duration::from_millis(ms),
                        peak_memory_bytes: None,
                        entry_result: None,
                        files: Vec::new(),
                    }),
                    _ = cancel.cancelled() => {
                        self.cancelled.fetch_add(1, Ordering::SeqCst);
                        Err(SandboxError::Cancelled)
                    }
                };
                self.now.fetch_sub(1, Ordering::SeqCst);
                r
            })
        }
    }

    #[tokio::test]
    async fn queue_respects_the_limit_and_cancellation_stops_runs() {
        let fake = Arc::new(Fake::default());
        let sandbox = Sandbox::new(fake.clone(), 2);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..10 {
            let s = sandbox.clone();
            set.spawn(async move { s.run(&Program::new("x".repeat(20))).await });
        }
        while let Some(r) = set.join_next().await {
            assert!(r.unwrap().unwrap().success());
        }
        assert_eq!(fake.max.load(Ordering::SeqCst), 2);

        // A cancel token stops a running program.
        let token = CancelToken::new();
        let t2 = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            t2.cancel();
        });
        let long = Program::new("x".repeat(5_000));
        let t = std::time::Instant::now();
        let r = sandbox.run_with(&long, &Limits::default(), &token).await;
        assert!(matches!(r, Err(SandboxError::Cancelled)), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!(sandbox.running(), 0);

        // A backend given a cancelled token stops by itself.
        let r = fake.run(&long, &Limits::default(), &token).await;
        assert!(matches!(r, Err(SandboxError::Cancelled)), "{r:?}");
        assert_eq!(fake.cancelled.load(Ordering::SeqCst), 1);

        // Dropping the future frees its slot (the wasm tests check the run itself stops).
        let dropped = tokio::time::timeout(Duration::from_millis(20), sandbox.run(&long)).await;
        assert!(dropped.is_err());
        assert_eq!(sandbox.running(), 0);

        // A closed sandbox refuses new runs.
        sandbox.close();
        assert!(matches!(
            sandbox.run(&Program::new("x")).await,
            Err(SandboxError::Cancelled)
        ));
    }

    #[tokio::test]
    async fn invalid_programs_are_refused_before_queuing() {
        let sandbox = Sandbox::new(Arc::new(Fake::default()), 1);
        let bad = Program::new("x").with_file("../etc", b"x".to_vec());
        let err = sandbox.run(&bad).await.unwrap_err();
        assert!(err.to_string().contains("invalid program"), "{err}");
    }
}
