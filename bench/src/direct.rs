//! A model called with the user's own key, straight from the browser: the HTTP request for
//! each provider's API and the reading of its answer. Pure (the page sends the request);
//! the same request shapes the server's gateway sends (messages through [`crate::task::chat`],
//! images included), without streaming.
//!
//! The key goes into a request header only (never into a URL), and an error message that
//! repeats it has it replaced by `[your key]` before anyone sees it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::task::{chat, Message};

/// The providers a browser can call directly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirectProvider {
    /// OpenAI's chat completions.
    #[default]
    Openai,
    /// Anthropic's messages API (with `anthropic-dangerous-direct-browser-access: true`,
    /// which Anthropic requires of calls made from a web page).
    Anthropic,
    /// Google's Gemini API (`generateContent`).
    Gemini,
    /// Any OpenAI-compatible server at a base URL (Ollama, vLLM, llama.cpp, …).
    OpenaiCompatible,
}

impl DirectProvider {
    /// Every provider, in the order the page offers them.
    pub const ALL: [DirectProvider; 4] = [
        DirectProvider::Openai,
        DirectProvider::Anthropic,
        DirectProvider::Gemini,
        DirectProvider::OpenaiCompatible,
    ];

    /// The provider's name as the page and the stored settings write it.
    pub fn id(self) -> &'static str {
        match self {
            DirectProvider::Openai => "openai",
            DirectProvider::Anthropic => "anthropic",
            DirectProvider::Gemini => "gemini",
            DirectProvider::OpenaiCompatible => "openai-compatible",
        }
    }

    /// The provider named `id` (as [`DirectProvider::id`] writes it).
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            DirectProvider::Openai => "OpenAI",
            DirectProvider::Anthropic => "Anthropic",
            DirectProvider::Gemini => "Google Gemini",
            DirectProvider::OpenaiCompatible => "OpenAI-compatible URL (Ollama, vLLM, …)",
        }
    }

    /// The API's base URL unless the user gives one (`None`: the user must).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            DirectProvider::Openai => Some("https://api.openai.com/v1"),
            DirectProvider::Anthropic => Some("https://api.anthropic.com/v1"),
            DirectProvider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            DirectProvider::OpenaiCompatible => None,
        }
    }
}

/// A model the user set up with their own key (the key is kept apart from it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectModel {
    /// Whose API.
    pub provider: DirectProvider,
    /// The API's base URL; empty for the provider's own.
    #[serde(default)]
    pub base_url: String,
    /// The model's name at the provider (`gpt-5.4`, `claude-opus-4-6`, `llama3.2`).
    pub model: String,
}

/// One HTTP POST to make.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectCall {
    /// The full URL (never holds the key).
    pub url: String,
    /// The headers, the key among them.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
}

/// The model's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectAnswer {
    /// The text.
    pub text: String,
    /// Prompt tokens, as the provider counted them (0 if it did not say).
    pub input_tokens: u64,
    /// Answer tokens (0 if the provider did not say).
    pub output_tokens: u64,
}

/// Why a direct call could not be made or read, in words for the person at the page.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DirectError {
    /// Something the user must fill in.
    #[error("{0}")]
    Setup(String),
    /// The provider answered with an error.
    #[error("{0}")]
    Refused(String),
    /// The provider's answer was not what its API documents.
    #[error("the provider's answer could not be read: {0}")]
    Malformed(String),
}

/// Anthropic requires `max_tokens`; the server's default.
const ANTHROPIC_MAX_TOKENS: u64 = 8192;

