//! pymatgen's `CifParser._sanitize_data`: the corrections applied to every block before any
//! structure is built (Pauling-file disordered rows, fractions snapped to 1/3 and 2/3).
//!
//! These run when the parser is created, outside pymatgen's per-block error handling, so a
//! failure here rejects the whole file.

use super::blocks::{Item, PmgBlock, Text};
use crate::cif::pyfloat::str2float;
use crate::cif::CifError;
use crate::python::{py_repr, py_strip};

/// Fractions this close (relative) to 1/3 or 2/3 are replaced by them (`frac_tolerance`).
pub const FRAC_TOLERANCE: f64 = 1e-4;

/// The atom-site coordinate columns.
pub const FRACT_TAGS: [&str; 3] = [
    "_atom_site_fract_x",
    "_atom_site_fract_y",
    "_atom_site_fract_z",
];

fn hard(pos: Option<crate::cif::Pos>, message: String) -> CifError {
    CifError { message, pos }
}

/// Apply both corrections to one block.
pub fn sanitize(block: &mut PmgBlock) -> Result<(), CifError> {
    if block.contains("_atom_site_type_symbol") {
        pauling_rows(block)?;
    }
    snap_fractions(block);
    Ok(())
}

/// Non-digit runs (`\D+`) of a string.
fn non_digit_runs(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Numbers as `\.?\d+` finds them.
fn number_runs(s: &str) -> Vec<String> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i] == '.' && b.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(b[start..i].iter().collect());
        } else {
            i = start + 1;
        }
    }
    out
}

