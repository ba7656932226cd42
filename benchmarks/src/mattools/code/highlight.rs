//! Python syntax colouring for the code answers of MatTools' tasks (the suites page shows
//! it; kept here, with the suite, so that it is tested natively and in wasm).
//!
//! Written by hand: the page needs keywords, strings, comments, numbers and decorators told
//! apart in a few hundred lines of model-written code, and the highlighting crates that do
//! more (syntect, tree-sitter) bring megabytes of grammars or C code to the wasm build. The
//! tokenizer never fails: text it does not recognise is plain.

/// What a piece of the text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Anything else.
    Plain,
    /// A keyword (`def`, `return`, `None`, …).
    Keyword,
    /// A string literal, prefixes and triple quotes included.
    String,
    /// A comment to the end of the line.
    Comment,
    /// A number literal.
    Number,
    /// A decorator (`@property`).
    Decorator,
}

impl Kind {
    /// The CSS class of the piece.
    pub fn class(self) -> &'static str {
        match self {
            Kind::Plain => "",
            Kind::Keyword => "kw",
            Kind::String => "str",
            Kind::Comment => "com",
            Kind::Number => "num",
            Kind::Decorator => "dec",
        }
    }
}

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// `text` cut into pieces of one kind each; the pieces joined give `text` back.
pub fn highlight(text: &str) -> Vec<(Kind, &str)> {
    let mut out: Vec<(Kind, std::ops::Range<usize>)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let (kind, end) = match c {
            b'#' => (Kind::Comment, line_end(bytes, i)),
            b'\'' | b'"' => (Kind::String, string_end(bytes, i)),
            b'@' if at_line_start(bytes, i) => (Kind::Decorator, word_end(bytes, i + 1)),
            b'0'..=b'9' if !follows_word(bytes, i) => (Kind::Number, number_end(bytes, i)),
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let end = word_end(bytes, i);
                // A string prefix: r'…', b"…", f'…', rb"…".
                if end - i <= 2
                    && matches!(bytes.get(end), Some(b'\'' | b'"'))
                    && bytes[i..end]
                        .iter()
                        .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'f' | b'u'))
                {
                    (Kind::String, string_end(bytes, end))
                } else if KEYWORDS.contains(&&text[i..end]) {
                    (Kind::Keyword, end)
                } else {
                    (Kind::Plain, end)
                }
            }
            _ => (Kind::Plain, next_char(text, i)),
        };
        match out.last_mut() {
            // Neighbouring plain pieces come out as one.
            Some((Kind::Plain, prev)) if kind == Kind::Plain => prev.end = end,
            _ if end > i => out.push((kind, i..end)),
            _ => {}
        }
        i = end;
    }
    out.into_iter().map(|(k, r)| (k, &text[r])).collect()
}

fn next_char(text: &str, i: usize) -> usize {
    text[i..]
        .chars()
        .next()
        .map_or(text.len(), |c| i + c.len_utf8())
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

fn word_end(b: &[u8], i: usize) -> usize {
    i + b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'.')
        .count()
}

fn number_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        let exponent_sign = matches!(c, b'+' | b'-')
            && j > i
            && matches!(b[j - 1], b'e' | b'E')
            && !b[i..j].iter().any(|d| matches!(d, b'x' | b'X'));
        if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exponent_sign {
            j += 1;
        } else {
            break;
        }
    }
    j
}

fn follows_word(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

fn at_line_start(b: &[u8], i: usize) -> bool {
    b[..i]
        .iter()
        .rev()
        .take_while(|&&c| c != b'\n')
        .all(|c| *c == b' ' || *c == b'\t')
}

/// The end of the string literal opening at `i` (a quote): triple quotes run to their
/// closing triple, single ones to their quote or the line's end; backslashes escape.
fn string_end(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q && !triple => return j + 1,
            c if c == q && b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) => return j + 3,
            b'\n' if !triple => return j,
            _ => j += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        highlight(text)
            .into_iter()
            .filter(|(k, _)| *k != Kind::Plain)
            .collect()
    }

    #[test]
    fn pieces_join_back_and_kinds_are_told_apart() {
        let code = "@property\ndef f(x_1):  # the value\n    s = r'a\\'b' + \"\"\"multi\nline\"\"\"\n    return 3.5e-2 if x_1 else None\n";
        let pieces = highlight(code);
        assert_eq!(pieces.iter().map(|(_, p)| *p).collect::<String>(), code);
        assert_eq!(
            kinds(code),
            [
                (Kind::Decorator, "@property"),
                (Kind::Keyword, "def"),
                (Kind::Comment, "# the value"),
                (Kind::String, "r'a\\'b'"),
                (Kind::String, "\"\"\"multi\nline\"\"\""),
                (Kind::Keyword, "return"),
                (Kind::Number, "3.5e-2"),
                (Kind::Keyword, "if"),
                (Kind::Keyword, "else"),
                (Kind::Keyword, "None"),
            ]
        );
    }

    #[test]
    fn unfinished_and_foreign_text_is_kept() {
        for text in [
            "'open",
            "\"\"\"never closed",
            "x = 'é' # ü",
            "<answer>ß</answer>",
            "",
        ] {
            let joined: String = highlight(text).iter().map(|(_, p)| *p).collect();
            assert_eq!(joined, text);
        }
        // A digit inside a name is not a number.
        assert_eq!(kinds("x1 = v2"), []);
    }
}
