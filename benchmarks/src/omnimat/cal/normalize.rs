//! The text normalisation the reference applies to both sides of a slot before reading a
//! number or comparing text (its `clean_text`), step by step in its order.
//!
//! Quirks kept on purpose (they decide slots in the paper's numbers):
//! - only U+0000–U+001F, U+007F and the ASCII space are removed: a no-break space inside a
//!   number stays and blocks reading it;
//! - every comma is removed, so "2,5" reads 25;
//! - `frac` not preceded by a backslash gains one, so `\dfrac` becomes `\d\frac` and never
//!   reads as a fraction;
//! - `\left` and `\right` are removed as plain substrings (also inside `\leftarrow`);
//! - the wrappers `\mathrm`, `\operatorname`, `\text`, `\textrm`, `\mathbf`, `\mathit` (and
//!   the reference's `\mathrmbf`) are unwrapped in one left-to-right pass, only when their
//!   content has no braces; then `\boxed{}` the same way.
//!
//! No lower-casing, no unit stripping.

const WRAPPERS: [&str; 7] = [
    "mathrm",
    "operatorname",
    "text",
    "textrm",
    "mathbf",
    "mathit",
    "mathrmbf",
];

/// The reference's normalisation of a slot (see the module docs).
pub fn clean_text(value: &str) -> String {
    let text: String = value
        .chars()
        .filter(|&c| !(c <= '\u{1f}' || c == '\u{7f}') && c != '$')
        .collect();
    let text = text
        .replace("\\left", "")
        .replace("\\right", "")
        .replace("\\,", "")
        .replace([' ', ','], "")
        .replace(['\u{2212}', '\u{2013}', '\u{2014}'], "-")
        .replace('\u{d7}', "x")
        .replace("\\times", "x")
        .replace("\\cdot", "x")
        .replace(['\u{2219}', '\u{b7}'], "x");
    let text = backslash_frac(&text);
    let text = unwrap_pass(&text, &WRAPPERS);
    unwrap_pass(&text, &["boxed"])
}

/// `(?<!\\)frac` → `\frac`.
fn backslash_frac(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("frac") && prev != Some('\\') {
            out.push_str("\\frac");
            rest = &rest[4..];
            prev = Some('c');
            continue;
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// One left-to-right pass of `\\(?:name1|name2|…)\{([^{}]*)\}` → content.
fn unwrap_pass(text: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix('\\') {
            if let Some((content, used)) = names.iter().find_map(|n| wrapped(after, n)) {
                out.push_str(content);
                i += 1 + used;
                continue;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// `name{content}` at the start of `s` with brace-free content: the content and the bytes
/// used.
fn wrapped<'a>(s: &'a str, name: &str) -> Option<(&'a str, usize)> {
    let body = s.strip_prefix(name)?.strip_prefix('{')?;
    let end = body.find(['{', '}'])?;
    body[end..].starts_with('}').then(|| {
        let content = &body[..end];
        (content, name.len() + 1 + end + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_reference_steps() {
        assert_eq!(clean_text("$1.5 \\times 10^{4}$"), "1.5x10^{4}");
        assert_eq!(clean_text("2,5"), "25");
        assert_eq!(clean_text("\\dfrac{1}{2}"), "\\d\\frac{1}{2}");
        assert_eq!(clean_text("frac{1}{2}"), "\\frac{1}{2}");
        assert_eq!(clean_text("\\text{\\mathrm{x}}"), "\\text{x}");
        assert_eq!(clean_text("\\mathrm{MPa}"), "MPa");
        assert_eq!(clean_text("\\textrm{a}"), "a");
        assert_eq!(clean_text("\\boxed{\\text{5}}"), "5");
        assert_eq!(clean_text("\u{2212}3\u{a0}"), "-3\u{a0}");
        assert_eq!(clean_text("3 \u{b7} 10^5"), "3x10^5");
        assert_eq!(clean_text("\\left(1\\right)"), "(1)");
        assert_eq!(clean_text("a\u{7}b\u{7f}"), "ab");
    }
}
