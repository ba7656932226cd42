use super::*;
use crate::element::Element;
use crate::lattice::Lattice;
use crate::structure::Site;

fn site(sym: &str, frac: [f64; 3]) -> Site {
    Site {
        element: Element::from_symbol(sym).unwrap(),
        frac,
        label: sym.into(),
        occupancy: 1.0,
        oxidation: None,
        others: Vec::new(),
        magmom: None,
    }
}

/// Conventional rock-salt NaCl (8 sites).
fn nacl(a: f64) -> Structure {
    let l = Lattice::from_parameters(a, a, a, 90.0, 90.0, 90.0).unwrap();
    let mut sites = Vec::new();
    for f in [
        [0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.0, 0.5],
        [0.0, 0.5, 0.5],
    ] {
        sites.push(site("Na", f));
    }
    for f in [
        [0.5, 0.0, 0.0],
        [0.0, 0.5, 0.0],
        [0.0, 0.0, 0.5],
        [0.5, 0.5, 0.5],
    ] {
        sites.push(site("Cl", f));
    }
    Structure::new(l, sites)
}

/// A low-symmetry triclinic structure.
fn triclinic() -> Structure {
    let l = Lattice::from_parameters(5.1, 6.3, 7.7, 71.0, 83.0, 101.0).unwrap();
    Structure::new(
        l,
        vec![
            site("Si", [0.11, 0.23, 0.37]),
            site("O", [0.52, 0.18, 0.91]),
            site("O", [0.77, 0.64, 0.05]),
            site("Mg", [0.31, 0.83, 0.62]),
            site("O", [0.05, 0.47, 0.71]),
        ],
    )
}

fn opts() -> MatcherOptions {
    MatcherOptions::atomworld()
}

#[test]
fn identical_structures_fit_with_zero_rms() {
    for s in [nacl(5.64), triclinic()] {
        assert!(fit(&s, &s, &opts()).unwrap());
        let r = get_rms_dist(&s, &s, &opts()).unwrap().unwrap();
        assert!(r.rms < 1e-10 && r.max_dist < 1e-10, "{r:?}");
        assert_eq!(r.mapping.len(), s.len());
    }
}

#[test]
fn translated_copy_fits_with_zero_rms() {
    let s = triclinic();
    let mut t = s.clone();
    for x in &mut t.sites {
        x.frac = [x.frac[0] + 0.137, x.frac[1] - 0.41, x.frac[2] + 2.25];
    }
    assert!(fit(&s, &t, &opts()).unwrap());
    let r = get_rms_dist(&s, &t, &opts()).unwrap().unwrap();
    assert!(r.rms < 1e-9, "{r:?}");
    assert_eq!(r.mapping, vec![0, 1, 2, 3, 4]);
}

#[test]
fn displaced_atom_gives_the_expected_rms() {
    let a = 5.64;
    let s = nacl(a);
    let mut t = s.clone();
    let d = 0.2; // Å along x
    t.sites[3].frac[0] += d / a;
    let n = s.len() as f64;
    let free_length = libm::cbrt(a * a * a / n);
    let rms = d * (n - 1.0).sqrt() / n / free_length;
    let max = d * (1.0 - 1.0 / n) / free_length;
    let r = get_rms_dist(&s, &t, &opts()).unwrap().unwrap();
    assert!((r.rms - rms).abs() < 1e-9, "{} vs {rms}", r.rms);
    assert!((r.max_dist - max).abs() < 1e-9, "{} vs {max}", r.max_dist);
    assert!((r.max_dist_angstrom - d * (1.0 - 1.0 / n)).abs() < 1e-9);
    assert!(fit(&s, &t, &opts()).unwrap());
}

