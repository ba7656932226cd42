//! The LLM gateway: one call shape for every provider, with retries, concurrency limits,
//! a response cache, token and cost accounting, and spend caps; and embeddings through the
//! OpenAI embeddings protocol under the same rules (`Gateway::embed`, its own cache).
//!
//! API keys are read from the environment when a request is built and go only into request
//! headers: never into URLs, logs, errors or responses (`redact` removes every configured
//! key from what comes back before anything is shortened, logged or shown).

mod gateway;
mod protocol;
pub mod redact;
mod retry;
pub mod spend;

pub use gateway::{
    claim_secs, today, BatchPoll, BatchRequest, Embedded, Gateway, GatewayOptions, StreamEvent,
    BATCH_PRICE_FACTOR,
};
pub use retry::RetryPolicy;

use serde::{Deserialize, Serialize};

pub use benchmarks::task::{Message, Role};
pub use wire::Completion;

/// Why a model call failed. Messages never contain API keys.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum LlmError {
    /// No model of that name is configured.
    #[error("no model named '{0}' is configured")]
    UnknownModel(String),
    /// The model's API key variable is not set on the server.
    #[error("the server has no API key for this model (set {0} in its environment)")]
    MissingKey(String),
    /// The provider answered with an error status.
    #[error("provider answered HTTP {status}: {message}")]
    Http {
        /// HTTP status.
        status: u16,
        /// The provider's error message (truncated).
        message: String,
    },
    /// No answer within the request timeout.
    #[error("the provider did not answer within {0} s")]
    Timeout(u64),
    /// The connection failed.
    #[error("network error: {0}")]
    Network(String),
    /// The provider's answer is not what its API documents.
    #[error("malformed provider answer: {0}")]
    Malformed(String),
    /// A spend cap was reached; no new calls are made.
    #[error("spend cap reached: {0}")]
    SpendCap(String),
    /// A streamed answer broke off or the provider reported an error inside the stream.
    #[error("the answer stream broke off: {0}")]
    Stream(String),
    /// Replay-only mode and the answer is not in the cache.
    #[error("replay-only mode: this request is not in the response cache")]
    NotCached,
    /// A provider batch cannot be used, or gave no answer to a request.
    #[error("provider batch: {0}")]
    Batch(String),
}

impl From<llm_protocol::provider::ProtocolError> for LlmError {
    fn from(e: llm_protocol::provider::ProtocolError) -> Self {
        match e {
            llm_protocol::provider::ProtocolError::Malformed(m) => LlmError::Malformed(m),
            llm_protocol::provider::ProtocolError::Stream(m) => LlmError::Stream(m),
        }
    }
}

impl LlmError {
    /// Whether another attempt may succeed (rate limits, server errors, timeouts, network).
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::Timeout(_) | LlmError::Network(_) | LlmError::Stream(_) => true,
            _ => false,
        }
    }
}
