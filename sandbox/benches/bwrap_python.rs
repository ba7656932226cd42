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

use std::process::Command;
use std::time::{Duration, Instant};

use sandbox::bwrap::{BwrapBackend, BwrapConfig};
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

async fn runs(b: &BwrapBackend, program: &Program, n: usize) -> Duration {
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
        let cold = BwrapBackend::new(BwrapConfig::default()).unwrap();
        if let Err(e) = cold.availability() {
            println!("bwrap backend unavailable, nothing measured: {e}");
            return;
        }
        let python = cold.config().venv.join("bin/python");
        let mut bare = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            let ok = Command::new(&python)
                .args(["-s", "-B", "-c", "print('hi')"])
                .output()
                .unwrap()
                .status
                .success();
            bare.push(t.elapsed());
            assert!(ok);
        }
        let bare = median(bare);
        let hello = runs(&cold, &Program::new("print('hi')"), 10).await;
        println!(
            "print('hi'): bare interpreter {}, in a fresh bwrap sandbox {} (overhead {})",
            ms(bare),
            ms(hello),
            ms(hello.saturating_sub(bare))
        );
        let task = Program::new(TASK).with_file("GaN.vasp", GAN.as_bytes().to_vec());
        let cold_time = runs(&cold, &task, 5).await;
        let warm = BwrapBackend::new(BwrapConfig::warm_pymatgen()).unwrap();
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
