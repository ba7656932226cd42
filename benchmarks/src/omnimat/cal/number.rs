//! Reading a normalised slot as a number (the reference's `to_decimal`), and the number of
//! decimals a ground truth shows.
//!
//! Forms, tried in this order on the whole normalised text:
//! 1. `[+-]?d+(.d+)?` and 2. the same with `[eE][+-]?d+`: read exactly;
//! 3. `a x 10^b`: caret and braces each optional (so "4x105" is 4×10^5 and "2.50x100" is
//!    2.50), `\times`/`\cdot`/`×`/`·` already mapped to `x` by normalisation;
//! 4. `10^b` (same options); 5. `\frac{a}{b}` (signs allowed inside); 6. mixed fractions
//!    `[+-]?n\frac{a}{b}`; 7. `a/b`.
//!
//! "d" is any Unicode decimal digit (Python's `\d`), so "٣.٥" reads 3.5. ".5" and "5." are not
//! numbers; `-\frac{1}{2}` is not either (the sign must be inside the braces).
//!
//! Where Python's `decimal` would crash the reference (a `10^b` exponent above 999,999, an
//! exponent of more than 4,300 digits, a value beyond the decimal range) the reading carries
//! a [`Crash`] and the exact value when it can be held (else none: compared as text).

use super::decimal::{Dec, CONSTRUCTOR_LIMIT, EMAX, ETINY};
use serde::{Deserialize, Serialize};

/// Why the reference would crash on a slot (its whole subfield is lost there); ours gives a
/// defined result instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Crash {
    /// A `10^b` exponent above 999,999 (or a product beyond it): Python's `Overflow`.
    ExponentOverflow,
    /// An exponent written with more than 4,300 digits: Python's `int()` refuses it.
    ExponentDigits,
    /// A value beyond what `Decimal(str)` accepts.
    BeyondDecimalRange,
    /// Rounding to the gold's decimals needs more than 50 significant digits (`quantize`
    /// raises `InvalidOperation`).
    RoundingPrecision,
    /// The threshold comparison overflows (`abs` or the difference beyond 10^999999).
    ThresholdOverflow,
}

impl Crash {
    /// One line for a note.
    pub fn describe(self) -> &'static str {
        match self {
            Crash::ExponentOverflow => "a 10^b exponent above 999,999 overflows Python's decimal",
            Crash::ExponentDigits => {
                "an exponent of more than 4,300 digits is refused by Python's int()"
            }
            Crash::BeyondDecimalRange => "the value is beyond Python's decimal range",
            Crash::RoundingPrecision => {
                "rounding to the gold's decimals needs more than 50 significant digits"
            }
            Crash::ThresholdOverflow => {
                "the 10 % comparison overflows Python's decimal (beyond 10^999999)"
            }
        }
    }
}

/// Which number form a slot was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// `12.5`.
    Plain,
    /// `1.2e-3`.
    ENotation,
    /// `a x 10^b` with a caret or a brace.
    TimesTen,
    /// `a x 10b` with neither caret nor brace: "4x105" is 4×10^5, "2.50x100" is 2.50.
    TimesTenBare,
    /// `10^b`.
    PowerOfTen,
    /// `\frac{a}{b}`.
    Frac,
    /// `n\frac{a}{b}`.
    MixedFrac,
    /// `a/b`.
    Slash,
}

/// A slot read as a number.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The value; `None` when it cannot be held (compared as text).
    pub value: Option<Dec>,
    /// The form it was read as.
    pub form: Form,
    /// Where the reference would crash reading it.
    pub crash: Option<Crash>,
}

/// Zeros of the runs of Unicode decimal digits (general category Nd, Unicode 14 as in
/// Python 3.11): each run is ten consecutive code points, zero to nine.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a Unicode decimal digit (Python's `\d`), if `c` is one.
pub fn digit_value(c: char) -> Option<u8> {
    let c = c as u32;
    if c < 0x80 {
        return (0x30..=0x39).contains(&c).then(|| (c - 0x30) as u8);
    }
    DIGIT_ZEROS
        .iter()
        .find(|&&z| (z..z + 10).contains(&c))
        .map(|&z| (c - z) as u8)
}

/// A cursor over the normalised text.
struct Scan<'a> {
    chars: &'a [char],
    at: usize,
}

impl Scan<'_> {
    fn eat(&mut self, c: char) -> bool {
        if self.chars.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn eat_str(&mut self, s: &str) -> bool {
        let save = self.at;
        for c in s.chars() {
            if !self.eat(c) {
                self.at = save;
                return false;
            }
        }
        true
    }
    fn sign(&mut self) -> Option<bool> {
        if self.eat('+') {
            Some(false)
        } else if self.eat('-') {
            Some(true)
        } else {
            None
        }
    }
    fn digits(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(d) = self.chars.get(self.at).and_then(|&c| digit_value(c)) {
            out.push(d);
            self.at += 1;
        }
        (!out.is_empty()).then_some(out)
    }
    fn done(&self) -> bool {
        self.at == self.chars.len()
    }
}

