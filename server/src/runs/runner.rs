//! Executing a run: prepare its tasks, skip what is already stored, answer and score the rest
//! with bounded concurrency, and store each result the moment it is known.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchmarks::task::{AnySuite, PreparedTask};
use tokio::sync::{Mutex, Semaphore};
use wire::{Progress, ResultRow, ResultVerdict, RunSpec, RunStatus};

use super::Answerer;
use crate::cpu::CpuPool;
use crate::execution::CodeRunner;
use crate::llm::spend::Budget;
use crate::llm::{Completion, Gateway, LlmError};
use crate::storage::{Storage, StorageError};
use crate::suites::{AgentError, AgentReply, AgentTask, Catalogue, SuiteHost};

/// Why a run could not be executed (errors of single tasks are stored, not raised).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No such run.
    #[error("no run with id {0}")]
    UnknownRun(String),
    /// The suite is not in the registry (or cannot run this task source).
    #[error("{0}")]
    UnknownSuite(String),
    /// The given tasks cannot make a run (two share a key, or one is not the suite's).
    #[error("{0}")]
    BadTasks(String),
    /// The model is neither a baseline nor configured.
    #[error("no model named '{0}' is configured (or a baseline of the suite)")]
    UnknownModel(String),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// How a run ended (or stands, after each stored result).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutcome {
    /// Counts so far.
    pub progress: Progress,
    /// Set when a spend cap stopped the run.
    pub stopped: Option<String>,
}

/// Why a task got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum AnswerError {
    /// The model call failed.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The task cannot be answered this way.
    #[error("{0}")]
    Task(String),
}

impl From<AgentError> for AnswerError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::Llm(e) => AnswerError::Llm(e),
            AgentError::Task(m) => AnswerError::Task(m),
        }
    }
}

/// An agent's answer as one completion (what is scored, and what all its calls cost); its
/// rounds go to `transcript`, stored with the result.
fn agent_completion(a: AgentReply, transcript: &mut Option<serde_json::Value>) -> Completion {
    *transcript = serde_json::to_value(&a.rounds).ok();
    Completion {
        text: a.response,
        input_tokens: a.input_tokens,
        output_tokens: a.output_tokens,
        cost_usd: a.cost_usd,
        cached: a.cached,
        attempts: 1,
    }
}

/// Answer one task sample and score it; the second value is true when a spend cap refused
/// the call. Without an agent a model answers in one call (with the suite's format retry);
/// with one, the suite's host runs it.
#[allow(clippy::too_many_arguments)] // the run's context, passed through as is
async fn run_one(
    suite: &Arc<dyn AnySuite>,
    host: &dyn SuiteHost,
    task: &PreparedTask,
    task_json: &serde_json::Value,
    sample: u32,
    answerer: &Answerer,
    agent: Option<&str>,
    embeddings: Option<&str>,
    gateway: &Gateway,
    code: &CodeRunner,
    budget: Option<&Arc<Budget>>,
    run_id: &str,
) -> (ResultRow, bool) {
    let prompt = benchmarks::task::prompt_text(&task.messages);
    if let Some(u) = suite.unanswerable(task) {
        // Asked of no one (an OmniMatBench item whose images are unavailable): its verdict
        // says why, under its own group, and no call is made.
        return (unasked_row(task, sample, prompt, u), false);
    }
    let started = Instant::now();
    let mut transcript = None;
    let answer: Result<Completion, AnswerError> = match (answerer, agent) {
        (Answerer::Baseline(name), _) => suite
            .baseline_answer(name, task)
            .map(baseline)
            .ok_or_else(|| LlmError::UnknownModel((*name).to_string()).into()),
        (Answerer::Model(name), Some(agent)) => {
            let fx = crate::agents::Effects {
                gateway,
                budget,
                code,
                embeddings,
            };
            let asked = AgentTask {
                prepared: task,
                json: task_json,
                sample,
            };
            let answered = match host.answer_with(agent, name, asked, &fx) {
                Some(answering) => answering.await.map_err(AnswerError::from),
                None => Err(AnswerError::Task(format!(
                    "suite {} has no agent named '{agent}'",
                    suite.name()
                ))),
            };
            answered.map(|a| agent_completion(a, &mut transcript))
        }
        (Answerer::Model(name), None) => {
            match gateway
                .complete_within(name, &task.messages, sample, budget)
                .await
            {
                // The suite's one format retry (OmniMatBench: a reply without <answer>).
                Ok(first) => match suite.retry_messages(task, &first.text) {
                    None => Ok(first),
                    Some(again) => gateway
                        .complete_within(name, &again, sample, budget)
                        .await
                        .map(|second| retried(&first, second))
                        .map_err(AnswerError::from),
                },
                Err(e) => Err(AnswerError::from(e)),
            }
        }
    };
    let capped = matches!(answer, Err(AnswerError::Llm(LlmError::SpendCap(_))));
    let latency_ms = started.elapsed().as_millis() as u64;
    let answered = Answered {
        prompt,
        answer,
        latency_ms,
        transcript,
    };
    let row = row_of(suite, task, sample, answered, gateway, code, run_id).await;
    (row, capped)
}

