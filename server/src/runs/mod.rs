//! Benchmark runs: a suite, a task set, a model and settings, executed task by task with
//! every result stored as it finishes, so that a killed server resumes without losing or
//! repeating work.

mod runner;
mod store;
mod summary;

pub use runner::{execute, execute_until, Progress, RunError};
pub use store::{create_run, find_unfinished, load_run, results as store_results, ResultRow};
pub use summary::{summarise, Summary};

use bench::atomworld::generator::TaskSetSpec;
use serde::{Deserialize, Serialize};

/// Who answers the tasks of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answerer {
    /// A configured model, by name.
    Model(String),
    /// Baseline: answers with the input CIF unchanged (needs no key; bounds tables from below).
    CopyInput,
    /// Baseline: answers with the ground truth (needs no key; bounds tables from above).
    Reference,
}

impl Answerer {
    /// Name of the copy-input baseline.
    pub const COPY_INPUT: &'static str = "copy-input";
    /// Name of the reference baseline.
    pub const REFERENCE: &'static str = "reference";

    /// The answerer called `name`: a baseline or a configured model.
    pub fn from_name(name: &str) -> Self {
        match name {
            Self::COPY_INPUT => Answerer::CopyInput,
            Self::REFERENCE => Answerer::Reference,
            other => Answerer::Model(other.to_string()),
        }
    }

    /// True for the names reserved by the baselines.
    pub fn is_baseline_name(name: &str) -> bool {
        name == Self::COPY_INPUT || name == Self::REFERENCE
    }

    /// The display name.
    pub fn name(&self) -> &str {
        match self {
            Answerer::Model(n) => n,
            Answerer::CopyInput => Self::COPY_INPUT,
            Answerer::Reference => Self::REFERENCE,
        }
    }
}

/// Everything that defines a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The suite (`atomworld`).
    pub suite: String,
    /// The task set.
    pub tasks: TaskSetSpec,
    /// The model (or baseline) name.
    pub model: String,
    /// Samples per task.
    pub samples: u32,
    /// Tasks in flight at once.
    pub concurrency: usize,
}
