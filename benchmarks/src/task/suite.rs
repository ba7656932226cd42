//! The suite trait, and its type-erased form for registries and run loops.

use std::any::Any;
use std::sync::Arc;

use engine::interrupt::Interrupt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::source::Located;
use super::summary::TableWords;
use super::{Message, VerdictView};

/// Why a task cannot be prepared or scored (the task's fault, not the answer's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{0}")]
pub struct TaskError(pub String);

/// Something scoring needs from outside the pure code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Need {
    /// A judge model's answer to these messages (the judge is the run's configured judge).
    Judge {
        /// What the judge is asked.
        messages: Vec<Message>,
    },
    /// A program run in the server's sandbox (model-written or verification code).
    Run {
        /// Which Python it needs.
        env: RunEnv,
        /// What to run.
        program: RunProgram,
    },
}

/// The Python a [`Need::Run`] needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnv {
    /// The standard library only (the embedded `wasm` sandbox).
    Python,
    /// CPython 3.11 with MatTools' pinned pymatgen stack (the `bwrap` sandbox).
    Pymatgen,
}

/// A program for the sandbox, as a suite describes it (the server maps it to its sandbox).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProgram {
    /// Python source, run as `main.py` in a fresh scratch directory.
    pub code: String,
    /// Text input files: (relative path, contents).
    #[serde(default)]
    pub files: Vec<(String, String)>,
    /// Read-only data shown in the scratch directory: (relative path, data set name).
    #[serde(default)]
    pub data_links: Vec<(String, String)>,
    /// Wall-clock seconds allowed.
    pub wall_secs: u64,
    /// Memory allowed (MiB).
    pub memory_mb: u64,
    /// Bytes of stdout kept (0: the server's configured cap).
    #[serde(default)]
    pub output_bytes: u64,
}

/// What a [`Need::Run`] gave back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// stdout (capped by the sandbox).
    pub stdout: String,
    /// stderr (capped by the sandbox).
    pub stderr: String,
    /// Exit status; `None` when the program was stopped.
    pub exit_code: Option<i32>,
    /// The limit that stopped the program (`timed_out`, `memory_exceeded`, …), if any.
    pub stopped_by: Option<String>,
    /// Wall-clock time of the run (ms).
    pub wall_ms: u64,
}

/// The answer to a [`Need`], in the same position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NeedAnswer {
    /// The judge's text.
    Judge {
        /// The answer.
        text: String,
    },
    /// The program ran (whatever its exit status).
    Ran {
        /// What it gave back.
        result: RunResult,
    },
    /// The need could not be met (the judge failed): why.
    Failed {
        /// What went wrong.
        error: String,
    },
}

/// What a results table needs of one scored answer, whatever the suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Outcome {
    /// The suite's label, by name (`Success`, `StructureMismatch`, …).
    pub label: String,
    /// Whether the answer counts as a success.
    pub success: bool,
    /// The suite's headline number for a success (AtomWorld: max_dist), if any.
    pub metric: Option<f64>,
    /// What went wrong, in a sentence a person can act on (a judge that could not score and
    /// why, the slots that differ), where the label alone does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A task made ready for a model: its messages, its group and what scoring needs.
#[derive(Clone, Debug)]
pub struct Prepared<S> {
    /// The messages a model receives, in order.
    pub messages: Vec<Message>,
    /// What the task is tabled under (AtomWorld: the action).
    pub group: String,
    /// What [`Suite::score`] needs of the task (the parsed reference).
    pub state: S,
}

