//! The escape and abuse suite through the running server: each case is model-written Python
//! that tries to leave its sandbox (the network, the server's files and environment) or to
//! exhaust it (fork and memory bombs, CPU loops, sleeping, huge output, deep recursion, an
//! orphan that ignores SIGTERM). Each case asserts what stopped it, and that `/api/health`
//! answered within 200 ms the whole time it ran (the sandbox never starves the server's
//! async workers).
//!
//! Both environments are driven through the flows that run code: the `python` environment
//! (embedded wasm backend) through an OmniMatBench run with `--agent python`, whose fake model
//! sends the case as its program; the `pymatgen` environment (bwrap) through `POST
//! /api/score` of a MatTools code answer. The backends' own suites (sandbox/tests) check the
//! same containment in more detail; this one proves it end to end. Needs the `wasm-sandbox`
//! feature (scripts/test.sh runs it); the bwrap half needs bubblewrap and the MatTools venv
//! (required under CI).
#![cfg(feature = "wasm-sandbox")]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What the server's environment holds that no program may read.
const SECRET: &str = "escape-probe-secret-5c1d";
/// A word on the orphan's command line, to find it on the host afterwards.
const ORPHAN_MARK: &str = "escape-orphan-9e2b";
/// The bound on every health answer while a case runs.
const HEALTH_BOUND: Duration = Duration::from_millis(200);

/// Held by each test for its whole run: one sandbox at work at a time, as the bound is meant
/// (two tests' bombs at once would share the two cores with the server).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Python run before every case: `attempt(what, f)` prints `blocked WHAT ERROR` when `f`
/// raises and `ESCAPED WHAT` when it succeeds.
const PRELUDE: &str = "def attempt(what, f):\n\
    \x20   try:\n\
    \x20       r = f()\n\
    \x20   except BaseException as e:\n\
    \x20       print('blocked', what, type(e).__name__, flush=True)\n\
    \x20       return\n\
    \x20   print('ESCAPED', what, repr(r)[:80], flush=True)\n";

/// The places a case may name.
struct Host<'a> {
    /// The server's port on 127.0.0.1.
    port: u16,
    /// The server's database file.
    db: &'a Path,
    /// The server's configuration file.
    config: &'a Path,
    /// A file in the server's home directory.
    home_file: &'a Path,
    /// A host directory the server can write (a program must not).
    writable: &'a Path,
}

/// One case: its name, its program, and the check of what came back (the program's output,
/// then `[stopped: LIMIT]` or the verdict's detail).
struct Case {
    name: &'static str,
    code: String,
    contained: fn(&str) -> bool,
}

fn blocked_all(out: &str, n: usize) -> bool {
    !out.contains("ESCAPED") && out.matches("blocked").count() == n
}

