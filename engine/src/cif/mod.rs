//! Reading CIF text into structures.
//!
//! The pipeline is tokenizer ([`lexer`]) → data blocks ([`block`]) → structure
//! ([`reader`]). Every error carries the line and column it refers to, and no input,
//! however malformed, makes the reader panic.

pub mod block;
pub mod lexer;
mod reader;
pub mod symop;

pub use lexer::Pos;
pub use reader::read_cif;

/// A CIF error: what went wrong and where (1-based line and column), when known.
#[derive(Clone, Debug, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{}", match .pos { Some(p) => format!("line {}, column {}: {}", p.line, p.col, .message), None => .message.clone() })]
pub struct CifError {
    /// Human-readable description.
    pub message: String,
    /// Where in the text, if the error refers to a place.
    pub pos: Option<Pos>,
}

impl CifError {
    /// An error at a position.
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            pos: Some(pos),
        }
    }

    /// An error about the file as a whole.
    pub fn general(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            pos: None,
        }
    }
}