/// A benchmark (or probe): how its tasks become messages and how answers are scored.
pub trait Suite: Send + Sync + 'static {
    /// The suite's name in files, URLs and the CLI (`atomworld`).
    const NAME: &'static str;
    /// The task as files and the API carry it.
    type Task: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// What preparing a task works out once (the parsed reference).
    type State: Send + Sync + 'static;
    /// The suite's own verdict.
    type Verdict: Serialize + DeserializeOwned + Send + 'static;

    /// The task's key: unique across a whole upstream release (every file of it), since
    /// results, resumption and the page find a task by it. Where an upstream id repeats
    /// across files (OmniMatBench's restart in every subfield), the key qualifies it.
    fn key(task: &Self::Task) -> String;

    /// The tasks of one file of the suite's upstream release (`name`: the file's name, for
    /// suites whose layout depends on it), each with its place in the file. By default, JSON
    /// lines of tasks.
    fn read_tasks(&self, _name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        super::source::json_lines(text)
    }

    /// The folder of an upstream release that holds this suite's files (OmniMatBench's
    /// `cal` and `qa`), when the release keeps several suites' files apart.
    fn release_folder(&self) -> Option<&'static str> {
        None
    }

    /// The suite's seeded task generator asked for `per_group` tasks of each group from
    /// `seed` (the CLI's `--seed` and `--per-action`, the API's `seed` and `per_action`):
    /// its parameters as JSON, stored with the run, and the most tasks they draw. `None`
    /// (the default): the suite has no generator and runs are given its tasks.
    fn generator(&self, _seed: u64, _per_group: usize) -> Option<Generator> {
        None
    }

    /// How many of the configured scoring budgets (`[limits] match_budget_secs`) scoring an
    /// answer to this task may take: 1 by default; more for tasks whose scoring grows with
    /// their size (AtomWorld: thousands of sites), so a right answer to a large task is not
    /// labelled a timeout. Read from the task (its reference), never from an answer.
    fn scoring_scale(&self, _state: &Self::State) -> u32 {
        1
    }

    /// Variants of the generated task set that a run may choose instead of the default, for
    /// an ablation (AtomWorld: the prompt's wording); none by default.
    fn variants(&self) -> &'static [Variant] {
        &[]
    }

    /// [`generator`](Self::generator) for the variant `name`, one of
    /// [`variants`](Self::variants).
    fn variant_generator(&self, _seed: u64, _per_group: usize, _name: &str) -> Option<Generator> {
        None
    }

    /// The tasks that the generator draws with `params` (a [`Generator::params`]), in order.
    fn generate(&self, _params: &serde_json::Value) -> Result<Vec<Self::Task>, TaskError> {
        Err(TaskError(format!(
            "suite {} has no task generator",
            Self::NAME
        )))
    }

    /// The generated tasks as `atomworld gen` writes them, one JSON object a line, and a
    /// line on how they were drawn. By default the tasks as [`generate`](Self::generate)
    /// makes them; a suite may add what its tools read beside (AtomWorld: the structure's
    /// name, the action's parameters).
    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        let tasks = self.generate(params)?;
        let lines = tasks
            .iter()
            .map(|t| serde_json::to_value(t).map_err(|e| TaskError(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        let report = format!("{} tasks", lines.len());
        Ok((lines, report))
    }

    /// [`generated_lines`](Self::generated_lines) drawn from a structure pool of the user's
    /// (`atomworld gen --pool`): its files as (name, text). By default the suite draws from
    /// no pool.
    fn generated_lines_from_pool(
        &self,
        _params: &serde_json::Value,
        _files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        Err(TaskError(format!(
            "suite {} draws its tasks from no structure pool",
            Self::NAME
        )))
    }

    /// The agents that may answer the suite's tasks instead of one model call, by name.
    fn agents(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether a run answered by `agent`, with `references` retrieved references per task,
    /// retrieves by embeddings when an embeddings model is chosen.
    fn retrieves(&self, _agent: Option<&str>, _references: usize) -> bool {
        false
    }

    /// The sandbox environment that scoring runs code in, if any (MatTools: the pinned
    /// pymatgen stack).
    fn scoring_env(&self) -> Option<RunEnv> {
        None
    }

    /// Whether the suite's tasks may name images (`image_url`) that the server reads and
    /// sends after the question.
    fn has_images(&self) -> bool {
        false
    }

    /// Whether answers are code (MatTools' tool-usage tasks): the page colours them as Python.
    fn code_answers(&self) -> bool {
        false
    }

    /// Whether people score its answers next to the judge (AlchemyBench's criteria).
    fn human_scored(&self) -> bool {
        false
    }

    /// The failure labels in the order of the suite's result table, each with its short
    /// column heading.
    fn columns(&self) -> &'static [(&'static str, &'static str)];

    /// What the results table calls its rows and its metric.
    fn table_words(&self) -> TableWords {
        TableWords::default()
    }

    /// The temperatures the suite's paper used, for models that set none of their own.
    fn paper_temperatures(&self) -> PaperTemperatures {
        PaperTemperatures::default()
    }

    /// Messages, group and scoring state of `task`.
    fn prepare(&self, task: &Self::Task) -> Result<Prepared<Self::State>, TaskError>;

    /// The group and verdict of a task that no one can be asked here, which a runner stores
    /// without asking (OmniMatBench: an item whose images are unavailable, never sent
    /// text-only). `None` (the default): ask. Scoring a given answer (`eval`,
    /// `POST /api/score`) does not look at this.
    fn unanswerable(&self, _state: &Self::State) -> Option<Unasked<Self::Verdict>> {
        None
    }

    /// What scoring `response` needs from outside (nothing, for most suites).
    fn needs(&self, _state: &Self::State, _response: &str) -> Vec<Need> {
        Vec::new()
    }

    /// The messages of the one retry a runner makes when `response` misses the required
    /// format (OmniMatBench: no `<answer>`), or `None` (the default: no retry).
    fn retry_messages(&self, _messages: &[Message], _response: &str) -> Option<Vec<Message>> {
        None
    }

    /// Needs that depend on the answers to earlier ones (`answered`, in order): asked again
    /// after each stage is met until it returns nothing (at most [`MAX_NEED_STAGES`] times).
    /// MatTools verifies a program's result only once the program has run.
    fn more_needs(
        &self,
        _state: &Self::State,
        _response: &str,
        _answered: &[NeedAnswer],
    ) -> Vec<Need> {
        Vec::new()
    }

    /// The verdict on `response`, given the answers to [`needs`](Self::needs). A raised
    /// `interrupt` ends long work with the suite's own "not scored" verdict.
    fn score(
        &self,
        state: &Self::State,
        response: &str,
        answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> Self::Verdict;

    /// What a table needs of `verdict`.
    fn outcome(verdict: &Self::Verdict) -> Outcome;

    /// What a page shows of `verdict` beyond its label and [`Outcome::why`] (by default,
    /// nothing: the label says it).
    fn view(_verdict: &Self::Verdict) -> VerdictView {
        VerdictView::default()
    }

    /// The suite's own headline numbers over a run's verdicts (with their groups), beyond
    /// the results table: MatTools' runnable and success rates, OmniMatBench's slot accuracy
    /// and macro-F1, AlchemyBench's per-criterion means. `None` (the default): the table says
    /// it all.
    fn headline(&self, _rows: &[(&str, &Self::Verdict)]) -> Option<Headline> {
        None
    }

    /// The paper's tables over the headline's numbers (by default none beyond the report's
    /// rows of every headline number).
    fn layouts(&self) -> &'static [Layout] {
        &[]
    }

    /// The verdict as `atomworld eval` writes it on each line (by default, whole).
    fn eval_verdict(verdict: &Self::Verdict) -> serde_json::Value {
        serde_json::to_value(verdict).unwrap_or(serde_json::Value::Null)
    }

    /// The baselines of the suite: answerers that need no model (AtomWorld: `reference`,
    /// `copy-input`), by name.
    fn baselines(&self) -> &'static [&'static str] {
        &[]
    }

    /// Baseline `name`'s answer to a task, if the suite has that baseline.
    fn baseline_answer(&self, _name: &str, _state: &Self::State) -> Option<String> {
        None
    }
}

/// The sampling temperatures of a suite's paper ([`Suite::paper_temperatures`]): a run
/// applies them to models whose configuration sets no temperature, so the paper's setting
/// needs no second model entry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PaperTemperatures {
    /// The answering model's.
    pub answer: Option<f64>,
    /// The judge's.
    pub judge: Option<f64>,
}