/// `\d+(\.\d+)?` (sign handled by the caller): integer and fraction digits.
fn unsigned(s: &mut Scan) -> Option<(Vec<u8>, Vec<u8>)> {
    let int = s.digits()?;
    let save = s.at;
    if s.eat('.') {
        if let Some(frac) = s.digits() {
            return Some((int, frac));
        }
        s.at = save;
    }
    Some((int, Vec::new()))
}

fn signed(s: &mut Scan) -> Option<(bool, Vec<u8>, Vec<u8>)> {
    let save = s.at;
    let neg = s.sign().unwrap_or(false);
    match unsigned(s) {
        Some((i, f)) => Some((neg, i, f)),
        None => {
            s.at = save;
            None
        }
    }
}

fn dec_of(neg: bool, int: Vec<u8>, frac: Vec<u8>) -> Dec {
    let e = -(frac.len() as i128);
    let mut digits = int;
    digits.extend(frac);
    Dec::new(neg, digits, e)
}

/// An exponent's digits as an integer, with Python's `int()` digit limit; saturates far
/// beyond any representable exponent.
fn exponent_of(neg: bool, digits: &[u8]) -> (i128, Option<Crash>) {
    let crash = (digits.len() > 4300).then_some(Crash::ExponentDigits);
    let mut v: i128 = 0;
    for &d in digits {
        v = (v * 10 + d as i128).min(10i128.pow(30));
    }
    (if neg { -v } else { v }, crash)
}

/// A value built from text: the reference crashes beyond `Decimal`'s range.
fn held(value: Dec, form: Form, crash: Option<Crash>) -> Reading {
    match value.adjusted() {
        Some(a) if a.abs() > CONSTRUCTOR_LIMIT => Reading {
            value: None,
            form,
            crash: Some(crash.unwrap_or(Crash::BeyondDecimalRange)),
        },
        _ => Reading {
            value: Some(value),
            form,
            crash,
        },
    }
}

/// `Decimal(10) ** n` then × mantissa, as Python's context does it.
fn times_power(mantissa: Dec, n: i128, digit_crash: Option<Crash>, form: Form) -> Reading {
    if n > EMAX {
        return held(
            mantissa.shift(n),
            form,
            Some(digit_crash.unwrap_or(Crash::ExponentOverflow)),
        );
    }
    if n < ETINY {
        // 10^n flushes to zero in Python's context (no crash): the product is zero.
        return held(Dec::zero(), form, digit_crash);
    }
    let product = mantissa.shift(n).in_context();
    let crash = match product.adjusted() {
        Some(a) if a > EMAX => Some(Crash::ExponentOverflow),
        _ => None,
    };
    held(product, form, digit_crash.or(crash))
}

/// The reference's `to_decimal` on an already normalised slot; `None` when it is not a
/// number.
pub fn read_number(clean: &str) -> Option<Reading> {
    if clean.is_empty() {
        return None;
    }
    let chars: Vec<char> = clean.chars().collect();
    let scan = |at: usize| Scan { chars: &chars, at };

    // 1 and 2: plain and e-notation.
    {
        let mut s = scan(0);
        if let Some((neg, i, f)) = signed(&mut s) {
            if s.done() {
                return Some(held(dec_of(neg, i, f), Form::Plain, None));
            }
            if s.eat('e') || s.eat('E') {
                let eneg = s.sign().unwrap_or(false);
                if let Some(ed) = s.digits() {
                    if s.done() {
                        let (e, _) = exponent_of(eneg, &ed);
                        let v = dec_of(neg, i, f).shift(e);
                        return Some(held(v, Form::ENotation, None));
                    }
                }
            }
        }
    }
    // 3: a x 10^b.
    {
        let mut s = scan(0);
        if let Some((neg, i, f)) = signed(&mut s) {
            if s.eat_str("x10") {
                if let Some((n, bare, crash)) = power_tail(&mut s) {
                    let form = if bare {
                        Form::TimesTenBare
                    } else {
                        Form::TimesTen
                    };
                    return Some(times_power(dec_of(neg, i, f), n, crash, form));
                }
            }
        }
    }
    // 4: 10^b.
    {
        let mut s = scan(0);
        if s.eat_str("10") {
            if let Some((n, _, crash)) = power_tail(&mut s) {
                return Some(times_power(Dec::pow10(0), n, crash, Form::PowerOfTen));
            }
        }
    }
    // 5: \frac{a}{b}.
    {
        let mut s = scan(0);
        if s.eat_str("\\frac{") {
            if let Some((na, ia, fa)) = signed(&mut s) {
                if s.eat_str("}{") {
                    if let Some((nb, ib, fb)) = signed(&mut s) {
                        if s.eat('}') && s.done() {
                            return fraction(dec_of(na, ia, fa), dec_of(nb, ib, fb), Form::Frac);
                        }
                    }
                }
            }
        }
    }
    // 6: [+-]?n\frac{a}{b}.
    {
        let mut s = scan(0);
        let neg = s.sign().unwrap_or(false);
        if let Some(whole) = s.digits() {
            if s.eat_str("\\frac{") {
                if let Some((ia, fa)) = unsigned(&mut s) {
                    if s.eat_str("}{") {
                        if let Some((ib, fb)) = unsigned(&mut s) {
                            if s.eat('}') && s.done() {
                                let den = dec_of(false, ib, fb);
                                let part = dec_of(false, ia, fa).div(&den)?;
                                let v = dec_of(false, whole, Vec::new()).add(&part);
                                let v = if neg { v.negate() } else { v };
                                return Some(held(v, Form::MixedFrac, None));
                            }
                        }
                    }
                }
            }
        }
    }
    // 7: a/b.
    {
        let mut s = scan(0);
        if let Some((na, ia, fa)) = signed(&mut s) {
            if s.eat('/') {
                if let Some((nb, ib, fb)) = signed(&mut s) {
                    if s.done() {
                        return fraction(dec_of(na, ia, fa), dec_of(nb, ib, fb), Form::Slash);
                    }
                }
            }
        }
    }
    None
}

