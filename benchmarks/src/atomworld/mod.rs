//! The AtomWorld suite: an input CIF, an action in words, and the CIF the model must return.

pub mod action;
pub mod agent;
pub mod apply;
pub mod evaluate;
pub mod figures;
pub mod generator;
pub mod import;
pub mod noop;
pub mod numbers;
pub mod parse;
pub mod prompt;
pub mod same_crystal;
pub mod studies;
pub mod suggest;
pub mod suite;
pub mod task;
pub mod tools;
pub mod wording;

pub use action::{Action, ActionKind};
pub use apply::{apply, readings_differ, ActionError, Applied, Semantics, Touched};
pub use parse::{parse_prompt, PromptParseError};
pub use suite::AtomWorld;
pub use task::{resolve, target_of, AtomWorldTask, Resolved};
pub use wording::{render_prompt, PromptStyle, Separator, Wording};