/// A suite's seeded generator, asked for a task set ([`Suite::generator`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Generator {
    /// The generator's parameters (AtomWorld: a
    /// [`TaskSetSpec`](crate::atomworld::generator::TaskSetSpec)), as stored with a run.
    pub params: serde_json::Value,
    /// The most tasks they draw (a generator may leave some draws out).
    pub at_most: usize,
}

/// A variant of a suite's generated task set ([`Suite::variants`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Its name on the command line and in the API (`newest`).
    pub name: &'static str,
    /// The run's condition in a report's column ("Table 1 wording").
    pub condition: &'static str,
}

/// A task no one can be asked here ([`Suite::unanswerable`]): where it is tabled, why, and
/// the verdict stored for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Unasked<V> {
    /// The group it is tabled under instead of its own ("images unavailable").
    pub group: String,
    /// Why it cannot be asked, in a sentence.
    pub why: String,
    /// The verdict stored for it.
    pub verdict: V,
}

/// The most stages of [`Suite::more_needs`] a scorer meets.
pub const MAX_NEED_STAGES: usize = 4;

/// A suite's headline numbers: for people (`text`) and for files (`json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// Labelled lines.
    pub text: String,
    /// The same numbers as JSON.
    pub json: serde_json::Value,
}

/// A Markdown pipe table: its header and rows.
pub type PipeTable = (Vec<String>, Vec<Vec<String>>);

