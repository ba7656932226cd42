//! CIF data blocks: tag/value items and loops, with source positions.

use super::lexer::{Pos, Token, TokenKind};
use super::CifError;

/// One value with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// The text (quotes and uncertainties not removed).
    pub text: String,
    /// True for quoted strings and text fields.
    pub quoted: bool,
    /// Where the value starts.
    pub pos: Pos,
}

impl Value {
    /// True for the CIF "unknown" (`?`) or "inapplicable" (`.`) markers.
    pub fn is_missing(&self) -> bool {
        !self.quoted && (self.text == "?" || self.text == ".")
    }
}

/// A `loop_`: column tags and rows of values.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// Column tags, lower-cased.
    pub tags: Vec<String>,
    /// Rows, each as long as `tags`.
    pub rows: Vec<Vec<Value>>,
    /// Where `loop_` was written.
    pub pos: Pos,
}

impl Loop {
    /// Column index of a tag (lower-case name).
    pub fn column(&self, tag: &str) -> Option<usize> {
        self.tags.iter().position(|t| t == tag)
    }
}

/// A data block: its name, single-valued items and loops.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    /// The name after `data_`.
    pub name: String,
    /// Where `data_` was written.
    pub pos: Option<Pos>,
    /// Single-valued items: lower-cased tag, its position and value.
    pub items: Vec<(String, Pos, Value)>,
    /// Loops in order.
    pub loops: Vec<Loop>,
}

impl Block {
    /// The value of a single item (lower-case tag), if present.
    pub fn item(&self, tag: &str) -> Option<&Value> {
        self.items
            .iter()
            .find(|(t, _, _)| t == tag)
            .map(|(_, _, v)| v)
    }

    /// The loop holding a column named `tag` (lower-case), if any.
    pub fn loop_with(&self, tag: &str) -> Option<&Loop> {
        self.loops.iter().find(|l| l.column(tag).is_some())
    }
}

/// Group tokens into data blocks. Items before the first `data_` go into an unnamed block.
pub fn parse_blocks(tokens: &[Token]) -> Result<Vec<Block>, CifError> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    let current = |blocks: &mut Vec<Block>| -> usize {
        if blocks.is_empty() {
            blocks.push(Block::default());
        }
        blocks.len() - 1
    };
    while i < tokens.len() {
        let tok = &tokens[i];
        match &tok.kind {
            TokenKind::Data(name) => {
                blocks.push(Block {
                    name: name.clone(),
                    pos: Some(tok.pos),
                    ..Block::default()
                });
                i += 1;
            }
            TokenKind::Reserved(_) => i += 1,
            TokenKind::Tag(tag) => {
                let b = current(&mut blocks);
                let Some(next) = tokens.get(i + 1) else {
                    return Err(CifError::at(tok.pos, format!("tag {tag} has no value")));
                };
                let TokenKind::Value { text, quoted } = &next.kind else {
                    return Err(CifError::at(
                        tok.pos,
                        format!("tag {tag} is followed by another keyword instead of a value"),
                    ));
                };
                blocks[b].items.push((
                    tag.to_ascii_lowercase(),
                    tok.pos,
                    Value {
                        text: text.clone(),
                        quoted: *quoted,
                        pos: next.pos,
                    },
                ));
                i += 2;
            }
            TokenKind::Loop => {
                let b = current(&mut blocks);
                let loop_pos = tok.pos;
                i += 1;
                let mut tags = Vec::new();
                while let Some(Token {
                    kind: TokenKind::Tag(t),
                    ..
                }) = tokens.get(i)
                {
                    tags.push(t.to_ascii_lowercase());
                    i += 1;
                }
                if tags.is_empty() {
                    return Err(CifError::at(loop_pos, "loop_ without any tags"));
                }
                let mut values = Vec::new();
                while let Some(Token {
                    kind: TokenKind::Value { text, quoted },
                    pos,
                }) = tokens.get(i)
                {
                    values.push(Value {
                        text: text.clone(),
                        quoted: *quoted,
                        pos: *pos,
                    });
                    i += 1;
                }
                if values.len() % tags.len() != 0 {
                    let at = values.last().map(|v| v.pos).unwrap_or(loop_pos);
                    return Err(CifError::at(
                        at,
                        format!(
                            "loop has {} columns but {} values, not a whole number of rows",
                            tags.len(),
                            values.len()
                        ),
                    ));
                }
                let ncol = tags.len();
                let rows = values.chunks(ncol).map(|c| c.to_vec()).collect();
                blocks[b].loops.push(Loop {
                    tags,
                    rows,
                    pos: loop_pos,
                });
            }
            TokenKind::Value { text, .. } => {
                return Err(CifError::at(
                    tok.pos,
                    format!("value '{text}' without a tag before it"),
                ));
            }
        }
    }
    Ok(blocks)
}
