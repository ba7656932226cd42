//! AlchemyBench (Open Materials Guide): predict a material synthesis recipe from a paper's
//! key contributions, judged by an LLM against the paper's own recipe on seven criteria and
//! overall. The pure part: recipes and their importer ([`recipe`]), the one-shot and RAG
//! prompts ([`prompt`]), exact cosine nearest neighbours ([`retrieval`]), the judge's
//! messages, reading and re-ask ([`judge`]), the per-split report and the judge/person
//! correlations ([`summary`]), the suite `alchemy` ([`suite`]).
//!
//! The upstream recipes (CC-BY-4.0) live on a data hub; the server reads them (parquet or
//! JSONL) into [`Recipe`]. [`demo`] holds recipes written for this project in the same schema.

pub mod demo;
pub mod judge;
pub mod prompt;
pub mod recipe;
pub mod retrieval;
pub mod suite;
pub mod summary;

pub use judge::{AlchemyLabel, AlchemyVerdict, JudgeError, JudgeScores};
pub use recipe::{import_jsonl, ImportError, Recipe, Reference};
pub use retrieval::RecipeIndex;
pub use suite::{Alchemy, AlchemyTask, Retrieval};
pub use summary::{AlchemySummary, SplitSummary};
