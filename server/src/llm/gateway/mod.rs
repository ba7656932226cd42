//! The gateway: cache lookup, spend caps, key lookup, concurrency limit, retries.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;

use super::protocol::{
    build, build_embeddings, build_stream, error_message, parse, parse_embeddings, tool_calls,
    with_tools, HttpCall, StreamDecoder,
};
use super::redact::{Secrets, StreamRedactor};
use super::retry::{parse_retry_after, RetryPolicy};
use super::spend::{Budget, Reservation};
use super::{Completion, LlmError, Message};
use crate::config::{Config, EmbeddingModelConfig, ModelConfig, ProviderKind};
use crate::storage::Storage;
use llm_protocol::{ToolCall, ToolSpec};

mod batch;

pub use batch::{BatchPoll, BatchRequest, BATCH_PRICE_FACTOR};

/// Cache behaviour of a gateway.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatewayOptions {
    /// Use and fill the response cache.
    pub cache: bool,
    /// Serve only from the cache; never call a provider (workshops without network or keys).
    pub replay_only: bool,
}

/// Calls configured models.
#[derive(Clone)]
pub struct Gateway {
    config: Arc<Config>,
    storage: Storage,
    client: reqwest::Client,
    limits: Arc<HashMap<String, Arc<Semaphore>>>,
    options: GatewayOptions,
    daily: Option<Arc<Budget>>,
    /// The temperature of models that set none (a suite's paper setting), if any.
    default_temperature: Option<f64>,
}

/// Largest part of a provider's error body that is read (bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The key of a request in the response cache: provider, endpoint, model, messages, sampling
/// parameters and the sample index.
pub fn cache_key(m: &ModelConfig, messages: &[Message], sample: u32) -> String {
    let mut canonical = json!({
        "provider": m.provider,
        "base_url": m.base_url,
        "model": m.model,
        "messages": messages,
        "temperature": m.temperature,
        "max_tokens": m.max_tokens,
        "reasoning_effort": m.reasoning_effort,
        "sample": sample,
    });
    // Only when set, so that the keys of answers cached before `top_p` existed still match.
    if let Some(p) = m.top_p {
        canonical["top_p"] = json!(p);
    }
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// [`cache_key`] of a request offering `tools` (the same key without tools).
fn cache_key_with_tools(
    m: &ModelConfig,
    messages: &[Message],
    tools: &[ToolSpec],
    sample: u32,
) -> String {
    if tools.is_empty() {
        return cache_key(m, messages, sample);
    }
    let canonical = json!({"request": cache_key(m, messages, sample), "tools": tools});
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// What the cache keeps of an answer to a request with tools: its text and its calls.
fn pack(text: &str, calls: &[ToolCall], tools: &[ToolSpec]) -> String {
    if tools.is_empty() {
        return text.to_string();
    }
    json!({"text": text, "tool_calls": calls}).to_string()
}

/// A cached answer to a request with `tools`, unpacked (see [`pack`]).
fn unpack(mut c: Completion, tools: &[ToolSpec]) -> (Completion, Vec<ToolCall>) {
    if tools.is_empty() {
        return (c, Vec::new());
    }
    let v: serde_json::Value = serde_json::from_str(&c.text).unwrap_or_default();
    let calls = serde_json::from_value(v["tool_calls"].clone()).unwrap_or_default();
    c.text = v["text"].as_str().unwrap_or_default().to_string();
    (c, calls)
}

/// How long a call's claim on a spend cap lasts at most: longer than any call may take
/// (every attempt's timeout, and a minute), so only a dead instance's claims expire.
pub fn claim_secs(limits: &crate::config::Limits) -> u64 {
    limits.request_timeout_secs * u64::from(limits.max_retries + 1) + 60
}

/// Today's number (days since 1970-01-01, UTC), for the daily spend cap.
pub fn today() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0)
}

fn endpoint_key(m: &ModelConfig) -> String {
    endpoint_key_of(m.provider, m.base_url.as_deref())
}

/// One concurrency limit per endpoint: chat and embeddings models of one endpoint share it.
fn endpoint_key_of(provider: ProviderKind, base_url: Option<&str>) -> String {
    format!("{:?} {}", provider, base_url.unwrap_or(""))
}

