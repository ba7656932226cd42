//! Line and token positions for the line-oriented formats (POSCAR, XYZ).
//!
//! CIF has its own tokenizer; POSCAR and XYZ are whitespace-separated columns, so a line
//! split that remembers where each token starts is all they need to report errors with a
//! line and column.

use crate::cif::Pos;

/// One whitespace-separated token and where it starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'a> {
    pub text: &'a str,
    pub pos: Pos,
}

/// One line of the text: its 1-based number, its content (without the line break) and its
/// tokens.
#[derive(Clone, Debug)]
pub(crate) struct Line<'a> {
    pub number: usize,
    pub text: &'a str,
    pub tokens: Vec<Token<'a>>,
}

impl<'a> Line<'a> {
    /// Position of the first column of this line (for errors about a whole line).
    pub fn start(&self) -> Pos {
        Pos {
            line: self.number,
            col: 1,
        }
    }

    /// Position just past the last token (for errors about something missing at the end).
    pub fn end(&self) -> Pos {
        Pos {
            line: self.number,
            col: self.text.chars().count() + 1,
        }
    }
}

/// Splits text into lines (LF or CRLF) with tokens and their 1-based columns.
pub(crate) fn split_lines(text: &str) -> Vec<Line<'_>> {
    text.split('\n')
        .enumerate()
        .map(|(i, raw)| {
            let text = raw.strip_suffix('\r').unwrap_or(raw);
            Line {
                number: i + 1,
                text,
                tokens: tokens(text, i + 1),
            }
        })
        .collect()
}

/// The whitespace-separated tokens of one line (`text` without its line break).
pub(crate) fn tokens(text: &str, line: usize) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte offset, column)
    let mut col = 0;
    for (byte, ch) in text.char_indices() {
        col += 1;
        if ch.is_whitespace() {
            if let Some((b, c)) = start.take() {
                out.push(token(text, b, byte, line, c));
            }
        } else if start.is_none() {
            start = Some((byte, col));
        }
    }
    if let Some((b, c)) = start {
        out.push(token(text, b, text.len(), line, c));
    }
    out
}

fn token(text: &str, from: usize, to: usize, line: usize, col: usize) -> Token<'_> {
    Token {
        text: &text[from..to],
        pos: Pos { line, col },
    }
}

/// Parses a token as a finite number the way Python's `float()` does for plain decimals.
pub(crate) fn number(token: &Token<'_>) -> Option<f64> {
    token.text.parse::<f64>().ok().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_know_their_columns_across_crlf_and_tabs() {
        let lines = split_lines("a  bc\r\n\tx é y\n");
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].text, "a  bc");
        let cols: Vec<_> = lines[0]
            .tokens
            .iter()
            .map(|t| (t.text, t.pos.col))
            .collect();
        assert_eq!(cols, [("a", 1), ("bc", 4)]);
        let cols: Vec<_> = lines[1]
            .tokens
            .iter()
            .map(|t| (t.text, t.pos.col))
            .collect();
        assert_eq!(cols, [("x", 2), ("é", 4), ("y", 6)]);
        assert_eq!(lines[1].end().col, 7);
        assert!(lines[2].tokens.is_empty());
    }
}
