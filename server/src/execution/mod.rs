//! Where model-written code runs: the sandbox backends the configuration chooses, their
//! limits, and what `/api/health` and `atomworld sandbox check` say about them.
//!
//! Two environments, as suites ask for them ([`benchmarks::task::RunEnv`]):
//! - **python** (`[sandbox]`): the standard library only. Backends `wasm` (CPython 3.11 on
//!   WASI inside wasmtime; compiled in with the cargo feature `wasm-sandbox`, which the
//!   release build and `scripts/run.sh` turn on), `bwrap`, `container`, or `none`.
//! - **pymatgen** (`[sandbox.pymatgen]`): CPython 3.11 with MatTools' pinned stack in warm
//!   bubblewrap workers (`bwrap`, from `scripts/mattools-venv.sh`), in warm podman/docker
//!   containers (`container`, image from `scripts/container-image.sh`), or `none`. Its data
//!   sets (`[sandbox.pymatgen.data]`, e.g. `mattools = "…/test_files"`) are mounted read-only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub mod remote;

use benchmarks::task::{RunEnv, RunProgram, RunResult};

pub use crate::config::{PymatgenConfig, SandboxConfig};
use sandbox::{Limits, Outcome, Program, Sandbox, SandboxError};
use serde::{Deserialize, Serialize};

/// What the server knows of its sandbox (shown by `/api/health`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxState {
    /// The configured backend.
    pub backend: String,
    /// Whether programs can run.
    pub available: bool,
    /// Why not, or how the backend was loaded.
    pub detail: String,
}

/// Loads a backend's module ahead of the first run; says how it went.
type WarmUp = Arc<dyn Fn() -> Result<String, SandboxError> + Send + Sync>;

/// Starts warm workers until this many wait (bwrap and container in warm mode), so the first
/// runs after a server starts do not pay the interpreter's imports.
#[derive(Clone)]
struct Prestart {
    /// Starts workers until this many wait.
    start:
        Arc<dyn Fn(usize) -> sandbox::BoxFuture<'static, Result<(), SandboxError>> + Send + Sync>,
    /// How many wait now, alive (what health reports); `None` when workers are not kept.
    waiting: Arc<dyn Fn() -> Option<usize> + Send + Sync>,
}

/// A backend as configured: the backend, how to check it, and how to start its workers ahead
/// of use.
struct Chosen {
    backend: Arc<dyn sandbox::Backend>,
    warm_up: Option<WarmUp>,
    prestart: Option<Prestart>,
}

/// The configured sandboxes, cheap to clone.
#[derive(Clone)]
pub struct CodeRunner {
    python: Env,
    pymatgen: Env,
    output_bytes: u64,
    /// Whom the runs are made for ([`CodeRunner::for_client`]).
    client: Option<Arc<str>>,
    /// Stops this runner's programs, waiting or running ([`CodeRunner::cancelled_by`]).
    cancel: Option<sandbox::CancelToken>,
    /// The shared store whose workers run what this process cannot
    /// ([`CodeRunner::with_remote`]).
    remote: Option<crate::storage::Storage>,
}