/// A task sample's answer (or why it has none), as it is stored.
pub(super) struct Answered {
    pub prompt: String,
    pub answer: Result<Completion, AnswerError>,
    pub latency_ms: u64,
    pub transcript: Option<serde_json::Value>,
}

/// The result row of a task sample: its answer scored (the error, when it has none).
pub(super) async fn row_of(
    suite: &Arc<dyn AnySuite>,
    task: &PreparedTask,
    sample: u32,
    answered: Answered,
    gateway: &Gateway,
    code: &CodeRunner,
    run_id: &str,
) -> ResultRow {
    let Answered {
        prompt,
        answer,
        latency_ms,
        transcript,
    } = answered;
    let mut row = ResultRow {
        task_id: task.id.clone(),
        sample,
        group: task.group.clone(),
        task: None,
        prompt,
        response: None,
        verdict: None,
        label: None,
        outcome: None,
        error: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        latency_ms,
        cached: false,
        transcript,
    };
    match answer {
        Err(e) => row.error = Some(e.to_string()),
        Ok(c) => {
            match score(suite, task, &c.text, gateway, code, run_id).await {
                Ok(scored) => {
                    row.label = Some(scored.outcome.label.clone());
                    row.verdict = serde_json::from_value::<ResultVerdict>(scored.verdict).ok();
                    row.outcome = Some(scored.outcome);
                }
                Err(e) => row.error = Some(e),
            }
            row.response = Some(c.text);
            row.input_tokens = c.input_tokens;
            row.output_tokens = c.output_tokens;
            row.cost_usd = c.cost_usd;
            row.cached = c.cached;
        }
    }
    row
}

/// The answer of a format retry: the second reply, what both calls cost.
pub(super) fn retried(first: &Completion, second: Completion) -> Completion {
    Completion {
        input_tokens: first.input_tokens + second.input_tokens,
        output_tokens: first.output_tokens + second.output_tokens,
        cost_usd: first.cost_usd + second.cost_usd,
        cached: first.cached && second.cached,
        attempts: first.attempts + second.attempts,
        text: second.text,
    }
}

/// The stored result of a task no one was asked ([`AnySuite::unanswerable`]).
pub(super) fn unasked_row(
    task: &PreparedTask,
    sample: u32,
    prompt: String,
    u: benchmarks::task::Unasked<benchmarks::task::Scored>,
) -> ResultRow {
    ResultRow {
        task_id: task.id.clone(),
        sample,
        group: u.group,
        task: None,
        prompt,
        response: None,
        verdict: serde_json::from_value::<ResultVerdict>(u.verdict.verdict).ok(),
        label: Some(u.verdict.outcome.label.clone()),
        outcome: Some(u.verdict.outcome),
        error: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        latency_ms: 0,
        cached: false,
        transcript: None,
    }
}

