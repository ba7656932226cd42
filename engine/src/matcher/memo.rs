//! pymatgen's memo of reduced structures, as it acts within one call.
//!
//! Why by hand: this reproduces a behaviour of the reference, not an algorithm. pymatgen
//! caches `StructureMatcher._get_reduced_istructure` (an `lru_cache`) on a key that compares
//! equal for structures that agree to 1e-5 Å, not to the bit. Within one `fit` or
//! `get_rms_dist`, struct1 is reduced first; when struct2 then looks up a key equal to
//! struct1's, it gets struct1's reduced structure and the two match exactly (RMS 0), however
//! far below 1e-5 Å they really differ. A prediction that re-prints its target's
//! coordinates with fewer decimals is such a case. The lookup finds struct1's entry when:
//!
//! - the hashes agree: the same species in the same order, and fractional coordinates equal
//!   after `np.round(·, 3)` to the bit (so `-0.0` and `0.0` differ);
//! - `IStructure.__eq__` holds: lattice matrices `np.allclose` (rtol 1e-5, atol 1e-8) both
//!   ways (the structures compare them relative to struct2's matrix, each site comparison
//!   of the set test relative to struct1's), and every site of struct1 has an equal site in
//!   struct2: same species and occupancy, Cartesian positions `np.allclose` with atol
//!   1e-5 Å;
//! - `SiteOrderedIStructure.__eq__` holds: the sites are equal in order as well.
//!
//! Species and occupancies must agree to the bit and in order here; pymatgen would also
//! accept two partial occupancies within 1e-8 that print alike, or a mixed site's species
//! listed in another order (cases where skipping the memo costs only the last bits). Of the
//! site properties only magnetic moments are carried; they must be equal too.
//!
//! The memo lives for the whole Python process, so across calls the reference's answer also
//! depends on the structures it met before; our answers are pymatgen's for the pair alone
//! (the differential oracle clears the memo before each pair, to compare the same thing).

use crate::linalg::FusedMatrix;
use crate::structure::{Site, Structure};

/// `Site.position_atol`: the absolute tolerance of site equality (Å).
const POSITION_ATOL: f64 = 1e-5;
/// `np.allclose`'s default relative tolerance.
const RTOL: f64 = 1e-5;
/// `np.allclose`'s default absolute tolerance (for lattice matrices).
const ATOL: f64 = 1e-8;

/// Whether pymatgen, having just reduced `s1`, hands `s2` the same reduced structure.
pub(super) fn reuses_reduction(s1: &Structure, s2: &Structure) -> bool {
    if s1.sites.len() != s2.sites.len() {
        return false;
    }
    let same_species = |a: &Site, b: &Site| {
        a.magmom == b.magmom
            && a.occupants().count() == b.occupants().count()
            && a.occupants().zip(b.occupants()).all(|(x, y)| {
                x.element == y.element
                    && x.occupancy.to_bits() == y.occupancy.to_bits()
                    && x.oxidation.map(f64::to_bits) == y.oxidation.map(f64::to_bits)
            })
    };
    let rounded_bits = |s: &Site| s.frac.map(|x| round3(x).to_bits());
    let hashes_agree = s1
        .sites
        .iter()
        .zip(&s2.sites)
        .all(|(a, b)| same_species(a, b) && rounded_bits(a) == rounded_bits(b));
    if !hashes_agree {
        return false;
    }
    let (m1, m2) = (s1.lattice.matrix(), s2.lattice.matrix());
    let lattices_close = m1
        .iter()
        .flatten()
        .zip(m2.iter().flatten())
        .all(|(&a, &b)| close(a, b, ATOL) && close(b, a, ATOL));
    if !lattices_close {
        return false;
    }
    // Site positions as pymatgen computes them (`np.dot(frac, matrix)`).
    let cart = |s: &Structure, m| {
        let fused = FusedMatrix::new(m);
        s.sites
            .iter()
            .map(|x| fused.apply(x.frac))
            .collect::<Vec<_>>()
    };
    let (c1, c2) = (cart(s1, *m1), cart(s2, *m2));
    let equal =
        |a: &[f64; 3], b: &[f64; 3]| a.iter().zip(b).all(|(&x, &y)| close(x, y, POSITION_ATOL));
    // In order (SiteOrderedIStructure) ...
    let in_order = s1
        .sites
        .iter()
        .zip(&c1)
        .zip(s2.sites.iter().zip(&c2))
        .all(|((a, ca), (b, cb))| same_species(a, b) && equal(ca, cb));
    // ... and as sets (IStructure: `site in other`, which compares struct2's site to
    // struct1's, so the relative tolerance is taken on struct1's position).
    in_order
        && s1.sites.iter().zip(&c1).all(|(a, ca)| {
            s2.sites
                .iter()
                .zip(&c2)
                .any(|(b, cb)| same_species(a, b) && equal(cb, ca))
        })
}

