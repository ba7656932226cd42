//! How AtomWorld Playground talks to language models, pure and wasm-safe: the chat messages a
//! task asks with ([`Message`], images included), each provider's request, answer, event stream
//! and error text ([`provider`]), and the page's own-key calls ([`direct`]). The server's
//! gateway and the page both build their requests here, so they cannot drift apart; the caller
//! performs the HTTP exchange (reqwest on the server, `fetch` in the browser).

pub mod chat;
pub mod direct;
mod message;
pub mod provider;

pub use message::{prompt_text, Image, Message, Role, ToolCall, ToolSpec};
