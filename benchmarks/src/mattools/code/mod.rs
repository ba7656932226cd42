//! MatTools' real-world tool-usage tasks: 49 questions (138 properties) whose answer is a
//! Python function using pymatgen that returns a dict of properties.
//!
//! The flow (semantics as in the MatTools reference code, `Grenzlinie/MatTools`): [`prompt`] asks for
//! `<answer><code>…</code><name>FN</name></answer>`; [`extract`] takes the code and the name
//! out; [`harness`] wraps them into two sandbox runs: the model's code (its dict serialised
//! inside the sandbox as tagged JSON) and then the task's own verification function on the
//! rebuilt dict (third-party code, so in the sandbox too); [`verdict`] turns both runs into
//! Success, Partial (k of n properties) or FunctionError with an error class of the paper's
//! taxonomy. Tasks whose data files are not available are [`task::CodeTask::unavailable`]:
//! reported as "data unavailable", never as model failures.

pub mod agent;
pub mod agentic;
pub mod extract;
pub mod harness;
pub mod highlight;
pub mod model_docs;
pub mod prompt;
pub mod suite;
pub mod task;
pub mod verdict;

pub use suite::MatToolsCode;
pub use task::{CodeTask, Property};
pub use verdict::{CodeVerdict, ErrorClass, Label};
