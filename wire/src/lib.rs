//! The JSON that crosses HTTP between the page and the server: one definition, used by both
//! (the server serialises these, the page deserialises them). Labels and statuses are enums.
//! [`case`] is a shared case (a task, an answer and its verdict) packed into a `#case=` link.

use serde::{Deserialize, Serialize};

use benchmarks::atomworld::evaluate::{Label, Verdict};
use benchmarks::task::summary::Summary;
use benchmarks::task::Outcome;

pub mod case;

/// The request header naming a browser session (16 to 64 letters, digits, `-` or `_`): the
/// server's rate limits count per session where one is named, so a workshop behind one
/// address is many clients (the page sends one per tab).
pub const SESSION_HEADER: &str = "x-atomworld-session";

mod rooms;
pub use rooms::{
    AttemptDetail, AttemptKind, AttemptScored, AttemptView, LabelCount, RoomActionRow, RoomAttempt,
    RoomCell, RoomCreate, RoomCreated, RoomInfo, RoomSummary,
};

/// Every API error: `{"error": {"code", "message"}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    /// The error.
    pub error: ErrorBody,
}

/// An API error's code (stable, for programs) and message (for people).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// Stable snake_case code (`passcode_required`, `rate_limited`, `spend_cap`, …).
    pub code: String,
    /// What went wrong, in a sentence.
    pub message: String,
}

/// `GET /api/health`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    /// `ok` when the server answers and its database takes a write.
    pub status: HealthStatus,
    /// Server version.
    pub version: String,
    /// Git commit of the server build.
    pub commit: String,
    /// Cargo profile of the build.
    #[serde(default)]
    pub profile: String,
    /// Target triple of the build.
    #[serde(default)]
    pub target: String,
    /// Database schema version (the count of its engine's migrations).
    #[serde(default)]
    pub schema_version: i64,
    /// The database engine: `sqlite` (embedded) or `postgres` (shared by instances).
    #[serde(default)]
    pub database: String,
    /// The code sandbox (absent from servers that predate it): the `python` environment.
    #[serde(default)]
    pub sandbox: Option<SandboxHealth>,
    /// The `pymatgen` environment of MatTools' code tasks.
    #[serde(default)]
    pub pymatgen: Option<SandboxHealth>,
}

/// The code sandbox's state in [`Health`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SandboxHealth {
    /// The configured backend (`wasm`, `none`).
    pub backend: String,
    /// Whether programs can run.
    pub available: bool,
    /// Why not, or how the backend was loaded.
    pub detail: String,
}

/// The server's state in [`Health`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Serving, database writable.
    Ok,
    /// Something is wrong (the error says what).
    Error,
}

impl std::fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HealthStatus::Ok => "ok",
            HealthStatus::Error => "error",
        })
    }
}

/// One model the server offers (`GET /api/models`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelInfo {
    /// The name to ask for.
    pub name: String,
    /// Its provider (`openai`, `anthropic`, `gemini`, `openai-compatible`, `baseline`).
    pub provider: String,
    /// A built-in baseline (answers whole tasks, not prompts).
    pub baseline: bool,
}

/// `GET /api/models`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelList {
    /// Configured models, then the baselines.
    pub models: Vec<ModelInfo>,
}

/// `POST /api/complete` and `/api/complete/stream`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompleteRequest {
    /// A configured model.
    pub model: String,
    /// The user message.
    pub prompt: String,
    /// When not empty, the exact messages to send instead of `prompt` alone (a suite task's
    /// system and user messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<benchmarks::task::Message>,
    /// Sample index (repeated samples of one prompt are cached apart).
    #[serde(default)]
    pub sample: u32,
}

/// A model's answer and what it cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Completion {
    /// The answer text.
    pub text: String,
    /// Prompt tokens as the provider reported them.
    pub input_tokens: u64,
    /// Completion tokens as the provider reported them.
    pub output_tokens: u64,
    /// Cost in USD (0 when served from the cache).
    pub cost_usd: f64,
    /// True when the answer came from the response cache.
    pub cached: bool,
    /// HTTP attempts made (0 for cache hits).
    #[serde(default)]
    pub attempts: u32,
}

/// Data of a `delta` event of `/api/complete/stream`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamDelta {
    /// The next piece of the answer.
    pub text: String,
}

/// Data of a `restart` event of `/api/complete/stream`: forget the pieces so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamRestart {
    /// The attempt that starts now (2 for the first retry).
    pub attempt: u32,
}

