//! Executing a run: generate its tasks, skip what is already stored, answer and score the rest
//! with bounded concurrency, and store each result the moment it is known.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench::atomworld::evaluate::{evaluate_within, parse_target, Comparison};
use bench::atomworld::generator::generate;
use bench::atomworld::noop::copy_would_pass;
use bench::atomworld::prompt::model_prompt;
use bench::atomworld::{apply, parse_prompt, ActionKind, Semantics};
use engine::cif::{read_cif, write_cif};
use tokio::sync::{Mutex, Semaphore};

use super::store::{self, ResultRow};
use super::{Answerer, RunSpec, TaskSource, TaskTriple};
use crate::cpu::CpuPool;
use crate::llm::spend::Budget;
use crate::llm::{Gateway, LlmError, Message};
use crate::storage::{Storage, StorageError};

/// Why a run could not be executed (errors of single tasks are stored, not raised).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No such run.
    #[error("no run with id {0}")]
    UnknownRun(String),
    /// Only the AtomWorld suite runs so far.
    #[error("suite '{0}' cannot be run yet")]
    UnknownSuite(String),
    /// The model is neither a baseline nor configured.
    #[error("no model named '{0}' is configured (baselines: copy-input, reference)")]
    UnknownModel(String),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Progress of a run, reported after every stored result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Task samples with a stored result (including earlier sessions).
    pub done: usize,
    /// All task samples.
    pub total: usize,
    /// Successes so far.
    pub successes: usize,
    /// Tokens so far.
    pub tokens: u64,
    /// Cost so far (USD).
    pub cost_usd: f64,
    /// Set when a spend cap stopped the run.
    pub stopped: Option<String>,
}

/// One task of a run, whatever its source.
#[derive(Clone, Debug, PartialEq)]
pub struct RunTask {
    /// Identifier, unique within the run.
    pub id: String,
    /// The input CIF the model sees.
    pub input_cif: String,
    /// The action sentence.
    pub prompt: String,
    /// The ground truth.
    pub target_cif: String,
    /// The action's kind.
    pub kind: ActionKind,
}

impl RunTask {
    /// An imported task made runnable: its prompt parsed against its input and its target
    /// computed (reference semantics) when the source has none.
    pub fn from_triple(t: &TaskTriple) -> Result<Self, String> {
        let input = read_cif(&t.input_cif).map_err(|e| format!("input_cif: {e}"))?;
        let action = parse_prompt(&t.action_prompt, &input).map_err(|e| e.to_string())?;
        let target_cif = match &t.target_cif {
            Some(c) => c.clone(),
            None => {
                let done = apply(&input, &action, Semantics::Reference)
                    .map_err(|e| format!("target from prompt: {e}"))?;
                write_cif(&done.structure.wrapped())
            }
        };
        Ok(Self {
            id: t.id.clone(),
            input_cif: t.input_cif.clone(),
            prompt: t.action_prompt.clone(),
            target_cif,
            kind: action.kind(),
        })
    }
}

/// The tasks of a run (CPU work: generation matches for no-op rejection).
pub fn tasks_of(source: &TaskSource) -> Vec<RunTask> {
    match source {
        TaskSource::Generated(spec) => generate(spec, &copy_would_pass)
            .0
            .into_iter()
            .map(|t| RunTask {
                kind: t.action.kind(),
                id: t.id,
                input_cif: t.input_cif,
                prompt: t.prompt,
                target_cif: t.target_cif,
            })
            .collect(),
        // Triples were checked when the run was made; one that fails now is left out.
        TaskSource::Imported(set) => set
            .tasks
            .iter()
            .filter_map(|t| RunTask::from_triple(t).ok())
            .collect(),
    }
}

/// Answer one task sample and score it (on the CPU pool, within the configured matching
/// budget); the
/// second value is true when a spend cap refused the call.
async fn run_one(
    task: &Arc<RunTask>,
    sample: u32,
    answerer: &Answerer,
    gateway: &Gateway,
    budget: Option<&Arc<Budget>>,
) -> (ResultRow, bool) {
    let prompt = model_prompt(&task.input_cif, &task.prompt);
    let started = Instant::now();
    let answer: Result<crate::llm::Completion, LlmError> = match answerer {
        Answerer::CopyInput => Ok(baseline(format!("<cif>\n{}\n</cif>", task.input_cif))),
        Answerer::Reference => Ok(baseline(format!("<cif>\n{}\n</cif>", task.target_cif))),
        Answerer::Model(name) => {
            gateway
                .complete_within(name, &[Message::user(prompt.clone())], sample, budget)
                .await
        }
    };
    let capped = matches!(answer, Err(LlmError::SpendCap(_)));
    let latency_ms = started.elapsed().as_millis() as u64;
    let mut row = ResultRow {
        task_id: task.id.clone(),
        sample,
        action: task.kind.name().to_string(),
        prompt,
        response: None,
        verdict: None,
        label: None,
        error: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        latency_ms,
        cached: false,
    };
    match answer {
        Err(e) => row.error = Some(e.to_string()),
        Ok(c) => {
            let comparison = if task.kind == ActionKind::MoveAll {
                Comparison::Ordered
            } else {
                Comparison::Matcher
            };
            let (t, text) = (task.clone(), c.text.clone());
            let budget = Duration::from_secs(gateway.config().limits.match_budget_secs);
            let scored = CpuPool::global()
                .run_within(budget, move |interrupt| {
                    parse_target(&t.target_cif)
                        .map(|target| evaluate_within(&target, &text, comparison, interrupt))
                })
                .await;
            match scored {
                Ok(Ok(v)) => {
                    row.label = Some(v.label.name().to_string());
                    row.verdict = serde_json::to_value(&v).ok();
                }
                Ok(Err(e)) => row.error = Some(e.to_string()),
                Err(e) => row.error = Some(e.to_string()),
            }
            row.response = Some(c.text);
            row.input_tokens = c.input_tokens;
            row.output_tokens = c.output_tokens;
            row.cost_usd = c.cost_usd;
            row.cached = c.cached;
        }
    }
    (row, capped)
}

