//! What this binary is: version and build facts, reported by `/api/health`.

use serde::Serialize;

/// Version and build facts of the running server.
#[derive(Clone, Debug, Serialize)]
pub struct BuildInfo {
    /// The crate version (`CARGO_PKG_VERSION`).
    pub version: &'static str,
    /// Short git commit of the build, or `unknown` outside a git checkout.
    pub commit: &'static str,
    /// Cargo profile (`debug` or `release`).
    pub profile: &'static str,
    /// Target triple.
    pub target: &'static str,
}

/// The build facts of this binary.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        version: env!("CARGO_PKG_VERSION"),
        commit: env!("ATOMWORLD_GIT_COMMIT"),
        profile: env!("ATOMWORLD_PROFILE"),
        target: env!("ATOMWORLD_TARGET"),
    }
}