/// Where a run's tasks come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TaskSource {
    /// Tasks of the run's suite, kept whole in the spec so that a resumed run needs no file.
    Imported(ImportedTasks),
    /// Drawn by the suite's seeded generator with these parameters
    /// ([`Generator::params`](benchmarks::task::Generator::params)). Any JSON that is not an
    /// imported set reads as parameters: the suite says whether they are its own.
    Generated(serde_json::Value),
}

/// An imported task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportedTasks {
    /// Where the tasks came from (a file name, or `api`).
    pub imported_from: String,
    /// The tasks in order, each as its suite's task JSON.
    pub tasks: Vec<serde_json::Value>,
    /// Tasks of the input left out of the run, each with its place and why: counted in the
    /// run's summary, never dropped in silence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedTask>,
    /// Tasks given by a client that are not the server's own (no task the server holds has
    /// the same key and content): they are scored as given, with whatever reference or
    /// verification they carry, so their verdicts are not the benchmark's. Tables say so.
    #[serde(default, skip_serializing_if = "none")]
    pub unverified: usize,
}

fn none(n: &usize) -> bool {
    *n == 0
}

/// A task of a run's input that is not in the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkippedTask {
    /// Where it was read ("cal/03_….jsonl line 7").
    pub place: String,
    /// Why it cannot run.
    pub why: String,
}

/// How a run's tasks were accounted for: `read = skipped + in_run`, and
/// `in_run × samples = scored + unasked + failed + pending`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskCounts {
    /// Tasks read from the input.
    pub read: usize,
    /// Tasks left out of the run (their places and reasons are in the run's spec).
    pub skipped: usize,
    /// Tasks in the run.
    pub in_run: usize,
    /// Samples per task.
    pub samples: u32,
    /// Answers scored.
    pub scored: usize,
    /// Tasks stored without asking anyone (OmniMatBench: images unavailable).
    pub unasked: usize,
    /// Answers that failed before a verdict (provider errors, spend cap): resumable.
    pub failed: usize,
    /// Answers not yet attempted.
    pub pending: usize,
    /// Tasks of the run that are not the server's own ([`ImportedTasks::unverified`]).
    #[serde(default)]
    pub unverified: usize,
}

impl TaskCounts {
    /// What a table must say of a run with tasks that are not the server's own, if any.
    pub fn unverified_text(&self) -> Option<String> {
        (self.unverified > 0).then(|| {
            format!(
                "UNVERIFIED: {} of {} tasks were given by the client and are not the server's \
                 own; they are scored against the reference or verification they carry, so \
                 this is not a benchmark result",
                self.unverified, self.in_run
            )
        })
    }
}

/// Everything that defines a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The agent that answers (MatTools' code tasks: `single`, `rag`, `reflect`; OmniMatBench:
    /// `python`, code execution, our own setting); none: one plain call per task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The configured embeddings model that retrieval uses (MatTools' documentation search
    /// by the `rag` and `reflect` agents; AlchemyBench's references for recipes without
    /// stored embeddings); none: BM25, and stored embeddings only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<String>,
    /// What else sets this run's condition apart, in words, for reports (AlchemyBench's
    /// `K = 5` references per recipe); none: model and agent say it all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Send the model's requests as one provider batch (OpenAI's Batch API, Anthropic's
    /// Message Batches): half the price, answers within a day.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
}

/// Defaults of a run, named once for the CLI, the API and the page.
pub mod defaults {
    /// The seed of a generated task set.
    pub const SEED: u64 = 2026;
    /// Tasks per action of a run started from the API or the page.
    pub const PER_ACTION_API: usize = 25;
    /// Tasks per action of `atomworld run` and `atomworld gen`.
    pub const PER_ACTION_CLI: usize = 250;
    /// Tasks in flight at once.
    pub const CONCURRENCY: usize = 4;
    /// Samples per task.
    pub const SAMPLES: u32 = 1;
    /// Most tasks in flight at once that a run may ask for.
    pub const MAX_CONCURRENCY: usize = 32;
}