/// One environment: its sandbox (if the backend exists here), warm-up and last state.
#[derive(Clone)]
struct Env {
    sandbox: Option<Arc<Sandbox>>,
    warm_up: Option<WarmUp>,
    prestart: Option<Prestart>,
    /// Runs at once (and warm workers kept).
    workers: usize,
    /// The fair queue in front of the workers: one client holds at most all of them but
    /// one, and waiting runs start in arrival order among the clients under that cap.
    gate: crate::cpu::CpuPool,
    /// The configured wall time and memory: a suite may ask for less, never for more.
    ceiling: Limits,
    state: Arc<Mutex<SandboxState>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The backend called `name` (and how to warm it up), or why there is none.
fn backend(name: &str) -> Result<Chosen, String> {
    match name {
        #[cfg(feature = "wasm-sandbox")]
        "wasm" => {
            let w = sandbox::wasm::WasmBackend::new(sandbox::wasm::WasmConfig::default());
            let warm = w.clone();
            let warm_up: WarmUp = Arc::new(move || {
                let info = warm.warm_up()?;
                Ok(format!(
                    "CPython 3.11 on WASI, module {} in {:.0} ms",
                    if info.compiled {
                        "compiled"
                    } else {
                        "loaded from the cache"
                    },
                    info.load_time.as_secs_f64() * 1e3
                ))
            });
            Ok(Chosen {
                backend: Arc::new(w),
                warm_up: Some(warm_up),
                prestart: None,
            })
        }
        #[cfg(not(feature = "wasm-sandbox"))]
        "wasm" => Err(
            "this build has no wasm sandbox (build the server with --features \
                       wasm-sandbox, as scripts/run.sh does)"
                .into(),
        ),
        "bwrap" => bwrap(sandbox::bwrap::BwrapConfig::default()),
        "none" => Err("no sandbox is configured ([sandbox] backend = \"none\")".into()),
        "container" => container(sandbox::container::ContainerConfig {
            // Warm without pre-imports: a container costs a few hundred ms to start.
            warm: true,
            ..Default::default()
        }),
        other => Err(format!(
            "unknown sandbox backend '{other}' (wasm, bwrap, container, none)"
        )),
    }
}

/// A backend that keeps warm workers: bwrap and container.
trait WarmWorkers: sandbox::Backend + Clone + 'static {
    /// Starts workers until `n` wait.
    fn start(&self, n: usize) -> sandbox::BoxFuture<'static, Result<(), SandboxError>>;
    /// Workers waiting and alive; `None` when workers are not kept (cold mode).
    fn waiting(&self) -> Option<usize>;
}

impl WarmWorkers for sandbox::bwrap::BwrapBackend {
    fn start(&self, n: usize) -> sandbox::BoxFuture<'static, Result<(), SandboxError>> {
        let w = self.clone();
        Box::pin(async move { w.warm_up(n).await })
    }

    fn waiting(&self) -> Option<usize> {
        self.config().warm.then(|| self.idle_workers())
    }
}

impl WarmWorkers for sandbox::container::ContainerBackend {
    fn start(&self, n: usize) -> sandbox::BoxFuture<'static, Result<(), SandboxError>> {
        let w = self.clone();
        Box::pin(async move { w.warm_up(n).await })
    }

    fn waiting(&self) -> Option<usize> {
        self.config().warm.then(|| self.idle_workers())
    }
}

/// `b` as chosen, checked by `warm_up` and able to start its workers ahead of use.
fn with_workers(b: impl WarmWorkers, warm_up: WarmUp) -> Chosen {
    let (starter, counter) = (b.clone(), b.clone());
    Chosen {
        backend: Arc::new(b),
        warm_up: Some(warm_up),
        prestart: Some(Prestart {
            start: Arc::new(move |n| starter.start(n)),
            waiting: Arc::new(move || counter.waiting()),
        }),
    }
}

/// A `bwrap` backend with `config`.
fn bwrap(config: sandbox::bwrap::BwrapConfig) -> Result<Chosen, String> {
    let b = sandbox::bwrap::BwrapBackend::new(config);
    let detail = if b.config().warm {
        format!(
            "bubblewrap, warm workers with {} modules pre-imported, venv {}",
            b.config().preload.len(),
            b.config().venv.display()
        )
    } else {
        format!("bubblewrap, venv {}", b.config().venv.display())
    };
    let warm_up: WarmUp = Arc::new(move || Ok(detail.clone()));
    Ok(with_workers(b, warm_up))
}

