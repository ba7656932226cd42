//! Messages as each provider's chat API takes them: one place for the server's gateway
//! (`server::llm`) and the browser's own-key calls ([`crate::direct`]), so both send the
//! same request for the same messages.
//!
//! A message without images keeps the plain shape it always had (OpenAI: `content` is a
//! string; Anthropic: a string; Gemini: one `text` part), so text-only requests do not
//! change. Images follow the message's text, in order:
//! - OpenAI chat completions: `content` becomes a list of `{"type": "text", "text"}` and
//!   `{"type": "image_url", "image_url": {"url": "data:<media type>;base64,<data>"}}`;
//! - Anthropic messages: content blocks `{"type": "text", "text"}` and
//!   `{"type": "image", "source": {"type": "base64", "media_type", "data"}}`;
//! - Gemini `generateContent`: parts `{"text"}` and `{"inline_data": {"mime_type", "data"}}`.

//!
//! Tool calls (function calling) take each provider's shape too: an assistant message's
//! calls are OpenAI's `tool_calls`, Anthropic's `tool_use` blocks, Gemini's `functionCall`
//! parts; a result is OpenAI's `tool` message, Anthropic's `tool_result` block, Gemini's
//! `functionResponse` part (results of consecutive calls share one turn).

use serde_json::{json, Value};

use crate::{Message, Role, ToolCall, ToolSpec};

/// A call's arguments as a JSON object (`{}` when they are not one).
fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str::<Value>(&call.arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

/// OpenAI's `tools`.
pub fn openai_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect()
}

/// Anthropic's `tools`.
pub fn anthropic_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect()
}

/// Gemini's `tools`.
pub fn gemini_tools(tools: &[ToolSpec]) -> Value {
    let declarations: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    json!([{ "functionDeclarations": declarations }])
}

/// Consecutive messages merged where a provider wants one turn: results of calls that
/// follow one another (Anthropic and Gemini take them as the blocks of one user turn).
fn turns(messages: &[Message]) -> Vec<Vec<&Message>> {
    let mut out: Vec<Vec<&Message>> = Vec::new();
    for m in messages.iter().filter(|m| m.role != Role::System) {
        let merge = m.tool_result.is_some()
            && out
                .last()
                .is_some_and(|last| last.iter().all(|x| x.tool_result.is_some()));
        if let (true, Some(last)) = (merge, out.last_mut()) {
            last.push(m);
            continue;
        }
        out.push(vec![m]);
    }
    out
}

/// The `messages` list of an OpenAI chat-completions request (system messages included).
pub fn openai_messages(messages: &[Message]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| {
                let content = if m.images.is_empty() {
                    json!(m.content)
                } else {
                    let mut parts = vec![json!({ "type": "text", "text": m.content })];
                    parts.extend(m.images.iter().map(
                        |i| json!({ "type": "image_url", "image_url": { "url": i.data_url() } }),
                    ));
                    Value::Array(parts)
                };
                if let Some(call) = &m.tool_result {
                    return json!({ "role": "tool", "tool_call_id": call.id, "content": m.content });
                }
                if !m.tool_calls.is_empty() {
                    let calls: Vec<Value> = m
                        .tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    return json!({ "role": m.role, "content": content, "tool_calls": calls });
                }
                json!({ "role": m.role, "content": content })
            })
            .collect(),
    )
}

/// The system text (system messages joined by a newline; `None` without any): Anthropic's
/// `system` and Gemini's `systemInstruction` carry it apart from the turns.
pub fn system_text(messages: &[Message]) -> Option<String> {
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    (!system.is_empty()).then(|| system.join("\n"))
}

