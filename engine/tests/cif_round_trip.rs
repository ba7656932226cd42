//! Property test: writing a structure with `write_cif` and reading it back with the
//! pymatgen-compatible reader gives the same structure (up to pymatgen's site order and
//! 8-decimal output), and one more write → read pass changes nothing.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use engine::cif::{parse_cif_like_pymatgen_detailed, write_cif};
use engine::Structure;
use proptest::prelude::*;

mod common;

fn structure() -> impl Strategy<Value = Structure> {
    common::structure_up_to(24)
}

/// Fractions the reader snaps to 1/3 or 2/3.
fn snapped(x: f64, read: f64) -> bool {
    [1.0 / 3.0, 2.0 / 3.0]
        .iter()
        .any(|&t| (x / t - 1.0).abs() <= 1.01e-4 && read == t)
}

proptest! {
    #[test]
    fn write_then_read_round_trips(s in structure()) {
        let text = write_cif(&s);
        let parsed = parse_cif_like_pymatgen_detailed(&text);
        prop_assert!(parsed.is_ok(), "{:?}\n{text}", parsed.err());
        let Ok(p) = parsed else { unreachable!() };
        let back = &p.structure;
        prop_assert_eq!(back.len(), s.len());

        let (l0, l1) = (s.lattice.lengths(), back.lattice.lengths());
        let (a0, a1) = (s.lattice.angles(), back.lattice.angles());
        for k in 0..3 {
            prop_assert!((l0[k] - l1[k]).abs() < 1e-7, "lengths {l0:?} {l1:?}");
            prop_assert!((a0[k] - a1[k]).abs() < 1e-7, "angles {a0:?} {a1:?}");
        }
        for site in &s.sites {
            let found = back.sites.iter().find(|b| b.label == site.label);
            prop_assert!(found.is_some(), "label {} lost", site.label);
            let Some(b) = found else { unreachable!() };
            prop_assert_eq!(b.element, site.element);
            prop_assert_eq!(b.occupancy, 1.0);
            for k in 0..3 {
                let d = b.frac[k] - site.frac[k];
                let close = (d - d.round()).abs() <= 5.1e-9;
                prop_assert!(close || snapped(site.frac[k], b.frac[k]),
                    "{}: {:?} read back as {:?}", site.label, site.frac, b.frac);
            }
        }

        // After one pass the text is a fixed point.
        let again = write_cif(back);
        let reread = parse_cif_like_pymatgen_detailed(&again);
        prop_assert!(reread.is_ok());
        let Ok(reread) = reread else { unreachable!() };
        prop_assert_eq!(write_cif(&reread.structure), again);
    }
}

const SAMPLE: &str = "data_x\n_cell_length_a 4.2(1)\n_cell_length_b 4.2\n_cell_length_c 6\n\
_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 120\n\
loop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n'-y, x-y, z+1/3'\n\
loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
_atom_site_fract_z\n_atom_site_occupancy\nFe1 Fe2+ 0.3333 0.6667 0.25 1\nO1 O 0.1 0.2 0.3 .\n";

proptest! {
    #[test]
    fn reader_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = parse_cif_like_pymatgen_detailed(&text);
    }

    #[test]
    fn reader_never_panics_on_edited_cifs(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 1..12)
    ) {
        let mut chars: Vec<char> = SAMPLE.chars().collect();
        for (at, c, op) in edits {
            let i = at.index(chars.len() + 1);
            match op {
                0 => chars.insert(i, c),
                1 if i < chars.len() => { chars.remove(i); }
                _ if i < chars.len() => chars[i] = c,
                _ => {}
            }
        }
        let text: String = chars.into_iter().collect();
        let _ = parse_cif_like_pymatgen_detailed(&text);
    }
}
