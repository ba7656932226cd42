//! Reading the chosen letter out of a reasoning model's answer.
//!
//! Reasoning models (the paper's qwq-32b, DeepSeek-R1, Gemini thinking models) write their
//! reasoning before the answer and often decorate the letter (`<answer>(B)</answer>`,
//! `**B**`, "The answer is B."), which the exact rule of [`super::score`] counts as wrong.
//! The MatTools paper reports such models after extracting their answers (its Table S1),
//! but publishes neither the rule nor the code; this module is our reading, reported beside
//! the exact rule and labelled as ours, never instead of it:
//!
//! 1. Reasoning is dropped: everything up to the last `</think>` (also `</thinking>`,
//!    `</reasoning>`; serving stacks often strip the opening tag). A reasoning block opened
//!    and never closed leaves no answer.
//! 2. If `<answer>…</answer>` pairs remain (tags in any case), only the last pair's text is
//!    read; otherwise the whole rest is.
//! 3. In that text the letter is, in this order: the whole text when it is one letter A–D in
//!    either case with only brackets, emphasis or punctuation around it (`(b)`, `**C**`,
//!    `D.`); else the last letter named after "answer", "option" or "choice" (`The answer
//!    is B`, `Answer: (C)`, `option D`); else a letter opening the text before a separator
//!    (`B) 26`, `C: because …`). Only upper-case letters count in the last two forms, so the
//!    article "a" is never read as choice A.

use super::item::Letter;

/// Closing tags of reasoning blocks, and their opening tags.
const REASONING_TAGS: [(&str, &str); 3] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
];

/// Words after which a letter names the chosen option.
const CUES: [&str; 3] = ["answer", "option", "choice"];

/// The letter a reasoning model chose in `response`, if one can be read (see the module
/// documentation for the rule).
pub fn reasoning_letter(response: &str) -> Option<Letter> {
    let answer = after_reasoning(response)?;
    let text = last_answer_tag(answer).unwrap_or(answer);
    bare_letter(text)
        .or_else(|| cued_letter(text))
        .or_else(|| leading_letter(text))
}

/// The text after the last closed reasoning block; `None` when a block is left open.
fn after_reasoning(response: &str) -> Option<&str> {
    let lower = response.to_ascii_lowercase();
    let mut start = 0;
    for (_, close) in REASONING_TAGS {
        if let Some(at) = lower.rfind(close) {
            start = start.max(at + close.len());
        }
    }
    let rest = &lower[start..];
    if REASONING_TAGS.iter().any(|(open, _)| rest.contains(open)) {
        return None;
    }
    Some(&response[start..])
}

/// The text inside the last `<answer>…</answer>` pair (tags in any case), if there is one.
fn last_answer_tag(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let close = lower.rfind("</answer>")?;
    let open = lower[..close].rfind("<answer>")? + "<answer>".len();
    Some(&text[open..close])
}

/// The letter when `text` is one letter with only decoration around it.
fn bare_letter(text: &str) -> Option<Letter> {
    let core = text.trim_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '(' | ')' | '[' | ']' | '*' | '_' | '.' | ':' | '"' | '\'' | '`'
            )
    });
    let mut chars = core.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    upper_letter(c.to_ascii_uppercase())
}

/// The last upper-case letter standing alone within a few decoration characters after a cue
/// word ("answer", "option", "choice", any case).
fn cued_letter(text: &str) -> Option<Letter> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for cue in CUES {
        for (at, _) in lower.match_indices(cue) {
            let after = &text[at + cue.len()..];
            if let Some((pos, letter)) = letter_after_cue(after) {
                let pos = at + cue.len() + pos;
                if found.is_none_or(|(p, _)| pos > p) {
                    found = Some((pos, letter));
                }
            }
        }
    }
    found.map(|(_, letter)| letter)
}

