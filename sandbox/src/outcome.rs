//! What a run gives back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::limits::Limit;

/// A file the program left in its scratch directory, read back after the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    /// Path relative to the scratch directory, with `/` separators.
    pub path: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// The result of a run that started (a program that fails or is stopped by a limit still
/// gives an `Outcome`; a run that could not start is a [`crate::SandboxError`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The program's stdout (at most `Limits::output_bytes`, decoded as UTF-8, invalid bytes
    /// replaced). With an entry, its JSON line is included as the last line.
    pub stdout: String,
    /// The program's stderr (same cap and decoding).
    pub stderr: String,
    /// Exit status; `None` when the program did not exit by itself (stopped by a limit or a
    /// trap).
    pub exit_code: Option<i32>,
    /// The limit that stopped the program or cut its output, if any (the first one hit).
    pub stopped_by: Option<Limit>,
    /// Why the runtime stopped the program when no limit explains it (for example a wasm
    /// trap such as call-stack exhaustion).
    pub trap: Option<String>,
    /// Wall-clock time of the run (not counting time queued).
    pub wall_time: Duration,
    /// Peak memory in bytes when the backend knows it (`wasm`: linear memory size).
    pub peak_memory_bytes: Option<u64>,
    /// With an entry: its return value, parsed from the last line of stdout.
    pub entry_result: Option<serde_json::Value>,
    /// Small files the program created or changed in its scratch directory (see
    /// [`crate::scratch::MAX_RESULT_FILE_BYTES`] and [`crate::scratch::MAX_RESULT_FILES`]),
    /// sorted by path; `main.py` and unchanged inputs are left out.
    pub files: Vec<OutputFile>,
}

impl Outcome {
    /// The outcome of a run that gave no answer because the host stopped it (`limit`, and
    /// `trap` saying how): no output, no exit code.
    pub(crate) fn stopped(limit: Limit, trap: String, wall_time: Duration) -> Outcome {
        Outcome {
            stdout: String::new(),
            stderr: String::new(),
            exit_code: None,
            stopped_by: Some(limit),
            trap: Some(trap),
            wall_time,
            peak_memory_bytes: None,
            entry_result: None,
            files: Vec::new(),
        }
    }

    /// True when the program exited by itself with status 0 and no limit stopped it.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && self.stopped_by.is_none()
    }

    /// The file the program left at `path`, if it was read back.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.bytes.as_slice())
    }
}
