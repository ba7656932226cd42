//! Reading CIF text exactly as AtomWorld's evaluator does: pymatgen's
//! `CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]`.
//!
//! The evaluator's verdicts depend on pymatgen's decisions, not on the CIF standard: which
//! files it accepts, which block it takes, how it reads numbers, snaps 1/3 and 2/3, applies
//! symmetry operations, merges sites closer than
//! [`SITE_TOLERANCE`](super::SITE_TOLERANCE) (fractional, periodic) and orders the
//! sites (grouped by composition, anion-like sites first). A group named only by symbol or
//! number is expanded from pymatgen's own tables ([`space_group`](super::space_group)). [`read_cif`](super::read_cif)
//! keeps the file's order for the viewer and the actions; this reader is for evaluation.
//!
//! # Merged sites
//!
//! pymatgen merges rows whose positions coincide (after symmetry) into one site whose
//! species is the sum of their compositions. The [`Site`] keeps the first species (in
//! pymatgen's insertion order) with its amount as `element` and `occupancy`, and the others
//! in `others`: two stacked Na atoms give one Na site with occupancy 2, Na + Cl one site with
//! Cl among its `others`; each species keeps its oxidation state (`_atom_type_oxidation_number`).
//! [`PymatgenCif::species`] lists every site's species as pymatgen keeps them.
//!
//! # Not reproduced
//!
//! Files pymatgen reads through machinery this engine does not carry are rejected with an
//! error that says so: incommensurate or disordered magnetic CIFs and magnetic groups named
//! only by their BNS label (commensurate magnetic CIFs are read, moments included:
//! [`magnetic`]), dummy species (labels like `M1` that
//! name no element), non-finite occupancies, and cells with non-finite or degenerate
//! parameters (pymatgen accepts some of these with NaN geometry).

mod atom_sites;
pub mod blocks;
// The oracle of a native-only property test (proptest needs OS randomness).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod blocks_chars;
mod magnetic;
mod newlines;
mod sanitize;
pub(crate) mod site_index;
pub mod symop;

use compact_str::CompactString;

use super::lexer::Pos;
use super::pyfloat::{cut_uncertainty, str2float};
use super::space_group::{compact_symbol, operations_for_number, operations_for_symbol};
use super::symop::SymOp;
use super::CifError;
use crate::element::Element;
use crate::lattice::{Lattice, Matrix3};
use crate::linalg::from_parameters_pymatgen;
use crate::python::py_float;
use crate::species::Occupant;
use crate::structure::{Site, Structure, MAX_SITES};
use blocks::{pymatgen_blocks, Item, PmgBlock, Text};
pub(crate) use magnetic::is_magnetic_tag;
use magnetic::{
    magnetic_kind, magnetic_operations, may_hold_magnetic_tag, moments, site_moment, MagOp,
    Magnetic,
};
use sanitize::sanitize;
use symop::{from_xyz_str, XyzError};

/// Cells thinner than this (Å, smallest d-spacing of (100), (010), (001)) are rejected.
pub const MIN_THICKNESS: f64 = 0.01;

/// One species of a parsed site and its amount.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeciesAmount {
    /// The element.
    pub element: Element,
    /// Oxidation state, when the CIF declares `_atom_type_oxidation_number`.
    pub oxidation: Option<f64>,
    /// Amount (occupancy; merged identical species add up).
    pub amount: f64,
}

/// A structure as pymatgen parses it, with what a [`Structure`] cannot hold.
#[derive(Clone, Debug, PartialEq)]
pub struct PymatgenCif {
    /// Sites in pymatgen's order, with all their elements (see the module docs).
    pub structure: Structure,
    /// Header of the data block the structure came from.
    pub block: String,
    /// The lattice as pymatgen builds it from the same parameters (`Lattice.from_parameters`,
    /// **c** along z; `Lattice.cubic` for the cubic shortcut): the cell of `structure` in
    /// pymatgen's frame, bit for bit. The matcher's candidate order and its ties depend on
    /// the frame, so the evaluator matches in this one ([`PymatgenCif::pymatgen_structure`]).
    pub pymatgen_matrix: Matrix3,
}