/// `POST /api/runs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunRequest {
    /// Model or baseline name.
    pub model: String,
    /// The suite (default `atomworld`).
    #[serde(default = "default_suite")]
    pub suite: String,
    /// Tasks per group of a generated set (AtomWorld: per action).
    #[serde(default = "default_per_group", alias = "per_action")]
    pub per_group: usize,
    /// Seed of a generated set.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Tasks in flight at once (1 to 32).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Samples per task.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// Tasks to run instead of a generated set (`per_group` and `seed` then unused).
    #[serde(default)]
    pub tasks: Option<Vec<serde_json::Value>>,
    /// The agent that answers (MatTools' code tasks: `single`, `rag`, `reflect`; OmniMatBench:
    /// `python`, code execution, our own setting).
    #[serde(default)]
    pub agent: Option<String>,
    /// A variant of the suite's generated set ([`SuiteInfo::variants`]; AtomWorld: the
    /// prompt's wording); none: the default set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Send the requests as one provider batch ([`RunSpec::batch`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
}

fn default_suite() -> String {
    <benchmarks::atomworld::suite::AtomWorld as benchmarks::task::Suite>::NAME.to_string()
}
fn default_per_group() -> usize {
    defaults::PER_ACTION_API
}
fn default_seed() -> u64 {
    defaults::SEED
}
fn default_concurrency() -> usize {
    defaults::CONCURRENCY
}
fn default_samples() -> u32 {
    defaults::SAMPLES
}

/// `POST /api/runs` answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunCreated {
    /// The new run's id.
    pub run_id: String,
    /// The token that cancels or resumes it ([`RUN_TOKEN_HEADER`]): given once, to its
    /// starter; the server keeps only its digest.
    #[serde(default)]
    pub run_token: String,
}

/// The request header carrying a run's token (`RunCreated::run_token`) to cancel or resume it.
pub const RUN_TOKEN_HEADER: &str = "x-run-token";

/// A run's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Recorded, not started.
    Created,
    /// Executing.
    Running,
    /// Every task sample has a verdict.
    Finished,
    /// Stopped by a person; resumable.
    Cancelled,
    /// Stopped by a spend cap; resumable.
    Stopped,
    /// Ended with task samples whose call failed; resumable.
    Incomplete,
    /// Made no progress between two automatic restarts; resumable by a person.
    Interrupted,
}

impl RunStatus {
    /// The name stored and shown (`running`).
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Created => "created",
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Stopped => "stopped",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The status called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            RunStatus::Created,
            RunStatus::Running,
            RunStatus::Finished,
            RunStatus::Cancelled,
            RunStatus::Stopped,
            RunStatus::Incomplete,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// Whether the run may still be executing (created or running).
    pub fn is_active(self) -> bool {
        matches!(self, RunStatus::Created | RunStatus::Running)
    }
}

/// A run's live progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Progress {
    /// Task samples with a stored verdict (earlier sessions included).
    pub done: usize,
    /// All task samples.
    pub total: usize,
    /// Successes so far.
    pub successes: usize,
    /// Tokens so far.
    pub tokens: u64,
    /// Cost so far (USD).
    pub cost_usd: f64,
    /// Set while the run waits for a provider's batch: what the provider last said of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for_batch: Option<String>,
}

/// A `progress` event of `GET /api/runs/{id}/events`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProgressEvent {
    /// The run's status.
    pub status: RunStatus,
    /// Its progress, when it is executing in this server.
    #[serde(flatten)]
    pub progress: Option<Progress>,
}

/// One row of `GET /api/runs`: what a list of runs shows, never the run's tasks (a run's
/// whole spec is `GET /api/runs/{id}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunListItem {
    /// Run id.
    pub id: String,
    /// Its suite.
    pub suite: String,
    /// Its model (or baseline).
    pub model: String,
    /// The agent that answered, if not one model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The condition of a sweep (`K = 5`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Repeats of every task.
    pub samples: u32,
    /// How many tasks were given to it; `None` when its suite's generator drew them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_tasks: Option<usize>,
    /// Its status.
    pub status: RunStatus,
    /// When it was created (UTC, ISO 8601).
    pub created_at: String,
}

/// `GET /api/runs`: one page of runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunList {
    /// Newest first.
    pub runs: Vec<RunListItem>,
    /// Runs in all pages (of the asked suite, if one was asked).
    pub total: usize,
    /// Runs skipped before this page.
    pub offset: usize,
    /// The most runs a page holds.
    pub limit: usize,
}

