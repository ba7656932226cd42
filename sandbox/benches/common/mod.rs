//! Shared by the sandbox benchmarks: the runtime, medians and timing loops, and the GaN
//! task the `bwrap` and `container` benchmarks measure cold against warm.
#![allow(dead_code)] // each benchmark uses its own subset
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

use std::process::Command;
use std::time::{Duration, Instant};

use sandbox::{Backend, CancelToken, Limits, Program};

/// Wurtzite GaN (a = 3.189 Å, c = 5.185 Å, u = 0.377), written for this benchmark.
pub const GAN: &str = "GaN\n1.0\n3.189 0.0 0.0\n-1.5945 2.761754 0.0\n0.0 0.0 5.185\nGa N\n2 2\n\
Direct\n0.333333 0.666667 0.0\n0.666667 0.333333 0.5\n0.333333 0.666667 0.377\n0.666667 0.333333 0.877\n";

/// A typical MatTools-style task: read the GaN POSCAR, generate vacancies, build a
/// supercell, compute a property.
pub const TASK: &str = "from pymatgen.core import Structure\n\
from pymatgen.analysis.defects.generators import VacancyGenerator\n\
s = Structure.from_file('GaN.vasp')\n\
vacancies = list(VacancyGenerator().get_defects(s))\n\
sc = s * (2, 2, 2)\n\
print(len(vacancies), sorted(v.name for v in vacancies), round(sc.volume, 3), round(sc.density, 4))\n";

/// [`TASK`] with its input file.
pub fn gan_task() -> Program {
    Program::new(TASK).with_file("GaN.vasp", GAN.as_bytes().to_vec())
}

/// A two-thread runtime (the benchmarks' machine has two cores).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The median of `xs`.
pub fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// `d` in whole milliseconds.
pub fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

/// The median time of `n` runs of `program` on `b` under `limits`; each must exit 0.
pub async fn median_run(b: &dyn Backend, program: &Program, limits: &Limits, n: usize) -> Duration {
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let o = b.run(program, limits, &CancelToken::new()).await.unwrap();
        times.push(t.elapsed());
        assert_eq!(o.exit_code, Some(0), "{o:?}");
    }
    median(times)
}

/// [`median_run`] with room for pymatgen: a 120 s wall limit and 2 GiB of memory.
pub async fn runs(b: &dyn Backend, program: &Program, n: usize) -> Duration {
    let limits = Limits {
        wall: Duration::from_secs(120),
        memory_bytes: 2048 << 20,
        ..Limits::default()
    };
    median_run(b, program, &limits, n).await
}

/// The median time of `n` runs of `cmd`; each must succeed.
pub fn median_command(cmd: &mut Command, n: usize) -> Duration {
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let ok = cmd.output().unwrap().status.success();
        times.push(t.elapsed());
        assert!(ok);
    }
    median(times)
}
