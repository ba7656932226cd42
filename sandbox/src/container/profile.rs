//! The `run` command line of one worker container: what it can see and do (pure,
//! unit-tested).
//!
//! No network (`--network none`: only `lo`, the host's loopback is another namespace), a
//! read-only root with size-capped tmpfs for `/work` and `/tmp`, uid 65534 with no
//! capabilities and no privilege gain, memory (no swap), pids and CPU caps for the whole
//! container, data mounted read-only at `/data/<name>`, and only the variables set here (the
//! engine passes none of the host's; the client itself runs with a cleared environment).

use std::ffi::OsString;
use std::path::PathBuf;

use super::engine::{Kind, LABEL};
use crate::worker::{DATA_DIR, UID, WORKER_ENV};

/// Where the image keeps the worker script.
pub const WORKER: &str = "/opt/atomworld/bwrap_worker.py";
/// The image's interpreter (the venv with the pinned stack).
pub const PYTHON: &str = "/opt/venv/bin/python";

/// What one worker container is made of.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Podman or docker (their flags differ a little).
    pub kind: Kind,
    /// The OCI runtime to ask for (`runc`), if any.
    pub runtime: Option<String>,
    /// The image.
    pub image: String,
    /// The container's unique name.
    pub name: String,
    /// Read-only data: (name, host path), mounted at `/data/<name>`.
    pub mounts: Vec<(String, PathBuf)>,
    /// Size of the `/work` tmpfs.
    pub work_bytes: u64,
    /// Size of `/tmp` and `/dev/shm` each.
    pub tmp_bytes: u64,
    /// Memory of the whole container (the cgroup's cap; no swap).
    pub memory_bytes: u64,
    /// Processes the container may hold.
    pub max_pids: u32,
    /// CPUs the container may use.
    pub cpus: f64,
}

impl Profile {
    /// The arguments after the engine's binary, ending with the worker's command line.
    pub fn args(&self, worker_args: &[String]) -> Vec<OsString> {
        let mut a: Vec<String> = Vec::new();
        let mut w = |words: &[&str]| a.extend(words.iter().map(|s| s.to_string()));
        if let Some(rt) = &self.runtime {
            // A global flag of podman, before the subcommand.
            w(&["--runtime", rt]);
        }
        let user = format!("{UID}:{UID}");
        let work = format!("/work:rw,size={},mode=1777", self.work_bytes);
        let tmp = format!("/tmp:rw,size={},mode=1777", self.tmp_bytes);
        let memory = self.memory_bytes.to_string();
        let pids = self.max_pids.to_string();
        let cpus = format!("{}", self.cpus);
        let shm = self.tmp_bytes.to_string();
        // --rm: a worker that ends (its client gone, stdin closed) takes its container along.
        w(&["run", "-i", "--rm", "--name", &self.name, "--label", LABEL]);
        w(&["--network", "none", "--read-only"]);
        if self.kind == Kind::Podman {
            // Podman otherwise adds writable tmpfs on /run and /var/tmp, and its own
            // variables (TERM, container, the image's).
            w(&["--read-only-tmpfs=false", "--unsetenv-all"]);
        }
        w(&["--tmpfs", &work, "--tmpfs", &tmp, "--shm-size", &shm]);
        w(&["--memory", &memory, "--memory-swap", &memory]);
        w(&["--pids-limit", &pids, "--cpus", &cpus]);
        w(&["--user", &user, "--cap-drop", "all"]);
        w(&[
            "--security-opt",
            "no-new-privileges",
            "--ulimit",
            "core=0:0",
        ]);
        // Explicit: podman's defaults (nofile 1048576, nproc 4194304) can be above the
        // host's hard limits, and then the runtime refuses to start the container.
        w(&[
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=4096:4096",
        ]);
        // Answers go to the client only, not to a log that grows with every run.
        w(&["--log-driver", "none", "--workdir", "/work"]);
        let path = ("PATH", "/opt/venv/bin:/usr/bin:/bin");
        for (k, v) in std::iter::once(path).chain(WORKER_ENV) {
            w(&["--env", &format!("{k}={v}")]);
        }
        let mut out: Vec<OsString> = a.into_iter().map(OsString::from).collect();
        for (name, host) in &self.mounts {
            let mut spec = OsString::from("type=bind,src=");
            spec.push(host);
            spec.push(format!(",dst={DATA_DIR}/{name},ro"));
            out.push("--mount".into());
            out.push(spec);
        }
        out.push("--entrypoint".into());
        out.push(PYTHON.into());
        out.push(self.image.clone().into());
        // -s: no user site; -B: no bytecode writes (the root is read-only anyway).
        for word in ["-s", "-B", WORKER] {
            out.push(word.into());
        }
        out.extend(worker_args.iter().map(OsString::from));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bwrap::profile::joined;

    fn profile(kind: Kind) -> Profile {
        Profile {
            kind,
            runtime: Some("runc".into()),
            image: "localhost/atomworld-sandbox:0123".into(),
            name: "atomworld-sbx-1-0".into(),
            mounts: vec![("mattools".into(), "/srv/data".into())],
            work_bytes: 1 << 28,
            tmp_bytes: 1 << 26,
            memory_bytes: 1 << 31,
            max_pids: 128,
            cpus: 1.0,
        }
    }

    fn args(p: &Profile) -> String {
        joined(&p.args(&["--once".into()]))
    }

    #[test]
    fn isolation_flags() {
        let s = args(&profile(Kind::Podman));
        assert!(
            s.starts_with("--runtime runc run -i --rm --name atomworld-sbx-1-0"),
            "{s}"
        );
        for flag in [
            "--network none --read-only --read-only-tmpfs=false --unsetenv-all",
            "--tmpfs /work:rw,size=268435456,mode=1777",
            "--memory 2147483648 --memory-swap 2147483648",
            "--pids-limit 128 --cpus 1",
            "--user 65534:65534 --cap-drop all",
            "--security-opt no-new-privileges",
            "--mount type=bind,src=/srv/data,dst=/data/mattools,ro",
            "--env HOME=/work",
            "--log-driver none",
        ] {
            assert!(s.contains(flag), "missing {flag:?} in {s}");
        }
        assert!(s.ends_with(
            "localhost/atomworld-sandbox:0123 -s -B /opt/atomworld/bwrap_worker.py --once"
        ));
        assert!(!s.contains("KEY") && !s.contains("--env-host"));
    }

    #[test]
    fn docker_gets_no_podman_only_flags() {
        let mut p = profile(Kind::Docker);
        p.runtime = None;
        let s = args(&p);
        assert!(s.starts_with("run -i"), "{s}");
        assert!(!s.contains("--read-only-tmpfs"), "{s}");
    }
}
