//! Translations that map a structure onto itself, and the translation candidates they make
//! redundant.
//!
//! The matcher tries one translation per site of struct1 (those of the rarest element). When
//! struct1 is periodic within its own cell (a supercell: AtomWorld's `super_cell` targets),
//! two such sites that differ by one of these internal translations give the same distance
//! table with its columns permuted (up to rounding at the level of `SELF_TOL`, the 8 printed
//! decimals of a CIF), hence the same smallest sum of squares. Trying one of each class takes
//! k times less work for a k-fold supercell. What can differ from pymatgen: which of the
//! equal candidates wins (so the site pairing), and, where equal-cost assignments tie, the
//! RMS after the mean shift and the largest distance. The matcher uses it for
//! `get_rms_dist` only, where the differential test shows no compared number moving; for
//! `fit` a permuted table can break a tie otherwise and change the verdict, so `fit` keeps
//! every candidate.

use crate::grouped::Grouped;
use crate::linalg::Vec3;
use crate::numeric::distance_to_integer;
use crate::numeric::floor;
use crate::species::Kind;

/// Fractional tolerance of "the same place" (a CIF prints 8 decimals: two roundings of
/// 5e-9 each, with margin).
pub const SELF_TOL: f64 = 5e-8;

/// Positions of a structure, looked up by place: a grid of about one site per cell over the
/// unit cell (periodic), its cells' sites listed contiguously.
///
/// Why not a hash map of fine cells: a symmetry test looks up one place per site until a
/// miss, thousands of lookups per structure, and indexing a dense grid of a few cells per
/// axis costs a fraction of hashing, and these lookups sit in the matcher's hot path.
pub(super) struct Places<'a> {
    frac: &'a [Vec3],
    elements: &'a [Kind],
    /// Cells per axis.
    cells: usize,
    /// The sites of each cell, in increasing order.
    by_cell: Grouped,
    /// [`Places::maps_onto_itself`]'s record of the sites landed on: `taken[j] == test`
    /// marks site `j` in the current test (numbered, so the record is never cleared).
    taken: std::cell::RefCell<(u32, Vec<u32>)>,
    /// The site whose lookup missed last: tried first by the next test. A structure with
    /// one site out of place (an answer with a moved atom) fails every near-symmetry at
    /// that site, which a test in index order reaches only after the others.
    missed: std::cell::Cell<usize>,
}

/// Cells per axis for `n` sites: about one site per cell.
fn grid_size(n: usize) -> usize {
    crate::grouped::cells_per_axis(n, 64)
}

impl<'a> Places<'a> {
    pub(super) fn new(frac: &'a [Vec3], elements: &'a [Kind]) -> Self {
        let cells = grid_size(frac.len());
        let index: Vec<usize> = frac.iter().map(|f| Self::cell(*f, cells)).collect();
        let by_cell = Grouped::new(&index, cells * cells * cells);
        Self {
            frac,
            elements,
            cells,
            by_cell,
            taken: std::cell::RefCell::new((0, vec![0; frac.len()])),
            missed: std::cell::Cell::new(usize::MAX),
        }
    }

    /// The cell index along one axis of coordinate `x` (wrapped into [0, 1]), and where in
    /// the cell it lies (0 to 1).
    fn axis(x: f64, cells: usize) -> (usize, f64) {
        let w = (x - floor(x)) * cells as f64;
        // Through u32 (w lies in [0, cells], a few dozen at most; NaN gives 0 either way): a
        // float to u64 conversion takes a branchy sequence on x86-64, to u32 one instruction.
        let c = (w as u32 as usize).min(cells - 1);
        (c, w - c as f64)
    }

    fn cell(f: Vec3, cells: usize) -> usize {
        let [a, b, c] = f.map(|x| Self::axis(x, cells).0);
        (a * cells + b) * cells + c
    }

