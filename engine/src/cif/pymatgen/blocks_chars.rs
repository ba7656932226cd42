//! The character-level block splitter that `pymatgen_blocks` replaced, kept as the oracle
//! of a property test: the byte-level splitter must cut every text exactly as this one
//! (whose own agreement with pymatgen the differential tests established). Only the steps
//! that were rewritten live here (finding blocks, deleting comments, blank lines and
//! non-ASCII characters, cutting lines into tokens); what the tokens mean is shared.

use super::blocks::{block_of_tokens, one_byte_per_char, PmgBlock, Positions, Token};
use crate::cif::CifError;
use crate::python::is_py_space;

/// A character of the text and its index in the original.
type Ch = (char, usize);

/// Split CIF text into pymatgen's data blocks (in its dict order: a repeated header replaces
/// the earlier block in place). Errors are the ones `CifBlock.from_str` raises.
pub fn pymatgen_blocks_chars(text: &str) -> Result<Vec<PmgBlock>, CifError> {
    let chars: Vec<char> = text.chars().collect();
    let positions = Positions::new(&one_byte_per_char(text));
    let mut blocks: Vec<PmgBlock> = Vec::new();
    let starts = block_starts(&chars);
    for (n, &(_, data_at)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(chars.len(), |&(s, _)| s);
        // The header line (up to the first '\n' after "data_") names powder-pattern blocks.
        let body = &chars[data_at + 5..end];
        let first_line: String = body.iter().take_while(|&&c| c != '\n').collect();
        if first_line.contains("powder_pattern") {
            continue;
        }
        let block = block_of_tokens(tokens_of(&chars[data_at..end], data_at), &positions)?;
        match blocks.iter_mut().find(|b| b.header == block.header) {
            Some(slot) => *slot = block,
            None => blocks.push(block),
        }
    }
    Ok(blocks)
}

/// Matches of `^\s*data_` (multi-line): (line start, index of `data_`).
fn block_starts(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let line_start = i == 0 || chars[i - 1] == '\n';
        if line_start {
            let mut j = i;
            while j < chars.len() && is_py_space(chars[j]) {
                j += 1;
            }
            if chars.len() >= j + 5 && chars[j..j + 5].iter().copied().eq("data_".chars()) {
                out.push((i, j));
                i = j + 5;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Delete comments: from a `#` at a line start, or from the whitespace character before a
/// `#`, to the end of the line (the line break itself stays unless it was that whitespace).
/// `s` starts at character `offset` of the text; the result remembers each kept character's
/// index there.
fn strip_comments(s: &[char], offset: usize) -> Vec<Ch> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let hash_next = s.get(i + 1) == Some(&'#');
        let at_line_start = i == 0 || s[i - 1] == '\n';
        let starts = (is_py_space(s[i]) && hash_next) || (at_line_start && s[i] == '#');
        if starts {
            let mut j = if s[i] == '#' { i + 1 } else { i + 2 };
            while j < s.len() && s[j] != '\n' {
                j += 1;
            }
            i = j;
            continue;
        }
        out.push((s[i], offset + i));
        i += 1;
    }
    out
}

/// Delete runs of blank lines (`^\s*\n`, multi-line).
fn strip_blank_lines(s: &[Ch]) -> Vec<Ch> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let at_line_start = i == 0 || s[i - 1].0 == '\n';
        if at_line_start {
            let mut j = i;
            let mut last_newline = None;
            while j < s.len() && is_py_space(s[j].0) {
                if s[j].0 == '\n' {
                    last_newline = Some(j);
                }
                j += 1;
            }
            if let Some(k) = last_newline {
                i = k + 1;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Python `str.splitlines()` on ASCII text, as slices of `s`.
fn split_lines(s: &[Ch]) -> Vec<&[Ch]> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let c = s[i].0;
        if matches!(
            c,
            '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}'
        ) {
            lines.push(&s[start..i]);
            if c == '\r' && s.get(i + 1).is_some_and(|n| n.0 == '\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

fn string_of(s: &[Ch]) -> String {
    s.iter().map(|c| c.0).collect()
}

/// Python `str.strip()` on positioned characters.
fn strip_chars(s: &[Ch]) -> &[Ch] {
    let start = s.iter().position(|c| !is_py_space(c.0)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !is_py_space(c.0))
        .map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// The token regex `([^'"\s][\S]*)|'(.*?)'(?!\S)|"(.*?)"(?!\S)` applied with `findall`.
fn tokenize_line(line: &[Ch], out: &mut Vec<Token>) {
    let mut p = 0;
    while p < line.len() {
        let c = line[p].0;
        if is_py_space(c) {
            p += 1;
            continue;
        }
        if c != '\'' && c != '"' {
            let mut q = p;
            while q < line.len() && !is_py_space(line[q].0) {
                q += 1;
            }
            out.push(Token {
                quoted: false,
                text: string_of(&line[p..q]).into(),
                at: line[p].1,
            });
            p = q;
            continue;
        }
        let close = (p + 1..line.len())
            .find(|&q| line[q].0 == c && line.get(q + 1).is_none_or(|n| is_py_space(n.0)));
        match close {
            Some(q) => {
                out.push(Token {
                    quoted: true,
                    text: string_of(&line[p + 1..q]).into(),
                    at: line[p].1,
                });
                p = q + 1;
            }
            None => p += 1,
        }
    }
}

/// `CifBlock._process_string`: the token stream of one block.
fn tokens_of(block: &[char], offset: usize) -> Vec<Token> {
    let cleaned: Vec<Ch> = strip_blank_lines(&strip_comments(block, offset))
        .into_iter()
        .filter(|c| c.0.is_ascii())
        .collect();
    let mut tokens = Vec::new();
    let mut multiline = false;
    let mut field: Vec<String> = Vec::new();
    let mut field_at = 0;
    for line in split_lines(&cleaned) {
        let mut line: &[Ch] = line;
        if multiline {
            if line.first().is_some_and(|c| c.0 == ';') {
                multiline = false;
                tokens.push(Token {
                    quoted: true,
                    text: field.join(" ").into(),
                    at: field_at,
                });
                field.clear();
                line = strip_chars(&line[1..]);
            } else {
                field.push(string_of(line));
                continue;
            }
        }
        if line.first().is_some_and(|c| c.0 == ';') {
            multiline = true;
            field_at = line[0].1;
            field.push(string_of(strip_chars(&line[1..])));
        } else {
            tokenize_line(line, &mut tokens);
        }
    }
    tokens
}
