//! Python's conventions for numbers and whitespace in text, written once for every place
//! that must decide as Python does: pymatgen's CIF reader and writer, OmniMatBench's scorer
//! (its `strip`, its `json.loads` values), the prompts that print numbers as Python prints
//! them, and the values MatTools' programs return. Each is checked against CPython itself
//! (`tests/python_vs_cpython.rs`).
//!
//! - [`is_py_space`], [`py_strip`]: `str.isspace()` and `str.strip()`;
//! - [`py_float`]: which strings `float()` accepts and what it makes of them;
//! - [`py_repr`]: `repr(float)`, the shortest round-trip digits in fixed or exponent
//!   notation as Python chooses.

/// Python's `str.isspace()` for one character (also the `\s` class of Python regexes).
pub fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.strip()` without arguments.
///
/// Inlined: the CIF reader strips every value it reads, nearly all with nothing to strip,
/// and the test for that costs less than the call.
#[inline]
pub fn py_strip(s: &str) -> &str {
    // Nearly every value starts and ends with an ASCII character that is not a space: then
    // there is nothing to strip, and no character needs decoding.
    let ascii_word = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !is_py_space(b as char));
    if ascii_word(s.as_bytes().first()) && ascii_word(s.as_bytes().last()) {
        return s;
    }
    strip_spaces(s)
}

/// [`py_strip`] for text that may have something to strip.
#[inline(never)]
fn strip_spaces(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `float(text)`: `None` where Python raises `ValueError`.
///
/// Accepts surrounding whitespace, a sign, decimal digits with single underscores between
/// digits, an optional fraction and exponent, and `inf`/`infinity`/`nan` in any case.
pub fn py_float(text: &str) -> Option<f64> {
    let s = py_strip(text);
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = if let Some(plain) = plain_decimal(body) {
        plain?
    } else if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else if body.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else {
        parse_decimal(body)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// The value of ASCII digits with at most one `.` and at least one digit (nearly every
/// number in a CIF), `None` for any other text. With at most 15 significant digits and 22
/// decimals the digits as an integer and the power of ten are both exact, so their quotient,
/// rounded once, is the correctly rounded value the general parser gives (Clinger's fast
/// path, which that parser takes too, behind its own scan of the text); longer numbers go
/// to that parser.
fn plain_decimal(body: &str) -> Option<Option<f64>> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    // Every digit goes into the integer (leading zeros add nothing to it); with at most 19
    // digits it is exact, and then "at most 15 significant digits" is "below 10^15".
    let (mut digits, mut point) = (0usize, None);
    let mut mantissa: u64 = 0;
    for &c in body.as_bytes() {
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d));
            digits += 1;
        } else if c == b'.' && point.is_none() {
            point = Some(digits);
        } else {
            return None;
        }
    }
    if digits == 0 {
        return None;
    }
    let decimals = digits - point.unwrap_or(digits);
    Some(match POW10.get(decimals) {
        Some(p) if digits <= 19 && mantissa < 1_000_000_000_000_000 => Some(mantissa as f64 / p),
        _ => body.parse::<f64>().ok(),
    })
}

/// An unsigned decimal literal in Python's grammar; the value is correctly rounded.
fn parse_decimal(body: &str) -> Option<f64> {
    let b = body.as_bytes();
    let mut i = 0;
    let mut clean = String::with_capacity(b.len());
    // Digits with single underscores between digits.
    let digit_part = |i: &mut usize, clean: &mut String| -> bool {
        let start = *i;
        while *i < b.len() {
            if b[*i].is_ascii_digit() {
                clean.push(b[*i] as char);
                *i += 1;
            } else if b[*i] == b'_'
                && *i > start
                && b[*i - 1].is_ascii_digit()
                && b.get(*i + 1).is_some_and(u8::is_ascii_digit)
            {
                *i += 1;
            } else {
                break;
            }
        }
        *i > start
    };
    let int_digits = digit_part(&mut i, &mut clean);
    let mut frac_digits = false;
    if b.get(i) == Some(&b'.') {
        clean.push('.');
        i += 1;
        frac_digits = digit_part(&mut i, &mut clean);
    }
    if !int_digits && !frac_digits {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        clean.push('e');
        i += 1;
        if let Some(&s @ (b'+' | b'-')) = b.get(i) {
            clean.push(s as char);
            i += 1;
        }
        if !digit_part(&mut i, &mut clean) {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    clean.parse::<f64>().ok()
}

/// Shortest round-trip digits of |x| and its decimal exponent: x = 0.d1d2… × 10^exp.
fn shortest_digits(x: f64) -> (String, i32) {
    // `{:e}` gives a shortest round-trip mantissa, e.g. "1.4334711656212649e0". When two
    // shortest candidates exist, Python takes the correctly rounded one (ties to even), which
    // the exact-precision formatter gives; use it whenever it still round-trips.
    let mut s = format!("{:e}", x.abs());
    let n = s
        .split('e')
        .next()
        .map_or(0, |m| m.chars().filter(char::is_ascii_digit).count());
    if n > 1 {
        let rounded = format!("{:.*e}", n - 1, x.abs());
        if rounded.parse::<f64>() == Ok(x.abs()) {
            s = rounded;
        }
    }
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0').to_string();
    let digits = if digits.is_empty() {
        "0".into()
    } else {
        digits
    };
    (digits, exp + 1)
}

/// Python's `str(float)` / `repr(float)`: shortest round-trip, scientific below 1e-4 and from
/// 1e16 on, always with a `.0` or exponent.
pub fn py_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, decpt) = shortest_digits(x);
    if !(-3..=16).contains(&decpt) {
        let (first, rest) = digits.split_at(1);
        let exp = decpt - 1;
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{esign}{:02}", exp.abs());
    }
    let body = if decpt <= 0 {
        format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
    } else if digits.len() as i32 <= decpt {
        format!(
            "{}{}.0",
            digits,
            "0".repeat((decpt - digits.len() as i32) as usize)
        )
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// Python's `repr(str)`: single quotes unless the text holds one and no double quote;
/// backslash, the quote, `\t`, `\n`, `\r` escaped, and the characters of Latin-1 that
/// Python does not print (controls, U+007F–U+00A0, the soft hyphen) as `\xNN`. Beyond
/// Latin-1 characters are kept as they are (Python also escapes the format and unassigned
/// ones, which needs the Unicode tables).
pub fn py_str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{a0}').contains(&c) || c == '\u{ad}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_grammar_matches_python() {
        assert_eq!(py_float(" 1.5 "), Some(1.5));
        assert_eq!(py_float("1_000.5"), Some(1000.5));
        assert_eq!(py_float("1__0"), None);
        assert_eq!(py_float("_1"), None);
        assert_eq!(py_float("1."), Some(1.0));
        assert_eq!(py_float(".5e1"), Some(5.0));
        assert_eq!(py_float("."), None);
        assert_eq!(py_float("1e"), None);
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(py_float("NaN").is_some_and(f64::is_nan));
        assert_eq!(py_float("0x10"), None);
        assert_eq!(py_float(""), None);
    }

    #[test]
    fn plain_decimals_read_as_the_general_path_reads_them() {
        let mut seed: u64 = 23;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for n in 0..20000 {
            let len = 1 + next() % 22;
            let mut t: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            if n % 4 != 0 {
                t.insert(next() % (len + 1), '.');
            }
            let want = parse_decimal(&t).map(f64::to_bits);
            assert_eq!(py_float(&t).map(f64::to_bits), want, "{t}");
            assert_eq!(
                py_float(&format!("-{t}")).map(|x| (-x).to_bits()),
                want,
                "-{t}"
            );
        }
        for t in [
            ".",
            "5.",
            ".5",
            "00.100",
            "1..2",
            "",
            "000000000000000000000.1",
            "0.00000000000000000001234",
            "1234567890123456.5",
            "123456789012345.6",
        ] {
            assert_eq!(py_float(t), parse_decimal(t), "{t:?}");
        }
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr(1.0), "1.0");
        assert_eq!(py_repr(0.5), "0.5");
        assert_eq!(py_repr(1e-5), "1e-05");
        assert_eq!(py_repr(0.0001), "0.0001");
        assert_eq!(py_repr(1e16), "1e+16");
        assert_eq!(py_repr(1e15), "1000000000000000.0");
        assert_eq!(py_repr(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(py_repr(-0.0), "-0.0");
        assert_eq!(py_repr(1.5e-7), "1.5e-07");
        assert_eq!(py_repr(123.456), "123.456");
    }

    #[test]
    fn py_repr_repr() {
        assert_eq!(py_repr(1.4334711656212649), "1.4334711656212649");
        assert_eq!(py_repr(2.0), "2.0");
        assert_eq!(py_repr(0.0001), "0.0001");
        assert_eq!(py_repr(0.00001), "1e-05");
        assert_eq!(py_repr(-1.5e16), "-1.5e+16");
        assert_eq!(py_repr(1234.5), "1234.5");
    }
}
