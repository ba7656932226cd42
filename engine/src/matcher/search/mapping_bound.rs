//! A bound over every candidate of a lattice mapping at once, from the moving struct1's
//! site-to-site differences: most mappings of a smallest-RMS search are lattice symmetries
//! that are not symmetries of the structure, and every translation of theirs is dismissed.
//! Proving that once per mapping skips its orbit test, sites, columns and per-candidate
//! bounds.
//!
//! The argument is [`Search::reach_exceeds`]'s with the anchor's partner left free: if a
//! candidate's sum of squares is at most `limit`, its mean `t̄` lies within `r = √limit` of
//! the anchor row's vector `v_a`, which leads to some struct1 site `k` the anchor may pair
//! with. Row `i`'s term is then `|v_i − t̄|² = |(v_i − v_a) − δ|²` with `|δ| ≤ r`, and
//! `v_i − v_a` is a periodic image of `(s1[m] − s1[k]) − (s2[i] − s2[a])` for the partner
//! `m` of `i`: the term is at least the squared distance from the box `[-r, r]³` of the
//! nearest such difference over every `m` row `i` may pair with and every such `k`. Summed
//! over a few rows, a total above `limit` holds for every translation of the mapping.
//!
//! Struct1's differences are taken once, in its own basis: the mapped basis is `S · L` for
//! the mapping's integer matrix `S`, so a difference `g` in mapped coordinates is `g · S` in
//! struct1's own, and is `g · A` on the average lattice `A`. With struct1 expanded into a
//! supercell its sites' copies differ by lattice vectors of its own cell, so taking every
//! image in that cell's lattice only widens the minimum: the bound still holds.

use super::{Prepared, Search};
use crate::linalg::{inverse, matmul, vec_mat, Mat3, Vec3};
use crate::matcher::pbc::PeriodicSpans;
use crate::numeric::round_ties_even;

/// Rows summed before giving up on a mapping (a wrong mapping usually fails on its first).
const ROWS: usize = 6;

/// Largest difference set kept for a row kind (pairs of struct1 sites scanned per row).
const MAX_DIFFERENCES: usize = 128;

/// Struct1's site differences `s1[m] − s1[k]` (fractional in its own basis, each component
/// wrapped into [−½, ½]) for the sites `m` a row may pair with and the sites `k` the anchor
/// may: one set per row kind, each computed when first asked for.
pub(super) struct Differences<'a> {
    s1: &'a [Vec3],
    /// The sites the anchor may pair with.
    partners: Vec<usize>,
    /// Each row's set (an index into `sets`), `None` where the set would be too large.
    of_row: Vec<Option<usize>>,
    sets: Vec<DifferenceSet>,
}

impl<'a> Differences<'a> {
    /// The sets for the search's struct1 (the moving structure, expanded `fu` times with
    /// its sites' copies next to each other) and rows.
    pub(super) fn new(search: &Search<'a>) -> Self {
        let mask = &search.mask;
        let fu = search.fu.max(1);
        // Struct1's sites a row may pair with: one column of each site's copies (they share
        // its kind), as the site's index.
        let allowed = |i: usize| -> Vec<usize> {
            (0..search.n1)
                .step_by(fu)
                .filter(|&j| !mask.forbidden(i, j))
                .map(|j| j / fu)
                .collect()
        };
        let partners = allowed(search.s2_t_ind);
        let mut kinds: Vec<u32> = Vec::new();
        let mut sets: Vec<DifferenceSet> = Vec::new();
        let mut of_row = Vec::with_capacity(search.n2);
        for i in 0..search.n2 {
            let kind = mask.rows[i];
            let set = match kinds.iter().position(|&k| k == kind) {
                Some(s) => s,
                None => {
                    kinds.push(kind);
                    sets.push(DifferenceSet {
                        cols: allowed(i),
                        ..DifferenceSet::default()
                    });
                    sets.len() - 1
                }
            };
            let small = sets[set].cols.len() * partners.len() <= MAX_DIFFERENCES;
            of_row.push(small.then_some(set));
        }
        Self {
            s1: &search.s1.frac,
            partners,
            of_row,
            sets,
        }
    }

    /// Calls `visit` on every difference of set `set` whose coordinate along `axis` is
    /// within `half` (below ½, with a margin for rounding) of `centre`'s, periodically, and
    /// maybe on others; stops when `visit` returns false.
    fn slab(
        &self,
        set: usize,
        (axis, centre, half): (usize, f64, f64),
        mut visit: impl FnMut(&Vec3) -> bool,
    ) {
        let Some(set) = self.sets.get(set) else {
            return;
        };
        let all = set.all.get_or_init(|| {
            let (s1, partners) = (self.s1, &self.partners);
            let pairs = set
                .cols
                .iter()
                .flat_map(|&m| partners.iter().map(move |&k| (m, k)));
            pairs
                .map(|(m, k)| {
                    std::array::from_fn(|x| {
                        let d = s1[m][x] - s1[k][x];
                        d - round_ties_even(d)
                    })
                })
                .collect()
        });
        if all.len() <= DifferenceSet::SCANNED {
            for e in all {
                if !visit(e) {
                    return;
                }
            }
            return;
        }
        let sorted = set.by_axis[axis].get_or_init(|| {
            let mut v = all.clone();
            v.sort_unstable_by(|a, b| a[axis].total_cmp(&b[axis]));
            v
        });
        let q = centre - round_ties_even(centre);
        for &(lo, hi) in PeriodicSpans::new(q, half + 1e-12, -0.5).iter() {
            let start = sorted.partition_point(|e| e[axis] < lo);
            for e in sorted[start..].iter().take_while(|e| e[axis] <= hi) {
                if !visit(e) {
                    return;
                }
            }
        }
    }
}

