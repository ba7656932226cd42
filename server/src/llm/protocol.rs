//! Request bodies and answer parsing of each provider's HTTP API. Messages take each
//! provider's shape through `bench::task::chat`, as the page's own-key calls do.

use serde_json::{json, Value};

use bench::task::chat;

use super::{LlmError, Message};
use crate::config::{EmbeddingModelConfig, ModelConfig, ProviderKind};

/// Method-independent description of one HTTP request to a provider.
pub struct HttpCall {
    /// Full URL (never contains a key).
    pub url: String,
    /// Headers, the key among them.
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Value,
}

fn base_url(m: &ModelConfig) -> String {
    base_url_of(m.provider, m.base_url.as_deref())
}

/// The endpoint base of `provider` with an optional configured `base` (without a trailing
/// slash); OpenAI's default can be moved by `OPENAI_BASE_URL`.
fn base_url_of(provider: ProviderKind, base: Option<&str>) -> String {
    let base = base
        .map(str::to_string)
        .or_else(|| match provider {
            ProviderKind::Openai => std::env::var("OPENAI_BASE_URL").ok(),
            _ => None,
        })
        .or_else(|| provider.default_base_url().map(str::to_string))
        .unwrap_or_default();
    base.trim_end_matches('/').to_string()
}

/// The HTTP request for `messages` to model `m` with `key` (if any).
pub fn build(m: &ModelConfig, messages: &[Message], key: Option<&str>) -> HttpCall {
    let base = base_url(m);
    match m.provider {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
            let mut body = json!({ "model": m.model, "messages": chat::openai_messages(messages) });
            if let Some(t) = m.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(n) = m.max_tokens {
                body["max_completion_tokens"] = json!(n);
            }
            if let Some(e) = &m.reasoning_effort {
                body["reasoning_effort"] = json!(e);
            }
            let mut headers = vec![("content-type".into(), "application/json".into())];
            if let Some(k) = key {
                headers.push(("authorization".into(), format!("Bearer {k}")));
            }
            HttpCall {
                url: format!("{base}/chat/completions"),
                headers,
                body,
            }
        }
        ProviderKind::Anthropic => {
            let mut body = json!({
                "model": m.model,
                "max_tokens": m.max_tokens.unwrap_or(8192),
                "messages": chat::anthropic_messages(messages),
            });
            if let Some(system) = chat::system_text(messages) {
                body["system"] = json!(system);
            }
            if let Some(t) = m.temperature {
                body["temperature"] = json!(t);
            }
            let mut headers = vec![
                ("content-type".into(), "application/json".into()),
                ("anthropic-version".into(), "2023-06-01".into()),
            ];
            if let Some(k) = key {
                headers.push(("x-api-key".into(), k.to_string()));
            }
            HttpCall {
                url: format!("{base}/messages"),
                headers,
                body,
            }
        }
        ProviderKind::Gemini => {
            let mut config = json!({});
            if let Some(t) = m.temperature {
                config["temperature"] = json!(t);
            }
            if let Some(n) = m.max_tokens {
                config["maxOutputTokens"] = json!(n);
            }
            let mut headers = vec![("content-type".into(), "application/json".into())];
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
                url: format!("{base}/models/{}:generateContent", m.model),
                headers,
                body,
            }
        }
    }
}

/// The streaming variant of [`build`]: the same request asking for server-sent events
/// (OpenAI: `stream` with usage in the last chunk; Anthropic: `stream`; Gemini:
/// `streamGenerateContent?alt=sse`).
pub fn build_stream(m: &ModelConfig, messages: &[Message], key: Option<&str>) -> HttpCall {
    let mut call = build(m, messages, key);
    match m.provider {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
            call.body["stream"] = json!(true);
            call.body["stream_options"] = json!({ "include_usage": true });
        }
        ProviderKind::Anthropic => call.body["stream"] = json!(true),
        ProviderKind::Gemini => {
            call.url = call
                .url
                .replace(":generateContent", ":streamGenerateContent?alt=sse");
        }
    }
    call
}