/// A headline (or any text) that opens with a Markdown pipe table (a header row, a `|---|`
/// rule, then rows of as many cells): the table, and the text after it (labelled lines, or
/// nothing), so a page can show a table rather than the Markdown. `None` when the text does
/// not open with such a table.
pub fn pipe_table(text: &str) -> Option<(PipeTable, String)> {
    let cells = |line: &str| -> Option<Vec<String>> {
        let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
        Some(inner.split('|').map(|c| c.trim().to_string()).collect())
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    let header = cells(lines.next()?)?;
    let rule = cells(lines.next()?)?;
    let is_rule = |c: &String| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':'));
    if rule.len() != header.len() || !rule.iter().all(is_rule) {
        return None;
    }
    let mut rows = Vec::new();
    while let Some(row) = lines.peek().and_then(|l| cells(l)) {
        if row.len() != header.len() {
            return None;
        }
        rows.push(row);
        lines.next();
    }
    let rest: Vec<&str> = lines.collect();
    Some(((header, rows), rest.join("\n")))
}

/// A prepared task of any suite.
#[derive(Clone)]
pub struct PreparedTask {
    /// The task's key ([`Suite::key`]).
    pub id: String,
    /// The suite's name.
    pub suite: &'static str,
    /// The messages a model receives.
    pub messages: Vec<Message>,
    /// The group it is tabled under.
    pub group: String,
    /// How many of the configured scoring budgets scoring an answer may take
    /// ([`Suite::scoring_scale`]).
    pub scoring_scale: u32,
    state: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PreparedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedTask")
            .field("id", &self.id)
            .field("suite", &self.suite)
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

/// A scored answer of any suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    /// What tables need.
    pub outcome: Outcome,
    /// The suite's own verdict, as JSON.
    pub verdict: serde_json::Value,
    /// What a page shows of it ([`Suite::view`]).
    pub view: VerdictView,
    /// The verdict as `atomworld eval` writes it ([`Suite::eval_verdict`]).
    pub compact: serde_json::Value,
}

/// [`Suite`] with its types erased: tasks and verdicts as JSON. What registries, the run
/// loop and `atomworld eval` hold. Implemented for every [`Suite`].
pub trait AnySuite: Send + Sync {
    /// The suite's name.
    fn name(&self) -> &'static str;
    /// Failure labels and their short headings, in table order.
    fn columns(&self) -> &'static [(&'static str, &'static str)];
    /// See [`Suite::table_words`].
    fn table_words(&self) -> TableWords;
    /// See [`Suite::paper_temperatures`].
    fn paper_temperatures(&self) -> PaperTemperatures;
    /// See [`Suite::generator`].
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator>;
    /// See [`Suite::variants`].
    fn variants(&self) -> &'static [Variant];
    /// The generator of variant `variant` (none: the default); an error names the variants
    /// there are.
    fn generator_for(
        &self,
        seed: u64,
        per_group: usize,
        variant: Option<&str>,
    ) -> Result<Option<Generator>, TaskError>;
    /// Whether the suite has a generator.
    fn generates(&self) -> bool {
        self.generator(0, 1).is_some()
    }
    /// The tasks drawn with `params`, as the suite's JSON (see [`Suite::generate`]).
    fn generate(&self, params: &serde_json::Value) -> Result<Vec<serde_json::Value>, TaskError>;
    /// See [`Suite::generated_lines`].
    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError>;
    /// See [`Suite::generated_lines_from_pool`].
    fn generated_lines_from_pool(
        &self,
        params: &serde_json::Value,
        files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError>;
    /// See [`Suite::agents`].
    fn agents(&self) -> &'static [&'static str];
    /// See [`Suite::retrieves`].
    fn retrieves(&self, agent: Option<&str>, references: usize) -> bool;
    /// See [`Suite::scoring_env`].
    fn scoring_env(&self) -> Option<RunEnv>;
    /// See [`Suite::has_images`].
    fn has_images(&self) -> bool;
    /// See [`Suite::code_answers`].
    fn code_answers(&self) -> bool;
    /// See [`Suite::human_scored`].
    fn human_scored(&self) -> bool;
    /// The tasks of one file (see [`Suite::read_tasks`]).
    fn read_tasks(&self, name: &str, text: &str) -> Result<Vec<Located>, TaskError>;
    /// The release's folder of the suite's files (see [`Suite::release_folder`]).
    fn release_folder(&self) -> Option<&'static str>;
    /// The key of a task given as JSON ([`Suite::key`]), or why it is not a task.
    fn key_of(&self, task: &serde_json::Value) -> Result<String, TaskError>;
    /// Prepare a task given as JSON.
    fn prepare_json(&self, task: &serde_json::Value) -> Result<PreparedTask, TaskError>;
    /// The group and verdict of a task no one can be asked here (see
    /// [`Suite::unanswerable`]).
    fn unanswerable(&self, task: &PreparedTask) -> Option<Unasked<Scored>>;
    /// What scoring `response` to `task` needs from outside.
    fn needs(&self, task: &PreparedTask, response: &str) -> Result<Vec<Need>, TaskError>;
    /// The one format retry (see [`Suite::retry_messages`]).
    fn retry_messages(&self, task: &PreparedTask, response: &str) -> Option<Vec<Message>>;
    /// What it needs once `answered` (see [`Suite::more_needs`]).
    fn more_needs(
        &self,
        task: &PreparedTask,
        response: &str,
        answered: &[NeedAnswer],
    ) -> Result<Vec<Need>, TaskError>;
    /// Score `response` to `task`.
    fn score(
        &self,
        task: &PreparedTask,
        response: &str,
        answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> Result<Scored, TaskError>;
    /// The suite's headline numbers over verdicts given as JSON with their groups (verdicts
    /// that do not read as the suite's are left out).
    fn headline(&self, rows: &[(String, serde_json::Value)]) -> Option<Headline>;
    /// See [`Suite::layouts`].
    fn layouts(&self) -> &'static [Layout];
    /// The suite's baselines, by name.
    fn baselines(&self) -> &'static [&'static str];
    /// Baseline `name`'s answer to `task`.
    fn baseline_answer(&self, name: &str, task: &PreparedTask) -> Option<String>;
}

