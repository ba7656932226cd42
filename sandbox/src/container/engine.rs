//! The container engine (podman or docker): finding one that works, the image's name, and
//! removing containers (pure helpers are unit-tested; the rest runs the engine's client).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use sha2::{Digest, Sha256};

use super::NAME;
use crate::error::SandboxError;

/// The image's repository; its tag is [`content_hash`].
pub const IMAGE_REPO: &str = "localhost/atomworld-sandbox";
/// The prefix of every container this backend starts (`<prefix><pid>-<backend>-<n>`), so
/// stale ones can be found and removed.
pub const NAME_PREFIX: &str = "atomworld-sbx-";
/// The label every container of this backend carries.
pub const LABEL: &str = "atomworld.sandbox=1";

const CONTAINERFILE: &str = include_str!("../../container/Containerfile");
const REQUIREMENTS: &str = include_str!("../../python/mattools-requirements.txt");

/// The first 16 hex digits of the sha256 of the Containerfile, the pins, the worker and the
/// launcher, concatenated (what `scripts/container-image.sh` tags the image with).
pub fn content_hash() -> String {
    let mut h = Sha256::new();
    h.update(CONTAINERFILE.as_bytes());
    h.update(REQUIREMENTS.as_bytes());
    h.update(crate::worker::WORKER_SOURCE.as_bytes());
    h.update(crate::worker::LAUNCHER_SOURCE.as_bytes());
    let mut hex = hex::encode(h.finalize());
    hex.truncate(16);
    hex
}

/// The image this build of the backend runs: `localhost/atomworld-sandbox:<hash>`.
pub fn default_image() -> String {
    format!("{IMAGE_REPO}:{}", content_hash())
}

/// Which client an engine is (their flags differ a little).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Podman (daemonless).
    Podman,
    /// Docker (a client talking to a daemon).
    Docker,
}

impl Kind {
    /// The kind of the client at `program`, by its file name (`docker` or else podman).
    pub fn of(program: &Path) -> Kind {
        match program.file_name().and_then(|n| n.to_str()) {
            Some(n) if n.starts_with("docker") => Kind::Docker,
            _ => Kind::Podman,
        }
    }
}

/// A container engine that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    /// The client binary.
    pub program: PathBuf,
    /// Podman or docker.
    pub kind: Kind,
}

fn unavailable(reason: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: NAME,
        reason: reason.into(),
    }
}

/// `program args…` with a cleared environment (nothing of the server's reaches the engine,
/// and so nothing can reach a container by it).
pub fn command(program: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .stdin(Stdio::null());
    c
}

/// The first line of a failed command's stderr, or its status.
fn said(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    if line.is_empty() {
        out.status.to_string()
    } else {
        line.to_string()
    }
}

impl Engine {
    /// The engine `wanted` names, or the first of podman and docker that answers `info`.
    /// A client binary without a working engine behind it (docker with no daemon) does not
    /// count; the error says what was found and why each did not answer.
    pub fn find(wanted: Option<&Path>) -> Result<Engine, SandboxError> {
        let candidates: Vec<PathBuf> = match wanted {
            Some(p) => vec![p.to_path_buf()],
            None => vec!["podman".into(), "docker".into()],
        };
        let mut why = Vec::new();
        for program in candidates {
            match command(&program).arg("info").output() {
                Ok(out) if out.status.success() => {
                    let kind = Kind::of(&program);
                    return Ok(Engine { program, kind });
                }
                Ok(out) => why.push(format!(
                    "{} is installed but its engine does not answer ({}; is its daemon \
                     running?)",
                    program.display(),
                    said(&out)
                )),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    why.push(format!("no {}", program.display()))
                }
                Err(e) => why.push(format!("cannot run {}: {e}", program.display())),
            }
        }
        Err(unavailable(format!(
            "no working container engine: {} (install one: apt-get install podman runc)",
            why.join("; ")
        )))
    }

    /// A command of this engine.
    pub fn command(&self) -> Command {
        command(&self.program)
    }

    /// Whether `image` exists locally; `Err` when the engine cannot be asked.
    pub fn has_image(&self, image: &str) -> Result<bool, SandboxError> {
        let out = self
            .command()
            .args(["image", "inspect", "--format", "{{.Id}}", image])
            .output()
            .map_err(|e| unavailable(format!("cannot run {}: {e}", self.program.display())))?;
        Ok(out.status.success())
    }

    /// Whether the container `name` was killed by its memory cgroup (`None`: unknown).
    pub fn oom_killed(&self, name: &str) -> Option<bool> {
        let out = self
            .command()
            .args(["inspect", "--format", "{{.State.OOMKilled}}", name])
            .output()
            .ok()?;
        match String::from_utf8_lossy(&out.stdout).trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// Kills and removes the container `name` (no error if it is gone); blocking.
    pub fn remove(&self, name: &str) {
        let mut c = self.command();
        c.args(["rm", "-f"]);
        if self.kind == Kind::Podman {
            // Kill at once: the worker is the container's PID 1 and ignores SIGTERM.
            c.args(["-t", "0"]);
        }
        let _ = c
            .arg(name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// Names of this backend's containers that exist now (running or not).
    pub fn containers(&self) -> Vec<String> {
        let out = self
            .command()
            .args(["ps", "-a", "--filter", &format!("label={LABEL}")])
            .args(["--format", "{{.Names}}"])
            .output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with(NAME_PREFIX))
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Removes the containers left by processes that are gone (a server killed before it
    /// could remove its workers); blocking.
    pub fn sweep_stale(&self) {
        for name in self.containers() {
            if owner(&name).is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
                self.remove(&name);
            }
        }
    }
}

/// The process id a container name of this backend carries.
pub fn owner(name: &str) -> Option<u32> {
    name.strip_prefix(NAME_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// The runtime to ask podman for: `runc` when it is installed (crun fails on hosts with a
/// hybrid cgroup v1, measured on this machine kind); none for docker (its default is runc).
pub fn default_runtime(kind: Kind) -> Option<String> {
    if kind == Kind::Docker {
        return None;
    }
    ["/usr/bin/runc", "/usr/sbin/runc", "/usr/local/bin/runc"]
        .iter()
        .any(|p| Path::new(p).exists())
        .then(|| "runc".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner() {
        assert_eq!(owner("atomworld-sbx-4242-0-7"), Some(4242));
        assert_eq!(owner("atomworld-sbx-x-7"), None);
        assert_eq!(owner("other-4242-7"), None);
    }

    #[test]
    fn the_image_tag_is_the_content_hash() {
        let image = default_image();
        let tag = image.rsplit(':').next().unwrap_or_default();
        assert_eq!(tag.len(), 16);
        assert!(tag.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(image.starts_with("localhost/atomworld-sandbox:"));
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(Kind::of(Path::new("/usr/local/bin/docker")), Kind::Docker);
        assert_eq!(Kind::of(Path::new("podman")), Kind::Podman);
    }
}