fn cases(h: &Host<'_>) -> Vec<Case> {
    let (port, db, config, home, writable) = (
        h.port,
        h.db.display(),
        h.config.display(),
        h.home_file.display(),
        h.writable.display(),
    );
    vec![
        Case {
            name: "network: the server's port, an outside address, DNS",
            code: format!(
                "def connect(addr):\n\
                 \x20   import socket\n\
                 \x20   s = socket.socket(); s.settimeout(2); s.connect(addr); return 'connected'\n\
                 def dns():\n\
                 \x20   import socket\n\
                 \x20   return socket.gethostbyname('pypi.org')\n\
                 attempt('own port', lambda: connect(('127.0.0.1', {port})))\n\
                 attempt('outside', lambda: connect(('1.1.1.1', 80)))\n\
                 attempt('dns', dns)\n"
            ),
            contained: |o| blocked_all(o, 3),
        },
        Case {
            name: "files: the server's database, configuration and home",
            code: format!(
                "attempt('database', lambda: open('{db}', 'rb').read(16))\n\
                 attempt('config', lambda: open('{config}').read())\n\
                 attempt('home', lambda: open('{home}').read())\n"
            ),
            contained: |o| blocked_all(o, 3),
        },
        Case {
            name: "files: writing outside the scratch dir",
            code: format!(
                "attempt('server dir', lambda: open('{writable}/planted', 'w').write('x'))\n\
                 attempt('/etc', lambda: open('/etc/planted', 'w').write('x'))\n\
                 attempt('/usr', lambda: open('/usr/planted', 'w').write('x'))\n"
            ),
            contained: |o| blocked_all(o, 3),
        },
        Case {
            name: "environment: /proc/1, /proc/self, the parent's, os.environ",
            code: format!(
                "import os\n\
                 ppid = getattr(os, 'getppid', lambda: 1)()\n\
                 for p in ['/proc/1/environ', '/proc/self/environ', '/proc/%d/environ' % ppid]:\n\
                 \x20   try:\n\
                 \x20       data = open(p, 'rb').read()\n\
                 \x20   except BaseException as e:\n\
                 \x20       print('blocked', p, type(e).__name__); continue\n\
                 \x20   print('LEAKED' if b'{SECRET}' in data else 'clean', p)\n\
                 print('LEAKED' if any('{SECRET}' in v for v in os.environ.values()) else 'clean', 'os.environ')\n"
            ),
            contained: |o| {
                !o.contains("LEAKED")
                    && o.matches("blocked").count() + o.matches("clean").count() == 4
            },
        },
        Case {
            name: "files: filling the scratch dir",
            code: "n = 0\n\
                   try:\n\
                   \x20   with open('fill.bin', 'wb') as f:\n\
                   \x20       while n < 8192:\n\
                   \x20           f.write(b'x' * (1 << 20)); f.flush(); n += 1\n\
                   \x20   print('ESCAPED fill', n)\n\
                   except BaseException as e:\n\
                   \x20   print('blocked fill', type(e).__name__)\n"
                .into(),
            contained: |o| {
                !o.contains("ESCAPED") && (o.contains("blocked fill") || o.contains("scratch_full"))
            },
        },
        Case {
            name: "resources: a fork bomb",
            code: "import os\n\
                   while True:\n\
                   \x20   try:\n\
                   \x20       os.fork()\n\
                   \x20   except AttributeError as e:\n\
                   \x20       print('blocked fork', type(e).__name__); break\n\
                   \x20   except OSError:\n\
                   \x20       pass\n"
                .into(),
            contained: |o| o.contains("blocked fork") || o.contains("timed_out"),
        },
        Case {
            name: "resources: a memory bomb",
            code: "x = []\nwhile True:\n    x.append(bytearray(64 << 20))\n".into(),
            contained: |o| o.contains("MemoryError"),
        },
        Case {
            name: "resources: a CPU loop",
            code: "while True:\n    pass\n".into(),
            contained: |o| o.contains("timed_out"),
        },
        Case {
            name: "resources: time.sleep(1000)",
            code: "import time\ntime.sleep(1000)\n".into(),
            contained: |o| o.contains("timed_out"),
        },
        Case {
            name: "resources: 1 GB of output",
            code: "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
                .into(),
            contained: |o| o.contains("output_truncated"),
        },
        Case {
            name: "resources: deep recursion",
            code: "import sys\nsys.setrecursionlimit(10 ** 7)\n\
                   def f(n):\n    return f(n + 1)\nf(0)\nprint('ESCAPED recursion')\n"
                .into(),
            contained: |o| {
                !o.contains("ESCAPED")
                    && ["RecursionError", "Segmentation", "signal", "trap", "stopped"]
                        .iter()
                        .any(|w| o.contains(w))
            },
        },
        Case {
            name: "resources: an orphan that ignores SIGTERM",
            code: format!(
                "def spawn():\n\
                 \x20   import subprocess, sys\n\
                 \x20   code = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(1000)  # {ORPHAN_MARK}'\n\
                 \x20   subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n\
                 \x20   return 'spawned'\n\
                 try:\n\
                 \x20   spawn(); print('orphan spawned')\n\
                 except BaseException as e:\n\
                 \x20   print('blocked orphan', type(e).__name__)\n"
            ),
            // Whether it could spawn or not, nothing may be left (checked on the host).
            contained: |o| o.contains("orphan spawned") || o.contains("blocked orphan"),
        },
    ]
}