impl DirectModel {
    /// The base URL the call goes to, without a trailing `/`.
    pub fn base(&self) -> Result<String, DirectError> {
        let given = self.base_url.trim();
        let base = if given.is_empty() {
            self.provider.default_base_url().ok_or_else(|| {
                DirectError::Setup(
                    "give the server's base URL, such as http://localhost:11434/v1 for Ollama"
                        .into(),
                )
            })?
        } else {
            given
        };
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(DirectError::Setup(format!(
                "the base URL must start with https:// (or http:// for a server on this \
                 computer), not '{base}'"
            )));
        }
        Ok(base.trim_end_matches('/').to_string())
    }

    /// The request that asks this model `messages` with `key`.
    pub fn request(&self, key: &str, messages: &[Message]) -> Result<DirectCall, DirectError> {
        let key = key.trim();
        if self.model.trim().is_empty() {
            return Err(DirectError::Setup("give the model's name".into()));
        }
        // A local OpenAI-compatible server usually needs no key; the providers always do.
        if key.is_empty() && self.provider != DirectProvider::OpenaiCompatible {
            return Err(DirectError::Setup(format!(
                "paste your {} API key",
                self.provider.label()
            )));
        }
        let base = self.base()?;
        let model = self.model.trim();
        let json = ("content-type".to_string(), "application/json".to_string());
        let (url, headers, body) = match self.provider {
            DirectProvider::Openai | DirectProvider::OpenaiCompatible => {
                let mut headers = vec![json];
                if !key.is_empty() {
                    headers.push(("authorization".into(), format!("Bearer {key}")));
                }
                (
                    format!("{base}/chat/completions"),
                    headers,
                    json!({ "model": model, "messages": chat::openai_messages(messages) }),
                )
            }
            DirectProvider::Anthropic => {
                let mut body = json!({
                    "model": model,
                    "max_tokens": ANTHROPIC_MAX_TOKENS,
                    "messages": chat::anthropic_messages(messages),
                });
                if let Some(system) = chat::system_text(messages) {
                    body["system"] = json!(system);
                }
                (
                    format!("{base}/messages"),
                    vec![
                        json,
                        ("anthropic-version".into(), "2023-06-01".into()),
                        (
                            "anthropic-dangerous-direct-browser-access".into(),
                            "true".into(),
                        ),
                        ("x-api-key".into(), key.to_string()),
                    ],
                    body,
                )
            }
            DirectProvider::Gemini => {
                let mut body = json!({ "contents": chat::gemini_contents(messages) });
                if let Some(system) = chat::gemini_system_instruction(messages) {
                    body["systemInstruction"] = system;
                }
                (
                    // The key in a header, not the documented `?key=`: never in a URL.
                    format!("{base}/models/{model}:generateContent"),
                    vec![json, ("x-goog-api-key".into(), key.to_string())],
                    body,
                )
            }
        };
        Ok(DirectCall {
            url,
            headers,
            body: body.to_string(),
        })
    }

    /// Read the provider's answer: HTTP `status` and the response `body`. `key` is removed
    /// from any error message that repeats it.
    pub fn read_answer(
        &self,
        status: u16,
        body: &str,
        key: &str,
    ) -> Result<DirectAnswer, DirectError> {
        if !(200..300).contains(&status) {
            let said = redact(&error_message(body), key);
            let what = match status {
                401 | 403 => "the provider refused the key",
                404 => "the provider does not know this model or address",
                429 => "the provider says too many requests or no credit left",
                _ => "the provider answered with an error",
            };
            return Err(DirectError::Refused(format!(
                "{what} (HTTP {status}): {}",
                shorten(&said, 300)
            )));
        }
        let v: Value = serde_json::from_str(body)
            .map_err(|_| DirectError::Malformed("it is not JSON".into()))?;
        let tokens = |v: &Value| v.as_u64().unwrap_or(0);
        let missing = |what: &str| DirectError::Malformed(format!("it has no {what}"));
        let (text, input_tokens, output_tokens) = match self.provider {
            DirectProvider::Openai | DirectProvider::OpenaiCompatible => {
                let text = v["choices"][0]["message"]["content"]
                    .as_str()
                    .ok_or_else(|| missing("choices[0].message.content"))?
                    .to_string();
                let u = &v["usage"];
                (
                    text,
                    tokens(&u["prompt_tokens"]),
                    tokens(&u["completion_tokens"]),
                )
            }
            DirectProvider::Anthropic => {
                let text = v["content"]
                    .as_array()
                    .ok_or_else(|| missing("content"))?
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                let u = &v["usage"];
                (
                    text,
                    tokens(&u["input_tokens"]),
                    tokens(&u["output_tokens"]),
                )
            }
            DirectProvider::Gemini => {
                let text = v["candidates"][0]["content"]["parts"]
                    .as_array()
                    .ok_or_else(|| missing("candidates[0].content.parts"))?
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect();
                let u = &v["usageMetadata"];
                (
                    text,
                    tokens(&u["promptTokenCount"]),
                    tokens(&u["candidatesTokenCount"]),
                )
            }
        };
        Ok(DirectAnswer {
            text,
            input_tokens,
            output_tokens,
        })
    }
}

/// The message of a provider's error body (`{"error": {"message": …}}` or `{"error": "…"}`),
/// else the body itself.
fn error_message(body: &str) -> String {
    let v: Option<Value> = serde_json::from_str(body).ok();
    v.as_ref()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
        })
        .map(str::to_string)
        .unwrap_or_else(|| body.trim().to_string())
}

