//! `atomworld sandbox check` (which backends work on this host, and why not) and
//! `atomworld sandbox run FILE.py` (one program, its outcome as one JSON object).

use std::path::Path;
use std::time::Duration;

use super::CliError;
use crate::execution::{CodeRunner, SandboxConfig};

/// Every backend of the design, checked on this host: one line each.
pub fn check() -> String {
    let mut out = String::new();
    for name in ["wasm", "bwrap", "container"] {
        let runner = CodeRunner::from_config(&SandboxConfig {
            backend: name.into(),
            ..SandboxConfig::default()
        });
        let state = runner.check();
        let mark = if state.available {
            "works"
        } else {
            "unavailable"
        };
        out.push_str(&format!("{name:<10} {mark}: {}\n", state.detail));
    }
    out
}

/// Run `file` with `backend` under the configured limits, changed by `timeout` (seconds) and
/// `memory_mb`; the outcome as JSON.
pub async fn run(
    backend: &str,
    file: &Path,
    timeout: Option<f64>,
    memory_mb: Option<u64>,
) -> Result<String, CliError> {
    let code = std::fs::read_to_string(file)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", file.display())))?;
    let config = SandboxConfig {
        backend: backend.into(),
        max_concurrent: 1,
        ..SandboxConfig::default()
    };
    let mut limits = config.limits();
    if let Some(t) = timeout {
        if !(t.is_finite() && t > 0.0) {
            return Err(CliError::input(format!(
                "--timeout {t}: give seconds above 0"
            )));
        }
        limits.wall = Duration::from_secs_f64(t);
    }
    if let Some(m) = memory_mb {
        limits.memory_bytes = m.max(16) * 1024 * 1024;
    }
    let runner = CodeRunner::from_config(&config);
    let state = tokio::task::spawn_blocking({
        let r = runner.clone();
        move || r.check()
    })
    .await
    .map_err(|e| CliError::failure(e.to_string()))?;
    if !state.available {
        return Err(CliError::failure(format!(
            "sandbox backend {backend} unavailable: {}",
            state.detail
        )));
    }
    let outcome = runner
        .run(&sandbox::Program::new(code), Some(&limits))
        .await
        .map_err(|e| CliError::failure(e.to_string()))?;
    serde_json::to_string(&outcome).map_err(|e| CliError::failure(e.to_string()))
}
