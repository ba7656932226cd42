//! CPU-bound work (parsing, actions, matching) off the async threads, shared fairly.
//!
//! Architecture invariant: a handler or run never parses, applies an action or matches on
//! an async worker thread; it goes through [`CpuPool`], which runs at most one job per core
//! on tokio's blocking threads, so `/api/health` and every other request keep answering
//! whatever the jobs cost. Jobs that can be long (matching) get a time budget and an
//! [`Interrupt`] that stops them when it runs out or when the caller goes away.
//!
//! Fair sharing: a job may name its client (a run, a room participant). One client runs at
//! most all slots but one at a time, so while it floods the pool another client's job finds
//! a free slot; waiting jobs start in arrival order among the clients under that cap; and a
//! client with [`MAX_WAITING`] jobs already waiting is told to come back
//! ([`CpuError::Busy`]) instead of queueing without end. Jobs without a client (the server's
//! own short work) wait in the same queue without a cap.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use engine::interrupt::Interrupt;
use tokio::sync::oneshot;

/// Jobs of one client that may wait for a slot; more are refused with [`CpuError::Busy`].
pub const MAX_WAITING: usize = 4;

/// Why a job gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The job panicked (a bug; the server keeps running).
    #[error("internal error: a computation failed ({0})")]
    Panicked(String),
    /// The pool is shutting down.
    #[error("the server is shutting down")]
    Closed,
    /// This client already has as many jobs waiting as it may.
    #[error(
        "busy: {waiting} of your computations are already waiting; retry in {retry_after_secs} s"
    )]
    Busy {
        /// Jobs of the client waiting.
        waiting: usize,
        /// When a retry may find room (the job budget, at most).
        retry_after_secs: u64,
    },
}

/// Whose job it is, for fair sharing: a name (a run, a room participant) and how many of its
/// jobs may wait at once (a run's own jobs always wait; a person's are refused past
/// [`MAX_WAITING`]).
#[derive(Clone, Copy, Debug)]
pub struct Client<'a> {
    /// The client's name.
    pub name: &'a str,
    /// Jobs that may wait; the next one is refused with [`CpuError::Busy`].
    pub max_waiting: usize,
}

/// Who is running and waiting.
#[derive(Debug, Default)]
struct Schedule {
    running: usize,
    running_of: HashMap<String, usize>,
    waiting_of: HashMap<String, usize>,
    queue: VecDeque<(Option<String>, oneshot::Sender<()>)>,
}

/// A bounded, fair pool for CPU-bound jobs.
#[derive(Clone, Debug)]
pub struct CpuPool {
    slots: usize,
    schedule: Arc<Mutex<Schedule>>,
}

/// A held slot; dropping it frees the slot and starts the next eligible job.
#[derive(Debug)]
struct Slot {
    pool: CpuPool,
    client: Option<String>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.pool.release(self.client.as_deref());
    }
}

/// A slot held by [`CpuPool::admit`]'s caller; dropping it frees the slot.
#[derive(Debug)]
pub struct Admitted {
    _slot: Slot,
}

/// A job waiting in the queue. Dropped before it took its slot (the caller went away), it
/// frees a slot that was granted meanwhile; one not yet granted is skipped when its turn
/// comes.
struct Waiting {
    rx: oneshot::Receiver<()>,
    granted: bool,
    pool: CpuPool,
    client: Option<String>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.granted && self.rx.try_recv().is_ok() {
            self.pool.release(self.client.as_deref());
        }
    }
}

