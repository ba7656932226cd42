//! Backend `wasm`: CPython 3.11 built for WASI, run inside wasmtime 48 (cargo feature `wasm`).
//!
//! - The interpreter and its stdlib zip are read from a directory
//!   ([`WasmConfig::runtime_dir`]) that `scripts/python-wasm-o3.sh` (CPython built at `-O3`
//!   from Debian's source, preferred) or `scripts/python-wasm.sh` (the `-O0` download, the
//!   fallback) fills; both files are checked against pinned sha256 values ([`interpreter`]).
//! - The module is compiled once per process and cached on disk as a `.cwasm` file keyed by
//!   the wasmtime version, the engine's configuration and the CPU (`Engine::
//!   precompile_compatibility_hash`); later loads deserialize it in milliseconds and fall back
//!   to compiling when the file is missing or refused.
//! - Every run gets a fresh `Store` on a thread of its own (CPU-bound guests never block the
//!   caller's async executor). Time is bounded by epoch interruption (a ticker thread
//!   advances the epoch every [`TICK`]; a callback checks the wall deadline, the CPU budget,
//!   cancellation and the scratch size) plus a host-side timeout for guests blocked in a host
//!   call such as `time.sleep`. Memory is bounded by a resource limiter (the guest sees
//!   `MemoryError`), stdout/stderr by capped in-memory pipes.
//! - The guest sees only two preopened directories: the runtime directory read-only at
//!   `/usr/local/lib` (the stdlib zip; the interpreter and compiled cache files there are
//!   readable too, they are public) and the run's scratch directory read-write at `/scratch`
//!   (its working directory). No sockets, no host environment: the environment holds only
//!   `PYTHONHOME=/usr/local` and `PYTHONUNBUFFERED=1`. Interpreter flags: `-S -s -B` (not
//!   `-I`, which would ignore `PYTHONHOME`).
//! - A program's code runs as `__main__` from `/scratch/main.py` through a short launcher given
//!   with `-c`; with an entry, the launcher calls it and prints `json.dumps(result,
//!   default=repr)` as the last line of stdout.

use std::hash::{Hash, Hasher};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::entry::split_entry_result;
use tokio::sync::oneshot;
use wasmtime::{
    Config, Engine, InstancePre, Linker, Module, OptLevel, ResourceLimiter, Store, Trap,
    UpdateDeadline,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::backend::{Backend, BoxFuture};
use crate::cancel::CancelToken;
use crate::error::SandboxError;
use crate::limits::{Limit, Limits};
use crate::outcome::Outcome;
use crate::program::Program;
use crate::scratch::{dir_size, Scratch};

pub mod interpreter;
pub use interpreter::{default_runtime_dir, verify_runtime_dir, Interpreter, DIR_ENV};

/// The backend's name.
pub const NAME: &str = "wasm";
/// How often the epoch advances (the granularity of the time, CPU and cancel checks).
pub const TICK: Duration = Duration::from_millis(10);
/// The scratch size is checked every this many ticks of guest execution.
const SCRATCH_CHECK_TICKS: u64 = 10;
/// How long past its wall limit a run may take to wind down before it is abandoned.
const GRACE: Duration = Duration::from_secs(5);

/// The launcher passed with `-c` (argv: `main.py [entry]`): the backends' one launcher
/// (`python/launcher.py`), called without arguments.
const LAUNCHER: &str = concat!(
    include_str!("../../python/launcher.py"),
    "_atomworld_run()\n"
);

/// Where the `wasm` backend finds its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WasmConfig {
    /// Directory holding one known build's interpreter and stdlib ([`interpreter::KNOWN`]).
    pub runtime_dir: PathBuf,
    /// Where compiled modules are cached (default: `<runtime_dir>/compiled`).
    pub cache_dir: Option<PathBuf>,
    /// Where per-run scratch directories are made (default: the system temp dir).
    pub scratch_parent: Option<PathBuf>,
}

