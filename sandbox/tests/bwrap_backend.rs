//! The `bwrap` backend end to end, and the escape and abuse suite: what model-written code
//! tries (network, host files, fork and memory bombs, sleeping, huge output, orphans, state
//! left for the next run) and what it gets.
//!
//! Needs bubblewrap and the venv from `scripts/mattools-venv.sh`. Without them the tests fail
//! under CI (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`) and are skipped with a notice
//! otherwise. Every test makes its own backend (workers belong to the test's runtime).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::bwrap::{BwrapBackend, BwrapConfig};
use sandbox::{Backend, CancelToken, Limit, Limits, Outcome, Program, Sandbox, SandboxError};

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1")
}

/// A warm backend with a light preload, or `None` to skip.
fn backend_with(config: BwrapConfig) -> Option<BwrapBackend> {
    let b = BwrapBackend::new(config).unwrap();
    match b.availability() {
        Ok(()) => Some(b),
        Err(e) if required() => panic!("{e} (required under CI)"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

fn light() -> BwrapConfig {
    BwrapConfig {
        preload: vec!["json".into()],
        warm: true,
        ..BwrapConfig::default()
    }
}

macro_rules! backend_or_skip {
    ($config:expr) => {
        match backend_with($config) {
            Some(b) => b,
            None => return,
        }
    };
}

async fn run(b: &BwrapBackend, code: &str, limits: &Limits) -> Outcome {
    b.run(&Program::new(code), limits, &CancelToken::new())
        .await
        .unwrap()
}

fn quick() -> Limits {
    Limits {
        wall: Duration::from_secs(20),
        ..Limits::default()
    }
}

#[tokio::test]
async fn runs_as_nobody_with_a_cleared_environment_and_an_entry() {
    let b = backend_or_skip!(light());
    let code = "import os, json\n\
                print(os.getuid(), os.getcwd())\n\
                def result():\n    return {'env': sorted(os.environ), 'n': 3}\n";
    let program = Program::new(code).with_entry("result");
    let o = b
        .run(&program, &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert!(o.success(), "{o:?}");
    assert!(o.stdout.starts_with("65534 /work/run\n"), "{}", o.stdout);
    let env: Vec<String> =
        serde_json::from_value(o.entry_result.as_ref().unwrap()["env"].clone()).unwrap();
    let allowed = [
        "HOME",
        "LANG",
        "LD_LIBRARY_PATH",
        "PWD",
        "LC_CTYPE",
        "MKL_NUM_THREADS",
        "MPLBACKEND",
        "MPLCONFIGDIR",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PATH",
        "PYTHONDONTWRITEBYTECODE",
        "TMPDIR",
    ];
    for k in &env {
        assert!(allowed.contains(&k.as_str()), "unexpected variable {k}");
    }
}

#[tokio::test]
async fn no_network_not_even_the_hosts_loopback() {
    let b = backend_or_skip!(light());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\n\
         for target in [('127.0.0.1', {port}), ('1.1.1.1', 80)]:\n\
         \x20   s = socket.socket(); s.settimeout(2)\n\
         \x20   try:\n\
         \x20       s.connect(target); print('CONNECTED', target)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', type(e).__name__)\n\
         try:\n\
         \x20   socket.gethostbyname('pypi.org'); print('RESOLVED')\n\
         except OSError:\n\
         \x20   print('no dns')\n\
         import os\n\
         print(sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else 'no sysfs')\n"
    );
    let o = run(&b, &code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("CONNECTED"), "{}", o.stdout);
    assert!(!o.stdout.contains("RESOLVED"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("refused").count(), 2, "{}", o.stdout);
    drop(listener);
}

#[tokio::test]
async fn host_files_are_hidden_and_everything_but_scratch_is_read_only() {
    let b = backend_or_skip!(light());
    let code = "import os\n\
        for p in ['/etc/passwd', '/root', '/proc/1/environ', '/home', '/var/lib']:\n\
        \x20   print(p, os.path.exists(p))\n\
        for p in ['/usr/evil', '/opt/atomworld/x', '/evil', '/etc/x']:\n\
        \x20   try:\n\
        \x20       open(p, 'w').write('x'); print('WROTE', p)\n\
        \x20   except OSError as e:\n\
        \x20       print('denied', p)\n\
        open('/work/run/ok.txt', 'w').write('fine')\n\
        print(os.path.exists('/proc/self/environ'))\n";
    let o = run(&b, code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("WROTE"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("denied").count(), 4, "{}", o.stdout);
    for hidden in [
        "/etc/passwd False",
        "/root False",
        "/home False",
        "/var/lib False",
    ] {
        assert!(o.stdout.contains(hidden), "{hidden}: {}", o.stdout);
    }
    assert_eq!(o.file("ok.txt"), Some(&b"fine"[..]));
}

#[tokio::test]
async fn a_sleeping_program_is_stopped_at_its_wall_limit() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        wall: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(
        &b,
        "import time\nprint('start', flush=True)\ntime.sleep(100)",
        &limits,
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert_eq!(o.stdout, "start\n");
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    // The worker survives and serves the next run.
    let o = run(&b, "print('next')", &quick()).await;
    assert_eq!(o.stdout, "next\n");
}

#[tokio::test]
async fn cpu_loops_hit_the_cpu_limit() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        wall: Duration::from_secs(30),
        cpu: Some(Duration::from_secs(1)),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(&b, "while True:\n    pass", &limits).await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[tokio::test]
async fn a_memory_bomb_gets_memory_error_and_the_host_is_unharmed() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        memory_bytes: 128 << 20,
        ..quick()
    };
    let o = run(&b, "x = bytearray(2 << 30)\nprint(len(x))", &limits).await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");
    assert!(o.stderr.contains("MemoryError"), "{}", o.stderr);
    // Within the limit is fine.
    let o = run(&b, "x = bytearray(32 << 20)\nprint(len(x))", &limits).await;
    assert!(o.success(), "{o:?}");
}

#[tokio::test]
async fn a_fork_bomb_is_contained_and_leaves_nothing_behind() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        wall: Duration::from_secs(3),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(
        &b,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        &limits,
    )
    .await;
    assert!(o.exit_code != Some(0), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // Nothing is left: the next run sees only the sandbox's init, the worker and itself.
    let o = run(
        &b,
        "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))",
        &quick(),
    )
    .await;
    assert_eq!(o.stdout.trim(), "3", "{o:?}");
}

#[tokio::test]
async fn huge_output_is_cut_at_the_cap() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        output_bytes: 1 << 20,
        ..quick()
    };
    // 1 GB written in 1 MiB pieces.
    let o = run(
        &b,
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\nprint('END', file=sys.stderr)",
        &limits,
    )
    .await;
    assert_eq!(
        o.stopped_by,
        Some(Limit::OutputTruncated),
        "{:?}",
        o.stopped_by
    );
    assert_eq!(o.stdout.len(), 1 << 20);
    assert!(o.stderr.contains("END"));
}

#[tokio::test]
async fn orphans_and_state_do_not_reach_the_next_run() {
    let b = backend_or_skip!(light());
    let code = "import os, subprocess, json\n\
        subprocess.Popen(['sleep', '1000'], start_new_session=True)\n\
        if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(1000)\n\
        json.dumps = None\n\
        open('/tmp/left.txt', 'w').write('x')\n\
        open('/work/left.txt', 'w').write('x')\n\
        open('/dev/shm/left', 'w').write('x')\n\
        print('planted')\n";
    let o = run(&b, code, &quick()).await;
    assert_eq!(o.stdout, "planted\n", "{o:?}");
    let check = "import os, json\n\
        print(json.dumps({'ok': 1}))\n\
        print([p for p in ['/tmp/left.txt', '/work/left.txt', '/dev/shm/left'] if os.path.exists(p)])\n\
        print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n";
    let o = run(&b, check, &quick()).await;
    assert_eq!(o.stdout, "{\"ok\": 1}\n[]\n3\n", "{o:?}");
}

#[tokio::test]
async fn data_mounts_are_linked_read_only() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("GaN.vasp"), "Ga N\n").unwrap();
    let b = backend_or_skip!(BwrapConfig {
        mounts: vec![("fixtures".into(), data.path().to_path_buf())],
        ..light()
    });
    let program = Program::new(
        "print(open('in/files/GaN.vasp').read().strip())\n\
         try:\n    open('in/files/new', 'w')\nexcept OSError:\n    print('read-only')\n",
    )
    .with_data_link("in/files", "fixtures");
    let o = b
        .run(&program, &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(o.stdout, "Ga N\nread-only\n", "{o:?}");
    let bad = Program::new("").with_data_link("x", "nope");
    let err = b
        .run(&bad, &quick(), &CancelToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::InvalidProgram(_)), "{err}");
}

