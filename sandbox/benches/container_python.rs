//! Benchmark of the `container` backend (a benchmark, not a timed test):
//! `cargo bench -p sandbox --bench container_python` (needs podman and the image of
//! `scripts/container-image.sh`).
//!
//! Prints the per-run overhead: `print('hi')` by a bare `podman run` of the image, through
//! the backend cold (one container per run) and warm (a long-lived container forks a child
//! per run); then the GaN task of `bwrap_python` (read a POSCAR, generate vacancies, build a
//! supercell) cold (pymatgen imported each run) against warm (pre-imported), with the ratio.
//!
//! Measured 2026-11-26 on the 2-core machine (podman 4.3.1, runc): print('hi') bare
//! `podman run` 352 ms, cold 401 ms, warm 7 ms; the GaN task cold 4,179 ms, warm 408 ms
//! (10.2×), the warm container's start (pymatgen pre-imported) 6.0 s once.
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

use std::time::{Duration, Instant};

use sandbox::container::{ContainerBackend, ContainerConfig};
use sandbox::{Backend, CancelToken, Limits, Program};

/// Wurtzite GaN (a = 3.189 Å, c = 5.185 Å, u = 0.377), written for this benchmark.
const GAN: &str = "GaN\n1.0\n3.189 0.0 0.0\n-1.5945 2.761754 0.0\n0.0 0.0 5.185\nGa N\n2 2\n\
Direct\n0.333333 0.666667 0.0\n0.666667 0.333333 0.5\n0.333333 0.666667 0.377\n0.666667 0.333333 0.877\n";

const TASK: &str = "from pymatgen.core import Structure\n\
from pymatgen.analysis.defects.generators import VacancyGenerator\n\
s = Structure.from_file('GaN.vasp')\n\
vacancies = list(VacancyGenerator().get_defects(s))\n\
sc = s * (2, 2, 2)\n\
print(len(vacancies), sorted(v.name for v in vacancies), round(sc.volume, 3), round(sc.density, 4))\n";

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

async fn runs(b: &ContainerBackend, program: &Program, n: usize) -> Duration {
    let limits = Limits {
        wall: Duration::from_secs(120),
        memory_bytes: 2048 << 20,
        ..Limits::default()
    };
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let o = b.run(program, &limits, &CancelToken::new()).await.unwrap();
        times.push(t.elapsed());
        assert_eq!(o.exit_code, Some(0), "{o:?}");
    }
    median(times)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let cold = ContainerBackend::new(ContainerConfig::default());
        if let Err(e) = cold.availability() {
            println!("container backend unavailable, nothing measured: {e}");
            return;
        }
        let engine = cold.engine().unwrap().clone();
        let image = cold.config().image();
        let mut bare = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let mut c = engine.command();
            if let Some(rt) = sandbox::container::engine::default_runtime(engine.kind) {
                c.args(["--runtime", &rt]);
            }
            let ok = c
                .args(["run", "--rm", "--network", "none"])
                .args([
                    "--ulimit",
                    "nofile=1024:1024",
                    "--ulimit",
                    "nproc=4096:4096",
                ])
                .args(["--entrypoint", "/opt/venv/bin/python", &image])
                .args(["-s", "-B", "-c", "print('hi')"])
                .output()
                .unwrap()
                .status
                .success();
            bare.push(t.elapsed());
            assert!(ok);
        }
        let bare = median(bare);
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
        let task = Program::new(TASK).with_file("GaN.vasp", GAN.as_bytes().to_vec());
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