/// The query of `GET /api/runs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
pub struct RunListQuery {
    /// Runs per page (default [`RunListQuery::DEFAULT_LIMIT`], at most
    /// [`RunListQuery::MAX_LIMIT`]).
    pub limit: Option<usize>,
    /// Runs to skip (newest first).
    pub offset: Option<usize>,
    /// Only this suite's runs.
    pub suite: Option<String>,
}

impl RunListQuery {
    /// Runs per page when none is asked.
    pub const DEFAULT_LIMIT: usize = 100;
    /// The most runs per page.
    pub const MAX_LIMIT: usize = 500;
}

/// `GET /api/runs/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunView {
    /// Run id.
    pub id: String,
    /// Its spec.
    pub spec: RunSpec,
    /// Its status.
    pub status: RunStatus,
    /// Live progress, while it executes in this server.
    pub progress: Option<Progress>,
    /// The results table so far.
    pub summary: RunSummary,
}

/// A run's results table (`--summary-json`, `GET /api/runs/{id}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunSummary {
    /// Run id.
    pub run_id: String,
    /// Model name.
    pub model: String,
    /// The table.
    #[serde(flatten)]
    pub table: Summary,
    /// The suite's own headline numbers (MatTools' rates, OmniMatBench's slot accuracy and
    /// macro-F1, AlchemyBench's criterion means), when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub headline: Option<benchmarks::task::Headline>,
    /// What preparing the tasks cost before the first answer (AlchemyBench's embeddings),
    /// USD; the table's cost is the answers' alone, the run's spend is both.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preparation_cost_usd: f64,
    /// How the run's tasks were accounted for (for runs of given tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<TaskCounts>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A result's verdict: AtomWorld's typed verdict, or another suite's verdict as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResultVerdict {
    /// An AtomWorld verdict.
    AtomWorld(Box<Verdict>),
    /// Another suite's verdict.
    Other(serde_json::Value),
}

impl ResultVerdict {
    /// The AtomWorld verdict, if this is one.
    pub fn atomworld(&self) -> Option<&Verdict> {
        match self {
            ResultVerdict::AtomWorld(v) => Some(v),
            ResultVerdict::Other(_) => None,
        }
    }

    /// The AtomWorld label, if this is an AtomWorld verdict.
    pub fn label(&self) -> Option<Label> {
        self.atomworld().map(|v| v.label)
    }
}

/// One stored result: a task sample, its answer and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResultRow {
    /// Task id.
    pub task_id: String,
    /// Sample index.
    pub sample: u32,
    /// The group it is tabled under (AtomWorld: the action).
    #[serde(alias = "action")]
    pub group: String,
    /// The task as its suite reads it (AtomWorld: input CIF, action prompt, target), so a
    /// row opens as a case without taking the prompt apart. Absent in rows stored before
    /// it was kept.
    #[serde(default)]
    pub task: Option<serde_json::Value>,
    /// An agent's rounds (prompts, retrieved entries, runs, critiques), when an agent
    /// answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub transcript: Option<serde_json::Value>,
    /// The exact prompt sent (the messages' text).
    pub prompt: String,
    /// The raw answer (absent when the call failed).
    pub response: Option<String>,
    /// The verdict (absent when the call failed).
    pub verdict: Option<ResultVerdict>,
    /// The verdict's label, by name (the suite's label; absent when the call failed).
    pub label: Option<String>,
    /// What the results table counts of the verdict (absent when the call failed, and in
    /// rows stored before it was kept).
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// The call's error, when it failed.
    pub error: Option<String>,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
    /// Latency of the call in milliseconds.
    pub latency_ms: u64,
    /// Served from the response cache.
    pub cached: bool,
}

impl ResultRow {
    /// Whether no one was asked (the suite's verdict stored for a task that cannot be asked
    /// here, e.g. OmniMatBench's items whose images are unavailable).
    pub fn unasked(&self) -> bool {
        self.verdict.is_some() && self.response.is_none() && self.error.is_none()
    }

    /// What the results table counts of this row: the stored outcome, or for rows stored
    /// before outcomes were kept, the AtomWorld reading of the label and verdict; `None`
    /// when the call failed.
    pub fn table_outcome(&self) -> Option<Outcome> {
        if let Some(o) = &self.outcome {
            return Some(o.clone());
        }
        let label = self.label.as_ref()?;
        Some(Outcome {
            label: label.clone(),
            success: label == Label::Success.name(),
            metric: self
                .verdict
                .as_ref()
                .and_then(ResultVerdict::atomworld)
                .filter(|v| v.label == Label::Success)
                .and_then(|v| v.max_dist),
            why: None,
        })
    }
}

