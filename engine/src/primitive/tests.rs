use super::*;
use crate::cif::pymatgen::parse_cif_like_pymatgen;
use crate::element::Element;
use crate::linalg::volume;

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

fn cubic(a: f64, sites: Vec<Site>) -> Structure {
    Structure::new(
        Lattice::from_parameters(a, a, a, 90.0, 90.0, 90.0).unwrap(),
        sites,
    )
}

const FCC: [[f64; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [0.5, 0.5, 0.0],
    [0.5, 0.0, 0.5],
    [0.0, 0.5, 0.5],
];

fn vol(s: &Structure) -> f64 {
    volume(s.lattice.matrix())
}

#[test]
fn fcc_conventional_reduces_to_one_atom() {
    let s = cubic(4.05, FCC.iter().map(|f| site("Al", *f)).collect());
    let p = get_primitive_structure(&s, DEFAULT_TOLERANCE).unwrap();
    assert_eq!(p.len(), 1);
    assert!((vol(&p) - vol(&s) / 4.0).abs() < 1e-9);
    // The fcc primitive cell: three vectors of length a/√2 at 60°.
    let l = p.lattice.lengths();
    assert!(
        l.iter().all(|x| (x - 4.05 / 2f64.sqrt()).abs() < 1e-9),
        "{l:?}"
    );
    let ang = p.lattice.angles();
    assert!(ang.iter().all(|x| (x - 60.0).abs() < 1e-6), "{ang:?}");
}

#[test]
fn rocksalt_conventional_reduces_to_two_atoms() {
    let mut sites: Vec<Site> = FCC.iter().map(|f| site("Na", *f)).collect();
    sites.extend(
        FCC.iter()
            .map(|f| site("Cl", [(f[0] + 0.5) % 1.0, f[1], f[2]])),
    );
    let s = cubic(5.64, sites);
    let p = get_primitive_structure(&s, DEFAULT_TOLERANCE).unwrap();
    assert_eq!(p.len(), 2);
    // Sites come out grouped by element symbol: Cl before Na.
    assert_eq!(p.sites[0].element.symbol(), "Cl");
    assert_eq!(p.sites[1].element.symbol(), "Na");
    assert!((vol(&p) - vol(&s) / 4.0).abs() < 1e-9);
}

#[test]
fn bcc_reduces_to_one_atom() {
    let s = cubic(
        2.87,
        vec![site("Fe", [0.0, 0.0, 0.0]), site("Fe", [0.5, 0.5, 0.5])],
    );
    let p = get_primitive_structure(&s, DEFAULT_TOLERANCE).unwrap();
    assert_eq!(p.len(), 1);
    assert!((vol(&p) - vol(&s) / 2.0).abs() < 1e-9);
}

#[test]
fn slightly_displaced_sites_are_averaged() {
    // Two bcc sites 0.05 Å off the ideal translation still merge (tolerance 0.25 Å).
    let s = cubic(
        2.87,
        vec![site("Fe", [0.0, 0.0, 0.0]), site("Fe", [0.51, 0.5, 0.5])],
    );
    let p = get_primitive_structure(&s, DEFAULT_TOLERANCE).unwrap();
    assert_eq!(p.len(), 1);
    // With a tight tolerance they do not.
    let q = get_primitive_structure(&s, 0.01).unwrap();
    assert_eq!(q.len(), 2);
}

#[test]
fn a_primitive_structure_is_returned_unchanged() {
    let s = cubic(
        3.0,
        vec![site("Cs", [0.0, 0.0, 0.0]), site("Cl", [0.5, 0.5, 0.5])],
    );
    let p = get_primitive_structure(&s, DEFAULT_TOLERANCE).unwrap();
    assert_eq!(p, s);
}

#[test]
fn pool_mineral_supercell_reduces_back() {
    let pool = include_str!("../../../data/structures/minerals.jsonl");
    let mut checked = 0;
    for line in pool.lines().take(40) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = parse_cif_like_pymatgen(v["cif"].as_str().unwrap()).unwrap();
        if s.len() > 12 {
            continue;
        }
        let prim = matcher_reduction(&s).unwrap();
        let sup = s.supercell([2, 1, 2]);
        let back = matcher_reduction(&sup).unwrap();
        assert_eq!(back.len(), prim.len(), "{}", v["mineral"]);
        assert!(
            (vol(&back) - vol(&prim)).abs() < 1e-6 * vol(&prim),
            "{}",
            v["mineral"]
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} minerals checked");
}

#[test]
fn bad_tolerance_and_inputs_are_errors() {
    let s = cubic(3.0, vec![site("Cs", [0.0, 0.0, 0.0])]);
    assert!(matches!(
        get_primitive_structure(&s, 0.0),
        Err(PrimitiveError::Tolerance(_))
    ));
    assert!(get_primitive_structure(&s, f64::NAN).is_err());
    let bad = cubic(3.0, vec![site("Cs", [f64::NAN, 0.0, 0.0])]);
    assert!(get_primitive_structure(&bad, DEFAULT_TOLERANCE).is_err());
    let flat = Structure::new(
        Lattice::from_matrix([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
        vec![site("Cs", [0.0, 0.0, 0.0]), site("Cs", [0.5, 0.0, 0.0])],
    );
    // A singular cell must not panic (an error or an unchanged structure are both fine).
    let _ = matcher_reduction(&flat);
    let empty = cubic(3.0, Vec::new());
    assert_eq!(
        get_primitive_structure(&empty, DEFAULT_TOLERANCE).unwrap(),
        empty
    );
}
