//! Decimal numbers as the reference scorer holds them: Python's `decimal` module with
//! `getcontext().prec = 50` and half-even rounding, for exactly the operations the CAL scorer
//! uses (exact construction, `quantize`, subtraction, division, `abs`).
//!
//! Values are sign × integer coefficient × 10^exponent, the coefficient a vector of decimal
//! digits without leading or trailing zeros (zero has no digits), the exponent an `i128` so
//! that no exponent a model can print overflows. Python's context limits (`Emax` = 999,999,
//! `Etiny` = −1,000,048) are not applied here but reported by [`Dec::adjusted`] so the
//! scorer can tell where the reference would crash.

use std::cmp::Ordering;

/// The reference's `getcontext().prec`.
pub const PRECISION: usize = 50;
/// Python's default `Emax`: an arithmetic result with a larger adjusted exponent overflows
/// (the reference crashes).
pub const EMAX: i128 = 999_999;
/// Python's default `Etiny` (Emin − prec + 1): arithmetic results are rounded to a multiple
/// of 10^ETINY (subnormal rounding; tinier values flush to zero).
pub const ETINY: i128 = -1_000_048;
/// Above this adjusted exponent (in magnitude) Python's `Decimal(str)` itself fails.
pub const CONSTRUCTOR_LIMIT: i128 = 999_999_999_999_999_999;
/// Above this many aligned digits a sum is computed with the smaller operand's far digits
/// folded into one sticky digit (exact for every input short of 100,000-digit numbers).
const MAX_ALIGNED_DIGITS: i128 = 100_000;

/// A decimal number (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dec {
    neg: bool,
    coef: Vec<u8>,
    exp: i128,
}

impl Dec {
    /// Zero.
    pub fn zero() -> Self {
        Self {
            neg: false,
            coef: Vec::new(),
            exp: 0,
        }
    }

    /// ±`digits` × 10^`exp` (digits 0–9, most significant first, leading or trailing zeros
    /// allowed).
    pub fn new(neg: bool, digits: Vec<u8>, exp: i128) -> Self {
        let mut coef = digits;
        let lead = coef.iter().take_while(|&&d| d == 0).count();
        coef.drain(..lead);
        let trail = coef.iter().rev().take_while(|&&d| d == 0).count();
        coef.truncate(coef.len() - trail);
        if coef.is_empty() {
            return Self::zero();
        }
        Self {
            neg,
            coef,
            exp: exp + trail as i128,
        }
    }

