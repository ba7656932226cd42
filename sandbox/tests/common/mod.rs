//! Shared by the backend test files: the CI rule for a missing backend, the usual limits,
//! and (in [`escape`]) the escape and abuse cases the worker backends share.
#![allow(dead_code)] // each test file uses its own subset
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

pub mod escape;

use std::time::Duration;

use sandbox::{Backend, CancelToken, Limits, Outcome, Program};

/// Whether a missing backend fails the tests (`CI=true` or `ATOMWORLD_REQUIRE_SHARED=1`)
/// instead of skipping them.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1")
}

/// Whether a backend's check passed: `true` if so; otherwise panics under CI (see
/// [`required`]) or prints a notice and gives `false` (skip).
pub fn usable<E: std::fmt::Display>(check: Result<(), E>) -> bool {
    match check {
        Ok(()) => true,
        Err(e) if required() => panic!("{e} (required under CI)"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            false
        }
    }
}

/// `b` when it is available here, or `None` to skip (see [`usable`]).
pub fn available<B: Backend>(b: B) -> Option<B> {
    usable(b.availability()).then_some(b)
}

/// `$backend` when it is available, else returns from the test (see [`available`]).
#[allow(unused_macros)] // not every test file uses it
macro_rules! available_or_skip {
    ($backend:expr) => {
        match $crate::common::available($backend) {
            Some(b) => b,
            None => return,
        }
    };
}
#[allow(unused_imports)]
pub(crate) use available_or_skip;

/// Default limits with a 20 s wall limit.
pub fn quick() -> Limits {
    Limits {
        wall: Duration::from_secs(20),
        ..Limits::default()
    }
}

/// Runs `code` on `b` under `limits` (an error fails the test).
pub async fn run(b: &dyn Backend, code: &str, limits: &Limits) -> Outcome {
    b.run(&Program::new(code), limits, &CancelToken::new())
        .await
        .unwrap()
}
