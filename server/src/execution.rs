//! Where model-written code runs: the sandbox backend the configuration chooses (`[sandbox]`),
//! its limits, and what `/api/health` and `atomworld sandbox check` say about it.
//!
//! Backends: `wasm` (CPython 3.11 on WASI inside wasmtime; compiled in with the cargo feature
//! `wasm-sandbox`, which the release build and `scripts/run.sh` turn on) and `none`. The
//! `bwrap` and `container` backends of the sandbox design are not built yet.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox::{Limits, Outcome, Program, Sandbox, SandboxError};
use serde::{Deserialize, Serialize};

/// The `[sandbox]` section of the configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxConfig {
    /// `wasm` (the embedded default) or `none`.
    pub backend: String,
    /// Programs running at once; more wait in a queue.
    pub max_concurrent: usize,
    /// Wall-clock seconds a program may take.
    pub wall_secs: u64,
    /// Memory a program may use (MiB).
    pub memory_mb: u64,
    /// Bytes of stdout (and, separately, of stderr) kept.
    pub output_bytes: u64,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        let limits = Limits::default();
        Self {
            backend: "wasm".into(),
            max_concurrent: 2,
            wall_secs: limits.wall.as_secs(),
            memory_mb: limits.memory_bytes / (1024 * 1024),
            output_bytes: limits.output_bytes,
        }
    }
}

impl SandboxConfig {
    /// The limits these settings give.
    pub fn limits(&self) -> Limits {
        Limits {
            wall: Duration::from_secs(self.wall_secs.max(1)),
            memory_bytes: self.memory_mb.max(16) * 1024 * 1024,
            output_bytes: self.output_bytes.max(1024),
            ..Limits::default()
        }
    }
}

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

/// The configured sandbox, cheap to clone.
#[derive(Clone)]
pub struct CodeRunner {
    sandbox: Option<Arc<Sandbox>>,
    warm_up: Option<WarmUp>,
    state: Arc<Mutex<SandboxState>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The backend called `name` (and how to warm it up), or why there is none.
fn backend(name: &str) -> Result<(Arc<dyn sandbox::Backend>, Option<WarmUp>), String> {
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
            Ok((Arc::new(w), Some(warm_up)))
        }
        #[cfg(not(feature = "wasm-sandbox"))]
        "wasm" => Err(
            "this build has no wasm sandbox (build the server with --features \
                       wasm-sandbox, as scripts/run.sh does)"
                .into(),
        ),
        "none" => Err("no sandbox is configured ([sandbox] backend = \"none\")".into()),
        "bwrap" | "container" => Err(format!("the {name} backend is not built yet")),
        other => Err(format!(
            "unknown sandbox backend '{other}' (wasm, none; bwrap and container are planned)"
        )),
    }
}

impl CodeRunner {
    /// The sandbox `config` asks for; not checked yet (see [`check`](Self::check)).
    pub fn from_config(config: &SandboxConfig) -> Self {
        let (sandbox, warm_up, detail) = match backend(&config.backend) {
            Ok((b, warm_up)) => (
                Some(Arc::new(
                    Sandbox::new(b, config.max_concurrent.max(1))
                        .with_default_limits(config.limits()),
                )),
                warm_up,
                "not checked yet".to_string(),
            ),
            Err(why) => (None, None, why),
        };
        Self {
            sandbox,
            warm_up,
            state: Arc::new(Mutex::new(SandboxState {
                backend: config.backend.clone(),
                available: false,
                detail,
            })),
        }
    }

    /// Check the backend now (blocking: the runtime's files are verified and its module
    /// loaded, compiling it the first time) and remember the answer.
    pub fn check(&self) -> SandboxState {
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
        self.state()
    }

    /// The last known state.
    pub fn state(&self) -> SandboxState {
        lock(&self.state).clone()
    }

    /// Run `program` under `limits` (the configured ones when `None`).
    pub async fn run(
        &self,
        program: &Program,
        limits: Option<&Limits>,
    ) -> Result<Outcome, SandboxError> {
        let Some(s) = &self.sandbox else {
            let state = self.state();
            return Err(SandboxError::Unavailable {
                backend: "configured",
                reason: format!("{}: {}", state.backend, state.detail),
            });
        };
        match limits {
            Some(l) => s.run_with(program, l, &sandbox::CancelToken::new()).await,
            None => s.run(program).await,
        }
    }
}
