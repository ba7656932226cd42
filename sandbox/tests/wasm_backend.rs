//! The `wasm` backend end to end: CPython 3.11 on WASI under limits (integration tests may
//! unwrap, as clippy.toml allows in tests).
//!
//! Needs the interpreter files from `scripts/python-wasm.sh`. Without them the tests fail
//! under CI (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`) and are skipped with a notice
//! otherwise.
#![cfg(feature = "wasm")]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use common::quick;
use sandbox::scratch::SCRATCH_PREFIX;
use sandbox::wasm::{verify_runtime_dir, WasmBackend, WasmConfig};
use sandbox::{Backend, CancelToken, Limit, Limits, Outcome, Program, Sandbox, SandboxError};

/// The shared backend (one module load per test binary), or `None` to skip.
fn backend() -> Option<WasmBackend> {
    static BACKEND: OnceLock<Option<WasmBackend>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let config = WasmConfig::default();
            common::usable(verify_runtime_dir(&config.runtime_dir).map(|_| ()))
                .then(|| WasmBackend::new(config))
        })
        .clone()
}

macro_rules! backend_or_skip {
    () => {
        match backend() {
            Some(b) => b,
            None => return,
        }
    };
}

async fn run(b: &WasmBackend, program: Program, limits: Limits) -> Outcome {
    b.run(&program, &limits, &CancelToken::new()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn hello_exit_codes_stdin_and_errors() {
    let b = backend_or_skip!();
    let o = run(&b, Program::new("print('hi')"), quick()).await;
    assert_eq!(o.stdout, "hi\n", "{o:?}");
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(
        o.success() && o.stopped_by.is_none() && o.trap.is_none(),
        "{o:?}"
    );
    assert!(o.peak_memory_bytes.unwrap() > 1 << 20, "{o:?}");

    let o = run(&b, Program::new("import sys\nsys.exit(3)"), quick()).await;
    assert_eq!(o.exit_code, Some(3), "{o:?}");

    let o = run(&b, Program::new("raise ValueError('boom')"), quick()).await;
    assert_eq!(o.exit_code, Some(1), "{o:?}");
    assert!(o.stderr.contains("ValueError: boom"), "{o:?}");
    assert!(o.stderr.contains("main.py"), "{o:?}");

    let p = Program::new("import sys\nprint(sys.stdin.read().upper(), end='')").with_stdin("abc");
    let o = run(&b, p, quick()).await;
    assert_eq!(o.stdout, "ABC", "{o:?}");

    let p = Program::new("if __name__ == '__main__':\n    print(__file__)");
    assert_eq!(run(&b, p, quick()).await.stdout, "/scratch/main.py\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn stdlib_imports_work() {
    let b = backend_or_skip!();
    let code = "import json, math, fractions, re, collections, decimal, statistics\n\
                print(json.dumps({'pi': round(math.pi, 3), 'f': str(fractions.Fraction(3, 6))}))";
    let o = run(&b, Program::new(code), quick()).await;
    assert_eq!(o.stdout, "{\"pi\": 3.142, \"f\": \"1/2\"}\n", "{o:?}");
    assert_eq!(o.exit_code, Some(0), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn entry_result_is_returned_as_json() {
    let b = backend_or_skip!();
    let p = Program::new("def solve():\n    print('working', end='')\n    return {'a': [1, 2.5]}")
        .with_entry("solve");
    let o = run(&b, p, quick()).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_eq!(
        o.entry_result,
        Some(serde_json::json!({"a": [1, 2.5]})),
        "{o:?}"
    );
    assert_eq!(o.stdout, "working\n{\"a\": [1, 2.5]}\n");

    let o = run(&b, Program::new("x = 1").with_entry("missing"), quick()).await;
    assert_eq!(o.exit_code, Some(2), "{o:?}");
    assert!(o.stderr.contains("'missing'"), "{o:?}");
    assert_eq!(o.entry_result, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn infinite_loop_is_stopped_within_the_wall_limit() {
    let b = backend_or_skip!();
    b.warm_up().unwrap();
    let limits = Limits {
        wall: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(
        &b,
        Program::new("print('start')\nwhile True:\n    pass"),
        limits,
    )
    .await;
    let took = t.elapsed();
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert_eq!(o.exit_code, None);
    assert_eq!(o.stdout, "start\n", "output before the stop is kept");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_millis(2_600), "{took:?}");

    // A CPU budget shorter than the wall limit stops it earlier.
    let limits = Limits {
        wall: Duration::from_secs(20),
        cpu: Some(Duration::from_millis(500)),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(&b, Program::new("while True:\n    pass"), limits).await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn sleeping_guest_is_stopped_by_the_host_timeout() {
    let b = backend_or_skip!();
    b.warm_up().unwrap();
    let limits = Limits {
        wall: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(&b, Program::new("import time\ntime.sleep(1000)"), limits).await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert_eq!(o.exit_code, None);
    assert!(
        t.elapsed() < Duration::from_millis(2_600),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_bomb_is_refused_and_the_host_is_fine() {
    let b = backend_or_skip!();
    let limits = Limits {
        memory_bytes: 64 << 20,
        ..quick()
    };
    let o = run(
        &b,
        Program::new("x = bytearray(512 * 1024 * 1024)"),
        limits.clone(),
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");
    assert!(o.stderr.contains("MemoryError"), "{o:?}");
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert!(o.peak_memory_bytes.unwrap() <= 64 << 20, "{o:?}");

    let grow = "xs = []\nwhile True:\n    xs.append('y' * 1_000_000)";
    let o = run(&b, Program::new(grow), limits.clone()).await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");

    // A program that catches MemoryError still reports the refusal.
    let caught = "try:\n    x = bytearray(512 << 20)\nexcept MemoryError:\n    print('caught')";
    let o = run(&b, Program::new(caught), limits).await;
    assert_eq!(o.stdout, "caught\n", "{o:?}");
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");

    let o = run(&b, Program::new("print('still here')"), quick()).await;
    assert_eq!(o.stdout, "still here\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn gigabyte_of_output_is_truncated() {
    let b = backend_or_skip!();
    let limits = Limits {
        output_bytes: 64 * 1024,
        ..quick()
    };
    let code =
        "import sys\nchunk = 'x' * 1_000_000\nfor _ in range(1000):\n    sys.stdout.write(chunk)";
    let t = Instant::now();
    let o = run(&b, Program::new(code), limits.clone()).await;
    assert_eq!(o.stopped_by, Some(Limit::OutputTruncated), "{o:?}");
    assert_eq!(o.stdout.len(), 64 * 1024);
    assert!(o.stdout.bytes().all(|c| c == b'x'));
    assert!(o.stderr.len() <= 64 * 1024);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

    let o = run(&b, Program::new("print('x' * 100)"), limits).await;
    assert_eq!(o.stopped_by, None, "{o:?}");
}

/// Runs a probe that prints one JSON object of what each attempt did.
async fn probe(b: &WasmBackend, code: &str) -> serde_json::Value {
    let o = run(b, Program::new(code), quick()).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    eprintln!("probe: {}", o.stdout.trim());
    serde_json::from_str(o.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

const ATTEMPT: &str = "import json, os\nres = {}\ndef attempt(name, f):\n    try:\n        f()\n        res[name] = 'ok'\n    except Exception as e:\n        res[name] = type(e).__name__\n";

#[tokio::test(flavor = "multi_thread")]
async fn host_files_and_environment_are_out_of_reach() {
    let b = backend_or_skip!();
    let code = format!(
        "{ATTEMPT}\
attempt('passwd', lambda: open('/etc/passwd').read())
attempt('environ', lambda: open('/proc/self/environ', 'rb').read())
attempt('parent', lambda: os.listdir('..'))
attempt('dotdot_file', lambda: open('../../../../etc/passwd').read())
attempt('scratch_parent', lambda: os.listdir('/scratch/..'))
attempt('root', lambda: os.listdir('/etc'))
attempt('home', lambda: os.listdir('/root'))
attempt('stdlib_read', lambda: open('/usr/local/lib/python311.zip', 'rb').read(4))
res['env'] = sorted(os.environ)
print(json.dumps(res))"
    );
    let v = probe(&b, &code).await;
    for key in [
        "passwd",
        "environ",
        "parent",
        "dotdot_file",
        "scratch_parent",
        "root",
        "home",
    ] {
        assert_ne!(v[key], "ok", "{key} should fail: {v}");
    }
    assert_eq!(v["stdlib_read"], "ok", "{v}");
    assert_eq!(
        v["env"],
        serde_json::json!(["PYTHONHOME", "PYTHONUNBUFFERED"]),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn writing_outside_scratch_fails() {
    let b = backend_or_skip!();
    let parent = tempfile::tempdir().unwrap();
    let config = WasmConfig {
        scratch_parent: Some(parent.path().to_path_buf()),
        ..b.config().clone()
    };
    let b = WasmBackend::new(config);
    let code = format!(
        "{ATTEMPT}\
attempt('tmp', lambda: open('/tmp/escape', 'w').write('x'))
attempt('dotdot', lambda: open('../escape', 'w').write('x'))
attempt('stdlib', lambda: open('/usr/local/lib/escape', 'w').write('x'))
attempt('stdlib_zip', lambda: open('/usr/local/lib/python311.zip', 'ab').write(b'x'))
attempt('mkdir_root', lambda: os.mkdir('/evil'))
attempt('symlink_out', lambda: os.symlink('/etc/passwd', 'link') or open('link').read())
attempt('scratch', lambda: open('ok.txt', 'w').write('fine'))
print(json.dumps(res))"
    );
    let v = probe(&b, &code).await;
    for key in [
        "tmp",
        "dotdot",
        "stdlib",
        "stdlib_zip",
        "mkdir_root",
        "symlink_out",
    ] {
        assert_ne!(v[key], "ok", "{key} should fail: {v}");
    }
    assert_eq!(v["scratch"], "ok", "{v}");
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    assert!(!Path::new("/tmp/escape").exists());
    assert!(!b.config().runtime_dir.join("escape").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_are_not_available() {
    let b = backend_or_skip!();
    let code = format!(
        "{ATTEMPT}\
import socket
attempt('socket', lambda: socket.socket())
attempt('connect', lambda: socket.create_connection(('127.0.0.1', 80), timeout=1))
attempt('dns', lambda: socket.getaddrinfo('example.com', 80))
print(json.dumps(res))"
    );
    let o = run(&b, Program::new(code), quick()).await;
    // `import socket` itself may fail in this build; both are containment.
    eprintln!("sockets: {o:?}");
    if o.exit_code == Some(0) {
        let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
        for key in ["socket", "connect", "dns"] {
            assert_ne!(v[key], "ok", "{key} should fail: {v}");
        }
    } else {
        assert!(o.stderr.contains("Error"), "{o:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_processes_and_deep_recursion_is_contained() {
    let b = backend_or_skip!();
    let code = format!(
        "{ATTEMPT}\
attempt('fork', lambda: os.fork())
attempt('system', lambda: os.system('true') == 0 or 1 / 0)
attempt('subprocess', lambda: __import__('subprocess').run(['true']))
attempt('thread', lambda: __import__('threading').Thread(target=print).start())
print(json.dumps(res))"
    );
    let v = probe(&b, &code).await;
    for key in ["fork", "system", "subprocess", "thread"] {
        assert_ne!(v[key], "ok", "{key} should fail: {v}");
    }

    let o = run(
        &b,
        Program::new("def f(n):\n    return f(n + 1)\nf(0)"),
        quick(),
    )
    .await;
    eprintln!("recursion: exit {:?} trap {:?}", o.exit_code, o.trap);
    // Either Python's RecursionError or a wasm stack-exhaustion trap: never a host crash.
    assert!(
        (o.exit_code == Some(1) && o.stderr.contains("RecursionError")) || o.trap.is_some(),
        "{o:?}"
    );
    let o = run(
        &b,
        Program::new(
            "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)",
        ),
        quick(),
    )
    .await;
    eprintln!(
        "unbounded recursion: exit {:?} trap {:?}",
        o.exit_code, o.trap
    );
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert!(
        o.stopped_by.is_some() || o.trap.is_some() || o.exit_code.is_some(),
        "{o:?}"
    );
    assert_eq!(
        run(&b, Program::new("print(1)"), quick()).await.stdout,
        "1\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn input_files_are_readable_and_result_files_come_back() {
    let b = backend_or_skip!();
    let code = "data = open('in/data.txt').read()\n\
                open('out.txt', 'w').write(data.upper())\n\
                import os\nos.makedirs('res', exist_ok=True)\n\
                open('res/n.json', 'w').write('42')\n\
                print(len(data))";
    let p = Program::new(code)
        .with_file("in/data.txt", b"hello file".to_vec())
        .with_file("unchanged.txt", b"same".to_vec());
    let o = run(&b, p, quick()).await;
    assert_eq!(o.stdout, "10\n", "{o:?}");
    assert_eq!(o.file("out.txt"), Some(&b"HELLO FILE"[..]));
    assert_eq!(o.file("res/n.json"), Some(&b"42"[..]));
    assert_eq!(o.file("unchanged.txt"), None);
    assert_eq!(o.file("main.py"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn filling_the_scratch_dir_is_stopped() {
    let b = backend_or_skip!();
    let limits = Limits {
        scratch_bytes: 1 << 20,
        ..quick()
    };
    let code = "with open('fill.bin', 'wb') as f:\n    while True:\n        f.write(b'x' * 65536)";
    let t = Instant::now();
    let o = run(&b, Program::new(code), limits).await;
    assert_eq!(o.stopped_by, Some(Limit::ScratchFull), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

fn count_scratch_dirs(parent: &Path) -> usize {
    std::fs::read_dir(parent)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(SCRATCH_PREFIX)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_concurrent_runs_queue_behind_two_slots_and_leave_nothing() {
    let b = backend_or_skip!();
    b.warm_up().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let config = WasmConfig {
        scratch_parent: Some(parent.path().to_path_buf()),
        ..b.config().clone()
    };
    let backend = WasmBackend::new(config);
    backend.warm_up().unwrap();
    assert_eq!(count_scratch_dirs(parent.path()), 0);
    let sandbox = Sandbox::new(Arc::new(backend), 2).with_default_limits(quick());
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..20 {
        let s = sandbox.clone();
        set.spawn(async move {
            let p = Program::new(format!("import time\ntime.sleep(0.2)\nprint({i})"));
            (i, s.run(&p).await)
        });
    }
    let mut max_seen = 0;
    let mut done = 0;
    while done < 20 {
        tokio::select! {
            joined = set.join_next() => {
                let (i, r) = joined.unwrap().unwrap();
                let o = r.unwrap();
                assert_eq!(o.stdout, format!("{i}\n"), "{o:?}");
                done += 1;
            }
            _ = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
        max_seen = max_seen.max(sandbox.running());
        assert!(count_scratch_dirs(parent.path()) <= 2);
    }
    // 20 runs of ≥ 0.2 s, two at a time: at least 2 s.
    assert!(t.elapsed() >= Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(max_seen <= 2, "{max_seen}");
    assert_eq!(count_scratch_dirs(parent.path()), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_or_dropping_a_run_stops_it() {
    let b = backend_or_skip!();
    b.warm_up().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let config = WasmConfig {
        scratch_parent: Some(parent.path().to_path_buf()),
        ..b.config().clone()
    };
    let sandbox = Sandbox::new(Arc::new(WasmBackend::new(config)), 2);
    let forever = Program::new("while True:\n    pass");
    let limits = Limits {
        wall: Duration::from_secs(30),
        ..Limits::default()
    };

    let token = CancelToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        t2.cancel();
    });
    let t = Instant::now();
    let r = sandbox.run_with(&forever, &limits, &token).await;
    assert!(matches!(r, Err(SandboxError::Cancelled)), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // Dropping the future: the run's thread stops and removes its scratch dir.
    let r = tokio::time::timeout(
        Duration::from_millis(500),
        sandbox.run_with(&forever, &limits, &CancelToken::new()),
    )
    .await;
    assert!(r.is_err());
    let t = Instant::now();
    while count_scratch_dirs(parent.path()) > 0 {
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "dropped run kept going"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compiled_module_is_cached_on_disk() {
    let b = backend_or_skip!();
    let first = b.warm_up().unwrap();
    assert!(first.cache_file.exists(), "{first:?}");
    // A second backend (as in a new process) deserializes the cached module.
    let again = WasmBackend::new(b.config().clone()).warm_up().unwrap();
    assert!(!again.compiled, "{again:?}");
    assert_eq!(again.cache_file, first.cache_file);
    assert!(
        again.load_time - again.verify_time < Duration::from_secs(2),
        "{again:?}"
    );
    // A refused cache file (garbage) falls back to compiling, then it is rewritten.
    let dir = tempfile::tempdir().unwrap();
    let config = WasmConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        ..b.config().clone()
    };
    std::fs::write(
        dir.path().join(first.cache_file.file_name().unwrap()),
        b"junk",
    )
    .unwrap();
    let fresh = WasmBackend::new(config);
    let info = fresh.warm_up().unwrap();
    assert!(info.compiled, "{info:?}");
    let o = fresh
        .run(&Program::new("print(6*7)"), &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(o.stdout, "42\n");
    assert!(std::fs::metadata(&info.cache_file).unwrap().len() > 1 << 20);
}

#[test]
fn availability_reports_missing_files_with_the_script_name() {
    let dir = tempfile::tempdir().unwrap();
    let b = WasmBackend::new(WasmConfig {
        runtime_dir: dir.path().to_path_buf(),
        cache_dir: None,
        scratch_parent: None,
    });
    let err = b.availability().unwrap_err().to_string();
    assert!(err.contains("scripts/python-wasm.sh"), "{err}");
}
