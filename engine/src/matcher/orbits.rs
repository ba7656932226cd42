//! Lattice mappings that a point symmetry of struct1 makes redundant.
//!
//! Why by hand: this is specific to pymatgen's search. `get_rms_dist` tries every lattice
//! mapping `S` (a basis `S · L` of struct1's lattice close to struct2's) and, for each, one
//! translation per struct1 site of the rarest element. Let `f ↦ f·W + τ` be a symmetry
//! operation of struct1 (integer `W` in struct1's reduced basis, preserving the metric, every
//! site sent onto a site of its element by a permutation `π`). Then the mapping `S' = S · W⁻¹`
//! has the same lengths and angles as `S`, struct1's fractional coordinates in the basis `S'`
//! are those in `S` permuted by `π` and shifted by a constant, and its candidate translations
//! are those of `S` under `π`: the same point sets, compared on the same average lattice.
//!
//! With `attempt_supercell`, `S` has determinant `fu` and struct1 is expanded into the cell
//! `S · L`: each site with its copies `f + n` for integer `n`. Those copies in the basis
//! `S · W⁻¹` are the copies in the basis `S` shifted by a constant (`W` maps integer vectors
//! onto integer vectors), and the reference keeps one translation per struct1 site, not per
//! copy, since the copies are struct1's own translations apart: the argument holds for every
//! determinant, with `W = S⁻¹ · S'` integer and unimodular.
//!
//! One more condition makes the distance tables equal: the reference measures distances in
//! the LLL basis of the average lattice, and its per-axis tolerance box is not invariant
//! under the symmetry. Where the lattice has equally short vectors (a bcc primitive cell has
//! four), the last printed digit of the cell decides which basis LLL picks, and with it which
//! pairs are allowed, and two symmetry-related mappings of one structure (alpha-Mn, for
//! one) can give clearly different RMS values. So a mapping is only folded into a
//! representative whose average lattice agrees to `AVERAGE_TOL` and whose LLL basis is the
//! same integer combination; then every table of `S'` is a table of `S` with its columns
//! permuted, and has the same smallest sum of squares. Trying one mapping of each orbit
//! divides the work by up to the order of the point group (48 for a cubic structure).
//!
//! As for [`super::periodicity`], equal means equal up to the rounding of a CIF's printed
//! decimals (`SELF_TOL`), and where equal-cost assignments tie, or two periodic images of a
//! pair are equally short, the reported RMS after the mean shift and the largest distance may
//! be another of the tied values: the copy of a table holds its columns, and its images, in
//! another order, and the reference takes the first of equals. Looking for the smallest RMS
//! (`get_rms_dist`) the search tries the first mapping of each orbit in the reference's
//! order, so an early exit on a near-zero RMS happens on an equivalent candidate; when the
//! best candidate has a tie, the other mappings of its orbit are searched near its RMS and
//! the reference's pick is kept (`Search::settle_orbit_tie`). A tie in another candidate is
//! not re-checked: rarely, for a pair neither side fits, the smallest RMS lies in a copy
//! whose images broke the tie otherwise. Looking for a fit, an orbit's other mappings are skipped only when
//! no candidate of its representative was ambiguous: every alternative a tie allows (pairs
//! within 1e-5 Å² of the optimum on a cycle of the assignment's reduced costs, nearly equal
//! images) provably keeps its largest distance above stol: without that guard a copy's tie
//! can decide a fit, with it the fit is the full search's, and most orbits are still
//! folded. Not re-checked: the subset test and
//! the tolerance box at their very boundaries, where the rounding of a symmetric copy could
//! admit a pair the representative's table left out.

use super::periodicity::Places;
use crate::linalg::{adjugate_i64, det_i64, small_entries, vec_mat, Mat3, Vec3};
use crate::numeric::max_with;
use crate::species::Kind;

/// Relative tolerance on the metric `W G Wᵀ = G` (the lattice is read from 8 printed
/// decimals; an operation that is not an isometry to far better than that is not one).
const METRIC_TOL: f64 = 1e-9;

/// Relative agreement of two average lattices (entry by entry, against the largest entry)
/// for their mappings to share an orbit: RMS values then agree to about this much.
const AVERAGE_TOL: f64 = 1e-9;

/// Integer 3×3 matrix.
type IMat = [[i64; 3]; 3];

/// Point operations of struct1 already tested, with the answer: the same ones come back for
/// every pair of mappings (a cubic lattice has 48), and for both searches of a pair (a fit,
/// then the smallest RMS), which share them.
pub type Symmetries = Vec<(IMat, bool)>;

/// The representatives chosen so far and what is needed to test a new mapping.
pub struct MappingOrbits<'a> {
    frac: &'a [Vec3],
    elements: &'a [Kind],
    places: Places<'a>,
    gram: Mat3,
    scale: f64,
    anchor: usize,
    representatives: Vec<Representative>,
    tested: &'a mut Symmetries,
}

/// Where a mapping falls among the orbits met so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orbit {
    /// It gives the tables of representative `k`.
    Of(usize),
    /// It is representative `k`, the first of its orbit.
    New(usize),
    /// A singular mapping: in no orbit.
    Alone,
}