/// The key of one text's embedding in the embeddings cache: endpoint, model, dimensions and
/// the text.
pub fn embedding_cache_key(e: &EmbeddingModelConfig, text: &str) -> String {
    let canonical = json!({
        "provider": e.provider,
        "base_url": e.base_url,
        "model": e.model,
        "dimensions": e.dimensions,
        "input": text,
    });
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// The key of a provider: `api_key_env` or the provider's default variable, read now. A
/// provider that needs a key and has none is an error; `openai-compatible` may have none.
fn api_key(provider: ProviderKind, api_key_env: Option<&str>) -> Result<Option<String>, LlmError> {
    let key_env = api_key_env
        .map(str::to_string)
        .or_else(|| provider.default_key_env().map(str::to_string));
    match &key_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(Some(v)),
            _ if provider.default_key_env().is_some() => Err(LlmError::MissingKey(var.clone())),
            _ => Ok(None),
        },
        None => Ok(None),
    }
}

/// Embeddings of some texts, and what they cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Embedded {
    /// One vector per text, in the texts' order.
    pub vectors: Vec<Vec<f32>>,
    /// Input tokens the provider counted (cached texts count none).
    pub input_tokens: u64,
    /// Cost in USD (cached texts cost nothing).
    pub cost_usd: f64,
    /// How many texts were served from the cache.
    pub cached: usize,
    /// Requests sent to the provider (retries not counted).
    pub requests: usize,
}

