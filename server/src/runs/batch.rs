//! A run answered through a provider batch (`--batch`): the task samples not yet stored
//! are answered from the response cache where it can, the rest go to the provider as one
//! batch whose id is stored before anything waits on it, and the run polls it with backoff
//! (a restarted instance, or one that took the run over, polls the same batch). Its answers
//! are scored and stored as they are read; a sample the batch did not answer is stored with
//! the reason, so resuming the run sends it again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use benchmarks::task::{AnySuite, PreparedTask};
use futures_util::StreamExt;
use tokio::sync::Mutex;
use wire::RunSpec;

use super::runner::{
    record, retried, row_of, unasked_row, AnswerError, Answered, RunError, RunOutcome,
};
use super::Answerer;
use crate::config::Config;
use crate::execution::CodeRunner;
use crate::llm::spend::Budget;
use crate::llm::{BatchPoll, BatchRequest, Completion, Gateway, LlmError};
use crate::storage::{BatchItem, OpenBatch, Storage};

/// The most requests in one batch: OpenAI takes 50,000 and a 200 MB file, Anthropic 100,000
/// and 256 MB; at this many a batch of long prompts (20 kB each) stays under both sizes.
const MAX_REQUESTS: usize = 10_000;

/// A task sample without a stored verdict.
pub(super) struct Pending {
    pub json: Arc<serde_json::Value>,
    pub task: Arc<PreparedTask>,
    pub sample: u32,
}

/// What a batched run works with.
pub(super) struct BatchRun<'a> {
    pub suite: &'a Arc<dyn AnySuite>,
    pub storage: &'a Storage,
    pub gateway: &'a Gateway,
    pub code: &'a CodeRunner,
    pub run_id: &'a str,
    /// The configured model that answers.
    pub model: &'a str,
    /// Answers scored at once.
    pub concurrency: usize,
    pub budget: Option<&'a Arc<Budget>>,
    pub cancel: &'a sandbox::CancelToken,
}

/// Why spec `spec` cannot run batched: only a configured model of a provider with a batch
/// API answers that way, in one call per task (no agent).
pub(super) fn check(spec: &RunSpec, config: &Config, answerer: &Answerer) -> Result<(), RunError> {
    let refuse = |why: String| Err(RunError::BadTasks(format!("a batched run: {why}")));
    let Answerer::Model(name) = answerer else {
        return refuse(format!(
            "{} is a baseline; batches are for models",
            spec.model
        ));
    };
    if let Some(agent) = &spec.agent {
        return refuse(format!(
            "agent {agent} asks in rounds, each depending on the last; a batch is one round"
        ));
    }
    match config.model(name).map(|m| m.provider) {
        Some(crate::config::ProviderKind::Openai | crate::config::ProviderKind::Anthropic) => {
            Ok(())
        }
        Some(other) => refuse(format!(
            "{name} is served by {}, which has no batch API here (OpenAI and Anthropic do)",
            other.label()
        )),
        None => Err(RunError::UnknownModel(name.clone())),
    }
}

