//! One worker: a sandbox running `bwrap_worker.py`, spoken to by JSON lines (shared by the
//! `bwrap` and `container` backends: only the command that starts the sandbox differs), and
//! what both backends do around it: the worker's options, data links, the idle pool, and a
//! run on an idle or new worker with its retry, timeout and cancel.
//!
//! The worker forks a fresh child for every request (see the script's docstring), so a warm
//! worker can serve many runs without carrying state from one to the next. Dropping a
//! [`Worker`] kills the process that holds the sandbox (`kill_on_drop`; bwrap's
//! `--die-with-parent` plus its PID namespace take every process inside with it, a container
//! is removed by its backend).

use std::borrow::BorrowMut;
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::error::Elapsed;

use super::cgroup::PidsCgroup;
use super::{DATA_DIR, GRACE};
use crate::cancel::CancelToken;
use crate::entry::split_entry_result;
use crate::error::SandboxError;
use crate::limits::{Limit, Limits};
use crate::outcome::{Outcome, OutputFile};
use crate::program::Program;

/// Bytes of the worker's own stderr kept for error messages.
const STDERR_TAIL: usize = 4096;

fn backend_err(backend: &'static str, message: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend {
        backend,
        message: message.to_string(),
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes the worker's base64 (its own output, so failure is a backend fault).
fn unb64(backend: &'static str, text: &str) -> Result<Vec<u8>, SandboxError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| backend_err(backend, format!("the worker sent bad base64: {e}")))
}

/// One request line.
#[derive(Serialize)]
struct Request<'a> {
    code: &'a str,
    files: Vec<(&'a str, String)>,
    stdin: String,
    entry: Option<&'a str>,
    links: Vec<(&'a str, String)>,
    wall: f64,
    cpu: f64,
    memory: u64,
    output: u64,
    scratch: u64,
}

/// One answer line (see `bwrap_worker.py`).
#[derive(Debug, Deserialize)]
pub(crate) struct Answer {
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub stdout_cut: bool,
    #[serde(default)]
    pub stderr_cut: bool,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub cpu_exceeded: bool,
    #[serde(default)]
    pub peak_rss: Option<u64>,
    #[serde(default)]
    pub scratch_used: u64,
    /// Processes the sandbox's memory cgroup killed during the run (where it can see one).
    #[serde(default)]
    pub oom_kills: u64,
    #[serde(default)]
    pub files: Vec<(String, String)>,
}

/// How to start a worker's sandbox.
pub(crate) struct Launch {
    /// The backend's name (for errors).
    pub backend: &'static str,
    /// The program that starts the sandbox (`bwrap`, `podman`).
    pub program: std::path::PathBuf,
    /// Its arguments, ending with the worker's command line.
    pub args: Vec<std::ffi::OsString>,
    /// A pids cgroup the sandbox joins before it starts.
    pub cgroup: Option<PidsCgroup>,
    /// How long the worker may take to say READY.
    pub ready_within: Duration,
    /// What to install when `program` cannot be started.
    pub install: &'static str,
    /// A hint to add to a start failure, given what the sandbox said ("" for none).
    pub hint: fn(&str) -> &'static str,
}

/// A command for the spawner thread, and where its child goes.
type SpawnJob = (
    Command,
    tokio::runtime::Handle,
    tokio::sync::oneshot::Sender<std::io::Result<Child>>,
);

/// Starts `cmd` from one thread that lives as long as the process. bwrap's
/// `--die-with-parent` (`PR_SET_PDEATHSIG`) fires when the *thread* that started the
/// sandbox ends, not its process: a worker started from a short-lived thread (tokio's
/// blocking pool lets an idle thread go after 10 s) would be killed with it and linger as
/// a zombie in the idle pool.
async fn spawn_lasting(cmd: Command) -> std::io::Result<Child> {
    static SPAWNER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<SpawnJob>>> =
        std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("sandbox-spawner".into())
            .spawn(move || {
                for (mut cmd, handle, answer) in rx {
                    // The child's pipes and reaping belong to the caller's runtime.
                    let _runtime = handle.enter();
                    let _ = answer.send(cmd.spawn());
                }
            });
        if let Err(e) = started {
            tracing::warn!("no spawner thread ({e}): workers start from the calling thread");
        }
        Mutex::new(tx)
    });
    let (answer, child) = tokio::sync::oneshot::channel();
    let job = (cmd, tokio::runtime::Handle::current(), answer);
    let sent = spawner
        .lock()
        .map_err(|_| std::io::Error::other("spawner lock poisoned"))?
        .send(job);
    match sent {
        Ok(()) => child
            .await
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread ended"))),
        // No spawner thread: start it here.
        Err(std::sync::mpsc::SendError((mut cmd, _, _))) => cmd.spawn(),
    }
}

