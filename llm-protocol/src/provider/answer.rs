//! A provider's answer: its text and usage, or its error message.

use serde_json::Value;

use super::{ProtocolError, Provider};
use crate::ToolCall;

fn malformed(what: &str) -> ProtocolError {
    ProtocolError::Malformed(what.to_string())
}

/// The answer text and (input, output) token counts from a provider's JSON answer.
pub fn parse(provider: Provider, body: &Value) -> Result<(String, u64, u64), ProtocolError> {
    let tokens = |v: &Value| v.as_u64().unwrap_or(0);
    match provider {
        Provider::Openai | Provider::OpenaiCompatible => {
            let message = &body["choices"][0]["message"];
            // A reply that only calls tools has no content.
            let text = match message["content"].as_str() {
                Some(t) => t,
                None if message["tool_calls"].is_array() => "",
                None => return Err(malformed("no choices[0].message.content")),
            };
            let u = &body["usage"];
            Ok((
                text.to_string(),
                tokens(&u["prompt_tokens"]),
                tokens(&u["completion_tokens"]),
            ))
        }
        Provider::Anthropic => {
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
        Provider::Gemini => {
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

/// The tool calls of a provider's JSON answer (none when it called no tool). Gemini gives
/// its calls no id: each is named by its place (`call-0`, …).
pub fn tool_calls(provider: Provider, body: &Value) -> Vec<ToolCall> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    match provider {
        Provider::Openai | Provider::OpenaiCompatible => {
            list(&body["choices"][0]["message"]["tool_calls"])
                .iter()
                .map(|c| ToolCall {
                    id: text(&c["id"]),
                    name: text(&c["function"]["name"]),
                    arguments: text(&c["function"]["arguments"]),
                })
                .collect()
        }
        Provider::Anthropic => list(&body["content"])
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| ToolCall {
                id: text(&b["id"]),
                name: text(&b["name"]),
                arguments: b["input"].to_string(),
            })
            .collect(),
        Provider::Gemini => list(&body["candidates"][0]["content"]["parts"])
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .enumerate()
            .map(|(i, f)| ToolCall {
                id: format!("call-{i}"),
                name: text(&f["name"]),
                arguments: f["args"].to_string(),
            })
            .collect(),
    }
}

/// The provider's error message from an error body (`{"error": {"message": …}}` or
/// `{"error": "…"}`), else the body, whole: callers remove any key from it before
/// shortening it.
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