/// `GET /api/runs/{id}/results?format=json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Results {
    /// Ordered by task and sample.
    pub results: Vec<ResultRow>,
}

/// `POST /api/runs/{id}/cancel` and `/resume` answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunAction {
    /// The run.
    pub run_id: String,
    /// `cancelling` or `running`.
    pub status: String,
}

/// `POST /api/cases` answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CaseCreated {
    /// The case's id.
    pub id: String,
    /// Its path (`/c/{id}`).
    pub url: String,
}

/// Schemas of the two wire types whose payloads are documented by their Rust types rather
/// than spelled out: a generated task set's spec and a suite's verdict (free-form objects).
#[cfg(feature = "openapi")]
mod schemas {
    use utoipa::openapi::schema::{ObjectBuilder, Schema};
    use utoipa::openapi::RefOr;
    use utoipa::{PartialSchema, ToSchema};

    fn object(description: &str) -> RefOr<Schema> {
        ObjectBuilder::new().description(Some(description)).into()
    }

    impl PartialSchema for super::TaskSource {
        fn schema() -> RefOr<Schema> {
            object(
                "{imported_from, tasks}, or the parameters of the suite's generator (AtomWorld: \
                 {seed, counts, pool, …}: benchmarks::atomworld::generator::TaskSetSpec)",
            )
        }
    }
    impl ToSchema for super::TaskSource {}

    impl PartialSchema for super::ResultVerdict {
        fn schema() -> RefOr<Schema> {
            object(
                "The suite's verdict; AtomWorld: {label, rms, max_dist, max_dist_angstrom, \
                 detail, extracted_cif, parse_error, count_diff, mapping, closest, same_crystal \
                 {fit, rms, max_dist}}",
            )
        }
    }
    impl ToSchema for super::ResultVerdict {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_by_name() {
        for s in [
            RunStatus::Created,
            RunStatus::Interrupted,
            RunStatus::Finished,
        ] {
            assert_eq!(RunStatus::from_name(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(RunStatus::from_name("nope"), None);
    }

    #[test]
    fn stored_verdicts_read_back_typed() {
        let v = serde_json::json!({"label": "Success", "rms": 0.0, "max_dist": 0.0,
            "max_dist_angstrom": 0.0, "detail": "d", "extracted_cif": null, "parse_error": null,
            "count_diff": [], "mapping": null});
        let r: ResultVerdict = serde_json::from_value(v).unwrap();
        assert_eq!(r.label(), Some(Label::Success));
        let other: ResultVerdict = serde_json::from_value(serde_json::json!({"x": 1})).unwrap();
        assert_eq!(other.label(), None);
    }
}

/// One suite in `GET /api/suites`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuiteInfo {
    /// The suite's name (`mattools-code`, `omnimat-cal`, …).
    pub name: String,
    /// Its baselines (answerers that need no model).
    pub baselines: Vec<String>,
    /// Tasks this server holds for it (`GET /api/suites/{name}/tasks`).
    pub tasks: usize,
    /// Where those tasks come from, or how to give the server some.
    pub source: String,
    /// Whether its tasks are generated from a seed (AtomWorld: in the playground itself).
    #[serde(default)]
    pub generates: bool,
    /// The agents that may answer its tasks besides one model call.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Whether answers are code (the page colours them as Python and starts from a template).
    #[serde(default)]
    pub code_answers: bool,
    /// The numbers of references a task may retrieve on the page (AlchemyBench's K); empty
    /// when the suite takes none.
    #[serde(default)]
    pub reference_counts: Vec<usize>,
    /// Whether people score its runs' answers on the human-scoring page.
    #[serde(default)]
    pub human_scored: bool,
    /// Variants of its generated set a run may choose (AtomWorld: the prompt's wording).
    #[serde(default)]
    pub variants: Vec<VariantInfo>,
}

/// A variant of a suite's generated set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VariantInfo {
    /// Its name (`RunRequest::variant`).
    pub name: String,
    /// How reports name a run of it ("Table 1 wording").
    pub condition: String,
}

/// `GET /api/suites`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuiteList {
    /// Every suite of the server.
    pub suites: Vec<SuiteInfo>,
}

/// One task in `GET /api/suites/{name}/tasks`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuiteTask {
    /// The task's id.
    pub id: String,
    /// The group it is tabled under.
    pub group: String,
    /// The exact prompt a model receives (messages joined, each headed by its role when
    /// there are several).
    pub prompt: String,
    /// The same prompt as the messages sent (so a page can ask a model exactly as a run does).
    #[serde(default)]
    pub messages: Vec<benchmarks::task::Message>,
    /// The stems of the task's images (OmniMatBench), in order: the page shows each from
    /// `GET /api/suites/{name}/tasks/{id}/images/{stem}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Why no model can be asked this task here (an OmniMatBench item whose images are
    /// unavailable); runs table it apart and leave it out of the scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The task as its suite's JSON (what `POST /api/score` takes back).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub task: serde_json::Value,
}