impl Default for WasmConfig {
    fn default() -> Self {
        WasmConfig {
            runtime_dir: default_runtime_dir(),
            cache_dir: None,
            scratch_parent: None,
        }
    }
}

impl WasmConfig {
    /// The directory compiled modules are cached in.
    pub fn cache_dir(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(|| self.runtime_dir.join("compiled"))
    }
}

/// How the module was obtained when the backend loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadInfo {
    /// The build that was loaded.
    pub interpreter: Interpreter,
    /// True when the module was JIT-compiled (no usable cache file), false when deserialized.
    pub compiled: bool,
    /// Time to verify, compile or deserialize, and prepare the module.
    pub load_time: Duration,
    /// Time spent checking the sha256 of the two files (part of `load_time`).
    pub verify_time: Duration,
    /// The cache file used or written.
    pub cache_file: PathBuf,
}

struct Loaded {
    engine: Engine,
    runtime_dir: PathBuf,
    pre: InstancePre<RunState>,
    info: LoadInfo,
}

struct Inner {
    config: WasmConfig,
    loaded: Mutex<Option<Arc<Loaded>>>,
    verified: OnceLock<Interpreter>,
}

/// The `wasm` backend. Cheap to create (no I/O); the module is loaded on first use or by
/// [`WasmBackend::warm_up`]. Cheap to clone (clones share the loaded module).
#[derive(Clone)]
pub struct WasmBackend {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for WasmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmBackend")
            .field("config", &self.inner.config)
            .finish()
    }
}

