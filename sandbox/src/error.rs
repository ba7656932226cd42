//! Errors: why a run could not start or be completed (a program that fails is an `Outcome`).

use std::path::PathBuf;

/// Why a sandbox run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The program is malformed (bad input file path, bad entry name, too large).
    #[error("invalid program: {0}")]
    InvalidProgram(String),
    /// The backend cannot run on this host; the message says why and what to do.
    #[error("sandbox backend `{backend}` is unavailable: {reason}")]
    Unavailable {
        /// The backend's name.
        backend: &'static str,
        /// Why, and what to do about it.
        reason: String,
    },
    /// The interpreter files are missing or do not match their pinned sha256.
    #[error("python-wasm file {path} is {problem}; run {script} to make and verify it")]
    MissingRuntime {
        /// The file looked for.
        path: PathBuf,
        /// "missing", or what is wrong with it.
        problem: String,
        /// The script that makes the file.
        script: &'static str,
    },
    /// The run was cancelled (a cancel token fired or the sandbox is shutting down).
    #[error("the run was cancelled")]
    Cancelled,
    /// The scratch directory could not be prepared or read back.
    #[error("scratch directory: {0}")]
    Scratch(#[source] std::io::Error),
    /// The backend failed (not the program): engine set-up, instantiation, a host I/O error.
    #[error("sandbox backend `{backend}` failed: {message}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// What failed.
        message: String,
    },
}
