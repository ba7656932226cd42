//! The bubblewrap command line: what the sandbox can see and do (pure, unit-tested).
//!
//! The profile follows what was measured on this machine kind: every namespace unshared (only `lo`
//! inside, so no network), a non-root uid with no capabilities and no nested user
//! namespaces, read-only binds of `/usr`, the interpreter's prefix, the venv, the worker and
//! the data mounts, size-capped tmpfs for `/work`, `/tmp` and `/dev/shm`, the root remounted
//! read-only after every mount, and a cleared environment (no server variable, no key).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the worker script is bound inside the sandbox.
pub const WORKER_DIR: &str = "/opt/atomworld";
/// Where the venv is bound inside the sandbox.
pub const VENV_DIR: &str = "/opt/venv";
/// Where the venv's base interpreter prefix is bound inside the sandbox.
pub const PYTHON_DIR: &str = "/opt/python";
pub use crate::worker::{DATA_DIR, UID, WORKER_ENV};

/// What one worker's sandbox is made of.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The venv (bound read-only at [`VENV_DIR`]).
    pub venv: PathBuf,
    /// The base interpreter's prefix the venv points at (bound read-only at [`PYTHON_DIR`],
    /// so no host path such as `/root/...` appears inside).
    pub base_prefix: PathBuf,
    /// A `pyvenv.cfg` whose `home` is `PYTHON_DIR/bin`, bound over the venv's own.
    pub venv_cfg: PathBuf,
    /// The host directory holding the worker script.
    pub worker_dir: PathBuf,
    /// Read-only data: (name, host path), bound at `/data/<name>`.
    pub mounts: Vec<(String, PathBuf)>,
    /// Size of the `/work` tmpfs (the scratch of every run of this worker).
    pub work_bytes: u64,
    /// Size of the `/tmp` and `/dev/shm` tmpfs each.
    pub tmp_bytes: u64,
}

impl Profile {
    /// The arguments after `bwrap`, ending with the worker's command line.
    pub fn args(&self, worker_args: &[String]) -> Vec<OsString> {
        let mut a = Args(Vec::new());
        a.words(&[
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid",
            "65534",
            "--gid",
            "65534",
            "--cap-drop",
            "ALL",
            "--disable-userns",
        ]);
        a.ro_bind(Path::new("/usr"), Path::new("/usr"));
        for (link, target) in [
            ("/bin", "usr/bin"),
            ("/lib", "usr/lib"),
            ("/lib64", "usr/lib64"),
        ] {
            a.words(&["--symlink", target, link]);
        }
        for etc in ["/etc/ld.so.cache", "/etc/ssl/certs"] {
            a.words(&["--ro-bind-try", etc, etc]);
        }
        a.ro_bind(&self.base_prefix, Path::new(PYTHON_DIR));
        a.ro_bind(&self.venv, Path::new(VENV_DIR));
        a.ro_bind(&self.venv_cfg, &Path::new(VENV_DIR).join("pyvenv.cfg"));
        a.ro_bind(&self.worker_dir, Path::new(WORKER_DIR));
        for (name, host) in &self.mounts {
            a.ro_bind(host, &Path::new(DATA_DIR).join(name));
        }
        a.words(&["--proc", "/proc", "--dev", "/dev"]);
        let tmp = self.tmp_bytes.to_string();
        let work = self.work_bytes.to_string();
        a.words(&["--size", &tmp, "--tmpfs", "/dev/shm"]);
        a.words(&["--size", &tmp, "--tmpfs", "/tmp"]);
        a.words(&["--size", &work, "--tmpfs", "/work", "--chdir", "/work"]);
        // bwrap's root is a writable tmpfs until this: after every mount.
        a.words(&["--remount-ro", "/", "--clearenv"]);
        let path = format!("{VENV_DIR}/bin:/usr/bin:/bin");
        // The interpreter may link libpython from its prefix by an absolute rpath.
        let lib = format!("{PYTHON_DIR}/lib");
        let own = [("PATH", path.as_str()), ("LD_LIBRARY_PATH", lib.as_str())];
        for (k, v) in own.into_iter().chain(WORKER_ENV) {
            a.words(&["--setenv", k, v]);
        }
        a.words(&["--"]);
        a.0.push(format!("{VENV_DIR}/bin/python").into());
        // -s: no user site; -B: no bytecode writes (the root is read-only anyway).
        a.words(&["-s", "-B"]);
        a.0.push(format!("{WORKER_DIR}/{}", crate::worker::WORKER_FILE).into());
        a.0.extend(worker_args.iter().map(OsString::from));
        a.0
    }
}

/// An argument list as one string (for tests of the command lines).
#[cfg(test)]
pub(crate) fn joined(args: &[OsString]) -> String {
    args.iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// An argument list being built.
struct Args(Vec<OsString>);

impl Args {
    fn words(&mut self, words: &[&str]) {
        self.0.extend(words.iter().map(OsString::from));
    }

    fn ro_bind(&mut self, host: &Path, inside: &Path) {
        self.0.push("--ro-bind".into());
        self.0.push(host.into());
        self.0.push(inside.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            venv: "/cache/venv".into(),
            base_prefix: "/opt/py311".into(),
            venv_cfg: "/tmp/w/pyvenv.cfg".into(),
            worker_dir: "/tmp/w".into(),
            mounts: vec![("mattools".into(), "/srv/data".into())],
            work_bytes: 1 << 28,
            tmp_bytes: 1 << 26,
        }
    }

    #[test]
    fn isolation_flags_and_read_only_root_come_in_order() {
        let s = joined(&profile().args(&["--once".into()]));
        for flag in [
            "--unshare-all --unshare-user",
            "--die-with-parent",
            "--uid 65534 --gid 65534",
            "--cap-drop ALL",
            "--disable-userns",
            "--ro-bind /cache/venv /opt/venv",
            "--ro-bind /tmp/w/pyvenv.cfg /opt/venv/pyvenv.cfg",
            "--ro-bind /opt/py311 /opt/python",
            "--ro-bind /srv/data /data/mattools",
            "--size 268435456 --tmpfs /work --chdir /work",
            "--clearenv",
            "--setenv HOME /work",
        ] {
            assert!(s.contains(flag), "missing {flag:?} in {s}");
        }
        // The root is remounted read-only after the last mount and before the command.
        let remount = s.find("--remount-ro /").unwrap();
        assert!(remount > s.rfind("--tmpfs").unwrap());
        assert!(remount > s.rfind("--ro-bind").unwrap());
        assert!(s.ends_with("-- /opt/venv/bin/python -s -B /opt/atomworld/bwrap_worker.py --once"));
        // No host variable is passed on: only the ones set here.
        assert!(!s.contains("KEY"));
    }
}
