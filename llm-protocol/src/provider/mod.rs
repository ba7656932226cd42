//! The providers' HTTP protocols, written once for the server's gateway and for the page's
//! own-key calls: each provider's request (messages in its shape through
//! [`crate::chat`], decoding settings, the key in a header only), its answer and usage,
//! its event stream, its error text, and the OpenAI embeddings protocol. Pure: the caller
//! sends the request (reqwest on the server, `fetch` in the browser) and hands back the body.

mod answer;
mod embeddings;
mod stream;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{chat, Message, ToolSpec};

pub use answer::{error_message, parse, tool_calls};
pub use embeddings::{build_embeddings, parse_embeddings};
pub use stream::StreamDecoder;

/// Why a provider's answer could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The answer is not what the provider's API documents.
    #[error("{0}")]
    Malformed(String),
    /// The provider reported an error inside its event stream.
    #[error("{0}")]
    Stream(String),
}

/// Which API a model is reached through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// OpenAI's chat completions.
    #[default]
    Openai,
    /// Anthropic's messages API.
    Anthropic,
    /// Google's Gemini API (`generateContent`).
    Gemini,
    /// Any server speaking the OpenAI chat-completions protocol (Ollama, vLLM, llama.cpp).
    OpenaiCompatible,
}

impl Provider {
    /// Every provider, in the order the page offers them.
    pub const ALL: [Provider; 4] = [
        Provider::Openai,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::OpenaiCompatible,
    ];

    /// The provider's name as configuration files and the page write it.
    pub fn id(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::OpenaiCompatible => "openai-compatible",
        }
    }

    /// The provider named `id` (as [`Provider::id`] writes it).
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            Provider::Openai => "OpenAI",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Google Gemini",
            Provider::OpenaiCompatible => "OpenAI-compatible URL (Ollama, vLLM, …)",
        }
    }

    /// The environment variable that holds the provider's key by convention.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Provider::Openai => Some("OPENAI_API_KEY"),
            Provider::Anthropic => Some("ANTHROPIC_API_KEY"),
            Provider::Gemini => Some("GEMINI_API_KEY"),
            Provider::OpenaiCompatible => None,
        }
    }

    /// The API's base URL unless one is given (`None`: one must be).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::Openai => Some("https://api.openai.com/v1"),
            Provider::Anthropic => Some("https://api.anthropic.com/v1"),
            Provider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            Provider::OpenaiCompatible => None,
        }
    }

    /// Whether the provider's streams end with OpenAI's `[DONE]`.
    fn openai_shaped(self) -> bool {
        matches!(self, Provider::Openai | Provider::OpenaiCompatible)
    }
}

/// One HTTP POST to a provider.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpCall {
    /// The full URL (never holds a key).
    pub url: String,
    /// The headers, the key among them.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

/// How a model decodes, where the configuration sets it (unset: the provider's default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoding {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling: the smallest set of tokens whose probability reaches `top_p`.
    pub top_p: Option<f64>,
    /// Most answer tokens (Anthropic requires a number: [`ANTHROPIC_MAX_TOKENS`] if unset).
    pub max_tokens: Option<u64>,
    /// OpenAI's `reasoning_effort`.
    pub reasoning_effort: Option<String>,
}

/// What Anthropic's `max_tokens` is when none is configured (its API requires one).
pub const ANTHROPIC_MAX_TOKENS: u64 = 8192;

/// Who sends a request: the page itself needs one header more for Anthropic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The server's gateway.
    Server,
    /// A web page, with the user's own key (Anthropic requires
    /// `anthropic-dangerous-direct-browser-access: true` of such calls).
    Browser,
}

