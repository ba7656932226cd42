//! Benchmark runs: a suite, a task set, a model and settings, executed task by task with
//! every result stored as it finishes, so that a killed server resumes without losing or
//! repeating work.

mod runner;
mod store;
mod summary;

pub use runner::{execute, execute_until, Progress, RunError, RunTask};
pub use store::{
    create_run, find_unfinished, load_run, results as store_results, unfinished_at_startup,
    ResultRow, Unfinished,
};
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

/// Where a run's tasks come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TaskSource {
    /// Drawn by the seeded generator (the stored form of runs made before imports existed).
    Generated(TaskSetSpec),
    /// Imported tasks (the upstream data, or any file `atomworld import` reads).
    Imported(ImportedTasks),
}

/// An imported task set, kept whole in the run's spec so that a resumed run needs no file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportedTasks {
    /// Where the tasks came from (a file name).
    pub imported_from: String,
    /// The tasks in order.
    pub tasks: Vec<TaskTriple>,
}

/// One imported task: input, action sentence and (optionally) the ground truth; a missing
/// target is computed from input and prompt with the reference semantics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskTriple {
    /// Identifier, unique within the set.
    pub id: String,
    /// The input CIF.
    pub input_cif: String,
    /// The action sentence.
    pub action_prompt: String,
    /// The ground-truth CIF, if the source has one.
    #[serde(default)]
    pub target_cif: Option<String>,
}

/// Whether `spec` can run under `config`: a suite that runs and a baseline or configured
/// model. Checked before a run is recorded, so a typo never leaves a run that start-up
/// would try again and again.
pub fn check_spec(spec: &RunSpec, config: &crate::config::Config) -> Result<(), RunError> {
    if spec.suite != "atomworld" {
        return Err(RunError::UnknownSuite(spec.suite.clone()));
    }
    if let Answerer::Model(name) = Answerer::from_name(&spec.model) {
        if config.model(&name).is_none() {
            return Err(RunError::UnknownModel(name));
        }
    }
    Ok(())
}

/// Everything that defines a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The suite (`atomworld`).
    pub suite: String,
    /// The task set.
    pub tasks: TaskSource,
    /// The model (or baseline) name.
    pub model: String,
    /// Samples per task.
    pub samples: u32,
    /// Tasks in flight at once.
    pub concurrency: usize,
}
