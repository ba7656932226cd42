//! Backend `bwrap`: native CPython 3.11 with the pinned MatTools stack, inside bubblewrap.
//!
//! For code that needs C extensions (numpy, pymatgen), which the `wasm` backend cannot load.
//! Each worker is one bubblewrap sandbox ([`profile`]: no network, read-only root, non-root
//! uid, cleared environment, capped tmpfs scratch) running `python/bwrap_worker.py`, which
//! forks a fresh child per run under rlimits and wipes every process and file after it.
//!
//! - **Warm** ([`BwrapConfig::warm`]): workers import [`BwrapConfig::preload`] (pymatgen and
//!   friends) once and are reused, so a run does not pay the 3.7–6 s import; a worker that
//!   timed out or failed is killed and replaced in the background.
//! - **Cold**: one sandbox per run, started and ended with it.
//!
//! The venv comes from `scripts/mattools-venv.sh` (pins in
//! `sandbox/python/mattools-requirements.txt`); read-only data (MatTools' test files) is
//! bound at `/data/<name>` ([`BwrapConfig::mounts`]) and linked into a run's scratch by
//! [`crate::Program::data_links`].
//!
//! Limits: wall time (the worker kills the run's process group; the host kills the whole
//! sandbox [`GRACE`] later), CPU (`RLIMIT_CPU`), memory (`RLIMIT_AS` above what the warm
//! interpreter already maps), file size and scratch (`RLIMIT_FSIZE`, tmpfs size), output
//! (capped pipes), processes (a pids cgroup of [`BwrapConfig::max_pids`] where the host has
//! one, see [`cgroup`]).

mod bound_dir;
pub mod profile;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use self::profile::{Profile, PYTHON_DIR};
use crate::backend::{Backend, BoxFuture};
use crate::cancel::CancelToken;
use crate::error::SandboxError;
use crate::limits::{Limit, Limits};
use crate::outcome::Outcome;
use crate::program::Program;
use crate::worker::cgroup::{self, PidsCgroup};
use crate::worker::{
    check_mounts, data_links, outcome, run_on_worker, worker_args, Idle, Launch, Worker,
};
use crate::worker::{LAUNCHER_FILE, LAUNCHER_SOURCE, WORKER_FILE, WORKER_SOURCE};

/// The backend's name.
pub const NAME: &str = "bwrap";
/// Environment variable naming the venv (default `~/.cache/atomworld/venv-mattools`).
pub const VENV_ENV: &str = "ATOMWORLD_MATTOOLS_VENV";
pub use crate::worker::{GRACE, PYMATGEN_PRELOAD};

/// How the `bwrap` backend runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwrapConfig {
    /// The bubblewrap binary (looked up in `/usr/bin:/bin` when not a path).
    pub bwrap: PathBuf,
    /// The CPython 3.11 venv (made by `scripts/mattools-venv.sh`).
    pub venv: PathBuf,
    /// Modules a worker imports before serving (empty: none).
    pub preload: Vec<String>,
    /// Keep workers between runs (warm) or start one sandbox per run (cold).
    pub warm: bool,
    /// Read-only data: (name, host directory), bound at `/data/<name>`.
    pub mounts: Vec<(String, PathBuf)>,
    /// Size of a worker's `/work` tmpfs: the most any run's scratch can hold. Default 256 MiB.
    pub work_bytes: u64,
    /// Size of its `/tmp` and `/dev/shm` each. Default 64 MiB.
    pub tmp_bytes: u64,
    /// Processes a sandbox may hold (pids cgroup); 0: no cgroup. Default 128.
    pub max_pids: u32,
    /// How long a worker may take to start and pre-import. Default 120 s.
    pub ready_within: Duration,
    /// Where the files bound at the sandbox's worker directory are kept, one subdirectory
    /// per distinct set, shared by every process. Default `~/.cache/atomworld/bwrap-worker`.
    pub worker_cache: PathBuf,
}

impl Default for BwrapConfig {
    fn default() -> Self {
        BwrapConfig {
            bwrap: PathBuf::from("bwrap"),
            venv: Self::default_venv(),
            preload: Vec::new(),
            warm: false,
            mounts: Vec::new(),
            work_bytes: 256 << 20,
            tmp_bytes: 64 << 20,
            max_pids: 128,
            ready_within: Duration::from_secs(120),
            worker_cache: cache_home().join("bwrap-worker"),
        }
    }
}