/// One row kind's differences: the sites its rows may pair with, the differences when
/// first asked for, and for a large set, the differences sorted along an axis when first
/// asked for (a query scans the slab of the axis its box is narrowest on).
#[derive(Default)]
struct DifferenceSet {
    cols: Vec<usize>,
    all: std::cell::OnceCell<Vec<Vec3>>,
    by_axis: [std::cell::OnceCell<Vec<Vec3>>; 3],
}

impl DifferenceSet {
    /// Sets up to this size are scanned whole (sorting them costs more than it saves).
    const SCANNED: usize = 64;
}

impl Search<'_> {
    /// Whether every candidate of mapping `p` provably has a sum of squares above `limit`
    /// (Å²), by the module's bound on up to [`ROWS`] rows: `lead`, the row that ended the
    /// last proof, first, then `hint` (the row that ended the last per-candidate proof: a
    /// row a near-symmetry of the structure does not keep), then rows spread over the
    /// structure. False when the bound cannot be applied (a tolerance box as wide as half a
    /// cell, a singular matrix, or rows without a difference set).
    pub(super) fn mapping_exceeds(
        &self,
        p: &Prepared,
        differences: &Differences<'_>,
        limit: f64,
        (lead, hint): (&mut Option<usize>, Option<usize>),
    ) -> bool {
        let s2 = &self.fixed.frac;
        let anchor = self.s2_t_ind;
        let Some(&a) = s2.get(anchor) else {
            return false;
        };
        let scale: Mat3 = p.scale.map(|r| r.map(|x| x as f64));
        let (Some(inv_average), Some(inv_scale)) = (inverse(&p.average), inverse(&scale)) else {
            return false;
        };
        // Struct1's own coordinates to Cartesian on the average lattice, and back.
        let to_cart = matmul(&inv_scale, &p.average);
        let to_own = matmul(&inv_average, &scale);
        let r = limit.sqrt() * (1.0 + 1e-9) + 1e-9;
        // A vector within `r` of the box on each axis is shorter than `2√3·r`, so its own
        // coordinate along axis x is at most that times the length of `to_own`'s column x;
        // wider than half a cell, the nearest image is not the only one to look at.
        let reach = 2.0 * 3f64.sqrt() * r * (1.0 + 1e-6);
        let w: Vec3 = std::array::from_fn(|x| {
            reach * (0..3).map(|y| to_own[y][x].powi(2)).sum::<f64>().sqrt()
        });
        if !w.iter().all(|&x| x < 0.5) {
            return false;
        }
        let usable = |i: &usize| *i < s2.len() && *i != anchor;
        let first = lead.filter(usable);
        let second = hint.filter(|i| usable(i) && Some(*i) != first);
        let rest = self
            .row_order
            .iter()
            .copied()
            .filter(|&i| i != anchor && Some(i) != first && Some(i) != second);
        let axis = (1..3).fold(0, |m, x| if w[x] < w[m] { x } else { m });
        let mut total = 0.0;
        let mut zeros = 0;
        for i in first.into_iter().chain(second).chain(rest).take(ROWS) {
            let Some(set) = differences.of_row.get(i).copied().flatten() else {
                continue;
            };
            let d: Vec3 = std::array::from_fn(|x| s2[i][x] - a[x]);
            let d = vec_mat(d, &scale);
            let mut best = f64::INFINITY;
            differences.slab(set, (axis, d[axis], w[axis]), |e| {
                let g: Vec3 = std::array::from_fn(|x| {
                    let g = e[x] - d[x];
                    g - round_ties_even(g)
                });
                if g[0].abs() <= w[0] && g[1].abs() <= w[1] && g[2].abs() <= w[2] {
                    let c = vec_mat(g, &to_cart);
                    let beyond: f64 = c.iter().map(|&x| (x.abs() - r).max(0.0).powi(2)).sum();
                    best = best.min(beyond);
                }
                // A difference inside the box: the row can add nothing.
                best > 0.0
            });
            if best == 0.0 {
                zeros += 1;
                // Two rows with a partner right where a match would put it: most likely a
                // mapping with a candidate near the cap, which the bound cannot dismiss.
                if zeros == 2 {
                    return false;
                }
            }
            total += best;
            if total > limit {
                *lead = Some(i);
                return true;
            }
        }
        false
    }
}
