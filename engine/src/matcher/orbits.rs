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
//! Only representatives with the mapping's LLL basis and average lattice are candidates.
//! With a few of them, each quotient `W` is tested on the sites (once per pair of
//! structures); with more, the point group is found once (the lattice's metric-preserving
//! integer matrices, a bounded search over each row's coefficients, each tested on the
//! sites) and the mapping looks up `S · W` among the representatives for each operation: a
//! structure with less symmetry than its lattice keeps most mappings as representatives,
//! and pairwise tests would grow with the square of their number.
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

/// What is known of struct1's point operations (integer matrices in its reduced basis that
/// preserve the metric and map the structure onto itself with some translation), shared by
/// the two searches of a pair (a fit, then the smallest RMS): operations tested one by one,
/// and the whole group once found.
#[derive(Default)]
pub struct Symmetries {
    tested: rustc_hash::FxHashMap<IMat, bool>,
    group: Option<Vec<IMat>>,
}

/// Up to this many representatives that could share a mapping's tables, each is tested
/// through its quotient with the mapping; beyond, the whole point group is found once and
/// looked up (a structure with less symmetry than its lattice keeps most mappings apart,
/// and testing every pair would grow with the square of their number).
const FEW_CANDIDATES: usize = 4;

/// Most integer vectors searched for one row of a point operation: a reduced basis needs a
/// few dozen; for a lattice needing more (a cell hundreds of times longer than wide) the
/// group is not listed, and mappings are tested through their quotients.
const MAX_BOX_POINTS: f64 = 200_000.0;

/// The representatives chosen so far and what is needed to test a new mapping.
pub struct MappingOrbits<'a> {
    known: &'a mut Symmetries,
    /// Struct1: reduced lattice rows and their metric, sites, and the anchor the symmetry
    /// test starts from.
    lattice: Mat3,
    metric: Metric,
    frac: &'a [Vec3],
    elements: &'a [Kind],
    anchor: usize,
    /// The symmetry test's index of struct1's sites, made when first needed.
    sites: Option<Struct1<'a>>,
    representatives: Vec<Representative>,
    /// Representatives by their integer matrix.
    by_scale: rustc_hash::FxHashMap<IMat, Indices>,
    /// Representatives by their LLL basis (in increasing order): a mapping's candidates
    /// without a scan of every representative.
    by_lll: rustc_hash::FxHashMap<IMat, Indices>,
}

/// Representatives under one key: nearly always one, kept without an allocation.
type Indices = smallvec::SmallVec<[usize; 2]>;

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

/// A mapping tried in full, with the average lattice its tables used (its LLL basis is its
/// key in `by_lll`).
struct Representative {
    scale: IMat,
    /// `det(scale)`, which a mapping of its orbit shares up to sign.
    det: i64,
    average: Mat3,
    /// How far (each entry) an average lattice may lie from `average` to share its tables:
    /// [`AVERAGE_TOL`] relative to `average`'s largest entry, computed once.
    average_tol: f64,
}

