//! The gateway: cache lookup, spend caps, key lookup, concurrency limit, retries.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;

use super::protocol::{build, build_stream, error_message, parse, HttpCall, StreamDecoder};
use super::retry::{parse_retry_after, RetryPolicy};
use super::{Completion, LlmError, Message};
use crate::config::{Config, ModelConfig};
use crate::storage::Storage;

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
}

/// The key of a request in the response cache: provider, endpoint, model, messages, sampling
/// parameters and the sample index.
pub fn cache_key(m: &ModelConfig, messages: &[Message], sample: u32) -> String {
    let canonical = json!({
        "provider": m.provider,
        "base_url": m.base_url,
        "model": m.model,
        "messages": messages,
        "temperature": m.temperature,
        "max_tokens": m.max_tokens,
        "reasoning_effort": m.reasoning_effort,
        "sample": sample,
    });
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// Remove any copy of the key from an error (some providers echo a wrong key back).
fn scrub(e: LlmError, key: Option<&str>) -> LlmError {
    let Some(key) = key.filter(|k| k.len() >= 4) else {
        return e;
    };
    match e {
        LlmError::Http { status, message } => LlmError::Http {
            status,
            message: message.replace(key, "[redacted]"),
        },
        LlmError::Network(m) => LlmError::Network(m.replace(key, "[redacted]")),
        LlmError::Malformed(m) => LlmError::Malformed(m.replace(key, "[redacted]")),
        other => other,
    }
}

/// Today's number (days since 1970-01-01, UTC), for the daily spend cap.
pub fn today() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0)
}

fn endpoint_key(m: &ModelConfig) -> String {
    format!("{:?} {}", m.provider, m.base_url.as_deref().unwrap_or(""))
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
        for m in &config.models {
            limits.entry(endpoint_key(m)).or_insert_with(|| {
                Arc::new(Semaphore::new(
                    config.limits.max_concurrency_per_provider.max(1),
                ))
            });
        }
        Ok(Self {
            config: Arc::new(config),
            storage,
            client,
            limits: Arc::new(limits),
            options,
        })
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

    /// Cache lookup, spend cap and key lookup shared by both call shapes.
    fn prepare(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Prepared<'_>, LlmError> {
        let m = self
            .config
            .model(name)
            .ok_or_else(|| LlmError::UnknownModel(name.to_string()))?;
        let key = cache_key(m, messages, sample);
        if self.options.cache || self.options.replay_only {
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
        if let Some(cap) = self.config.limits.daily_spend_usd {
            let spent = self.storage.spend_on(today()).unwrap_or(0.0);
            if spent >= cap {
                return Err(LlmError::SpendCap(format!(
                    "today's spend ${spent:.2} reached the daily cap ${cap:.2}"
                )));
            }
        }
        let key_env = m
            .api_key_env
            .clone()
            .or_else(|| m.provider.default_key_env().map(str::to_string));
        let api_key = match &key_env {
            Some(var) => match std::env::var(var) {
                Ok(v) if !v.is_empty() => Some(v),
                _ if m.provider.default_key_env().is_some() => {
                    return Err(LlmError::MissingKey(var.clone()))
                }
                _ => None,
            },
            None => None,
        };
        Ok(Prepared::Call(Call {
            m,
            cache_key: key,
            api_key,
            semaphore: self.limits.get(&endpoint_key(m)).cloned(),
        }))
    }

    /// Account for and cache a finished answer.
    fn record(
        &self,
        call: &Call<'_>,
        text: String,
        tokens: (u64, u64),
        attempts: u32,
    ) -> Completion {
        let (input_tokens, output_tokens) = tokens;
        let cost_usd = call.m.cost(input_tokens, output_tokens);
        let _ = self.storage.add_spend(today(), cost_usd);
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
        let call = match self.prepare(name, messages, sample)? {
            Prepared::Cached(c) => return Ok(c),
            Prepared::Call(call) => call,
        };
        let http = build(call.m, messages, call.api_key.as_deref());
        let _permit = acquire(&call.semaphore).await?;
        let policy = self.policy();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (result, retry_after) = self.send(&http).await;
            let outcome = result.and_then(|body| {
                parse(call.m.provider, &body).map_err(|e| scrub(e, call.api_key.as_deref()))
            });
            match outcome {
                Ok((text, i, o)) => return Ok(self.record(&call, text, (i, o), attempts)),
                Err(e) if e.is_transient() && attempts <= policy.max_retries => {
                    let wait = policy.delay(attempts, retry_after, rand::random::<f64>());
                    tracing::warn!(
                        model = name,
                        attempt = attempts,
                        "retrying in {wait:?}: {e}"
                    );
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(scrub(e, call.api_key.as_deref())),
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
        let http = build_stream(call.m, messages, call.api_key.as_deref());
        let _permit = acquire(&call.semaphore).await?;
        let policy = self.policy();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut decoder = StreamDecoder::new(call.m.provider);
            let (result, retry_after) = self.send_stream(&http, &mut decoder, &mut on).await;
            match result {
                Ok(()) => {
                    let tokens = (decoder.input_tokens, decoder.output_tokens);
                    return Ok(self.record(&call, decoder.text, tokens, attempts));
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
                Err(e) => return Err(scrub(e, call.api_key.as_deref())),
            }
        }
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
        let text = res.text().await.unwrap_or_default();
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
                Err(e) => return (Err(e), None),
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
    m: &'a ModelConfig,
    cache_key: String,
    api_key: Option<String>,
    semaphore: Option<Arc<Semaphore>>,
}

enum Prepared<'a> {
    Cached(Completion),
    Call(Call<'a>),
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