/// The request asking `model` of `provider` at `base` (no trailing `/`) for the answer to
/// `messages`, with `key` (if any) in a header.
pub fn build(
    provider: Provider,
    base: &str,
    model: &str,
    decoding: &Decoding,
    messages: &[Message],
    key: Option<&str>,
    caller: Caller,
) -> HttpCall {
    let json_type = ("content-type".to_string(), "application/json".to_string());
    match provider {
        Provider::Openai | Provider::OpenaiCompatible => {
            let mut body = json!({ "model": model, "messages": chat::openai_messages(messages) });
            if let Some(t) = decoding.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(p) = decoding.top_p {
                body["top_p"] = json!(p);
            }
            if let Some(n) = decoding.max_tokens {
                body["max_completion_tokens"] = json!(n);
            }
            if let Some(e) = &decoding.reasoning_effort {
                body["reasoning_effort"] = json!(e);
            }
            let mut headers = vec![json_type];
            if let Some(k) = key {
                headers.push(("authorization".into(), format!("Bearer {k}")));
            }
            HttpCall {
                url: format!("{base}/chat/completions"),
                headers,
                body,
            }
        }
        Provider::Anthropic => {
            let mut body = json!({
                "model": model,
                "max_tokens": decoding.max_tokens.unwrap_or(ANTHROPIC_MAX_TOKENS),
                "messages": chat::anthropic_messages(messages),
            });
            if let Some(system) = chat::system_text(messages) {
                body["system"] = json!(system);
            }
            if let Some(t) = decoding.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(p) = decoding.top_p {
                body["top_p"] = json!(p);
            }
            let mut headers = vec![json_type, ("anthropic-version".into(), "2023-06-01".into())];
            if caller == Caller::Browser {
                headers.push((
                    "anthropic-dangerous-direct-browser-access".into(),
                    "true".into(),
                ));
            }
            if let Some(k) = key {
                headers.push(("x-api-key".into(), k.to_string()));
            }
            HttpCall {
                url: format!("{base}/messages"),
                headers,
                body,
            }
        }
        Provider::Gemini => {
            let mut config = json!({});
            if let Some(t) = decoding.temperature {
                config["temperature"] = json!(t);
            }
            if let Some(p) = decoding.top_p {
                config["topP"] = json!(p);
            }
            if let Some(n) = decoding.max_tokens {
                config["maxOutputTokens"] = json!(n);
            }
            let mut headers = vec![json_type];
            if let Some(k) = key {
                // In a header, not the documented `?key=` query, so it never lands in a URL.
                headers.push(("x-goog-api-key".into(), k.to_string()));
            }
            let mut body = json!({
                "contents": chat::gemini_contents(messages),
                "generationConfig": config,
            });
            // System messages are not turns in Gemini's API: they go in `systemInstruction`.
            if let Some(system) = chat::gemini_system_instruction(messages) {
                body["systemInstruction"] = system;
            }
            HttpCall {
                url: format!("{base}/models/{model}:generateContent"),
                headers,
                body,
            }
        }
    }
}

/// `call` (a [`build`] of `provider`) offering the model `tools` to call (function calling),
/// in the provider's shape ([`chat::openai_tools`] and its siblings); no tools, no change.
pub fn with_tools(provider: Provider, mut call: HttpCall, tools: &[ToolSpec]) -> HttpCall {
    if tools.is_empty() {
        return call;
    }
    call.body["tools"] = match provider {
        Provider::Openai | Provider::OpenaiCompatible => chat::openai_tools(tools),
        Provider::Anthropic => chat::anthropic_tools(tools),
        Provider::Gemini => chat::gemini_tools(tools),
    };
    call
}

/// `call` (a [`build`] of `provider`) asking for server-sent events instead (OpenAI:
/// `stream` with usage in the last chunk; Anthropic: `stream`; Gemini:
/// `streamGenerateContent?alt=sse`).
pub fn streaming(provider: Provider, mut call: HttpCall) -> HttpCall {
    match provider {
        Provider::Openai | Provider::OpenaiCompatible => {
            call.body["stream"] = json!(true);
            call.body["stream_options"] = json!({ "include_usage": true });
        }
        Provider::Anthropic => call.body["stream"] = json!(true),
        Provider::Gemini => {
            call.url = call
                .url
                .replace(":generateContent", ":streamGenerateContent?alt=sse");
        }
    }
    call
}
