//! From data blocks to a [`Structure`], keeping the file's site order.

use std::collections::HashMap;

use super::block::{parse_blocks, Block, Value};
use super::lexer::{tokenize, TokenKind};
use super::pymatgen::site_index::{pbc_close, SiteIndex};
use super::pymatgen::{element_of_symbol, is_magnetic_tag};
use super::space_group::{compact_symbol, operations_for_number, operations_for_symbol};
use super::symop::SymOp;
use super::CifError;
use crate::element::Element;
use crate::lattice::Lattice;
use crate::structure::{Site, Structure, MAX_SITES};

/// Tags that may hold symmetry operations, in order of preference.
const SYMOP_TAGS: [&str; 4] = [
    "_symmetry_equiv_pos_as_xyz",
    "_space_group_symop_operation_xyz",
    "_space_group_symop.operation_xyz",
    "_symmetry_equiv_pos_as_xyz_",
];

/// Tags that name a space group without listing its operations, in the order pymatgen's
/// `CifParser` tries them: symbols first, then numbers. (Lower-case: the block keeps tags
/// lower-cased, CIF tags being case-insensitive.)
const SYMBOL_TAGS: [&str; 5] = [
    "_symmetry_space_group_name_h-m",
    "_symmetry_space_group_name_h_m",
    "_space_group_name_hall",
    "_space_group_name_h-m_alt",
    "_symmetry_space_group_name_hall",
];
const NUMBER_TAGS: [&str; 2] = ["_space_group_it_number", "_symmetry_int_tables_number"];

/// What a block without an operation loop says about its space group.
enum NamedGroup<'a> {
    /// Nothing, or P1.
    None,
    /// A group pymatgen's tables know, by symbol or number.
    Known(&'static [SymOp]),
    /// Named (as written), but by nothing pymatgen's tables know.
    Unknown(&'a str),
}

/// The space group a block names, looked up as pymatgen's `CifParser` looks it up
/// ([`space_group`](super::space_group)).
fn named_group(block: &Block) -> NamedGroup<'_> {
    let mut unknown = None;
    for tag in SYMBOL_TAGS {
        let Some(v) = block.item(tag) else { continue };
        if let Some(ops) = operations_for_symbol(&compact_symbol(&v.text)) {
            return NamedGroup::Known(ops);
        }
        unknown = unknown.or(named(&v.text));
    }
    for tag in NUMBER_TAGS {
        let Some(v) = block.item(tag) else { continue };
        let n = parse_number(&v.text).map(f64::trunc);
        if let Some(ops) = n
            .filter(|n| (1.0..=230.0).contains(n))
            .and_then(|n| operations_for_number(n as u16))
        {
            return NamedGroup::Known(ops);
        }
        unknown = unknown.or(named(&v.text));
    }
    unknown.map_or(NamedGroup::None, NamedGroup::Unknown)
}

/// A value that names something (not empty, `?` or `.`), trimmed.
fn named(text: &str) -> Option<&str> {
    let t = text.trim();
    (!matches!(t, "" | "?" | ".")).then_some(t)
}

/// The space group a CIF declares (symbol, number or Hall symbol) when its structure block
/// lists no symmetry operations and names a group by something pymatgen's tables do not know
/// (a Hall symbol, a short monoclinic symbol such as `P 21/c`): [`read_cif`] then reads only
/// the listed sites (as P1, which is also what pymatgen does), which is not the crystal the
/// file describes. `None` when the file lists its operations, names a known group or nothing,
/// or has no structure block.
pub fn undeclared_symmetry(text: &str) -> Option<String> {
    let tokens = tokenize(text).ok()?;
    let blocks = parse_blocks(&tokens).ok()?;
    let block = blocks
        .iter()
        .find(|b| b.loop_with("_atom_site_fract_x").is_some())?;
    if listed_operations(block) {
        return None;
    }
    match named_group(block) {
        NamedGroup::Unknown(text) => Some(text.to_string()),
        NamedGroup::None | NamedGroup::Known(_) => None,
    }
}