impl PymatgenCif {
    /// What the matcher compares: `structure` with pymatgen's lattice matrix
    /// ([`PymatgenCif::pymatgen_matrix`]), the same fractional coordinates and species, the
    /// cell rotated into pymatgen's frame. The site labels are left empty: the matcher does
    /// not read them, and copying them cost a heap allocation per site and answer.
    pub fn pymatgen_structure(&self) -> Structure {
        let sites = self.structure.sites.iter().map(|s| Site {
            element: s.element,
            frac: s.frac,
            label: CompactString::default(),
            occupancy: s.occupancy,
            oxidation: s.oxidation,
            others: s.others.clone(),
            magmom: s.magmom,
        });
        Structure::new(Lattice::from_matrix(self.pymatgen_matrix), sites.collect())
    }

    /// Every site's full species list, parallel to `structure.sites`: the site's element,
    /// then the others sharing it, in the reader's order.
    pub fn species(&self) -> impl Iterator<Item = impl Iterator<Item = SpeciesAmount> + '_> + '_ {
        self.structure.sites.iter().map(|site| {
            let first = SpeciesAmount {
                element: site.element,
                oxidation: site.oxidation,
                amount: site.occupancy,
            };
            let others = site.others.iter().map(|o| SpeciesAmount {
                element: o.element,
                oxidation: o.oxidation,
                amount: o.occupancy,
            });
            std::iter::once(first).chain(others)
        })
    }
}

/// Read CIF text as the AtomWorld evaluator (pymatgen) does; see the module docs.
pub fn parse_cif_like_pymatgen(text: &str) -> Result<Structure, CifError> {
    parse_like_pymatgen(text).map(|p| p.structure)
}

/// Like [`parse_cif_like_pymatgen`], keeping the block's header and pymatgen's lattice
/// matrix ([`PymatgenCif`]).
pub fn parse_cif_like_pymatgen_detailed(text: &str) -> Result<PymatgenCif, CifError> {
    parse_like_pymatgen(text)
}

/// The reader.
fn parse_like_pymatgen(text: &str) -> Result<PymatgenCif, CifError> {
    let mut blocks = pymatgen_blocks(text)?;
    let magnetic = if may_hold_magnetic_tag(text) {
        magnetic_kind(&blocks)
    } else {
        Magnetic::No
    };
    for block in blocks.iter_mut() {
        sanitize(block)?;
    }
    let mut first: Option<PymatgenCif> = None;
    let mut first_failure: Option<CifError> = None;
    // pymatgen parses every block: a later block can still fail the whole file.
    let mut budget = MAX_SITES;
    for block in &blocks {
        match structure_of_block(block, magnetic, &mut budget) {
            Ok(Some(parsed)) => {
                first.get_or_insert(parsed);
            }
            Ok(None) => {}
            Err(Fail::Block(e)) => {
                first_failure.get_or_insert(e);
            }
            Err(Fail::File(e)) => return Err(e),
        }
    }
    first.ok_or_else(|| match first_failure {
        Some(e) => CifError {
            message: format!("no structure in the CIF: {}", e.message),
            pos: e.pos,
        },
        None if blocks.is_empty() => {
            CifError::general("no structure in the CIF: no line starts with data_")
        }
        None => CifError::general("no structure in the CIF: no atom site names an element"),
    })
}

/// How a block failed: pymatgen skips the block (`KeyError`, `ValueError`) or the whole
/// file fails (any other exception, or something this reader does not reproduce).
enum Fail {
    Block(CifError),
    File(CifError),
}

fn block_err(pos: Option<Pos>, message: impl Into<String>) -> Fail {
    Fail::Block(CifError {
        message: message.into(),
        pos,
    })
}

fn file_err(pos: Option<Pos>, message: impl Into<String>) -> Fail {
    Fail::File(CifError {
        message: message.into(),
        pos,
    })
}

/// How the message of an [`unsupported`] failure starts.
const UNSUPPORTED: &str = "not supported (pymatgen would need more than this reader has)";

fn unsupported(pos: Option<Pos>, what: &str) -> Fail {
    file_err(pos, format!("{UNSUPPORTED}: {what}"))
}

