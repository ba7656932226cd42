//! Backend `container`: the same worker as `bwrap`, in a podman (or docker) container, for
//! hosts where a container engine is the way to isolate code.
//!
//! The image (`localhost/atomworld-sandbox:<hash>`, see [`engine::default_image`]) is built
//! by `scripts/container-image.sh` from `sandbox/container/Containerfile`: Debian bookworm's
//! CPython 3.11 with the pinned MatTools stack (the `bwrap` venv's pins) and
//! `python/bwrap_worker.py`. Each worker is one container ([`profile`]: `--network none`,
//! read-only root, tmpfs scratch, uid 65534 without capabilities, memory, pids and CPU caps,
//! data mounted read-only, no host variable) running the worker, which forks a fresh child
//! per run under rlimits and kills and wipes everything after it. The engine runs rootful
//! without a user namespace, so uid 65534 is the host's `nobody`: data mounts must be
//! readable by others.
//!
//! - **Warm** ([`ContainerConfig::warm`]): long-lived containers with
//!   [`ContainerConfig::preload`] imported, reused run after run; one that timed out or failed
//!   is removed and replaced in the background.
//! - **Cold**: one container per run.
//!
//! Limits: as `bwrap` inside (wall time, `RLIMIT_CPU`, `RLIMIT_AS`, file size, capped pipes),
//! plus the container's cgroup caps: a run the memory cgroup kills is reported as
//! [`Limit::MemoryExceeded`] (the worker's count of OOM kills, or the container's exit 137),
//! and a run past its wall limit plus [`crate::worker::GRACE`] gets its container removed
//! (`rm -f` by its unique name). Containers are named `atomworld-sbx-<pid>-<backend>-<n>`; those of
//! processes that are gone are removed when the backend first finds its engine.

pub mod engine;
pub mod profile;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use self::engine::{default_image, default_runtime, Engine, NAME_PREFIX};
use self::profile::Profile;
use self::worker::{ContainerWorker, Removal};
use crate::backend::{Backend, BoxFuture};
use crate::cancel::CancelToken;
use crate::error::SandboxError;
use crate::limits::{Limit, Limits};
use crate::outcome::Outcome;
use crate::program::Program;
use crate::worker::{
    check_mounts, data_links, outcome, run_on_worker, worker_args, Idle, Launch, Worker,
};
use crate::worker::{GRACE, PYMATGEN_PRELOAD};

/// The backend's name.
pub const NAME: &str = "container";

/// How the `container` backend runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerConfig {
    /// The engine's client (`podman`, `docker`, or a path); `None`: podman, else docker,
    /// whichever answers.
    pub engine: Option<PathBuf>,
    /// The OCI runtime podman is asked for; `None`: `runc` when it is installed (crun fails
    /// on hybrid cgroup v1 hosts), `Some("")`: the engine's default.
    pub runtime: Option<String>,
    /// The image; `None`: the one `scripts/container-image.sh` builds for this version.
    pub image: Option<String>,
    /// Modules a worker imports before serving (empty: none).
    pub preload: Vec<String>,
    /// Keep containers between runs (warm) or start one per run (cold).
    pub warm: bool,
    /// Read-only data: (name, host directory), mounted at `/data/<name>`.
    pub mounts: Vec<(String, PathBuf)>,
    /// Size of a container's `/work` tmpfs. Default 256 MiB.
    pub work_bytes: u64,
    /// Size of its `/tmp` and `/dev/shm` each. Default 64 MiB.
    pub tmp_bytes: u64,
    /// Memory of a whole container (its cgroup; no swap): the worker, its pre-imports and
    /// the run. A run's own cap is its [`Limits::memory_bytes`]. Default 3 GiB.
    pub memory_bytes: u64,
    /// Processes a container may hold. Default 128.
    pub max_pids: u32,
    /// CPUs a container may use. Default 1.
    pub cpus: f64,
    /// How long a worker may take to start and pre-import. Default 120 s.
    pub ready_within: Duration,
}

impl Default for ContainerConfig {
    fn default() -> Self {
        ContainerConfig {
            engine: None,
            runtime: None,
            image: None,
            preload: Vec::new(),
            warm: false,
            mounts: Vec::new(),
            work_bytes: 256 << 20,
            tmp_bytes: 64 << 20,
            memory_bytes: 3 << 30,
            max_pids: 128,
            cpus: 1.0,
            ready_within: Duration::from_secs(120),
        }
    }
}