/// Meet the suite's needs (judge calls through the gateway, programs in the sandbox), then
/// score on the CPU pool within the configured matching budget (times the task's scale).
async fn score(
    suite: &Arc<dyn AnySuite>,
    task: &PreparedTask,
    response: &str,
    gateway: &Gateway,
    code: &CodeRunner,
    run_id: &str,
) -> Result<benchmarks::task::Scored, String> {
    let answers =
        super::needs::meet_all(suite.as_ref(), task, response, Some(gateway), code).await?;
    let budget =
        Duration::from_secs(gateway.config().limits.match_budget_secs) * task.scoring_scale;
    let (suite, task, response) = (suite.clone(), task.clone(), response.to_string());
    // A run's scorings share the pool fairly with everyone else's work: one run never holds
    // every slot; its own scorings always wait their turn.
    let name = format!("run:{run_id}");
    let client = crate::cpu::Client {
        name: &name,
        max_waiting: usize::MAX,
    };
    CpuPool::global()
        .run_within_for(Some(client), budget, move |interrupt| {
            suite.score(&task, &response, &answers, interrupt)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

fn baseline(text: String) -> Completion {
    Completion {
        text,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        cached: false,
        attempts: 0,
    }
}

/// Store `row` of run `run_id` and count it in `state` (a spend cap that refused its call
/// stops the run), then tell `progress`.
pub(super) async fn record(
    storage: &Storage,
    run_id: &str,
    row: &ResultRow,
    capped: bool,
    state: &Mutex<RunOutcome>,
    progress: &(dyn Fn(&RunOutcome) + Send + Sync),
) {
    let stored = storage.put_result(run_id, row);
    if let Err(e) = &stored {
        tracing::error!("run {run_id}: storing {} failed: {e}", row.task_id);
    }
    let mut s = state.lock().await;
    if capped && s.stopped.is_none() {
        s.stopped = row.error.clone();
    }
    if stored.is_ok() && row.verdict.is_some() {
        s.progress.done += 1;
    }
    if row.outcome.as_ref().is_some_and(|o| o.success) {
        s.progress.successes += 1;
    }
    s.progress.tokens += row.input_tokens + row.output_tokens;
    s.progress.cost_usd += row.cost_usd;
    progress(&s);
}

/// Execute (or resume) run `run_id`, calling `progress` after each stored result.
pub async fn execute(
    storage: &Storage,
    gateway: &Gateway,
    code: &CodeRunner,
    suites: &Catalogue,
    run_id: &str,
    progress: impl Fn(&RunOutcome) + Send + Sync + 'static,
) -> Result<RunOutcome, RunError> {
    execute_until(
        storage,
        gateway,
        code,
        suites,
        run_id,
        progress,
        Default::default(),
    )
    .await
}

/// [`execute`], stopping early once `cancel` is cancelled: no new task starts, the programs
/// of the tasks in flight are stopped in the sandbox (their answers are stored with their
/// cost but without a verdict; model calls in flight finish, as they are paid for), and the
/// run's status becomes `cancelled`; a later call resumes it where it stopped.
pub async fn execute_until(
    storage: &Storage,
    gateway: &Gateway,
    code: &CodeRunner,
    suites: &Catalogue,
    run_id: &str,
    progress: impl Fn(&RunOutcome) + Send + Sync + 'static,
    cancel: sandbox::CancelToken,
) -> Result<RunOutcome, RunError> {
    execute_part(
        storage, gateway, code, suites, run_id, progress, cancel, None,
    )
    .await
}

/// How an instance takes part in a run on a store several instances share: its tasks are
/// cut into slices of [`slice_size`] that the instance executing the run and any other
/// that executes runs claim one at a time (see `storage::slices`).
#[derive(Clone, Debug)]
pub struct Slicing {
    /// The instance's name in the slices' claims.
    pub owner: Arc<str>,
    /// Seconds a claim lasts without renewal (renewed every third).
    pub secs: u64,
    /// A helper only executes slices; the run's status is left to the instance that holds
    /// the run (which waits for every slice to be done).
    pub helper: bool,
}

/// Tasks per slice: enough to keep `concurrency` calls busy between claims.
pub fn slice_size(concurrency: usize) -> usize {
    (concurrency.max(1) * 4).max(16)
}

/// [`execute_until`], over slices when `slicing` is given (not for a batched run: its
/// requests go as one provider batch).
#[allow(clippy::too_many_arguments)]
pub async fn execute_part(
    storage: &Storage,
    gateway: &Gateway,
    code: &CodeRunner,
    suites: &Catalogue,
    run_id: &str,
    progress: impl Fn(&RunOutcome) + Send + Sync + 'static,
    cancel: sandbox::CancelToken,
    slicing: Option<Slicing>,
) -> Result<RunOutcome, RunError> {
    let (spec, _) = storage
        .load_run(run_id)?
        .ok_or_else(|| RunError::UnknownRun(run_id.to_string()))?;
    let suite = super::check_spec(&spec, gateway.config(), &suites.registry)?;
    // The paper's temperature for models that set none (judges get theirs in `needs`).
    let gateway = &gateway.with_default_temperature(suite.paper_temperatures().answer);
    let answerer = Answerer::of(suite.as_ref(), &spec.model);
    let RunSpec {
        tasks: source,
        samples,
        concurrency,
        ..
    } = spec.clone();
    // Generation and preparation are CPU work (matching, parsing): off the async workers.
    // A task that cannot be prepared now (it could when the run was made) is left out; it
    // keeps its place in the list, so every instance cuts the same slices. A helper
    // prepares only the slices it claims.
    let host = suites.hosts.get(suite.name());
    let preparer = Preparer {
        suite: suite.clone(),
        host: host.clone(),
        config: gateway.config().suites.clone(),
    };
    let generating = suite.clone();
    let raw: Vec<serde_json::Value> = CpuPool::global()
        .run(move || super::tasks_of(generating.as_ref(), &source))
        .await
        .unwrap_or_else(|e| Err(RunError::BadTasks(e.to_string())))?;
    let helper = slicing.as_ref().is_some_and(|s| s.helper);
    let (listed, unprepared) = if helper {
        (vec![None; raw.len()], Some(raw))
    } else {
        (preparer.prepare(raw).await?, None)
    };
    let samples = samples.max(1);
    let done: HashSet<(String, u32)> = storage.finished(run_id)?.into_iter().collect();
    let earlier = storage.results(run_id)?;
    let prepared = listed.iter().flatten().count();
    let state = Arc::new(Mutex::new(RunOutcome {
        progress: Progress {
            done: done.len(),
            total: prepared * samples as usize,
            successes: earlier
                .iter()
                .filter(|r| r.table_outcome().is_some_and(|o| o.success))
                .count(),
            tokens: earlier
                .iter()
                .map(|r| r.input_tokens + r.output_tokens)
                .sum(),
            // Preparing the tasks (embeddings) is part of the run's spend.
            cost_usd: storage.preparation_cost(run_id)?
                + earlier.iter().map(|r| r.cost_usd).sum::<f64>(),
            waiting_for_batch: None,
        },
        stopped: None,
    }));
    if !helper {
        storage.set_status(run_id, RunStatus::Running)?;
        progress(&*state.lock().await);
    }
    // Calls reserve their worst case against the run's cap before they are sent; when
    // instances share the run's slices, in the database.
    let budget = match (gateway.config().limits.run_spend_usd, &answerer) {
        (Some(cap), Answerer::Model(_)) => {
            let spent = state.lock().await.progress.cost_usd;
            Some(match &slicing {
                Some(_) => Budget::for_shared_run(
                    cap,
                    storage.clone(),
                    run_id,
                    spent,
                    crate::llm::claim_secs(&gateway.config().limits),
                )?,
                None => Budget::for_run(cap, spent),
            })
        }
        _ => None,
    };
    let tasks = Tasks {
        suite: suite.clone(),
        host,
        answerer: answerer.clone(),
        agent: spec.agent.as_deref().map(Arc::from),
        embeddings: spec.embeddings.as_deref().map(Arc::from),
        gateway: gateway.clone(),
        storage: storage.clone(),
        state: state.clone(),
        progress: Arc::new(progress),
        run_id: run_id.to_string(),
        budget: budget.clone(),
        // The run is one client of the sandboxes: it shares them with people scoring.
        code: code
            .for_client(format!("run:{run_id}"))
            .cancelled_by(cancel.clone()),
        cancel: cancel.clone(),
        limit: Arc::new(Semaphore::new(concurrency.max(1))),
        samples,
    };
    // A batched run sends its requests as one provider batch and waits for it.
    let batched = match (&answerer, spec.batch) {
        (Answerer::Model(model), true) => Some(model.clone()),
        _ => None,
    };
    let mut cancelled = if let Some(model) = &batched {
        let pending = listed
            .into_iter()
            .flatten()
            .flat_map(|(json, task)| {
                (0..samples)
                    .filter(|sample| !done.contains(&(task.id.clone(), *sample)))
                    .map(|sample| super::batch::Pending {
                        json: json.clone(),
                        task: task.clone(),
                        sample,
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let run = super::batch::BatchRun {
            suite: &suite,
            storage,
            gateway,
            code: &tasks.code,
            run_id,
            model,
            concurrency: concurrency.max(1),
            budget: budget.as_ref(),
            cancel: &cancel,
        };
        run.execute(pending, &state, &*tasks.progress).await?
    } else if let Some(slicing) = &slicing {
        let size = slice_size(concurrency);
        let slices = Slices {
            prepared: listed.chunks(size).collect(),
            unprepared: unprepared.as_ref().map(|raw| raw.chunks(size).collect()),
            preparer: &preparer,
        };
        tasks.run_slices(&slices, slicing).await?
    } else {
        tasks.run(listed.iter().flatten(), &done).await
    };
    if helper {
        return Ok(state.lock().await.clone());
    }
    // Cancelled after the last task started: its tasks in flight were stopped all the same.
    cancelled |= cancel.is_cancelled();
    if slicing.is_some() {
        // Other instances stored results of this run too.
        state.lock().await.progress.done = storage.finished(run_id)?.len();
    }
    let final_state = state.lock().await.clone();
    let p = &final_state.progress;
    let status = match &final_state.stopped {
        _ if cancelled && p.done < p.total => RunStatus::Cancelled,
        Some(_) => RunStatus::Stopped,
        None if p.done == p.total => RunStatus::Finished,
        None => RunStatus::Incomplete,
    };
    storage.set_status(run_id, status)?;
    Ok(final_state)
}

/// A listed task as it is asked (its JSON and its prepared form).
type Item = (Arc<serde_json::Value>, Arc<PreparedTask>);

/// How a run's listed tasks are made ready to ask: as its suite's host asks them
/// (OmniMatBench: with its images read), into the asked copy only (results keep the task).
struct Preparer {
    suite: Arc<dyn AnySuite>,
    host: Arc<dyn SuiteHost>,
    config: crate::config::SuitesConfig,
}

impl Preparer {
    /// `tasks` prepared on the CPU pool, in order; `None` where one cannot be prepared.
    async fn prepare(&self, tasks: Vec<serde_json::Value>) -> Result<Vec<Option<Item>>, RunError> {
        let (suite, host, config) = (self.suite.clone(), self.host.clone(), self.config.clone());
        CpuPool::global()
            .run(move || {
                tasks
                    .into_iter()
                    .map(|t| {
                        let asked = host.asked(&t, &config);
                        suite
                            .prepare_json(&asked)
                            .ok()
                            .map(|p| (Arc::new(t), Arc::new(p)))
                    })
                    .collect()
            })
            .await
            .map_err(|e| RunError::BadTasks(e.to_string()))
    }
}

/// A run's tasks cut into slices: prepared (the holder prepares them all first, to count
/// them), or listed only (a helper prepares a slice once it claims it).
struct Slices<'a> {
    prepared: Vec<&'a [Option<Item>]>,
    unprepared: Option<Vec<&'a [serde_json::Value]>>,
    preparer: &'a Preparer,
}

impl Slices<'_> {
    fn len(&self) -> usize {
        self.unprepared
            .as_ref()
            .map_or(self.prepared.len(), Vec::len)
    }

    /// Slice `k`, prepared.
    async fn get(&self, k: usize) -> Result<Vec<Option<Item>>, RunError> {
        match &self.unprepared {
            Some(raw) => {
                let tasks = raw.get(k).map(|t| t.to_vec()).unwrap_or_default();
                self.preparer.prepare(tasks).await
            }
            None => Ok(self.prepared.get(k).map(|t| t.to_vec()).unwrap_or_default()),
        }
    }
}

/// What every task of one execution of a run shares.
struct Tasks {
    suite: Arc<dyn AnySuite>,
    host: Arc<dyn SuiteHost>,
    answerer: Answerer,
    agent: Option<Arc<str>>,
    embeddings: Option<Arc<str>>,
    gateway: Gateway,
    storage: Storage,
    state: Arc<Mutex<RunOutcome>>,
    progress: Arc<dyn Fn(&RunOutcome) + Send + Sync>,
    run_id: String,
    budget: Option<Arc<Budget>>,
    code: CodeRunner,
    cancel: sandbox::CancelToken,
    limit: Arc<Semaphore>,
    samples: u32,
}

impl Tasks {
    /// Answers, scores and stores every sample of `items` not in `done`, at most the run's
    /// concurrency at a time; whether it was cancelled before starting them all (a spend cap
    /// that stops the run stops it too, as `state` says).
    async fn run<'a>(
        &self,
        items: impl IntoIterator<Item = &'a Item>,
        done: &HashSet<(String, u32)>,
    ) -> bool {
        let mut jobs = tokio::task::JoinSet::new();
        let mut cancelled = false;
        'tasks: for (task_json, task) in items {
            for sample in 0..self.samples {
                if done.contains(&(task.id.clone(), sample)) {
                    continue;
                }
                let permit = match self.limit.clone().acquire_owned().await {
                    Ok(p) => p,
                    Err(_) => break 'tasks,
                };
                if self.cancel.is_cancelled() {
                    cancelled = true;
                    break 'tasks;
                }
                if self.state.lock().await.stopped.is_some() {
                    break 'tasks;
                }
                let (suite, host, task, task_json, answerer) = (
                    self.suite.clone(),
                    self.host.clone(),
                    task.clone(),
                    task_json.clone(),
                    self.answerer.clone(),
                );
                let (gateway, storage, state, progress, run_id) = (
                    self.gateway.clone(),
                    self.storage.clone(),
                    self.state.clone(),
                    self.progress.clone(),
                    self.run_id.clone(),
                );
                let (budget, code, agent, embeddings) = (
                    self.budget.clone(),
                    self.code.clone(),
                    self.agent.clone(),
                    self.embeddings.clone(),
                );
                jobs.spawn(async move {
                    let (mut row, capped) = run_one(
                        &suite,
                        host.as_ref(),
                        &task,
                        &task_json,
                        sample,
                        &answerer,
                        agent.as_deref(),
                        embeddings.as_deref(),
                        &gateway,
                        &code,
                        budget.as_ref(),
                        &run_id,
                    )
                    .await;
                    row.task = Some((*task_json).clone());
                    record(&storage, &run_id, &row, capped, &state, &*progress).await;
                    drop(permit);
                });
            }
        }
        while jobs.join_next().await.is_some() {}
        cancelled
    }

    /// Claims slices of `slices` one at a time and runs each; the instance holding the run
    /// then waits until every slice is done (another instance's claim may lapse: it is
    /// claimed again here), a helper stops when none is left to claim. Whether it was
    /// cancelled.
    async fn run_slices(&self, slices: &Slices<'_>, slicing: &Slicing) -> Result<bool, RunError> {
        let (storage, id) = (&self.storage, self.run_id.as_str());
        if !slicing.helper {
            storage.open_slices(id, slices.len())?;
        }
        let renewal = tokio::spawn(renew_slices(
            storage.clone(),
            id.to_string(),
            slicing.clone(),
        ));
        let period = Duration::from_millis(slicing.secs * 1000 / 3);
        let mut cancelled = false;
        let outcome: Result<(), RunError> = loop {
            if self.cancel.is_cancelled() {
                cancelled = true;
                break Ok(());
            }
            if self.state.lock().await.stopped.is_some() {
                break Ok(());
            }
            let claimed = match storage.claim_slice(id, &slicing.owner, slicing.secs) {
                Ok(c) => c,
                Err(e) => break Err(e.into()),
            };
            match claimed {
                Some(k) => {
                    // Fresh: an instance that held this slice before may have stored some.
                    let done: HashSet<(String, u32)> = match storage.finished(id) {
                        Ok(d) => d.into_iter().collect(),
                        Err(e) => break Err(e.into()),
                    };
                    if !slicing.helper {
                        self.state.lock().await.progress.done = done.len();
                    }
                    let items = match slices.get(k).await {
                        Ok(items) => items,
                        Err(e) => break Err(e),
                    };
                    if self.run(items.iter().flatten(), &done).await {
                        cancelled = true;
                        break Ok(());
                    }
                    if self.state.lock().await.stopped.is_some() {
                        break Ok(());
                    }
                    if let Err(e) = storage.finish_slice(id, k) {
                        break Err(e.into());
                    }
                }
                None if slicing.helper => break Ok(()),
                None => match storage.slices_left(id) {
                    Ok(0) => break Ok(()),
                    Ok(_) => {
                        // Other instances hold the rest: wait for them, or for a lapsed claim.
                        tokio::select! {
                            _ = tokio::time::sleep(period) => {}
                            _ = self.cancel.cancelled() => {}
                        }
                    }
                    Err(e) => break Err(e.into()),
                },
            }
        };
        renewal.abort();
        // Slices left unfinished (cancelled, stopped) are another instance's to take.
        storage.release_slices(id, &slicing.owner)?;
        outcome?;
        Ok(cancelled)
    }
}

/// Renews `slicing.owner`'s claims on run `id`'s slices every third of their length.
async fn renew_slices(storage: Storage, id: String, slicing: Slicing) {
    let mut tick = tokio::time::interval(Duration::from_millis(slicing.secs * 1000 / 3));
    tick.tick().await;
    loop {
        tick.tick().await;
        let (s, run, owner, secs) = (
            storage.clone(),
            id.clone(),
            slicing.owner.clone(),
            slicing.secs,
        );
        match tokio::task::spawn_blocking(move || s.renew_slices(&run, &owner, secs)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(run = id, "cannot renew the run's slices: {e}"),
            Err(_) => return,
        }
    }
}
