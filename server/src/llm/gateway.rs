//! The gateway: cache lookup, spend caps, key lookup, concurrency limit, retries.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::protocol::{build, error_message, parse};
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

    /// Ask model `name` for a completion of `messages` (`sample` distinguishes repeated
    /// samples of the same prompt in the cache).
    pub async fn complete(
        &self,
        name: &str,
        messages: &[Message],
        sample: u32,
    ) -> Result<Completion, LlmError> {
        let m = self
            .config
            .model(name)
            .ok_or_else(|| LlmError::UnknownModel(name.to_string()))?;
        let key = cache_key(m, messages, sample);
        if self.options.cache || self.options.replay_only {
            if let Ok(Some((text, input_tokens, output_tokens))) = self.storage.cache_get(&key) {
                return Ok(Completion {
                    text,
                    input_tokens,
                    output_tokens,
                    cost_usd: 0.0,
                    cached: true,
                    attempts: 0,
                });
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
        let call = build(m, messages, api_key.as_deref());
        let semaphore = self.limits.get(&endpoint_key(m)).cloned();
        let _permit = match &semaphore {
            Some(s) => Some(
                s.acquire()
                    .await
                    .map_err(|e| LlmError::Network(e.to_string()))?,
            ),
            None => None,
        };
        let policy = self.policy();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (result, retry_after) = self.send(&call).await;
            match result {
                Ok(body) => {
                    let (text, input_tokens, output_tokens) =
                        parse(m.provider, &body).map_err(|e| scrub(e, api_key.as_deref()))?;
                    let cost_usd = m.cost(input_tokens, output_tokens);
                    let _ = self.storage.add_spend(today(), cost_usd);
                    if self.options.cache {
                        let _ =
                            self.storage
                                .cache_put(&key, name, &text, input_tokens, output_tokens);
                    }
                    return Ok(Completion {
                        text,
                        input_tokens,
                        output_tokens,
                        cost_usd,
                        cached: false,
                        attempts,
                    });
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
                Err(e) => return Err(scrub(e, api_key.as_deref())),
            }
        }
    }

    async fn send(
        &self,
        call: &super::protocol::HttpCall,
    ) -> (Result<serde_json::Value, LlmError>, Option<Duration>) {
        let mut req = self.client.post(&call.url).json(&call.body);
        for (k, v) in &call.headers {
            req = req.header(k, v);
        }
        let res = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return (
                    Err(LlmError::Timeout(self.config.limits.request_timeout_secs)),
                    None,
                )
            }
            // reqwest's error text names the URL, never headers.
            Err(e) => return (Err(LlmError::Network(e.without_url().to_string())), None),
        };
        let status = res.status();
        let retry_after = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = match res.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => {
                return (
                    Err(LlmError::Timeout(self.config.limits.request_timeout_secs)),
                    None,
                )
            }
            Err(e) => return (Err(LlmError::Network(e.without_url().to_string())), None),
        };
        if !status.is_success() {
            return (
                Err(LlmError::Http {
                    status: status.as_u16(),
                    message: error_message(&text),
                }),
                retry_after,
            );
        }
        match serde_json::from_str(&text) {
            Ok(v) => (Ok(v), None),
            Err(e) => (Err(LlmError::Malformed(format!("not JSON: {e}"))), None),
        }
    }
}