/// pymatgen's `str2float` on a data item (a one-value loop column reads as its value).
fn item_float(item: &Item) -> Option<f64> {
    match item {
        Item::Scalar(t) => str2float(&t.s),
        // pymatgen retries a one-element list without the "." special case.
        Item::List(v) if v.len() == 1 => py_float(cut_uncertainty(&v[0].s)),
        Item::List(_) => None,
    }
}

/// A cell value: missing is `Ok(None)` (KeyError), unreadable is a block failure.
fn cell_value(block: &PmgBlock, tag: &str) -> Result<Option<f64>, Fail> {
    let Some(item) = block.get(tag) else {
        return Ok(None);
    };
    item_float(item).map(Some).ok_or_else(|| {
        block_err(
            item.pos(),
            format!("{tag}: '{}' is not a number", item_text(item)),
        )
    })
}

fn item_text(item: &Item) -> String {
    match item {
        Item::Scalar(t) => t.s.to_string(),
        Item::List(v) => v.iter().map(|t| t.s.as_str()).collect::<Vec<_>>().join(" "),
    }
}

/// Parameter indices a crystal-system constructor takes, and the six parameters from them.
type CellShortcut = (&'static [usize], fn(&[f64]) -> [f64; 6]);

const LENGTHS: [&str; 3] = ["_cell_length_a", "_cell_length_b", "_cell_length_c"];
const ANGLES: [&str; 3] = ["_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"];

/// `CifParser.get_lattice`: the six parameters, or the crystal-system shortcut
/// (`_symmetry_cell_setting`) when some are missing, with whether that shortcut is
/// `Lattice.cubic`; `None` when there is no lattice.
fn lattice_parameters(block: &PmgBlock) -> Result<Option<([f64; 6], bool)>, Fail> {
    let mut values = [0.0; 6];
    let mut missing = false;
    for (k, tag) in LENGTHS.iter().chain(ANGLES.iter()).enumerate() {
        match cell_value(block, tag)? {
            Some(v) => values[k] = v,
            None => {
                missing = true;
                break;
            }
        }
    }
    if !missing {
        return Ok(Some((values, false)));
    }
    for setting_tag in ["_symmetry_cell_setting", "_space_group_crystal_system"] {
        let setting = match block.get(setting_tag) {
            Some(item) if item.truthy() => item,
            _ => return Ok(None),
        };
        let Item::Scalar(t) = setting else {
            continue;
        };
        // Which of a, b, c, alpha, beta, gamma the Lattice constructor takes, and how the
        // six parameters follow from them.
        let (needs, build): CellShortcut = match t.s.to_lowercase().as_str() {
            "cubic" => (&[0], |v| [v[0], v[0], v[0], 90.0, 90.0, 90.0]),
            "tetragonal" => (&[0, 2], |v| [v[0], v[0], v[1], 90.0, 90.0, 90.0]),
            "orthorhombic" => (&[0, 1, 2], |v| [v[0], v[1], v[2], 90.0, 90.0, 90.0]),
            "monoclinic" => (&[0, 1, 2, 4], |v| [v[0], v[1], v[2], 90.0, v[3], 90.0]),
            "hexagonal" => (&[0, 2], |v| [v[0], v[0], v[1], 90.0, 90.0, 120.0]),
            "rhombohedral" => (&[0, 3], |v| [v[0], v[0], v[0], v[1], v[1], v[1]]),
            _ => continue,
        };
        let mut got = Vec::new();
        for &k in needs {
            let tag = if k < 3 { LENGTHS[k] } else { ANGLES[k - 3] };
            match cell_value(block, tag)? {
                Some(v) => got.push(v),
                None => {
                    return Err(file_err(
                        t.pos,
                        format!("{} cell without {tag} (pymatgen: TypeError)", t.s),
                    ))
                }
            }
        }
        // `Lattice.cubic` writes its matrix directly; the others go through `from_parameters`.
        return Ok(Some((build(&got), t.s.eq_ignore_ascii_case("cubic"))));
    }
    Ok(None)
}

/// The lattice in the AtomWorld frame. Negative lengths flip their vector, as they do in
/// pymatgen's construction; `None` for cells that do not exist.
fn lattice_from(p: [f64; 6]) -> Option<Lattice> {
    let l = Lattice::from_parameters(p[0].abs(), p[1].abs(), p[2].abs(), p[3], p[4], p[5]).ok()?;
    let mut m = *l.matrix();
    for (k, row) in m.iter_mut().enumerate() {
        if p[k] < 0.0 {
            *row = row.map(|x| -x);
        }
    }
    Some(Lattice::from_matrix(m))
}

/// True when pymatgen's `Lattice.from_parameters` produces NaN vectors, which it then
/// accepts (non-finite parameters, or 0/0 in its cos γ* formula, e.g. an angle of 0).
fn pymatgen_cell_is_nan(p: [f64; 6]) -> bool {
    if p.iter().any(|x| !x.is_finite()) {
        return true;
    }
    // numpy's deg2rad multiplies by π/180 once.
    let rad = |d: f64| d * (std::f64::consts::PI / 180.0);
    let (ca, cb, cg) = (
        libm::cos(rad(p[3])),
        libm::cos(rad(p[4])),
        libm::cos(rad(p[5])),
    );
    let (sa, sb) = (libm::sin(rad(p[3])), libm::sin(rad(p[4])));
    ((ca * cb - cg) / (sa * sb)).is_nan()
}

/// `Lattice.d_hkl` for (100), (010), (001).
fn thicknesses(l: &Lattice) -> [f64; 3] {
    let r = l.reciprocal_crystallographic();
    r.matrix().map(|row| 1.0 / crate::numeric::norm(row))
}

const XYZ_TAGS: [&str; 4] = [
    "_symmetry_equiv_pos_as_xyz",
    "_symmetry_equiv_pos_as_xyz_",
    "_space_group_symop_operation_xyz",
    "_space_group_symop_operation_xyz_",
];

const HM_TAGS: [&str; 12] = [
    "_symmetry_space_group_name_H-M",
    "_symmetry_space_group_name_H_M",
    "_symmetry_space_group_name_H-M_",
    "_symmetry_space_group_name_H_M_",
    "_space_group_name_Hall",
    "_space_group_name_Hall_",
    "_space_group_name_H-M_alt",
    "_space_group_name_H-M_alt_",
    "_symmetry_space_group_name_hall",
    "_symmetry_space_group_name_hall_",
    "_symmetry_space_group_name_h-m",
    "_symmetry_space_group_name_h-m_",
];

const NUMBER_TAGS: [&str; 4] = [
    "_space_group_IT_number",
    "_space_group_IT_number_",
    "_symmetry_Int_Tables_number",
    "_symmetry_Int_Tables_number_",
];

/// `CifParser.get_symops`.
fn symmetry_operations(block: &PmgBlock) -> Result<Vec<SymOp>, Fail> {
    'tags: for tag in XYZ_TAGS {
        let Some(item) = block.get(tag).filter(|i| i.truthy()) else {
            continue;
        };
        let values: &[Text] = match item {
            Item::Scalar(t) => std::slice::from_ref(t),
            Item::List(v) => v,
        };
        let mut ops = Vec::with_capacity(values.len());
        for v in values {
            match from_xyz_str(&v.s) {
                Ok(op) => ops.push(op),
                Err(XyzError::BadNumber(_)) => continue 'tags,
                Err(XyzError::ZeroDivision(s)) => {
                    return Err(file_err(
                        v.pos,
                        format!("symmetry operation '{s}' divides by zero"),
                    ))
                }
                Err(XyzError::TooManyParts(s)) => {
                    return Err(file_err(
                        v.pos,
                        format!("symmetry operation '{s}' has more than three parts"),
                    ))
                }
            }
        }
        return Ok(ops);
    }
    for tag in HM_TAGS {
        let Some(item) = block.get(tag).filter(|i| i.truthy()) else {
            continue;
        };
        let Item::Scalar(t) = item else {
            return Err(file_err(
                item.pos(),
                format!("{tag} is a loop column (pymatgen: TypeError)"),
            ));
        };
        if let Some(ops) = operations_for_symbol(&compact_symbol(&t.s)) {
            return Ok(ops.to_vec());
        }
    }
    for tag in NUMBER_TAGS {
        let Some(item) = block.get(tag).filter(|i| i.truthy()) else {
            continue;
        };
        let Some(x) = item_float(item) else { continue };
        if x.is_infinite() {
            return Err(file_err(
                item.pos(),
                format!("{tag} is infinite (pymatgen: OverflowError)"),
            ));
        }
        if x.is_nan() {
            continue;
        }
        // `int(...)` truncates; numbers outside 1–230 are skipped (pymatgen: ValueError).
        let n = x.trunc();
        if (1.0..=230.0).contains(&n) {
            if let Some(ops) = operations_for_number(n as u16) {
                return Ok(ops.to_vec());
            }
        }
    }
    Ok(vec![SymOp::identity()])
}

