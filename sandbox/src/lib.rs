//! Runs untrusted (model-written) Python under hard limits, behind one interface for every
//! backend.
//!
//! - [`Program`]: code, input files, stdin, an optional entry function.
//! - [`Limits`]: wall time, CPU, memory, output bytes, scratch bytes (documented defaults).
//! - [`Outcome`]: capped stdout/stderr, exit code, the [`Limit`] that stopped the run, wall
//!   time, peak memory, the entry's JSON result, small result files.
//! - [`Backend`]: what a backend implements (`run`, `name`, `availability`).
//! - [`Sandbox`]: the front: runs queue behind a concurrency limit and stop when cancelled
//!   (a [`CancelToken`] fires or the run's future is dropped).
//!
//! Backends: `wasm` (cargo feature `wasm`, off by default): CPython 3.11 on WASI inside
//! wasmtime 48, see [`wasm::WasmBackend`]. Its interpreter files are fetched by
//! `scripts/python-wasm.sh` (provenance and licences in `sandbox/NOTICE-python-wasm.md`).
//! `bwrap`: the pinned MatTools venv in bubblewrap, see [`bwrap::BwrapBackend`]. `container`:
//! the same worker in a podman or docker container built by `scripts/container-image.sh`,
//! see [`container::ContainerBackend`].

pub mod backend;
pub mod bwrap;
pub mod cancel;
pub mod container;
mod entry;
pub mod error;
pub mod limits;
pub mod outcome;
pub mod program;
pub mod sandbox;
pub mod scratch;
#[cfg(feature = "wasm")]
pub mod wasm;
mod worker;

pub use backend::{Backend, BoxFuture};
pub use cancel::CancelToken;
pub use error::SandboxError;
pub use limits::{Limit, Limits};
pub use outcome::{Outcome, OutputFile};
pub use program::Program;
pub use sandbox::Sandbox;