/// A `container` backend with `config`.
fn container(config: sandbox::container::ContainerConfig) -> Result<Chosen, String> {
    let b = sandbox::container::ContainerBackend::new(config);
    let probe = b.clone();
    let warm_up: WarmUp = Arc::new(move || {
        let c = probe.config();
        let engine = probe.engine().map_or_else(
            || "an engine".to_string(),
            |e| e.program.display().to_string(),
        );
        Ok(format!(
            "{engine}, image {}, {} containers{}",
            c.image(),
            if c.warm { "warm" } else { "per-run" },
            if c.preload.is_empty() {
                String::new()
            } else {
                format!(" with {} modules pre-imported", c.preload.len())
            }
        ))
    });
    Ok(with_workers(b, warm_up))
}

/// The pymatgen environment's backend.
fn pymatgen_backend(config: &PymatgenConfig) -> Result<Chosen, String> {
    match config.backend.as_str() {
        "bwrap" => {
            let mut b = if config.warm {
                sandbox::bwrap::BwrapConfig::warm_pymatgen()
            } else {
                sandbox::bwrap::BwrapConfig::default()
            };
            if let Some(venv) = &config.venv {
                b.venv = venv.clone();
            }
            b.mounts = config
                .data
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            bwrap(b)
        }
        "container" => {
            let mut c = if config.warm {
                sandbox::container::ContainerConfig::warm_pymatgen()
            } else {
                sandbox::container::ContainerConfig::default()
            };
            c.image = config.image.clone();
            c.mounts = config
                .data
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            container(c)
        }
        "none" => {
            Err("no pymatgen sandbox is configured ([sandbox.pymatgen] backend = \"none\")".into())
        }
        other => Err(format!(
            "unknown pymatgen sandbox backend '{other}' (bwrap, container, none)"
        )),
    }
}

impl Env {
    fn new(
        name: &str,
        chosen: Result<Chosen, String>,
        max_concurrent: usize,
        limits: Limits,
    ) -> Self {
        let ceiling = limits.clone();
        let (sandbox, warm_up, prestart, detail) = match chosen {
            Ok(c) => (
                Some(Arc::new(
                    Sandbox::new(c.backend, max_concurrent.max(1)).with_default_limits(limits),
                )),
                c.warm_up,
                c.prestart,
                "not checked yet".to_string(),
            ),
            Err(why) => (None, None, None, why),
        };
        Env {
            sandbox,
            warm_up,
            prestart,
            workers: max_concurrent.max(1),
            gate: crate::cpu::CpuPool::new(max_concurrent),
            ceiling,
            state: Arc::new(Mutex::new(SandboxState {
                backend: name.to_string(),
                available: false,
                detail,
            })),
        }
    }

    /// Whether programs run here (as last checked).
    fn usable(&self) -> bool {
        self.sandbox.is_some() && lock(&self.state).available
    }

    fn check(&self) -> SandboxState {
        if let Some(s) = &self.sandbox {
            let result = s.availability().and_then(|()| match &self.warm_up {
                Some(w) => w(),
                None => Ok(format!("backend {} ready", s.backend_name())),
            });
            let mut state = lock(&self.state);
            match result {
                Ok(detail) => {
                    state.available = true;
                    state.detail = detail;
                }
                Err(e) => {
                    state.available = false;
                    state.detail = e.to_string();
                }
            }
        }
        lock(&self.state).clone()
    }

    async fn run(
        &self,
        program: &Program,
        limits: Option<&Limits>,
        client: Option<&str>,
        cancel: Option<&sandbox::CancelToken>,
    ) -> Result<Outcome, SandboxError> {
        let who = client.map(|name| crate::cpu::Client {
            name,
            max_waiting: usize::MAX,
        });
        let retry = limits.map_or(self.ceiling.wall, |l| l.wall);
        let never = sandbox::CancelToken::new();
        let cancel = cancel.unwrap_or(&never);
        let _turn = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(SandboxError::Cancelled),
            turn = self.gate.admit(who, retry) => turn.map_err(|_| SandboxError::Cancelled)?,
        };
        let Some(s) = &self.sandbox else {
            let state = lock(&self.state).clone();
            return Err(SandboxError::Unavailable {
                backend: "configured",
                reason: format!("{}: {}", state.backend, state.detail),
            });
        };
        let limits = limits.unwrap_or(s.default_limits()).clone();
        s.run_with(program, &limits, cancel).await
    }
}