impl ContainerConfig {
    /// Warm containers with pymatgen pre-imported ([`PYMATGEN_PRELOAD`]).
    pub fn warm_pymatgen() -> Self {
        ContainerConfig {
            preload: PYMATGEN_PRELOAD.iter().map(|s| s.to_string()).collect(),
            warm: true,
            ..Self::default()
        }
    }

    /// The image this configuration runs.
    pub fn image(&self) -> String {
        self.image.clone().unwrap_or_else(default_image)
    }
}

/// The `container` backend. Cheap to share (`Arc` inside).
#[derive(Clone)]
pub struct ContainerBackend {
    inner: Arc<Inner>,
}

/// Backends made by this process (their number is part of their containers' names).
static BACKENDS: AtomicU64 = AtomicU64::new(0);

struct Inner {
    config: ContainerConfig,
    /// `atomworld-sbx-<pid>-<backend>-`: the start of this backend's container names.
    prefix: String,
    engine: OnceLock<Engine>,
    idle: Idle<ContainerWorker>,
    next: AtomicU64,
}

impl std::fmt::Debug for ContainerBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainerBackend")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

fn unavailable(reason: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: NAME,
        reason: reason.into(),
    }
}

fn backend_err(message: impl Into<String>) -> SandboxError {
    SandboxError::Backend {
        backend: NAME,
        message: message.into(),
    }
}

/// The hint for a container that did not start, given what the engine said.
fn start_hint(said: &str) -> &'static str {
    if said.contains("crun") || said.contains("cgroup") {
        " (crun fails on hosts with a hybrid cgroup v1: install runc, which this backend then \
         asks for)"
    } else if said.contains("image not known") || said.contains("No such image") {
        " (the image is not built: run scripts/container-image.sh)"
    } else {
        ""
    }
}