fn fraction(num: Dec, den: Dec, form: Form) -> Option<Reading> {
    num.div(&den).map(|v| held(v, form, None))
}

/// `\^?\{?([+-]?\d+)\}?` to the end: the exponent, whether neither caret nor brace was
/// written, and a digit-limit crash.
fn power_tail(s: &mut Scan) -> Option<(i128, bool, Option<Crash>)> {
    let caret = s.eat('^');
    let open = s.eat('{');
    let neg = s.sign().unwrap_or(false);
    let digits = s.digits()?;
    let close = s.eat('}');
    if !s.done() {
        return None;
    }
    let (n, crash) = exponent_of(neg, &digits);
    Some((n, !(caret || open || close), crash))
}

/// The number of decimals the ground truth shows: the digits after the first "." that is
/// followed by a digit, in the raw (stripped) gold text; 0 if none.
pub fn gold_decimals(gold: &str) -> usize {
    let chars: Vec<char> = gold.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '.' {
            let n = chars[i + 1..]
                .iter()
                .take_while(|&&d| digit_value(d).is_some())
                .count();
            if n > 0 {
                return n;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Option<String> {
        read_number(s).and_then(|r| r.value).map(|v| v.to_text())
    }

    #[test]
    fn forms() {
        assert_eq!(text("12.5").as_deref(), Some("12.5"));
        assert_eq!(text("-1.6e-4").as_deref(), Some("-0.00016"));
        assert_eq!(text("1.5x10^{4}").as_deref(), Some("15000"));
        assert_eq!(text("4x105").as_deref(), Some("400000"));
        assert_eq!(text("2.50x100").as_deref(), Some("2.5"));
        assert_eq!(text("10^{-3}").as_deref(), Some("0.001"));
        assert_eq!(text("\\frac{-1}{2}").as_deref(), Some("-0.5"));
        assert_eq!(text("-1\\frac{1}{2}").as_deref(), Some("-1.5"));
        assert_eq!(text("3/4").as_deref(), Some("0.75"));
        assert_eq!(text("\u{663}.\u{665}").as_deref(), Some("3.5"));
        assert_eq!(text(".5"), None);
        assert_eq!(text("5."), None);
        assert_eq!(text("-\\frac{1}{2}"), None);
        assert_eq!(text("1/0"), None);
        assert_eq!(text("x10^5"), None);
    }

    #[test]
    fn crashes_are_flagged() {
        let r = read_number("1x10^1000000").unwrap();
        assert_eq!(r.crash, Some(Crash::ExponentOverflow));
        let r = read_number("99x10^999999").unwrap();
        assert_eq!(r.crash, Some(Crash::ExponentOverflow));
        let r = read_number("9x10^999999").unwrap();
        assert_eq!(r.crash, None);
        let r = read_number("1e2000000000000000000").unwrap();
        assert_eq!(r.crash, Some(Crash::BeyondDecimalRange));
        assert!(r.value.is_none());
        let long = format!("10^{}", "1".repeat(4301));
        assert_eq!(
            read_number(&long).unwrap().crash,
            Some(Crash::ExponentDigits)
        );
        assert_eq!(text("5x10^-1000049").as_deref(), Some("0"));
    }

    #[test]
    fn decimals_of_the_gold() {
        assert_eq!(gold_decimals("2.50"), 2);
        assert_eq!(gold_decimals("4.2 \\times 10^{-13}"), 1);
        assert_eq!(gold_decimals("1/3"), 0);
        assert_eq!(gold_decimals("a. 2.5"), 1);
        assert_eq!(gold_decimals("-1.6000e-004"), 4);
    }
}