/// The `messages` list of an Anthropic messages request: the turns without the system
/// messages (see [`system_text`]).
pub fn anthropic_messages(messages: &[Message]) -> Value {
    Value::Array(
        turns(messages)
            .into_iter()
            .map(|turn| {
                let m = turn[0];
                if m.tool_result.is_some() {
                    let blocks: Vec<Value> = turn
                        .iter()
                        .filter_map(|r| {
                            let call = r.tool_result.as_ref()?;
                            Some(json!({"type": "tool_result", "tool_use_id": call.id,
                                        "content": r.content}))
                        })
                        .collect();
                    return json!({ "role": "user", "content": blocks });
                }
                let content = if m.images.is_empty() && m.tool_calls.is_empty() {
                    json!(m.content)
                } else {
                    let mut blocks = Vec::new();
                    if !m.content.is_empty() || m.tool_calls.is_empty() {
                        blocks.push(json!({ "type": "text", "text": m.content }));
                    }
                    blocks.extend(m.images.iter().map(|i| {
                        json!({
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": i.media_type,
                                "data": i.data,
                            },
                        })
                    }));
                    blocks.extend(m.tool_calls.iter().map(|c| {
                        json!({"type": "tool_use", "id": c.id, "name": c.name,
                               "input": arguments(c)})
                    }));
                    Value::Array(blocks)
                };
                json!({ "role": m.role, "content": content })
            })
            .collect(),
    )
}

/// The `contents` list of a Gemini `generateContent` request: the turns without the system
/// messages (see [`system_text`]), the assistant as `model`.
pub fn gemini_contents(messages: &[Message]) -> Value {
    Value::Array(
        turns(messages)
            .into_iter()
            .map(|turn| {
                let m = turn[0];
                if m.tool_result.is_some() {
                    let parts: Vec<Value> = turn
                        .iter()
                        .filter_map(|r| {
                            let call = r.tool_result.as_ref()?;
                            Some(json!({"functionResponse": {"name": call.name,
                                        "response": {"content": r.content}}}))
                        })
                        .collect();
                    return json!({ "role": "user", "parts": parts });
                }
                let role = if m.role == Role::Assistant {
                    "model"
                } else {
                    "user"
                };
                let mut parts = Vec::new();
                if !m.content.is_empty() || m.tool_calls.is_empty() {
                    parts.push(json!({ "text": m.content }));
                }
                parts.extend(m.images.iter().map(
                    |i| json!({ "inline_data": { "mime_type": i.media_type, "data": i.data } }),
                ));
                parts.extend(
                    m.tool_calls.iter().map(
                        |c| json!({ "functionCall": { "name": c.name, "args": arguments(c) } }),
                    ),
                );
                json!({ "role": role, "parts": parts })
            })
            .collect(),
    )
}

/// Gemini's `systemInstruction` for `messages`, if they hold a system message.
pub fn gemini_system_instruction(messages: &[Message]) -> Option<Value> {
    system_text(messages).map(|text| json!({ "parts": [{ "text": text }] }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Image;

    fn asked() -> Vec<Message> {
        vec![
            Message::system("Be terse."),
            Message::user("What is shown?").with_images(vec![Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }]),
        ]
    }

    #[test]
    fn openai_text_then_image_url() {
        assert_eq!(
            openai_messages(&asked()),
            json!([
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is shown?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
                ]}
            ])
        );
        // Without images the content stays a string.
        assert_eq!(
            openai_messages(&[Message::user("hi")]),
            json!([{"role": "user", "content": "hi"}])
        );
    }

    #[test]
    fn anthropic_text_then_base64_image_block() {
        assert_eq!(system_text(&asked()).as_deref(), Some("Be terse."));
        assert_eq!(
            anthropic_messages(&asked()),
            json!([
                {"role": "user", "content": [
                    {"type": "text", "text": "What is shown?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
                ]}
            ])
        );
        assert_eq!(
            anthropic_messages(&[Message::user("hi")]),
            json!([{"role": "user", "content": "hi"}])
        );
    }

    #[test]
    fn gemini_text_then_inline_data() {
        assert_eq!(
            gemini_contents(&asked()),
            json!([
                {"role": "user", "parts": [
                    {"text": "What is shown?"},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}
                ]}
            ])
        );
        assert_eq!(
            gemini_system_instruction(&asked()),
            Some(json!({"parts": [{"text": "Be terse."}]}))
        );
        assert_eq!(gemini_system_instruction(&[Message::user("hi")]), None);
    }
}

