//! The `container` backend end to end, and the escape and abuse suite of
//! `bwrap_backend.rs` run against it: network, host files, read-only root, fork and memory
//! bombs (the run's rlimit and the container's memory cgroup), CPU loops, sleeping, huge
//! output, orphans, state left for the next run, cancelling, and 50 concurrent runs with the
//! containers and client processes counted before and after.
//!
//! Needs podman (with runc where crun fails) and the image of `scripts/container-image.sh`.
//! Without them the tests fail under CI (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`) and are
//! skipped with a notice otherwise. Every test makes its own backend.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::container::engine::Engine;
use sandbox::container::{ContainerBackend, ContainerConfig};
use sandbox::{Backend, CancelToken, Limit, Limits, Outcome, Program, Sandbox, SandboxError};

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1")
}

/// A backend with `config`, or `None` to skip.
fn backend_with(config: ContainerConfig) -> Option<ContainerBackend> {
    let b = ContainerBackend::new(config);
    match b.availability() {
        Ok(()) => Some(b),
        Err(e) if required() => panic!("{e} (required under CI)"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

/// Warm containers with a light preload.
fn light() -> ContainerConfig {
    ContainerConfig {
        preload: vec!["json".into()],
        warm: true,
        ..ContainerConfig::default()
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

async fn run(b: &ContainerBackend, code: &str, limits: &Limits) -> Outcome {
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

/// What identifies a backend's containers, kept apart from the backend so that it can be
/// dropped.
#[derive(Clone)]
struct Probe {
    engine: Engine,
    prefix: String,
}

fn probe(b: &ContainerBackend) -> Probe {
    Probe {
        engine: b.engine().unwrap().clone(),
        prefix: b.name_prefix().to_string(),
    }
}

/// A backend's containers that exist now, and the host processes naming them (engine
/// clients, monitors).
fn leftovers(p: &Probe) -> (usize, usize) {
    let prefix = p.prefix.as_str();
    let containers = p
        .engine
        .containers()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .count();
    let mut processes = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmdline).contains(prefix) {
                processes += 1;
            }
        }
    }
    (containers, processes)
}

/// Waits (up to 20 s) until nothing of `b` is left; returns what is.
async fn settle(b: &Probe) -> (usize, usize) {
    let mut left = leftovers(b);
    for _ in 0..100 {
        if left == (0, 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        left = leftovers(b);
    }
    left
}

#[tokio::test]
async fn runs_as_nobody_with_only_its_own_environment_and_an_entry() {
    let b = backend_or_skip!(light());
    let code = "import os, json\n\
                print(os.getuid(), os.getcwd())\n\
                def result():\n    return {'env': sorted(os.environ), 'pid1': open('/proc/1/environ').read()}\n";
    let program = Program::new(code).with_entry("result");
    let o = b
        .run(&program, &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert!(o.success(), "{o:?}");
    assert!(o.stdout.starts_with("65534 /work/run\n"), "{}", o.stdout);
    let result = o.entry_result.as_ref().unwrap();
    let env: Vec<String> = serde_json::from_value(result["env"].clone()).unwrap();
    // HOSTNAME: the engine always sets it (the container's id).
    let allowed = [
        "HOME",
        "HOSTNAME",
        "LANG",
        "LC_CTYPE",
        "MKL_NUM_THREADS",
        "MPLBACKEND",
        "MPLCONFIGDIR",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PATH",
        "PWD",
        "PYTHONDONTWRITEBYTECODE",
        "TMPDIR",
    ];
    for k in &env {
        assert!(allowed.contains(&k.as_str()), "unexpected variable {k}");
    }
    // The test process's own variables (cargo sets CARGO_*) reach neither the program nor
    // the container's first process.
    let pid1 = result["pid1"].as_str().unwrap();
    assert!(!pid1.contains("CARGO"), "{pid1}");
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
         print(sorted(os.listdir('/sys/class/net')))\n"
    );
    let o = run(&b, &code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("CONNECTED"), "{}", o.stdout);
    assert!(!o.stdout.contains("RESOLVED"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("refused").count(), 2, "{}", o.stdout);
    assert!(o.stdout.ends_with("['lo']\n"), "{}", o.stdout);
    drop(listener);
}

#[tokio::test]
async fn host_files_are_hidden_and_everything_but_scratch_is_read_only() {
    let b = backend_or_skip!(light());
    // A file on the host (as a server's database or config would be).
    let host = tempfile::tempdir().unwrap();
    let secret = host.path().join("atomworld.sqlite3");
    std::fs::write(&secret, "secret").unwrap();
    let code = format!(
        "import os\n\
         for p in [{secret:?}, {dir:?}, '/root/.cache', '/home/user', '/var/lib/containers']:\n\
         \x20   print(p, os.path.exists(p))\n\
         for p in ['/usr/evil', '/opt/atomworld/x', '/evil', '/etc/x', '/opt/venv/x']:\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('x'); print('WROTE', p)\n\
         \x20   except OSError as e:\n\
         \x20       print('denied', p)\n\
         open('/work/run/ok.txt', 'w').write('fine')\n",
        dir = host.path(),
    );
    let o = run(&b, &code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("WROTE"), "{}", o.stdout);
    assert!(!o.stdout.contains("True"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("denied").count(), 5, "{}", o.stdout);
    assert_eq!(o.file("ok.txt"), Some(&b"fine"[..]));
}

#[tokio::test]
async fn filling_the_scratch_stops_at_its_cap() {
    let b = backend_or_skip!(ContainerConfig {
        work_bytes: 32 << 20,
        ..light()
    });
    let o = run(
        &b,
        "f = open('big', 'wb')\nfor _ in range(64):\n    f.write(b'x' * (1 << 20))\nf.close()",
        &quick(),
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::ScratchFull), "{o:?}");
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
        "import time\nprint('start', flush=True)\ntime.sleep(1000)",
        &limits,
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert_eq!(o.stdout, "start\n");
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
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
async fn a_memory_bomb_gets_memory_error() {
    let b = backend_or_skip!(light());
    let limits = Limits {
        memory_bytes: 128 << 20,
        ..quick()
    };
    let o = run(&b, "x = bytearray(2 << 30)\nprint(len(x))", &limits).await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");
    assert!(o.stderr.contains("MemoryError"), "{}", o.stderr);
    let o = run(&b, "x = bytearray(32 << 20)\nprint(len(x))", &limits).await;
    assert!(o.success(), "{o:?}");
}

#[tokio::test]
async fn the_containers_memory_cgroup_kills_what_the_rlimit_allows() {
    // A run allowed 2 GiB in a container capped at 256 MiB: the cgroup's OOM killer stops
    // it, and the outcome says memory.
    let b = backend_or_skip!(ContainerConfig {
        memory_bytes: 256 << 20,
        ..light()
    });
    let limits = Limits {
        memory_bytes: 2 << 30,
        ..quick()
    };
    let o = run(
        &b,
        "x = bytearray(1 << 30)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\nprint('ALIVE')",
        &limits,
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");
    assert!(!o.stdout.contains("ALIVE"), "{o:?}");
    let o = run(&b, "print('next')", &quick()).await;
    assert_eq!(o.stdout, "next\n", "{o:?}");
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
    // Nothing is left: the next run sees only the worker (the container's PID 1) and itself.
    let o = run(
        &b,
        "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))",
        &quick(),
    )
    .await;
    assert_eq!(o.stdout.trim(), "2", "{o:?}");
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
    let code = "import os, subprocess, json, signal\n\
        subprocess.Popen(['sleep', '1000'], start_new_session=True)\n\
        if os.fork() == 0:\n    os.setsid()\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    import time\n    time.sleep(1000)\n\
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
    assert_eq!(o.stdout, "{\"ok\": 1}\n[]\n2\n", "{o:?}");
}

#[tokio::test]
async fn data_mounts_are_linked_read_only() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("GaN.vasp"), "Ga N\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(data.path(), open).unwrap();
    }
    let b = backend_or_skip!(ContainerConfig {
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
async fn cold_mode_starts_one_container_per_run_and_removes_it() {
    let b = backend_or_skip!(ContainerConfig::default());
    let o = run(&b, "print(2 + 2)", &quick()).await;
    assert_eq!(o.stdout, "4\n");
    assert_eq!(b.idle_workers(), 0);
    assert_eq!(settle(&probe(&b)).await, (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_runs_queue_all_finish_and_leave_nothing() {
    let b = backend_or_skip!(light());
    let p = probe(&b);
    assert_eq!(leftovers(&p), (0, 0));
    b.warm_up(2).await.unwrap();
    assert_eq!(leftovers(&p).0, 2);
    let sandbox = Sandbox::new(Arc::new(b.clone()), 2).with_default_limits(quick());
    let mut tasks = Vec::new();
    for i in 0..50 {
        let s = sandbox.clone();
        // Every tenth run leaves a process behind that ignores SIGTERM.
        let code = if i % 10 == 0 {
            format!(
                "import os, signal, time\nif os.fork() == 0:\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(1000)\nprint({i} * 2)"
            )
        } else {
            format!("print({i} * 2)")
        };
        tasks.push(tokio::spawn(
            async move { s.run(&Program::new(code)).await },
        ));
    }
    let t0 = Instant::now();
    for (i, t) in tasks.into_iter().enumerate() {
        let o = t.await.unwrap().unwrap();
        assert_eq!(o.stdout.trim(), (i * 2).to_string());
    }
    eprintln!("50 runs took {:?}", t0.elapsed());
    // Still two containers, each holding only its worker.
    assert_eq!(leftovers(&p).0, 2);
    let o = sandbox
        .run(&Program::new(
            "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))",
        ))
        .await
        .unwrap();
    assert_eq!(o.stdout.trim(), "2", "{o:?}");
    drop(sandbox);
    drop(b);
    let t0 = Instant::now();
    assert_eq!(settle(&p).await, (0, 0));
    eprintln!("removed in {:?}", t0.elapsed());
}

#[tokio::test]
async fn cancelling_kills_the_run_and_its_container() {
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
async fn a_warm_pymatgen_container_runs_a_structure_task() {
    let b = backend_or_skip!(ContainerConfig::warm_pymatgen());
    let code = "from pymatgen.core import Lattice, Structure\n\
        s = Structure(Lattice.cubic(4.2), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\n\
        s.remove_sites([1])\n\
        print(s.composition.reduced_formula, round(s.volume, 3))\n";
    let o = run(&b, code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert_eq!(o.stdout, "Na 74.088\n");
}

#[test]
fn a_missing_image_or_engine_is_named() {
    let b = ContainerBackend::new(ContainerConfig {
        image: Some("localhost/atomworld-sandbox:not-built".into()),
        ..ContainerConfig::default()
    });
    let err = b.availability().unwrap_err().to_string();
    assert!(
        err.contains("scripts/container-image.sh") || err.contains("no working container engine"),
        "{err}"
    );
    let b = ContainerBackend::new(ContainerConfig {
        engine: Some("/nonexistent/podman".into()),
        ..ContainerConfig::default()
    });
    let err = b.availability().unwrap_err().to_string();
    assert!(err.contains("no working container engine"), "{err}");
}

#[test]
fn a_docker_client_without_its_daemon_does_not_count() {
    let docker = std::path::Path::new("/usr/local/bin/docker");
    let answers = std::process::Command::new(docker)
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success());
    if !docker.exists() || answers {
        eprintln!("SKIPPED: no docker client without a daemon here");
        return;
    }
    let b = ContainerBackend::new(ContainerConfig {
        engine: Some(docker.into()),
        ..ContainerConfig::default()
    });
    let err = b.availability().unwrap_err().to_string();
    assert!(err.contains("does not answer"), "{err}");
}

#[tokio::test]
async fn containers_left_by_a_dead_process_are_removed() {
    let Some(b) = backend_with(light()) else {
        return;
    };
    let engine = b.engine().unwrap().clone();
    let dead = (4_000_000u32..)
        .find(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        .unwrap();
    let name = format!("atomworld-sbx-{dead}-0-0");
    let mut start = engine.command();
    if let Some(rt) = sandbox::container::engine::default_runtime(engine.kind) {
        start.args(["--runtime", &rt]);
    }
    let ok = start
        .args([
            "run",
            "-d",
            "--name",
            &name,
            "--label",
            "atomworld.sandbox=1",
        ])
        .args([
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=4096:4096",
        ])
        .args(["--entrypoint", "sleep", &b.config().image(), "1000"])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(engine.containers().contains(&name));
    // A new backend sweeps when it first finds its engine.
    let fresh = ContainerBackend::new(light());
    fresh.availability().unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if !engine.containers().contains(&name) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if !gone {
        engine.remove(&name);
    }
    assert!(gone, "{name} was not removed");
}
