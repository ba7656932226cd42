//! Scoring a QA answer, and accuracy per file.
//!
//! The spec's rule: strip the `<answer>` tags and the whitespace around the answer, then the
//! rest must be exactly the correct letter; anything else is wrong. Read literally, and
//! decided here case by case:
//! - the whole response (whitespace at its ends removed) must be `<answer>`, the letter with
//!   optional whitespace around it, `</answer>`: `<answer> B </answer>` and
//!   `"\n<answer>\nB\n</answer>\n"` count as `B`;
//! - the letter must be an upper-case `A`, `B`, `C` or `D` exactly: `<answer>b</answer>`,
//!   `<answer>(B)</answer>`, `<answer>B.</answer>` and `<answer>B) 26</answer>` are
//!   [`QaLabel::Wrong`] (an exact match with the correct letter, which files write in upper
//!   case);
//! - text outside the tags (`The answer is <answer>B</answer>`), two answer tags, a tag left
//!   open and an empty answer are [`QaLabel::Wrong`];
//! - a response without any answer tag (a bare `B`, an empty response) is
//!   [`QaLabel::NoAnswer`], counted as wrong; tags are matched case-sensitively, so
//!   `<ANSWER>B</ANSWER>` has none.
//!
//! Where this differs from the reference's code: the reference deletes every `<answer>` and
//! `</answer>` wherever they stand and compares what is left, so a bare `B`, or `<answer>B`,
//! counts as correct there; the spec says an answer without tags is wrong, and we follow the
//! spec. The consequence is small for models that follow the instruction.
//!
//! [`accuracy_per_file`] gives the paper's metric (accuracy per data set) with a 95 % Wilson
//! score interval. Each verdict also carries the letter our extraction for reasoning models
//! reads ([`super::extract`]), for the second, labelled accuracy.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::item::Letter;

const OPEN: &str = "<answer>";
const CLOSE: &str = "</answer>";
/// The most characters of an answer kept in a verdict.
const ANSWER_KEPT: usize = 200;

/// The verdict's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QaLabel {
    /// Exactly the correct letter, in the tags.
    Correct,
    /// Any other answer in tags: another letter, a lower-case letter, extra text, two tags.
    Wrong,
    /// No `<answer>` tag at all.
    NoAnswer,
}

impl QaLabel {
    /// The label's name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            QaLabel::Correct => "Correct",
            QaLabel::Wrong => "Wrong",
            QaLabel::NoAnswer => "NoAnswer",
        }
    }
}

/// The verdict on one answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaVerdict {
    /// Correct, wrong or no answer.
    pub label: QaLabel,
    /// The letter answered, when the response has the required form (one tagged letter).
    pub letter: Option<Letter>,
    /// The text between the first pair of tags, whitespace trimmed (cut at 200 characters),
    /// when there is such a pair.
    pub answer: Option<String>,
    /// The correct letter.
    pub expected: Letter,
    /// Why an answer is wrong when it is not simply another letter.
    pub detail: Option<String>,
    /// The letter read by our extraction for reasoning models
    /// ([`reasoning_letter`](super::extract::reasoning_letter)), reported beside the exact
    /// rule; absent in verdicts stored before it existed.
    #[serde(default)]
    pub extracted: Option<Letter>,
}

impl QaVerdict {
    /// Whether our extraction for reasoning models reads the correct letter.
    pub fn extracted_correct(&self) -> bool {
        self.extracted == Some(self.expected)
    }
}

/// The verdict on `response` to a question whose correct choice is `expected`.
pub fn score_answer(response: &str, expected: Letter) -> QaVerdict {
    let text = response.trim();
    let opens = text.matches(OPEN).count();
    let closes = text.matches(CLOSE).count();
    let verdict = |label, letter, detail: Option<&str>| QaVerdict {
        label,
        letter,
        answer: first_pair(text),
        expected,
        detail: detail.map(str::to_string),
        extracted: super::extract::reasoning_letter(response),
    };
    if opens == 0 && closes == 0 {
        return verdict(QaLabel::NoAnswer, None, None);
    }
    if opens > 1 || closes > 1 {
        return verdict(QaLabel::Wrong, None, Some("more than one answer tag"));
    }
    let Some(inner) = text
        .strip_prefix(OPEN)
        .and_then(|rest| rest.strip_suffix(CLOSE))
    else {
        let detail = if opens != closes {
            "an answer tag without its pair"
        } else {
            "text outside the answer tags"
        };
        return verdict(QaLabel::Wrong, None, Some(detail));
    };
    let inner = inner.trim();
    match Letter::exact(inner) {
        Some(letter) if letter == expected => verdict(QaLabel::Correct, Some(letter), None),
        Some(letter) => verdict(QaLabel::Wrong, Some(letter), None),
        None if inner.is_empty() => verdict(QaLabel::Wrong, None, Some("empty answer")),
        None => verdict(
            QaLabel::Wrong,
            None,
            Some("not exactly one of the letters A, B, C, D"),
        ),
    }
}

