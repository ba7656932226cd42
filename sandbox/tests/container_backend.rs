//! The `container` backend end to end, and the escape and abuse suite of
//! [`common::escape`] (shared with `bwrap_backend.rs`) run against it: network, host files,
//! read-only root, fork and memory bombs (the run's rlimit and the container's memory
//! cgroup), CPU loops, sleeping, huge output, orphans, state left for the next run,
//! cancelling, and 50 concurrent runs with the containers and client processes counted
//! before and after.
//!
//! Needs podman (with runc where crun fails) and the image of `scripts/container-image.sh`.
//! Without them the tests fail under CI (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`) and are
//! skipped with a notice otherwise. Every test makes its own backend.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{escape, quick, run};
use sandbox::container::engine::Engine;
use sandbox::container::{ContainerBackend, ContainerConfig};
use sandbox::{Backend, Limit, Limits, Program};

/// A backend with `config`, or `None` to skip.
fn backend_with(config: ContainerConfig) -> Option<ContainerBackend> {
    common::available(ContainerBackend::new(config))
}

/// Warm containers with a light preload.
fn light() -> ContainerConfig {
    ContainerConfig {
        preload: vec!["json".into()],
        warm: true,
        ..ContainerConfig::default()
    }
}

/// A backend with `config`, or returns from the test to skip.
macro_rules! backend_or_skip {
    ($config:expr) => {
        common::available_or_skip!(ContainerBackend::new($config))
    };
}

/// What a fresh run sees in `/proc`: the worker (the container's PID 1) and itself.
const PROCESSES: usize = 2;

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
    let result = escape::runs_as_nobody_with_an_entry(
        &b,
        "'pid1': open('/proc/1/environ').read()",
        &allowed,
    )
    .await;
    // The test process's own variables (cargo sets CARGO_*) reach neither the program nor
    // the container's first process.
    let pid1 = result["pid1"].as_str().unwrap();
    assert!(!pid1.contains("CARGO"), "{pid1}");
}

#[tokio::test]
async fn no_network_not_even_the_hosts_loopback() {
    let b = backend_or_skip!(light());
    let o = escape::no_network(&b).await;
    assert!(o.stdout.ends_with("['lo']\n"), "{}", o.stdout);
}

#[tokio::test]
async fn host_files_are_hidden_and_everything_but_scratch_is_read_only() {
    let b = backend_or_skip!(light());
    // A file on the host (as a server's database or config would be).
    let host = tempfile::tempdir().unwrap();
    let secret = host.path().join("atomworld.sqlite3");
    std::fs::write(&secret, "secret").unwrap();
    escape::host_files_are_hidden_and_only_scratch_is_writable(
        &b,
        &[
            secret.to_str().unwrap(),
            host.path().to_str().unwrap(),
            "/root/.cache",
            "/home/user",
            "/var/lib/containers",
        ],
        &[
            "/usr/evil",
            "/opt/atomworld/x",
            "/evil",
            "/etc/x",
            "/opt/venv/x",
        ],
    )
    .await;
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
    escape::a_sleeping_program_is_stopped_at_its_wall_limit(&b).await;
}

#[tokio::test]
async fn cpu_loops_hit_the_cpu_limit() {
    let b = backend_or_skip!(light());
    escape::cpu_loops_hit_the_cpu_limit(&b).await;
}

#[tokio::test]
async fn a_memory_bomb_gets_memory_error() {
    let b = backend_or_skip!(light());
    escape::a_memory_bomb_gets_memory_error(&b).await;
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
    escape::a_fork_bomb_is_contained_and_leaves_nothing_behind(&b, PROCESSES).await;
}

#[tokio::test]
async fn huge_output_is_cut_at_the_cap() {
    let b = backend_or_skip!(light());
    escape::huge_output_is_cut_at_the_cap(&b).await;
}

#[tokio::test]
async fn orphans_and_state_do_not_reach_the_next_run() {
    let b = backend_or_skip!(light());
    escape::orphans_and_state_do_not_reach_the_next_run(&b, PROCESSES, true).await;
}

#[tokio::test]
async fn data_mounts_are_linked_read_only() {
    escape::data_mounts_are_linked_read_only(|mount| {
        backend_with(ContainerConfig {
            mounts: vec![mount],
            ..light()
        })
    })
    .await;
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
    let t0 = Instant::now();
    // Every tenth run leaves a process behind that ignores SIGTERM.
    let sandbox = escape::fifty_concurrent_runs(Arc::new(b.clone()), |i| {
        if i % 10 == 0 {
            format!(
                "import os, signal, time\nif os.fork() == 0:\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(1000)\nprint({i} * 2)"
            )
        } else {
            format!("print({i} * 2)")
        }
    })
    .await;
    eprintln!("50 runs took {:?}", t0.elapsed());
    // Still two containers, each holding only its worker.
    assert_eq!(leftovers(&p).0, 2);
    let o = sandbox
        .run(&Program::new(escape::COUNT_PROCESSES))
        .await
        .unwrap();
    assert_eq!(o.stdout.trim(), PROCESSES.to_string(), "{o:?}");
    drop(sandbox);
    drop(b);
    let t0 = Instant::now();
    assert_eq!(settle(&p).await, (0, 0));
    eprintln!("removed in {:?}", t0.elapsed());
}

#[tokio::test]
async fn cancelling_kills_the_run_and_its_container() {
    let b = backend_or_skip!(light());
    escape::cancelling_kills_the_run(&b).await;
}

#[tokio::test]
async fn a_warm_pymatgen_container_runs_a_structure_task() {
    let b = backend_or_skip!(ContainerConfig::warm_pymatgen());
    escape::a_pymatgen_structure_task_runs(&b).await;
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