#[cfg(test)]
mod tool_tests {
    use super::*;
    use crate::provider::{tool_calls, Provider};

    fn exchange() -> Vec<Message> {
        let a = ToolCall {
            id: "c1".into(),
            name: "distance".into(),
            arguments: r#"{"i":0,"j":1}"#.into(),
        };
        let b = ToolCall {
            id: "c2".into(),
            name: "read_structure".into(),
            arguments: "{}".into(),
        };
        vec![
            Message::system("be exact"),
            Message::user("task"),
            Message::assistant_calls("", vec![a.clone(), b.clone()]),
            Message::tool_result(&a, "2.5"),
            Message::tool_result(&b, "cell"),
        ]
    }

    /// The calls and their results in each provider's documented shape; consecutive results
    /// share one turn where the provider wants it.
    #[test]
    fn calls_and_results_in_each_providers_shape() {
        let m = exchange();
        let openai = openai_messages(&m);
        assert_eq!(openai[2]["tool_calls"][0]["function"]["name"], "distance");
        assert_eq!(openai[2]["tool_calls"][0]["type"], "function");
        assert_eq!(
            openai[3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "2.5"})
        );
        assert_eq!(openai[4]["tool_call_id"], "c2");

        let anthropic = anthropic_messages(&m);
        assert_eq!(anthropic.as_array().unwrap().len(), 3, "{anthropic}");
        assert_eq!(anthropic[1]["content"][0]["type"], "tool_use");
        assert_eq!(anthropic[1]["content"][0]["input"], json!({"i": 0, "j": 1}));
        assert_eq!(anthropic[2]["role"], "user");
        assert_eq!(anthropic[2]["content"][1]["tool_use_id"], "c2");

        let gemini = gemini_contents(&m);
        assert_eq!(gemini.as_array().unwrap().len(), 3, "{gemini}");
        assert_eq!(gemini[1]["role"], "model");
        assert_eq!(
            gemini[1]["parts"][0]["functionCall"]["args"],
            json!({"i": 0, "j": 1})
        );
        assert_eq!(
            gemini[2]["parts"][0]["functionResponse"]["name"],
            "distance"
        );

        let spec = ToolSpec {
            name: "distance".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        };
        assert_eq!(
            openai_tools(std::slice::from_ref(&spec))[0]["function"]["name"],
            "distance"
        );
        assert_eq!(
            anthropic_tools(std::slice::from_ref(&spec))[0]["input_schema"]["type"],
            "object"
        );
        assert_eq!(
            gemini_tools(&[spec])[0]["functionDeclarations"][0]["name"],
            "distance"
        );
    }

    /// The calls of each provider's answer.
    #[test]
    fn calls_read_from_each_providers_answer() {
        let openai = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}]});
        let calls = tool_calls(Provider::Openai, &openai);
        assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("x", "f"));
        assert_eq!(
            crate::provider::parse(Provider::Openai, &openai).unwrap().0,
            ""
        );
        let anthropic = json!({"content": [{"type": "text", "text": "let me see"},
            {"type": "tool_use", "id": "t", "name": "g", "input": {"b": 2}}]});
        let calls = tool_calls(Provider::Anthropic, &anthropic);
        assert_eq!(calls[0].arguments, r#"{"b":2}"#);
        let gemini = json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "h", "args": {"c": 3}}}]}}]});
        let calls = tool_calls(Provider::Gemini, &gemini);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call-0", "h")
        );
        assert!(tool_calls(
            Provider::Openai,
            &json!({"choices": [{"message": {"content": "hi"}}]})
        )
        .is_empty());
    }
}