/// `~/.cache/atomworld` (`./.cache/atomworld` without a `HOME`).
fn cache_home() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/atomworld")
}

impl BwrapConfig {
    /// `$ATOMWORLD_MATTOOLS_VENV`, else `~/.cache/atomworld/venv-mattools`.
    pub fn default_venv() -> PathBuf {
        if let Some(dir) = std::env::var_os(VENV_ENV) {
            return PathBuf::from(dir);
        }
        cache_home().join("venv-mattools")
    }

    /// Warm workers with pymatgen pre-imported ([`PYMATGEN_PRELOAD`]).
    pub fn warm_pymatgen() -> Self {
        BwrapConfig {
            preload: PYMATGEN_PRELOAD.iter().map(|s| s.to_string()).collect(),
            warm: true,
            ..Self::default()
        }
    }
}

/// The `bwrap` backend. Cheap to share (`Arc` inside).
#[derive(Clone)]
pub struct BwrapBackend {
    inner: Arc<Inner>,
}

struct Inner {
    config: BwrapConfig,
    idle: Idle<Worker>,
    /// The profile once it could be made (the venv read, its `pyvenv.cfg` rewritten): made
    /// again only while it fails, so a venv built later is picked up.
    profile: std::sync::OnceLock<Profile>,
}

impl std::fmt::Debug for BwrapBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BwrapBackend")
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