#[test]
fn different_compositions_do_not_fit() {
    let s = nacl(5.64);
    let mut t = s.clone();
    t.sites[0].element = Element::from_symbol("K").unwrap();
    assert!(!fit(&s, &t, &opts()).unwrap());
    assert!(get_rms_dist(&s, &t, &opts()).unwrap().is_none());
    let mut fewer = s.clone();
    fewer.sites.pop();
    assert!(!fit(&s, &fewer, &opts()).unwrap());
    assert!(get_rms_dist(&s, &fewer, &opts()).unwrap().is_none());
}

#[test]
fn permuted_sites_fit_and_the_mapping_follows_the_permutation() {
    let s = triclinic();
    let order = [3, 0, 4, 1, 2];
    let t = Structure::new(
        s.lattice.clone(),
        order.iter().map(|&i| s.sites[i].clone()).collect(),
    );
    assert!(fit(&s, &t, &opts()).unwrap());
    let r = get_rms_dist(&s, &t, &opts()).unwrap().unwrap();
    assert!(r.rms < 1e-9);
    for (i1, &i2) in r.mapping.iter().enumerate() {
        assert_eq!(order[i2], i1);
    }
}

#[test]
fn rescaled_lattice_fits_when_scaling() {
    let s = triclinic();
    let m = s.lattice.matrix();
    let t = Structure::new(
        Lattice::from_matrix(m.map(|r| r.map(|x| x * 1.15))),
        s.sites.clone(),
    );
    assert!(fit(&s, &t, &opts()).unwrap());
    let r = get_rms_dist(&s, &t, &opts()).unwrap().unwrap();
    assert!(r.rms < 1e-9, "{r:?}");
}

#[test]
fn far_displacement_does_not_fit() {
    let s = triclinic();
    let mut t = s.clone();
    t.sites[0].frac = [0.6, 0.7, 0.9];
    assert!(!fit(&s, &t, &opts()).unwrap());
}

#[test]
fn conventional_and_primitive_cells_match_with_primitive_cell() {
    let conv = nacl(5.64);
    let prim = crate::primitive::matcher_reduction(&conv).unwrap();
    assert_eq!(prim.len(), 2);
    // Without primitive reduction the site counts differ.
    assert!(!fit(&conv, &prim, &opts()).unwrap());
    let defaults = MatcherOptions::default();
    assert!(fit(&conv, &prim, &defaults).unwrap());
    let r = get_rms_dist(&conv, &prim, &defaults).unwrap().unwrap();
    assert!(r.rms < 1e-9, "{r:?}");
    assert!(r.mapping.is_empty());
}

#[test]
fn supercell_matches_its_cell_with_attempt_supercell() {
    // A 2×1×1 repeat with one displaced atom: primitive reduction cannot undo it, so only
    // the supercell search can match it to the unit cell.
    let cell = triclinic();
    let mut sup = cell.supercell([2, 1, 1]);
    sup.sites[0].frac[0] += 0.05;
    let plain = MatcherOptions {
        stol: 0.5,
        ..MatcherOptions::default()
    };
    assert!(!fit(&cell, &sup, &plain).unwrap());
    let o = MatcherOptions::cif_gen();
    assert!(fit(&cell, &sup, &o).unwrap());
    assert!(fit(&sup, &cell, &o).unwrap());
    let r = get_rms_dist(&cell, &sup, &o).unwrap().unwrap();
    assert!(r.rms > 0.0 && r.rms < 0.1, "{r:?}");
}

#[test]
fn subset_matches_with_allow_subset() {
    let s = triclinic();
    let mut t = s.clone();
    t.sites.pop();
    let o = MatcherOptions {
        allow_subset: true,
        ..opts()
    };
    assert!(!fit(&s, &t, &opts()).unwrap());
    assert!(fit(&s, &t, &o).unwrap());
    assert!(fit(&t, &s, &o).unwrap());
}