impl<'a> MappingOrbits<'a> {
    /// For struct1 with reduced lattice rows `lattice`, fractional coordinates `frac` and
    /// `elements`; `anchor` is a site of its rarest element (fewest translations to try);
    /// `known` holds struct1's point operations once found (by this search or an earlier
    /// one of the same pair).
    pub fn new(
        lattice: &Mat3,
        frac: &'a [Vec3],
        elements: &'a [Kind],
        anchor: usize,
        known: &'a mut Symmetries,
    ) -> Self {
        Self {
            known,
            lattice: *lattice,
            metric: Metric::of(lattice),
            frac,
            elements,
            anchor,
            sites: None,
            representatives: Vec::with_capacity(16),
            by_scale: Default::default(),
            by_lll: Default::default(),
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

    /// [`MappingOrbits::is_redundant`], telling which representative: the first one `R`
    /// with `R = scale · W` for a point operation `W`, the same LLL basis and an average
    /// lattice within `AVERAGE_TOL`.
    pub fn classify(&mut self, scale: &IMat, average: &Mat3, lll: &IMat) -> Orbit {
        let det = det_i64(scale);
        if det == 0 {
            return Orbit::Alone;
        }
        // Only representatives with this LLL basis and average lattice can share its tables;
        // a search whose mappings all differ there tests no symmetry.
        let mut candidates: smallvec::SmallVec<[usize; 16]> = smallvec::SmallVec::new();
        for &k in self.by_lll.get(lll).map_or(&[][..], |ks| ks.as_slice()) {
            let rep = &self.representatives[k];
            if within(&rep.average, average, rep.average_tol) {
                candidates.push(k);
            }
        }
        let found = if candidates.is_empty() {
            None
        } else if self.known.group.is_none() && candidates.len() <= FEW_CANDIDATES {
            self.first_by_quotients(scale, det, &candidates)
        } else {
            self.first_by_group(scale, det, &candidates)
        };
        if let Some(k) = found {
            return Orbit::Of(k);
        }
        let k = self.representatives.len();
        self.representatives.push(Representative {
            scale: *scale,
            det,
            average: *average,
            average_tol: AVERAGE_TOL * largest_entry(average),
        });
        self.by_scale.entry(*scale).or_default().push(k);
        self.by_lll.entry(*lll).or_default().push(k);
        Orbit::New(k)
    }

    /// The first of `candidates` whose quotient with `scale` is a point operation, each
    /// tested (once per pair of structures).
    fn first_by_quotients(
        &mut self,
        scale: &IMat,
        det: i64,
        candidates: &[usize],
    ) -> Option<usize> {
        // `scale⁻¹ = adj / det`, shared by the quotients.
        let adjugate = adjugate_i64(scale);
        for &k in candidates {
            let rep = &self.representatives[k];
            if rep.det.unsigned_abs() != det.unsigned_abs() {
                continue;
            }
            let Some(w) = integer_quotient(&adjugate, det, &rep.scale) else {
                continue;
            };
            if self.is_symmetry_cached(&w) {
                return Some(k);
            }
        }
        None
    }

    /// The first of `candidates` that is `scale · W` for a point operation `W` of the whole
    /// group (found once per pair of structures).
    fn first_by_group(&mut self, scale: &IMat, det: i64, candidates: &[usize]) -> Option<usize> {
        if self.known.group.is_none() {
            let Some(ops) = metric_operations(&self.lattice, &self.metric) else {
                // Too many coefficients to list the lattice's operations: test the quotients.
                return self.first_by_quotients(scale, det, candidates);
            };
            let ops: Vec<IMat> = ops
                .into_iter()
                .filter(|w| self.is_symmetry_cached(w))
                .collect();
            self.known.group = Some(ops);
        }
        let group = self.known.group.as_deref().unwrap_or_default();
        let mut first: Option<usize> = None;
        for w in group {
            let Some(ks) = self.by_scale.get(&imul(scale, w)) else {
                continue;
            };
            for &k in ks {
                if first.is_none_or(|f| k < f) && candidates.contains(&k) {
                    first = Some(k);
                }
            }
        }
        first
    }

    /// Whether `W` is a point operation of struct1: metric-preserving, and a symmetry of
    /// the sites for some translation (remembered for the pair).
    fn is_symmetry_cached(&mut self, w: &IMat) -> bool {
        if let Some(&known) = self.known.tested.get(w) {
            return known;
        }
        let answer = self.metric.preserved_by(w) && {
            let (frac, elements, anchor) = (self.frac, self.elements, self.anchor);
            self.sites
                .get_or_insert_with(|| Struct1::new(frac, elements, anchor))
                .is_symmetry(w)
        };
        self.known.tested.insert(*w, answer);
        answer
    }
}

/// A lattice's metric `G = L Lᵀ` (rows `L`) and the tolerance on it: `METRIC_TOL` relative
/// to its largest entry.
struct Metric {
    gram: Mat3,
    tol: f64,
}

impl Metric {
    fn of(lattice: &Mat3) -> Self {
        let gram: Mat3 = std::array::from_fn(|i| {
            std::array::from_fn(|j| (0..3).map(|k| lattice[i][k] * lattice[j][k]).sum())
        });
        Self {
            gram,
            tol: METRIC_TOL * largest_entry(&gram),
        }
    }

    /// `u G vᵀ` for integer row vectors.
    fn inner(&self, u: &[i64; 3], v: &[i64; 3]) -> f64 {
        let mut x = 0.0;
        for (k, &uk) in u.iter().enumerate() {
            for (l, &vl) in v.iter().enumerate() {
                x += uk as f64 * self.gram[k][l] * vl as f64;
            }
        }
        x
    }

    /// Whether `W G Wᵀ = G` entry by entry, to the tolerance.
    fn preserved_by(&self, w: &IMat) -> bool {
        (0..3)
            .all(|i| (0..3).all(|j| (self.inner(&w[i], &w[j]) - self.gram[i][j]).abs() <= self.tol))
    }
}

/// `adj · r / det` when every entry divides exactly (`adj`, `det`: the adjugate and
/// non-zero determinant of `S`, so the result is `S⁻¹ · r`), else `None`.
fn integer_quotient(adj: &IMat, det: i64, r: &IMat) -> Option<IMat> {
    let p = imul(adj, r);
    if p.iter().flatten().any(|x| x % det != 0) {
        return None;
    }
    Some(p.map(|row| row.map(|x| x / det)))
}

/// What the symmetry test needs of struct1.
struct Struct1<'s> {
    frac: &'s [Vec3],
    elements: &'s [Kind],
    places: Places<'s>,
    anchor: usize,
}

impl<'s> Struct1<'s> {
    fn new(frac: &'s [Vec3], elements: &'s [Kind], anchor: usize) -> Self {
        Self {
            frac,
            elements,
            places: Places::new(frac, elements),
            anchor,
        }
    }