impl BwrapBackend {
    /// A backend with `config`. Nothing is started or written until the first run.
    pub fn new(config: BwrapConfig) -> Self {
        BwrapBackend {
            inner: Arc::new(Inner {
                config,
                idle: Idle::new(),
                profile: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BwrapConfig {
        &self.inner.config
    }

    /// Workers started and waiting (warm mode).
    /// Dead ones found are dropped and replaced in the background.
    pub fn idle_workers(&self) -> usize {
        self.inner.idle.alive_replacing(|| self.inner.replace())
    }

    /// Starts workers until `n` are idle (warm mode; a no-op when cold).
    pub async fn warm_up(&self, n: usize) -> Result<(), SandboxError> {
        if !self.inner.config.warm {
            return Ok(());
        }
        self.inner.idle.fill(n, || self.inner.spawn()).await
    }
}

/// The rewritten `pyvenv.cfg`'s name in the bound worker directory.
const VENV_CFG_FILE: &str = "pyvenv.cfg";

/// The venv's base interpreter prefix, from its `pyvenv.cfg` (`home = <prefix>/bin`), and
/// the file's text.
fn venv_home(venv: &Path) -> Result<(PathBuf, String), SandboxError> {
    let cfg = venv.join("pyvenv.cfg");
    let text = std::fs::read_to_string(&cfg).map_err(|e| {
        unavailable(format!(
            "the venv is not built ({}: {e}); run scripts/mattools-venv.sh",
            cfg.display()
        ))
    })?;
    let home = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "home")
        .map(|(_, v)| PathBuf::from(v.trim()))
        .ok_or_else(|| unavailable(format!("{} names no `home`", cfg.display())))?;
    let prefix = home.parent().map_or(home.clone(), Path::to_path_buf);
    Ok((prefix, text))
}

/// The hint for a sandbox that did not start because user namespaces are restricted.
fn userns_hint(said: &str) -> &'static str {
    if said.contains("uid map")
        || said.contains("user namespace")
        || said.contains("Operation not permitted")
        || said.contains("Permission denied")
    {
        " (user namespaces look restricted: on Ubuntu ≥ 23.10 AppArmor restricts \
         unprivileged user namespaces; see kernel.apparmor_restrict_unprivileged_userns)"
    } else {
        ""
    }
}

impl Inner {
    fn profile(&self) -> Result<Profile, SandboxError> {
        if let Some(p) = self.profile.get() {
            return Ok(p.clone());
        }
        let p = self.make_profile()?;
        Ok(self.profile.get_or_init(|| p).clone())
    }

    fn make_profile(&self) -> Result<Profile, SandboxError> {
        let c = &self.config;
        let python = c.venv.join("bin/python");
        if !python.exists() {
            return Err(unavailable(format!(
                "no interpreter at {}; run scripts/mattools-venv.sh",
                python.display()
            )));
        }
        check_mounts(NAME, &c.mounts)?;
        let (base_prefix, cfg) = venv_home(&c.venv)?;
        let rewritten: String = cfg
            .lines()
            .map(|l| match l.split_once('=') {
                Some((k, _)) if k.trim() == "home" => format!("home = {PYTHON_DIR}/bin\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        let worker_dir = bound_dir::materialize(
            &c.worker_cache,
            &[
                (WORKER_FILE, WORKER_SOURCE.as_bytes()),
                (LAUNCHER_FILE, LAUNCHER_SOURCE.as_bytes()),
                (VENV_CFG_FILE, rewritten.as_bytes()),
            ],
        )
        .map_err(SandboxError::Scratch)?;
        Ok(Profile {
            venv: c.venv.clone(),
            base_prefix,
            venv_cfg: worker_dir.join(VENV_CFG_FILE),
            worker_dir,
            mounts: c.mounts.clone(),
            work_bytes: c.work_bytes,
            tmp_bytes: c.tmp_bytes,
        })
    }

    fn cgroup(&self) -> Option<PidsCgroup> {
        if self.config.max_pids == 0 {
            return None;
        }
        PidsCgroup::create(Path::new(cgroup::PIDS_ROOT), self.config.max_pids).ok()
    }

    async fn spawn(&self) -> Result<Worker, SandboxError> {
        let once = !self.config.warm;
        let args = self
            .profile()?
            .args(&worker_args(once, &self.config.preload));
        Worker::spawn(Launch {
            backend: NAME,
            program: self.config.bwrap.clone(),
            args,
            cgroup: self.cgroup(),
            ready_within: self.config.ready_within,
            install: "install bubblewrap: apt-get install bubblewrap",
            hint: userns_hint,
        })
        .await
    }

    /// Starts a replacement for a discarded warm worker in the background.
    fn replace(self: &Arc<Self>) {
        if !self.config.warm {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            match me.spawn().await {
                Ok(w) => me.idle.put(w),
                Err(e) => tracing::warn!(error = %e, "could not start a replacement worker"),
            }
        });
    }
}

impl Backend for BwrapBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn availability(&self) -> Result<(), SandboxError> {
        let profile = self.inner.profile()?;
        let out = std::process::Command::new(&self.inner.config.bwrap)
            .args(profile.args(&["--once".to_string()]))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                unavailable(format!(
                    "cannot run {}: {e} (install bubblewrap: apt-get install bubblewrap)",
                    self.inner.config.bwrap.display()
                ))
            })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if stdout.starts_with("READY") {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let hint = if said.contains("namespace") || said.contains("uid map") {
            " (user namespaces look restricted: on Ubuntu ≥ 23.10 AppArmor restricts \
             unprivileged user namespaces; see kernel.apparmor_restrict_unprivileged_userns)"
        } else {
            ""
        };
        Err(unavailable(format!(
            "a test sandbox did not start ({}): {said}{hint}",
            out.status
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
            let (reused, dead) = inner.idle.take();
            for _ in 0..dead {
                inner.replace();
            }
            let started = Instant::now();
            let (worker, result) =
                run_on_worker(reused, || inner.spawn(), program, limits, &links, cancel).await?;
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
                             sandbox was killed"
                        ),
                        wall_time,
                    ))
                }
                Some(Ok(Err(e))) => {
                    drop(worker);
                    inner.replace();
                    Err(e)
                }
                Some(Ok(Ok(answer))) => {
                    if inner.config.warm {
                        inner.idle.put(worker);
                    }
                    outcome(NAME, answer, program, limits, wall_time)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_prefix_comes_from_pyvenv_cfg() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyvenv.cfg"),
            "home = /opt/py/bin\nversion = 3.11.7\n",
        )
        .unwrap();
        assert_eq!(venv_home(dir.path()).unwrap().0, PathBuf::from("/opt/py"));
        let err = venv_home(&dir.path().join("nope")).unwrap_err();
        assert!(err.to_string().contains("mattools-venv.sh"), "{err}");
    }
}