impl ContainerBackend {
    /// A backend with `config` (nothing is started until a run or a check).
    pub fn new(config: ContainerConfig) -> Self {
        ContainerBackend {
            inner: Arc::new(Inner {
                prefix: format!(
                    "{NAME_PREFIX}{}-{}-",
                    std::process::id(),
                    BACKENDS.fetch_add(1, Ordering::Relaxed)
                ),
                config,
                engine: OnceLock::new(),
                idle: Idle::new(),
                next: AtomicU64::new(0),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ContainerConfig {
        &self.inner.config
    }

    /// The engine, once one has answered (after [`Backend::availability`] or a run).
    pub fn engine(&self) -> Option<&Engine> {
        self.inner.engine.get()
    }

    /// The start of the names of this backend's containers (`atomworld-sbx-<pid>-<n>-`).
    pub fn name_prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// Containers started and waiting (warm mode).
    /// Dead ones found are dropped and replaced in the background.
    pub fn idle_workers(&self) -> usize {
        self.inner.idle.alive_replacing(|| self.inner.replace())
    }

    /// Starts containers until `n` are idle (warm mode; a no-op when cold).
    pub async fn warm_up(&self, n: usize) -> Result<(), SandboxError> {
        if !self.inner.config.warm {
            return Ok(());
        }
        self.inner.idle.fill(n, || self.inner.spawn(false)).await
    }
}

impl Inner {
    /// The engine (found once; blocking: call off the async executor).
    fn engine(&self) -> Result<Engine, SandboxError> {
        if let Some(e) = self.engine.get() {
            return Ok(e.clone());
        }
        let found = Engine::find(self.config.engine.as_deref())?;
        let e = self.engine.get_or_init(|| found).clone();
        let sweeper = e.clone();
        std::thread::spawn(move || sweeper.sweep_stale());
        Ok(e)
    }

    async fn engine_async(self: &Arc<Self>) -> Result<Engine, SandboxError> {
        if let Some(e) = self.engine.get() {
            return Ok(e.clone());
        }
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.engine())
            .await
            .map_err(|e| backend_err(format!("finding the engine: {e}")))?
    }

    fn profile(&self, engine: &Engine) -> Profile {
        let c = &self.config;
        let runtime = match &c.runtime {
            None => default_runtime(engine.kind),
            Some(r) if r.is_empty() => None,
            Some(r) => Some(r.clone()),
        };
        let name = format!(
            "{}{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        Profile {
            kind: engine.kind,
            runtime,
            image: c.image(),
            name,
            mounts: c.mounts.clone(),
            work_bytes: c.work_bytes,
            tmp_bytes: c.tmp_bytes,
            memory_bytes: c.memory_bytes,
            max_pids: c.max_pids,
            cpus: c.cpus,
        }
    }

    async fn spawn(self: &Arc<Self>, once: bool) -> Result<ContainerWorker, SandboxError> {
        let engine = self.engine_async().await?;
        let profile = self.profile(&engine);
        let removal = Removal::new(engine.clone(), profile.name.clone());
        let worker = Worker::spawn(Launch {
            backend: NAME,
            program: engine.program.clone(),
            args: profile.args(&worker_args(once, &self.config.preload)),
            cgroup: None,
            ready_within: self.config.ready_within,
            install: "install podman: apt-get install podman runc",
            hint: start_hint,
        })
        .await?;
        Ok(ContainerWorker::new(worker, removal))
    }

    /// Starts a replacement for a discarded warm container in the background.
    fn replace(self: &Arc<Self>) {
        if !self.config.warm {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            match me.spawn(false).await {
                Ok(w) => me.idle.put(w),
                Err(e) => tracing::warn!(error = %e, "could not start a replacement container"),
            }
        });
    }
}

impl Backend for ContainerBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn availability(&self) -> Result<(), SandboxError> {
        let inner = &self.inner;
        let engine = inner.engine()?;
        check_mounts(NAME, &inner.config.mounts)?;
        let image = inner.config.image();
        if !engine.has_image(&image)? {
            return Err(unavailable(format!(
                "{} has no image {image}: run scripts/container-image.sh (it builds the image \
                 of this version's Containerfile, pins and worker)",
                engine.program.display()
            )));
        }
        let profile = inner.profile(&engine);
        let out = engine
            .command()
            .args(profile.args(&worker_args(true, &[])))
            .output()
            .map_err(|e| unavailable(format!("cannot run {}: {e}", engine.program.display())))?;
        if String::from_utf8_lossy(&out.stdout).starts_with("READY") {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        engine.remove(&profile.name);
        Err(unavailable(format!(
            "a test container did not start ({}): {said}{}",
            out.status,
            start_hint(&said)
        )))
    }

    fn run<'a>(
        &'a self,
        program: &'a Program,
        limits: &'a Limits,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<Outcome, SandboxError>> {
        Box::pin(async move {
            program.validate()?;
            let inner = &self.inner;
            let links = data_links(program, &inner.config.mounts)?;
            let once = !inner.config.warm;
            let (reused, dead) = inner.idle.take();
            for _ in 0..dead {
                inner.replace();
            }
            let started = Instant::now();
            let (mut worker, result) = run_on_worker(
                reused,
                || inner.spawn(once),
                program,
                limits,
                &links,
                cancel,
            )
            .await?;
            let wall_time = started.elapsed();
            match result {
                None => {
                    drop(worker);
                    inner.replace();
                    Err(SandboxError::Cancelled)
                }
                Some(Err(_)) => {
                    drop(worker);
                    inner.replace();
                    Ok(Outcome::stopped(
                        Limit::TimedOut,
                        format!(
                            "the run did not stop within {GRACE:?} after its wall limit; its \
                             container was removed"
                        ),
                        wall_time,
                    ))
                }
                Some(Ok(Err(e))) => {
                    // The worker died mid-run: exit 137 is a SIGKILL, which nothing but the
                    // container's memory cgroup sends while the run is within its time.
                    let status = worker.exit_status().await;
                    let name = worker.name().to_string();
                    drop(worker);
                    inner.replace();
                    if status.and_then(|s| s.code()) == Some(137) {
                        return Ok(Outcome::stopped(
                            Limit::MemoryExceeded,
                            format!(
                                "container {name} was killed (exit 137): its memory cgroup's \
                                 cap of {} MiB was reached",
                                inner.config.memory_bytes >> 20
                            ),
                            wall_time,
                        ));
                    }
                    Err(e)
                }
                Some(Ok(Ok(answer))) => {
                    if inner.config.warm {
                        inner.idle.put(worker);
                    } else {
                        worker.finish().await;
                    }
                    outcome(NAME, answer, program, limits, wall_time)
                }
            }
        })
    }
}
