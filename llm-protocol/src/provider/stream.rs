//! A provider's event stream, reassembled.

use serde_json::Value;

use super::{ProtocolError, Provider};

/// Reassembles a provider's event stream into the answer: feed it each server-sent event
/// in order; it returns the text each event adds and keeps the token counts. Only a stream
/// that reached the provider's end marker is [`complete`](Self::complete); one that stops
/// before is a cut stream.
#[derive(Debug)]
pub struct StreamDecoder {
    provider: Provider,
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
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            text: String::new(),
            input_tokens: 0,
            output_tokens: 0,
            complete: false,
        }
    }

    /// Take one event (`event` is its type, empty when absent). Returns the text it adds.
    pub fn feed(&mut self, event: &str, data: &str) -> Result<String, ProtocolError> {
        if self.provider.openai_shaped() && data.trim() == "[DONE]" {
            self.complete = true;
            return Ok(String::new());
        }
        if event == "ping" || data.trim().is_empty() {
            return Ok(String::new());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProtocolError::Malformed(format!("stream event is not JSON: {e}")))?;
        if event == "error" || v.get("error").is_some_and(|e| !e.is_null()) {
            let msg = v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .unwrap_or("unknown error");
            // Whole: the gateway removes keys first and shortens after.
            return Err(ProtocolError::Stream(format!(
                "the provider reported: {msg}"
            )));
        }
        let tokens = |v: &Value| v.as_u64();
        let delta = match self.provider {
            Provider::Openai | Provider::OpenaiCompatible => {
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
            Provider::Anthropic => match v["type"].as_str().unwrap_or(event) {
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
            Provider::Gemini => {
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
