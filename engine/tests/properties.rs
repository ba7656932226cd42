//! Property tests of the crystal core: what must hold for every structure, not just the
//! ones the differential tests sample.
//!
//! - POSCAR, extended XYZ and pymatgen JSON: write → read gives the structure back;
//! - the readers never panic, on arbitrary text or on edited valid files;
//! - distances and neighbour lists do not depend on the cell chosen for the lattice
//!   (Niggli-reduced cell vs the original);
//! - `fit(s, s)` holds with rms 0, and a rigid translation still fits with rms ~0;
//! - a supercell n1×n2×n3 of N sites has n1·n2·n3·N sites and the same formula per cell;
//! - the viewer's bonds are exactly the neighbours within the bonding rule.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use engine::format::{read_structure, write_structure, Format};
use engine::matcher::{fit, get_rms_dist, MatcherOptions};
use engine::reduction::niggli_reduce;
use engine::Structure;
use proptest::prelude::*;

mod common;
use common::structure_up_to;

fn cartesian_error(a: &Structure, b: &Structure, i: usize) -> f64 {
    let (p, q) = (a.cartesian(i), b.cartesian(i));
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn other_formats_round_trip(s in structure_up_to(30)) {
        // Printed precision: POSCAR 16 decimals (fractional), XYZ 8 decimals (Å), JSON exact.
        for (format, tol) in [(Format::Poscar, 1e-12), (Format::Xyz, 1e-7), (Format::PymatgenJson, 0.0)] {
            let text = write_structure(format, &s);
            let back = read_structure(format, &text);
            prop_assert!(back.is_ok(), "{format:?}: {:?}\n{text}", back.err());
            let Ok(back) = back else { unreachable!() };
            prop_assert_eq!(back.len(), s.len());
            for i in 0..s.len() {
                prop_assert_eq!(back.sites[i].element, s.sites[i].element);
                let e = cartesian_error(&back, &s, i);
                prop_assert!(e <= tol, "{format:?} site {i}: {e:e} Å");
            }
        }
    }

    #[test]
    fn readers_never_panic_on_arbitrary_text(text in any::<String>()) {
        for f in Format::ALL {
            let _ = read_structure(f, &text);
        }
        let _ = Format::detect(None, &text);
    }

    #[test]
    fn readers_never_panic_on_edited_files(
        s in structure_up_to(6),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 1..10),
    ) {
        for f in Format::ALL {
            let mut chars: Vec<char> = write_structure(f, &s).chars().collect();
            for (at, c, op) in &edits {
                let i = at.index(chars.len() + 1);
                match op {
                    0 => chars.insert(i, *c),
                    1 if i < chars.len() => { chars.remove(i); }
                    _ if i < chars.len() => chars[i] = *c,
                    _ => {}
                }
            }
            let text: String = chars.into_iter().collect();
            let _ = read_structure(f, &text);
        }
    }

    #[test]
    fn distances_do_not_depend_on_the_cell(s in structure_up_to(8)) {
        let reduced = niggli_reduce(&s.lattice, 1e-5);
        prop_assert!(reduced.is_ok());
        let Ok(reduced) = reduced else { unreachable!() };
        let mut t = s.clone();
        t.lattice = reduced;
        for (i, site) in t.sites.iter_mut().enumerate() {
            site.frac = t.lattice.to_fractional(s.cartesian(i));
        }
        for i in 0..s.len() {
            for j in 0..s.len() {
                let (d0, d1) = (s.distance(i, j), t.distance(i, j));
                prop_assert!((d0 - d1).abs() < 1e-9, "{i}-{j}: {d0} vs {d1}");
            }
        }
        let radius = 1.5 * s.lattice.lengths().into_iter().fold(f64::INFINITY, f64::min);
        let (n0, n1) = (s.neighbours(0, radius), t.neighbours(0, radius));
        // Compare distances away from the cut-off, where rounding could move one across.
        let inside = |v: &[engine::structure::Neighbour]| -> Vec<f64> {
            v.iter().map(|n| n.distance).filter(|d| (d - radius).abs() > 1e-9).collect()
        };
        let (a, b) = (inside(&n0), inside(&n1));
        prop_assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            prop_assert!((x - y).abs() < 1e-9);
        }
    }

    #[test]
    fn supercells_multiply_sites_and_keep_the_formula(
        s in structure_up_to(8), n in [1u32..4, 1u32..4, 1u32..4],
    ) {
        let sup = s.supercell(n);
        let k = (n[0] * n[1] * n[2]) as usize;
        prop_assert_eq!(sup.len(), k * s.len());
        let volume_ratio = sup.lattice.volume() / s.lattice.volume();
        prop_assert!((volume_ratio - k as f64).abs() < 1e-9);
        for ((e0, c0), (e1, c1)) in s.composition().iter().zip(sup.composition()) {
            prop_assert_eq!(*e0, e1);
            prop_assert!((c0 * k as f64 - c1).abs() < 1e-12);
        }
    }
}

proptest! {
    // The default matcher reduces to primitive cells first: fewer, smaller cases.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_structure_fits_itself_and_its_translations(
        s in structure_up_to(7), shift in [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0],
    ) {
        for opts in [MatcherOptions::atomworld(), MatcherOptions::default()] {
            prop_assert_eq!(fit(&s, &s, &opts), Ok(true));
            let r = get_rms_dist(&s, &s, &opts);
            prop_assert!(matches!(&r, Ok(Some(r)) if r.rms < 1e-12 && r.max_dist < 1e-12), "{r:?}");
            let mut moved = s.clone();
            for site in &mut moved.sites {
                site.frac = std::array::from_fn(|k| site.frac[k] + shift[k]);
            }
            prop_assert_eq!(fit(&s, &moved, &opts), Ok(true));
            let r = get_rms_dist(&s, &moved, &opts);
            prop_assert!(matches!(&r, Ok(Some(r)) if r.rms < 1e-8), "{r:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The viewer's cell-list bond search finds exactly the pairs the exact neighbour search
    /// finds within the bonding rule, in any cell.
    #[test]
    fn bonds_are_the_neighbours_within_the_bonding_rule(s in structure_up_to(12)) {
        use engine::bonds::{bonds, BOND_TOLERANCE, MIN_BOND_DISTANCE};
        let r = |i: usize| s.sites[i].element.covalent_radius();
        let max_r = (0..s.len()).map(r).fold(0.0, f64::max);
        let mut expected = Vec::new();
        for i in 0..s.len() {
            for n in s.neighbours(i, 2.0 * max_r + BOND_TOLERANCE) {
                if (n.index, n.image) > (i, [0, 0, 0])
                    && n.distance > MIN_BOND_DISTANCE
                    && n.distance <= r(i) + r(n.index) + BOND_TOLERANCE
                {
                    expected.push((i, n.index, n.image));
                }
            }
        }
        expected.sort();
        let found = bonds(&s);
        let got: Vec<_> = found.iter().map(|b| (b.from, b.to, b.image)).collect();
        prop_assert_eq!(got, expected);
    }
}
