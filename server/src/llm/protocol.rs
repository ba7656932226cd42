//! The providers' protocol ([`llm_protocol::provider`], shared with the page's own-key calls) for
//! configured models: where a model's requests go and how it decodes.

use llm_protocol::provider::{self, Caller, Decoding};

use super::{LlmError, Message};
use crate::config::{EmbeddingModelConfig, ModelConfig, ProviderKind};
use llm_protocol::{ToolCall, ToolSpec};

pub use llm_protocol::provider::{error_message, HttpCall, StreamDecoder};

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
    let decoding = Decoding {
        temperature: m.temperature,
        top_p: m.top_p,
        max_tokens: m.max_tokens.map(u64::from),
        reasoning_effort: m.reasoning_effort.clone(),
    };
    let base = base_url_of(m.provider, m.base_url.as_deref());
    provider::build(
        m.provider,
        &base,
        &m.model,
        &decoding,
        messages,
        key,
        Caller::Server,
    )
}

/// The streaming variant of [`build`].
pub fn build_stream(m: &ModelConfig, messages: &[Message], key: Option<&str>) -> HttpCall {
    provider::streaming(m.provider, build(m, messages, key))
}

/// The answer text and (input, output) token counts from a provider's JSON answer.
pub fn parse(p: ProviderKind, body: &serde_json::Value) -> Result<(String, u64, u64), LlmError> {
    Ok(provider::parse(p, body)?)
}

/// `call` (a [`build`] for a model of `provider`) offering the model `tools` to call.
pub fn with_tools(provider: ProviderKind, call: HttpCall, tools: &[ToolSpec]) -> HttpCall {
    provider::with_tools(provider, call, tools)
}

/// The tool calls of a provider's JSON answer.
pub fn tool_calls(p: ProviderKind, body: &serde_json::Value) -> Vec<ToolCall> {
    provider::tool_calls(p, body)
}

/// The embeddings request for `texts` to model `e` with `key` (if any).
pub fn build_embeddings(e: &EmbeddingModelConfig, texts: &[String], key: Option<&str>) -> HttpCall {
    let base = base_url_of(e.provider, e.base_url.as_deref());
    provider::build_embeddings(&base, &e.model, e.dimensions, texts, key)
}

/// The vectors and input tokens of an embeddings answer to `n` inputs (see
/// [`llm_protocol::provider::parse_embeddings`]).
pub fn parse_embeddings(
    body: &serde_json::Value,
    n: usize,
    dim: Option<usize>,
) -> Result<(Vec<Vec<f32>>, u64), LlmError> {
    Ok(provider::parse_embeddings(body, n, dim)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn model(provider: ProviderKind) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            provider,
            model: "mod-1".into(),
            base_url: Some("http://h/v1/".into()),
            api_key_env: None,
            temperature: Some(1.0),
            top_p: None,
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
    fn top_p_goes_where_each_provider_takes_it() {
        let with = |p| {
            let m = ModelConfig {
                top_p: Some(0.9),
                ..model(p)
            };
            build(&m, &[Message::user("hi")], None).body
        };
        assert_eq!(with(ProviderKind::OpenaiCompatible)["top_p"], 0.9);
        assert_eq!(with(ProviderKind::Anthropic)["top_p"], 0.9);
        assert_eq!(with(ProviderKind::Gemini)["generationConfig"]["topP"], 0.9);
        let without = build(
            &model(ProviderKind::Anthropic),
            &[Message::user("hi")],
            None,
        );
        assert!(without.body.get("top_p").is_none());
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
            Message::user("Count the atoms.").with_images(vec![benchmarks::task::Image {
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
        let direct = llm_protocol::direct::DirectModel {
            provider: llm_protocol::provider::Provider::Anthropic,
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