/// `text` with every occurrence of `key` (if it is long enough to be one) replaced.
pub fn redact(text: &str, key: &str) -> String {
    let key = key.trim();
    if key.len() < 4 {
        return text.to_string();
    }
    text.replace(key, "[your key]")
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: DirectProvider) -> DirectModel {
        DirectModel {
            provider,
            base_url: String::new(),
            model: "m1".into(),
        }
    }

    fn messages() -> Vec<Message> {
        vec![Message::system("Be terse."), Message::user("hi")]
    }

    fn header<'a>(call: &'a DirectCall, name: &str) -> Option<&'a str> {
        call.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn openai_request_is_chat_completions_with_a_bearer_key() {
        let call = model(DirectProvider::Openai)
            .request(" sk-secret ", &messages())
            .unwrap();
        assert_eq!(call.url, "https://api.openai.com/v1/chat/completions");
        assert_eq!(header(&call, "authorization"), Some("Bearer sk-secret"));
        let body: Value = serde_json::from_str(&call.body).unwrap();
        assert_eq!(
            body,
            json!({"model": "m1", "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": "hi"}]})
        );
    }

    #[test]
    fn anthropic_request_carries_the_browser_access_header_and_the_system_apart() {
        let call = model(DirectProvider::Anthropic)
            .request("ak", &messages())
            .unwrap();
        assert_eq!(call.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(
            header(&call, "anthropic-dangerous-direct-browser-access"),
            Some("true")
        );
        assert_eq!(header(&call, "anthropic-version"), Some("2023-06-01"));
        assert_eq!(header(&call, "x-api-key"), Some("ak"));
        let body: Value = serde_json::from_str(&call.body).unwrap();
        assert_eq!(body["system"], "Be terse.");
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(body["max_tokens"], 8192);
    }

    #[test]
    fn gemini_key_goes_in_a_header_never_the_url() {
        let call = model(DirectProvider::Gemini)
            .request("gk-123456", &messages())
            .unwrap();
        assert_eq!(
            call.url,
            "https://generativelanguage.googleapis.com/v1beta/models/m1:generateContent"
        );
        assert!(!call.url.contains("gk-123456"));
        assert_eq!(header(&call, "x-goog-api-key"), Some("gk-123456"));
        let body: Value = serde_json::from_str(&call.body).unwrap();
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Be terse.");
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [{"text": "hi"}]}])
        );
    }

    #[test]
    fn compatible_servers_need_a_base_url_but_no_key() {
        let mut m = model(DirectProvider::OpenaiCompatible);
        assert!(matches!(
            m.request("", &messages()),
            Err(DirectError::Setup(_))
        ));
        m.base_url = "http://localhost:11434/v1/".into();
        let call = m.request("", &messages()).unwrap();
        assert_eq!(call.url, "http://localhost:11434/v1/chat/completions");
        assert_eq!(header(&call, "authorization"), None);
        m.base_url = "localhost:11434".into();
        assert!(m
            .request("", &messages())
            .unwrap_err()
            .to_string()
            .contains("https://"));
        // The providers themselves always need a key, and every model a name.
        let e = model(DirectProvider::Openai).request(" ", &messages());
        assert_eq!(e.unwrap_err().to_string(), "paste your OpenAI API key");
        let mut nameless = model(DirectProvider::Openai);
        nameless.model = " ".into();
        assert!(nameless.request("k", &messages()).is_err());
    }

    #[test]
    fn answers_of_each_provider() {
        let o = r#"{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let a = model(DirectProvider::Openai)
            .read_answer(200, o, "k")
            .unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("A", 3, 4)
        );
        let an = r#"{"content":[{"type":"thinking","thinking":"…"},{"type":"text","text":"B"}],"usage":{"input_tokens":5,"output_tokens":6}}"#;
        let a = model(DirectProvider::Anthropic)
            .read_answer(200, an, "k")
            .unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("B", 5, 6)
        );
        let g = r#"{"candidates":[{"content":{"parts":[{"text":"C"}]}}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":8}}"#;
        let a = model(DirectProvider::Gemini)
            .read_answer(200, g, "k")
            .unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("C", 7, 8)
        );
        let e = model(DirectProvider::Openai).read_answer(200, "{}", "k");
        assert!(matches!(e, Err(DirectError::Malformed(_))));
        let e = model(DirectProvider::Openai).read_answer(200, "<html>", "k");
        assert!(matches!(e, Err(DirectError::Malformed(_))));
    }

    #[test]
    fn errors_are_said_plainly_and_never_repeat_the_key() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-abcdef."}}"#;
        let e = model(DirectProvider::Openai)
            .read_answer(401, body, "sk-abcdef")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the provider refused the key (HTTP 401): Incorrect API key provided: [your key]."
        );
        let e = model(DirectProvider::Openai)
            .read_answer(500, &"x".repeat(1000), "k")
            .unwrap_err()
            .to_string();
        assert!(e.chars().count() < 400, "{e}");
    }

    /// The question and one image, as an OmniMatBench multimodal item asks.
    fn with_image() -> Vec<Message> {
        vec![
            Message::system("Be terse."),
            Message::user("Count the atoms.").with_images(vec![crate::task::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }]),
        ]
    }

    #[test]
    fn an_image_goes_after_the_text_in_each_providers_shape() {
        let body = |p: DirectProvider| -> Value {
            let call = model(p).request("k", &with_image()).unwrap();
            serde_json::from_str(&call.body).unwrap()
        };
        assert_eq!(
            body(DirectProvider::Openai),
            json!({"model": "m1", "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(DirectProvider::Anthropic),
            json!({"model": "m1", "max_tokens": 8192, "system": "Be terse.", "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(DirectProvider::Gemini),
            json!({"systemInstruction": {"parts": [{"text": "Be terse."}]}, "contents": [
                {"role": "user", "parts": [
                    {"text": "Count the atoms."},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
    }

    #[test]
    fn providers_by_id() {
        for p in DirectProvider::ALL {
            assert_eq!(DirectProvider::from_id(p.id()), Some(p));
        }
        assert_eq!(DirectProvider::from_id("nope"), None);
        let m: DirectModel =
            serde_json::from_str(r#"{"provider":"openai-compatible","model":"x"}"#).unwrap();
        assert_eq!(m.provider, DirectProvider::OpenaiCompatible);
    }
}