/// A running worker sandbox.
pub(crate) struct Worker {
    backend: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    _cgroup: Option<PidsCgroup>,
}

impl Worker {
    /// Starts the sandbox and waits (at most `ready_within`) for the worker's `READY`.
    pub async fn spawn(launch: Launch) -> Result<Worker, SandboxError> {
        let Launch {
            backend,
            program: bwrap,
            args,
            cgroup,
            ready_within,
            install,
            hint,
        } = launch;
        let mut cmd = match &cgroup {
            // Join the cgroup before exec, so every process of the sandbox is counted.
            Some(cg) => {
                let mut c = Command::new("/bin/sh");
                c.arg("-c")
                    .arg("echo $$ > \"$1\" && shift && exec \"$@\"")
                    .arg("sh")
                    .arg(cg.procs_file())
                    .arg(&bwrap);
                c
            }
            None => Command::new(&bwrap),
        };
        cmd.args(&args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = spawn_lasting(cmd)
            .await
            .map_err(|e| SandboxError::Unavailable {
                backend,
                reason: format!("cannot start {}: {e} ({install})", bwrap.display()),
            })?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(backend_err(backend, "the worker's pipes were not set up"));
        };
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        });
        let mut worker = Worker {
            backend,
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stderr_tail,
            _cgroup: cgroup,
        };
        let mut line = String::new();
        match tokio::time::timeout(ready_within, worker.read_line(&mut line)).await {
            Ok(Ok(())) if line.trim_end() == "READY" => Ok(worker),
            Ok(_) => Err(worker.start_failure(hint).await),
            Err(_) => Err(backend_err(
                backend,
                format!(
                    "the worker did not get ready within {ready_within:?} (pre-imports too slow?)"
                ),
            )),
        }
    }

    async fn read_line(&mut self, line: &mut String) -> Result<(), SandboxError> {
        let n = self
            .stdout
            .read_line(line)
            .await
            .map_err(|e| backend_err(self.backend, format!("reading from the worker: {e}")))?;
        if n == 0 {
            return Err(backend_err(self.backend, "the worker exited"));
        }
        Ok(())
    }

    /// What the worker (or bwrap) said on stderr, once it has exited.
    pub async fn stderr_text(&mut self) -> String {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        // Give the reader task a moment to collect the last bytes.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.stderr_tail
            .lock()
            .map(|t| String::from_utf8_lossy(&t).trim().to_string())
            .unwrap_or_default()
    }

    /// Whether the process holding the sandbox still runs (a dead one is reaped here).
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The exit status of the process holding the sandbox, once it has exited (waits up to
    /// two seconds; `None` if it is still running).
    pub async fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Why the sandbox did not come up: its own message plus a hint.
    async fn start_failure(&mut self, hint: fn(&str) -> &'static str) -> SandboxError {
        let said = self.stderr_text().await;
        let hint = hint(&said);
        SandboxError::Unavailable {
            backend: self.backend,
            reason: format!("the sandbox did not start: {said}{hint}"),
        }
    }

    /// Sends one program and waits for its answer.
    pub async fn exchange(
        &mut self,
        program: &Program,
        limits: &Limits,
        links: Vec<(&str, String)>,
    ) -> Result<Answer, SandboxError> {
        let request = Request {
            code: &program.code,
            files: program
                .files
                .iter()
                .map(|(p, b)| (p.as_str(), b64(b)))
                .collect(),
            stdin: b64(&program.stdin),
            entry: program.entry.as_deref(),
            links,
            wall: limits.wall.as_secs_f64(),
            cpu: limits.effective_cpu().as_secs_f64(),
            memory: limits.memory_bytes,
            output: limits.output_bytes,
            scratch: limits.scratch_bytes,
        };
        let backend = self.backend;
        let mut line = serde_json::to_string(&request)
            .map_err(|e| backend_err(backend, format!("encoding the request: {e}")))?;
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| backend_err(backend, format!("writing to the worker: {e}")))?;
        self.stdin
            .flush()
            .await
            .map_err(|e| backend_err(backend, format!("writing to the worker: {e}")))?;
        let mut answer = String::new();
        if let Err(e) = self.read_line(&mut answer).await {
            let said = self.stderr_text().await;
            return Err(backend_err(backend, format!("{e}: {said}")));
        }
        let answer: Answer = serde_json::from_str(&answer)
            .map_err(|e| backend_err(backend, format!("the worker's answer is not JSON: {e}")))?;
        if let Some(error) = &answer.error {
            return Err(backend_err(backend, format!("the worker failed: {error}")));
        }
        Ok(answer)
    }
}

