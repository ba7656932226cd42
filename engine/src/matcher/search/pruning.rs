//! Proofs that a candidate's sum of squares exceeds a limit from the translations its mean
//! displacement can reach, before its table is built: the anchor row's vectors bound where
//! the mean can lie, and a [`bound`] on a box around the translation
//! onto each reachable anchor partner, computed once per mapping and partner, holds for every
//! candidate that reaches it.

use super::{Prepared, ReachWork, Search};
use crate::linalg::Vec3;
use crate::matcher::{assignment, bound, pbc};

impl Search<'_> {
    /// Whether the candidate putting struct2's anchor site onto struct1 site `s1i` provably
    /// has a sum of squares above `limit` (Å²), from what is known near the translations its
    /// mean can reach.
    ///
    /// The anchor row's own term alone exceeds `limit` unless the mean `t̄` lies within
    /// `r = √limit` of one of that row's vectors, each of which leads to another anchor
    /// partner `k`: then the candidate's total translation is the translation onto `k` plus
    /// a shift `δ` with `|δ| ≤ r`, and every row's vector minus `t̄` is a periodic image of
    /// its vector at that translation minus `δ`. So a bound on the box `[-r, r]³` at the
    /// translation onto `k` ([`Search::region_exceeds`]), once per mapping and `k`, holds for
    /// every candidate reaching `k`; a wrong translation usually fails on its first rows.
    /// `None` when the question cannot be answered cheaply (the cube query would span half
    /// a cell, or the columns are not available).
    pub(super) fn reach_exceeds(
        &self,
        p: &mut Prepared,
        s1i: usize,
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        self.columns(p).ok()?;
        let Prepared {
            moved,
            columns: Some(columns),
            regions,
            ..
        } = p
        else {
            return None;
        };
        let (s1fc, s2fc) = self.coords_of(moved);
        let anchor = self.s2_t_ind;
        // Where the candidate puts the anchor, computed as its table row is (to the last bit:
        // a partner at the tolerance's edge must be one of the row's entries, or not).
        let a = s2fc[anchor];
        let at: Vec3 = std::array::from_fn(|x| a[x] + (s1fc[s1i][x] - a[x]));
        columns.partners(at, (&self.mask, anchor), &mut work.near, &mut work.partners);
        // Without a partner for the anchor, no assignment avoids a forbidden pair.
        if work.partners.is_empty() {
            return Some(true);
        }
        self.partner_regions_exceed(columns, regions, s1fc, s2fc, limit, work)
    }

    /// Whether the bound exceeds `limit` near the translation onto each struct1 site listed
    /// in `work.partners` (computed once per mapping and site, see
    /// [`Search::region_exceeds`]); `None` when a region cannot be bounded cheaply.
    pub(super) fn partner_regions_exceed(
        &self,
        columns: &pbc::Columns,
        regions: &mut Vec<Option<(f64, bool)>>,
        s1fc: &[Vec3],
        s2fc: &[Vec3],
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        let a = s2fc[self.s2_t_ind];
        let onto = |k: usize| -> Vec3 { std::array::from_fn(|x| s1fc[k][x] - a[x]) };
        let r = limit.sqrt() * (1.0 + 1e-9) + 1e-9;
        regions.resize(self.n1, None);
        for n in 0..work.partners.len() {
            let k = work.partners[n];
            let exceeds = match regions[k] {
                // Exceeded at a limit at least this one, or not at one at most this one.
                Some((l, true)) if l >= limit => Some(true),
                Some((l, false)) if l <= limit => Some(false),
                _ => {
                    let e = self.region_exceeds(columns, s2fc, onto(k), r, limit, work);
                    if let Some(e) = e {
                        regions[k] = Some((limit, e));
                    }
                    e
                }
            };
            if exceeds != Some(true) {
                return exceeds;
            }
        }
        Some(true)
    }

    /// Whether a candidate whose neighbourhood bound did not rule it out still provably has
    /// a sum of squares above `limit`, now that its whole `table` is built: its optimal
    /// assignment costs `Σ |v_i|² = Σ |v_i − t̄|² + n |t̄|²`, at most what any complete
    /// assignment costs ([`assignment::feasible_cost`]), so the mean lies within `√(that / n)`
    /// of zero, and only the anchor partners
    /// whose vector is within that plus `√limit` can lead the mean to them (see
    /// [`Search::reach_exceeds`]). Usually that leaves the candidate's own translation, far
    /// from the one that matches: a supercell with one site moved had seven such candidates
    /// per search, each a 512-site assignment solved for nothing.
    pub(super) fn mean_cannot_reach(
        &self,
        p: &mut Prepared,
        table: &pbc::Table,
        costs: assignment::SparseCosts<'_>,
        limit: f64,
        work: &mut ReachWork,
    ) -> bool {
        let Some(upper) = assignment::feasible_cost(costs) else {
            return false;
        };
        let anchor = self.s2_t_ind;
        if anchor >= table.rows {
            return false;
        }
        let r = limit.sqrt() * (1.0 + 1e-9) + 1e-9;
        // The margin covers a solver returning an assignment a rounding above the optimum.
        let reach = (upper * (1.0 + 1e-9) / self.n2 as f64).sqrt() + r + 1e-9;
        work.partners.clear();
        for e in table.range(anchor) {
            let v = table.vectors[e];
            if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() <= reach {
                work.partners.push(table.col[e]);
            }
        }
        let Prepared {
            moved,
            columns: Some(columns),
            regions,
            ..
        } = p
        else {
            return false;
        };
        let (s1fc, s2fc) = self.coords_of(moved);
        self.partner_regions_exceed(columns, regions, s1fc, s2fc, limit, work) == Some(true)
    }

    /// Whether, at translation `t` of struct2's sites, `Σ_i min_v |v − δ|²` over each row's
    /// allowed vectors `v` exceeds `limit` for every `δ` in the box `[-r, r]³` (with
    /// `r² > limit`). A row's vectors outside the cube `[-2r, 2r]³` are more than `r` from
    /// the box, so a row without any there ends the proof; the rows are taken in spread
    /// order (the one that ended the last proof first), and the sum of their distances to
    /// the whole box usually exceeds `limit` after a few. What remains is split as in
    /// [`bound`]. `None` when a row's cube query declines (the cube would span half a cell).
    pub(super) fn region_exceeds(
        &self,
        columns: &pbc::Columns,
        s2fc: &[Vec3],
        t: Vec3,
        r: f64,
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        let ReachWork {
            near,
            cube,
            cube_start,
            lead,
            ..
        } = work;
        cube.clear();
        cube_start.clear();
        cube_start.push(0);
        let mut total = 0.0;
        // The row that ended the last proof first: a wrong translation of one mapping
        // usually fails on the same rows as the one before.
        let first = lead.filter(|&i| i < s2fc.len());
        let rest = self.row_order.iter().copied().filter(|&i| Some(i) != first);
        for i in first.into_iter().chain(rest) {
            let f: Vec3 = std::array::from_fn(|x| s2fc[i][x] + t[x]);
            let start = cube.len();
            if !columns.in_cube(f, 2.0 * r, (&self.mask, i), near, cube) {
                return None;
            }
            let best = cube[start..]
                .iter()
                .map(|v| {
                    v.iter()
                        .map(|&x| (x.abs() - r).max(0.0).powi(2))
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min);
            total += best;
            if total > limit {
                *lead = Some(i);
                return Some(true);
            }
            cube_start.push(cube.len());
        }
        Some(
            bound::RowVectors::new(cube_start, cube)
                .is_some_and(|rows| rows.exceeds_on_box([-r; 3], [r; 3], limit)),
        )
    }
}
