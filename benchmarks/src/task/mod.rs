//! The suite-neutral task model: what every benchmark shares.
//!
//! A task goes through the same steps whatever its suite:
//! 1. [`Suite::prepare`]: the task as files and the API carry it → the exact messages a model
//!    receives, the group it is tabled under, and whatever the scoring needs (the parsed
//!    reference, computed once);
//! 2. a model (or a baseline, or a person) answers;
//! 3. [`Suite::needs`] (and [`Suite::more_needs`] for needs that depend on earlier answers):
//!    what scoring needs from the outside world (a judge's answer, a sandbox run), pure;
//! 4. [`Suite::score`]: the verdict once those needs are answered, pure.
//!
//! Only the server performs effects (model calls, judges); the page and the CLI share every
//! other step. [`Registry`] finds a suite by name: adding a suite is one `impl Suite` and one
//! line in [`Registry::standard`].

pub mod chart;
pub mod layout;
mod registry;
pub mod report;
pub mod source;
mod suite;
pub mod summary;
mod view;

/// The chat messages a task asks with are the provider protocol's own (one definition for the
/// page, the server and every suite).
pub use llm_protocol::{chat, prompt_text, Image, Message, Role, ToolCall, ToolSpec};
pub use registry::{Registry, UnknownSuite};
pub use suite::pipe_table;
pub use suite::{
    AnySuite, Generator, Headline, Need, NeedAnswer, Outcome, PaperTemperatures, Prepared,
    PreparedTask, RunEnv, RunProgram, RunResult, Scored, Suite, TaskError, Unasked, Variant,
    MAX_NEED_STAGES,
};
pub use view::{VerdictView, ViewRow, ViewTable, ViewText};
