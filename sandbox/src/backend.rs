//! The one interface every backend implements.

use std::future::Future;
use std::pin::Pin;

use crate::cancel::CancelToken;
use crate::error::SandboxError;
use crate::limits::Limits;
use crate::outcome::Outcome;
use crate::program::Program;

/// A boxed, `Send` future (what [`Backend::run`] returns, so backends can be `dyn`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A way to run untrusted Python under limits (`wasm`, later `bwrap` and `container`).
///
/// Callers normally go through [`crate::Sandbox`], which adds queuing and cancel-on-drop.
pub trait Backend: Send + Sync {
    /// A short stable name (`"wasm"`, `"bwrap"`, `"container"`).
    fn name(&self) -> &'static str;

    /// Whether this backend can run on this host now; `Err` says why not and what to do.
    /// May do blocking I/O (checksums): call it off the async executor when it matters.
    fn availability(&self) -> Result<(), SandboxError>;

    /// Runs `program` under `limits`. Must stop the program promptly once `cancel` fires
    /// (returning [`SandboxError::Cancelled`]) and must not block the async executor.
    fn run<'a>(
        &'a self,
        program: &'a Program,
        limits: &'a Limits,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<Outcome, SandboxError>>;
}