fn listed_operations(block: &Block) -> bool {
    SYMOP_TAGS
        .iter()
        .any(|t| block.loop_with(t).is_some() || block.item(t).is_some())
}

/// Read the first data block with atom sites into a structure.
///
/// Sites keep the order of the `_atom_site` loop; with symmetry operations other than the
/// identity, each row expands to its distinct images (wrapped into [0, 1)) right after it,
/// leaving out images that land on a site of the same element already placed.
/// With only the identity, coordinates are kept exactly as written (no wrapping), which is
/// what AtomWorld's actions operate on.
///
/// A magnetic CIF (magCIF tags) is read as pymatgen reads it ([`super::pymatgen`]): its
/// magnetic operations, its sites in pymatgen's order, each with its moment.
pub fn read_cif(text: &str) -> Result<Structure, CifError> {
    let tokens = tokenize(text).map_err(|e| CifError::at(e.pos, e.message))?;
    let magnetic = tokens
        .iter()
        .any(|t| matches!(&t.kind, TokenKind::Tag(tag) if is_magnetic_tag(tag)));
    if magnetic {
        return super::pymatgen::parse_cif_like_pymatgen(text);
    }
    let blocks = parse_blocks(&tokens)?;
    let block = blocks
        .iter()
        .find(|b| b.loop_with("_atom_site_fract_x").is_some())
        .ok_or_else(|| {
            CifError::general("no data block with _atom_site_fract_x: the file has no structure")
        })?;
    structure_from_block(block)
}

fn number(v: &Value, what: &str) -> Result<f64, CifError> {
    parse_number(&v.text)
        .ok_or_else(|| CifError::at(v.pos, format!("{what}: '{}' is not a number", v.text)))
}

/// A fractional coordinate. An unquoted `.` (CIF's "inapplicable", written by some programs
/// for atoms without a refined position) reads as 0, as pymatgen's `str2float` reads it, so
/// the page shows what the evaluator sees.
fn coordinate(v: &Value, what: &str) -> Result<f64, CifError> {
    if !v.quoted && v.text == "." {
        return Ok(0.0);
    }
    number(v, what)
}

/// Parse a CIF number: `1.234`, `1.234(5)`, `-1.2e-3`, `.5`.
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let core = match text.find('(') {
        Some(i) => &text[..i],
        None => text,
    };
    let x: f64 = core.trim().parse().ok()?;
    x.is_finite().then_some(x)
}

fn cell_value(block: &Block, tag: &str) -> Result<f64, CifError> {
    let v = block
        .item(tag)
        .ok_or_else(|| CifError::general(format!("missing {tag}")))?;
    number(v, tag)
}

fn symmetry_operations(block: &Block) -> Result<Vec<SymOp>, CifError> {
    for tag in SYMOP_TAGS {
        if let Some(lp) = block.loop_with(tag) {
            let col = lp.column(tag).unwrap_or(0);
            return lp
                .rows
                .iter()
                .map(|r| SymOp::parse(&r[col].text, r[col].pos))
                .collect();
        }
        if let Some(v) = block.item(tag) {
            return Ok(vec![SymOp::parse(&v.text, v.pos)?]);
        }
    }
    Ok(match named_group(block) {
        NamedGroup::Known(ops) => ops.to_vec(),
        NamedGroup::None | NamedGroup::Unknown(_) => vec![SymOp::identity()],
    })
}

/// Longest cell edge the reader accepts (Å): far beyond any crystal or slab, and small
/// enough that volumes, distances and the written CIF stay finite.
pub const MAX_CELL_LENGTH: f64 = 1e6;

