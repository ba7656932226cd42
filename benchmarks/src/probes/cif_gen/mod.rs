//! CIF-Gen: write a CIF for a formula in a named structure type, given the conventional
//! lattice constant and hints (the AtomWorld paper). The reference structures are built here, in code,
//! from textbook prototypes; no external data.

pub mod evaluate;
pub mod examples;
pub mod generator;
pub mod prompt;
pub mod prototype;
pub mod suite;

pub use evaluate::{evaluate, gen_matcher_options, GenLabel, GenVerdict};
pub use examples::{Example, EXAMPLES};
pub use generator::{generate, generate_each, CifGenTask, GenSetSpec, GenTaskSpec};
pub use prompt::model_prompt;
pub use prototype::{build, BuildError, Params, Prototype};
pub use suite::CifGen;
