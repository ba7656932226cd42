//! The atom-site loop of one block, as pymatgen's `CifParser._get_structure` reads it: each
//! row becomes a composition at a position ([`read_rows`]), a row that a symmetry operation
//! maps onto an earlier row is merged into it, and the rows, sorted by composition, are
//! expanded by the symmetry operations into sites ([`expand`]).

use std::borrow::Cow;

use super::blocks::{Item, PmgBlock, Text};
use super::sanitize::FRACT_TAGS;
use super::site_index::{pbc_close, SiteIndex};
use super::symop::operate;
use super::{
    block_err, element_named, file_err, implicit_hydrogens, parse_symbol, unsupported, Fail,
};
use crate::cif::pyfloat::str2float;
use crate::cif::symop::SymOp;
use crate::element::Element;
use crate::species::composition::{order_by_composition, Composition, Species};
use crate::structure::MAX_SITES;

/// One row read from the atom-site loop (before grouping).
pub(super) struct Row<'b> {
    coord: [f64; 3],
    comp: Composition,
    /// Borrowed from the block (one string per output site is made at the end).
    pub(super) label: Cow<'b, str>,
    /// Whether a later row was merged into this one (two rows on one position).
    pub(super) merged: bool,
}

/// One expanded site: its wrapped fractional coordinates, the index of its group of equal
/// compositions and the index of the row it comes from.
pub(super) struct ExpandedSite {
    pub(super) frac: [f64; 3],
    pub(super) group: usize,
    pub(super) row: usize,
    /// The index of the symmetry operation that made it from its row.
    pub(super) op: usize,
}

/// The atom-site loop's columns in one block, looked up once.
struct Columns<'b> {
    types: Option<&'b Item>,
    occupancies: Option<&'b Item>,
    fract: [(&'static str, Option<&'b Item>); 3],
}

/// The rows of the block's atom-site loop in file order, each row that a symmetry
/// operation maps onto an earlier row (or that repeats its exact coordinates) merged into
/// it. Rows without a species symbol are skipped. `budget` pays for the rows times the
/// symmetry operations before any row is read (see [`MAX_SITES`]).
pub(super) fn read_rows<'b>(
    block: &'b PmgBlock,
    ops: &[SymOp],
    oxi: Option<&[(String, f64)]>,
    budget: &mut usize,
) -> Result<Vec<Row<'b>>, Fail> {
    let labels = block
        .get("_atom_site_label")
        .ok_or_else(|| block_err(block.pos, "missing _atom_site_label"))?;
    let most = labels.len().saturating_mul(ops.len().max(1));
    if most > *budget {
        return Err(file_err(
            labels.pos().or(block.pos),
            format!(
                "{} atom sites under {} symmetry operations could make {most} sites; the \
                 limit is {MAX_SITES} for the whole file",
                labels.len(),
                ops.len()
            ),
        ));
    }
    *budget -= most;

    let columns = Columns {
        types: block.get("_atom_site_type_symbol"),
        occupancies: block.get("_atom_site_occupancy"),
        fract: FRACT_TAGS.map(|tag| (tag, block.get(tag))),
    };
    let mut rows: Vec<Row> = Vec::with_capacity(labels.len());
    let mut placed = SiteIndex::with_capacity(labels.len()); // the rows' coordinates
    let with_identity = ops.iter().any(SymOp::is_identity);
    for (idx, label) in labels.iter_values().enumerate() {
        if let Some(row) = read_row(block, &columns, oxi, idx, label)? {
            merge_row(&mut rows, &mut placed, (ops, with_identity), row);
        }
    }
    Ok(rows)
}