/// `CifParser._parse_oxi_states`: type symbol (and the symbol with its charge suffix
/// removed) → oxidation number; `None` when the CIF has none or they do not parse.
fn oxidation_states(block: &PmgBlock) -> Result<Option<Vec<(String, f64)>>, Fail> {
    let (Some(symbols), Some(numbers)) = (
        block.get("_atom_type_symbol"),
        block.get("_atom_type_oxidation_number"),
    ) else {
        return Ok(None);
    };
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut put = |k: String, v: f64| match out.iter_mut().find(|(s, _)| *s == k) {
        Some(slot) => slot.1 = v,
        None => out.push((k, v)),
    };
    let symbols: Vec<_> = symbols.iter_values().collect();
    let mut values = Vec::with_capacity(symbols.len());
    for (i, s) in symbols.iter().enumerate() {
        let n = numbers.index(i).map_err(|_| {
            file_err(
                s.pos,
                "fewer oxidation numbers than atom types (pymatgen: IndexError)",
            )
        })?;
        let Some(v) = str2float(&n.s) else {
            return Ok(None);
        };
        values.push(v);
        put(s.s.to_string(), v);
    }
    for (s, v) in symbols.iter().zip(values) {
        put(strip_charge(&s.s), v);
    }
    Ok(Some(out))
}