/// The text between the first `<answer>` and the next `</answer>`, trimmed and cut.
fn first_pair(text: &str) -> Option<String> {
    let start = text.find(OPEN)? + OPEN.len();
    let len = text[start..].find(CLOSE)?;
    Some(
        text[start..start + len]
            .trim()
            .chars()
            .take(ANSWER_KEPT)
            .collect(),
    )
}

/// Accuracy of one data set (file).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileAccuracy {
    /// Questions answered (each sample counts once).
    pub n: usize,
    /// Correct answers.
    pub correct: usize,
    /// correct / n (0 when n is 0).
    pub accuracy: f64,
    /// Lower end of the 95 % Wilson score interval.
    pub low: f64,
    /// Upper end of the 95 % Wilson score interval.
    pub high: f64,
}

impl FileAccuracy {
    /// The accuracy of `correct` right answers out of `n`.
    pub fn of(correct: usize, n: usize) -> Self {
        let (low, high) = wilson_interval(correct, n);
        Self {
            n,
            correct,
            accuracy: if n == 0 {
                0.0
            } else {
                correct as f64 / n as f64
            },
            low,
            high,
        }
    }
}

/// The two-sided normal quantile of a 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson score interval of a proportion `correct / n`; `(0, 1)` when `n` is 0.
///
/// With p = k/n and z = 1.96: centre (p + z²/2n) / (1 + z²/n), half-width
/// z·√(p(1−p)/n + z²/4n²) / (1 + z²/n), clamped to [0, 1]. Only `sqrt` is used, which is
/// correctly rounded on every target, so the bounds agree bit for bit natively and in wasm.
pub fn wilson_interval(correct: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = (correct as f64 / n).clamp(0.0, 1.0);
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Accuracy per data set of `(file, correct)` pairs (one per scored answer), by file name.
pub fn accuracy_per_file<'a>(
    rows: impl IntoIterator<Item = (&'a str, bool)>,
) -> BTreeMap<String, FileAccuracy> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (file, correct) in rows {
        let c = counts.entry(file.to_string()).or_default();
        c.0 += usize::from(correct);
        c.1 += 1;
    }
    counts
        .into_iter()
        .map(|(file, (correct, n))| (file, FileAccuracy::of(correct, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(response: &str) -> QaLabel {
        score_answer(response, Letter::B).label
    }

    #[test]
    fn exact_tagged_letter_is_correct() {
        for r in [
            "<answer>B</answer>",
            "<answer> B </answer>",
            "  \n<answer>\nB\n</answer>\n",
            "<answer>\tB</answer>",
        ] {
            let v = score_answer(r, Letter::B);
            assert_eq!(v.label, QaLabel::Correct, "{r:?}");
            assert_eq!(v.letter, Some(Letter::B));
            assert_eq!(v.answer.as_deref(), Some("B"));
            assert_eq!(v.detail, None);
        }
    }

    #[test]
    fn another_letter_is_wrong_and_recorded() {
        let v = score_answer("<answer>C</answer>", Letter::B);
        assert_eq!(v.label, QaLabel::Wrong);
        assert_eq!(v.letter, Some(Letter::C));
        assert_eq!(v.expected, Letter::B);
        assert_eq!(v.detail, None);
    }

    #[test]
    fn lower_case_and_decorated_letters_are_wrong() {
        for r in [
            "<answer> b </answer>",
            "<answer>(B)</answer>",
            "<answer>B.</answer>",
            "<answer>B) 26</answer>",
            "<answer>BB</answer>",
            "<answer>E</answer>",
        ] {
            let v = score_answer(r, Letter::B);
            assert_eq!(v.label, QaLabel::Wrong, "{r:?}");
            assert_eq!(v.letter, None, "{r:?}");
            assert_eq!(
                v.detail.as_deref(),
                Some("not exactly one of the letters A, B, C, D")
            );
        }
        assert_eq!(
            score_answer("<answer> b </answer>", Letter::B)
                .answer
                .as_deref(),
            Some("b")
        );
    }

    #[test]
    fn extra_text_is_wrong() {
        for r in [
            "The answer is <answer>B</answer>",
            "<answer>B</answer> because the lattice is cubic",
            "<answer>B</answer>.",
        ] {
            let v = score_answer(r, Letter::B);
            assert_eq!(v.label, QaLabel::Wrong, "{r:?}");
            assert_eq!(v.letter, None);
            assert_eq!(v.answer.as_deref(), Some("B"));
            assert_eq!(v.detail.as_deref(), Some("text outside the answer tags"));
        }
    }

    #[test]
    fn two_tags_or_an_unpaired_tag_are_wrong() {
        let v = score_answer("<answer>B</answer><answer>B</answer>", Letter::B);
        assert_eq!(v.label, QaLabel::Wrong);
        assert_eq!(v.detail.as_deref(), Some("more than one answer tag"));
        assert_eq!(
            label("<answer>B</answer>\n<answer></answer>"),
            QaLabel::Wrong
        );
        assert_eq!(label("<answer><answer>B</answer>"), QaLabel::Wrong);
        let v = score_answer("<answer>B", Letter::B);
        assert_eq!(v.label, QaLabel::Wrong);
        assert_eq!(v.answer, None);
        assert_eq!(v.detail.as_deref(), Some("an answer tag without its pair"));
        assert_eq!(label("B</answer>"), QaLabel::Wrong);
    }

    #[test]
    fn no_tags_or_empty_is_no_answer() {
        for r in [
            "B",
            "",
            "   \n",
            "Answer: B",
            "<ANSWER>B</ANSWER>",
            "<answer B>",
        ] {
            let v = score_answer(r, Letter::B);
            assert_eq!(v.label, QaLabel::NoAnswer, "{r:?}");
            assert_eq!((v.letter, v.answer, v.detail), (None, None, None));
        }
    }

    #[test]
    fn empty_tags_are_wrong() {
        let v = score_answer("<answer> </answer>", Letter::B);
        assert_eq!(v.label, QaLabel::Wrong);
        assert_eq!(v.answer.as_deref(), Some(""));
        assert_eq!(v.detail.as_deref(), Some("empty answer"));
    }

    #[test]
    fn long_answers_are_cut_in_the_verdict() {
        let r = format!("<answer>{}</answer>", "é".repeat(500));
        let v = score_answer(&r, Letter::A);
        assert_eq!(v.answer.map(|a| a.chars().count()), Some(ANSWER_KEPT));
    }

    #[test]
    fn wilson_interval_values() {
        // Checked against the roots of (k/n − p)² = z²·p(1 − p)/n solved with numpy.
        let (lo, hi) = wilson_interval(8, 10);
        assert!((lo - 0.490_162_472).abs() < 1e-9, "{lo}");
        assert!((hi - 0.943_317_849).abs() < 1e-9, "{hi}");
        // The ends stay inside [0, 1] and are not degenerate.
        let (lo, hi) = wilson_interval(0, 20);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.161_125_158).abs() < 1e-9, "{hi}");
        let (lo, hi) = wilson_interval(20, 20);
        assert!((lo - 0.838_874_842).abs() < 1e-9, "{lo}");
        assert_eq!(hi, 1.0);
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        // Symmetric around one half.
        let (lo, hi) = wilson_interval(50, 100);
        assert!((lo + hi - 1.0).abs() < 1e-12);
    }

    #[test]
    fn accuracy_is_per_file() {
        let rows = [
            ("code", true),
            ("doc", false),
            ("code", false),
            ("code", true),
            ("doc", true),
            ("code", true),
        ];
        let acc = accuracy_per_file(rows);
        assert_eq!(acc.len(), 2);
        assert_eq!((acc["code"].correct, acc["code"].n), (3, 4));
        assert_eq!(acc["code"].accuracy, 0.75);
        assert_eq!((acc["doc"].correct, acc["doc"].n), (1, 2));
        assert!(acc["code"].low < 0.75 && acc["code"].high > 0.75);
        assert_eq!((acc["doc"].low, acc["doc"].high), wilson_interval(1, 2));
        assert!(accuracy_per_file([]).is_empty());
        assert_eq!(FileAccuracy::of(0, 0).accuracy, 0.0);
    }
}