/// The worker's command line options: `--once` for a worker that serves one run and exits
/// (cold), `--preload` with the modules it imports first (none when `preload` is empty).
pub(crate) fn worker_args(once: bool, preload: &[String]) -> Vec<String> {
    let mut args = Vec::new();
    if once {
        args.push("--once".to_string());
    }
    if !preload.is_empty() {
        args.push("--preload".to_string());
        args.push(preload.join(","));
    }
    args
}

/// Fails unless every data mount (name, host directory) is a directory.
pub(crate) fn check_mounts(
    backend: &'static str,
    mounts: &[(String, PathBuf)],
) -> Result<(), SandboxError> {
    for (name, host) in mounts {
        if !host.is_dir() {
            return Err(SandboxError::Unavailable {
                backend,
                reason: format!("data mount `{name}`: {} is not a directory", host.display()),
            });
        }
    }
    Ok(())
}

/// A program's data links as the worker takes them: (path in the scratch, the mount's
/// directory inside the sandbox). A link to a mount the backend does not have (`mounts`) is
/// an invalid program.
pub(crate) fn data_links<'p>(
    program: &'p Program,
    mounts: &[(String, PathBuf)],
) -> Result<Vec<(&'p str, String)>, SandboxError> {
    let mut links = Vec::new();
    for (path, mount) in &program.data_links {
        if !mounts.iter().any(|(name, _)| name == mount) {
            return Err(SandboxError::InvalidProgram(format!(
                "data link {path:?} names mount `{mount}`, which this backend does not have"
            )));
        }
        links.push((path.as_str(), format!("{DATA_DIR}/{mount}")));
    }
    Ok(links)
}

/// Workers started and waiting for a run (warm mode).
pub(crate) struct Idle<W>(Mutex<Vec<W>>);

impl<W: BorrowMut<Worker>> Idle<W> {
    /// No worker yet.
    pub fn new() -> Self {
        Idle(Mutex::new(Vec::new()))
    }

    /// How many are waiting and alive, and how many were found dead (killed from outside,
    /// or ended) and dropped, so that a count never includes a zombie and the caller can
    /// start replacements.
    pub fn reap(&self) -> (usize, usize) {
        self.0.lock().map_or((0, 0), |mut v| {
            let before = v.len();
            v.retain_mut(|w| w.borrow_mut().is_alive());
            (v.len(), before - v.len())
        })
    }

    /// One waiting worker that is alive, if any, and how many dead ones were dropped.
    pub fn take(&self) -> (Option<W>, usize) {
        let Ok(mut v) = self.0.lock() else {
            return (None, 0);
        };
        let mut dead = 0;
        while let Some(mut w) = v.pop() {
            if w.borrow_mut().is_alive() {
                return (Some(w), dead);
            }
            dead += 1;
        }
        (None, dead)
    }

    /// Keeps `w` for a later run.
    pub fn put(&self, w: W) {
        if let Ok(mut v) = self.0.lock() {
            v.push(w);
        }
    }

    /// How many are waiting and alive; `replace` is called once for each dead one dropped
    /// (a backend starts its replacement in the background).
    pub fn alive_replacing(&self, replace: impl Fn()) -> usize {
        let (alive, dead) = self.reap();
        for _ in 0..dead {
            replace();
        }
        alive
    }