impl BatchRun<'_> {
    /// Answer `pending` through batches; whether a cancel stopped the wait (the batch stays
    /// stored and is collected when the run resumes).
    pub async fn execute(
        &self,
        pending: Vec<Pending>,
        state: &Mutex<RunOutcome>,
        progress: &(dyn Fn(&RunOutcome) + Send + Sync),
    ) -> Result<bool, RunError> {
        let mut open = self.storage.open_batches(self.run_id)?;
        let in_open: std::collections::HashSet<(String, u32)> = open
            .iter()
            .flat_map(|b| b.items.iter().map(|i| (i.task_id.clone(), i.sample)))
            .collect();
        let by_key: HashMap<(String, u32), &Pending> = pending
            .iter()
            .map(|p| ((p.task.id.clone(), p.sample), p))
            .collect();
        let mut to_send = Vec::new();
        for p in &pending {
            if in_open.contains(&(p.task.id.clone(), p.sample)) {
                continue;
            }
            if let Some(row) = self.answered_without_batch(p).await {
                record(self.storage, self.run_id, &row, false, state, progress).await;
            } else {
                to_send.push(p);
            }
        }
        for (first, chunk) in (0..)
            .step_by(MAX_REQUESTS)
            .zip(to_send.chunks(MAX_REQUESTS))
        {
            match self.submit(first, chunk).await {
                Ok(batch) => open.push(batch),
                Err(LlmError::SpendCap(why)) => {
                    state.lock().await.stopped = Some(LlmError::SpendCap(why).to_string());
                    break;
                }
                Err(e) => {
                    // Nothing was sent: each sample says why, and a resume sends it again.
                    for p in chunk {
                        let row = self.row(p, Err(AnswerError::Llm(e.clone()))).await;
                        record(self.storage, self.run_id, &row, false, state, progress).await;
                    }
                }
            }
        }
        self.wait_for(open, &by_key, state, progress).await
    }

    /// The row of a sample that needs no batch: one no one is asked, or one the response
    /// cache answers.
    async fn answered_without_batch(&self, p: &Pending) -> Option<wire::ResultRow> {
        let prompt = benchmarks::task::prompt_text(&p.task.messages);
        if let Some(u) = self.suite.unanswerable(&p.task) {
            let mut row = unasked_row(&p.task, p.sample, prompt, u);
            row.task = Some((*p.json).clone());
            return Some(row);
        }
        match self
            .gateway
            .cached_answer(self.model, &p.task.messages, p.sample)
        {
            Ok(Some(c)) => Some(self.row(p, Ok(c)).await),
            Ok(None) => None,
            Err(e) => Some(self.row(p, Err(AnswerError::Llm(e))).await),
        }
    }

    /// Send `to_send` as one batch (its requests numbered from `first`) and store its id.
    async fn submit(&self, first: usize, to_send: &[&Pending]) -> Result<OpenBatch, LlmError> {
        let items: Vec<BatchItem> = to_send
            .iter()
            .enumerate()
            .map(|(n, p)| BatchItem {
                custom_id: format!("r{}", first + n),
                task_id: p.task.id.clone(),
                sample: p.sample,
            })
            .collect();
        let requests: Vec<BatchRequest> = to_send
            .iter()
            .zip(&items)
            .map(|(p, item)| BatchRequest {
                custom_id: item.custom_id.clone(),
                messages: p.task.messages.clone(),
                sample: p.sample,
            })
            .collect();
        let batch_id = self
            .gateway
            .submit_batch(self.model, &requests, self.budget)
            .await?;
        tracing::info!(
            run = self.run_id,
            batch = batch_id,
            n = items.len(),
            "batch sent"
        );
        if let Err(e) = self
            .storage
            .put_batch(self.run_id, &batch_id, self.model, &items)
        {
            // Without its id stored a restart would send (and pay for) the batch again: say
            // so loudly, and go on waiting for it in this process.
            tracing::error!(
                run = self.run_id,
                batch = batch_id,
                "storing the batch id failed: {e}"
            );
        }
        Ok(OpenBatch {
            batch_id,
            model: self.model.to_string(),
            items,
            provider_status: None,
        })
    }

    /// Poll `open` with backoff until every batch is collected (false) or a cancel comes
    /// (true).
    async fn wait_for(
        &self,
        mut open: Vec<OpenBatch>,
        by_key: &HashMap<(String, u32), &Pending>,
        state: &Mutex<RunOutcome>,
        progress: &(dyn Fn(&RunOutcome) + Send + Sync),
    ) -> Result<bool, RunError> {
        let limits = &self.gateway.config().limits;
        let mut delay = Duration::from_secs(limits.batch_poll_secs.max(1));
        let longest = Duration::from_secs(
            limits
                .batch_poll_max_secs
                .max(limits.batch_poll_secs)
                .max(1),
        );
        while !open.is_empty() {
            let mut still = Vec::new();
            for batch in open {
                let requests = requests_of(&batch, by_key);
                match self
                    .gateway
                    .poll_batch(&batch.model, &batch.batch_id, &requests)
                    .await
                {
                    Ok(BatchPoll::Waiting(status)) => {
                        let _ =
                            self.storage
                                .note_batch_status(self.run_id, &batch.batch_id, &status);
                        let mut s = state.lock().await;
                        s.progress.waiting_for_batch =
                            Some(format!("{} ({status})", batch.batch_id));
                        progress(&s);
                        drop(s);
                        still.push(batch);
                    }
                    Ok(BatchPoll::Ended(answers)) => {
                        self.collect(&batch, answers, by_key, state, progress).await;
                    }
                    Err(e) if e.is_transient() => {
                        tracing::warn!(run = self.run_id, batch = batch.batch_id, "polling: {e}");
                        still.push(batch);
                    }
                    Err(e) => {
                        // The provider will not say (an unknown batch, a revoked key): each
                        // sample is stored with why, and a resume sends it again.
                        let answers = batch
                            .items
                            .iter()
                            .map(|i| (i.custom_id.clone(), Err(e.clone())))
                            .collect();
                        self.collect(&batch, answers, by_key, state, progress).await;
                    }
                }
            }
            open = still;
            if open.is_empty() {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.cancel.cancelled() => return Ok(true),
            }
            delay = (delay * 2).min(longest);
        }
        let mut s = state.lock().await;
        if s.progress.waiting_for_batch.take().is_some() {
            progress(&s);
        }
        Ok(false)
    }

    /// Score and store the answers of an ended batch, then mark it collected.
    async fn collect(
        &self,
        batch: &OpenBatch,
        answers: Vec<(String, Result<Completion, LlmError>)>,
        by_key: &HashMap<(String, u32), &Pending>,
        state: &Mutex<RunOutcome>,
        progress: &(dyn Fn(&RunOutcome) + Send + Sync),
    ) {
        let items: HashMap<&str, &BatchItem> = batch
            .items
            .iter()
            .map(|i| (i.custom_id.as_str(), i))
            .collect();
        let scorings = answers.into_iter().filter_map(|(custom_id, answer)| {
            let item = items.get(custom_id.as_str())?;
            // Stored already (an earlier session collected it before it could say so).
            let p = by_key.get(&(item.task_id.clone(), item.sample))?;
            Some(async move {
                let answer = match answer {
                    Ok(first) => self.format_retry(p, first).await,
                    Err(e) => Err(AnswerError::Llm(e)),
                };
                self.row(p, answer).await
            })
        });
        let mut rows = futures_util::stream::iter(scorings).buffer_unordered(self.concurrency);
        while let Some(row) = rows.next().await {
            record(self.storage, self.run_id, &row, false, state, progress).await;
        }
        if let Err(e) = self.storage.batch_collected(self.run_id, &batch.batch_id) {
            tracing::warn!(
                run = self.run_id,
                batch = batch.batch_id,
                "marking collected: {e}"
            );
        }
    }

    /// The suite's one format retry (OmniMatBench: a reply without `<answer>`), asked at
    /// once rather than in another batch.
    async fn format_retry(
        &self,
        p: &Pending,
        first: Completion,
    ) -> Result<Completion, AnswerError> {
        let Some(again) = self.suite.retry_messages(&p.task, &first.text) else {
            return Ok(first);
        };
        let second = self
            .gateway
            .complete_within(self.model, &again, p.sample, self.budget)
            .await?;
        Ok(retried(&first, second))
    }

    /// The stored row of `p` answered by `answer`.
    async fn row(&self, p: &Pending, answer: Result<Completion, AnswerError>) -> wire::ResultRow {
        let answered = Answered {
            prompt: benchmarks::task::prompt_text(&p.task.messages),
            answer,
            // A batch answers within a day: a latency would say nothing of the model.
            latency_ms: 0,
            transcript: None,
        };
        let mut row = row_of(
            self.suite,
            &p.task,
            p.sample,
            answered,
            self.gateway,
            self.code,
            self.run_id,
        )
        .await;
        row.task = Some((*p.json).clone());
        row
    }
}

/// The requests of `batch` as they were sent (the task's messages and sample), for those
/// whose task this run still has and has not stored.
fn requests_of(batch: &OpenBatch, by_key: &HashMap<(String, u32), &Pending>) -> Vec<BatchRequest> {
    batch
        .items
        .iter()
        .filter_map(|i| {
            let p = by_key.get(&(i.task_id.clone(), i.sample))?;
            Some(BatchRequest {
                custom_id: i.custom_id.clone(),
                messages: p.task.messages.clone(),
                sample: i.sample,
            })
        })
        .collect()
}