fn structure_from_block(block: &Block) -> Result<Structure, CifError> {
    for tag in ["_cell_length_a", "_cell_length_b", "_cell_length_c"] {
        let length = cell_value(block, tag)?;
        if length > MAX_CELL_LENGTH {
            return Err(CifError {
                message: format!("{tag} = {length} Å exceeds the limit of {MAX_CELL_LENGTH} Å"),
                pos: block.item(tag).map(|v| v.pos),
            });
        }
    }
    let lattice = Lattice::from_parameters(
        cell_value(block, "_cell_length_a")?,
        cell_value(block, "_cell_length_b")?,
        cell_value(block, "_cell_length_c")?,
        cell_value(block, "_cell_angle_alpha")?,
        cell_value(block, "_cell_angle_beta")?,
        cell_value(block, "_cell_angle_gamma")?,
    )
    .map_err(|e| {
        let pos = block.item("_cell_length_a").map(|v| v.pos);
        CifError {
            message: e.to_string(),
            pos,
        }
    })?;
    let ops = symmetry_operations(block)?;
    let only_identity = ops.iter().all(SymOp::is_identity);

    let lp = block
        .loop_with("_atom_site_fract_x")
        .ok_or_else(|| CifError::general("no _atom_site_fract_x loop"))?;
    let col = |t: &str| lp.column(t);
    let (Some(cx), Some(cy), Some(cz)) = (
        col("_atom_site_fract_x"),
        col("_atom_site_fract_y"),
        col("_atom_site_fract_z"),
    ) else {
        return Err(CifError::at(
            lp.pos,
            "atom-site loop needs _atom_site_fract_x, _y and _z",
        ));
    };
    let c_type = col("_atom_site_type_symbol");
    let c_label = col("_atom_site_label");
    let c_occ = col("_atom_site_occupancy");
    if c_type.is_none() && c_label.is_none() {
        return Err(CifError::at(
            lp.pos,
            "atom-site loop has neither _atom_site_type_symbol nor _atom_site_label",
        ));
    }

    // Checked before any expansion: a small file with many operations can ask for millions.
    let images = if only_identity { 1 } else { ops.len() };
    let most = lp.rows.len().saturating_mul(images);
    if most > MAX_SITES {
        return Err(CifError::at(
            lp.pos,
            format!(
                "{} atom sites under {images} symmetry operations could make {most} sites; \
                 the limit is {MAX_SITES}",
                lp.rows.len()
            ),
        ));
    }
    let mut sites: Vec<Site> = Vec::new();
    let mut placed_by_element: HashMap<Element, SiteIndex> = HashMap::new();
    for row in &lp.rows {
        let symbol_value = c_type.or(c_label).map(|c| &row[c]);
        let Some(symbol_value) = symbol_value else {
            continue;
        };
        let element = element_of_symbol(&symbol_value.text).ok_or_else(|| {
            CifError::at(
                symbol_value.pos,
                format!("'{}' does not name a chemical element", symbol_value.text),
            )
        })?;
        let label: compact_str::CompactString = c_label
            .map(|c| row[c].text.as_str())
            .unwrap_or_else(|| element.symbol())
            .into();
        let frac = [
            coordinate(&row[cx], "_atom_site_fract_x")?,
            coordinate(&row[cy], "_atom_site_fract_y")?,
            coordinate(&row[cz], "_atom_site_fract_z")?,
        ];
        let occupancy = match c_occ.map(|c| &row[c]) {
            Some(v) if !v.is_missing() => number(v, "_atom_site_occupancy")?,
            _ => 1.0,
        };
        if only_identity {
            sites.push(Site {
                element,
                frac,
                label,
                occupancy,
                oxidation: None,
                others: Vec::new(),
                magmom: None,
            });
            continue;
        }
        let placed = placed_by_element.entry(element).or_default();
        for op in &ops {
            let image = op.apply(frac).map(|x| x - crate::numeric::floor(x));
            // An image on a site of the same element (this row's or an earlier row's: files
            // often list symmetry copies as rows of their own) is that site, as pymatgen
            // merges it; atoms of other elements on one spot are kept (disorder).
            let duplicate = placed.first(image, pbc_close).is_some();
            if !duplicate {
                placed.push(image);
                sites.push(Site {
                    element,
                    frac: image,
                    label: label.clone(),
                    occupancy,
                    oxidation: None,
                    others: Vec::new(),
                    magmom: None,
                });
            }
        }
    }
    Ok(Structure::new(lattice, sites))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROCKSALT_FM3M: &str = "data_NaCl
_cell_length_a 5.64
_cell_length_b 5.64
_cell_length_c 5.64
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
loop_
_symmetry_equiv_pos_as_xyz
'x, y, z'
'x, y+1/2, z+1/2'
'x+1/2, y, z+1/2'
'x+1/2, y+1/2, z'
loop_
_atom_site_label
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 0 0 0
Cl1 0.5(1) 0.5 0.5
";

    #[test]
    fn symmetry_expansion_gives_conventional_rocksalt() {
        let s = read_cif(ROCKSALT_FM3M).unwrap();
        assert_eq!(s.len(), 8);
        let na = s
            .sites
            .iter()
            .filter(|x| x.element.symbol() == "Na")
            .count();
        assert_eq!(na, 4);
        assert!(s
            .sites
            .iter()
            .all(|x| x.frac.iter().all(|&f| (0.0..1.0).contains(&f))));
    }

    #[test]
    fn bad_number_reports_line_and_column() {
        let bad = ROCKSALT_FM3M.replace("Cl1 0.5(1)", "Cl1 0.5x");
        let e = read_cif(&bad).unwrap_err();
        assert_eq!(e.pos.map(|p| (p.line, p.col)), Some((20, 5)));
        assert!(e.message.contains("0.5x"), "{e}");
    }

    #[test]
    fn a_symmetry_bomb_is_refused_before_expansion() {
        let mut text = ROCKSALT_FM3M.replace("'x+1/2, y+1/2, z'\n", "");
        let ops: String = (0..997).map(|k| format!("'x+{k}/997, y, z'\n")).collect();
        text = text.replace("'x, y, z'\n", &format!("'x, y, z'\n{ops}"));
        let rows: String = (0..400)
            .map(|k| format!("Na{k} 0.{k:03} 0.1 0.2\n"))
            .collect();
        text.push_str(&rows);
        let e = read_cif(&text).unwrap_err();
        assert!(e.message.contains("the limit is 100000"), "{e}");
        // At the atom-site loop (the line of its `loop_`).
        let loop_line = text.lines().position(|l| l == "_atom_site_label");
        assert_eq!(e.pos.map(|p| p.line), loop_line, "{e}");
    }

    #[test]
    fn absurd_cell_lengths_are_refused_where_written() {
        let text = ROCKSALT_FM3M.replace("_cell_length_b 5.64", "_cell_length_b 1e308");
        let e = read_cif(&text).unwrap_err();
        assert_eq!(e.pos.map(|p| (p.line, p.col)), Some((3, 16)), "{e}");
        assert!(e.message.contains("exceeds the limit"), "{e}");
    }

    #[test]
    fn a_space_group_without_operations_is_noticed() {
        let bare = ROCKSALT_FM3M.replace(
            "loop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n'x, y+1/2, z+1/2'\n'x+1/2, y, z+1/2'\n'x+1/2, y+1/2, z'\n",
            "_symmetry_space_group_name_H-M 'F m -3 m'\n",
        );
        assert_ne!(bare, ROCKSALT_FM3M);
        // A symbol pymatgen knows: expanded, nothing to warn about.
        assert_eq!(undeclared_symmetry(&bare), None);
        assert_eq!(read_cif(&bare).unwrap().len(), 8);
        // By number only.
        let numbered = bare.replace(
            "_symmetry_space_group_name_H-M 'F m -3 m'",
            "_symmetry_Int_Tables_number 225",
        );
        assert_eq!(read_cif(&numbered).unwrap().len(), 8);
        // A Hall symbol (pymatgen does not look these up): read as P1, and said so.
        let hall = bare.replace(
            "_symmetry_space_group_name_H-M 'F m -3 m'",
            "_space_group_name_Hall '-F 4 2 3'",
        );
        assert_eq!(undeclared_symmetry(&hall).as_deref(), Some("-F 4 2 3"));
        assert_eq!(read_cif(&hall).unwrap().len(), 2);
        assert_eq!(
            undeclared_symmetry(ROCKSALT_FM3M),
            None,
            "operations listed"
        );
        // An unknown value first does not hide a Hall symbol after it.
        let both = hall.replace(
            "_space_group_name_Hall",
            "_symmetry_space_group_name_H-M ?\n_space_group_name_Hall",
        );
        assert_eq!(undeclared_symmetry(&both).as_deref(), Some("-F 4 2 3"));
        let p1 = bare.replace("'F m -3 m'", "'P 1'");
        assert_eq!(undeclared_symmetry(&p1), None);
        assert_eq!(undeclared_symmetry("not a cif"), None);
    }

    #[test]
    fn a_named_group_expands_as_the_evaluator_reads_it() {
        let bare = ROCKSALT_FM3M.replace(
            "loop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n'x, y+1/2, z+1/2'\n'x+1/2, y, z+1/2'\n'x+1/2, y+1/2, z'\n",
            "_symmetry_space_group_name_H-M 'F m -3 m'\n",
        );
        let ours = read_cif(&bare).unwrap();
        let evaluator = crate::cif::parse_cif_like_pymatgen(&bare).unwrap();
        let sorted = |s: &Structure| {
            let mut c = s.composition();
            c.sort_by_key(|(e, _)| e.symbol());
            c
        };
        assert_eq!(sorted(&ours), sorted(&evaluator));
        assert_eq!(ours.len(), evaluator.len());
    }

    #[test]
    fn symmetry_copies_listed_as_rows_are_one_site_and_dots_read_as_zero() {
        // Cl listed twice: at 0.5,0.5,0.5 and at a copy of it under the F centring.
        let text =
            ROCKSALT_FM3M.replace("Cl1 0.5(1) 0.5 0.5\n", "Cl1 0.5(1) 0.5 0.5\nCl2 0 0 0.5\n");
        let s = read_cif(&text).unwrap();
        assert_eq!(s.len(), 8, "the second Cl row adds no site");
        // Another element on a Cl site is kept (disorder).
        let mixed =
            ROCKSALT_FM3M.replace("Cl1 0.5(1) 0.5 0.5\n", "Cl1 0.5(1) 0.5 0.5\nBr1 0 0 0.5\n");
        assert_eq!(read_cif(&mixed).unwrap().len(), 12);
        // A '.' coordinate: 0, as pymatgen reads it.
        let dot = ROCKSALT_FM3M.replace("Na1 0 0 0", "Na1 . . .");
        assert_eq!(read_cif(&dot).unwrap().sites[0].frac, [0.0; 3]);
    }

    #[test]
    fn element_fallbacks() {
        assert_eq!(element_of_symbol("NA1").unwrap().symbol(), "Na");
        assert_eq!(element_of_symbol("O12").unwrap().symbol(), "O");
        assert_eq!(element_of_symbol("Fe2+").unwrap().symbol(), "Fe");
        assert_eq!(element_of_symbol("Wat1").unwrap().symbol(), "O");
        assert!(element_of_symbol("Qq").is_none());
    }

    #[test]
    fn numbers_with_uncertainty_and_exponent() {
        assert_eq!(parse_number("1.234(5)"), Some(1.234));
        assert_eq!(parse_number("-1.5e-3"), Some(-0.0015));
        assert_eq!(parse_number("?"), None);
        assert_eq!(parse_number("nan"), None);
    }
}
