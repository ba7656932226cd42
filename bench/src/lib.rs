//! Benchmark suites of AtomWorld Playground: tasks, prompts, generators and evaluators.
//!
//! Pure Rust (no I/O, clocks or async) so that the browser and the server compute the same
//! prompts and verdicts. This first module holds the AtomWorld model prompt; actions,
//! generator and evaluator follow (see docs/ARCHITECTURE.md).

pub mod atomworld;
pub mod case;