impl CodeRunner {
    /// The sandboxes `config` asks for; not checked yet (see [`check`](Self::check)).
    pub fn from_config(config: &SandboxConfig) -> Self {
        let limits = config.limits();
        let pymatgen_limits = Limits {
            memory_bytes: config.pymatgen.memory_mb.max(256) << 20,
            wall: Duration::from_secs(config.pymatgen.wall_secs.max(1)),
            ..limits.clone()
        };
        Self {
            python: Env::new(
                &config.backend,
                backend(&config.backend),
                config.max_concurrent,
                limits,
            ),
            pymatgen: Env::new(
                &config.pymatgen.backend,
                pymatgen_backend(&config.pymatgen),
                config.pymatgen.workers,
                pymatgen_limits,
            ),
            output_bytes: config.limits().output_bytes,
            client: None,
            cancel: None,
            remote: None,
        }
    }

    /// These sandboxes, and for an environment not usable here the workers of the shared
    /// store `storage` that have it (`atomworld worker --role sandbox`).
    pub fn with_remote(&self, storage: crate::storage::Storage) -> Self {
        Self {
            remote: Some(storage),
            ..self.clone()
        }
    }

    /// The environments usable in this process (as last checked), by their stored names.
    pub fn usable_here(&self) -> Vec<&'static str> {
        [
            (RunEnv::Python, &self.python),
            (RunEnv::Pymatgen, &self.pymatgen),
        ]
        .into_iter()
        .filter(|(_, e)| e.usable())
        .map(|(env, _)| remote::env_name(env))
        .collect()
    }

    /// How many programs this process runs at once in the environments usable here (a
    /// sandbox worker claims that many jobs at a time).
    pub fn job_slots(&self) -> usize {
        [&self.python, &self.pymatgen]
            .into_iter()
            .filter(|e| e.usable())
            .map(|e| e.workers)
            .sum::<usize>()
            .max(1)
    }

    /// The live workers of the shared store that run `env`, when this process cannot.
    fn remote_workers(&self, env: RunEnv, local: &Env) -> Option<u64> {
        let storage = self.remote.as_ref().filter(|_| !local.usable())?;
        storage
            .workers_with(remote::env_name(env))
            .inspect_err(|e| tracing::warn!("asking the store for sandbox workers: {e}"))
            .ok()
            .filter(|n| *n > 0)
    }

    /// `local`'s state, or the workers' when they run `env` for this process.
    fn state_of(&self, env: RunEnv, local: &Env) -> SandboxState {
        let state = lock(&local.state).clone();
        match self.remote_workers(env, local) {
            Some(n) => SandboxState {
                backend: format!("remote ({} here)", state.backend),
                available: true,
                detail: format!(
                    "{n} worker{} of the shared store run{} it",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "s" } else { "" }
                ),
            },
            None => state,
        }
    }

    /// The same sandboxes, every run made for `client` (a run, a person's address): while
    /// one client floods an environment, another's program finds a free worker.
    pub fn for_client(&self, client: impl Into<String>) -> Self {
        Self {
            client: Some(Arc::from(client.into())),
            ..self.clone()
        }
    }

    /// Whether this runner's token ([`CodeRunner::cancelled_by`]) was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.is_cancelled())
    }

    /// This runner, its programs stopped (waiting or running) once `token` is cancelled:
    /// a cancelled run's sandbox work ends with it.
    pub fn cancelled_by(&self, token: sandbox::CancelToken) -> Self {
        Self {
            cancel: Some(token),
            ..self.clone()
        }
    }

    /// Check the python environment now (blocking: the runtime's files are verified and its
    /// module loaded, compiling it the first time) and remember the answer.
    pub fn check(&self) -> SandboxState {
        self.python.check();
        self.state()
    }

    /// Check the pymatgen environment now (blocking: starts a test sandbox).
    pub fn check_pymatgen(&self) -> SandboxState {
        self.pymatgen.check();
        self.pymatgen_state()
    }

    /// Start the pymatgen environment's warm workers now (one per concurrent run), if it is
    /// available and keeps workers; says how many and how long it took. A server that lists
    /// MatTools' tasks calls this at start, so a first burst of scorings does not start
    /// every worker at once while it is asked for its health.
    pub async fn prestart_pymatgen(&self) -> Option<Result<String, SandboxError>> {
        let env = &self.pymatgen;
        let prestart = env.prestart.as_ref()?;
        if !lock(&env.state).available {
            return None;
        }
        let started = std::time::Instant::now();
        Some((prestart.start)(env.workers).await.map(|()| {
            format!(
                "{} warm workers started in {:.1} s",
                env.workers,
                started.elapsed().as_secs_f64()
            )
        }))
    }

    /// The python environment's last known state.
    pub fn state(&self) -> SandboxState {
        self.state_of(RunEnv::Python, &self.python)
    }

    /// The pymatgen environment's last known state.
    pub fn pymatgen_state(&self) -> SandboxState {
        let mut state = self.state_of(RunEnv::Pymatgen, &self.pymatgen);
        let waiting = self.pymatgen.prestart.as_ref().and_then(|p| (p.waiting)());
        if let (true, Some(n)) = (state.available, waiting) {
            state.detail = format!("{}; {n} warm workers waiting", state.detail);
        }
        state
    }

    /// Run `program` in the python environment under `limits` (the configured ones when
    /// `None`).
    pub async fn run(
        &self,
        program: &Program,
        limits: Option<&Limits>,
    ) -> Result<Outcome, SandboxError> {
        self.python
            .run(
                program,
                limits,
                self.client.as_deref(),
                self.cancel.as_ref(),
            )
            .await
    }

    /// Run a suite's program in the environment it asks for: here, or, when it is not usable
    /// here, on a worker of the shared store that has it.
    pub async fn run_need(&self, env: RunEnv, p: &RunProgram) -> Result<RunResult, SandboxError> {
        let local = match env {
            RunEnv::Python => &self.python,
            RunEnv::Pymatgen => &self.pymatgen,
        };
        if let (Some(storage), Some(_)) = (&self.remote, self.remote_workers(env, local)) {
            return remote::run_need(storage, env, p, self.cancel.as_ref()).await;
        }
        self.run_here(env, p).await
    }

    /// Run a suite's program in this process's sandbox of its environment.
    pub async fn run_here(&self, env: RunEnv, p: &RunProgram) -> Result<RunResult, SandboxError> {
        let program = Program {
            code: p.code.clone(),
            files: p
                .files
                .iter()
                .map(|(path, text)| (path.clone(), text.clone().into_bytes()))
                .collect(),
            stdin: Vec::new(),
            entry: None,
            data_links: p.data_links.clone(),
        };
        let environment = match env {
            RunEnv::Python => &self.python,
            RunEnv::Pymatgen => &self.pymatgen,
        };
        // The configuration bounds what a suite asks for (the output cap is what is kept,
        // not a resource: a suite may keep more, e.g. the documentation extraction).
        let limits = Limits {
            wall: Duration::from_secs(p.wall_secs.max(1)).min(environment.ceiling.wall),
            memory_bytes: (p.memory_mb.max(16) << 20).min(environment.ceiling.memory_bytes),
            output_bytes: if p.output_bytes > 0 {
                p.output_bytes
            } else {
                self.output_bytes
            },
            ..Limits::default()
        };
        let o = environment
            .run(
                &program,
                Some(&limits),
                self.client.as_deref(),
                self.cancel.as_ref(),
            )
            .await?;
        Ok(RunResult {
            stdout: o.stdout,
            stderr: o.stderr,
            exit_code: o.exit_code,
            stopped_by: o.stopped_by.map(|l| l.to_string()),
            wall_ms: o.wall_time.as_millis() as u64,
        })
    }
}