impl WasmBackend {
    /// A backend reading its files as `config` says.
    pub fn new(config: WasmConfig) -> Self {
        WasmBackend {
            inner: Arc::new(Inner {
                config,
                loaded: Mutex::new(None),
                verified: OnceLock::new(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &WasmConfig {
        &self.inner.config
    }

    /// Verifies the files and loads (compiles or deserializes) the module now, if not done yet.
    /// Blocking: call it from `spawn_blocking` or at start-up.
    pub fn warm_up(&self) -> Result<LoadInfo, SandboxError> {
        Ok(self.inner.loaded()?.info.clone())
    }

    /// How the module was loaded, once it has been.
    pub fn load_info(&self) -> Option<LoadInfo> {
        self.inner
            .loaded
            .lock()
            .ok()
            .and_then(|l| l.as_ref().map(|l| l.info.clone()))
    }
}

fn backend_err(message: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend {
        backend: NAME,
        message: message.to_string(),
    }
}

/// The engine configuration. Everything here changes the compiled code, and so the cache key
/// (through `precompile_compatibility_hash`).
fn engine_config() -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.cranelift_opt_level(OptLevel::Speed);
    config.max_wasm_stack(1 << 20);
    config.async_stack_size(2 << 20);
    config
}

impl Inner {
    fn verify(&self) -> Result<Interpreter, SandboxError> {
        if let Some(interpreter) = self.verified.get() {
            return Ok(*interpreter);
        }
        let interpreter = verify_runtime_dir(&self.config.runtime_dir)?;
        let _ = self.verified.set(interpreter);
        Ok(interpreter)
    }

    fn loaded(&self) -> Result<Arc<Loaded>, SandboxError> {
        let mut slot = self
            .loaded
            .lock()
            .map_err(|_| backend_err("a previous load panicked"))?;
        if let Some(loaded) = slot.as_ref() {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(self.load()?);
        *slot = Some(loaded.clone());
        Ok(loaded)
    }

    fn load(&self) -> Result<Loaded, SandboxError> {
        let started = Instant::now();
        let interpreter = self.verify()?;
        let verify_time = started.elapsed();
        let engine = Engine::new(&engine_config()).map_err(backend_err)?;
        let cache_dir = self.config.cache_dir();
        let cache_file = cache_dir.join(format!(
            "{}-{}.cwasm",
            interpreter.name,
            cache_key(&engine, &interpreter)
        ));
        let mut compiled = false;
        // SAFETY: `deserialize_file` trusts the file to be wasmtime's own output. The cache
        // directory is written only by this function (atomic rename of `Module::serialize`
        // output) and wasmtime checks the header, version and engine compatibility itself.
        let module = match unsafe { Module::deserialize_file(&engine, &cache_file) } {
            Ok(module) => module,
            Err(e) => {
                if cache_file.exists() {
                    tracing::warn!(file = %cache_file.display(), error = %e,
                        "compiled python-wasm module refused; compiling again");
                }
                compiled = true;
                let t = Instant::now();
                let wasm_path = self.config.runtime_dir.join(interpreter.wasm_file);
                let module = Module::from_file(&engine, &wasm_path)
                    .map_err(|e| backend_err(format!("compiling {}: {e}", wasm_path.display())))?;
                tracing::info!(
                    secs = t.elapsed().as_secs_f64(),
                    interpreter = interpreter.name,
                    "compiled python-wasm module"
                );
                if let Err(e) = write_cache(&module, &cache_dir, &cache_file) {
                    tracing::warn!(file = %cache_file.display(), error = %e,
                        "could not cache the compiled python-wasm module");
                }
                module
            }
        };
        let mut linker: Linker<RunState> = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_async(&mut linker, |s: &mut RunState| &mut s.wasi)
            .map_err(backend_err)?;
        let pre = linker.instantiate_pre(&module).map_err(backend_err)?;
        start_ticker(&engine);
        Ok(Loaded {
            engine,
            runtime_dir: self.config.runtime_dir.clone(),
            pre,
            info: LoadInfo {
                interpreter,
                compiled,
                load_time: started.elapsed(),
                verify_time,
                cache_file,
            },
        })
    }
}

/// A key for the compiled module: the interpreter's sha256, the wasmtime major version and
/// the engine's compatibility hash (wasmtime version, settings, target and CPU features).
fn cache_key(engine: &Engine, interpreter: &Interpreter) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let compat = h.finish();
    let mut sha = Sha256::new();
    sha.update(interpreter.wasm_sha256.as_bytes());
    sha.update(b"wasmtime-48");
    sha.update(std::env::consts::ARCH.as_bytes());
    sha.update(compat.to_le_bytes());
    hex::encode(&sha.finalize()[..12])
}

fn write_cache(module: &Module, dir: &Path, file: &Path) -> io::Result<()> {
    let bytes = module.serialize().map_err(io::Error::other)?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// Advances `engine`'s epoch every [`TICK`] until the engine is dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new()
        .name("sandbox-wasm-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(TICK);
            match weak.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => break,
            }
        });
    if let Err(e) = spawned {
        // Without a ticker the host timeout still stops runs, only CPU loops take until then.
        tracing::error!(error = %e, "could not start the wasm epoch ticker");
    }
}

/// Memory limiter: refuses growth past the limit, remembers the peak and whether it refused.
struct MemLimiter {
    limit: usize,
    peak: usize,
    refused: bool,
}

impl ResourceLimiter for MemLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.refused = true;
            return Ok(false);
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// Why the epoch callback stopped the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Limit(Limit),
    Cancelled,
}

struct RunState {
    wasi: WasiP1Ctx,
    limiter: MemLimiter,
    stop: Option<Stop>,
}

impl Backend for WasmBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn availability(&self) -> Result<(), SandboxError> {
        self.inner.verify().map(|_| ())
    }

