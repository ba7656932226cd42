//! A pids cgroup per worker (best effort): caps how many processes a sandbox may hold, so a
//! fork bomb stops at the cap instead of filling the host until the wall timeout.
//!
//! `RLIMIT_NPROC` is not enforced for root's uid, which the sandbox's uid maps to when the
//! server runs as root (what was measured on this machine kind), hence the cgroup. Only the cgroup v1
//! `pids` hierarchy is used (what this machine kind has); without it the wall timeout is the
//! only bound, and `atomworld sandbox check` says so.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the cgroup v1 `pids` hierarchy is mounted.
pub const PIDS_ROOT: &str = "/sys/fs/cgroup/pids";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A pids cgroup, removed when dropped (once its processes are gone).
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Creates a cgroup under `root` allowing `max` processes, or says why it cannot.
    pub fn create(root: &Path, max: u32) -> std::io::Result<PidsCgroup> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep_stale(root));
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("atomworld-sandbox-{}-{n}", std::process::id()));
        fs::create_dir(&dir)?;
        let cg = PidsCgroup { dir };
        fs::write(cg.dir.join("pids.max"), max.to_string())?;
        Ok(cg)
    }

    /// The file a process writes its pid to, to join.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }
}

/// Removes the empty cgroups of processes that are gone (a process that exits does not run
/// the removal threads of its last workers to the end).
fn sweep_stale(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix("atomworld-sandbox-"))
        else {
            continue;
        };
        let alive = rest
            .split('-')
            .next()
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            // Fails harmlessly while a process is still inside.
            let _ = fs::remove_dir(entry.path());
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // The sandbox's processes are being killed; rmdir fails while any is left, so retry
        // briefly on a thread of its own.
        let dir = self.dir.clone();
        std::thread::spawn(move || {
            for _ in 0..100 {
                if fs::remove_dir(&dir).is_ok() || !dir.exists() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            tracing::warn!(dir = %dir.display(), "could not remove a sandbox pids cgroup");
        });
    }
}