/// A lone upper-case letter right after a cue, past at most "is", a colon, brackets and
/// emphasis: its byte offset in `after` and the letter.
fn letter_after_cue(after: &str) -> Option<(usize, Letter)> {
    let mut rest = after.trim_start_matches(|c: char| c.is_whitespace() || c == ':');
    for filler in ["is", "would be", "should be"] {
        if let Some(r) = rest.strip_prefix(filler) {
            rest = r;
        }
    }
    let rest = rest.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '(' | '[' | '*' | '_' | '"' | '\'' | '`')
    });
    let offset = after.len() - rest.len();
    let mut chars = rest.chars();
    let letter = upper_letter(chars.next()?)?;
    standalone(chars.next()).then_some((offset, letter))
}

/// An upper-case letter opening `text` and followed by a separator (`B)`, `C.`, `D:`).
fn leading_letter(text: &str) -> Option<Letter> {
    let rest = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '(' | '[' | '*'));
    let mut chars = rest.chars();
    let letter = upper_letter(chars.next()?)?;
    matches!(chars.next(), Some(')' | ']' | '.' | ':' | '*' | ',')).then_some(letter)
}

/// Whether the character after a letter ends it as a word.
fn standalone(next: Option<char>) -> bool {
    next.is_none_or(|c| !c.is_alphanumeric())
}

/// `c` as a choice when it is `A` to `D`.
fn upper_letter(c: char) -> Option<Letter> {
    let mut buf = [0; 4];
    Letter::exact(c.encode_utf8(&mut buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(r: &str) -> Option<Letter> {
        reasoning_letter(r)
    }

    #[test]
    fn exact_answers_read_as_themselves() {
        assert_eq!(read("<answer>B</answer>"), Some(Letter::B));
        assert_eq!(read(" <answer>\nD\n</answer> "), Some(Letter::D));
    }

    #[test]
    fn reasoning_blocks_are_dropped() {
        let r = "<think>A is wrong because the radius… so C?</think>\n<answer>B</answer>";
        assert_eq!(read(r), Some(Letter::B));
        // The opening tag stripped by the serving stack.
        assert_eq!(
            read("Hmm, A or C… C.</think>\n\n<answer>C</answer>"),
            Some(Letter::C)
        );
        assert_eq!(
            read("<thinking>maybe D</thinking>The answer is A."),
            Some(Letter::A)
        );
        // A block never closed (the model ran out of tokens) answers nothing.
        assert_eq!(read("<think>The answer is B, let me check"), None);
        // Nothing after the reasoning.
        assert_eq!(read("<think>The answer is B</think>"), None);
    }

    #[test]
    fn decorated_letters_in_tags() {
        for (r, l) in [
            ("<answer>(B)</answer>", Letter::B),
            ("<answer>b</answer>", Letter::B),
            ("<answer>**C**</answer>", Letter::C),
            ("<answer>D.</answer>", Letter::D),
            ("<answer>B) 26</answer>", Letter::B),
            ("<ANSWER>A</ANSWER>", Letter::A),
            ("<answer>The answer is C</answer>", Letter::C),
        ] {
            assert_eq!(read(r), Some(l), "{r:?}");
        }
    }

    #[test]
    fn the_last_answer_tag_counts() {
        assert_eq!(
            read("<answer>A</answer> no wait <answer>D</answer>"),
            Some(Letter::D)
        );
    }

    #[test]
    fn cued_letters_without_tags() {
        for (r, l) in [
            ("The answer is B.", Letter::B),
            ("Answer: (C)", Letter::C),
            ("I would pick option D because…", Letter::D),
            ("A is a valid method, but the answer is **C**", Letter::C),
            ("The answer is A. On reflection the answer is B", Letter::B),
            ("B", Letter::B),
        ] {
            assert_eq!(read(r), Some(l), "{r:?}");
        }
    }

    #[test]
    fn no_letter_no_answer() {
        for r in [
            "",
            "I do not know.",
            "The answer is a float.",
            "The answer is Boron",
            "<answer>E</answer>",
            "<answer></answer>",
            "a) is tempting",
        ] {
            assert_eq!(read(r), None, "{r:?}");
        }
    }
}
