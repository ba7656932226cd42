//! The `bwrap` backend end to end, and the escape and abuse suite of [`common::escape`]:
//! what model-written code tries (network, host files, fork and memory bombs, sleeping, huge
//! output, orphans, state left for the next run) and what it gets.
//!
//! Needs bubblewrap and the venv from `scripts/mattools-venv.sh`. Without them the tests fail
//! under CI (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`) and are skipped with a notice
//! otherwise. Every test makes its own backend (workers belong to the test's runtime).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::sync::Arc;

use common::{escape, quick, run};
use sandbox::bwrap::{BwrapBackend, BwrapConfig};

fn light() -> BwrapConfig {
    BwrapConfig {
        preload: vec!["json".into()],
        warm: true,
        ..BwrapConfig::default()
    }
}

/// A backend with `config`, or returns from the test to skip.
macro_rules! backend_or_skip {
    ($config:expr) => {
        common::available_or_skip!(BwrapBackend::new($config))
    };
}

/// What a fresh run sees in `/proc`: the sandbox's init, the worker and itself.
const PROCESSES: usize = 3;

#[tokio::test]
async fn runs_as_nobody_with_a_cleared_environment_and_an_entry() {
    let b = backend_or_skip!(light());
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
    escape::runs_as_nobody_with_an_entry(&b, "'n': 3", &allowed).await;
}

#[tokio::test]
async fn no_network_not_even_the_hosts_loopback() {
    let b = backend_or_skip!(light());
    escape::no_network(&b).await;
}

#[tokio::test]
async fn host_files_are_hidden_and_everything_but_scratch_is_read_only() {
    let b = backend_or_skip!(light());
    escape::host_files_are_hidden_and_only_scratch_is_writable(
        &b,
        &["/etc/passwd", "/root", "/home", "/var/lib"],
        &["/usr/evil", "/opt/atomworld/x", "/evil", "/etc/x"],
    )
    .await;
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
async fn a_memory_bomb_gets_memory_error_and_the_host_is_unharmed() {
    let b = backend_or_skip!(light());
    escape::a_memory_bomb_gets_memory_error(&b).await;
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
    escape::orphans_and_state_do_not_reach_the_next_run(&b, PROCESSES, false).await;
}

#[tokio::test]
async fn data_mounts_are_linked_read_only() {
    escape::data_mounts_are_linked_read_only(|mount| {
        common::available(BwrapBackend::new(BwrapConfig {
            mounts: vec![mount],
            ..light()
        }))
    })
    .await;
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
    escape::fifty_concurrent_runs(Arc::new(b), |i| format!("print({i} * 2)")).await;
}

#[tokio::test]
async fn cancelling_kills_the_run() {
    let b = backend_or_skip!(light());
    escape::cancelling_kills_the_run(&b).await;
}

#[tokio::test]
async fn a_warm_pymatgen_worker_runs_a_structure_task() {
    let b = backend_or_skip!(BwrapConfig::warm_pymatgen());
    escape::a_pymatgen_structure_task_runs(&b).await;
}
