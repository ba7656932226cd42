//! Symmetry operations read the way pymatgen's `SymmOp.from_xyz_str` reads them.
//!
//! pymatgen does not validate the triplet: spaces are removed, the text is lower-cased and
//! split at commas, and two regular expressions pick out terms. Text they do not match is
//! ignored, a repeated variable overwrites the earlier coefficient, and the translation is
//! the last constant found, so `x,y` (no third part) or `x+x` are accepted. This module
//! reproduces that matching, including the regex engine's backtracking order, so the same
//! strings give the same operations.

use crate::cif::symop::SymOp;
use crate::python::{py_float, py_strip};

/// Why a triplet failed, in pymatgen's terms.
#[derive(Clone, Debug, PartialEq)]
pub enum XyzError {
    /// A number pymatgen's `float()` rejects (`ValueError`: the next tag is tried).
    BadNumber(String),
    /// A fraction with a zero denominator (`ZeroDivisionError`: the whole file fails).
    ZeroDivision(String),
    /// A fourth comma-separated part with a term in it (`IndexError`: the whole file fails).
    TooManyParts(String),
}

/// A match of one term: sign, numerator, denominator (index ranges of the part, each a run
/// of digits and points) and the variable (if any).
struct Term {
    sign: bool,
    num: std::ops::Range<usize>,
    den: std::ops::Range<usize>,
    var: Option<char>,
    end: usize,
}

fn is_num(c: u8) -> bool {
    c.is_ascii_digit() || c == b'.'
}

fn run_len(s: &[u8], from: usize) -> usize {
    s[from.min(s.len())..]
        .iter()
        .take_while(|&&c| is_num(c))
        .count()
}

/// Match `([+-]?)([\d\.]*)/?([\d\.]*)([x-z])` (rotation) or
/// `([+-]?)([\d\.]+)/?([\d\.]*)(?![x-z])` (translation) at `p`, trying alternatives in the
/// order a backtracking regex engine does (every quantifier is greedy).
fn match_at(s: &[u8], p: usize, rotation: bool) -> Option<Term> {
    let signs: &[usize] = if matches!(s.get(p), Some(b'+' | b'-')) {
        &[1, 0]
    } else {
        &[0]
    };
    for &sl in signs {
        let q = p + sl;
        let max1 = run_len(s, q);
        let min1 = if rotation { 0 } else { 1 };
        for l1 in (min1..=max1).rev() {
            let r = q + l1;
            let slashes: &[usize] = if s.get(r) == Some(&b'/') {
                &[1, 0]
            } else {
                &[0]
            };
            for &sh in slashes {
                let t0 = r + sh;
                let max2 = run_len(s, t0);
                for l2 in (0..=max2).rev() {
                    let t = t0 + l2;
                    let next = s.get(t).copied();
                    let is_var = matches!(next, Some(b'x'..=b'z'));
                    let term = |var: Option<char>, end: usize| Term {
                        sign: sl == 1 && s[p] == b'-',
                        num: q..r,
                        den: t0..t,
                        var,
                        end,
                    };
                    if rotation && is_var {
                        return Some(term(next.map(char::from), t + 1));
                    }
                    if !rotation && !is_var {
                        return Some(term(None, t));
                    }
                }
            }
        }
    }
    None
}

/// All non-overlapping matches, left to right (Python `finditer`), handed to `each` until
/// it fails.
fn for_each_match(
    s: &[u8],
    rotation: bool,
    mut each: impl FnMut(Term) -> Result<(), XyzError>,
) -> Result<(), XyzError> {
    let mut p = 0;
    while p < s.len() {
        match match_at(s, p, rotation) {
            Some(t) if t.end > p => {
                p = t.end;
                each(t)?;
            }
            _ => p += 1,
        }
    }
    Ok(())
}

fn number(text: &str) -> Result<f64, XyzError> {
    py_float(text).ok_or_else(|| XyzError::BadNumber(text.to_string()))
}

/// `float(num) / float(den)` (or `float(num)` without a denominator), as Python evaluates it.
fn fraction(num: &str, den: &str, whole: &str) -> Result<f64, XyzError> {
    let n = number(num)?;
    if den.is_empty() {
        return Ok(n);
    }
    let d = number(den)?;
    if d == 0.0 {
        return Err(XyzError::ZeroDivision(whole.to_string()));
    }
    Ok(n / d)
}

/// Whether pymatgen's clean-up (strip, spaces removed, lower case) leaves `x,y,z`. No
/// character outside ASCII lower-cases to one of those.
fn cleans_to_identity(xyz: &str) -> bool {
    let mut cleaned = py_strip(xyz)
        .bytes()
        .filter(|&b| b != b' ')
        .map(|b| b.to_ascii_lowercase());
    b"x,y,z".iter().all(|&want| cleaned.next() == Some(want)) && cleaned.next().is_none()
}