#[test]
fn degenerate_input_is_an_error_not_a_panic() {
    let s = nacl(5.0);
    let flat = Structure::new(
        Lattice::from_matrix([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [2.0, 2.0, 0.0]]),
        s.sites.clone(),
    );
    assert!(fit(&s, &flat, &opts()).is_err());
    assert!(get_rms_dist(&flat, &s, &opts()).is_err());
    let mut nan = s.clone();
    nan.sites[0].frac[1] = f64::NAN;
    assert!(fit(&s, &nan, &opts()).is_err());
    let empty = Structure::new(s.lattice.clone(), vec![]);
    assert!(get_rms_dist(&empty, &empty, &opts()).is_err());
}

#[cfg(not(target_arch = "wasm32"))]
mod no_panic {
    use super::*;
    use proptest::prelude::*;

    fn arb_structure() -> impl Strategy<Value = Structure> {
        (
            proptest::array::uniform3(proptest::array::uniform3(-6.0f64..6.0)),
            proptest::collection::vec(
                (proptest::bool::ANY, proptest::array::uniform3(-1.0f64..2.0)),
                0..5,
            ),
        )
            .prop_map(|(m, sites)| {
                Structure::new(
                    Lattice::from_matrix(m),
                    sites
                        .into_iter()
                        .map(|(b, f)| site(if b { "O" } else { "Si" }, f))
                        .collect(),
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn arbitrary_input_never_panics(s1 in arb_structure(), s2 in arb_structure()) {
            let _ = fit(&s1, &s2, &opts());
            let _ = get_rms_dist(&s1, &s2, &opts());
            let _ = get_rms_dist(&s1, &s1, &opts());
        }
    }
}

/// A structure from bit patterns of its lattice rows and fractional coordinates.
fn from_bits(species: &str, matrix: [[u64; 3]; 3], frac: &[[u64; 3]]) -> Structure {
    let m = matrix.map(|r| r.map(f64::from_bits));
    let sites = frac.iter().map(|f| site(species, f.map(f64::from_bits)));
    Structure::new(Lattice::from_matrix(m), sites.collect())
}

#[test]
fn a_tie_in_a_symmetric_copy_of_the_best_match_is_settled_as_pymatgen_does() {
    // Gamma nitrogen (P4_2/mnm), one atom displaced by 1.9 Å. The best match has an equally cheap alternative assignment; the
    // search's representative mapping keeps one (max_dist 0.4751), and pymatgen, scoring a
    // symmetric mapping the search folds, keeps the other with an RMS 2 ulps lower.
    // Expected values: pymatgen 2026.10.24's get_rms_dist on these exact bits.
    let lattice = [
        [4616092790662769934, 0, 4373405992755202400],
        [
            4379448432936593502,
            4616092790662769934,
            4373405992755202400,
        ],
        [0, 0, 4617438241051446870],
    ];
    let s1 = from_bits(
        "N",
        lattice,
        &[
            [4591726064878881866, 4591726064878881866, 0],
            [
                4603561524699611529,
                4600913408118717678,
                4602678819172646912,
            ],
            [
                4600913408118717678,
                4603561524699611529,
                4602678819172646912,
            ],
            [4606299713273052791, 4606299713273052791, 0],
        ],
    );
    let s2 = from_bits(
        "N",
        lattice,
        &[
            [
                4599375974012026578,
                13824126501186856427,
                4593589285085248556,
            ],
            [
                4603561524699611528,
                4600913408118717677,
                4602678819172646912,
            ],
            [
                4600913408118717677,
                4603561524699611528,
                4602678819172646912,
            ],
            [
                4606299713273052790,
                4606299713273052790,
                4118711579921807292,
            ],
        ],
    );
    let want = (0.3236020480584809, 0.41105988215905787);
    for fold in [true, false] {
        let o = MatcherOptions {
            fold_symmetric_mappings: fold,
            ..opts()
        };
        assert!(fit(&s1, &s2, &o).unwrap());
        let r = get_rms_dist(&s1, &s2, &o).unwrap().unwrap();
        assert_eq!((r.rms, r.max_dist), want, "fold_symmetric_mappings {fold}");
    }
}

#[test]
fn a_copy_equal_to_a_hundred_thousandth_of_an_angstrom_matches_exactly() {
    // pymatgen reduces struct1, then finds struct2 equal to it in its memo (sites within
    // 1e-5 Å): the two get one reduced structure and match with the RMS of s against itself.
    let s = triclinic();
    // One site moved by 1e-7 fractional (under 1e-6 Å): without the memo, an RMS near 1e-7.
    let mut reprinted = s.clone();
    reprinted.sites[0].frac[0] += 1e-7;
    let own = get_rms_dist(&s, &s, &opts()).unwrap().unwrap();
    let r = get_rms_dist(&s, &reprinted, &opts()).unwrap().unwrap();
    assert_eq!((r.rms, r.max_dist), (own.rms, own.max_dist));
    // Moved by 1e-5 fractional (about 5e-5 Å) it is beyond the memo's tolerance.
    reprinted.sites[0].frac[0] += 1e-5;
    let r = get_rms_dist(&s, &reprinted, &opts()).unwrap().unwrap();
    assert!(r.rms > 1e-7, "{}", r.rms);
}

/// The bounds that skip candidates (per candidate, and per lattice mapping) never change
/// the smallest RMS, on lattices with many mappings of which few are symmetries of the
/// sites: the bounds dismiss most mappings, and must never dismiss the best one.
#[cfg(not(target_arch = "wasm32"))]
mod bounds_keep_the_answer {
    use super::*;
    use proptest::array::uniform3;
    use proptest::prelude::*;

    /// Sites of three elements on a cubic, tetragonal or hexagonal lattice, and a copy
    /// with every site moved (up to `shake` of a cell along each axis) and listed backwards.
    fn arb_pair() -> impl Strategy<Value = (Structure, Structure)> {
        let sites = (0usize..3, uniform3(0.0f64..1.0), uniform3(-1.0f64..1.0));
        (
            0usize..3,
            proptest::collection::vec(sites, 6..17),
            0.0005f64..0.02,
        )
            .prop_map(|(shape, sites, shake)| {
                let lattice = match shape {
                    0 => Lattice::from_parameters(5.0, 5.0, 5.0, 90.0, 90.0, 90.0),
                    1 => Lattice::from_parameters(4.2, 4.2, 6.1, 90.0, 90.0, 90.0),
                    _ => Lattice::from_parameters(3.9, 3.9, 6.4, 90.0, 90.0, 120.0),
                };
                let lattice = lattice.expect("valid parameters");
                let names = ["Na", "Cl", "K"];
                let s1 = sites.iter().map(|(e, f, _)| site(names[*e], *f)).collect();
                let s2 = sites
                    .iter()
                    .rev()
                    .map(|(e, f, d)| site(names[*e], std::array::from_fn(|k| f[k] + shake * d[k])))
                    .collect();
                (
                    Structure::new(lattice.clone(), s1),
                    Structure::new(lattice, s2),
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn the_smallest_rms_is_the_one_without_bounds((s1, s2) in arb_pair()) {
            for fold in [true, false] {
                let o = MatcherOptions { fold_symmetric_mappings: fold, ..opts() };
                let bits = |r: Option<RmsDist>| {
                    r.map(|g| (g.rms.to_bits(), g.max_dist.to_bits(), g.mapping))
                };
                search::UNCAPPED_AGAIN.with(|n| n.set(0));
                let bounded = get_rms_dist(&s1, &s2, &o).map(bits);
                let fitted = rms_dist_if_fit(&s1, &s2, &o).map(bits);
                // Without their cap the searches would find the answer even past a wrong
                // bound: they must not have needed it.
                prop_assert_eq!(search::UNCAPPED_AGAIN.with(|n| n.get()), 0);
                let all = get_rms_dist_unbounded(&s1, &s2, &o).map(bits);
                prop_assert_eq!(&bounded, &all, "fold {}", fold);
                prop_assert_eq!(fitted, all, "fold {}", fold);
            }
        }
    }
}