    /// 10^`n`.
    pub fn pow10(n: i128) -> Self {
        Self {
            neg: false,
            coef: vec![1],
            exp: n,
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.coef.is_empty()
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.neg && !self.is_zero()
    }

    /// The exponent of the most significant digit (Python's `adjusted()`); `None` for zero.
    pub fn adjusted(&self) -> Option<i128> {
        (!self.is_zero()).then(|| self.exp + self.coef.len() as i128 - 1)
    }

    /// The absolute value, exactly.
    pub fn abs(&self) -> Self {
        Self {
            neg: false,
            ..self.clone()
        }
    }

    /// The value negated.
    pub fn negate(&self) -> Self {
        Self {
            neg: !self.neg && !self.is_zero(),
            ..self.clone()
        }
    }

    /// The value × 10^`n`, exactly.
    pub fn shift(&self, n: i128) -> Self {
        if self.is_zero() {
            return Self::zero();
        }
        Self {
            exp: self.exp + n,
            ..self.clone()
        }
    }

    /// Compare values (−0 equals 0).
    pub fn cmp_value(&self, other: &Self) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {}
        }
        let mag = cmp_magnitude(self, other);
        if self.is_negative() {
            mag.reverse()
        } else {
            mag
        }
    }

    /// Whether the values are equal.
    pub fn value_eq(&self, other: &Self) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }

    /// Rounded half-even to `prec` significant digits; `sticky` says that nonzero digits
    /// beyond the coefficient were already dropped.
    fn round_sig(&self, prec: usize, sticky: bool) -> Self {
        if self.coef.len() <= prec && !sticky {
            return self.clone();
        }
        if self.coef.len() <= prec {
            // Only a sticky tail below the last digit: below half an ulp, no change.
            return self.clone();
        }
        let drop = self.coef.len() - prec;
        let (kept, _) = round_digits(&self.coef, prec, sticky);
        Self::new(self.neg, kept, self.exp + drop as i128)
    }

    /// Rounded half-even to a multiple of 10^`t` (the core of `quantize`), exactly otherwise.
    pub fn round_at_exponent(&self, t: i128) -> Self {
        if self.is_zero() || self.exp >= t {
            return self.clone();
        }
        let drop = t - self.exp;
        let len = self.coef.len() as i128;
        let keep = len - drop;
        if keep < 0 {
            return Self::zero();
        }
        if keep == 0 {
            let first = self.coef[0];
            let sticky = self.coef.len() > 1;
            let up = first > 5 || (first == 5 && sticky);
            return if up {
                Self {
                    neg: self.neg,
                    coef: vec![1],
                    exp: t,
                }
            } else {
                Self::zero()
            };
        }
        let (kept, _) = round_digits(&self.coef, keep as usize, false);
        Self::new(self.neg, kept, t)
    }

    /// Python's `self.quantize(Decimal("1e-k"))` under the reference's context: `None` where
    /// Python raises `InvalidOperation` (the rounded coefficient needs more than
    /// [`PRECISION`] digits, or `k` goes below `Etiny`).
    pub fn quantize(&self, k: i128) -> Option<Self> {
        let t = -k;
        if t < ETINY {
            return None;
        }
        if self.is_zero() {
            return Some(Self::zero());
        }
        // The coefficient at exponent t has adjusted − t + 1 digits (before a carry).
        let adj = self.exp + self.coef.len() as i128 - 1;
        if adj - t + 1 > PRECISION as i128 {
            return None;
        }
        let r = self.round_at_exponent(t);
        match r.adjusted() {
            Some(a) if a - t + 1 > PRECISION as i128 => None,
            _ => Some(r),
        }
    }

    /// What Python's context does to an arithmetic result: round to 50 significant digits,
    /// then (subnormal) to a multiple of 10^ETINY.
    pub fn in_context(&self) -> Self {
        self.in_context_sticky(false)
    }

    fn in_context_sticky(&self, sticky: bool) -> Self {
        let r = self.round_sig(PRECISION, sticky);
        if !r.is_zero() && r.exp < ETINY {
            r.round_at_exponent(ETINY)
        } else {
            r
        }
    }

    /// `self + other` in the reference's context.
    pub fn add(&self, other: &Self) -> Self {
        if self.is_zero() {
            return other.in_context();
        }
        if other.is_zero() {
            return self.in_context();
        }
        let (a, b, sticky) = align_operands(self, other);
        let e = a.exp.min(b.exp);
        let da = padded(&a, e);
        let db = padded(&b, e);
        let (neg, digits) = if a.is_negative() == b.is_negative() {
            (a.is_negative(), add_digits(&da, &db))
        } else {
            match cmp_digits(&da, &db) {
                Ordering::Equal => return Self::zero(),
                Ordering::Greater => (a.is_negative(), sub_digits(&da, &db)),
                Ordering::Less => (b.is_negative(), sub_digits(&db, &da)),
            }
        };
        Self::new(neg, digits, e).in_context_sticky(sticky)
    }

    /// `self - other` in the reference's context.
    pub fn sub(&self, other: &Self) -> Self {
        self.add(&other.negate())
    }

    /// `self / other` in the reference's context; `None` for a zero divisor.
    pub fn div(&self, other: &Self) -> Option<Self> {
        if other.is_zero() {
            return None;
        }
        if self.is_zero() {
            return Some(Self::zero());
        }
        let la = self.coef.len() as i128;
        let lb = other.coef.len() as i128;
        let s = (PRECISION as i128 + 2 + lb - la).max(0) as usize;
        let mut rem: Vec<u8> = Vec::new();
        let mut quotient: Vec<u8> = Vec::with_capacity(self.coef.len() + s);
        let dividend = self.coef.iter().copied().chain(std::iter::repeat_n(0u8, s));
        for d in dividend {
            rem.push(d);
            strip_leading(&mut rem);
            let mut q = 0u8;
            while cmp_digits(&rem, &other.coef) != Ordering::Less {
                rem = sub_digits(&rem, &other.coef);
                q += 1;
            }
            quotient.push(q);
        }
        let sticky = rem.iter().any(|&d| d != 0);
        let neg = self.is_negative() != other.is_negative();
        let exp = self.exp - other.exp - s as i128;
        // Keep the sticky bit through normalisation: trailing zeros are dropped only when the
        // remainder is zero.
        let lead = quotient.iter().take_while(|&&d| d == 0).count();
        quotient.drain(..lead);
        let q = Self {
            neg,
            coef: quotient,
            exp,
        };
        let rounded = q.round_sig(PRECISION, sticky);
        let normal = Self::new(rounded.neg, rounded.coef, rounded.exp);
        Some(if normal.exp < ETINY {
            normal.round_at_exponent(ETINY)
        } else {
            normal
        })
    }

    /// The value as plain decimal text (for notes and tests): `-12.5`, `0.001`, `4E+62`.
    pub fn to_text(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let digits: String = self.coef.iter().map(|d| char::from(b'0' + d)).collect();
        let sign = if self.neg { "-" } else { "" };
        let len = self.coef.len() as i128;
        if self.exp >= 0 && self.exp + len <= 30 {
            let zeros = "0".repeat(self.exp as usize);
            format!("{sign}{digits}{zeros}")
        } else if self.exp < 0 && self.exp > -30 - len {
            let point = len + self.exp;
            if point > 0 {
                let (i, f) = digits.split_at(point as usize);
                format!("{sign}{i}.{f}")
            } else {
                format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
            }
        } else {
            let (first, rest) = digits.split_at(1);
            let adj = self.exp + len - 1;
            let dot = if rest.is_empty() { "" } else { "." };
            format!("{sign}{first}{dot}{rest}E{adj:+}")
        }
    }
}

