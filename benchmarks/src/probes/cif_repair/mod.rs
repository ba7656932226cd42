//! CIF-Repair: a valid CIF with one essential line removed or its tags renamed
//! misleadingly; the model must return a valid CIF of the same structure (the AtomWorld paper).

pub mod corruption;
pub mod evaluate;
pub mod generator;
pub mod prompt;
pub mod suite;

pub use corruption::{
    corrupt, Corrupted, Corruption, CorruptionRequest, LineChange, RenameScheme, ESSENTIAL_TAGS,
};
pub use evaluate::{evaluate, RepairVerdict, PLACEHOLDER};
pub use generator::{generate, generate_each, CifRepairTask, RepairSetSpec, RepairTaskSpec};
pub use prompt::model_prompt;
pub use suite::CifRepair;