fn baseline(text: String) -> crate::llm::Completion {
    crate::llm::Completion {
        text,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        cached: false,
        attempts: 0,
    }
}

/// Execute (or resume) run `run_id`, calling `progress` after each stored result.
pub async fn execute(
    storage: &Storage,
    gateway: &Gateway,
    run_id: &str,
    progress: impl Fn(&Progress) + Send + Sync + 'static,
) -> Result<Progress, RunError> {
    execute_until(storage, gateway, run_id, progress, Default::default()).await
}

/// [`execute`], stopping early once `cancel` is set: no new task starts, the tasks in flight
/// finish and are stored (nothing is lost), and the run's status becomes `cancelled`; a later
/// call resumes it where it stopped.
pub async fn execute_until(
    storage: &Storage,
    gateway: &Gateway,
    run_id: &str,
    progress: impl Fn(&Progress) + Send + Sync + 'static,
    cancel: Arc<AtomicBool>,
) -> Result<Progress, RunError> {
    let (spec, _) = store::load_run(storage, run_id)?
        .ok_or_else(|| RunError::UnknownRun(run_id.to_string()))?;
    super::check_spec(&spec, gateway.config())?;
    let answerer = Answerer::from_name(&spec.model);
    let RunSpec {
        tasks: task_spec,
        samples,
        concurrency,
        ..
    } = spec.clone();
    // Generation is CPU work (matching for no-op rejection): keep it off the async workers.
    let tasks = CpuPool::global()
        .run(move || tasks_of(&task_spec))
        .await
        .unwrap_or_default();
    let done: HashSet<(String, u32)> = store::finished(storage, run_id)?.into_iter().collect();
    let earlier = store::results(storage, run_id)?;
    let state = Arc::new(Mutex::new(Progress {
        done: done.len(),
        total: tasks.len() * samples.max(1) as usize,
        successes: earlier
            .iter()
            .filter(|r| r.label.as_deref() == Some("Success"))
            .count(),
        tokens: earlier
            .iter()
            .map(|r| r.input_tokens + r.output_tokens)
            .sum(),
        cost_usd: earlier.iter().map(|r| r.cost_usd).sum(),
        stopped: None,
    }));
    store::set_status(storage, run_id, "running")?;
    progress(&*state.lock().await);
    // Calls reserve their worst case against the run's cap before they are sent.
    let budget = match (gateway.config().limits.run_spend_usd, &answerer) {
        (Some(cap), Answerer::Model(_)) => Some(Budget::for_run(cap, state.lock().await.cost_usd)),
        _ => None,
    };
    let limit = Arc::new(Semaphore::new(concurrency.max(1)));
    let progress = Arc::new(progress);
    let mut jobs = tokio::task::JoinSet::new();
    let mut cancelled = false;
    'tasks: for task in tasks {
        let task = Arc::new(task);
        for sample in 0..samples.max(1) {
            if done.contains(&(task.id.clone(), sample)) {
                continue;
            }
            let permit = match limit.clone().acquire_owned().await {
                Ok(p) => p,
                Err(_) => break,
            };
            if cancel.load(Ordering::SeqCst) {
                cancelled = true;
                break 'tasks;
            }
            if state.lock().await.stopped.is_some() {
                break 'tasks;
            }
            let (task, answerer, gateway, storage, state, progress, run_id, budget) = (
                task.clone(),
                answerer.clone(),
                gateway.clone(),
                storage.clone(),
                state.clone(),
                progress.clone(),
                run_id.to_string(),
                budget.clone(),
            );
            jobs.spawn(async move {
                let (row, capped) =
                    run_one(&task, sample, &answerer, &gateway, budget.as_ref()).await;
                let stored = store::put_result(&storage, &run_id, &row);
                let mut s = state.lock().await;
                if capped && s.stopped.is_none() {
                    s.stopped = row.error.clone();
                }
                if stored.is_ok() && row.verdict.is_some() {
                    s.done += 1;
                }
                if row.label.as_deref() == Some("Success") {
                    s.successes += 1;
                }
                s.tokens += row.input_tokens + row.output_tokens;
                s.cost_usd += row.cost_usd;
                progress(&s);
                drop(permit);
            });
        }
    }
    while jobs.join_next().await.is_some() {}
    let final_state = state.lock().await.clone();
    let status = match &final_state.stopped {
        _ if cancelled && final_state.done < final_state.total => "cancelled",
        Some(_) => "stopped",
        None if final_state.done == final_state.total => "finished",
        None => "incomplete",
    };
    store::set_status(storage, run_id, status)?;
    Ok(final_state)
}
