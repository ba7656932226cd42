//! Python's conventions for numbers and whitespace in text, as pymatgen's CIF code meets them.
//!
//! pymatgen reads CIF numbers with Python's `float()` after cutting uncertainties off, and
//! writes them with `str(float)` and `"{:.8f}"`. Reproducing its decisions means reproducing
//! those conventions exactly: which strings `float()` accepts, and how `repr` chooses between
//! fixed and exponent notation.

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
pub fn py_strip(s: &str) -> &str {
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
    let magnitude = if plain_decimal(body) {
        // Digits and at most one point (nearly every number in a CIF): the text the general
        // path below would hand to the same parser.
        body.parse::<f64>().ok()?
    } else if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else if body.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else {
        parse_decimal(body)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// ASCII digits with at most one `.` and at least one digit.
fn plain_decimal(body: &str) -> bool {
    let (mut digits, mut points) = (0, 0);
    for &c in body.as_bytes() {
        match c {
            b'0'..=b'9' => digits += 1,
            b'.' => points += 1,
            _ => return false,
        }
    }
    digits > 0 && points <= 1
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

/// pymatgen's `str2float`: the text from the first `(` that has something after it is cut
/// off, the rest goes through `float()`; a lone `.` reads as 0. `None` where pymatgen raises
/// `ValueError` (`?`, words, an empty string).
pub fn str2float(text: &str) -> Option<f64> {
    py_float(cut_uncertainty(text)).or_else(|| (py_strip(text) == ".").then_some(0.0))
}

/// The text before the first `(` that has something after it (`re.sub(r"\(.+\)*", "", text)`
/// for single-line text).
pub fn cut_uncertainty(text: &str) -> &str {
    match text.char_indices().find(|&(_, c)| c == '(') {
        // The pattern needs at least one character (other than a newline) after '('.
        Some((i, _)) if text[i + 1..].chars().next().is_some_and(|c| c != '\n') => &text[..i],
        _ => text,
    }
}

/// Python's `repr(float)` (also `str(float)`): the shortest digits that round-trip, in fixed
/// notation for decimal exponents from -5 to 15 and exponent notation otherwise.
pub fn py_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i32;
    let decpt = exp + 1;
    if !(-4 < decpt && decpt <= 16) {
        let rest = &digits[1..];
        let mant = if rest.is_empty() {
            digits[..1].to_string()
        } else {
            format!("{}.{}", &digits[..1], rest)
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mant}e{esign}{:02}", exp.abs());
    }
    if decpt <= 0 {
        format!("{sign}0.{}{}", "0".repeat((-decpt) as usize), digits)
    } else if decpt >= n {
        format!("{sign}{}{}.0", digits, "0".repeat((decpt - n) as usize))
    } else {
        let (a, b) = digits.split_at(decpt as usize);
        format!("{sign}{a}.{b}")
    }
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
        for t in [".", "5.", ".5", "00.100", "1..2", ""] {
            assert_eq!(py_float(t), parse_decimal(t), "{t:?}");
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
}