/// Reassembles a provider's event stream into the answer: feed it each server-sent event
/// in order; it returns the text each event adds and keeps the token counts. Only a stream
/// that reached the provider's end marker is [`complete`](Self::complete); one that stops
/// before is a cut stream.
#[derive(Debug)]
pub struct StreamDecoder {
    provider: ProviderKind,
    /// The answer so far.
    pub text: String,
    /// Prompt tokens (when the provider reported them).
    pub input_tokens: u64,
    /// Answer tokens (when the provider reported them).
    pub output_tokens: u64,
    /// The end marker arrived.
    pub complete: bool,
}

impl StreamDecoder {
    /// A decoder for `provider`'s stream format.
    pub fn new(provider: ProviderKind) -> Self {
        Self {
            provider,
            text: String::new(),
            input_tokens: 0,
            output_tokens: 0,
            complete: false,
        }
    }

    /// Take one event (`event` is its type, empty when absent). Returns the text it adds.
    pub fn feed(&mut self, event: &str, data: &str) -> Result<String, LlmError> {
        if matches!(
            self.provider,
            ProviderKind::Openai | ProviderKind::OpenaiCompatible
        ) && data.trim() == "[DONE]"
        {
            self.complete = true;
            return Ok(String::new());
        }
        if event == "ping" || data.trim().is_empty() {
            return Ok(String::new());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Malformed(format!("stream event is not JSON: {e}")))?;
        if event == "error" || v.get("error").is_some_and(|e| !e.is_null()) {
            let msg = v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .unwrap_or("unknown error");
            // Whole: the gateway removes keys first and shortens after.
            return Err(LlmError::Stream(format!("the provider reported: {msg}")));
        }
        let tokens = |v: &Value| v.as_u64();
        let delta = match self.provider {
            ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    self.input_tokens = tokens(&u["prompt_tokens"]).unwrap_or(self.input_tokens);
                    self.output_tokens =
                        tokens(&u["completion_tokens"]).unwrap_or(self.output_tokens);
                }
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            }
            ProviderKind::Anthropic => match v["type"].as_str().unwrap_or(event) {
                "message_start" => {
                    let u = &v["message"]["usage"];
                    self.input_tokens = tokens(&u["input_tokens"]).unwrap_or(0);
                    self.output_tokens = tokens(&u["output_tokens"]).unwrap_or(0);
                    String::new()
                }
                "content_block_delta" if v["delta"]["type"] == "text_delta" => {
                    v["delta"]["text"].as_str().unwrap_or_default().to_string()
                }
                "message_delta" => {
                    self.output_tokens =
                        tokens(&v["usage"]["output_tokens"]).unwrap_or(self.output_tokens);
                    String::new()
                }
                "message_stop" => {
                    self.complete = true;
                    String::new()
                }
                _ => String::new(),
            },
            ProviderKind::Gemini => {
                // Each event is a whole GenerateContentResponse holding the next parts; the
                // usage figures are running totals. A finish reason ends the answer.
                let c = &v["candidates"][0];
                if let Some(u) = v.get("usageMetadata") {
                    self.input_tokens = tokens(&u["promptTokenCount"]).unwrap_or(self.input_tokens);
                    self.output_tokens =
                        tokens(&u["candidatesTokenCount"]).unwrap_or(self.output_tokens);
                }
                if c["finishReason"].is_string() {
                    self.complete = true;
                }
                c["content"]["parts"]
                    .as_array()
                    .map(|ps| ps.iter().filter_map(|p| p["text"].as_str()).collect())
                    .unwrap_or_default()
            }
        };
        self.text.push_str(&delta);
        Ok(delta)
    }
}

fn malformed(what: &str) -> LlmError {
    LlmError::Malformed(what.to_string())
}

