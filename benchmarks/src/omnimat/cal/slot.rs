//! One slot: a gold string against a predicted string, in exact mode and in the 10 %
//! threshold mode, each falling back to comparing the normalised texts.
//!
//! Exact: the prediction is rounded half-even to the number of decimals the raw gold shows
//! (digits after its first "."; 0 if none) and compared with the gold's value, which is not
//! itself rounded. So "2.50" accepts 2.504, but "4.2 \times 10^{-13}" (one decimal shown,
//! value far finer) matches only as identical text, and gold "2" accepts 2.5 (half-even to
//! 2) although the threshold mode rejects it: exact is not stricter than threshold.
//!
//! Threshold: |gold − pred| ≤ 0.1·max(|gold|, |pred|); when either is 0, |gold − pred| ≤
//! 1e-12 (so a gold with |gold| ≤ 1e-12 is matched by 0).
//!
//! Where the reference crashes (see [`Crash`]) the slot is scored by comparing the values
//! unrounded (or as text when a value cannot be held) and carries the crash as a quirk.

use serde::{Deserialize, Serialize};

use super::decimal::{Dec, EMAX};
use super::normalize::clean_text;
use super::number::{gold_decimals, read_number, Crash, Form, Reading};
use engine::python::is_py_space as py_isspace;

/// A behaviour of the reference that decided (or may have decided) a slot, for a page to
/// explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quirk {
    /// The reference crashes here; ours compared unrounded values (or texts).
    ReferenceCrash(Crash),
    /// The gold's value is finer than the decimals it shows, so exact mode can match it only
    /// as identical text.
    GoldFinerThanItsDecimals,
    /// Exact mode (rounding to the gold's decimals) accepted what the 10 % threshold did not.
    ExactLooserThanThreshold,
    /// `\dfrac`/`\tfrac` become `\d\frac`/`\t\frac` and never read as fractions.
    DfracNotRead,
    /// Commas are removed before reading ("2,5" reads 25).
    CommaRemoved,
    /// A non-ASCII space (e.g. a no-break space) is kept by normalisation and blocks reading
    /// a number.
    UnicodeSpaceBlocksNumber,
    /// "a x 10b" without caret or braces reads as a × 10^b ("2.50 × 100" reads 2.50).
    BareTimesTen,
    /// ".5" and "5." are not numbers for the reference.
    BareDecimalPoint,
    /// `-\frac{a}{b}` is not a number (the sign must be inside the braces).
    SignOutsideFrac,
    /// An extra predicted slot that is empty after normalisation counts as a correct slot.
    EmptyExtraSlot,
}

impl Quirk {
    /// One sentence for a note.
    pub fn describe(self) -> String {
        match self {
            Quirk::ReferenceCrash(c) => format!(
                "the reference scorer crashes on this slot ({}); ours compared the values unrounded",
                c.describe()
            ),
            Quirk::GoldFinerThanItsDecimals => "the gold's value is finer than the decimals it shows, so exact mode (rounding to those decimals) matches it only as identical text".into(),
            Quirk::ExactLooserThanThreshold => "exact mode rounds the prediction to the gold's decimals and accepts it; the 10 % threshold does not".into(),
            Quirk::DfracNotRead => "\\dfrac becomes \\d\\frac in normalisation and is never read as a fraction".into(),
            Quirk::CommaRemoved => "commas are removed before reading a number (\"2,5\" reads 25)".into(),
            Quirk::UnicodeSpaceBlocksNumber => "a non-ASCII space (e.g. a no-break space) is not removed and blocks reading the number".into(),
            Quirk::BareTimesTen => "\"a x 10b\" without ^ or braces reads as a × 10^b (\"2.50 × 100\" reads 2.50)".into(),
            Quirk::BareDecimalPoint => "\".5\" and \"5.\" are not numbers for the reference".into(),
            Quirk::SignOutsideFrac => "-\\frac{a}{b} is not a number for the reference (\\frac{-a}{b} is)".into(),
            Quirk::EmptyExtraSlot => "an extra predicted slot that is empty counts as a correct slot (the item still fails on the slot count)".into(),
        }
    }
}

/// The verdict on one slot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotVerdict {
    /// The gold slot ("" when the prediction has more slots).
    pub gold: String,
    /// The predicted slot ("" when missing).
    pub predicted: String,
    /// Matched in exact mode.
    pub exact: bool,
    /// Matched in the 10 % threshold mode.
    pub threshold: bool,
    /// Reference behaviours that concern this slot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quirks: Vec<Quirk>,
}

fn value_of(r: &Option<Reading>) -> Option<&Dec> {
    r.as_ref().and_then(|r| r.value.as_ref())
}

