//! A model called with the user's own key, straight from the browser: what the person must
//! fill in, the request ([`crate::provider`], the protocol the server's gateway speaks too,
//! without streaming) and its answer or error in words for the person. Pure (the page sends
//! the request).
//!
//! The key goes into a request header only (never into a URL), and an error message that
//! repeats it has it replaced by `[your key]` before anyone sees it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::{self, Caller, Decoding, ProtocolError, Provider};
use crate::Message;

/// A model the user set up with their own key (the key is kept apart from it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectModel {
    /// Whose API.
    pub provider: Provider,
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
        if key.is_empty() && self.provider != Provider::OpenaiCompatible {
            return Err(DirectError::Setup(format!(
                "paste your {} API key",
                self.provider.label()
            )));
        }
        let base = self.base()?;
        let key = (!key.is_empty()).then_some(key);
        let call = provider::build(
            self.provider,
            &base,
            self.model.trim(),
            &Decoding::default(),
            messages,
            key,
            Caller::Browser,
        );
        Ok(DirectCall {
            url: call.url,
            headers: call.headers,
            body: call.body.to_string(),
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
            let said = redact(&provider::error_message(body), key);
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
        let (text, input_tokens, output_tokens) =
            provider::parse(self.provider, &v).map_err(|e| match e {
                ProtocolError::Malformed(m) | ProtocolError::Stream(m) => DirectError::Malformed(m),
            })?;
        Ok(DirectAnswer {
            text,
            input_tokens,
            output_tokens,
        })
    }
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
    use serde_json::json;

    fn model(provider: Provider) -> DirectModel {
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
        let call = model(Provider::Openai)
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
        let call = model(Provider::Anthropic)
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
        let call = model(Provider::Gemini)
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
        let mut m = model(Provider::OpenaiCompatible);
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
        let e = model(Provider::Openai).request(" ", &messages());
        assert_eq!(e.unwrap_err().to_string(), "paste your OpenAI API key");
        let mut nameless = model(Provider::Openai);
        nameless.model = " ".into();
        assert!(nameless.request("k", &messages()).is_err());
    }

    #[test]
    fn answers_of_each_provider() {
        let o = r#"{"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let a = model(Provider::Openai).read_answer(200, o, "k").unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("A", 3, 4)
        );
        let an = r#"{"content":[{"type":"thinking","thinking":"…"},{"type":"text","text":"B"}],"usage":{"input_tokens":5,"output_tokens":6}}"#;
        let a = model(Provider::Anthropic)
            .read_answer(200, an, "k")
            .unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("B", 5, 6)
        );
        let g = r#"{"candidates":[{"content":{"parts":[{"text":"C"}]}}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":8}}"#;
        let a = model(Provider::Gemini).read_answer(200, g, "k").unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens),
            ("C", 7, 8)
        );
        let e = model(Provider::Openai).read_answer(200, "{}", "k");
        assert!(matches!(e, Err(DirectError::Malformed(_))));
        let e = model(Provider::Openai).read_answer(200, "<html>", "k");
        assert!(matches!(e, Err(DirectError::Malformed(_))));
    }

    #[test]
    fn errors_are_said_plainly_and_never_repeat_the_key() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-abcdef."}}"#;
        let e = model(Provider::Openai)
            .read_answer(401, body, "sk-abcdef")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the provider refused the key (HTTP 401): Incorrect API key provided: [your key]."
        );
        let e = model(Provider::Openai)
            .read_answer(500, &"x".repeat(1000), "k")
            .unwrap_err()
            .to_string();
        assert!(e.chars().count() < 400, "{e}");
    }

    /// The question and one image, as an OmniMatBench multimodal item asks.
    fn with_image() -> Vec<Message> {
        vec![
            Message::system("Be terse."),
            Message::user("Count the atoms.").with_images(vec![crate::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }]),
        ]
    }

    #[test]
    fn an_image_goes_after_the_text_in_each_providers_shape() {
        let body = |p: Provider| -> Value {
            let call = model(p).request("k", &with_image()).unwrap();
            serde_json::from_str(&call.body).unwrap()
        };
        assert_eq!(
            body(Provider::Openai),
            json!({"model": "m1", "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(Provider::Anthropic),
            json!({"model": "m1", "max_tokens": 8192, "system": "Be terse.", "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(Provider::Gemini),
            json!({"generationConfig": {}, "systemInstruction": {"parts": [{"text": "Be terse."}]}, "contents": [
                {"role": "user", "parts": [
                    {"text": "Count the atoms."},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
    }

    #[test]
    fn providers_by_id() {
        for p in Provider::ALL {
            assert_eq!(Provider::from_id(p.id()), Some(p));
        }
        assert_eq!(Provider::from_id("nope"), None);
        let m: DirectModel =
            serde_json::from_str(r#"{"provider":"openai-compatible","model":"x"}"#).unwrap();
        assert_eq!(m.provider, Provider::OpenaiCompatible);
    }
}