/// `POST /api/suites/alchemy/references`: an AlchemyBench task with its `k` nearest recipes
/// among the server's as references (K = 0: the one-shot prompt).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReferencesRequest {
    /// The task as the suite's JSON.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub task: serde_json::Value,
    /// How many references: 0, 1, 5, 10 or 25 (the benchmark's settings).
    pub k: usize,
}

/// `GET /api/suites/{name}/tasks`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuiteTasks {
    /// The tasks, in order.
    pub tasks: Vec<SuiteTask>,
}

/// `POST /api/score`: score one answer to one task of a suite. Scoring may run the answer's
/// code in the server's sandbox (MatTools) or call the configured judge (OmniMatBench QA).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScoreRequest {
    /// The suite.
    pub suite: String,
    /// The task as the suite's JSON.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub task: serde_json::Value,
    /// The answer to score (a model's full reply, or code written by hand).
    pub response: String,
}

/// The answer of `POST /api/score`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScoreResult {
    /// What a table needs of the verdict.
    pub outcome: benchmarks::task::Outcome,
    /// The suite's own verdict.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub verdict: serde_json::Value,
    /// What a page shows of the verdict beyond its label, as the suite declares it.
    #[serde(default)]
    pub view: benchmarks::task::VerdictView,
}

/// One score a person gave a result on one criterion (AlchemyBench's human scoring).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HumanScore {
    /// The result's task.
    pub task_id: String,
    /// The result's sample.
    #[serde(default)]
    pub sample: u32,
    /// The criterion, one of the judge's eight keys (`materials_appropriateness_score`, …,
    /// `overall_score`).
    pub criterion: String,
    /// 1 to 5 in steps of 0.5; `null` removes the score.
    pub score: Option<f64>,
    /// Who scored (a name of at most 40 characters; empty: the unnamed scorer). Several
    /// people may score the same results; each sees and changes only their own.
    #[serde(default)]
    pub scorer: String,
}

/// How the person's scores agree with the judge's on one criterion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CriterionAgreement {
    /// The criterion.
    pub criterion: String,
    /// Results scored by both.
    pub n: usize,
    /// Pearson's r (absent below two pairs or without spread).
    pub pearson: Option<f64>,
    /// Its two-sided p-value (Student's t, as scipy's `pearsonr`; absent below three pairs).
    #[serde(default)]
    pub pearson_p: Option<f64>,
    /// Spearman's ρ (average ranks for ties).
    pub spearman: Option<f64>,
    /// Its two-sided p-value (as scipy's `spearmanr`).
    #[serde(default)]
    pub spearman_p: Option<f64>,
}

/// `GET /api/runs/{id}/human-scores`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HumanScores {
    /// Every score the asked scorer gave.
    pub scores: Vec<HumanScore>,
    /// The asked scorer's agreement with the judge per criterion, over what they scored.
    pub agreement: Vec<CriterionAgreement>,
    /// Everyone who scored this run, with how many scores each gave.
    #[serde(default)]
    pub scorers: Vec<(String, usize)>,
    /// Per criterion, the agreement among the people (ICC(3,k)) over the results every one
    /// of them scored.
    #[serde(default)]
    pub consensus: Vec<CriterionConsensus>,
}

/// How several people's scores agree on one criterion (AlchemyBench's experts: ICC(3,k)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CriterionConsensus {
    /// The criterion.
    pub criterion: String,
    /// The people (k) compared: everyone who scored this criterion.
    pub raters: usize,
    /// Results every one of them scored (n).
    pub items: usize,
    /// ICC(3,k) (absent below two people or two common results, or without spread).
    pub icc3k: Option<f64>,
}
