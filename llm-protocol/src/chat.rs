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

use serde_json::{json, Value};

use crate::{Message, Role};

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
        messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| {
                let content = if m.images.is_empty() {
                    json!(m.content)
                } else {
                    let mut blocks = vec![json!({ "type": "text", "text": m.content })];
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
        messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| {
                let role = if m.role == Role::Assistant {
                    "model"
                } else {
                    "user"
                };
                let mut parts = vec![json!({ "text": m.content })];
                parts.extend(m.images.iter().map(
                    |i| json!({ "inline_data": { "mime_type": i.media_type, "data": i.data } }),
                ));
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