fn lock(m: &Mutex<Schedule>) -> std::sync::MutexGuard<'_, Schedule> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl CpuPool {
    /// A pool running at most `jobs` jobs at once.
    pub fn new(jobs: usize) -> Self {
        Self {
            slots: jobs.max(1),
            schedule: Arc::default(),
        }
    }

    /// The process's pool: one job per available core.
    pub fn global() -> &'static CpuPool {
        static POOL: OnceLock<CpuPool> = OnceLock::new();
        POOL.get_or_init(|| {
            CpuPool::new(std::thread::available_parallelism().map_or(2, usize::from))
        })
    }

    /// Slots one client may hold at once: all but one (all, with a single slot).
    fn per_client(&self) -> usize {
        (self.slots - 1).max(1)
    }

    /// Whether a job of `client` may start now.
    fn may_start(&self, s: &Schedule, client: Option<&str>) -> bool {
        s.running < self.slots
            && client.is_none_or(|c| s.running_of.get(c).copied().unwrap_or(0) < self.per_client())
    }

    fn start(s: &mut Schedule, client: Option<&str>) {
        s.running += 1;
        if let Some(c) = client {
            *s.running_of.entry(c.to_string()).or_default() += 1;
        }
    }

    /// Wait for a slot for a job of `client`, or hear that it has too many waiting already.
    async fn slot(&self, who: Option<Client<'_>>, budget: Duration) -> Result<Slot, CpuError> {
        let client = who.map(|c| c.name);
        let granted = {
            let mut s = lock(&self.schedule);
            if self.may_start(&s, client) {
                Self::start(&mut s, client);
                None
            } else {
                if let Some(Client {
                    name: c,
                    max_waiting,
                }) = who
                {
                    let waiting = s.waiting_of.get(c).copied().unwrap_or(0);
                    if waiting >= max_waiting {
                        return Err(CpuError::Busy {
                            waiting,
                            retry_after_secs: budget.as_secs().max(1),
                        });
                    }
                    *s.waiting_of.entry(c.to_string()).or_default() += 1;
                }
                let (tx, rx) = oneshot::channel();
                s.queue.push_back((client.map(str::to_string), tx));
                Some(rx)
            }
        };
        let slot = || Slot {
            pool: self.clone(),
            client: client.map(str::to_string),
        };
        let Some(rx) = granted else {
            return Ok(slot());
        };
        let mut waiting = Waiting {
            rx,
            granted: false,
            pool: self.clone(),
            client: client.map(str::to_string),
        };
        match (&mut waiting.rx).await {
            Ok(()) => {
                waiting.granted = true;
                Ok(slot())
            }
            Err(_) => Err(CpuError::Closed),
        }
    }

    /// Free a slot of `client` and start the waiting jobs that may start now, in arrival
    /// order; a waiter that gave up is skipped.
    fn release(&self, client: Option<&str>) {
        let mut s = lock(&self.schedule);
        s.running -= 1;
        if let Some(c) = client {
            if let Some(n) = s.running_of.get_mut(c) {
                *n -= 1;
                if *n == 0 {
                    s.running_of.remove(c);
                }
            }
        }
        let mut i = 0;
        while i < s.queue.len() && s.running < self.slots {
            let eligible = self.may_start(&s, s.queue[i].0.as_deref());
            if !eligible {
                i += 1;
                continue;
            }
            let Some((who, tx)) = s.queue.remove(i) else {
                break;
            };
            if let Some(c) = &who {
                if let Some(n) = s.waiting_of.get_mut(c) {
                    *n -= 1;
                    if *n == 0 {
                        s.waiting_of.remove(c);
                    }
                }
            }
            Self::start(&mut s, who.as_deref());
            if tx.send(()).is_err() {
                // The waiter went away: its slot is free again.
                s.running -= 1;
                if let Some(c) = &who {
                    if let Some(n) = s.running_of.get_mut(c) {
                        *n -= 1;
                        if *n == 0 {
                            s.running_of.remove(c);
                        }
                    }
                }
            }
        }
    }

    /// Wait in the fair queue for a slot of `who` and hold it until the guard is dropped,
    /// running no job: the caller does its own work meanwhile (a sandbox run in front of the
    /// sandbox's workers). `retry_after` is what a refusal ([`CpuError::Busy`]) suggests.
    pub async fn admit(
        &self,
        who: Option<Client<'_>>,
        retry_after: Duration,
    ) -> Result<Admitted, CpuError> {
        self.slot(who, retry_after)
            .await
            .map(|slot| Admitted { _slot: slot })
    }

    /// Run `job` on a blocking thread once a slot is free.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, CpuError> {
        let _slot = self.slot(None, Duration::from_secs(1)).await?;
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
        self.run_within_for(None, budget, job).await
    }

    /// [`run_within`](Self::run_within) as a job of `client` (see the module's fair sharing).
    pub async fn run_within_for<T: Send + 'static>(
        &self,
        client: Option<Client<'_>>,
        budget: Duration,
        job: impl FnOnce(&Interrupt) -> T + Send + 'static,
    ) -> Result<T, CpuError> {
        let _slot = self.slot(client, budget).await?;
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

    fn person(name: &str) -> Client<'_> {
        Client {
            name,
            max_waiting: MAX_WAITING,
        }
    }

    /// While one client fills the pool, another's job takes the slot it may not hold; a
    /// client with `MAX_WAITING` jobs waiting is told to come back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flooding_client_leaves_a_slot_and_a_bounded_queue() {
        let pool = CpuPool::new(2);
        let release = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut heavy = Vec::new();
        for _ in 0..1 + MAX_WAITING {
            let (pool, release) = (pool.clone(), release.clone());
            heavy.push(tokio::spawn(async move {
                pool.run_within_for(Some(person("flood")), Duration::from_secs(30), move |_| {
                    while !release.load(std::sync::atomic::Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                })
                .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = pool
            .run_within_for(Some(person("flood")), Duration::from_secs(30), |_| ())
            .await;
        assert!(
            matches!(
                refused,
                Err(CpuError::Busy {
                    waiting: MAX_WAITING,
                    ..
                })
            ),
            "{refused:?}"
        );
        let started = std::time::Instant::now();
        let other = pool
            .run_within_for(Some(person("other")), Duration::from_secs(30), |_| 7)
            .await
            .unwrap();
        assert_eq!(other, 7);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        release.store(true, std::sync::atomic::Ordering::SeqCst);
        for h in heavy {
            h.await.unwrap().unwrap();
        }
        let s = lock(&pool.schedule);
        assert_eq!((s.running, s.queue.len(), s.waiting_of.len()), (0, 0, 0));
    }
}