/// `re.sub(r"\d?[\+,\-]?$", "", symbol)`.
fn strip_charge(s: &str) -> String {
    let mut t = s.to_string();
    if t.ends_with(['+', ',', '-']) {
        t.pop();
    }
    if t.ends_with(|c: char| c.is_ascii_digit()) {
        t.pop();
    }
    t
}

/// Python `str.title()` on ASCII text.
fn title(s: &str) -> CompactString {
    let mut prev_cased = false;
    s.chars()
        .map(|c| {
            let out = if c.is_ascii_alphabetic() {
                if prev_cased {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            } else {
                c
            };
            prev_cased = c.is_ascii_alphabetic();
            out
        })
        .collect()
}

/// An element symbol pymatgen knows (its 118 elements plus D and T, which are hydrogen).
fn element_named(symbol: &str) -> Option<Element> {
    match symbol {
        "D" | "T" => Element::from_symbol("H"),
        s => Element::from_symbol(s),
    }
}

/// The element pymatgen's `CifParser` reads from a type symbol or label (`_parse_symbol`:
/// `Wat1` is oxygen, `Hw` hydrogen, `NA1` sodium; D and T are hydrogen), for the paste
/// reader, so that both readers agree on which atom a row is. `None` where pymatgen skips
/// the row or makes a dummy species.
pub(crate) fn element_of_symbol(symbol: &str) -> Option<Element> {
    let text = Text {
        s: CompactString::from(symbol),
        pos: None,
    };
    let parsed = parse_symbol(&text).ok()??;
    element_named(&parsed)
}

/// `CifParser._parse_symbol`: `Ok(None)` or `Ok(Some(""))` skip the row; an empty symbol
/// fails the file (pymatgen indexes its first character).
fn parse_symbol(sym: &Text) -> Result<Option<CompactString>, Fail> {
    const SPECIAL: [(&str, &str); 7] = [
        ("Hw", "H"),
        ("Ow", "O"),
        ("Wat", "O"),
        ("wat", "O"),
        ("OH", ""),
        ("OH2", ""),
        ("NO3", "N"),
    ];
    let s = sym.s.as_str();
    if let Some((_, v)) = SPECIAL.iter().find(|(k, _)| s.starts_with(k)) {
        return Ok(Some(CompactString::const_new(v)));
    }
    let two = title(
        s.get(..s.char_indices().nth(2).map_or(s.len(), |(i, _)| i))
            .unwrap_or(s),
    );
    if element_named(&two).is_some() {
        return Ok(Some(two));
    }
    let Some(first) = s.chars().next() else {
        return Err(file_err(
            sym.pos,
            "empty atom type symbol or label (pymatgen: IndexError)",
        ));
    };
    let one: CompactString = first.to_uppercase().collect();
    if element_named(&one).is_some() {
        return Ok(Some(one));
    }
    // `w?[A-Z][a-z]*` at the start.
    let b = s.as_bytes();
    let start = usize::from(b.first() == Some(&b'w'));
    if b.get(start).is_some_and(u8::is_ascii_uppercase) {
        let end = start
            + 1
            + b[start + 1..]
                .iter()
                .take_while(|c| c.is_ascii_lowercase())
                .count();
        return Ok(Some(CompactString::from(&s[..end])));
    }
    Ok(None)
}

/// Implicit hydrogens pymatgen adds for water-like symbols.
fn implicit_hydrogens(symbol: &str) -> f64 {
    // The first three characters, compared with three-character names: a prefix test.
    if symbol.starts_with("Wat") || symbol.starts_with("wat") {
        2.0
    } else if symbol.starts_with("O-H") {
        1.0
    } else {
        0.0
    }
}

/// `CifParser._get_structure` for one block. `budget` is what is left of [`MAX_SITES`] for
/// the file: the block's atom-site rows times its symmetry operations are taken from it
/// before anything is expanded.
///
/// The checks run in pymatgen's order, which decides which error a broken block reports:
/// the cell, the symmetry operations and oxidation states, the atom-site rows, their
/// expansion, and only then whether the labels are all empty and whether a cell was given.
fn structure_of_block(
    block: &PmgBlock,
    magnetic: Magnetic,
    budget: &mut usize,
) -> Result<Option<PymatgenCif>, Fail> {
    let lattice = block_lattice(block)?;
    let (ops, mag_ops, row_moments) = match magnetic {
        Magnetic::No => (symmetry_operations(block)?, Vec::new(), Vec::new()),
        Magnetic::Incommensurate => {
            return Err(file_err(
                block.pos,
                "not supported: an incommensurate magnetic structure (pymatgen: \
                 NotImplementedError)",
            ))
        }
        Magnetic::Commensurate => {
            if lattice.is_none() {
                return Err(block_err(
                    block.pos,
                    "a magnetic CIF block without cell parameters (moments are given along \
                     the cell axes)",
                ));
            }
            let mag_ops: Vec<MagOp> = magnetic_operations(block)?;
            let ops = mag_ops.iter().map(|m| m.op.clone()).collect();
            (ops, mag_ops, moments(block)?)
        }
    };
    let oxi = oxidation_states(block)?;
    let rows = atom_sites::read_rows(block, &ops, oxi.as_deref(), budget)?;
    if rows.is_empty() {
        return Ok(None);
    }
    if magnetic == Magnetic::Commensurate {
        if let Some(r) = rows.iter().find(|r| r.merged) {
            return Err(file_err(
                block.pos,
                format!(
                    "not supported: a disordered magnetic structure (atom site {} shares its \
                     position with another; pymatgen: NotImplementedError)",
                    r.label
                ),
            ));
        }
    }
    let (sites, groups) = atom_sites::expand(block, &rows, &ops)?;
    if sites.iter().all(|s| rows[s.row].label.is_empty()) {
        return Err(file_err(
            block.pos,
            "every atom-site label is empty (pymatgen: TypeError)",
        ));
    }
    let Some((lattice, pymatgen_matrix)) = lattice else {
        return Err(block_err(
            block.pos,
            "missing cell parameters (_cell_length_a … _cell_angle_gamma)",
        ));
    };
    let mut out_sites = Vec::with_capacity(sites.len());
    for site in sites {
        let magmom = mag_ops.get(site.op).map(|m| {
            let label = &rows[site.row].label;
            let moment = row_moments
                .iter()
                .find(|(l, _)| l == label)
                .map_or([0.0; 3], |(_, v)| *v);
            site_moment(&lattice, m, moment)
        });
        let comp = &groups[site.group];
        let Some(&(first, amount)) = comp.0.first() else {
            return Err(unsupported(block.pos, "a site without species"));
        };
        out_sites.push(Site {
            element: first.element,
            frac: site.frac,
            label: CompactString::from(&*rows[site.row].label),
            occupancy: amount,
            oxidation: first.oxidation,
            others: comp.0[1..]
                .iter()
                .map(|(sp, amount)| Occupant {
                    element: sp.element,
                    occupancy: *amount,
                    oxidation: sp.oxidation,
                })
                .collect(),
            magmom,
        });
    }
    Ok(Some(PymatgenCif {
        structure: Structure::new(lattice, out_sites),
        block: block.header.clone(),
        pymatgen_matrix,
    }))
}

/// The block's cell, `None` when it gives no cell parameters (an error only once the block
/// turns out to have atom sites), or an error for a cell pymatgen cannot use.
fn block_lattice(block: &PmgBlock) -> Result<Option<(Lattice, Matrix3)>, Fail> {
    let params = lattice_parameters(block)?;
    let cell_pos = block
        .get("_cell_length_a")
        .and_then(Item::pos)
        .or(block.pos);
    let lattice = match params {
        Some((p, _)) if pymatgen_cell_is_nan(p) => {
            return Err(unsupported(
                cell_pos,
                &format!(
                    "cell a={} b={} c={} alpha={} beta={} gamma={} (pymatgen builds lattice vectors of NaN)",
                    p[0], p[1], p[2], p[3], p[4], p[5]
                ),
            ))
        }
        Some((p, cubic)) => {
            let l = lattice_from(p).ok_or_else(|| {
                block_err(
                    cell_pos,
                    format!(
                        "cell a={} b={} c={} alpha={} beta={} gamma={} has no volume",
                        p[0], p[1], p[2], p[3], p[4], p[5]
                    ),
                )
            })?;
            let t = thicknesses(&l);
            if t.iter().any(|&d| d < MIN_THICKNESS) {
                return Err(block_err(
                    cell_pos,
                    format!(
                        "cell thickness {:?} Å below {MIN_THICKNESS} Å (pymatgen's minimum)",
                        t
                    ),
                ));
            }
            let pymatgen = if cubic {
                [[p[0], 0.0, 0.0], [0.0, p[0], 0.0], [0.0, 0.0, p[0]]]
            } else {
                from_parameters_pymatgen(p)
            };
            Some((l, pymatgen))
        }
        None => None,
    };
    Ok(lattice)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NACL: &str = "# generated using pymatgen
data_NaCl
_symmetry_space_group_name_H-M   'P 1'
_cell_length_a   5.64
_cell_length_b   5.64
_cell_length_c   5.64
_cell_angle_alpha   90.00000000
_cell_angle_beta   90.00000000
_cell_angle_gamma   90.00000000
_symmetry_Int_Tables_number   1
loop_
 _symmetry_equiv_pos_site_id
 _symmetry_equiv_pos_as_xyz
  1  'x, y, z'
loop_
 _atom_site_type_symbol
 _atom_site_label
 _atom_site_symmetry_multiplicity
 _atom_site_fract_x
 _atom_site_fract_y
 _atom_site_fract_z
 _atom_site_occupancy
  Na  Na0  1  0.00000000  0.00000000  0.00000000  1
  Cl  Cl1  1  0.50000000  0.50000000  0.50000000  1
  Na  Na2  1  0.50000000  0.50000000  0.00000000  1
";

    #[test]
    fn anions_first_and_labels_kept() {
        let s = parse_cif_like_pymatgen(NACL).unwrap();
        let labels: Vec<&str> = s.sites.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["Cl1", "Na0", "Na2"]);
    }

    #[test]
    fn stacked_atoms_merge() {
        let text = NACL.replace(
            "  Na  Na2  1  0.50000000  0.50000000  0.00000000  1",
            "  Na  Na2  1  0.00005000  0.99999000  0.00000000  1",
        );
        let p = parse_cif_like_pymatgen_detailed(&text).unwrap();
        assert_eq!(p.structure.len(), 2);
        assert_eq!(p.structure.sites[1].occupancy, 2.0);
        assert_eq!(p.structure.sites[1].label, "Na2");
    }

    #[test]
    fn missing_label_column_rejects_with_position() {
        let text = NACL
            .replace(" _atom_site_label\n", "")
            .replace("Na0  ", "")
            .replace("Cl1  ", "")
            .replace("Na2  ", "");
        let e = parse_cif_like_pymatgen(&text).unwrap_err();
        assert!(e.message.contains("_atom_site_label"), "{e}");
        assert_eq!(e.pos.map(|p| p.line), Some(2));
    }

    #[test]
    fn unknown_value_rejects_at_the_value() {
        let text = NACL.replace(
            "0.50000000  0.50000000  0.50000000",
            "?  0.50000000  0.50000000",
        );
        let e = parse_cif_like_pymatgen(&text).unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 24, col: 15 }));
    }

    #[test]
    fn thin_cells_are_rejected() {
        let text = NACL.replace("_cell_length_c   5.64", "_cell_length_c   0.005");
        assert!(parse_cif_like_pymatgen(&text).is_err());
    }

    #[test]
    fn a_symmetry_bomb_fails_the_file_before_expansion() {
        let ops: String = (0..997).map(|k| format!("'x+{k}/997, y, z'\n")).collect();
        let rows: String = (0..400)
            .map(|k| format!("Na{k} Na 0.{k:03} 0.1 0.2\n"))
            .collect();
        let text = format!(
            "data_bomb\n_cell_length_a 5\n_cell_length_b 5\n_cell_length_c 5\n\
             _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
             loop_\n_symmetry_equiv_pos_as_xyz\n{ops}loop_\n_atom_site_label\n\
             _atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
             _atom_site_fract_z\n{rows}"
        );
        let e = parse_cif_like_pymatgen(&text).unwrap_err();
        assert!(e.message.contains("could make 398800 sites"), "{e}");
        assert_eq!(e.pos.map(|p| p.line), Some(9 + 997 + 7), "{e}");
    }

    #[test]
    fn symmetry_expansion() {
        let text = "data_x\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n\
            _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
            loop_\n_symmetry_equiv_pos_as_xyz\nx,y,z\n-x,-y,-z\nx+1/2,y+1/2,z\n\
            loop_\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n\
            Si1 0.1 0.2 0.3\nSi2 0 0 0\n";
        let s = parse_cif_like_pymatgen(text).unwrap();
        // Si1: three images; Si2 at the origin: two (the inversion image coincides).
        assert_eq!(s.len(), 5);
    }

    /// A header block with journal data and only a space-group number, before a complete
    /// structure block: pymatgen skips the header (checked with pymatgen 2026.10: the file
    /// reads as the NaCl block's two sites); so does this reader.
    #[test]
    fn an_atomless_header_block_is_skipped() {
        let structure =
            "data_NaCl\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n\
            _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
            _symmetry_space_group_name_H-M 'P 1'\nloop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n\
            loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n\
            _atom_site_fract_y\n_atom_site_fract_z\nNa1 Na 0 0 0\nCl1 Cl 0.5 0.5 0.5\n";
        let header = "data_global\n_journal_name_full 'Test Journal'\n_journal_year 1999\n\
            _symmetry_Int_Tables_number 225\n\n";
        let both = parse_cif_like_pymatgen(&format!("{header}{structure}")).unwrap();
        let alone = parse_cif_like_pymatgen(structure).unwrap();
        assert_eq!(both.sites.len(), 2);
        assert_eq!(both, alone);
        // With atoms, a space-group-only block expands from pymatgen's tables: fcc Na.
        let with_atoms = "data_x\n_cell_length_a 5\n_cell_length_b 5\n_cell_length_c 5\n_cell_angle_alpha 90\n\
             _cell_angle_beta 90\n_cell_angle_gamma 90\n_symmetry_space_group_name_H-M 'F m -3 m'\n\
             loop_\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa1 0 0 0\n";
        let fcc = parse_cif_like_pymatgen(with_atoms).unwrap();
        let frac: Vec<[f64; 3]> = fcc.sites.iter().map(|s| s.frac).collect();
        assert_eq!(frac.len(), 4);
        for p in [
            [0.0, 0.0, 0.0],
            [0.5, 0.5, 0.0],
            [0.5, 0.0, 0.5],
            [0.0, 0.5, 0.5],
        ] {
            assert!(frac.contains(&p), "{p:?} missing from {frac:?}");
        }
    }
}