/// Round `digits` to its first `keep` digits half-even (1 ≤ `keep` < len); the result is
/// at the scale of the last kept digit (a carry out of the top gives `keep + 1` digits, 1
/// then zeros, at that same scale); the flag says whether it rounded up.
fn round_digits(digits: &[u8], keep: usize, sticky: bool) -> (Vec<u8>, bool) {
    let mut kept = digits[..keep].to_vec();
    let first = digits[keep];
    let rest_nonzero = sticky || digits[keep + 1..].iter().any(|&d| d != 0);
    let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
    let up = first > 5 || (first == 5 && (rest_nonzero || last_odd));
    if up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                let mut v = vec![0u8; keep + 1];
                v[0] = 1;
                return (v, true);
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    (kept, up)
}

fn cmp_magnitude(a: &Dec, b: &Dec) -> Ordering {
    match (a.adjusted(), b.adjusted()) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) if x != y => x.cmp(&y),
        _ => {
            for (da, db) in a.coef.iter().zip(&b.coef) {
                if da != db {
                    return da.cmp(db);
                }
            }
            a.coef.len().cmp(&b.coef.len())
        }
    }
}

/// Operands whose aligned width stays bounded: far low digits of either folded into one
/// sticky digit when the width would exceed [`MAX_ALIGNED_DIGITS`].
fn align_operands(a: &Dec, b: &Dec) -> (Dec, Dec, bool) {
    let top = a.adjusted().max(b.adjusted()).unwrap_or(0);
    let low = a.exp.min(b.exp);
    if top - low + 2 <= MAX_ALIGNED_DIGITS {
        return (a.clone(), b.clone(), false);
    }
    let cutoff = top - (PRECISION as i128 + 70);
    let fold = |x: &Dec| -> Dec {
        if x.exp >= cutoff {
            return x.clone();
        }
        let adj = x.exp + x.coef.len() as i128 - 1;
        let mut coef: Vec<u8> = if adj >= cutoff {
            x.coef[..(adj - cutoff + 1) as usize].to_vec()
        } else {
            Vec::new()
        };
        coef.push(1); // the sticky digit at cutoff − 1 (the dropped part is nonzero)
        Dec {
            neg: x.neg,
            coef,
            exp: cutoff - 1,
        }
    };
    (fold(a), fold(b), false)
}

/// The coefficient of `x` written at exponent `e` (≤ x.exp).
fn padded(x: &Dec, e: i128) -> Vec<u8> {
    let mut v = x.coef.clone();
    v.extend(std::iter::repeat_n(0u8, (x.exp - e) as usize));
    v
}

fn strip_leading(v: &mut Vec<u8>) {
    let lead = v.iter().take_while(|&&d| d == 0).count();
    v.drain(..lead);
}