impl<S: Suite> AnySuite for S {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        Suite::columns(self)
    }

    fn table_words(&self) -> TableWords {
        Suite::table_words(self)
    }

    fn paper_temperatures(&self) -> PaperTemperatures {
        Suite::paper_temperatures(self)
    }

    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        Suite::generator(self, seed, per_group)
    }

    fn variants(&self) -> &'static [Variant] {
        Suite::variants(self)
    }

    fn generator_for(
        &self,
        seed: u64,
        per_group: usize,
        variant: Option<&str>,
    ) -> Result<Option<Generator>, TaskError> {
        let Some(name) = variant else {
            return Ok(Suite::generator(self, seed, per_group));
        };
        let known = Suite::variants(self);
        if !known.iter().any(|v| v.name == name) {
            let names: Vec<&str> = known.iter().map(|v| v.name).collect();
            return Err(TaskError(if names.is_empty() {
                format!(
                    "suite {} has no task-set variants (asked for '{name}')",
                    S::NAME
                )
            } else {
                format!(
                    "suite {} has no variant '{name}' (variants: {})",
                    S::NAME,
                    names.join(", ")
                )
            }));
        }
        Ok(Suite::variant_generator(self, seed, per_group, name))
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<serde_json::Value>, TaskError> {
        Suite::generate(self, params)?
            .iter()
            .map(|t| serde_json::to_value(t).map_err(|e| TaskError(e.to_string())))
            .collect()
    }

    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        Suite::generated_lines(self, params)
    }

    fn generated_lines_from_pool(
        &self,
        params: &serde_json::Value,
        files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        Suite::generated_lines_from_pool(self, params, files)
    }

    fn agents(&self) -> &'static [&'static str] {
        Suite::agents(self)
    }

    fn retrieves(&self, agent: Option<&str>, references: usize) -> bool {
        Suite::retrieves(self, agent, references)
    }

    fn scoring_env(&self) -> Option<RunEnv> {
        Suite::scoring_env(self)
    }

    fn has_images(&self) -> bool {
        Suite::has_images(self)
    }

    fn code_answers(&self) -> bool {
        Suite::code_answers(self)
    }

    fn human_scored(&self) -> bool {
        Suite::human_scored(self)
    }

    fn read_tasks(&self, name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        Suite::read_tasks(self, name, text)
    }

    fn release_folder(&self) -> Option<&'static str> {
        Suite::release_folder(self)
    }

    fn key_of(&self, task: &serde_json::Value) -> Result<String, TaskError> {
        Ok(S::key(&typed::<S>(task)?))
    }

    fn prepare_json(&self, task: &serde_json::Value) -> Result<PreparedTask, TaskError> {
        let task = typed::<S>(task)?;
        let p = self.prepare(&task)?;
        Ok(PreparedTask {
            id: S::key(&task),
            suite: S::NAME,
            messages: p.messages,
            group: p.group,
            scoring_scale: self.scoring_scale(&p.state).max(1),
            state: Arc::new(p.state),
        })
    }

    fn unanswerable(&self, task: &PreparedTask) -> Option<Unasked<Scored>> {
        let u = Suite::unanswerable(self, state_of::<S>(task).ok()?)?;
        let verdict = serde_json::to_value(&u.verdict).ok()?;
        Some(Unasked {
            group: u.group,
            why: u.why,
            verdict: Scored {
                outcome: S::outcome(&u.verdict),
                view: S::view(&u.verdict),
                compact: S::eval_verdict(&u.verdict),
                verdict,
            },
        })
    }

    fn needs(&self, task: &PreparedTask, response: &str) -> Result<Vec<Need>, TaskError> {
        Ok(Suite::needs(self, state_of::<S>(task)?, response))
    }

    fn retry_messages(&self, task: &PreparedTask, response: &str) -> Option<Vec<Message>> {
        Suite::retry_messages(self, &task.messages, response)
    }

    fn more_needs(
        &self,
        task: &PreparedTask,
        response: &str,
        answered: &[NeedAnswer],
    ) -> Result<Vec<Need>, TaskError> {
        Ok(Suite::more_needs(
            self,
            state_of::<S>(task)?,
            response,
            answered,
        ))
    }

    fn score(
        &self,
        task: &PreparedTask,
        response: &str,
        answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> Result<Scored, TaskError> {
        let v = Suite::score(self, state_of::<S>(task)?, response, answers, interrupt);
        let verdict = serde_json::to_value(&v).map_err(|e| TaskError(e.to_string()))?;
        Ok(Scored {
            outcome: S::outcome(&v),
            view: S::view(&v),
            compact: S::eval_verdict(&v),
            verdict,
        })
    }

    fn headline(&self, rows: &[(String, serde_json::Value)]) -> Option<Headline> {
        let typed: Vec<(&str, S::Verdict)> = rows
            .iter()
            .filter_map(|(g, v)| Some((g.as_str(), S::Verdict::deserialize(v).ok()?)))
            .collect();
        let refs: Vec<(&str, &S::Verdict)> = typed.iter().map(|(g, v)| (*g, v)).collect();
        Suite::headline(self, &refs)
    }

    fn layouts(&self) -> &'static [Layout] {
        Suite::layouts(self)
    }

    fn baselines(&self) -> &'static [&'static str] {
        Suite::baselines(self)
    }

    fn baseline_answer(&self, name: &str, task: &PreparedTask) -> Option<String> {
        Suite::baseline_answer(self, name, state_of::<S>(task).ok()?)
    }
}