/// A mapping tried in full, with the average lattice and LLL basis its tables used.
struct Representative {
    scale: IMat,
    average: Mat3,
    lll: IMat,
}

impl<'a> MappingOrbits<'a> {
    /// For struct1 with reduced lattice rows `lattice`, fractional coordinates `frac` and
    /// `elements`; `anchor` is a site of its rarest element (fewest translations to try);
    /// `tested` holds the point operations already tested on that struct1.
    pub fn new(
        lattice: &Mat3,
        frac: &'a [Vec3],
        elements: &'a [Kind],
        anchor: usize,
        tested: &'a mut Symmetries,
    ) -> Self {
        let gram: Mat3 = std::array::from_fn(|i| {
            std::array::from_fn(|j| (0..3).map(|k| lattice[i][k] * lattice[j][k]).sum())
        });
        let scale = gram
            .iter()
            .flatten()
            .fold(0.0f64, |m, x| max_with(m, x.abs()));
        Self {
            frac,
            elements,
            places: Places::new(frac, elements),
            gram,
            scale,
            anchor,
            representatives: Vec::new(),
            tested,
        }
    }

    /// Whether the mapping with integer matrix `scale` (any non-zero determinant), average lattice
    /// `average` and LLL basis `lll` (as integer rows over `average`) gives the tables of a
    /// representative seen before; if not, it becomes a representative. Call in the search
    /// order.
    #[cfg(test)]
    pub fn is_redundant(&mut self, scale: &IMat, average: &Mat3, lll: &IMat) -> bool {
        matches!(self.classify(scale, average, lll), Orbit::Of(_))
    }

    /// [`MappingOrbits::is_redundant`], telling which representative.
    pub fn classify(&mut self, scale: &IMat, average: &Mat3, lll: &IMat) -> Orbit {
        if det_i64(scale) == 0 {
            return Orbit::Alone;
        }
        for k in 0..self.representatives.len() {
            let rep = &self.representatives[k];
            if rep.lll != *lll || !same_lattice(&rep.average, average) {
                continue;
            }
            let Some(w) = quotient(scale, &rep.scale) else {
                continue;
            };
            if self.is_symmetry_cached(&w) {
                return Orbit::Of(k);
            }
        }
        self.representatives.push(Representative {
            scale: *scale,
            average: *average,
            lll: *lll,
        });
        Orbit::New(self.representatives.len() - 1)
    }

    fn is_symmetry_cached(&mut self, w: &IMat) -> bool {
        if let Some(&(_, known)) = self.tested.iter().find(|(x, _)| x == w) {
            return known;
        }
        let answer = self.is_symmetry(w);
        self.tested.push((*w, answer));
        answer
    }

    /// Whether `f ↦ f·W + τ` is a symmetry of struct1 for some translation `τ`.
    fn is_symmetry(&self, w: &IMat) -> bool {
        if !self.preserves_metric(w) {
            return false;
        }
        let wf: Mat3 = w.map(|r| r.map(|x| x as f64));
        let Some(&el) = self.elements.get(self.anchor) else {
            return false;
        };
        let moved: Vec<Vec3> = self.frac.iter().map(|f| vec_mat(*f, &wf)).collect();
        let anchor = moved[self.anchor];
        self.frac
            .iter()
            .zip(self.elements)
            .filter(|(_, &e)| e == el)
            .any(|(fk, _)| {
                let tau: Vec3 = std::array::from_fn(|a| fk[a] - anchor[a]);
                let image = |i: usize| -> Vec3 { std::array::from_fn(|a| moved[i][a] + tau[a]) };
                self.places.maps_onto_itself(image, self.anchor + 1)
            })
    }

    fn preserves_metric(&self, w: &IMat) -> bool {
        let wf: Mat3 = w.map(|r| r.map(|x| x as f64));
        (0..3).all(|i| {
            (0..3).all(|j| {
                let mut x = 0.0;
                for k in 0..3 {
                    for l in 0..3 {
                        x += wf[i][k] * self.gram[k][l] * wf[j][l];
                    }
                }
                (x - self.gram[i][j]).abs() <= METRIC_TOL * self.scale
            })
        })
    }
}

/// Whether two lattices agree to `AVERAGE_TOL`.
fn same_lattice(a: &Mat3, b: &Mat3) -> bool {
    let scale = a.iter().flatten().fold(0.0f64, |m, x| max_with(m, x.abs()));
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .all(|(x, y)| (x - y).abs() <= AVERAGE_TOL * scale)
}

/// `W = S⁻¹ · R` when it is an integer matrix and `S`, `R` have the same |determinant| (so
/// that `R = S · W` with `W` unimodular: the two mappings are a change of struct1's basis
/// apart), else `None`.
fn quotient(s: &IMat, r: &IMat) -> Option<IMat> {
    let d = det_i64(s);
    if d == 0 || det_i64(r).unsigned_abs() != d.unsigned_abs() {
        return None;
    }
    let p = imul(&adjugate_i64(s), r);
    if p.iter().flatten().any(|x| x % d != 0) {
        return None;
    }
    Some(p.map(|row| row.map(|x| x / d)))
}