/// Compare two digit vectors as integers (leading zeros allowed).
fn cmp_digits(a: &[u8], b: &[u8]) -> Ordering {
    let a = &a[a.iter().take_while(|&&d| d == 0).count()..];
    let b = &b[b.iter().take_while(|&&d| d == 0).count()..];
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len().max(b.len());
    let mut out = vec![0u8; n + 1];
    let mut carry = 0u8;
    for i in 0..n {
        let da = if i < a.len() { a[a.len() - 1 - i] } else { 0 };
        let db = if i < b.len() { b[b.len() - 1 - i] } else { 0 };
        let s = da + db + carry;
        out[n - i] = s % 10;
        carry = s / 10;
    }
    out[0] = carry;
    out
}

/// a − b for a ≥ b.
fn sub_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = a.to_vec();
    let mut borrow = 0i8;
    for i in 0..out.len() {
        let idx = out.len() - 1 - i;
        let db = if i < b.len() {
            b[b.len() - 1 - i] as i8
        } else {
            0
        };
        let mut d = out[idx] as i8 - db - borrow;
        if d < 0 {
            d += 10;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out[idx] = d as u8;
    }
    strip_leading(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        // test helper: plain decimal text
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (i, f) = s.split_once('.').unwrap_or((s, ""));
        let digits = i.bytes().chain(f.bytes()).map(|b| b - b'0').collect();
        Dec::new(neg, digits, -(f.len() as i128))
    }

    #[test]
    fn quantize_is_half_even() {
        assert_eq!(d("2.505").quantize(2).unwrap().to_text(), "2.5");
        assert_eq!(d("2.515").quantize(2).unwrap().to_text(), "2.52");
        assert_eq!(d("2.5").quantize(0).unwrap().to_text(), "2");
        assert_eq!(d("3.5").quantize(0).unwrap().to_text(), "4");
        assert_eq!(d("-2.5").quantize(0).unwrap().to_text(), "-2");
        assert_eq!(d("0.4").quantize(0).unwrap().to_text(), "0");
        assert_eq!(d("0.6").quantize(0).unwrap().to_text(), "1");
        assert_eq!(d("0.05").quantize(1).unwrap().to_text(), "0");
        assert_eq!(d("0.051").quantize(1).unwrap().to_text(), "0.1");
        assert_eq!(d("9.96").quantize(1).unwrap().to_text(), "10");
        assert_eq!(d("99.5").quantize(0).unwrap().to_text(), "100");
    }

    #[test]
    fn quantize_fails_where_python_raises() {
        assert!(Dec::pow10(47).quantize(2).is_some());
        assert!(Dec::pow10(48).quantize(2).is_none());
        assert!(d("4.0").shift(62).quantize(1).is_none());
        assert!(Dec::pow10(-5).quantize(1_000_049).is_none());
    }

    #[test]
    fn division_rounds_to_fifty_digits() {
        let third = d("1").div(&d("3")).unwrap();
        assert_eq!(third.to_text().len(), 2 + 50);
        let two_thirds = d("2").div(&d("3")).unwrap();
        assert!(two_thirds.to_text().ends_with('7'));
        assert_eq!(d("1").div(&d("8")).unwrap().to_text(), "0.125");
        assert!(d("1").div(&Dec::zero()).is_none());
        assert_eq!(d("-3").div(&d("2")).unwrap().to_text(), "-1.5");
    }

    #[test]
    fn subtraction_and_comparison() {
        assert_eq!(d("2.5").sub(&d("2.25")).to_text(), "0.25");
        assert_eq!(d("1").sub(&d("3")).to_text(), "-2");
        assert!(d("2.50").value_eq(&d("2.5")));
        assert!(d("-0").value_eq(&Dec::zero()));
        assert_eq!(d("-1").cmp_value(&d("0.5")), Ordering::Less);
        // Far apart: the small one only as a sticky digit.
        let big = Dec::pow10(1_000_000_000);
        assert!(big.sub(&d("1")).value_eq(&big));
        assert_eq!(d("999.5").in_context().to_text(), "999.5");
    }

    #[test]
    fn carries_out_of_the_top_digit() {
        let x = Dec::new(false, vec![9; 60], 0);
        let r = x.in_context();
        assert!(r.value_eq(&Dec::pow10(60)));
    }
}