/// Score one slot. `extra` says the slot is beyond the gold's slots.
pub fn score_slot(gold: &str, predicted: &str, extra: bool) -> SlotVerdict {
    let gc = clean_text(gold);
    let pc = clean_text(predicted);
    let g = read_number(&gc);
    let p = read_number(&pc);
    let mut quirks: Vec<Quirk> = Vec::new();
    let crash = |c: Crash, q: &mut Vec<Quirk>| {
        if !q.contains(&Quirk::ReferenceCrash(c)) {
            q.push(Quirk::ReferenceCrash(c));
        }
    };
    for c in [&g, &p].into_iter().flatten().filter_map(|r| r.crash) {
        crash(c, &mut quirks);
    }
    let text_equal = gc == pc;

    let mut exact_numeric = false;
    let mut threshold_numeric = false;
    if let (Some(gv), Some(pv)) = (value_of(&g), value_of(&p)) {
        let k = gold_decimals(gold) as i128;
        exact_numeric = match pv.quantize(k) {
            Some(r) => r.value_eq(gv),
            None => {
                crash(Crash::RoundingPrecision, &mut quirks);
                pv.value_eq(gv)
            }
        };
        if !exact_numeric && !gv.round_at_exponent(-k).value_eq(gv) {
            quirks.push(Quirk::GoldFinerThanItsDecimals);
        }
        let diff = gv.sub(pv).abs();
        let over = |x: &Dec| x.adjusted().is_some_and(|a| a > EMAX);
        if over(gv) || over(pv) || over(&diff) {
            crash(Crash::ThresholdOverflow, &mut quirks);
        }
        let ga = gv.abs().in_context();
        let pa = pv.abs().in_context();
        let max_abs = if ga.cmp_value(&pa).is_ge() { &ga } else { &pa };
        threshold_numeric = if max_abs.is_zero() {
            true
        } else if ga.is_zero() || pa.is_zero() {
            diff.cmp_value(&Dec::pow10(-12)).is_le()
        } else {
            diff.cmp_value(&max_abs.shift(-1)).is_le()
        };
    }
    let exact = exact_numeric || text_equal;
    let threshold = threshold_numeric || text_equal;
    if exact && !threshold {
        quirks.push(Quirk::ExactLooserThanThreshold);
    }
    let p_number = value_of(&p).is_some();
    if !exact && (predicted.contains("\\dfrac") || predicted.contains("\\tfrac")) {
        quirks.push(Quirk::DfracNotRead);
    }
    if p_number && predicted.contains(',') {
        quirks.push(Quirk::CommaRemoved);
    }
    if !p_number && pc.chars().any(py_isspace) {
        quirks.push(Quirk::UnicodeSpaceBlocksNumber);
    }
    if p.as_ref().is_some_and(|r| r.form == Form::TimesTenBare) {
        quirks.push(Quirk::BareTimesTen);
    }
    if !p_number && !exact && bare_point(&pc) {
        quirks.push(Quirk::BareDecimalPoint);
    }
    if !p_number && !exact && pc.starts_with("-\\frac{") {
        quirks.push(Quirk::SignOutsideFrac);
    }
    if extra && pc.is_empty() {
        quirks.push(Quirk::EmptyExtraSlot);
    }
    SlotVerdict {
        gold: gold.to_string(),
        predicted: predicted.to_string(),
        exact,
        threshold,
        quirks,
    }
}

/// ".5", "-.5", "5." and the like.
fn bare_point(s: &str) -> bool {
    let body = s.trim_start_matches(['+', '-']);
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    match body.split_once('.') {
        Some((a, b)) => (a.is_empty() && digits(b)) || (b.is_empty() && digits(a)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(g: &str, p: &str) -> (bool, bool) {
        let v = score_slot(g, p, false);
        (v.exact, v.threshold)
    }

    #[test]
    fn the_specs_examples() {
        assert_eq!(both("2.50", "2.504"), (true, true));
        assert_eq!(both("2", "2.5"), (true, false));
        assert_eq!(both("4.2 \\times 10^{-13}", "4.2e-13"), (false, true));
        assert_eq!(
            both("4.2 \\times 10^{-13}", "4.2 \\times 10^{-13}"),
            (true, true)
        );
        assert_eq!(both("0", "0"), (true, true));
        assert_eq!(both("1e-13", "0"), (false, true));
        let v = score_slot("4.0 × 10^62", "4.0 × 10^62", false);
        assert!(v.exact && v.threshold);
        assert_eq!(v.quirks, [Quirk::ReferenceCrash(Crash::RoundingPrecision)]);
        let v = score_slot("2.42", "1e48", false);
        assert!(!v.exact);
        assert!(v
            .quirks
            .contains(&Quirk::ReferenceCrash(Crash::RoundingPrecision)));
    }
}