/// `np.isclose(a, b)` with absolute tolerance `atol` (relative to `b`).
fn close(a: f64, b: f64, atol: f64) -> bool {
    (a - b).abs() <= atol + RTOL * b.abs()
}

/// `np.round(x, 3)`: numpy multiplies by 10³, rounds half to even and divides back.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round_ties_even() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::lattice::Lattice;

    fn structure(frac: &[[f64; 3]], a: f64) -> Structure {
        let lattice = Lattice::from_parameters(a, a, a, 90.0, 90.0, 90.0).unwrap();
        let element = Element::from_symbol("Na").unwrap();
        let site = |f: &[f64; 3]| Site {
            element,
            frac: *f,
            label: "Na".into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        Structure::new(lattice, frac.iter().map(site).collect())
    }

    #[test]
    fn structures_equal_to_a_micrometre_share_the_reduction() {
        let s1 = structure(&[[0.1, 0.2, 0.3], [0.6, 0.7, 0.8]], 4.0);
        // 1e-6 fractional on a 4 Å cell: 4e-6 Å, below pymatgen's 1e-5 Å.
        let s2 = structure(&[[0.100001, 0.2, 0.3], [0.6, 0.7, 0.8]], 4.0);
        assert!(reuses_reduction(&s1, &s2));
        // 1e-5 fractional: 4e-5 Å apart, not equal.
        let s3 = structure(&[[0.10001, 0.2, 0.3], [0.6, 0.7, 0.8]], 4.0);
        assert!(!reuses_reduction(&s1, &s3));
        // Equal as sets but not in order.
        let s4 = structure(&[[0.6, 0.7, 0.8], [0.1, 0.2, 0.3]], 4.0);
        assert!(!reuses_reduction(&s1, &s4));
        // A lattice 1e-4 longer (relative): not allclose.
        let s5 = structure(&[[0.1, 0.2, 0.3], [0.6, 0.7, 0.8]], 4.0004);
        assert!(!reuses_reduction(&s1, &s5));
        // allclose one way only (the tolerance is relative to the second argument): pymatgen
        // compares the lattices both ways and misses (measured with pymatgen 2026.10.24 on
        // these cells: no cache hit).
        let s6 = structure(&[[0.0, 0.0, 0.0], [0.05, 0.5, 0.5]], 10.0);
        let s7 = structure(&[[0.0, 0.0, 0.0], [0.05, 0.5, 0.5]], 10.0 + 1.000105e-4);
        assert!(close(10.0, 10.0 + 1.000105e-4, ATOL) && !close(10.0 + 1.000105e-4, 10.0, ATOL));
        assert!(!reuses_reduction(&s6, &s7));
    }

    #[test]
    fn the_hash_rounds_to_three_decimals() {
        // 2e-7 Å apart, but on both sides of a rounding boundary of the hash: pymatgen
        // never compares them.
        let s1 = structure(&[[0.1005 - 2e-8, 0.2, 0.3]], 10.0);
        let s2 = structure(&[[0.1005 + 2e-8, 0.2, 0.3]], 10.0);
        assert!(!reuses_reduction(&s1, &s2));
        // -0.0 and 0.0 hash differently.
        let s1 = structure(&[[-1e-9, 0.2, 0.3]], 10.0);
        let s2 = structure(&[[1e-9, 0.2, 0.3]], 10.0);
        assert!(!reuses_reduction(&s1, &s2));
        // numpy's np.round(0.1235, 3) is 0.124 (0.1235 · 1000 rounds to 123.5, a tie to
        // even), and np.round(0.0125, 3) is 0.012.
        assert_eq!(round3(0.1235), 0.124);
        assert_eq!(round3(0.0125), 0.012);
        assert_eq!(round3(-0.0004).to_bits(), (-0.0f64).to_bits());
    }
}