fn typed<S: Suite>(task: &serde_json::Value) -> Result<S::Task, TaskError> {
    S::Task::deserialize(task).map_err(|e| TaskError(format!("not a {} task: {e}", S::NAME)))
}

fn state_of<S: Suite>(task: &PreparedTask) -> Result<&S::State, TaskError> {
    task.state.downcast_ref::<S::State>().ok_or_else(|| {
        TaskError(format!(
            "task {} was prepared by suite {}, not {}",
            task.id,
            task.suite,
            S::NAME
        ))
    })
}

#[cfg(test)]
mod pipe_table_tests {
    use super::pipe_table;

    #[test]
    fn a_markdown_table_is_read_and_other_text_is_not() {
        let ((header, rows), rest) = pipe_table(
            "| criterion | all |\n|---|---:|\n| overall | 3.5 ± 0.2 |\n| items | 12 |\n",
        )
        .unwrap();
        assert_eq!(header, ["criterion", "all"]);
        assert_eq!(rows, [["overall", "3.5 ± 0.2"], ["items", "12"]]);
        assert_eq!(rest, "");
        assert_eq!(pipe_table("success 3/10\nstricter than chemistry: 0"), None);
        // A row of another width, or a missing rule, is not a table.
        assert_eq!(pipe_table("| a | b |\n|---|---|\n| 1 |\n"), None);
        assert_eq!(pipe_table("| a | b |\n| 1 | 2 |\n"), None);
        // Lines after the table are kept as text.
        let ((_, rows), rest) =
            pipe_table("| a | b |\n|---|---|\n| 1 | 2 |\npooled: 0.5\nitems: 3\n").unwrap();
        assert_eq!(rows, [["1", "2"]]);
        assert_eq!(rest, "pooled: 0.5\nitems: 3");
    }
}
