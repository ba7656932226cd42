//! OmniMatBench (materials science, 19 subfields): calculation items scored slot by slot
//! (`omnimat-cal`) and question-answer items judged for precision and recall
//! (`omnimat-qa`). The pure part: items and their importer ([`item`]), prompts
//! ([`prompt`]), the images of multimodal items ([`images`]), CAL scoring ([`cal`]), QA
//! judging ([`qa`]), the subfields' domains ([`domain`]), the suites ([`suite`]).
//!
//! The public release's items are CC BY-NC: they are read by the importer and used in tests
//! only, never shipped; [`demo`] holds our own items in the same schema.

pub mod cal;
pub mod demo;
pub mod domain;
pub mod images;
pub mod item;
pub mod prompt;
pub mod python_tool;
pub mod qa;
pub mod suite;

pub use item::{import_cal_jsonl, import_qa_json, CalItem, ImportError, KeyPoint, QaItem};
pub use suite::{OmniMatCal, OmniMatQa};