/// Remove `(digits)` groups.
fn strip_digit_brackets(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '(' {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if b.get(j) == Some(&')') {
                i = j + 1;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Rows whose type symbol lists more `" + "`-separated parts than the label (Pauling-file
/// style `0.8Nb + 0.2Zr`) become one row per element, appended at the end.
fn pauling_rows(block: &mut PmgBlock) -> Result<(), CifError> {
    let (remove, new_rows) = split_rows(block)?;
    apply_split(block, &remove, new_rows)
}

/// The rows [`pauling_rows`] removes, and the rows it appends (label, type symbol,
/// occupancy, x, y, z).
#[allow(clippy::type_complexity)]
fn split_rows(block: &PmgBlock) -> Result<(Vec<usize>, Vec<[String; 6]>), CifError> {
    let labels = block.get("_atom_site_label").ok_or_else(|| {
        hard(
            block.pos,
            "_atom_site_type_symbol without _atom_site_label (pymatgen: KeyError)".into(),
        )
    })?;
    let no_types = Item::List(Vec::new());
    let types = block.get("_atom_site_type_symbol").unwrap_or(&no_types);
    let mut remove: Vec<usize> = Vec::new();
    let mut new_rows: Vec<[String; 6]> = Vec::new();
    for (idx, label) in labels.iter_values().enumerate() {
        let ty = types.index(idx).map_err(|_| {
            hard(
                label.pos,
                format!("row {idx} has a label but no _atom_site_type_symbol"),
            )
        })?;
        // A byte test first: a substring search sets up a searcher per row (costly in wasm),
        // and almost no type symbol holds a '+'.
        if !ty.s.as_bytes().contains(&b'+')
            || !ty.s.contains(" + ")
            || ty.s.split(" + ").count() <= label.s.split(" + ").count()
        {
            continue;
        }
        let mut els: Vec<(String, f64)> = Vec::new();
        for part in ty.s.split(" + ") {
            let cleaned = strip_digit_brackets(py_strip(part));
            let cleaned = py_strip(&cleaned);
            let bad = || {
                hard(
                    ty.pos,
                    format!("cannot split type symbol '{}' into elements", ty.s),
                )
            };
            let name = non_digit_runs(cleaned)
                .get(1)
                .ok_or_else(bad)?
                .replace("<sup>", "");
            let occ_text = format!("0{}", number_runs(cleaned).get(1).ok_or_else(bad)?);
            let occ = occ_text.parse::<f64>().map_err(|_| bad())?;
            match els.iter_mut().find(|(n, _)| *n == name) {
                Some((_, o)) => *o = occ,
                None => els.push((name, occ)),
            }
        }
        for (name, occ) in els {
            let mut coords: Vec<String> = Vec::new();
            for tag in FRACT_TAGS {
                let v = block
                    .get(tag)
                    .ok_or_else(|| hard(ty.pos, format!("missing {tag}")))?
                    .index(idx)
                    .map_err(|_| hard(ty.pos, format!("{tag} has no row {idx}")))?;
                let x = str2float(&v.s)
                    .ok_or_else(|| hard(v.pos, format!("{tag}: '{}' is not a number", v.s)))?;
                coords.push(py_repr(x));
            }
            let n = new_rows.len();
            let [x, y, z] = [coords[0].clone(), coords[1].clone(), coords[2].clone()];
            new_rows.push([format!("{name}_fix{n}"), name, py_repr(occ), x, y, z]);
        }
        remove.push(idx);
    }
    Ok((remove, new_rows))
}

/// Removes rows `remove` from every loop column and appends `new_rows` to the atom-site
/// columns.
fn apply_split(
    block: &mut PmgBlock,
    remove: &[usize],
    new_rows: Vec<[String; 6]>,
) -> Result<(), CifError> {
    // Every loop column loses the removed rows (pymatgen deletes from all list items).
    for item in block.values_mut() {
        if let Item::List(list) = item {
            for &idx in remove.iter().rev() {
                if idx >= list.len() {
                    return Err(CifError::general(
                        "a loop is shorter than the atom-site loop (pymatgen: IndexError)",
                    ));
                }
                list.remove(idx);
            }
        }
    }
    if new_rows.is_empty() {
        return Ok(());
    }
    let tags = [
        "_atom_site_label",
        "_atom_site_type_symbol",
        "_atom_site_occupancy",
        "_atom_site_fract_x",
        "_atom_site_fract_y",
        "_atom_site_fract_z",
    ];
    for (k, tag) in tags.iter().enumerate() {
        let pos = block.pos;
        match block.get_mut(tag) {
            Some(Item::List(list)) => list.extend(new_rows.iter().map(|r| Text {
                s: r[k].as_str().into(),
                pos,
            })),
            _ => {
                return Err(CifError {
                    message: format!("{tag} is not a loop column (pymatgen cannot extend it)"),
                    pos,
                })
            }
        }
    }
    Ok(())
}

/// `math.isclose(x / target, 1, rel_tol=0, abs_tol=FRAC_TOLERANCE)`.
fn near(x: f64, target: f64) -> bool {
    let r = x / target;
    r == 1.0 || (r.is_finite() && (1.0 - r).abs() <= FRAC_TOLERANCE)
}

/// Python's `repr(1 / 3)` and `repr(2 / 3)`, the values a snapped coordinate is written as.
const THIRD: &str = "0.3333333333333333";
const TWO_THIRDS: &str = "0.6666666666666666";

/// Replace fractional coordinates within 1e-4 (relative) of 1/3 or 2/3 by those values.
fn snap_fractions(block: &mut PmgBlock) {
    for tag in FRACT_TAGS {
        let Some(Item::List(list)) = block.get_mut(tag) else {
            // A single value iterates as characters, none of which can be near 1/3 or 2/3.
            continue;
        };
        for t in list.iter_mut() {
            // A number within 1e-4 of 1/3 or 2/3 has 3 or 6 as its first significant digit,
            // however it is written (exponents, leading zeros, underscores, uncertainties):
            // other values need no parse here.
            let lead = t.s.bytes().find(|b| (b'1'..=b'9').contains(b));
            if !matches!(lead, Some(b'3' | b'6')) {
                continue;
            }
            let Some(x) = str2float(&t.s) else { continue };
            for (target, repr) in [(1.0 / 3.0, THIRD), (2.0 / 3.0, TWO_THIRDS)] {
                if near(x, target) {
                    t.s = repr.into();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::blocks::pymatgen_blocks;
    use super::*;

    fn column(b: &PmgBlock, tag: &str) -> Vec<String> {
        match b.get(tag) {
            Some(Item::List(v)) => v.iter().map(|t| t.s.to_string()).collect(),
            _ => vec![],
        }
    }

    #[test]
    fn snapped_values_are_written_as_python_writes_them() {
        assert_eq!(THIRD, py_repr(1.0 / 3.0));
        assert_eq!(TWO_THIRDS, py_repr(2.0 / 3.0));
    }

    #[test]
    fn snapping() {
        let mut b = pymatgen_blocks(
            "data_x\nloop_\n_atom_site_fract_x\n0.33333\n0.6667\n0.667\n-0.3333\n0.3333(2)\n\
             3.3333e-1\n0.000666666e3\n+00.66667\n0.1\n",
        )
        .unwrap()
        .remove(0);
        sanitize(&mut b).unwrap();
        assert_eq!(
            column(&b, "_atom_site_fract_x"),
            [
                "0.3333333333333333",
                "0.6666666666666666",
                "0.667",
                "-0.3333",
                "0.3333333333333333",
                "0.3333333333333333",
                "0.6666666666666666",
                "0.6666666666666666",
                "0.1"
            ]
        );
    }

    #[test]
    fn pauling_rows_are_split() {
        let mut b = pymatgen_blocks(
            "data_x\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_occupancy\n\
             _atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n\
             O1 O 1 0.1 0.2 0.3\nM1 '0.8Nb + 0.2Zr' 1 0 0 0.5\n",
        )
        .unwrap()
        .remove(0);
        sanitize(&mut b).unwrap();
        assert_eq!(column(&b, "_atom_site_label"), ["O1", "Nb_fix0", "Zr_fix1"]);
        assert_eq!(column(&b, "_atom_site_occupancy"), ["1", "0.8", "0.2"]);
        assert_eq!(column(&b, "_atom_site_fract_z"), ["0.3", "0.5", "0.5"]);
    }
}
