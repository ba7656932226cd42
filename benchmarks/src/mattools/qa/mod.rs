//! MatTools QA (the MatTools paper): multiple-choice questions on pymatgen's API, answered
//! with one letter inside `<answer></answer>`.
//!
//! - [`item`]: the reference's file layout (`[{source, questions: [...]}]`), the importer
//!   [`parse_qa_file`](item::parse_qa_file) and the task [`QaTask`](item::QaTask) (also read
//!   one JSON object a line);
//! - [`prompt`]: the one user message a model receives (our wording);
//! - [`extract`]: our reading of a reasoning model's letter, reported beside the exact rule;
//! - [`score`]: the exact scoring rule and accuracy per file with a 95 % Wilson interval;
//! - [`suite`]: the QA benchmark as a [`Suite`](crate::task::Suite) named `mattools-qa`.
//!
//! The paper samples at temperature 0.7: runs meant to compare with its numbers (accuracy %,
//! code / doc: Gemini-1.5-Pro 80.60 / 82.90, Qwen2.5-72B-Instruct 81.36 / 81.82,
//! Gemini-2.0-Flash 73.85 / 82.76) should set it. Our shipped questions
//! (`benchmarks/data/mattools_qa.json`, see [`item::parse_qa_bundle`]) are written by us and are
//! not the paper's data sets, so their numbers are not comparable with the paper's.

pub mod extract;
pub mod item;
pub mod prompt;
pub mod score;
pub mod suite;
