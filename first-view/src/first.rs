//! The structure the playground shows first (the pool entry named [`NAME`]), as data.

use engine::{Element, Lattice, Site, Structure};

/// The pool entry the playground opens on (the app selects it by this name).
pub const NAME: &str = "Halite, Rock Salt 1×2×3";

/// Its lattice's row vectors (Å).
const LATTICE: [[f64; 3]; 3] = [
    [3.98759434, 0.0, 0.0],
    [3.9875943400000007, 6.906715996854084, 0.0],
    [5.981391510000001, 3.4533579984270424, 9.767571434210256],
];

/// Its sites: element symbol and fractional coordinates.
const SITES: &[(&str, [f64; 3])] = &[
    ("Cl", [0.0, 0.0, 0.0]),
    ("Na", [0.5, 0.25, 0.16666666666666666]),
    ("Cl", [0.0, 0.0, 0.3333333333333333]),
    ("Na", [0.5, 0.25, 0.5]),
    ("Cl", [0.0, 0.0, 0.6666666666666666]),
    ("Na", [0.5, 0.25, 0.8333333333333334]),
    ("Cl", [0.0, 0.5, 0.0]),
    ("Na", [0.5, 0.75, 0.16666666666666666]),
    ("Cl", [0.0, 0.5, 0.3333333333333333]),
    ("Na", [0.5, 0.75, 0.5]),
    ("Cl", [0.0, 0.5, 0.6666666666666666]),
    ("Na", [0.5, 0.75, 0.8333333333333334]),
];

/// The first structure. `None` only if the data above named an unknown element (the test
/// rules that out).
pub fn structure() -> Option<Structure> {
    let sites = SITES
        .iter()
        .enumerate()
        .map(|(i, (symbol, frac))| {
            let element = Element::from_symbol(symbol)?;
            Some(Site::new(element, *frac, format!("{symbol}{i}"), 1.0))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Structure::new(Lattice::from_matrix(LATTICE), sites))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmarks::atomworld::generator::pool::pool;

    /// The data is the pool entry's structure, every coordinate exactly. On a mismatch the
    /// message gives the constants as the pool has them.
    #[test]
    fn is_the_pools_first_structure() {
        let pool = pool();
        let entry = pool
            .iter()
            .find(|e| e.name == NAME)
            .unwrap_or_else(|| panic!("the pool has no entry named {NAME:?}"));
        let want = &entry.structure;
        let got = structure().expect("every symbol is an element");
        let expected_source = format!(
            "const LATTICE: [[f64; 3]; 3] = {:?};\nconst SITES: &[(&str, [f64; 3])] = &[{}];",
            want.lattice.matrix(),
            want.sites
                .iter()
                .map(|s| format!("(\"{}\", {:?})", s.element.symbol(), s.frac))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert_eq!(
            got.lattice.matrix(),
            want.lattice.matrix(),
            "{expected_source}"
        );
        let sites = |s: &Structure| -> Vec<(Element, [f64; 3])> {
            s.sites.iter().map(|x| (x.element, x.frac)).collect()
        };
        assert_eq!(sites(&got), sites(want), "{expected_source}");
    }
}
