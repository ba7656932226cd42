//! The messages a model receives.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions before the conversation.
    System,
    /// The person (or the benchmark) asking.
    User,
    /// The model.
    Assistant,
}

/// An image sent with a message (OmniMatBench's multimodal items): what it is and its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (from the file's bytes).
    pub media_type: String,
    /// The bytes in base64 (standard alphabet, padded), as every provider takes them.
    pub data: String,
}

impl Image {
    /// An image of `media_type` from its bytes.
    pub fn from_bytes(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The image as a `data:` URL (OpenAI's `image_url`, the page's `<img>`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// One chat message.
///
/// Without images it serialises as `{"role", "content"}`, exactly as before messages could
/// carry images, so the response cache's keys of text-only requests do not change.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Images after the text, in order (each provider's shape: [`super::chat`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// The tool calls an assistant message made (function calling).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a message answers with a tool's result (its text is the result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolCall>,
}

/// A tool a model may call: its name, what it does, its parameters as JSON Schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its arguments, a JSON Schema object.
    pub parameters: serde_json::Value,
}

/// One call of a tool that a model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolCall {
    /// The provider's id of the call (results name it).
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, as JSON text.
    pub arguments: String,
}

impl Message {
    /// A message of `role` with text only.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_result: None,
        }
    }

    /// An assistant message that made tool calls (with its text, possibly empty).
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::assistant(content)
        }
    }

    /// The result of `call`, as the next turn gives it back.
    pub fn tool_result(call: &ToolCall, result: impl Into<String>) -> Self {
        Self {
            tool_result: Some(call.clone()),
            ..Self::user(result)
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// An assistant message (a reply put back into the conversation).
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// The same message with `images` after its text.
    pub fn with_images(mut self, images: Vec<Image>) -> Self {
        self.images = images;
        self
    }
}

/// The messages' text as a result stores it: one message, its text; several, each headed by
/// its role.
pub fn prompt_text(messages: &[Message]) -> String {
    match messages {
        [one] => one.content.clone(),
        many => many
            .iter()
            .map(|m| format!("[{:?}]\n{}", m.role, m.content))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_only_messages_serialise_as_before() {
        assert_eq!(
            serde_json::to_string(&Message::user("hi")).unwrap(),
            r#"{"role":"user","content":"hi"}"#
        );
        let back: Message = serde_json::from_str(r#"{"role":"user","content":"hi"}"#).unwrap();
        assert!(back.images.is_empty());
        let with =
            Message::user("see").with_images(vec![Image::from_bytes("image/png", b"\x89PNG")]);
        assert_eq!(
            serde_json::to_string(&with).unwrap(),
            r#"{"role":"user","content":"see","images":[{"media_type":"image/png","data":"iVBORw=="}]}"#
        );
        assert_eq!(with.images[0].data_url(), "data:image/png;base64,iVBORw==");
    }
}
