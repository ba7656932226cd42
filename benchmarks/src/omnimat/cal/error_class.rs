//! What kind of mistake a wrong CAL answer makes, read mechanically from its slots.
//!
//! The OmniMatBench paper sorts wrong calculations into an error taxonomy in its appendix by
//! reading the solutions; neither its labels per item nor a rule are published. This is our
//! own taxonomy, labelled as ours wherever it is shown, made only of what the slots prove:
//! the answer is missing or has the wrong number of values, or a wrong slot is within 10 %
//! (a rounding or approximation slip), has the wrong sign, is off by a power of ten (a unit
//! prefix or scale slip), is no number where one was expected, differs as text, or is
//! simply another value. An item takes the gravest class among its wrong slots, in the
//! order of [`CalErrorClass::ALL`] read backwards.

use serde::{Deserialize, Serialize};

use super::normalize::clean_text;
use super::number::read_number;
use super::score::{CalLabel, CalVerdict};
use super::slot::SlotVerdict;

/// The largest power of ten taken for a scale slip (10^±30 spans every SI prefix pair).
const MAX_SCALE: i32 = 30;

/// A wrong item's error class, mildest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CalErrorClass {
    /// Within 10 % of the gold but not equal after rounding to its decimals.
    Within10Percent,
    /// The gold's magnitude (within 10 %) with the opposite sign.
    WrongSign,
    /// The gold times a power of ten (within 10 %): a unit prefix or scale slip.
    PowerOfTen,
    /// A text answer (the gold is not a number) that differs.
    WrongText,
    /// No number where the gold is one.
    NotANumber,
    /// Another value.
    WrongValue,
    /// More or fewer values than the gold.
    WrongCount,
    /// No answer at all.
    NoAnswer,
}

impl CalErrorClass {
    /// Every class, mildest first (the order of tables).
    pub const ALL: [CalErrorClass; 8] = [
        CalErrorClass::Within10Percent,
        CalErrorClass::WrongSign,
        CalErrorClass::PowerOfTen,
        CalErrorClass::WrongText,
        CalErrorClass::NotANumber,
        CalErrorClass::WrongValue,
        CalErrorClass::WrongCount,
        CalErrorClass::NoAnswer,
    ];

    /// The class's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            CalErrorClass::Within10Percent => "Within 10 %, not exact",
            CalErrorClass::WrongSign => "Wrong sign",
            CalErrorClass::PowerOfTen => "Off by a power of ten",
            CalErrorClass::WrongText => "Wrong text",
            CalErrorClass::NotANumber => "Not a number",
            CalErrorClass::WrongValue => "Wrong value",
            CalErrorClass::WrongCount => "Wrong number of values",
            CalErrorClass::NoAnswer => "No answer",
        }
    }
}

/// The error class of a scored item; `None` when it is right or was not asked.
pub fn error_class(v: &CalVerdict) -> Option<CalErrorClass> {
    match v.label {
        CalLabel::Correct | CalLabel::ImagesUnavailable => None,
        CalLabel::NoAnswer => Some(CalErrorClass::NoAnswer),
        CalLabel::WrongCount => Some(CalErrorClass::WrongCount),
        CalLabel::WrongSlots => v.slots.iter().filter(|s| !s.exact).map(slot_class).max(),
    }
}

/// The class of one wrong slot.
pub fn slot_class(s: &SlotVerdict) -> CalErrorClass {
    if s.threshold {
        return CalErrorClass::Within10Percent;
    }
    let Some(gold) = number(&s.gold) else {
        return CalErrorClass::WrongText;
    };
    let Some(given) = number(&s.predicted) else {
        return CalErrorClass::NotANumber;
    };
    if gold != 0.0 && close(gold, -given) {
        CalErrorClass::WrongSign
    } else if scaled(gold, given) {
        CalErrorClass::PowerOfTen
    } else {
        CalErrorClass::WrongValue
    }
}

/// A slot's value as a float, when it reads as a finite number.
fn number(slot: &str) -> Option<f64> {
    let value = read_number(&clean_text(slot))?.value?;
    value
        .to_text()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// Within 10 % of the larger magnitude, the threshold mode's rule.
fn close(gold: f64, given: f64) -> bool {
    (gold - given).abs() <= 0.1 * gold.abs().max(given.abs())
}

/// Whether `given` times 10^k, for some k ≠ 0 up to [`MAX_SCALE`], is close to `gold`.
fn scaled(gold: f64, given: f64) -> bool {
    if gold == 0.0 || given == 0.0 || gold.signum() != given.signum() {
        return false;
    }
    let k = (gold / given).abs().log10().round();
    k != 0.0 && k.abs() <= f64::from(MAX_SCALE) && close(gold, given * 10f64.powf(k))
}

#[cfg(test)]
mod tests {
    use super::super::score::score_response;
    use super::*;

    fn class(gold: &[&str], answer: &str) -> Option<CalErrorClass> {
        let gold: Vec<String> = gold.iter().map(|s| s.to_string()).collect();
        error_class(&score_response(&gold, answer))
    }

    #[test]
    fn right_answers_have_no_class() {
        assert_eq!(class(&["2.50"], "<answer>[\"2.504\"]</answer>"), None);
    }

    #[test]
    fn each_class_from_a_slot() {
        let one = |answer: &str| class(&["2.50"], &format!("<answer>[\"{answer}\"]</answer>"));
        assert_eq!(one("2.6"), Some(CalErrorClass::Within10Percent));
        assert_eq!(one("-2.5"), Some(CalErrorClass::WrongSign));
        assert_eq!(one("2500"), Some(CalErrorClass::PowerOfTen));
        assert_eq!(one("0.0025"), Some(CalErrorClass::PowerOfTen));
        assert_eq!(
            one("2.5 \\\\times 10^{-3}"),
            Some(CalErrorClass::PowerOfTen)
        );
        assert_eq!(one("about two"), Some(CalErrorClass::NotANumber));
        assert_eq!(one("7.1"), Some(CalErrorClass::WrongValue));
        assert_eq!(one("-2500"), Some(CalErrorClass::WrongValue));
        assert_eq!(
            class(&["FCC"], "<answer>[\"BCC\"]</answer>"),
            Some(CalErrorClass::WrongText)
        );
        assert_eq!(
            class(&["1", "2"], "<answer>[\"1\"]</answer>"),
            Some(CalErrorClass::WrongCount)
        );
        assert_eq!(class(&["1"], ""), Some(CalErrorClass::NoAnswer));
    }

    #[test]
    fn an_item_takes_its_gravest_slot() {
        let gold = ["1.0", "2.0", "3.0"];
        assert_eq!(
            class(&gold, "<answer>[\"1.05\", \"20\", \"3.0\"]</answer>"),
            Some(CalErrorClass::PowerOfTen)
        );
        assert_eq!(
            class(&gold, "<answer>[\"1.05\", \"20\", \"9\"]</answer>"),
            Some(CalErrorClass::WrongValue)
        );
    }

    #[test]
    fn zero_is_never_a_sign_or_scale_slip() {
        let one = |g: &str, a: &str| class(&[g], &format!("<answer>[\"{a}\"]</answer>"));
        assert_eq!(one("0", "5"), Some(CalErrorClass::WrongValue));
        assert_eq!(one("5", "0"), Some(CalErrorClass::WrongValue));
    }
}
