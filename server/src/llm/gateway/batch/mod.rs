//! Provider batch APIs: many requests sent as one batch, answered within a day at half the
//! price (OpenAI's Batch API, Anthropic's Message Batches). The gateway builds each request
//! as it would send it alone, sends the batch, and later reads its answers, accounting,
//! redacting and caching each as a call of its own (so a later synchronous run replays them).
//!
//! Spend caps see a batch when it is sent: its worst case must fit under the daily and the
//! run's cap then. What it really cost is recorded as its answers arrive.

mod anthropic;
mod openai;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::{Gateway, Prepared};
use crate::config::ProviderKind;
use crate::llm::protocol::{build, error_message, parse, HttpCall};
use crate::llm::spend::Budget;
use crate::llm::{Completion, LlmError, Message};

/// What a batched request costs of the same request sent alone (both providers: half).
pub const BATCH_PRICE_FACTOR: f64 = 0.5;

/// One request of a batch.
#[derive(Clone, Debug)]
pub struct BatchRequest {
    /// Its id within the batch (letters, digits, `_`, `-`; at most 64).
    pub custom_id: String,
    /// What is asked.
    pub messages: Vec<Message>,
    /// The sample index (part of the cache key, as for a single call).
    pub sample: u32,
}

/// How a batch stands.
#[derive(Debug)]
pub enum BatchPoll {
    /// Not ended yet; the provider's word for its state (`in_progress`).
    Waiting(String),
    /// Ended: an answer or an error for every request asked about, by custom id.
    Ended(Vec<(String, Result<Completion, LlmError>)>),
}

/// What a provider said of a batch.
enum ProviderBatch {
    Waiting(String),
    /// Ended with this status; each answered request's body (the provider's answer to the
    /// request alone) or the error it got.
    Ended {
        status: String,
        results: HashMap<String, Result<Value, String>>,
    },
}

/// Where a provider's batch endpoints are and the headers they take: derived from the
/// single-call request (`…/chat/completions`, `…/messages`), whose base they share.
struct Endpoint {
    base: String,
    headers: Vec<(String, String)>,
}

impl Endpoint {
    fn of(call: &HttpCall, suffix: &str) -> Self {
        Self {
            base: call.url.trim_end_matches(suffix).to_string(),
            headers: call
                .headers
                .iter()
                .filter(|(k, _)| k != "content-type")
                .cloned()
                .collect(),
        }
    }

    fn with_headers(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        req
    }
}

impl Gateway {
    /// Whether model `name` can answer through a batch (OpenAI and Anthropic models).
    pub fn batch_supported(&self, name: &str) -> Result<(), LlmError> {
        let m = self
            .config
            .model(name)
            .ok_or_else(|| LlmError::UnknownModel(name.to_string()))?;
        if self.options.replay_only {
            return Err(LlmError::NotCached);
        }
        match m.provider {
            ProviderKind::Openai | ProviderKind::Anthropic => Ok(()),
            other => Err(LlmError::Batch(format!(
                "{} has no batch API here (OpenAI and Anthropic models do)",
                other.label()
            ))),
        }
    }