/// The answer text and (input, output) token counts from a provider's JSON answer.
pub fn parse(provider: ProviderKind, body: &Value) -> Result<(String, u64, u64), LlmError> {
    let tokens = |v: &Value| v.as_u64().unwrap_or(0);
    match provider {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
            let text = body["choices"][0]["message"]["content"]
                .as_str()
                .ok_or_else(|| malformed("no choices[0].message.content"))?;
            let u = &body["usage"];
            Ok((
                text.to_string(),
                tokens(&u["prompt_tokens"]),
                tokens(&u["completion_tokens"]),
            ))
        }
        ProviderKind::Anthropic => {
            let blocks = body["content"]
                .as_array()
                .ok_or_else(|| malformed("no content array"))?;
            let text: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let u = &body["usage"];
            Ok((
                text,
                tokens(&u["input_tokens"]),
                tokens(&u["output_tokens"]),
            ))
        }
        ProviderKind::Gemini => {
            let parts = body["candidates"][0]["content"]["parts"]
                .as_array()
                .ok_or_else(|| malformed("no candidates[0].content.parts"))?;
            let text: String = parts.iter().filter_map(|p| p["text"].as_str()).collect();
            let u = &body["usageMetadata"];
            Ok((
                text,
                tokens(&u["promptTokenCount"]),
                tokens(&u["candidatesTokenCount"]),
            ))
        }
    }
}

/// The OpenAI embeddings request for `texts` to model `e` with `key` (if any):
/// `POST {base}/embeddings` with `{"model", "input": [...]}` (and `dimensions` when
/// configured), floats asked for explicitly.
pub fn build_embeddings(e: &EmbeddingModelConfig, texts: &[String], key: Option<&str>) -> HttpCall {
    let base = base_url_of(e.provider, e.base_url.as_deref());
    let mut body = json!({ "model": e.model, "input": texts, "encoding_format": "float" });
    if let Some(d) = e.dimensions {
        body["dimensions"] = json!(d);
    }
    let mut headers = vec![("content-type".into(), "application/json".into())];
    if let Some(k) = key {
        headers.push(("authorization".into(), format!("Bearer {k}")));
    }
    HttpCall {
        url: format!("{base}/embeddings"),
        headers,
        body,
    }
}