    /// The first site of `element` at `f` (modulo 1, within `SELF_TOL`).
    ///
    /// Only grid cells that can hold such a site are looked at: along an axis where `f` lies
    /// farther than `2 SELF_TOL` from both edges of its cell, every site within `SELF_TOL`
    /// shares its cell index (the rounding of the index computation is of order 1e-16), so
    /// usually one cell instead of 27.
    fn find(&self, f: Vec3, element: Kind) -> Option<usize> {
        let g = self.cells;
        let margin = 2.0 * SELF_TOL * g as f64;
        let mut axes = [[0usize; 2]; 3];
        let mut counts = [1usize; 3];
        for a in 0..3 {
            let (c, within) = Self::axis(f[a], g);
            axes[a][0] = c;
            if g > 1 && within < margin {
                axes[a][1] = (c + g - 1) % g; // near the lower edge (and the wrap at 0)
                counts[a] = 2;
            } else if g > 1 && within > 1.0 - margin {
                axes[a][1] = (c + 1) % g;
                counts[a] = 2;
            }
        }
        let mut found: Option<usize> = None;
        for &x in &axes[0][..counts[0]] {
            for &y in &axes[1][..counts[1]] {
                for &z in &axes[2][..counts[2]] {
                    let cell = (x * g + y) * g + z;
                    let hit = self.by_cell.group(cell).iter().copied().find(|&j| {
                        self.elements[j] == element
                            && (0..3)
                                .all(|a| distance_to_integer(self.frac[j][a] - f[a]) <= SELF_TOL)
                    });
                    found = match (found, hit) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
            }
        }
        found
    }

    /// Whether the sites moved to `moved(i)` land, one to one, on sites of their own
    /// element: the move maps the structure onto itself. A site landing where another
    /// already landed (coincident atoms) counts as a miss, so the answer errs towards "no".
    /// The site that missed in the last test is tried first, then the others from `first`
    /// on (wrapping round): the answer does not depend on the order (each place has one
    /// first site), and callers start after the site their move is built to send home,
    /// which usually tells a miss one lookup sooner.
    pub(super) fn maps_onto_itself(&self, moved: impl Fn(usize) -> Vec3, first: usize) -> bool {
        let n = self.frac.len();
        let mut record = self.taken.borrow_mut();
        let (test, taken) = &mut *record;
        *test = test.wrapping_add(1);
        if *test == 0 {
            // Numbers wrapped round: start the record afresh.
            taken.iter_mut().for_each(|t| *t = 0);
            *test = 1;
        }
        let test = *test;
        let missed = self.missed.get();
        let hint = (missed < n).then_some(missed);
        let others = (first..n)
            .chain(0..first.min(n))
            .filter(|&i| Some(i) != hint);
        for i in hint.into_iter().chain(others) {
            match self.find(moved(i), self.elements[i]) {
                Some(j) if taken[j] != test => taken[j] = test,
                _ => {
                    self.missed.set(i);
                    return false;
                }
            }
        }
        true
    }
}

/// The translations (other than zero) that map every site onto a site of the same element,
/// among the differences between site `anchor` and the sites of its element.
pub fn self_translations(frac: &[Vec3], elements: &[Kind], anchor: usize) -> Vec<Vec3> {
    let Some(&el) = elements.get(anchor) else {
        return Vec::new();
    };
    let places = Places::new(frac, elements);
    let mut out = Vec::new();
    for j in 0..frac.len() {
        if j == anchor || elements[j] != el {
            continue;
        }
        let t: Vec3 = std::array::from_fn(|a| frac[j][a] - frac[anchor][a]);
        if (0..3).all(|a| distance_to_integer(t[a]) <= SELF_TOL) {
            continue; // a coincident copy, not a translation
        }
        let moved = |i: usize| -> Vec3 { std::array::from_fn(|a| frac[i][a] + t[a]) };
        if places.maps_onto_itself(moved, anchor + 1) {
            out.push(t);
        }
    }
    out
}

/// `candidates` (site indices, in order) without those that are a self-translation away
/// from an earlier kept one.
pub fn distinct_candidates(
    frac: &[Vec3],
    candidates: &[usize],
    translations: &[Vec3],
) -> Vec<usize> {
    if translations.is_empty() {
        return candidates.to_vec();
    }
    let mut kept: Vec<usize> = Vec::new();
    for &c in candidates {
        let redundant = kept.iter().any(|&k| {
            let d: Vec3 = std::array::from_fn(|a| frac[c][a] - frac[k][a]);
            translations
                .iter()
                .any(|t| (0..3).all(|a| distance_to_integer(d[a] - t[a]) <= SELF_TOL))
        });
        if !redundant {
            kept.push(c);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;

    #[test]
    fn finding_a_place_agrees_with_a_scan_of_every_site() {
        let na = Element::from_symbol("Na").unwrap().z();
        let cl = Element::from_symbol("Cl").unwrap().z();
        // Sites on and next to grid-cell edges, at 0 and near 1.
        let mut frac = Vec::new();
        let mut elements = Vec::new();
        let mut seed: u64 = 3;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let cells = grid_size(400) as f64;
        for i in 0..400 {
            let edge = (next() * cells).floor() / cells;
            let jitter = [0.0, 3e-8, -3e-8, 4.9e-8, -4.9e-8, 1e-9][i % 6];
            let mut f = [next(), next(), next()];
            f[i % 3] = edge + jitter;
            if i % 7 == 0 {
                f[(i + 1) % 3] = 1.0 - 2e-8;
            }
            frac.push(f);
            elements.push(if i % 2 == 0 { na } else { cl });
        }
        let places = Places::new(&frac, &elements);
        let scan = |f: Vec3, e: Kind| {
            (0..frac.len()).find(|&j| {
                elements[j] == e
                    && (0..3).all(|a| distance_to_integer(frac[j][a] - f[a]) <= SELF_TOL)
            })
        };
        let mut hits = 0;
        for (i, f) in frac.iter().enumerate() {
            for d in [0.0, 4e-8, -4e-8, 1e-7] {
                let q = [f[0] + d, f[1] - d, f[2] + d + (i % 2) as f64];
                for e in [na, cl] {
                    let want = scan(q, e);
                    hits += usize::from(want.is_some());
                    assert_eq!(places.find(q, e), want, "site {i}, shift {d}");
                }
            }
        }
        assert!(hits >= 1200, "{hits}");
    }

    #[test]
    fn a_doubled_cell_has_one_internal_translation() {
        let el = |s: &str| Element::from_symbol(s).unwrap().z();
        // A two-site cell (Na at 0, Cl at ½) doubled along a: fractions halve along a.
        let frac = vec![
            [0.0, 0.0, 0.0],
            [0.25, 0.5, 0.5],
            [0.5, 0.0, 0.0],
            [0.75, 0.5, 0.5],
        ];
        let elements = vec![el("Na"), el("Cl"), el("Na"), el("Cl")];
        let t = self_translations(&frac, &elements, 0);
        assert_eq!(t.len(), 1);
        assert!((t[0][0] - 0.5).abs() < 1e-12 && t[0][1].abs() < 1e-12);
        assert_eq!(distinct_candidates(&frac, &[0, 2], &t), vec![0]);
        // Break the periodicity: no translation, every candidate kept.
        let mut moved = frac.clone();
        moved[3][2] += 0.01;
        let t = self_translations(&moved, &elements, 0);
        assert!(t.is_empty());
        assert_eq!(distinct_candidates(&moved, &[0, 2], &t), vec![0, 2]);
    }
}