impl Gateway {
    /// A gateway over `config`, recording in `storage`.
    pub fn new(
        config: Config,
        storage: Storage,
        options: GatewayOptions,
    ) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.limits.request_timeout_secs))
            .build()
            .map_err(|e| LlmError::Network(e.to_string()))?;
        let mut limits = HashMap::new();
        let endpoints = config.models.iter().map(endpoint_key).chain(
            config
                .embeddings
                .iter()
                .map(|e| endpoint_key_of(e.provider, e.base_url.as_deref())),
        );
        for key in endpoints {
            limits.entry(key).or_insert_with(|| {
                Arc::new(Semaphore::new(
                    config.limits.max_concurrency_per_provider.max(1),
                ))
            });
        }
        let daily = config
            .limits
            .daily_spend_usd
            .map(|cap| Budget::daily(cap, storage.clone(), claim_secs(&config.limits)));
        Ok(Self {
            config: Arc::new(config),
            storage,
            client,
            limits: Arc::new(limits),
            options,
            daily,
            default_temperature: None,
        })
    }

    /// This gateway, calling models that set no temperature of their own at `temperature`
    /// (a suite's paper setting: MatTools 0.7, AlchemyBench 0; its judge's 0). Limits,
    /// caps, cache and counters are shared with `self`.
    pub fn with_default_temperature(&self, temperature: Option<f64>) -> Gateway {
        Gateway {
            default_temperature: temperature,
            ..self.clone()
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn policy(&self) -> RetryPolicy {
        let l = &self.config.limits;
        RetryPolicy {
            max_retries: l.max_retries,
            base: Duration::from_millis(l.backoff_base_ms),
            max: Duration::from_millis(l.backoff_max_ms),
        }
    }

    /// Every configured key's value, for removing them from what the server shows.
    pub fn secrets(&self) -> Secrets {
        Secrets::of(&self.config)
    }

    /// Cache lookup, spend cap and key lookup shared by both call shapes.
    fn prepare(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Prepared<'_>, LlmError> {
        self.prepare_with(name, messages, &[], sample)
    }

    /// [`prepare`](Self::prepare) of a request offering `tools`.
    fn prepare_with(
        &self,
        name: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        sample: u32,
    ) -> Result<Prepared<'_>, LlmError> {
        self.prepare_looking(name, messages, tools, sample, true)
    }

    /// [`prepare`](Self::prepare), looking in the cache only if `lookup` (a batch's requests
    /// were looked up before it was sent).
    fn prepare_with_cache(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
        lookup: bool,
    ) -> Result<Prepared<'_>, LlmError> {
        self.prepare_looking(name, messages, &[], sample, lookup)
    }

    fn prepare_looking(
        &self,
        name: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        sample: u32,
        lookup: bool,
    ) -> Result<Prepared<'_>, LlmError> {
        let found = self
            .config
            .model(name)
            .ok_or_else(|| LlmError::UnknownModel(name.to_string()))?;
        let m = match (found.temperature, self.default_temperature) {
            (None, Some(t)) => std::borrow::Cow::Owned(ModelConfig {
                temperature: Some(t),
                ..found.clone()
            }),
            _ => std::borrow::Cow::Borrowed(found),
        };
        let key = cache_key_with_tools(&m, messages, tools, sample);
        if lookup && (self.options.cache || self.options.replay_only) {
            if let Ok(Some((text, input_tokens, output_tokens))) = self.storage.cache_get(&key) {
                return Ok(Prepared::Cached(Completion {
                    text,
                    input_tokens,
                    output_tokens,
                    cost_usd: 0.0,
                    cached: true,
                    attempts: 0,
                }));
            }
        }
        if self.options.replay_only {
            return Err(LlmError::NotCached);
        }
        let api_key = api_key(m.provider, m.api_key_env.as_deref())?;
        let semaphore = self.limits.get(&endpoint_key(&m)).cloned();
        let worst_cost = m.worst_cost_with_tools(messages, tools);
        Ok(Prepared::Call(Box::new(Call {
            m,
            cache_key: key,
            api_key,
            secrets: self.secrets(),
            semaphore,
            worst_cost,
        })))
    }

    /// Take the provider's concurrency slot, then reserve the call's worst case against the
    /// daily cap and `run` (in that order: a reservation never waits for a slot).
    async fn admit(
        &self,
        call: &Call<'_>,
        run: Option<&Arc<Budget>>,
    ) -> Result<Admitted, LlmError> {
        self.admit_with(&call.semaphore, call.worst_cost, run).await
    }

    /// [`admit`](Self::admit) for a call holding `semaphore` whose worst case is `worst`.
    async fn admit_with(
        &self,
        semaphore: &Option<Arc<Semaphore>>,
        worst: f64,
        run: Option<&Arc<Budget>>,
    ) -> Result<Admitted, LlmError> {
        let permit = acquire(semaphore).await?;
        let daily = match &self.daily {
            Some(b) => Some(b.reserve(worst).await?),
            None => None,
        };
        let run = match run {
            Some(b) => Some(b.reserve(worst).await?),
            None => None,
        };
        Ok(Admitted {
            _permit: permit,
            daily,
            run,
        })
    }

    /// Account for and cache a finished answer.
    fn record(
        &self,
        call: &Call<'_>,
        admitted: Admitted,
        text: String,
        tokens: (u64, u64),
        attempts: u32,
    ) -> Completion {
        let c = self.account(call, text, tokens, attempts, 1.0);
        // After the spend table has it: the daily budget reads its settled spend there.
        if let Some(r) = admitted.daily {
            r.settle(c.cost_usd);
        }
        if let Some(r) = admitted.run {
            r.settle(c.cost_usd);
        }
        c
    }

    /// Record an answer's spend (at `price_factor` of the model's prices) and cache it.
    fn account(
        &self,
        call: &Call<'_>,
        text: String,
        (input_tokens, output_tokens): (u64, u64),
        attempts: u32,
        price_factor: f64,
    ) -> Completion {
        let cost_usd = call.m.cost(input_tokens, output_tokens) * price_factor;
        if let Err(e) = self.storage.add_spend(today(), cost_usd) {
            tracing::error!("could not record ${cost_usd:.6} of spend: {e}");
        }
        if self.options.cache {
            let _ = self.storage.cache_put(
                &call.cache_key,
                &call.m.name,
                &text,
                input_tokens,
                output_tokens,
            );
        }
        Completion {
            text,
            input_tokens,
            output_tokens,
            cost_usd,
            cached: false,
            attempts,
        }
    }

    /// Ask model `name` for a completion of `messages` (`sample` distinguishes repeated
    /// samples of the same prompt in the cache).
    pub async fn complete(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Completion, LlmError> {
        self.complete_within(name, messages, sample, None).await
    }

    /// [`complete`](Self::complete), also reserving against a run's spend `budget`.
    pub async fn complete_within(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
        budget: Option<&Arc<Budget>>,
    ) -> Result<Completion, LlmError> {
        self.complete_with_tools(name, messages, &[], sample, budget)
            .await
            .map(|(c, _)| c)
    }

    /// [`complete_within`](Self::complete_within) offering the model `tools` (the
    /// providers' function calling): the answer and the calls it made (none: it answered in
    /// text). Calls are redacted like text and cached with the answer.
    pub async fn complete_with_tools(
        &self,
        name: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        sample: u32,
        budget: Option<&Arc<Budget>>,
    ) -> Result<(Completion, Vec<ToolCall>), LlmError> {
        let call = match self.prepare_with(name, messages, tools, sample)? {
            Prepared::Cached(c) => return Ok(unpack(c, tools)),
            Prepared::Call(call) => call,
        };
        let http = with_tools(
            call.m.provider,
            build(&call.m, messages, call.api_key.as_deref()),
            tools,
        );
        let admitted = self.admit(&call, budget).await?;
        let policy = self.policy();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (result, retry_after) = self.send(&http).await;
            let outcome = result
                .and_then(|body| {
                    let calls = tool_calls(call.m.provider, &body);
                    parse(call.m.provider, &body).map(|answer| (answer, calls))
                })
                .map_err(|e| call.secrets.scrub(e));
            match outcome {
                Ok(((text, i, o), calls)) => {
                    let text = call.secrets.redact(&text);
                    let calls: Vec<ToolCall> = calls
                        .into_iter()
                        .map(|c| ToolCall {
                            arguments: call.secrets.redact(&c.arguments),
                            ..c
                        })
                        .collect();
                    let stored = pack(&text, &calls, tools);
                    let mut c = self.record(&call, admitted, stored, (i, o), attempts);
                    c.text = text;
                    return Ok((c, calls));
                }
                Err(e) if e.is_transient() && attempts <= policy.max_retries => {
                    let wait = policy.delay(attempts, retry_after, rand::random::<f64>());
                    tracing::warn!(
                        model = name,
                        attempt = attempts,
                        "retrying in {wait:?}: {e}"
                    );
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Like [`complete`](Self::complete), but the answer arrives piece by piece: `on` hears
    /// each piece of text as the provider sends it, and a [`StreamEvent::Restart`] when a
    /// broken stream is retried from the start (the pieces heard so far are void). Retries,
    /// caps, cache and accounting are those of `complete`; a cache hit arrives as one piece.
    pub async fn complete_stream(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
        mut on: impl FnMut(StreamEvent<'_>) + Send,
    ) -> Result<Completion, LlmError> {
        let call = match self.prepare(name, messages, sample)? {
            Prepared::Cached(c) => {
                on(StreamEvent::Delta(&c.text));
                return Ok(c);
            }
            Prepared::Call(call) => call,
        };
        let http = build_stream(&call.m, messages, call.api_key.as_deref());
        let admitted = self.admit(&call, None).await?;
        let policy = self.policy();
        let mut attempts = 0;
        // Pieces pass through a redactor, so a key the answer might echo never leaves whole
        // or in part.
        let mut redactor = StreamRedactor::new(call.secrets.clone());
        loop {
            attempts += 1;
            let mut decoder = StreamDecoder::new(call.m.provider);
            redactor.reset();
            let mut heard = |e: StreamEvent<'_>| match e {
                StreamEvent::Delta(piece) => {
                    let safe = redactor.push(piece);
                    if !safe.is_empty() {
                        on(StreamEvent::Delta(&safe));
                    }
                }
                other => on(other),
            };
            let (result, retry_after) = self.send_stream(&http, &mut decoder, &mut heard).await;
            let result = result.map_err(|e| call.secrets.scrub(e));
            match result {
                Ok(()) => {
                    let rest = redactor.finish();
                    if !rest.is_empty() {
                        on(StreamEvent::Delta(&rest));
                    }
                    let tokens = (decoder.input_tokens, decoder.output_tokens);
                    let text = call.secrets.redact(&decoder.text);
                    return Ok(self.record(&call, admitted, text, tokens, attempts));
                }
                Err(e) if e.is_transient() && attempts <= policy.max_retries => {
                    let wait = policy.delay(attempts, retry_after, rand::random::<f64>());
                    tracing::warn!(
                        model = name,
                        attempt = attempts,
                        "retrying stream in {wait:?}: {e}"
                    );
                    tokio::time::sleep(wait).await;
                    if !decoder.text.is_empty() {
                        on(StreamEvent::Restart {
                            attempt: attempts + 1,
                        });
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Embeddings of `texts` by the configured embeddings model `name` (OpenAI's
    /// `POST {base}/embeddings`), in order. Each text's vector comes from the embeddings
    /// cache when it is there (cache on, or replay-only); the others are sent in batches of
    /// the model's `batch_size`, concurrently up to the endpoint's limit, each admitted like
    /// a chat call (the endpoint's concurrency slot, then its worst case reserved against the
    /// daily cap and `budget`), retried like one, and cached. Equal texts are sent once.
    pub async fn embed(
        &self,
        name: &str,
        texts: &[String],
        budget: Option<&Arc<Budget>>,
    ) -> Result<Embedded, LlmError> {
        let e = self
            .config
            .embedding_model(name)
            .ok_or_else(|| LlmError::UnknownModel(name.to_string()))?;
        let keys: Vec<String> = texts.iter().map(|t| embedding_cache_key(e, t)).collect();
        let mut found: HashMap<String, Vec<f32>> = HashMap::new();
        let mut out = Embedded::default();
        if self.options.cache || self.options.replay_only {
            // A cache that cannot be read is a cache without the entries.
            if let Ok(hits) = self.storage.embeddings_get(&keys) {
                for (key, hit) in keys.iter().zip(hits) {
                    if let Some(v) = hit {
                        found.insert(key.clone(), v);
                    }
                }
            }
        }
        let mut missing: Vec<(String, String)> = Vec::new();
        let mut queued = std::collections::HashSet::new();
        for (key, text) in keys.iter().zip(texts) {
            if found.contains_key(key) {
                out.cached += 1;
            } else if queued.insert(key.clone()) {
                missing.push((key.clone(), text.clone()));
            }
        }
        if !missing.is_empty() {
            if self.options.replay_only {
                return Err(LlmError::NotCached);
            }
            let key = api_key(e.provider, e.api_key_env.as_deref())?;
            let call = EmbedCall {
                e,
                name,
                key: key.as_deref(),
                secrets: self.secrets(),
                semaphore: self
                    .limits
                    .get(&endpoint_key_of(e.provider, e.base_url.as_deref()))
                    .cloned(),
                dim: e.dimensions.and_then(|d| usize::try_from(d).ok()),
                budget,
            };
            // Batches go out side by side, as many as the endpoint's limit lets through
            // (each takes its slot and reservation in `embed_batch`); the first error ends
            // the call and drops the others, whose reservations cost nothing.
            // (Futures collected first: a closure in the stream's type trips the compiler's
            // Send check of the tasks that await this.)
            let pending: Vec<_> = missing
                .chunks(e.batch_size.max(1))
                .map(|batch| self.embed_batch(&call, batch))
                .collect();
            let mut batches = futures_util::stream::iter(pending)
                .buffer_unordered(self.config.limits.max_concurrency_per_provider.max(1));
            while let Some(done) = batches.next().await {
                let (entries, tokens, cost) = done?;
                out.requests += 1;
                out.input_tokens += tokens;
                out.cost_usd += cost;
                found.extend(entries);
            }
        }
        out.vectors = keys
            .iter()
            .map(|k| found.get(k).cloned())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| LlmError::Malformed("an input got no embedding".into()))?;
        // One model gives one length; a cache filled under another `dimensions` cannot mix in
        // (the setting is in the key), but say so plainly if vectors ever disagree.
        if let Some(first) = out.vectors.first().map(Vec::len) {
            if let Some(v) = out.vectors.iter().find(|v| v.len() != first) {
                return Err(LlmError::Malformed(format!(
                    "embeddings of {} and {first} values from one model",
                    v.len()
                )));
            }
        }
        Ok(out)
    }

    /// One embeddings request for `batch` ((cache key, text) pairs): admitted, retried,
    /// accounted for and cached like a chat call. Returns the (key, vector) pairs, the
    /// input tokens and the cost.
    async fn embed_batch(
        &self,
        call: &EmbedCall<'_>,
        batch: &[(String, String)],
    ) -> Result<(Vec<(String, Vec<f32>)>, u64, f64), LlmError> {
        let e = call.e;
        let inputs: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let http = build_embeddings(e, &inputs, call.key);
        let admitted = self
            .admit_with(&call.semaphore, e.worst_cost(&inputs), call.budget)
            .await?;
        let policy = self.policy();
        let mut attempts = 0;
        let (vectors, tokens) = loop {
            attempts += 1;
            let (result, retry_after) = self.send(&http).await;
            let outcome = result
                .and_then(|body| parse_embeddings(&body, inputs.len(), call.dim))
                .map_err(|err| call.secrets.scrub(err));
            match outcome {
                Ok(v) => break v,
                Err(err) if err.is_transient() && attempts <= policy.max_retries => {
                    let wait = policy.delay(attempts, retry_after, rand::random::<f64>());
                    tracing::warn!(
                        model = call.name,
                        attempt = attempts,
                        "retrying embeddings in {wait:?}: {err}"
                    );
                    tokio::time::sleep(wait).await;
                }
                Err(err) => return Err(err),
            }
        };
        let cost = e.cost(tokens);
        if let Err(err) = self.storage.add_spend(today(), cost) {
            tracing::error!("could not record ${cost:.6} of spend: {err}");
        }
        if let Some(r) = admitted.daily {
            r.settle(cost);
        }
        if let Some(r) = admitted.run {
            r.settle(cost);
        }
        let entries: Vec<(String, Vec<f32>)> =
            batch.iter().map(|(k, _)| k.clone()).zip(vectors).collect();
        if self.options.cache {
            if let Err(err) = self.storage.embeddings_put(&e.name, &entries) {
                tracing::error!("could not cache {} embeddings: {err}", entries.len());
            }
        }
        Ok((entries, tokens, cost))
    }

    fn transport_error(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout(self.config.limits.request_timeout_secs)
        } else {
            // reqwest's error text names the URL, never headers.
            LlmError::Network(e.without_url().to_string())
        }
    }

    /// Post `call`; on success the response, else the error and any Retry-After.
    async fn post(
        &self,
        call: &HttpCall,
    ) -> Result<reqwest::Response, (LlmError, Option<Duration>)> {
        let mut req = self.client.post(&call.url).json(&call.body);
        for (k, v) in &call.headers {
            req = req.header(k, v);
        }
        let res = req
            .send()
            .await
            .map_err(|e| (self.transport_error(e), None))?;
        let status = res.status();
        if status.is_success() {
            return Ok(res);
        }
        let retry_after = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = read_capped(res, MAX_ERROR_BODY).await;
        Err((
            LlmError::Http {
                status: status.as_u16(),
                message: error_message(&text),
            },
            retry_after,
        ))
    }

    /// One streamed attempt: decode events into `decoder`, telling `on` each new piece.
    async fn send_stream(
        &self,
        call: &HttpCall,
        decoder: &mut StreamDecoder,
        on: &mut (impl FnMut(StreamEvent<'_>) + Send),
    ) -> (Result<(), LlmError>, Option<Duration>) {
        let res = match self.post(call).await {
            Ok(r) => r,
            Err((e, retry_after)) => return (Err(e), retry_after),
        };
        let mut events = res.bytes_stream().eventsource();
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(ev) => ev,
                Err(EventStreamError::Transport(e)) => return (Err(self.transport_error(e)), None),
                Err(e) => return (Err(LlmError::Malformed(format!("event stream: {e}"))), None),
            };
            match decoder.feed(&event.event, &event.data) {
                Ok(piece) if !piece.is_empty() => on(StreamEvent::Delta(&piece)),
                Ok(_) => {}
                Err(e) => return (Err(e.into()), None),
            }
        }
        if !decoder.complete {
            let n = decoder.text.chars().count();
            return (
                Err(LlmError::Stream(format!(
                    "the provider closed the stream before the end of the answer ({n} characters received)"
                ))),
                None,
            );
        }
        (Ok(()), None)
    }

    async fn send(
        &self,
        call: &HttpCall,
    ) -> (Result<serde_json::Value, LlmError>, Option<Duration>) {
        let res = match self.post(call).await {
            Ok(r) => r,
            Err((e, retry_after)) => return (Err(e), retry_after),
        };
        let text = match res.text().await {
            Ok(t) => t,
            Err(e) => return (Err(self.transport_error(e)), None),
        };
        match serde_json::from_str(&text) {
            Ok(v) => (Ok(v), None),
            Err(e) => (Err(LlmError::Malformed(format!("not JSON: {e}"))), None),
        }
    }
}

/// A request that goes to the provider (not served from the cache).
struct Call<'a> {
    /// The model as called: its configuration, its temperature filled in by the gateway's
    /// default where it sets none.
    m: std::borrow::Cow<'a, ModelConfig>,
    cache_key: String,
    api_key: Option<String>,
    /// Every configured key: removed from errors, logs and answers.
    secrets: Secrets,
    semaphore: Option<Arc<Semaphore>>,
    /// The most the call can cost (USD), reserved against the spend caps.
    worst_cost: f64,
}

/// What every batch of one embeddings call shares.
struct EmbedCall<'a> {
    e: &'a EmbeddingModelConfig,
    /// The configured name (for logs).
    name: &'a str,
    key: Option<&'a str>,
    secrets: Secrets,
    semaphore: Option<Arc<Semaphore>>,
    /// The length every vector must have, when configured.
    dim: Option<usize>,
    budget: Option<&'a Arc<Budget>>,
}

/// What a call holds while it is in flight: its provider slot and its spend reservations.
struct Admitted {
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
    daily: Option<Reservation>,
    run: Option<Reservation>,
}

/// At most `limit` bytes of a response body, as (lossy) text.
async fn read_capped(mut res: reqwest::Response, limit: usize) -> String {
    let mut body = Vec::new();
    while body.len() < limit {
        match res.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(limit);
    String::from_utf8_lossy(&body).into_owned()
}

enum Prepared<'a> {
    Cached(Completion),
    Call(Box<Call<'a>>),
}

/// What a streamed call reports while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    /// The next piece of the answer.
    Delta(&'a str),
    /// A broken stream is being retried from the start; earlier pieces are void.
    Restart {
        /// The attempt that starts now (2 for the first retry).
        attempt: u32,
    },
}

async fn acquire(
    semaphore: &Option<Arc<Semaphore>>,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, LlmError> {
    match semaphore {
        Some(s) => s
            .clone()
            .acquire_owned()
            .await
            .map(Some)
            .map_err(|e| LlmError::Network(e.to_string())),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    /// Text-only requests keep the cache keys they had before messages could carry images:
    /// the canonical JSON and its hash are pinned.
    #[test]
    fn text_only_cache_keys_do_not_change() {
        let m = ModelConfig {
            name: "m".into(),
            provider: ProviderKind::OpenaiCompatible,
            model: "mod-1".into(),
            base_url: Some("http://h/v1".into()),
            api_key_env: None,
            temperature: Some(0.0),
            top_p: None,
            max_tokens: Some(100),
            reasoning_effort: None,
            price_input_per_mtok: 0.0,
            price_output_per_mtok: 0.0,
        };
        let messages = [Message::system("Be terse."), Message::user("What is 2+2?")];
        assert_eq!(
            serde_json::to_string(&messages).unwrap(),
            r#"[{"role":"system","content":"Be terse."},{"role":"user","content":"What is 2+2?"}]"#
        );
        assert_eq!(messages[1].role, Role::User);
        assert_eq!(
            cache_key(&m, &messages, 0),
            "a55d8962cc014d0520ccfa54edd1be526e3ea8a75b131b376a94d262d49d6ef7"
        );
    }
}
