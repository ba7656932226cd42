//! pymatgen's reading of CIF numbers: Python's `float()` ([`crate::python`]) after the
//! uncertainty is cut off.

use crate::python::{py_float, py_strip};

/// pymatgen's `str2float`: the text from the first `(` that has something after it is cut
/// off, the rest goes through `float()`; a lone `.` reads as 0. `None` where pymatgen raises
/// `ValueError` (`?`, words, an empty string).
pub fn str2float(text: &str) -> Option<f64> {
    py_float(cut_uncertainty(text)).or_else(|| (py_strip(text) == ".").then_some(0.0))
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
    fn str2float_cuts_uncertainties() {
        assert_eq!(str2float("0.1234(5)"), Some(0.1234));
        assert_eq!(str2float("0.5(1"), Some(0.5));
        assert_eq!(str2float("0.5("), None);
        assert_eq!(str2float("."), Some(0.0));
        assert_eq!(str2float("?"), None);
        assert_eq!(str2float("1.2e-3"), Some(0.0012));
    }
}
