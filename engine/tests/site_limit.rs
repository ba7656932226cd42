//! The 100,000-site limit (`engine::structure::MAX_SITES`, docs/guide/limits.md): a file of exactly
//! that many sites reads in every format, one site more is refused (CIF, POSCAR and XYZ with
//! the line and column of the atom-site loop or the count).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use engine::cif::{parse_cif_like_pymatgen, read_cif, Pos};
use engine::format::{read_structure, Format, MAX_SITES};

/// Sites per cell edge: the sites sit on a 50 × 50 × 50 grid (125,000 places, 2 Å apart), so
/// none coincide and no reader merges any.
const GRID: usize = 50;
/// The cubic cell's edge (Å).
const EDGE: f64 = 100.0;

/// The fractional coordinates of site `k`.
fn frac(k: usize) -> [f64; 3] {
    let g = GRID as f64;
    [
        (k % GRID) as f64 / g,
        ((k / GRID) % GRID) as f64 / g,
        (k / (GRID * GRID)) as f64 / g,
    ]
}

/// A P1 CIF with `n` silicon sites.
fn cif(n: usize) -> String {
    let mut t = format!(
        "data_big\n_cell_length_a {EDGE}\n_cell_length_b {EDGE}\n_cell_length_c {EDGE}\n\
         _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
         _symmetry_space_group_name_H-M 'P 1'\nloop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n\
         loop_\n_atom_site_type_symbol\n_atom_site_label\n_atom_site_fract_x\n\
         _atom_site_fract_y\n_atom_site_fract_z\n"
    );
    for k in 0..n {
        let [x, y, z] = frac(k);
        t.push_str(&format!("Si Si{k} {x} {y} {z}\n"));
    }
    t
}

/// The line of `needle` in `text` (1-based).
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l == needle).unwrap() + 1
}

/// A VASP 5 POSCAR with `n` silicon sites; its counts are on line 7.
fn poscar(n: usize) -> String {
    let mut t = format!("big\n1.0\n{EDGE} 0 0\n0 {EDGE} 0\n0 0 {EDGE}\nSi\n{n}\nDirect\n");
    for k in 0..n {
        let [x, y, z] = frac(k);
        t.push_str(&format!("{x} {y} {z}\n"));
    }
    t
}

/// An extended XYZ file with `n` silicon atoms; its count is on line 1.
fn xyz(n: usize) -> String {
    let mut t = format!(
        "{n}\nLattice=\"{EDGE} 0 0 0 {EDGE} 0 0 0 {EDGE}\" Properties=species:S:1:pos:R:3 \
         pbc=\"T T T\"\n"
    );
    for k in 0..n {
        let [x, y, z] = frac(k).map(|f| f * EDGE);
        t.push_str(&format!("Si {x} {y} {z}\n"));
    }
    t
}

/// pymatgen's `Structure.as_dict()` JSON with `n` silicon sites.
fn pymatgen_json(n: usize) -> String {
    let sites: Vec<String> = (0..n)
        .map(|k| {
            let [x, y, z] = frac(k);
            format!(r#"{{"species":[{{"element":"Si","occu":1}}],"abc":[{x},{y},{z}]}}"#)
        })
        .collect();
    format!(
        "{{\"lattice\":{{\"matrix\":[[{EDGE},0,0],[0,{EDGE},0],[0,0,{EDGE}]]}},\n\"sites\":[{}]}}",
        sites.join(",\n")
    )
}

#[test]
fn the_limit_is_the_documented_one() {
    assert_eq!(MAX_SITES, 100_000);
    const { assert!(GRID * GRID * GRID > MAX_SITES) };
}

#[test]
fn a_cif_of_exactly_max_sites_reads_and_one_more_is_refused_where_the_loop_is() {
    let at = cif(MAX_SITES);
    assert_eq!(read_cif(&at).unwrap().len(), MAX_SITES);
    assert_eq!(parse_cif_like_pymatgen(&at).unwrap().len(), MAX_SITES);

    let over = cif(MAX_SITES + 1);
    // The playground's reader points at the atom-site loop's `loop_`, the evaluator's (as
    // pymatgen) at the first `_atom_site_label` value.
    let loop_line = line_of(&over, "_atom_site_type_symbol") - 1;
    let e = read_cif(&over).unwrap_err();
    assert!(e.message.contains("the limit is 100000"), "{e}");
    assert_eq!(e.pos.map(|p| p.line), Some(loop_line), "{e}");
    let e = parse_cif_like_pymatgen(&over).unwrap_err();
    assert!(e.message.contains("the limit is 100000"), "{e}");
    let first_label = Pos {
        line: line_of(&over, "Si Si0 0 0 0"),
        col: 4,
    };
    assert_eq!(e.pos, Some(first_label), "{e}");
}

#[test]
fn a_cif_whose_blocks_together_exceed_max_sites_is_refused() {
    let half = cif(MAX_SITES / 2);
    let two = format!("{half}{}", half.replace("data_big", "data_other"));
    assert!(parse_cif_like_pymatgen(&two).is_ok());
    let more = format!(
        "{half}{}",
        cif(MAX_SITES / 2 + 1).replace("data_big", "data_other")
    );
    let e = parse_cif_like_pymatgen(&more).unwrap_err();
    assert!(e.message.contains("for the whole file"), "{e}");
    assert!(e.pos.is_some(), "{e}");
}

#[test]
fn poscar_xyz_and_json_of_exactly_max_sites_read_and_one_more_is_refused_at_the_count() {
    for (format, make, count_at) in [
        (
            Format::Poscar,
            poscar as fn(usize) -> String,
            Some(Pos { line: 7, col: 1 }),
        ),
        (Format::Xyz, xyz, Some(Pos { line: 1, col: 1 })),
        (Format::PymatgenJson, pymatgen_json, None),
    ] {
        let at = read_structure(format, &make(MAX_SITES));
        assert_eq!(at.map(|s| s.len()), Ok(MAX_SITES), "{format:?}");
        let e = read_structure(format, &make(MAX_SITES + 1)).unwrap_err();
        assert!(
            e.message.contains("100001") && e.message.contains("limit of 100000"),
            "{format:?}: {e}"
        );
        // JSON is read whole by serde before the sites are counted: no count to point at.
        if let Some(p) = count_at {
            assert_eq!(e.pos, Some(p), "{format:?}: {e}");
        }
    }
}