#[tokio::test]
async fn cold_mode_starts_one_sandbox_per_run() {
    let b = backend_or_skip!(BwrapConfig::default());
    let o = run(&b, "print(2 + 2)", &quick()).await;
    assert_eq!(o.stdout, "4\n");
    assert_eq!(b.idle_workers(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_runs_queue_and_all_finish() {
    let b = backend_or_skip!(light());
    b.warm_up(2).await.unwrap();
    let sandbox = Sandbox::new(Arc::new(b), 2).with_default_limits(quick());
    let mut tasks = Vec::new();
    for i in 0..50 {
        let s = sandbox.clone();
        tasks.push(tokio::spawn(async move {
            s.run(&Program::new(format!("print({i} * 2)"))).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let o = t.await.unwrap().unwrap();
        assert_eq!(o.stdout.trim(), (i * 2).to_string());
    }
}

#[tokio::test]
async fn cancelling_kills_the_run() {
    let b = backend_or_skip!(light());
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        c.cancel();
    });
    let t = Instant::now();
    let err = b
        .run(
            &Program::new("import time\ntime.sleep(60)"),
            &quick(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::Cancelled), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_warm_pymatgen_worker_runs_a_structure_task() {
    let b = backend_or_skip!(BwrapConfig::warm_pymatgen());
    let code = "from pymatgen.core import Lattice, Structure\n\
        s = Structure(Lattice.cubic(4.2), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\n\
        s.remove_sites([1])\n\
        print(s.composition.reduced_formula, round(s.volume, 3))\n";
    let o = run(&b, code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert_eq!(o.stdout, "Na 74.088\n");
}