/// Host processes whose command line holds [`ORPHAN_MARK`].
fn orphans() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(ORPHAN_MARK))
        .count()
}

/// Runs `job` while [`common::HealthProbe`] asks for `/api/health`; its result and the
/// slowest answer.
async fn with_health<T>(base: &str, job: impl std::future::Future<Output = T>) -> (T, Duration) {
    let probe = common::HealthProbe::start(base);
    let out = job.await;
    let slowest = probe.stop().into_iter().max().unwrap_or_default();
    (out, slowest)
}

/// A fake model for the python agent: the first reply runs the program of the case the
/// item's question names (`case N`), the second answers.
async fn reply(
    axum::extract::State(programs): axum::extract::State<Programs>,
    axum::Json(body): axum::Json<Value>,
) -> axum::Json<Value> {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default();
    if last.starts_with("<output>") {
        return common::completion("<think>done</think><answer>[\"1\"]</answer>", 1);
    }
    let k: usize = last
        .split("case ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let program = programs.lock().unwrap()[k].clone();
    common::completion(&format!("<python>\n{PRELUDE}{program}\n</python>"), 1)
}

/// The cases' programs, known once the server (and so its port) is up.
type Programs = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A server whose model `fake` is at `v1`, with short limits, and a secret in its
/// environment and in a file of its home directory.
struct Setup {
    dir: tempfile::TempDir,
    server: common::Server,
    port: u16,
    paths: [std::path::PathBuf; 3],
}

impl Setup {
    async fn start(v1: &str, mattools: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("notes.txt"), SECRET).unwrap();
        let config = common::fake_model_config(
            dir.path(),
            v1,
            "[sandbox]\nbackend = \"wasm\"\nwall_secs = 4\nmemory_mb = 256\n\
             output_bytes = 1048576\n\
             [sandbox.pymatgen]\nbackend = \"bwrap\"\nwall_secs = 6\nmemory_mb = 512\n\
             workers = 1\n",
        );
        let config = config.display().to_string();
        let args = ["--config", config.as_str(), "--rate-limit", "100000"];
        // The server's home is a temporary one: the sandboxes' runtimes stay where this
        // machine keeps them.
        let cache = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_default()
            .join(".cache/atomworld");
        let keep = |var: &str, default: std::path::PathBuf| {
            std::env::var_os(var).map_or(default, std::path::PathBuf::from)
        };
        // The interpreter the server would pick with this machine's home (the -O3 build when
        // it is there).
        let wasm_dir = sandbox::wasm::default_runtime_dir();
        let venv = keep("ATOMWORLD_MATTOOLS_VENV", cache.join("venv-mattools"));
        let server = common::Server::start(dir.path(), &args, |cmd| {
            cmd.env("HOME", &home)
                .env("ATOMWORLD_PYTHON_WASM_DIR", wasm_dir)
                .env("ATOMWORLD_MATTOOLS_VENV", venv)
                .env("ATOMWORLD_ESCAPE_PROBE", SECRET);
            if mattools {
                cmd.env("ATOMWORLD_MATTOOLS_DIR", mattools_data());
            }
        })
        .await;
        let port = server
            .base
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap();
        let paths = [
            dir.path().join("data").join("atomworld.sqlite3"),
            dir.path().join("config.toml"),
            home.join("notes.txt"),
        ];
        for p in &paths {
            assert!(p.is_file(), "{}", p.display());
        }
        Setup {
            dir,
            server,
            port,
            paths,
        }
    }

    fn cases(&self) -> Vec<Case> {
        cases(&Host {
            port: self.port,
            db: &self.paths[0],
            config: &self.paths[1],
            home_file: &self.paths[2],
            writable: self.dir.path(),
        })
    }
}

fn mattools_data() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/mattools")
}

