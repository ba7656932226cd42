//! Limits a run is held to, and the names of the limits that can stop it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Hard limits for one run. [`Limits::default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock time from the start of the run (not counting time queued behind the
    /// concurrency limit) until the program is stopped. Default 10 s.
    pub wall: Duration,
    /// CPU time. `None` (the default): bounded by `wall` only. The `wasm` backend counts the
    /// time the guest spends executing (in 10 ms epoch ticks, so not time spent sleeping).
    pub cpu: Option<Duration>,
    /// Memory the program may use. Default 256 MiB. The `wasm` backend caps the guest's
    /// linear memory (the guest then sees `MemoryError`).
    pub memory_bytes: u64,
    /// Bytes kept of stdout and, separately, of stderr. Default 1 MiB each. Writing past it
    /// fails inside the program and the outcome says [`Limit::OutputTruncated`].
    pub output_bytes: u64,
    /// Total size of the files in the scratch directory (inputs included). Default 16 MiB.
    /// The `wasm` backend checks it every 100 ms of guest execution and at the end.
    pub scratch_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(10),
            cpu: None,
            memory_bytes: 256 << 20,
            output_bytes: 1 << 20,
            scratch_bytes: 16 << 20,
        }
    }
}

impl Limits {
    /// The CPU budget in effect: `cpu` when set and shorter than `wall`, else `wall`.
    pub fn effective_cpu(&self) -> Duration {
        self.cpu.map_or(self.wall, |cpu| cpu.min(self.wall))
    }
}

/// The limit that stopped (or cut short) a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The wall-clock or CPU limit was reached; the program was stopped.
    TimedOut,
    /// The program asked for more memory than allowed (it was refused; it may have stopped
    /// with `MemoryError` or caught it).
    MemoryExceeded,
    /// stdout or stderr went past `output_bytes`; the kept part is returned.
    OutputTruncated,
    /// The scratch directory went past `scratch_bytes`; the program was stopped.
    ScratchFull,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Limit::TimedOut => "timed_out",
            Limit::MemoryExceeded => "memory_exceeded",
            Limit::OutputTruncated => "output_truncated",
            Limit::ScratchFull => "scratch_full",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_cpu() {
        let l = Limits::default();
        assert_eq!(l.wall, Duration::from_secs(10));
        assert_eq!(l.effective_cpu(), l.wall);
        let l = Limits {
            cpu: Some(Duration::from_secs(2)),
            ..l
        };
        assert_eq!(l.effective_cpu(), Duration::from_secs(2));
        assert_eq!(
            serde_json::to_string(&Limit::OutputTruncated).unwrap(),
            "\"output_truncated\""
        );
    }
}
