//! What the `bwrap` and `container` backends share: the worker (`python/bwrap_worker.py`,
//! spoken to by JSON lines, forking a child per run) and the launcher it runs programs with
//! (`python/launcher.py`, the wasm backend's too), the worker's environment inside its
//! sandbox, and the pool of warm workers with a run on an idle or new one ([`pool`]).

pub(crate) mod cgroup;
pub(crate) mod pool;

use std::time::Duration;

pub(crate) use pool::*;

/// The worker script's file name.
pub(crate) const WORKER_FILE: &str = "bwrap_worker.py";
/// The worker script (also baked into the `container` backend's image).
pub(crate) const WORKER_SOURCE: &str = include_str!("../../python/bwrap_worker.py");
/// The launcher every backend runs a program with; the worker reads it from beside itself.
pub(crate) const LAUNCHER_FILE: &str = "launcher.py";
/// Its source.
pub(crate) const LAUNCHER_SOURCE: &str = include_str!("../../python/launcher.py");
/// How long past its wall limit a run may take before the host kills its whole sandbox.
pub const GRACE: Duration = Duration::from_secs(5);
/// What a warm pymatgen worker imports before its first run: the modules MatTools' tasks
/// use most (the heavy part of every task's start-up).
pub const PYMATGEN_PRELOAD: &[&str] = &[
    "numpy",
    "scipy",
    "scipy.optimize",
    "scipy.interpolate",
    "pymatgen.core",
    "pymatgen.io.vasp",
    "pymatgen.io.vasp.outputs",
    "pymatgen.analysis.structure_matcher",
    "pymatgen.analysis.defects.core",
    "pymatgen.analysis.defects.generators",
    "pymatgen.analysis.defects.supercells",
    "pymatgen.analysis.defects.thermo",
    "pymatgen.analysis.defects.corrections.freysoldt",
];

/// Where data mounts appear inside the sandbox (`/data/<name>`).
pub const DATA_DIR: &str = "/data";
/// The unprivileged uid and gid the program runs as (`nobody`).
pub const UID: u32 = 65534;
/// The variables a worker runs with besides `PATH` (and bwrap's `LD_LIBRARY_PATH`), in the
/// `bwrap` and `container` backends alike: home and temporary files in the tmpfs, UTF-8,
/// one thread per numeric library, a headless matplotlib, no bytecode files.
pub const WORKER_ENV: [(&str, &str); 9] = [
    ("HOME", "/work"),
    ("TMPDIR", "/tmp"),
    ("LANG", "C.UTF-8"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    ("MPLBACKEND", "Agg"),
    ("MPLCONFIGDIR", "/tmp"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
];