/// Checks one case's outcome and the health answers while it ran, and that nothing was
/// planted on the host or left running.
fn assert_case(case: &Case, backend: &str, came_back: &str, slowest: Duration, dir: &Path) {
    eprintln!("{backend} · {}: slowest health {slowest:?}", case.name);
    if std::env::var_os("SHOW_ESCAPES").is_some() {
        let start = came_back.len().saturating_sub(400);
        let start = (start..came_back.len())
            .find(|&i| came_back.is_char_boundary(i))
            .unwrap_or(0);
        eprintln!("{}", &came_back[start..]);
    }
    assert!(
        (case.contained)(came_back),
        "{backend} · {}: {came_back}",
        case.name
    );
    // The issue's bound, asserted per case: a sandbox run must never hold up the server's
    // async workers (the backends run on their own threads and processes).
    assert!(
        slowest < HEALTH_BOUND,
        "{backend} · {}: /api/health took {slowest:?}",
        case.name
    );
    assert!(!dir.join("planted").exists(), "{backend} · {}", case.name);
    assert_eq!(orphans(), 0, "{backend} · {}", case.name);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_through_the_python_agent_in_wasm() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let programs: Programs = Default::default();
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(reply))
        .with_state(programs.clone());
    let v1 = common::spawn_app(app).await;
    let s = Setup::start(&v1, false).await;
    let all = s.cases();
    *programs.lock().unwrap() = all.iter().map(|c| c.code.clone()).collect();
    let c = reqwest::Client::new();
    for (k, case) in all.iter().enumerate() {
        let item = json!({
            "id": format!("escape-{k}"), "type": "Escape", "task_type": "Calculation",
            "question": format!("Run case {k} of the escape suite."),
            "final_answer_format": "[\"\"]", "final_answer_list": ["1"],
        });
        let body = json!({"suite": "omnimat-cal", "model": "fake", "agent": "python",
                          "tasks": [item]});
        let id = common::create_run(&c, &s.server.base, body).await;
        let base = s.server.base.clone();
        let run_id = id.clone();
        let (run, slowest) = with_health(&s.server.base, async move {
            let c = reqwest::Client::new();
            common::wait_run(&c, &base, &run_id, |r| r["status"] == "finished").await
        })
        .await;
        assert_eq!(run["status"], "finished", "{}: {run}", case.name);
        let results =
            common::get_json(&c, format!("{}/api/runs/{id}/results", s.server.base)).await;
        let round = &results["results"][0]["transcript"][0]["run"];
        let came_back = format!(
            "{}{}[stopped: {}]",
            round["stdout"].as_str().unwrap_or_default(),
            round["stderr"].as_str().unwrap_or_default(),
            round["stopped_by"].as_str().unwrap_or("none"),
        );
        assert_case(case, "wasm", &came_back, slowest, s.dir.path());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_through_mattools_scoring_in_bwrap() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let state = server::execution::CodeRunner::from_config(&Default::default()).check_pymatgen();
    if !state.available || !mattools_data().is_dir() {
        assert!(!common::required(), "required under CI: {}", state.detail);
        eprintln!(
            "SKIPPED: the pymatgen sandbox is unavailable: {}",
            state.detail
        );
        return;
    }
    let s = Setup::start("http://127.0.0.1:9/v1", true).await;
    let task =
        common::listed_task(&s.server.base, "mattools-code", "test_antisite_generator").await;
    for case in s.cases() {
        let code = format!("{PRELUDE}{}\ndef probe():\n    return {{}}\n", case.code);
        let response =
            format!("<answer><code>```python\n{code}\n```</code><name>probe</name></answer>");
        let body = json!({"suite": "mattools-code", "task": task, "response": response});
        let url = format!("{}/api/score", s.server.base);
        let started = Instant::now();
        let (v, slowest) = with_health(&s.server.base, async move {
            let r = reqwest::Client::new()
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap();
            r.json::<Value>().await.unwrap()
        })
        .await;
        let verdict = &v["verdict"];
        let came_back = format!(
            "{}[{}]",
            verdict["output"].as_str().unwrap_or_default(),
            verdict["detail"].as_str().unwrap_or_default()
        );
        eprintln!("bwrap · {}: {:?}", case.name, started.elapsed());
        assert_eq!(v["outcome"]["label"], "FunctionError", "{}: {v}", case.name);
        assert_case(&case, "bwrap", &came_back, slowest, s.dir.path());
    }
}