/// Row `idx` of the atom-site loop (`label` is its `_atom_site_label`), or `None` when it
/// names no species.
fn read_row<'b>(
    block: &PmgBlock,
    columns: &Columns<'b>,
    oxi: Option<&[(String, f64)]>,
    idx: usize,
    label: Cow<'b, Text>,
) -> Result<Option<Row<'b>>, Fail> {
    // A column's values are borrowed; a single value's characters are copied.
    let label_str: Cow<'b, str> = match &label {
        Cow::Borrowed(t) => Cow::Borrowed(t.s.as_str()),
        Cow::Owned(t) => Cow::Owned(t.s.to_string()),
    };
    let raw = match columns.types {
        Some(t) => t.index(idx).map_err(|_| {
            file_err(
                label.pos,
                format!(
                    "_atom_site_type_symbol has no row {} (pymatgen: IndexError)",
                    idx + 1
                ),
            )
        })?,
        None => Cow::Borrowed(&*label),
    };
    let Some(symbol) = parse_symbol(&raw)?.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let num_h = implicit_hydrogens(&raw.s);
    let Some(element) = element_named(&symbol) else {
        if symbol.starts_with('w') {
            return Err(block_err(raw.pos, format!("'{symbol}' is not a species")));
        }
        return Err(unsupported(
            raw.pos,
            &format!(
                "'{}' names no element (pymatgen makes a dummy species)",
                raw.s
            ),
        ));
    };
    let oxidation = oxi.map(|table| {
        let get = |k: &str| table.iter().find(|(s, _)| s == k).map(|(_, v)| *v);
        let o = get(&symbol).unwrap_or(0.0);
        if columns.types.is_some() {
            get(&raw.s).unwrap_or(o)
        } else {
            o
        }
    });
    let occu = match columns.occupancies {
        None => 1.0,
        Some(item) => {
            let v = item.index(idx).map_err(|_| {
                file_err(
                    item.pos(),
                    format!(
                        "_atom_site_occupancy has no row {} (pymatgen: IndexError)",
                        idx + 1
                    ),
                )
            })?;
            match str2float(&v.s) {
                Some(x) if !x.is_finite() => {
                    return Err(unsupported(v.pos, &format!("occupancy '{}'", v.s)))
                }
                Some(x) => x,
                None => 1.0,
            }
        }
    };
    let coord = [
        fract(block, columns.fract[0], idx)?,
        fract(block, columns.fract[1], idx)?,
        fract(block, columns.fract[2], idx)?,
    ];
    let main = (
        Species { element, oxidation },
        if 1e-8 > occu { 1e-8 } else { occu },
    );
    let mut implicit_h = None;
    if num_h > 0.0 {
        if oxidation.is_some() {
            return Err(unsupported(
                raw.pos,
                "implicit hydrogens together with oxidation states",
            ));
        }
        let hydrogen = element_named("H")
            .ok_or_else(|| unsupported(raw.pos, "hydrogen missing from the element table"))?;
        implicit_h = Some((
            Species {
                element: hydrogen,
                oxidation: None,
            },
            num_h,
        ));
    }
    Ok(Some(Row {
        coord,
        comp: Composition::new(std::iter::once(main).chain(implicit_h)),
        label: label_str,
        merged: false,
    }))
}

/// Row `idx` of the coordinate column `tag` (`column`, looked up once per block).
fn fract(block: &PmgBlock, (tag, column): (&str, Option<&Item>), idx: usize) -> Result<f64, Fail> {
    let item = column.ok_or_else(|| block_err(block.pos, format!("missing {tag}")))?;
    let v = item.index(idx).map_err(|_| {
        file_err(
            item.pos(),
            format!("{tag} has no row {} (pymatgen: IndexError)", idx + 1),
        )
    })?;
    str2float(&v.s).ok_or_else(|| block_err(v.pos, format!("{tag}: '{}' is not a number", v.s)))
}

/// Add `row` to `rows` (`placed` holds their coordinates) as pymatgen's coordinate-keyed
/// dict does: merged into an earlier row that a symmetry operation maps it onto, replacing
/// an earlier row at exactly its coordinates, or appended. `with_identity`: whether `ops`
/// holds the identity.
fn merge_row<'b>(
    rows: &mut Vec<Row<'b>>,
    placed: &mut SiteIndex,
    (ops, with_identity): (&[SymOp], bool),
    row: Row<'b>,
) {
    // Merge with an earlier row that a symmetry operation maps onto this one.
    let matched = ops
        .iter()
        .find_map(|op| placed.first(operate(op, row.coord), pbc_close));
    // The identity maps finite coordinates onto themselves exactly, so a row at exactly
    // these coordinates would have matched above: none to replace.
    let none_equal = with_identity && row.coord.iter().all(|x| x.is_finite());
    match matched {
        Some(k) => {
            rows[k].comp = rows[k].comp.add(&row.comp);
            rows[k].label = row.label;
            rows[k].merged = true;
        }
        None if none_equal => {
            placed.push(row.coord);
            rows.push(row);
        }
        // Same key in pymatgen's dict: the entry is replaced in place.
        None => match placed.first(row.coord, |a, b| a == b) {
            Some(k) => {
                rows[k].comp = row.comp;
                rows[k].label = row.label;
            }
            None => {
                placed.push(row.coord);
                rows.push(row);
            }
        },
    }
}