    /// Starts workers with `spawn` until `n` are waiting and alive.
    pub async fn fill<F, Fut>(&self, n: usize, mut spawn: F) -> Result<(), SandboxError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<W, SandboxError>>,
    {
        while self.reap().0 < n {
            self.put(spawn().await?);
        }
        Ok(())
    }
}

/// What became of a run on a worker: `None` when it was cancelled, `Some(Err(_))` when it
/// did not end within its wall limit plus [`GRACE`], else the worker's answer or error.
pub(crate) type Exchanged = Option<Result<Result<Answer, SandboxError>, Elapsed>>;

/// Runs `program` on `reused` (an idle worker) or else on one `spawn` starts, until it ends,
/// outlives its wall limit plus [`GRACE`] or `cancel` fires. An idle worker may have died
/// (or belong to a runtime that has ended): a run that fails on one before getting any
/// answer is retried once on a fresh worker. Gives the worker and what became of the run;
/// a worker that does not start, or a cancel while it starts, is an error.
pub(crate) async fn run_on_worker<W, S, F>(
    mut reused: Option<W>,
    spawn: S,
    program: &Program,
    limits: &Limits,
    links: &[(&str, String)],
    cancel: &CancelToken,
) -> Result<(W, Exchanged), SandboxError>
where
    W: BorrowMut<Worker>,
    S: Fn() -> F,
    F: Future<Output = Result<W, SandboxError>>,
{
    loop {
        let from_pool = reused.is_some();
        let mut worker = match reused.take() {
            Some(w) => w,
            None => tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(SandboxError::Cancelled),
                w = spawn() => w?,
            },
        };
        let exchange = tokio::time::timeout(
            limits.wall + GRACE,
            BorrowMut::<Worker>::borrow_mut(&mut worker).exchange(program, limits, links.to_vec()),
        );
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = exchange => Some(r),
        };
        match result {
            Some(Ok(Err(SandboxError::Backend { .. }))) if from_pool => {
                drop(worker);
                continue;
            }
            other => return Ok((worker, other)),
        }
    }
}

/// The [`Outcome`] of a worker's answer.
pub(crate) fn outcome(
    backend: &'static str,
    a: Answer,
    program: &Program,
    limits: &Limits,
    wall_time: Duration,
) -> Result<Outcome, SandboxError> {
    let stdout = unb64(backend, &a.stdout)?;
    let stderr = String::from_utf8_lossy(&unb64(backend, &a.stderr)?).into_owned();
    let (stdout, entry_result) = split_entry_result(stdout, program.entry.is_some());
    let scratch_full = a.scratch_used > limits.scratch_bytes
        || stderr.contains("No space left on device")
        || stderr.contains("File too large");
    let stopped_by = if a.timed_out {
        Some(Limit::TimedOut)
    } else if a.oom_kills > 0 {
        // Before the CPU check: the memory cgroup's kill is a SIGKILL too.
        Some(Limit::MemoryExceeded)
    } else if a.cpu_exceeded {
        Some(Limit::TimedOut)
    } else if stderr.contains("MemoryError") && a.exit_code != Some(0) {
        Some(Limit::MemoryExceeded)
    } else if scratch_full {
        Some(Limit::ScratchFull)
    } else if a.stdout_cut || a.stderr_cut {
        Some(Limit::OutputTruncated)
    } else {
        None
    };
    let trap = match (a.signal, stopped_by) {
        (Some(sig), None) => Some(format!("the program was killed by signal {sig}")),
        (_, Some(Limit::MemoryExceeded)) if a.oom_kills > 0 => Some(format!(
            "the sandbox's memory cgroup killed {} process(es)",
            a.oom_kills
        )),
        _ => None,
    };
    let mut files = Vec::new();
    for (path, bytes) in a.files {
        files.push(OutputFile {
            path,
            bytes: unb64(backend, &bytes)?,
        });
    }
    Ok(Outcome {
        stdout,
        stderr,
        exit_code: a.exit_code,
        stopped_by,
        trap,
        wall_time,
        peak_memory_bytes: a.peak_rss,
        entry_result,
        files,
    })
}