/// Parse a triplet as pymatgen does.
pub fn from_xyz_str(xyz: &str) -> Result<SymOp, XyzError> {
    if cleans_to_identity(xyz) {
        // The identity, as the general path below builds it (every P1 CIF has it).
        return Ok(SymOp::identity());
    }
    let stripped = py_strip(xyz);
    // Triplets are short: the cleaned text nearly always fits a CompactString's inline 24
    // bytes, with no allocation.
    let cleaned: compact_str::CompactString = if stripped.is_ascii() {
        let bytes = stripped.bytes().filter(|&b| b != b' ');
        bytes.map(|b| char::from(b.to_ascii_lowercase())).collect()
    } else {
        stripped.replace(' ', "").to_lowercase().into()
    };
    let mut op = SymOp {
        rotation: [[0.0; 3]; 3],
        translation: [0.0; 3],
    };
    for (idx, tok) in cleaned.split(',').enumerate() {
        let bytes = tok.as_bytes();
        // A term's numbers are runs of ASCII digits and points: character boundaries.
        let part = |r: std::ops::Range<usize>| tok.get(r).unwrap_or_default();
        for_each_match(bytes, true, |m| {
            let mut factor = if m.sign { -1.0 } else { 1.0 };
            if !m.num.is_empty() {
                factor *= fraction(part(m.num), part(m.den), xyz)?;
            }
            let j = match m.var {
                Some('y') => 1,
                Some('z') => 2,
                _ => 0,
            };
            let row = op
                .rotation
                .get_mut(idx)
                .ok_or_else(|| XyzError::TooManyParts(xyz.to_string()))?;
            row[j] = factor;
            Ok(())
        })?;
        for_each_match(bytes, false, |m| {
            let factor = if m.sign { -1.0 } else { 1.0 };
            let num = fraction(part(m.num), part(m.den), xyz)?;
            let slot = op
                .translation
                .get_mut(idx)
                .ok_or_else(|| XyzError::TooManyParts(xyz.to_string()))?;
            *slot = num * factor;
            Ok(())
        })?;
    }
    Ok(op)
}

/// Apply an operation as pymatgen's `SymmOp.operate` does (affine matrix times `[x, y, z, 1]`).
pub fn operate(op: &SymOp, f: [f64; 3]) -> [f64; 3] {
    let r = &op.rotation;
    std::array::from_fn(|i| r[i][0] * f[0] + r[i][1] * f[1] + r[i][2] * f[2] + op.translation[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_shortcut_is_what_the_general_path_builds() {
        // "+x,+y,+z" is the same operation but not the shortcut's text.
        let bits = |op: SymOp| {
            (
                op.rotation.map(|r| r.map(f64::to_bits)),
                op.translation.map(f64::to_bits),
            )
        };
        let general = bits(from_xyz_str("+x, +y, +z").unwrap());
        for xyz in ["x, y, z", " X,Y,Z ", "x,y,z"] {
            assert_eq!(bits(from_xyz_str(xyz).unwrap()), general, "{xyz}");
        }
    }

    #[test]
    fn the_identity_test_is_the_clean_up_and_a_comparison() {
        for xyz in [
            "x,y,z",
            " X, Y, Z ",
            "\tx,y,z\u{3000}",
            "x, y,\u{a0}z",
            "x,y,z,",
            "x,y",
            "x,y,zz",
            "x,,y,z",
            "\u{212a},y,z",
            "",
        ] {
            let cleaned = py_strip(xyz).replace(' ', "").to_lowercase();
            assert_eq!(cleans_to_identity(xyz), cleaned == "x,y,z", "{xyz:?}");
        }
    }

    #[test]
    fn ordinary_triplets() {
        let op = from_xyz_str("-x+y, 1/2+x, -z+0.25").unwrap();
        assert_eq!(
            op.rotation,
            [[-1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]
        );
        assert_eq!(op.translation, [0.0, 0.5, 0.25]);
        assert!(from_xyz_str("X, Y, Z").unwrap().is_identity());
    }

    #[test]
    fn pymatgen_quirks() {
        // Missing third part: a zero row.
        let op = from_xyz_str("x,y").unwrap();
        assert_eq!(op.rotation[2], [0.0; 3]);
        // A repeated variable overwrites.
        assert_eq!(
            from_xyz_str("x+x,y,z").unwrap().rotation[0],
            [1.0, 0.0, 0.0]
        );
        // "1/2x": rotation 0.5, and the translation regex backtracks to "1" before "/".
        let op = from_xyz_str("1/2x,y,z").unwrap();
        assert_eq!(op.rotation[0][0], 0.5);
        assert_eq!(op.translation[0], 1.0);
        // "12x": translation 1 (backtracking), rotation 12.
        let op = from_xyz_str("12x,y,z").unwrap();
        assert_eq!((op.rotation[0][0], op.translation[0]), (12.0, 1.0));
        // Garbage is ignored.
        assert_eq!(from_xyz_str("q,y,z").unwrap().rotation[0], [0.0; 3]);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            from_xyz_str("x+1/0,y,z"),
            Err(XyzError::ZeroDivision(_))
        ));
        assert!(matches!(
            from_xyz_str("x+1.2.3,y,z"),
            Err(XyzError::BadNumber(_))
        ));
        assert!(matches!(
            from_xyz_str("x,y,z,x"),
            Err(XyzError::TooManyParts(_))
        ));
        assert!(from_xyz_str("x,y,z,").is_ok());
    }
}
