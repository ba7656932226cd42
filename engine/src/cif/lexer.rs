//! CIF 1.1 tokenizer.
//!
//! Hand-written because no maintained crate tokenizes CIF 1.1 with source positions and
//! without panicking on arbitrary input (the few CIF crates on crates.io target CIF 2 /
//! mmCIF dictionaries or abort on the first deviation). Every token carries the 1-based line
//! and column where it starts, so every later error can point at the text.

/// Where a token starts in the source text (1-based line and column, in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in Unicode scalar values).
    pub col: usize,
}

/// Kinds of CIF tokens.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// `data_<name>`: starts a data block.
    Data(String),
    /// `loop_`
    Loop,
    /// `save_…`, `global_`, `stop_`: syntactically reserved; we report them when they matter.
    Reserved(String),
    /// A data name such as `_cell_length_a` (kept as written).
    Tag(String),
    /// A value.
    Value {
        /// The value's text (without quotes).
        text: String,
        /// True for quoted strings and text fields, whose `?` and `.` are literal text
        /// rather than "unknown" / "inapplicable".
        quoted: bool,
    },
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Where it starts.
    pub pos: Pos,
}

/// A tokenizer error (an unterminated quote or text field).
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    /// What went wrong.
    pub message: String,
    /// Where the offending construct starts.
    pub pos: Pos,
}

/// Split CIF text into tokens. CRLF and lone CR line endings are accepted.
pub fn tokenize(text: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut col = 1;
    // True when `i` is at the start of a line (needed for `;` text fields).
    let mut at_line_start = true;

    let is_eol = |c: char| c == '\n' || c == '\r';

    while i < chars.len() {
        let c = chars[i];
        if is_eol(c) {
            // Treat "\r\n" as one line break.
            if c == '\r' && chars.get(i + 1) == Some(&'\n') {
                i += 1;
            }
            i += 1;
            line += 1;
            col = 1;
            at_line_start = true;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            at_line_start = false;
            continue;
        }
        let pos = Pos { line, col };
        if c == '#' {
            while i < chars.len() && !is_eol(chars[i]) {
                i += 1;
            }
            continue;
        }
        if c == ';' && at_line_start {
            // Text field: runs until a line that starts with ';'.
            let mut body = String::new();
            i += 1;
            col += 1;
            let mut closed = false;
            while i < chars.len() {
                let ch = chars[i];
                if is_eol(ch) {
                    if ch == '\r' && chars.get(i + 1) == Some(&'\n') {
                        i += 1;
                    }
                    i += 1;
                    line += 1;
                    col = 1;
                    if chars.get(i) == Some(&';') {
                        i += 1;
                        col += 1;
                        closed = true;
                        break;
                    }
                    body.push('\n');
                    continue;
                }
                body.push(ch);
                i += 1;
                col += 1;
            }
            if !closed {
                return Err(LexError {
                    message: "text field opened with ';' is never closed".into(),
                    pos,
                });
            }
            tokens.push(Token {
                kind: TokenKind::Value {
                    text: body,
                    quoted: true,
                },
                pos,
            });
            at_line_start = false;
            continue;
        }
        at_line_start = false;
        if c == '\'' || c == '"' {
            // A quoted string ends at the same quote followed by whitespace or end of line.
            let mut j = i + 1;
            let mut end = None;
            while j < chars.len() && !is_eol(chars[j]) {
                if chars[j] == c && chars.get(j + 1).is_none_or(|n| n.is_whitespace()) {
                    end = Some(j);
                    break;
                }
                j += 1;
            }
            let Some(end) = end else {
                return Err(LexError {
                    message: format!("quoted string opened with {c} is not closed on this line"),
                    pos,
                });
            };
            let text: String = chars[i + 1..end].iter().collect();
            col += end + 1 - i;
            i = end + 1;
            tokens.push(Token {
                kind: TokenKind::Value { text, quoted: true },
                pos,
            });
            continue;
        }
        // Bare word: up to whitespace.
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() {
            i += 1;
        }
        col += i - start;
        let word: String = chars[start..i].iter().collect();
        let lower = word.to_ascii_lowercase();
        let kind = if word.starts_with('_') {
            TokenKind::Tag(word)
        } else if lower.starts_with("data_") {
            TokenKind::Data(word[5..].to_string())
        } else if lower == "loop_" {
            TokenKind::Loop
        } else if lower.starts_with("save_") || lower == "global_" || lower == "stop_" {
            TokenKind::Reserved(word)
        } else {
            TokenKind::Value {
                text: word,
                quoted: false,
            }
        };
        tokens.push(Token { kind, pos });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text)
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn value(s: &str, quoted: bool) -> TokenKind {
        TokenKind::Value {
            text: s.into(),
            quoted,
        }
    }

    #[test]
    fn tokens_of_a_small_block() {
        let k =
            kinds("data_x\r\n_cell_length_a 4.2(1) # comment\r\nloop_\r\n _a\r\n 'x, y, z'\r\n");
        assert_eq!(
            k,
            vec![
                TokenKind::Data("x".into()),
                TokenKind::Tag("_cell_length_a".into()),
                value("4.2(1)", false),
                TokenKind::Loop,
                TokenKind::Tag("_a".into()),
                value("x, y, z", true),
            ]
        );
    }

    #[test]
    fn quotes_inside_words_and_text_fields() {
        let k = kinds("_t 'it's fine' \n;\nline one\nline two\n;\n");
        assert_eq!(
            k,
            vec![
                TokenKind::Tag("_t".into()),
                value("it's fine", true),
                value("\nline one\nline two", true),
            ]
        );
    }

    #[test]
    fn positions_are_line_and_column() {
        let t = tokenize("data_a\n  _x   1\n").unwrap();
        assert_eq!(t[1].pos, Pos { line: 2, col: 3 });
        assert_eq!(t[2].pos, Pos { line: 2, col: 8 });
    }

    #[test]
    fn unterminated_constructs_are_errors_with_position() {
        let e = tokenize("_a\n  'open\n").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 3 });
        let e = tokenize("_a\n;\nnever closed\n").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 1 });
    }
}