    /// The cached answer of a request, if the response cache holds one (it needs no batch).
    pub fn cached_answer(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Option<Completion>, LlmError> {
        if !self.options.cache {
            return Ok(None);
        }
        Ok(match self.prepare(name, messages, sample)? {
            Prepared::Cached(c) => Some(c),
            Prepared::Call(_) => None,
        })
    }

    /// Send `requests` to model `name` as one batch; the provider's id of it. Its worst case
    /// must fit under the daily cap and `run`'s now.
    pub async fn submit_batch(
        &self,
        name: &str,
        requests: &[BatchRequest],
        run: Option<&Arc<Budget>>,
    ) -> Result<String, LlmError> {
        self.batch_supported(name)?;
        let mut bodies = Vec::with_capacity(requests.len());
        let mut worst = 0.0;
        let mut first = None;
        for r in requests {
            let call = self.uncached_call(name, &r.messages, r.sample)?;
            worst += call.worst_cost * BATCH_PRICE_FACTOR;
            let http = build(&call.m, &r.messages, call.api_key.as_deref());
            bodies.push((r.custom_id.clone(), http.body.clone()));
            first.get_or_insert((http, call.m.provider, call.secrets.clone()));
        }
        let Some((http, provider, secrets)) = first else {
            return Err(LlmError::Batch("an empty batch".into()));
        };
        // Checked now, released at once: the batch is paid for as its answers arrive.
        drop(self.admit_with(&None, worst, run).await?);
        let sent = match provider {
            ProviderKind::Anthropic => {
                anthropic::submit(&self.client, &Endpoint::of(&http, "/messages"), bodies).await
            }
            _ => {
                openai::submit(
                    &self.client,
                    &Endpoint::of(&http, "/chat/completions"),
                    bodies,
                )
                .await
            }
        };
        sent.map_err(|e| secrets.scrub(e))
    }

    /// Ask how batch `batch_id` of model `name` stands; once it ended, the answers to
    /// `requests` (those it sent), each recorded as a call at [`BATCH_PRICE_FACTOR`] of the
    /// price and cached. A request the batch did not answer gets an error saying why.
    pub async fn poll_batch(
        &self,
        name: &str,
        batch_id: &str,
        requests: &[BatchRequest],
    ) -> Result<BatchPoll, LlmError> {
        self.batch_supported(name)?;
        let Some(probe) = requests.first() else {
            return Ok(BatchPoll::Ended(Vec::new()));
        };
        let call = self.uncached_call(name, &probe.messages, 0)?;
        let http = build(&call.m, &probe.messages, call.api_key.as_deref());
        let provider = call.m.provider;
        let polled = match provider {
            ProviderKind::Anthropic => {
                anthropic::poll(&self.client, &Endpoint::of(&http, "/messages"), batch_id).await
            }
            _ => {
                openai::poll(
                    &self.client,
                    &Endpoint::of(&http, "/chat/completions"),
                    batch_id,
                )
                .await
            }
        }
        .map_err(|e| call.secrets.scrub(e))?;
        let (status, mut results) = match polled {
            ProviderBatch::Waiting(s) => return Ok(BatchPoll::Waiting(s)),
            ProviderBatch::Ended { status, results } => (status, results),
        };
        let mut answers = Vec::with_capacity(requests.len());
        for r in requests {
            let answer = match results.remove(&r.custom_id) {
                None => Err(LlmError::Batch(format!(
                    "the batch ended ({status}) without an answer to this request"
                ))),
                Some(Err(message)) => Err(call.secrets.scrub(LlmError::Batch(message))),
                Some(Ok(body)) => self.record_batched(name, r, provider, &body),
            };
            answers.push((r.custom_id.clone(), answer));
        }
        Ok(BatchPoll::Ended(answers))
    }

    /// The call of a request as it is sent (the cache is not looked in: a batch's requests
    /// were looked up before it was sent).
    fn uncached_call(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Box<super::Call<'_>>, LlmError> {
        match self.prepare_with_cache(name, messages, sample, false)? {
            Prepared::Call(call) => Ok(call),
            Prepared::Cached(_) => Err(LlmError::Batch("a cached answer was not asked for".into())),
        }
    }

    /// Account for, redact and cache one batched answer.
    fn record_batched(
        &self,
        name: &str,
        r: &BatchRequest,
        provider: ProviderKind,
        body: &Value,
    ) -> Result<Completion, LlmError> {
        let call = self.uncached_call(name, &r.messages, r.sample)?;
        let (text, input_tokens, output_tokens) =
            parse(provider, body).map_err(|e| call.secrets.scrub(e))?;
        let text = call.secrets.redact(&text);
        Ok(self.account(
            &call,
            text,
            (input_tokens, output_tokens),
            1,
            BATCH_PRICE_FACTOR,
        ))
    }
}

/// POST `body` to `url` to make a batch; the new batch's id.
async fn create(
    client: &reqwest::Client,
    at: &Endpoint,
    url: &str,
    body: &Value,
) -> Result<String, LlmError> {
    let batch = json_of(at.with_headers(client.post(url)).json(body).send().await).await?;
    Ok(str_at(&batch, "/id", "the new batch")?.to_string())
}

/// The JSON a batch endpoint answered, or its error (the provider's message).
async fn json_of(sent: Result<reqwest::Response, reqwest::Error>) -> Result<Value, LlmError> {
    let text = text_of(sent).await?;
    serde_json::from_str(&text).map_err(|e| LlmError::Malformed(format!("not JSON: {e}")))
}

/// The body a batch endpoint answered, or its error.
async fn text_of(sent: Result<reqwest::Response, reqwest::Error>) -> Result<String, LlmError> {
    let res = sent.map_err(|e| LlmError::Network(e.without_url().to_string()))?;
    let status = res.status();
    let text = res
        .text()
        .await
        .map_err(|e| LlmError::Network(e.without_url().to_string()))?;
    if !status.is_success() {
        return Err(LlmError::Http {
            status: status.as_u16(),
            message: error_message(&text),
        });
    }
    Ok(text)
}

/// The string at `pointer` of `v`, or an error naming what is missing.
fn str_at<'a>(v: &'a Value, pointer: &str, what: &str) -> Result<&'a str, LlmError> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| LlmError::Malformed(format!("{what}: no {pointer} in {v}")))
}