    fn run<'a>(
        &'a self,
        program: &'a Program,
        limits: &'a Limits,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<Outcome, SandboxError>> {
        Box::pin(async move {
            program.validate()?;
            if !program.data_links.is_empty() {
                return Err(SandboxError::InvalidProgram(format!(
                    "backend `{NAME}` has no data mounts; data links need the `bwrap` backend"
                )));
            }
            let inner = self.inner.clone();
            let loaded = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(SandboxError::Cancelled),
                loaded = tokio::task::spawn_blocking(move || inner.loaded()) => {
                    loaded.map_err(|e| backend_err(format!("loading the module: {e}")))??
                }
            };
            // Our own token fires when this future is dropped; the run thread watches both.
            let own = CancelToken::new();
            let guard = own.drop_guard();
            let job = Job {
                loaded,
                program: program.clone(),
                limits: limits.clone(),
                cancel: [cancel.clone(), own.clone()],
                scratch_parent: self.inner.config.scratch_parent.clone(),
            };
            let (tx, rx) = oneshot::channel();
            std::thread::Builder::new()
                .name("sandbox-wasm-run".into())
                .spawn(move || {
                    let _ = tx.send(job.run());
                })
                .map_err(|e| backend_err(format!("starting a run thread: {e}")))?;
            let started = Instant::now();
            let result = match tokio::time::timeout(limits.wall + GRACE, rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(backend_err("the run thread ended without a result")),
                Err(_) => {
                    own.cancel();
                    Ok(Outcome::stopped(
                        Limit::TimedOut,
                        format!(
                            "the run did not stop within {GRACE:?} after its wall limit and was \
                             abandoned"
                        ),
                        started.elapsed(),
                    ))
                }
            };
            guard.disarm();
            result
        })
    }
}

/// One run, executed on its own thread.
struct Job {
    loaded: Arc<Loaded>,
    program: Program,
    limits: Limits,
    cancel: [CancelToken; 2],
    scratch_parent: Option<PathBuf>,
}

/// How the guest's execution ended.
enum Ended {
    Finished(wasmtime::Result<()>),
    HostTimeout,
    Cancelled,
}

impl Job {
    fn cancelled(&self) -> bool {
        self.cancel.iter().any(CancelToken::is_cancelled)
    }

    fn run(self) -> Result<Outcome, SandboxError> {
        let started = Instant::now();
        if self.cancelled() {
            return Err(SandboxError::Cancelled);
        }
        let scratch = Scratch::create(
            self.scratch_parent.as_deref(),
            &self.program,
            self.limits.scratch_bytes,
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| backend_err(format!("starting the run's runtime: {e}")))?;
        let result = runtime.block_on(self.execute(&scratch, started));
        let result = result.and_then(|mut outcome| {
            outcome.files = scratch.result_files()?;
            if outcome.stopped_by.is_none() && scratch.size() > self.limits.scratch_bytes {
                outcome.stopped_by = Some(Limit::ScratchFull);
            }
            outcome.wall_time = started.elapsed();
            Ok(outcome)
        });
        if let Err(e) = scratch.remove() {
            tracing::warn!(error = %e, "could not remove a sandbox scratch directory");
        }
        result
    }

    async fn execute(&self, scratch: &Scratch, started: Instant) -> Result<Outcome, SandboxError> {
        let cap = usize::try_from(self.limits.output_bytes).unwrap_or(usize::MAX - 1);
        let stdout = MemoryOutputPipe::new(cap.saturating_add(1));
        let stderr = MemoryOutputPipe::new(cap.saturating_add(1));
        let runtime_dir = &self.loaded.runtime_dir;
        let mut args = vec!["python", "-S", "-s", "-B", "-c", LAUNCHER, "main.py"];
        if let Some(entry) = &self.program.entry {
            args.push(entry);
        }
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdin(MemoryInputPipe::new(self.program.stdin.clone()))
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .args(&args)
            .env("PYTHONHOME", "/usr/local")
            .env("PYTHONUNBUFFERED", "1")
            .allow_blocking_current_thread(true)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        builder
            .preopened_dir(runtime_dir, "/usr/local/lib", FsPerms::ReadOnly)
            .map_err(|e| backend_err(format!("opening {}: {e}", runtime_dir.display())))?;
        builder
            .preopened_dir(scratch.path(), "/scratch", FsPerms::ReadWrite)
            .map_err(|e| backend_err(format!("opening the scratch dir: {e}")))?;
        let wasi = builder.build_p1();

        let memory_limit = usize::try_from(self.limits.memory_bytes).unwrap_or(usize::MAX);
        let mut store = Store::new(
            &self.loaded.engine,
            RunState {
                wasi,
                limiter: MemLimiter {
                    limit: memory_limit,
                    peak: 0,
                    refused: false,
                },
                stop: None,
            },
        );
        store.limiter(|s| &mut s.limiter);

        let deadline = started + self.limits.wall;
        let cpu_ticks = self.limits.effective_cpu().as_millis() / TICK.as_millis() + 1;
        let cancel = self.cancel.clone();
        let scratch_path = scratch.path().to_path_buf();
        let scratch_limit = self.limits.scratch_bytes;
        let mut ticks: u128 = 0;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut ctx| {
            ticks += 1;
            let stop = if cancel.iter().any(CancelToken::is_cancelled) {
                Stop::Cancelled
            } else if Instant::now() >= deadline || ticks > cpu_ticks {
                Stop::Limit(Limit::TimedOut)
            } else if ticks.is_multiple_of(u128::from(SCRATCH_CHECK_TICKS))
                && dir_size(&scratch_path) > scratch_limit
            {
                Stop::Limit(Limit::ScratchFull)
            } else {
                return Ok(UpdateDeadline::Continue(1));
            };
            ctx.data_mut().stop = Some(stop);
            Ok(UpdateDeadline::Interrupt)
        });

