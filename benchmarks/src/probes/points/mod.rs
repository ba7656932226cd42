//! PointWorld: the AtomWorld actions on bare points (the AtomWorld paper, "pure coordinates").
//!
//! Two points in [−10, 10]³ (two decimals), one action in words, and the model returns the
//! new list of points. No lattice, no periodicity, no elements: a model that fails here
//! fails at the geometry, not at reading CIF files.

pub mod action;
pub mod answer;
pub mod apply;
pub mod generator;
pub mod prompt;
pub mod score;
pub mod suite;

pub use action::{Axis, Point, PointAction, PointActionKind};
pub use answer::{extract_answer, parse_points, AnswerError};
pub use apply::apply;
pub use generator::{generate, PointTask, PointTaskSpec};
pub use prompt::{action_prompt, model_prompt, points_json};
pub use score::{evaluate, PointLabel, PointVerdict, PASS_THRESHOLD};
pub use suite::PointWorld;
