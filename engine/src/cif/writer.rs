//! Writing CIF text exactly as pymatgen's `str(CifWriter(structure))` does for a structure
//! without symmetry analysis (space group P 1, one row per site, multiplicity 1).
//!
//! AtomWorld's task inputs and targets are in this style, so a structure written here is
//! byte-identical to what the reference pipeline produces from the same structure. Cell
//! parameters are derived from the lattice vectors the way pymatgen derives them (lengths as
//! square roots of sums of squares, angles as arc cosines of clipped normalised dot
//! products, volume as |(a × b) · c|), which does not depend on the Cartesian frame.

use super::formula::{element_amounts, formula, reduced_formula_and_factor};
use crate::numeric::{acos_deg, cross, dot};
use crate::python::py_repr;
use crate::species::{sorted_species, species_string};
use crate::structure::{Site, Structure};

/// Values are wrapped or written on their own line beyond this length (`CifBlock.max_len`).
const MAX_LEN: usize = 70;

/// One written item: a single value or a loop.
enum Entry {
    Value(&'static str, String),
    Loop(Vec<(&'static str, Vec<String>)>),
}

/// The CIF text pymatgen's `CifWriter` writes for this structure (P 1, no symmetry search).
pub fn write_cif(structure: &Structure) -> String {
    let m = structure.lattice.matrix();
    let lengths = m.map(|r| ((r[0] * r[0] + r[1] * r[1]) + r[2] * r[2]).sqrt());
    let angle = |j: usize, k: usize| acos_deg(dot(m[j], m[k]) / (lengths[j] * lengths[k]));
    let angles = [angle(1, 2), angle(2, 0), angle(0, 1)];
    let volume = dot(cross(m[0], m[1]), m[2]).abs();

    let amounts = element_amounts(
        structure
            .sites
            .iter()
            .flat_map(Site::occupants)
            .map(|o| (o.element, o.occupancy)),
    );
    let (reduced, factor) = reduced_formula_and_factor(&amounts);
    let f8 = |x: f64| format!("{x:.8}");

    let mut entries = vec![Entry::Value("_symmetry_space_group_name_H-M", "P 1".into())];
    for (tag, v) in ["_cell_length_a", "_cell_length_b", "_cell_length_c"]
        .into_iter()
        .zip(lengths)
    {
        entries.push(Entry::Value(tag, f8(v)));
    }
    for (tag, v) in ["_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"]
        .into_iter()
        .zip(angles)
    {
        entries.push(Entry::Value(tag, f8(v)));
    }
    entries.push(Entry::Value("_symmetry_Int_Tables_number", "1".into()));
    entries.push(Entry::Value(
        "_chemical_formula_structural",
        reduced.clone(),
    ));
    entries.push(Entry::Value("_chemical_formula_sum", formula(&amounts)));
    entries.push(Entry::Value("_cell_volume", f8(volume)));
    // Python's int() truncates the (possibly halved) factor.
    entries.push(Entry::Value(
        "_cell_formula_units_Z",
        format!("{:.0}", factor.trunc()),
    ));
    entries.push(Entry::Loop(vec![
        ("_symmetry_equiv_pos_site_id", vec!["1".into()]),
        ("_symmetry_equiv_pos_as_xyz", vec!["x, y, z".into()]),
    ]));

    let n = structure.sites.len();
    let mut cols: [Vec<String>; 7] = std::array::from_fn(|_| Vec::with_capacity(n));
    // One row per species of a site (sorted as pymatgen sorts them), `count` over rows.
    let rows = structure
        .sites
        .iter()
        .flat_map(|site| sorted_species(site).into_iter().map(move |sp| (site, sp)));
    for (count, (site, (element, occupancy))) in rows.enumerate() {
        let symbol = element.symbol();
        cols[0].push(symbol.to_string());
        let label = if site.label != species_string(site) {
            site.label.to_string()
        } else {
            format!("{symbol}{count}")
        };
        cols[1].push(label);
        cols[2].push("1".into());
        for k in 0..3 {
            cols[3 + k].push(f8(site.frac[k]));
        }
        cols[6].push(py_repr(occupancy));
    }
    let [c0, c1, c2, c3, c4, c5, c6] = cols;
    entries.push(Entry::Loop(vec![
        ("_atom_site_type_symbol", c0),
        ("_atom_site_label", c1),
        ("_atom_site_symmetry_multiplicity", c2),
        ("_atom_site_fract_x", c3),
        ("_atom_site_fract_y", c4),
        ("_atom_site_fract_z", c5),
        ("_atom_site_occupancy", c6),
    ]));

    let header: String = reduced.chars().take(74).collect();
    let mut lines = vec![format!("data_{header}")];
    for entry in &entries {
        match entry {
            Entry::Value(key, v) => {
                let val = format_field(v);
                if key.len() + val.chars().count() + 3 < MAX_LEN {
                    lines.push(format!("{key}   {val}"));
                } else {
                    lines.push(key.to_string());
                    lines.push(val);
                }
            }
            Entry::Loop(columns) => lines.push(loop_text(columns)),
        }
    }
    format!("# generated using pymatgen\n{}\n", lines.join("\n"))
}

/// `CifBlock._format_field`: quote values with spaces, wrap long ones in a text field.
fn format_field(v: &str) -> String {
    let v = v.trim();
    if v.is_empty() {
        return "\"\"".into();
    }
    if v.chars().count() > MAX_LEN {
        return format!(";\n{}\n;", wrap(v, MAX_LEN));
    }
    let quoted = |q: char| v.starts_with(q) && v.ends_with(q);
    if (v.contains(' ') || v.starts_with('_')) && !quoted('\'') && !quoted('"') {
        let q = if v.contains('\'') { '"' } else { '\'' };
        return format!("{q}{v}{q}");
    }
    v.to_string()
}

/// `textwrap.fill(text, width)` for text without hyphens or tabs: greedy word wrap, long
/// words broken.
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let cur_len = cur.chars().count();
            let need = if cur.is_empty() { 0 } else { 1 };
            if cur_len + need + word.len() <= width {
                if need == 1 {
                    cur.push(' ');
                }
                cur.extend(word.iter());
                break;
            }
            if word.len() > width {
                // Break the long word to fill the current line.
                let room = width.saturating_sub(cur_len + need);
                if room == 0 {
                    lines.push(std::mem::take(&mut cur));
                    continue;
                }
                if need == 1 {
                    cur.push(' ');
                }
                cur.extend(word.drain(..room));
                lines.push(std::mem::take(&mut cur));
                continue;
            }
            lines.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines.join("\n")
}

/// `CifBlock._loop_to_str`.
fn loop_text(columns: &[(&str, Vec<String>)]) -> String {
    let mut out = String::from("loop_");
    for (tag, _) in columns {
        out.push_str("\n ");
        out.push_str(tag);
    }
    let rows = columns.iter().map(|(_, v)| v.len()).min().unwrap_or(0);
    for r in 0..rows {
        let mut line = String::from("\n");
        for (_, values) in columns {
            let val = format_field(&values[r]);
            if val.starts_with(';') {
                out.push_str(&line);
                out.push('\n');
                out.push_str(&val);
                line = "\n".into();
            } else if line.chars().count() + val.chars().count() + 2 < MAX_LEN {
                line.push_str("  ");
                line.push_str(&val);
            } else {
                out.push_str(&line);
                line = format!("\n  {val}");
            }
        }
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::lattice::Lattice;

    #[test]
    fn a_mixed_site_is_one_row_per_species_as_pymatgen_writes_it() {
        // Expected: CifWriter(Structure(Lattice.cubic(4.2), [{"Sn": 0.5, "In": 0.5},
        // {"O": 1.0}, {"Na": 0.5}], [[0, 0, 0], [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]])),
        // pymatgen 2026.10.24.
        let el = |e: &str| Element::from_symbol(e).unwrap();
        let mut mixed = Site::new(el("Sn"), [0.0; 3], "In:0.5, Sn:0.5", 0.5);
        mixed.others.push(crate::species::Occupant {
            element: el("In"),
            occupancy: 0.5,
            oxidation: None,
        });
        let s = Structure::new(
            Lattice::from_parameters(4.2, 4.2, 4.2, 90.0, 90.0, 90.0).unwrap(),
            vec![
                mixed,
                Site::new(el("O"), [0.5; 3], "O", 1.0),
                Site::new(el("Na"), [0.25; 3], "Na:0.5", 0.5),
            ],
        );
        let expected = r"# generated using pymatgen
data_Na0.5In0.5Sn0.5O1
_symmetry_space_group_name_H-M   'P 1'
_cell_length_a   4.20000000
_cell_length_b   4.20000000
_cell_length_c   4.20000000
_cell_angle_alpha   90.00000000
_cell_angle_beta   90.00000000
_cell_angle_gamma   90.00000000
_symmetry_Int_Tables_number   1
_chemical_formula_structural   Na0.5In0.5Sn0.5O1
_chemical_formula_sum   'Na0.5 In0.5 Sn0.5 O1'
_cell_volume   74.08800000
_cell_formula_units_Z   1
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
  In  In0  1  0.00000000  0.00000000  0.00000000  0.5
  Sn  Sn1  1  0.00000000  0.00000000  0.00000000  0.5
  O  O2  1  0.50000000  0.50000000  0.50000000  1.0
  Na  Na3  1  0.25000000  0.25000000  0.25000000  0.5
";
        assert_eq!(write_cif(&s), expected);
    }

    #[test]
    fn rock_salt_text() {
        let l = Lattice::from_parameters(5.64, 5.64, 5.64, 90.0, 90.0, 90.0).unwrap();
        let site = |e: &str, f: [f64; 3], label: &str| Site {
            element: Element::from_symbol(e).unwrap(),
            frac: f,
            label: label.into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        let s = Structure::new(
            l,
            vec![
                site("Na", [0.0, 0.0, 0.0], "Na"),
                site("Cl", [0.5, 0.5, 0.5], "Cl7"),
            ],
        );
        let expected = "# generated using pymatgen
data_NaCl
_symmetry_space_group_name_H-M   'P 1'
_cell_length_a   5.64000000
_cell_length_b   5.64000000
_cell_length_c   5.64000000
_cell_angle_alpha   90.00000000
_cell_angle_beta   90.00000000
_cell_angle_gamma   90.00000000
_symmetry_Int_Tables_number   1
_chemical_formula_structural   NaCl
_chemical_formula_sum   'Na1 Cl1'
_cell_volume   179.40614400
_cell_formula_units_Z   1
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
  Na  Na0  1  0.00000000  0.00000000  0.00000000  1.0
  Cl  Cl7  1  0.50000000  0.50000000  0.50000000  1.0
";
        assert_eq!(write_cif(&s), expected);
    }

    #[test]
    fn wrapping() {
        let long = "Li4 Fe4 P4 O16 ".repeat(6);
        let w = wrap(long.trim(), 70);
        assert!(w.lines().all(|l| l.len() <= 70));
        assert_eq!(w.replace('\n', " "), long.trim());
    }
}