/// Product of integer matrices (saturating; entries here are small).
fn imul(a: &IMat, b: &IMat) -> IMat {
    if small_entries(a) && small_entries(b) {
        // Exact in plain 64-bit arithmetic (see `small_entries`).
        return std::array::from_fn(|i| {
            std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum())
        });
    }
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            (0..3).fold(0i64, |s, k| {
                s.saturating_add(a[i][k].saturating_mul(b[k][j]))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;

    #[test]
    fn unimodular_inverse_inverts() {
        let m = [[2, 1, 0], [1, 1, 0], [0, 3, -1]];
        let inv = crate::linalg::unimodular_inverse(&m).unwrap();
        assert_eq!(imul(&m, &inv), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
        assert!(crate::linalg::unimodular_inverse(&[[2, 0, 0], [0, 1, 0], [0, 0, 1]]).is_none());
    }

    #[test]
    fn supercell_mappings_a_basis_change_apart_have_an_integer_quotient() {
        // A 2×2×1 supercell matrix and the same cell after swapping struct1's a and b.
        let s = [[2, 0, 0], [0, 2, 0], [0, 0, 1]];
        let w = [[0, 1, 0], [1, 0, 0], [0, 0, 1]];
        let r = imul(&s, &w);
        assert_eq!(quotient(&s, &r), Some(w));
        // Not a basis change: another supercell of the same size, or another size.
        assert_eq!(quotient(&s, &[[4, 0, 0], [0, 1, 0], [0, 0, 1]]), None);
        assert_eq!(quotient(&s, &[[2, 0, 0], [0, 1, 0], [0, 0, 1]]), None);
        assert_eq!(quotient(&[[0; 3]; 3], &s), None);
    }

    /// CsCl: cubic, point group m-3m; every axis permutation is a symmetry.
    fn cscl() -> (Mat3, Vec<Vec3>, Vec<Kind>) {
        let el = |s: &str| Element::from_symbol(s).unwrap().z();
        let lattice = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]];
        (
            lattice,
            vec![[0.0; 3], [0.5, 0.5, 0.5]],
            vec![el("Cs"), el("Cl")],
        )
    }

    #[test]
    fn supercell_mappings_fold_by_struct1s_symmetry() {
        let (lattice, frac, elements) = cscl();
        let mut tested = Symmetries::new();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        let id = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
        let avg = [[8.0, 0.0, 0.0], [0.0, 8.0, 0.0], [0.0, 0.0, 4.0]];
        let s = [[2, 0, 0], [0, 2, 0], [0, 0, 1]];
        let swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]];
        assert_eq!(orbits.classify(&s, &avg, &id), Orbit::New(0));
        assert_eq!(orbits.classify(&imul(&s, &swap), &avg, &id), Orbit::Of(0));
        // A supercell of the same size that no symmetry relates: a representative of its own.
        let other = [[2, 0, 0], [0, 1, 0], [0, 1, 2]];
        assert_eq!(orbits.classify(&other, &avg, &id), Orbit::New(1));
    }

    #[test]
    fn a_cubic_structure_folds_its_axis_permutations() {
        let (lattice, frac, elements) = cscl();
        let mut tested = Symmetries::new();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        let id = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
        let (avg, lll) = (lattice, id);
        let swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]];
        assert!(!orbits.is_redundant(&id, &avg, &lll));
        assert!(orbits.is_redundant(&swap, &avg, &lll));
        // The same symmetry, but distances measured in another LLL basis or on an average
        // lattice that differs beyond the last printed digits: not the same tables.
        assert!(!orbits.is_redundant(&swap, &avg, &[[1, 0, 0], [0, 1, 0], [1, 1, 1]]));
        let mut other = avg;
        other[2][2] += 1e-6;
        let mut fresh = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!fresh.is_redundant(&id, &avg, &lll));
        assert!(!fresh.is_redundant(&swap, &other, &lll));
        // A second search of the same struct1 reuses the verdicts of the first.
        assert!(tested.contains(&(swap, true)));
        let mut second = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!second.is_redundant(&id, &avg, &lll));
        assert!(second.is_redundant(&swap, &avg, &lll));
        // Move Cl off the body diagonal along x: swapping x and y is no longer a symmetry,
        // inverting z still is.
        let frac = vec![[0.0, 0.0, 0.0], [0.6, 0.5, 0.5]];
        let mut tested = Symmetries::new();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!orbits.is_redundant(&id, &avg, &lll));
        assert!(!orbits.is_redundant(&swap, &avg, &lll));
        assert!(orbits.is_redundant(&[[1, 0, 0], [0, 1, 0], [0, 0, -1]], &avg, &lll));
        // A tetragonal metric: swapping a and c does not preserve it.
        let lattice = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 5.0]];
        let frac = vec![[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]];
        let mut tested = Symmetries::new();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!orbits.is_redundant(&id, &avg, &lll));
        assert!(!orbits.is_redundant(&[[0, 0, 1], [0, 1, 0], [1, 0, 0]], &avg, &lll));
        assert!(orbits.is_redundant(&swap, &avg, &lll));
    }
}