/// The vectors (in input order) and the input tokens of an embeddings answer to `n` inputs:
/// `{"data": [{"index", "embedding": [...]}], "usage": {"prompt_tokens"}}`. Every input must
/// get exactly one vector, all of one non-zero length (`dim` when given), every value a
/// finite `f32`.
pub fn parse_embeddings(
    body: &Value,
    n: usize,
    dim: Option<usize>,
) -> Result<(Vec<Vec<f32>>, u64), LlmError> {
    let data = body["data"]
        .as_array()
        .ok_or_else(|| malformed("no data array"))?;
    if data.len() != n {
        return Err(LlmError::Malformed(format!(
            "{} embeddings for {n} inputs",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    let mut len = dim;
    for (pos, item) in data.iter().enumerate() {
        let index = match &item["index"] {
            Value::Null => pos,
            v => v
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < n)
                .ok_or_else(|| LlmError::Malformed(format!("data[{pos}].index is {v}")))?,
        };
        let values = item["embedding"].as_array().ok_or_else(|| {
            LlmError::Malformed(format!(
                "data[{pos}].embedding is not a list of numbers (base64 is not asked for)"
            ))
        })?;
        let mut v = Vec::with_capacity(values.len());
        for (j, x) in values.iter().enumerate() {
            let f = x
                .as_f64()
                .map(|f| f as f32)
                .filter(|f| f.is_finite())
                .ok_or_else(|| {
                    LlmError::Malformed(format!(
                        "data[{pos}].embedding[{j}] is not a finite number"
                    ))
                })?;
            v.push(f);
        }
        match len {
            _ if v.is_empty() => {
                return Err(LlmError::Malformed(format!(
                    "data[{pos}].embedding is empty"
                )))
            }
            Some(d) if d != v.len() => {
                return Err(LlmError::Malformed(format!(
                    "data[{pos}].embedding has {} values, expected {d}",
                    v.len()
                )))
            }
            _ => len = Some(v.len()),
        }
        if out[index].replace(v).is_some() {
            return Err(LlmError::Malformed(format!("index {index} answered twice")));
        }
    }
    let vectors = out
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| malformed("an input got no embedding"))?;
    let u = &body["usage"];
    let tokens = u["prompt_tokens"]
        .as_u64()
        .or_else(|| u["total_tokens"].as_u64())
        .unwrap_or(0);
    Ok((vectors, tokens))
}

/// The provider's error message from an error body, whole: the gateway removes any key from
/// it before shortening it (`redact`).
pub fn error_message(body: &str) -> String {
    let v: Option<Value> = serde_json::from_str(body).ok();
    let msg = v
        .as_ref()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
        })
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string());
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: ProviderKind) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            provider,
            model: "mod-1".into(),
            base_url: Some("http://h/v1/".into()),
            api_key_env: None,
            temperature: Some(1.0),
            max_tokens: Some(100),
            reasoning_effort: None,
            price_input_per_mtok: 0.0,
            price_output_per_mtok: 0.0,
        }
    }

    #[test]
    fn keys_go_in_headers_only() {
        for p in [
            ProviderKind::OpenaiCompatible,
            ProviderKind::Anthropic,
            ProviderKind::Gemini,
        ] {
            let call = build(&model(p), &[Message::user("hi")], Some("sk-SECRET"));
            assert!(!call.url.contains("SECRET"));
            assert!(!call.body.to_string().contains("SECRET"));
            assert!(call.headers.iter().any(|(_, v)| v.contains("sk-SECRET")));
        }
        let g = build(&model(ProviderKind::Gemini), &[Message::user("hi")], None);
        assert_eq!(g.url, "http://h/v1/models/mod-1:generateContent");
        assert!(g.body.get("systemInstruction").is_none(), "{}", g.body);
    }

    #[test]
    fn gemini_keeps_the_system_message_as_its_system_instruction() {
        let messages = [Message::system("Be terse."), Message::user("hi")];
        let g = build(&model(ProviderKind::Gemini), &messages, None);
        assert_eq!(g.body["systemInstruction"]["parts"][0]["text"], "Be terse.");
        assert_eq!(
            g.body["contents"],
            json!([{ "role": "user", "parts": [{ "text": "hi" }] }])
        );
    }

    /// The question and one image, as an OmniMatBench multimodal item asks.
    fn with_image() -> Vec<Message> {
        vec![
            Message::system("Be terse."),
            Message::user("Count the atoms.").with_images(vec![bench::task::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }]),
        ]
    }

    #[test]
    fn an_image_goes_after_the_text_in_each_providers_shape() {
        let body = |p| build(&model(p), &with_image(), None).body;
        assert_eq!(
            body(ProviderKind::OpenaiCompatible),
            json!({"model": "mod-1", "temperature": 1.0, "max_completion_tokens": 100, "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(ProviderKind::Anthropic),
            json!({"model": "mod-1", "max_tokens": 100, "temperature": 1.0, "system": "Be terse.",
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "Count the atoms."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
        assert_eq!(
            body(ProviderKind::Gemini),
            json!({"generationConfig": {"temperature": 1.0, "maxOutputTokens": 100},
                "systemInstruction": {"parts": [{"text": "Be terse."}]},
                "contents": [{"role": "user", "parts": [
                    {"text": "Count the atoms."},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}]}]})
        );
        // The browser's own-key calls send the same messages.
        let direct = bench::direct::DirectModel {
            provider: bench::direct::DirectProvider::Anthropic,
            base_url: String::new(),
            model: "mod-1".into(),
        };
        let sent: Value =
            serde_json::from_str(&direct.request("k", &with_image()).unwrap().body).unwrap();
        assert_eq!(sent["messages"], body(ProviderKind::Anthropic)["messages"]);
    }

    fn decode(p: ProviderKind, events: &[(&str, &str)]) -> Result<StreamDecoder, LlmError> {
        let mut d = StreamDecoder::new(p);
        for (e, data) in events {
            d.feed(e, data)?;
        }
        Ok(d)
    }

    #[test]
    fn streams_of_each_provider() {
        let o = decode(
            ProviderKind::Openai,
            &[
                ("", r#"{"choices":[{"delta":{"role":"assistant"}}]}"#),
                ("", r#"{"choices":[{"delta":{"content":"Hel"}}]}"#),
                (
                    "",
                    r#"{"choices":[{"delta":{"content":"lo"}}],"usage":null}"#,
                ),
                (
                    "",
                    r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
                ),
                ("", "[DONE]"),
            ],
        )
        .unwrap();
        assert_eq!(
            (o.text.as_str(), o.input_tokens, o.output_tokens, o.complete),
            ("Hello", 3, 2, true)
        );
        let a = decode(
            ProviderKind::Anthropic,
            &[
                ("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}"#),
                ("ping", r#"{"type":"ping"}"#),
                ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#),
                ("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"B"}}"#),
                ("message_delta", r#"{"type":"message_delta","usage":{"output_tokens":6}}"#),
            ],
        )
        .unwrap();
        assert_eq!(
            (a.text.as_str(), a.input_tokens, a.output_tokens, a.complete),
            ("B", 5, 6, false)
        );
        let g = decode(
            ProviderKind::Gemini,
            &[
                ("", r#"{"candidates":[{"content":{"parts":[{"text":"C"}]}}]}"#),
                ("", r#"{"candidates":[{"content":{"parts":[{"text":"D"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":8}}"#),
            ],
        )
        .unwrap();
        assert_eq!(
            (g.text.as_str(), g.input_tokens, g.output_tokens, g.complete),
            ("CD", 7, 8, true)
        );
        let err = decode(
            ProviderKind::Anthropic,
            &[(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )],
        );
        assert!(matches!(err, Err(LlmError::Stream(m)) if m.contains("Overloaded")));
        assert!(matches!(
            decode(ProviderKind::Openai, &[("", "{not json")]),
            Err(LlmError::Malformed(_))
        ));
        let call = build_stream(&model(ProviderKind::Gemini), &[Message::user("hi")], None);
        assert_eq!(
            call.url,
            "http://h/v1/models/mod-1:streamGenerateContent?alt=sse"
        );
        let call = build_stream(&model(ProviderKind::Openai), &[Message::user("hi")], None);
        assert_eq!(call.body["stream_options"]["include_usage"], true);
    }

    #[test]
    fn embeddings_request_and_answer() {
        let e = EmbeddingModelConfig {
            name: "e".into(),
            provider: ProviderKind::OpenaiCompatible,
            model: "emb-1".into(),
            base_url: Some("http://h/v1/".into()),
            api_key_env: None,
            dimensions: Some(2),
            batch_size: 8,
            price_input_per_mtok: 0.0,
        };
        let call = build_embeddings(&e, &["a".into(), "b".into()], Some("sk-SECRET"));
        assert_eq!(call.url, "http://h/v1/embeddings");
        assert_eq!(
            call.body,
            json!({"model": "emb-1", "input": ["a", "b"], "encoding_format": "float", "dimensions": 2})
        );
        assert!(call
            .headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer sk-SECRET"));
        // Answers may come out of order: `index` puts them back.
        let body = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.5]}
        ], "usage": {"prompt_tokens": 7, "total_tokens": 7}});
        assert_eq!(
            parse_embeddings(&body, 2, Some(2)).unwrap(),
            (vec![vec![1.0, 0.5], vec![0.0, 1.0]], 7)
        );
        let bad = [
            (json!({"x": 1}), "no data"),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}]}),
                "1 embeddings for 2",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 0, "embedding": [1.0, 2.0]}]}),
                "twice",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}),
                "expected 2",
            ),
            (
                json!({"data": [{"index": 0, "embedding": "AAAA"}, {"index": 1, "embedding": [1.0]}]}),
                "base64",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1e300, 0.0]}, {"index": 1, "embedding": [1.0, 0.0]}]}),
                "finite",
            ),
            (
                json!({"data": [{"index": 5, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0]}]}),
                "index is 5",
            ),
        ];
        for (body, want) in bad {
            match parse_embeddings(&body, 2, None) {
                Err(LlmError::Malformed(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn answers_of_each_provider() {
        let o = json!({"choices":[{"message":{"content":"A"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}});
        assert_eq!(parse(ProviderKind::Openai, &o).unwrap(), ("A".into(), 3, 4));
        let a = json!({"content":[{"type":"thinking","thinking":"…"},{"type":"text","text":"B"}],"usage":{"input_tokens":5,"output_tokens":6}});
        assert_eq!(
            parse(ProviderKind::Anthropic, &a).unwrap(),
            ("B".into(), 5, 6)
        );
        let g = json!({"candidates":[{"content":{"parts":[{"text":"C"}]}}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":8}});
        assert_eq!(parse(ProviderKind::Gemini, &g).unwrap(), ("C".into(), 7, 8));
        assert!(matches!(
            parse(ProviderKind::Openai, &json!({"x":1})),
            Err(LlmError::Malformed(_))
        ));
    }
}
