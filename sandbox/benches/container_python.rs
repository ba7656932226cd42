//! Benchmark of the `container` backend (a benchmark, not a timed test):
//! `cargo bench -p sandbox --bench container_python` (needs podman and the image of
//! `scripts/container-image.sh`).
//!
//! Prints the per-run overhead: `print('hi')` by a bare `podman run` of the image, through
//! the backend cold (one container per run) and warm (a long-lived container forks a child
//! per run); then the GaN task of `bwrap_python` (`common::TASK`) (read a POSCAR, generate vacancies, build a
//! supercell) cold (pymatgen imported each run) against warm (pre-imported), with the ratio.
//!
//! Measured 2026-11-26 on the 2-core machine (podman 4.3.1, runc): print('hi') bare
//! `podman run` 352 ms, cold 401 ms, warm 7 ms; the GaN task cold 4,179 ms, warm 408 ms
//! (10.2×), the warm container's start (pymatgen pre-imported) 6.0 s once.
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

mod common;

use std::time::Instant;

use common::{gan_task, median_command, ms, runs};
use sandbox::container::{ContainerBackend, ContainerConfig};
use sandbox::{Backend, Program};

fn main() {
    let rt = common::runtime();
    rt.block_on(async {
        let cold = ContainerBackend::new(ContainerConfig::default());
        if let Err(e) = cold.availability() {
            println!("container backend unavailable, nothing measured: {e}");
            return;
        }
        let engine = cold.engine().unwrap().clone();
        let image = cold.config().image();
        let mut bare = engine.command();
        if let Some(rt) = sandbox::container::engine::default_runtime(engine.kind) {
            bare.args(["--runtime", &rt]);
        }
        bare.args(["run", "--rm", "--network", "none"])
            .args([
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=4096:4096",
            ])
            .args(["--entrypoint", "/opt/venv/bin/python", &image])
            .args(["-s", "-B", "-c", "print('hi')"]);
        let bare = median_command(&mut bare, 5);
        let hi = Program::new("print('hi')");
        let cold_hi = runs(&cold, &hi, 5).await;
        let light = ContainerBackend::new(ContainerConfig {
            warm: true,
            ..ContainerConfig::default()
        });
        light.warm_up(1).await.unwrap();
        let warm_hi = runs(&light, &hi, 20).await;
        println!(
            "print('hi'): bare `podman run` {}, container backend cold {} (one container per \
             run), warm {} (fork in a running container)",
            ms(bare),
            ms(cold_hi),
            ms(warm_hi)
        );
        let task = gan_task();
        let cold_time = runs(&cold, &task, 5).await;
        let warm = ContainerBackend::new(ContainerConfig::warm_pymatgen());
        let t = Instant::now();
        warm.warm_up(1).await.unwrap();
        let warm_up = t.elapsed();
        let warm_time = runs(&warm, &task, 10).await;
        println!(
            "GaN vacancy task: cold {} (one container per run), warm {} (pymatgen \
             pre-imported; the container's start took {} once): warm is {:.1}x faster",
            ms(cold_time),
            ms(warm_time),
            ms(warm_up),
            cold_time.as_secs_f64() / warm_time.as_secs_f64()
        );
    });
}