    /// Whether `f ↦ f·W + τ` maps struct1 onto itself for some translation `τ` (taking the
    /// anchor onto a site of its element).
    fn is_symmetry(&self, w: &IMat) -> bool {
        let wf: Mat3 = w.map(|r| r.map(|x| x as f64));
        let (Some(&el), Some(&at)) = (self.elements.get(self.anchor), self.frac.get(self.anchor))
        else {
            return false;
        };
        // Images are computed as the test asks for them: most tests miss within a few sites.
        let anchor = vec_mat(at, &wf);
        self.frac
            .iter()
            .zip(self.elements)
            .filter(|(_, &e)| e == el)
            .any(|(fk, _)| {
                let tau: Vec3 = std::array::from_fn(|a| fk[a] - anchor[a]);
                let image = |i: usize| -> Vec3 {
                    let m = vec_mat(self.frac[i], &wf);
                    std::array::from_fn(|a| m[a] + tau[a])
                };
                self.places.maps_onto_itself(image, self.anchor + 1)
            })
    }
}

/// The unimodular integer matrices `W` (rows: struct1's basis vectors in its own basis)
/// with `W G Wᵀ = G` to `METRIC_TOL` (relative to the largest entry of the metric `G`):
/// the lattice's point operations. Row `i` has `|u_k| ≤ |u L| · |b_k|` (`b_k` the dual
/// basis, `|u L|` the length of basis vector `i`), which bounds the search; `None` when a
/// row's box exceeds `MAX_BOX_POINTS` or the lattice is singular.
fn metric_operations(lattice: &Mat3, metric: &Metric) -> Option<Vec<IMat>> {
    let Metric { gram, tol } = metric;
    let dual = crate::linalg::inverse(lattice)?;
    let dual_len: Vec3 =
        std::array::from_fn(|k| (0..3).map(|r| dual[r][k] * dual[r][k]).sum::<f64>().sqrt());
    // Row i's box: |u_k| ≤ √(G_ii + tol) · |b_k|, with a margin for the rounding.
    let mut bounds = [[0i64; 3]; 3];
    for (i, row) in bounds.iter_mut().enumerate() {
        let mut points = 1.0;
        for (k, b) in row.iter_mut().enumerate() {
            let limit = (gram[i][i] + *tol).sqrt() * dual_len[k] * (1.0 + 1e-6) + 1e-6;
            points *= 2.0 * limit + 1.0;
            if !(limit.is_finite() && points <= MAX_BOX_POINTS) {
                return None;
            }
            *b = limit.floor() as i64;
        }
    }
    let inner = |u: &[i64; 3], v: &[i64; 3]| metric.inner(u, v);
    // For each row i: the integer vectors as long as basis vector i.
    let rows: Vec<Vec<[i64; 3]>> = (0..3)
        .map(|i| {
            let bound = bounds[i];
            let mut out = Vec::new();
            for a in -bound[0]..=bound[0] {
                for b in -bound[1]..=bound[1] {
                    for c in -bound[2]..=bound[2] {
                        let u = [a, b, c];
                        if (inner(&u, &u) - gram[i][i]).abs() <= *tol {
                            out.push(u);
                        }
                    }
                }
            }
            out
        })
        .collect();
    let mut out = Vec::new();
    for u in &rows[0] {
        for v in &rows[1] {
            if (inner(u, v) - gram[0][1]).abs() > *tol {
                continue;
            }
            for w in &rows[2] {
                let m = [*u, *v, *w];
                if (inner(u, w) - gram[0][2]).abs() <= *tol
                    && (inner(v, w) - gram[1][2]).abs() <= *tol
                    && det_i64(&m).abs() == 1
                    && metric.preserved_by(&m)
                {
                    out.push(m);
                }
            }
        }
    }
    Some(out)
}

/// The largest magnitude among a matrix's entries.
fn largest_entry(a: &Mat3) -> f64 {
    a.iter().flatten().fold(0.0f64, |m, x| max_with(m, x.abs()))
}

/// Whether every entry of `b` lies within `tol` of `a`'s.
fn within(a: &Mat3, b: &Mat3, tol: f64) -> bool {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .all(|(x, y)| (x - y).abs() <= tol)
}

/// `W = S⁻¹ · R` when it is an integer matrix and `S`, `R` have the same |determinant| (so
/// that `R = S · W` with `W` unimodular: the two mappings are a change of struct1's basis
/// apart), else `None`.
#[cfg(test)]
fn quotient(s: &IMat, r: &IMat) -> Option<IMat> {
    let d = det_i64(s);
    if d == 0 || det_i64(r).unsigned_abs() != d.unsigned_abs() {
        return None;
    }
    integer_quotient(&adjugate_i64(s), d, r)
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

    #[test]
    fn lattices_have_their_holohedries_point_operations() {
        let s3 = 3f64.sqrt();
        let monoclinic_b = [
            5.0 * libm::cos(100f64.to_radians()),
            0.0,
            5.0 * libm::sin(100f64.to_radians()),
        ];
        for (name, lattice, count) in [
            (
                "cubic",
                [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]],
                48,
            ),
            (
                "tetragonal",
                [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 7.0]],
                16,
            ),
            (
                "orthorhombic",
                [[4.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 7.0]],
                8,
            ),
            (
                "monoclinic",
                [[4.0, 0.0, 0.0], [0.0, 6.0, 0.0], monoclinic_b],
                4,
            ),
            (
                "triclinic",
                [[4.0, 0.0, 0.0], [1.0, 5.0, 0.0], [0.7, 1.3, 6.0]],
                2,
            ),
            // A layered hexagonal cell (a 3 Å, c 23 Å): the long axis needs coefficients up
            // to 9 along a and b in its row's search box.
            (
                "hexagonal",
                [
                    [-1.494, -1.494 * s3, 0.0],
                    [-1.494, 1.494 * s3, 0.0],
                    [0.0, 0.0, -23.372],
                ],
                24,
            ),
            // fcc's primitive cell: cubic symmetry in a basis at 60°.
            (
                "fcc primitive",
                [[0.0, 2.0, 2.0], [2.0, 0.0, 2.0], [2.0, 2.0, 0.0]],
                48,
            ),
        ] {
            let metric = Metric::of(&lattice);
            let ops = metric_operations(&lattice, &metric).unwrap();
            assert_eq!(ops.len(), count, "{name}");
            // Each operation maps the basis onto vectors with the same lengths and angles
            // (checked on W·L's rows directly, not through the metric).
            let rows = |m: &Mat3| -> Vec<f64> {
                (0..3)
                    .flat_map(|i| (0..3).map(move |j| (i, j)))
                    .map(|(i, j)| (0..3).map(|k| m[i][k] * m[j][k]).sum())
                    .collect()
            };
            let own = rows(&lattice);
            for w in &ops {
                assert_eq!(det_i64(w).abs(), 1, "{name}");
                let wl: Mat3 = std::array::from_fn(|i| {
                    std::array::from_fn(|c| (0..3).map(|k| w[i][k] as f64 * lattice[k][c]).sum())
                });
                for (a, b) in rows(&wl).iter().zip(&own) {
                    assert!((a - b).abs() < 1e-6, "{name}: {w:?}");
                }
            }
        }
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
        let mut tested = Symmetries::default();
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
        let mut tested = Symmetries::default();
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
        assert_eq!(tested.tested.get(&swap), Some(&true));
        let mut second = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!second.is_redundant(&id, &avg, &lll));
        assert!(second.is_redundant(&swap, &avg, &lll));
        // Move Cl off the body diagonal along x: swapping x and y is no longer a symmetry,
        // inverting z still is.
        let frac = vec![[0.0, 0.0, 0.0], [0.6, 0.5, 0.5]];
        let mut tested = Symmetries::default();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!orbits.is_redundant(&id, &avg, &lll));
        assert!(!orbits.is_redundant(&swap, &avg, &lll));
        assert!(orbits.is_redundant(&[[1, 0, 0], [0, 1, 0], [0, 0, -1]], &avg, &lll));
        // A tetragonal metric: swapping a and c does not preserve it.
        let lattice = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 5.0]];
        let frac = vec![[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]];
        let mut tested = Symmetries::default();
        let mut orbits = MappingOrbits::new(&lattice, &frac, &elements, 0, &mut tested);
        assert!(!orbits.is_redundant(&id, &avg, &lll));
        assert!(!orbits.is_redundant(&[[0, 0, 1], [0, 1, 0], [1, 0, 0]], &avg, &lll));
        assert!(orbits.is_redundant(&swap, &avg, &lll));
    }
}
