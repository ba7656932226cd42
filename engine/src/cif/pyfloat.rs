//! pymatgen's reading of CIF numbers: Python's `float()` ([`crate::python`]) after the
//! uncertainty is cut off.

use crate::python::{py_float, py_strip};

/// pymatgen's `str2float`: the text from the first `(` that has something after it is cut
/// off, the rest goes through `float()`; a lone `.` reads as 0. `None` where pymatgen raises
/// `ValueError` (`?`, words, an empty string).
#[inline]
pub fn str2float(text: &str) -> Option<f64> {
    match plain_number(text.as_bytes()) {
        Some(x) => Some(x),
        None => str2float_general(text),
    }
}

/// [`str2float`] for any text: `float()` after the uncertainty is cut off.
#[inline(never)]
fn str2float_general(text: &str) -> Option<f64> {
    py_float(cut_uncertainty(text)).or_else(|| (py_strip(text) == ".").then_some(0.0))
}

/// [`str2float`] in one pass over the text for what nearly every CIF number is: an optional
/// sign, ASCII digits with at most one `.`, at most 15 significant digits and 22 decimals,
/// then the end of the text or an uncertainty (`(` with something after it on the line).
/// Then the digits as an integer and the power of ten are exact, and their quotient,
/// rounded once, is the correctly rounded value `float()` gives. `None` for anything else,
/// which the general path decides.
#[inline]
fn plain_number(b: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let (mut digits, mut point) = (0usize, None);
    let mut mantissa: u64 = 0;
    while let Some(&c) = b.get(i) {
        // Eight decimals at once where they follow (a coordinate's), while the integer
        // stays within 19 digits.
        if point.is_some() && digits <= 11 {
            if let Some(eight) = eight_digits(b, i) {
                mantissa = mantissa * 100_000_000 + eight;
                digits += 8;
                i += 8;
                continue;
            }
        }
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            // At most 19 digits are read (exact in a u64); more go to the general path.
            if digits == 19 {
                return None;
            }
            mantissa = mantissa * 10 + u64::from(d);
            digits += 1;
        } else if c == b'.' && point.is_none() {
            point = Some(digits);
        } else if c == b'(' && b.get(i + 1).is_some_and(|&n| n != b'\n') {
            break;
        } else {
            return None;
        }
        i += 1;
    }
    if digits == 0 || mantissa >= 1_000_000_000_000_000 {
        return None;
    }
    let p = POW10.get(digits - point.unwrap_or(digits))?;
    let magnitude = mantissa as f64 / p;
    Some(if negative { -magnitude } else { magnitude })
}

/// The value of the eight bytes from `i` when they are all ASCII digits (SWAR: each step
/// joins neighbouring groups of digits with one multiplication).
#[inline]
fn eight_digits(b: &[u8], i: usize) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let chunk: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    let x = u64::from_le_bytes(chunk);
    // Every byte in 0x30..=0x39: its high nibble is 3, and adding 6 keeps it 3.
    let high = 0xf0f0_f0f0_f0f0_f0f0;
    if x & high != ZEROS || (x.wrapping_add(0x0606_0606_0606_0606) & high) != ZEROS {
        return None;
    }
    // Little-endian: the first digit is the lowest byte. Each step multiplies a group by
    // its weight and adds the next group shifted down onto it (pairs, fours, eight).
    let v = ((x & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(10 * (1 << 8) + 1)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 * (1 << 16) + 1)) >> 16;
    Some(((v & 0x0000_ffff_0000_ffff).wrapping_mul(10_000 * (1 << 32) + 1)) >> 32)
}

/// The text before the first `(` that has something after it (`re.sub(r"\(.+\)*", "", text)`
/// for single-line text).
pub fn cut_uncertainty(text: &str) -> &str {
    // '(' is ASCII: its first byte is the first character, and a character boundary.
    match text.bytes().position(|b| b == b'(') {
        // The pattern needs at least one character (other than a newline) after '('.
        Some(i) if text[i + 1..].chars().next().is_some_and(|c| c != '\n') => &text[..i],
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_read_as_a_number() {
        assert_eq!(eight_digits(b"x12345678", 1), Some(12_345_678));
        assert_eq!(eight_digits(b"00000009", 0), Some(9));
        assert_eq!(eight_digits(b"99999999", 0), Some(99_999_999));
        assert_eq!(eight_digits(b"1234567", 0), None);
        for bad in [*b"1234567/", *b"1234567:", *b"12 45678", *b"\xb12345678"] {
            assert_eq!(eight_digits(&bad, 0), None, "{bad:?}");
        }
    }

    #[test]
    fn str2float_cuts_uncertainties() {
        assert_eq!(str2float("0.1234(5)"), Some(0.1234));
        assert_eq!(str2float("0.5(1"), Some(0.5));
        assert_eq!(str2float("0.5("), None);
        assert_eq!(str2float("."), Some(0.0));
        assert_eq!(str2float("?"), None);
        assert_eq!(str2float("1.2e-3"), Some(0.0012));
        assert_eq!(
            str2float("-0.0(2)").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
    }

    /// The one-pass reading answers as the general one (`float()` after the uncertainty is
    /// cut) wherever it answers, on texts made of a number's pieces.
    #[test]
    fn plain_numbers_read_as_the_general_path_does() {
        const PIECES: [&str; 18] = [
            "0", "1", "5", "9", "12345678", ".", "-", "+", "(", ")", "\n", " ", "e", "_", "é",
            "00000000", "99999999", "/",
        ];
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut answered = 0;
        for _ in 0..200_000 {
            let len = (rng.next_u64() % 9) as usize;
            let text: String = (0..len)
                .map(|_| PIECES[(rng.next_u64() % PIECES.len() as u64) as usize])
                .collect();
            let general = str2float_general(&text);
            if let Some(x) = plain_number(text.as_bytes()) {
                answered += 1;
                assert_eq!(Some(x.to_bits()), general.map(f64::to_bits), "{text:?}");
            }
        }
        assert!(answered > 10_000, "{answered}");
    }
}
