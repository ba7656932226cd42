//! Benchmark of the `bwrap` backend (a benchmark, not a timed test):
//! `cargo bench -p sandbox --bench bwrap_python` (needs bubblewrap and the venv of
//! `scripts/mattools-venv.sh`).
//!
//! Prints: bubblewrap's overhead over a bare start of the same interpreter (`print('hi')`),
//! and a typical MatTools-style task (read a GaN POSCAR, generate vacancies, build a
//! supercell, compute a property) cold (one sandbox per run, pymatgen imported each time)
//! against warm (a worker with pymatgen pre-imported forks per run), with their ratio
//! (goal: warm ≥ 5× faster).
//!
//! Measured 2026-11-26 on the 2-core machine: print('hi') bare 17 ms, in a fresh sandbox
//! 68 ms; the GaN task cold 2,574 ms, warm 202 ms (12.7×), the warm worker's start 3.3 s once.
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

mod common;

use std::process::Command;
use std::time::Instant;

use common::{gan_task, median_command, ms, runs};
use sandbox::bwrap::{BwrapBackend, BwrapConfig};
use sandbox::{Backend, Program};

fn main() {
    let rt = common::runtime();
    rt.block_on(async {
        let cold = BwrapBackend::new(BwrapConfig::default());
        if let Err(e) = cold.availability() {
            println!("bwrap backend unavailable, nothing measured: {e}");
            return;
        }
        let python = cold.config().venv.join("bin/python");
        let mut bare = Command::new(&python);
        bare.args(["-s", "-B", "-c", "print('hi')"]);
        let bare = median_command(&mut bare, 10);
        let hello = runs(&cold, &Program::new("print('hi')"), 10).await;
        println!(
            "print('hi'): bare interpreter {}, in a fresh bwrap sandbox {} (overhead {})",
            ms(bare),
            ms(hello),
            ms(hello.saturating_sub(bare))
        );
        let task = gan_task();
        let cold_time = runs(&cold, &task, 5).await;
        let warm = BwrapBackend::new(BwrapConfig::warm_pymatgen());
        let t = Instant::now();
        warm.warm_up(1).await.unwrap();
        let warm_up = t.elapsed();
        let warm_time = runs(&warm, &task, 10).await;
        println!(
            "GaN vacancy task: cold {} (one sandbox per run), warm {} (pymatgen pre-imported; \
             the worker's start took {} once): warm is {:.1}x faster (goal >= 5x)",
            ms(cold_time),
            ms(warm_time),
            ms(warm_up),
            cold_time.as_secs_f64() / warm_time.as_secs_f64()
        );
    });
}