        let ended = {
            let pre = &self.loaded.pre;
            let store = &mut store;
            let call = async move {
                let instance = pre.instantiate_async(&mut *store).await?;
                let start = instance.get_typed_func::<(), ()>(&mut *store, "_start")?;
                start.call_async(&mut *store, ()).await
            };
            let [c0, c1] = &self.cancel;
            tokio::select! {
                ended = call => Ended::Finished(ended),
                _ = tokio::time::sleep_until(deadline.into()) => Ended::HostTimeout,
                _ = c0.cancelled() => Ended::Cancelled,
                _ = c1.cancelled() => Ended::Cancelled,
            }
        };

        let state = store.data();
        let mut stopped_by = None;
        let mut exit_code = None;
        let mut trap = None;
        match (ended, state.stop) {
            (Ended::Cancelled, _) | (_, Some(Stop::Cancelled)) => {
                return Err(SandboxError::Cancelled)
            }
            (Ended::HostTimeout, _) => stopped_by = Some(Limit::TimedOut),
            (Ended::Finished(_), Some(Stop::Limit(limit))) => stopped_by = Some(limit),
            (Ended::Finished(Ok(())), None) => exit_code = Some(0),
            (Ended::Finished(Err(e)), None) => {
                if let Some(exit) = e.downcast_ref::<I32Exit>() {
                    exit_code = Some(exit.0);
                } else {
                    trap = Some(match e.downcast_ref::<Trap>() {
                        Some(t) => format!("wasm trap: {t}"),
                        None => e.to_string(),
                    });
                }
            }
        }
        if stopped_by.is_none() && state.limiter.refused {
            stopped_by = Some(Limit::MemoryExceeded);
        }
        let peak = state.limiter.peak as u64;
        drop(store);

        let (stdout, out_cut) = take_capped(&stdout, cap);
        let (stderr, err_cut) = take_capped(&stderr, cap);
        if (out_cut || err_cut) && stopped_by.is_none() {
            stopped_by = Some(Limit::OutputTruncated);
            // A write past the cap traps inside the pipe: that is the truncation, not a crash.
            trap = None;
        }
        let (stdout, entry_result) = split_entry_result(stdout, self.program.entry.is_some());
        Ok(Outcome {
            stdout,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            exit_code,
            stopped_by,
            trap,
            wall_time: started.elapsed(),
            peak_memory_bytes: Some(peak),
            entry_result,
            files: Vec::new(),
        })
    }
}

/// The pipe's contents cut to `cap` bytes, and whether anything was cut.
fn take_capped(pipe: &MemoryOutputPipe, cap: usize) -> (Vec<u8>, bool) {
    let mut bytes = pipe.contents().to_vec();
    let cut = bytes.len() > cap;
    bytes.truncate(cap);
    (bytes, cut)
}