/// The sites of `rows` under the symmetry operations: rows sorted by composition (stable),
/// each group of equal compositions expanded, a copy dropped when it lies within the site
/// tolerance of an earlier site of its group. Returns the sites and each group's species.
pub(super) fn expand(
    block: &PmgBlock,
    rows: &[Row],
    ops: &[SymOp],
) -> Result<(Vec<ExpandedSite>, Vec<Composition>), Fail> {
    let sorted = order_by_composition(rows.len(), |i| &rows[i].comp);
    // Every row's images, at most; a copy is rarely dropped outside high-symmetry cells.
    let mut sites: Vec<ExpandedSite> = Vec::with_capacity(rows.len().saturating_mul(ops.len()));
    let mut groups: Vec<Composition> = Vec::with_capacity(rows.len().min(8));
    let mut i = 0;
    while i < sorted.len() {
        let group_comp = rows[sorted[i]].comp.clone();
        let mut j = i + 1;
        // `itertools.groupby` asks the group's key whether it equals the next key.
        while j < sorted.len() && group_comp.equals(&rows[sorted[j]].comp) {
            j += 1;
        }
        groups.push(oxygen_without_implicit_h(&group_comp));
        // The group's sites so far.
        let mut group = SiteIndex::with_capacity((j - i).saturating_mul(ops.len()));
        for &r in &sorted[i..j] {
            for (k, op) in ops.iter().enumerate() {
                let wrapped = wrapped_image(block, &rows[r], operate(op, rows[r].coord))?;
                if group.first_or_push(wrapped, pbc_close).is_none() {
                    sites.push(ExpandedSite {
                        frac: wrapped,
                        group: groups.len() - 1,
                        row: r,
                        op: k,
                    });
                }
            }
        }
        i = j;
    }
    Ok((sites, groups))
}

/// `image` of `row` wrapped into [0, 1), or an error for a coordinate that is not finite.
fn wrapped_image(block: &PmgBlock, row: &Row, image: [f64; 3]) -> Result<[f64; 3], Fail> {
    let mut wrapped = [0.0; 3];
    for k in 0..3 {
        let x = image[k];
        if x.is_nan() {
            return Err(block_err(
                block.pos,
                format!(
                    "atom site {} has a coordinate that is not a number",
                    row.label
                ),
            ));
        }
        if x.is_infinite() {
            return Err(file_err(
                block.pos,
                format!("atom site {} has an infinite coordinate", row.label),
            ));
        }
        wrapped[k] = x - crate::numeric::floor(x);
    }
    Ok(wrapped)
}

/// Sites of exactly oxygen and hydrogen keep only the oxygen (pymatgen's implicit-hydrogen
/// rule, which also applies to an O and an H row stacked on one position).
fn oxygen_without_implicit_h(comp: &Composition) -> Composition {
    // The distinct elements are exactly H and O.
    let is = |s: &Species, name: &str| s.element.symbol() == name;
    let only_h_and_o = comp.0.iter().all(|(s, _)| is(s, "H") || is(s, "O"))
        && comp.0.iter().any(|(s, _)| is(s, "H"))
        && comp.0.iter().any(|(s, _)| is(s, "O"));
    let plain = comp.0.iter().all(|(s, _)| s.oxidation.is_none());
    if plain && only_h_and_o {
        if let Some(o) = Element::from_symbol("O") {
            let sp = Species {
                element: o,
                oxidation: None,
            };
            return Composition::new([(sp, comp.amount(&sp))]);
        }
    }
    comp.clone()
}
