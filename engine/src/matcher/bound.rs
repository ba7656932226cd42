//! A lower bound on a candidate's RMS, so that `get_rms_dist` can skip candidates that
//! cannot beat the best one found so far without changing its answer.
//!
//! Why by hand: this is specific to pymatgen's objective. For a candidate (lattice mapping
//! and translation), the reference solves the assignment of struct2 sites to struct1 sites,
//! takes each pair's shortest vector `v_i`, removes their mean `t̄` and reports
//! `rms = normalization · sqrt(Σ |v_i − t̄|² / n)`. Whatever the assignment, `v_i` is one of
//! the allowed vectors `V_i` of row `i`, and `t̄` lies in the box spanned, axis by axis, by the
//! means of the rows' smallest and largest components. For any box `R` holding `t̄`,
//!
//! ```text
//! Σ |v_i − t̄|² ≥ Σ_i min_{v ∈ V_i} dist(v, R)²
//! ```
//!
//! so splitting the box until every part's bound exceeds the best value found so far proves
//! that the candidate cannot win, before its O(n³) assignment is solved. A candidate is only
//! skipped when the proof succeeds within a small budget of box evaluations; otherwise it is
//! evaluated as the reference does. On a symmetric 512-site supercell almost every candidate is
//! a poor match and is dismissed this way.
//!
//! Two refinements keep the proof cheap. Only small boxes need it: a mean farther than
//! `√limit` from every vector of some row already gets more than `limit` from that row, so the
//! proof runs on the boxes of side `2√limit` around the vectors of the row with the fewest
//! (there the bound is nearly tight, so few boxes need splitting). And any subset of the rows bounds the whole sum (the terms are
//! non-negative, and the subset's minimising mean lies in the box its own rows span), so the
//! search bounds a candidate on a few rows before it builds the rest of its table.
//!
//! Before any of that, `search` asks a cheaper question that several candidates share: the
//! mean must lie within `√limit` of one of the anchor row's vectors, which puts the
//! candidate's whole translation within `√limit` of the translation onto another partner of
//! the anchor, and the box bound there ([`RowVectors::exceeds_on_box`], on vectors gathered
//! by a cube query) is computed once per mapping and partner, and dismisses nearly every
//! candidate the 8-row stage would, for a fraction of the cost.

use crate::linalg::Vec3;
use crate::numeric::{max_with, min_with};

/// Box evaluations allowed per candidate before giving up the proof.
const BUDGET: usize = 32;

/// Readings of the rows at most by [`RowVectors::apart_beyond`] per vector of its sparsest
/// row (each after the mean's box shrank).
const MEAN_PASSES: usize = 4;

/// Whose mean [`RowVectors::apart_beyond`] bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mean {
    /// The mean of these rows' vectors: they are all of the candidate's.
    OfTheseRows,
    /// The mean of these rows' vectors and of others not given.
    OfMoreRows,
}

/// Allowed shortest vectors of each row, flattened (a view of a sparse table's rows).
pub struct RowVectors<'a> {
    starts: &'a [usize],
    vectors: &'a [Vec3],
}

impl<'a> RowVectors<'a> {
    /// Rows `starts[i]..starts[i + 1]` of `vectors` (each row's allowed vectors); `None` when
    /// some row has none (no complete assignment avoids a forbidden pair) or the starts do
    /// not index `vectors`.
    pub fn new(starts: &'a [usize], vectors: &'a [Vec3]) -> Option<Self> {
        let valid = !starts.is_empty()
            && starts.last() == Some(&vectors.len())
            && starts.windows(2).all(|w| w[0] < w[1]);
        valid.then_some(Self { starts, vectors })
    }

    fn row(&self, i: usize) -> &[Vec3] {
        &self.vectors[self.starts[i]..self.starts[i + 1]]
    }

    fn rows(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when `Σ |v_i − t̄|²` provably exceeds `limit` for every assignment.
    pub fn exceeds(&self, limit: f64) -> bool {
        let n = self.rows() as f64;
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for i in 0..self.rows() {
            for k in 0..3 {
                let (mut a, mut b) = (f64::INFINITY, f64::NEG_INFINITY);
                for v in self.row(i) {
                    a = min_with(a, v[k]);
                    b = max_with(b, v[k]);
                }
                lo[k] += a;
                hi[k] += b;
            }
        }
        let (lo, hi) = (lo.map(|x| x / n), hi.map(|x| x / n));
        // A mean farther than √limit from every vector of one row gets more than `limit` from
        // that row alone: only the small boxes around the vectors of the row with the fewest
        // need a proof, and on such a box the bound is nearly tight.
        let Some(sparsest) = (0..self.rows()).min_by_key(|&i| self.row(i).len()) else {
            return false;
        };
        let r = limit.sqrt();
        let mut budget = BUDGET;
        for v in self.row(sparsest) {
            let b_lo: Vec3 = std::array::from_fn(|k| lo[k].max(v[k] - r));
            let b_hi: Vec3 = std::array::from_fn(|k| hi[k].min(v[k] + r));
            if (0..3).any(|k| b_lo[k] > b_hi[k]) {
                continue; // the mean cannot lie there
            }
            if !self.box_exceeds((b_lo, b_hi), limit, &mut budget) {
                return false;
            }
        }
        true
    }

    /// True when, for every assignment, some row's vector is farther than `reach` from the
    /// vectors' mean: no point lies within `reach` of a vector of every row. (A fit needs
    /// every row within stol of the mean, so this rules a candidate out of a fit search,
    /// where the sum above cannot: one site far off and the rest in place.) The mean must lie
    /// within `reach` of a vector of the row with the fewest; the cube of half-width `reach`
    /// around each of those is narrowed row by row ([`RowVectors::narrows_to_nothing`]).
    ///
    /// `mean` says whose mean it is: [`Mean::OfTheseRows`] when the rows are all of a
    /// candidate's (its whole table), [`Mean::OfMoreRows`] when they are some of them (a
    /// stage of its table, whose mean also counts rows not built yet).
    pub fn apart_beyond(&self, reach: f64, mean: Mean) -> bool {
        let Some(sparsest) = (0..self.rows()).min_by_key(|&i| self.row(i).len()) else {
            return false;
        };
        self.row(sparsest).iter().all(|v| {
            let lo: Vec3 = std::array::from_fn(|k| v[k] - reach);
            let hi: Vec3 = std::array::from_fn(|k| v[k] + reach);
            self.narrows_to_nothing((lo, hi), reach, mean)
        })
    }

    /// Whether no point of the box `lo..hi` lies within `reach` of a vector of every row
    /// (and, with [`Mean::OfTheseRows`], is their mean). Row by row: a row none of whose
    /// vectors comes within `reach` of the box proves there is none; a row with just one
    /// that does confines such a point to that vector's cube of half-width `reach`, so the
    /// box shrinks to its part in that cube (a row with more leaves it as it is, which keeps
    /// the test one short scan per row).
    ///
    /// When the point is the rows' own mean, a fit takes each row's vector among those near
    /// the box, so the mean also lies between the averages of those vectors' smallest and
    /// largest components, axis by axis: the box shrinks to that too, and the rows are read
    /// again while it shrinks by more than a tenth of `reach`. One site far off among many
    /// in place is caught this way: the others pin the mean to where they agree, out of the
    /// far site's reach, although each of them alone would let it move by `reach`.
    fn narrows_to_nothing(&self, (mut lo, mut hi): (Vec3, Vec3), reach: f64, mean: Mean) -> bool {
        if mean == Mean::OfMoreRows {
            return self
                .narrowing_pass::<false>((&mut lo, &mut hi), reach)
                .is_none();
        }
        let n = self.rows() as f64;
        // Far beyond the rounding of the sums below (about n ulps of the vectors).
        let slack = 1e-9 * reach;
        for _ in 0..MEAN_PASSES {
            let Some((sum_lo, sum_hi)) = self.narrowing_pass::<true>((&mut lo, &mut hi), reach)
            else {
                return true;
            };
            let mut shrunk = false;
            for k in 0..3 {
                let (l, h) = (sum_lo[k] / n - slack, sum_hi[k] / n + slack);
                shrunk |= l > lo[k] + 0.1 * reach || h < hi[k] - 0.1 * reach;
                lo[k] = max_with(lo[k], l);
                hi[k] = min_with(hi[k], h);
            }
            if (0..3).any(|k| lo[k] > hi[k]) {
                return true;
            }
            if !shrunk {
                return false;
            }
        }
        false
    }

    /// One reading of the rows for [`RowVectors::narrows_to_nothing`], shrinking the box:
    /// `None` when some row has no vector near it; else, with `SUMS`, the sums over the rows
    /// of the smallest and of the largest components of their vectors near it.
    fn narrowing_pass<const SUMS: bool>(
        &self,
        (lo, hi): (&mut Vec3, &mut Vec3),
        reach: f64,
    ) -> Option<(Vec3, Vec3)> {
        let r2 = reach * reach;
        let (mut sum_lo, mut sum_hi) = ([0.0; 3], [0.0; 3]);
        for i in 0..self.rows() {
            let (mut count, mut only) = (0, [0.0; 3]);
            let (mut row_lo, mut row_hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
            for w in self.row(i) {
                if box_distance2(w, lo, hi) <= r2 {
                    count += 1;
                    only = *w;
                    if !SUMS && count == 2 {
                        break; // more than one: this row leaves the box as it is
                    }
                    if SUMS {
                        for k in 0..3 {
                            row_lo[k] = min_with(row_lo[k], w[k]);
                            row_hi[k] = max_with(row_hi[k], w[k]);
                        }
                    }
                }
            }
            if count == 0 {
                return None;
            }
            if count == 1 {
                for k in 0..3 {
                    lo[k] = max_with(lo[k], only[k] - reach);
                    hi[k] = min_with(hi[k], only[k] + reach);
                }
            }
            if SUMS {
                for k in 0..3 {
                    sum_lo[k] += row_lo[k];
                    sum_hi[k] += row_hi[k];
                }
            }
        }
        Some((sum_lo, sum_hi))
    }

    /// True when `Σ |v_i − t|²` provably exceeds `limit` for every assignment and every `t`
    /// in the box `lo..hi`.
    pub fn exceeds_on_box(&self, lo: Vec3, hi: Vec3, limit: f64) -> bool {
        let mut budget = BUDGET;
        self.box_exceeds((lo, hi), limit, &mut budget)
    }

    /// Whether every point of the box has a bound above `limit` (splitting the box along
    /// its longest side while the budget lasts).
    fn box_exceeds(&self, (lo, hi): (Vec3, Vec3), limit: f64, budget: &mut usize) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let mut total = 0.0;
        for i in 0..self.rows() {
            let mut best = f64::INFINITY;
            for v in self.row(i) {
                best = min_with(best, box_distance2(v, &lo, &hi));
            }
            total += best;
            if total > limit {
                return true;
            }
        }
        let axis = (0..3)
            .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
            .unwrap_or(0);
        if hi[axis] - lo[axis] <= 0.0 {
            return false;
        }
        let mid = 0.5 * (lo[axis] + hi[axis]);
        let (mut hi1, mut lo2) = (hi, lo);
        hi1[axis] = mid;
        lo2[axis] = mid;
        self.box_exceeds((lo, hi1), limit, budget) && self.box_exceeds((lo2, hi), limit, budget)
    }
}

/// The squared distance from `v` to the box `lo..hi`.
#[inline]
fn box_distance2(v: &Vec3, lo: &Vec3, hi: &Vec3) -> f64 {
    let mut d = 0.0;
    for k in 0..3 {
        let e = if v[k] < lo[k] {
            lo[k] - v[k]
        } else if v[k] > hi[k] {
            v[k] - hi[k]
        } else {
            0.0
        };
        d += e * e;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest `value` over every choice of one vector per row (every assignment of a
    /// tiny table), each choice with its vectors' mean.
    fn brute_min(rows: &[Vec<Vec3>], value: &impl Fn(&[Vec3], Vec3) -> f64) -> f64 {
        fn rec(
            rows: &[Vec<Vec3>],
            chosen: &mut Vec<Vec3>,
            value: &impl Fn(&[Vec3], Vec3) -> f64,
            best: &mut f64,
        ) {
            if chosen.len() == rows.len() {
                let n = chosen.len() as f64;
                let m: Vec3 = std::array::from_fn(|k| chosen.iter().map(|v| v[k]).sum::<f64>() / n);
                *best = best.min(value(chosen, m));
                return;
            }
            for v in &rows[chosen.len()] {
                chosen.push(*v);
                rec(rows, chosen, value, best);
                chosen.pop();
            }
        }
        let mut best = f64::INFINITY;
        rec(rows, &mut Vec::new(), value, &mut best);
        best
    }

    /// Numbers in [0, 1) from a linear congruential sequence.
    fn lcg(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn distance2(v: &Vec3, m: Vec3) -> f64 {
        (0..3).map(|k| (v[k] - m[k]).powi(2)).sum()
    }

    /// The smallest Σ|v_i − mean|² over every assignment.
    fn brute(rows: &[Vec<Vec3>]) -> f64 {
        brute_min(rows, &|c, m| c.iter().map(|v| distance2(v, m)).sum())
    }

    /// The smallest largest distance of a row's vector from the vectors' mean.
    fn brute_largest(rows: &[Vec<Vec3>]) -> f64 {
        brute_min(rows, &|c, m| {
            c.iter().map(|v| distance2(v, m).sqrt()).fold(0.0, f64::max)
        })
    }

    #[test]
    fn never_exceeds_the_true_minimum_and_dismisses_poor_tables() {
        let mut uniform = lcg(7);
        let mut rnd = || uniform() * 4.0 - 2.0;
        let mut dismissed = 0;
        for _ in 0..300 {
            let rows: Vec<Vec<Vec3>> = (0..5)
                .map(|_| (0..3).map(|_| [rnd(), rnd(), rnd()]).collect())
                .collect();
            let flat: Vec<Vec3> = rows.iter().flatten().copied().collect();
            let starts: Vec<usize> = (0..=5).map(|i| 3 * i).collect();
            let table = RowVectors::new(&starts, &flat).unwrap();
            let truth = brute(&rows);
            // Just below the truth the bound must never claim more.
            assert!(!table.exceeds(truth * (1.0 - 1e-12)), "{truth}");
            if table.exceeds(truth * 0.25) {
                dismissed += 1;
            }
        }
        assert!(dismissed > 100, "the bound is too weak: {dismissed}/300");
        // A row with no allowed vector has no table.
        assert!(RowVectors::new(&[0, 1, 1], &[[0.0; 3]]).is_none());
    }

    #[test]
    fn apart_beyond_never_rules_out_a_reachable_fit_and_catches_one_far_row() {
        let mut uniform = lcg(11);
        let mut rnd = || uniform() * 2.0 - 1.0;
        let mut ruled_out = 0;
        for round in 0..400 {
            // Rows near the origin, one of them (in half the rounds) far off.
            let rows: Vec<Vec<Vec3>> = (0..5)
                .map(|i| {
                    let far = if round % 2 == 0 && i == 3 { 3.0 } else { 0.0 };
                    (0..1 + (round + i) % 3)
                        .map(|_| [far + 0.3 * rnd(), 0.3 * rnd(), 0.3 * rnd()])
                        .collect()
                })
                .collect();
            let flat: Vec<Vec3> = rows.iter().flatten().copied().collect();
            let mut starts = vec![0];
            for r in &rows {
                starts.push(starts.last().unwrap() + r.len());
            }
            let table = RowVectors::new(&starts, &flat).unwrap();
            let truth = brute_largest(&rows);
            for reach in [0.1, 0.5, 1.0, 2.0, 4.0] {
                let pinned = table.apart_beyond(reach, Mean::OfTheseRows);
                let loose = table.apart_beyond(reach, Mean::OfMoreRows);
                // Knowing whose mean it is can only prove more.
                assert!(pinned || !loose, "round {round}, reach {reach}");
                if pinned {
                    assert!(truth > reach, "round {round}: {truth} within {reach}");
                    ruled_out += 1;
                }
            }
            if round % 2 == 0 {
                assert!(
                    table.apart_beyond(1.0, Mean::OfTheseRows),
                    "round {round}: the far row is missed"
                );
            }
        }
        assert!(ruled_out > 400, "{ruled_out}");
    }

    /// Many rows in place pin their mean: one row whose vectors are all about twice `reach`
    /// from them cannot come within `reach` of it, although each row alone (and so the
    /// narrowing row by row) would let the mean move by `reach` towards it. Proved only when
    /// these rows are all the mean's; a stage of a table, whose mean counts rows not built
    /// yet, proves nothing.
    #[test]
    fn apart_beyond_pins_the_mean_of_a_whole_table() {
        let mut uniform = lcg(5);
        let mut jitter = || (uniform() * 2.0 - 1.0) * 0.02;
        for rows_in_place in [8usize, 40, 200] {
            // In-place rows: their own site near the origin, and a neighbour's image beyond
            // reach of the cube around it (so each of them narrows the box).
            let mut rows: Vec<Vec<Vec3>> = (0..rows_in_place)
                .map(|_| vec![[jitter(), jitter(), jitter()], [2.5, 2.5, jitter()]])
                .collect();
            // The far row: partners only at nearly twice the reach along an axis (within
            // reach of the cube that the rows in place narrow the mean to).
            rows.push(vec![[1.95, jitter(), jitter()], [-1.95, jitter(), 0.0]]);
            let flat: Vec<Vec3> = rows.iter().flatten().copied().collect();
            let mut starts = vec![0];
            for r in &rows {
                starts.push(starts.last().unwrap() + r.len());
            }
            let table = RowVectors::new(&starts, &flat).unwrap();
            if rows_in_place == 8 {
                // Every choice (2⁹) tried: none fits.
                assert!(brute_largest(&rows) > 1.0);
            }
            assert!(
                table.apart_beyond(1.0, Mean::OfTheseRows),
                "{rows_in_place} rows in place"
            );
            assert!(!table.apart_beyond(1.0, Mean::OfMoreRows));
            // With one of the far row's partners within reach of the origin, no proof.
            let mut near = rows.clone();
            near.last_mut().unwrap().push([0.9, 0.0, 0.0]);
            let flat: Vec<Vec3> = near.iter().flatten().copied().collect();
            starts.pop();
            starts.push(flat.len());
            let table = RowVectors::new(&starts, &flat).unwrap();
            assert!(!table.apart_beyond(1.0, Mean::OfTheseRows));
        }
    }

    #[test]
    fn apart_beyond_narrows_the_mean_row_by_row() {
        // Each row's vector is within 1 of the cube around the first row's, but no point is
        // within 1 of all three: the second row confines the mean to x ≥ 0.5, where the
        // third cannot reach.
        let rows = vec![
            vec![[0.0, 0.0, 0.0]],
            vec![[1.5, 0.0, 0.0]],
            vec![[-0.8, 0.0, 0.0]],
        ];
        let flat: Vec<Vec3> = rows.iter().flatten().copied().collect();
        let table = RowVectors::new(&[0, 1, 2, 3], &flat).unwrap();
        assert!(brute_largest(&rows) > 1.0);
        assert!(table.apart_beyond(1.0, Mean::OfTheseRows));
        // With a second vector in the second row that reaches the third, no proof.
        let flat = [
            [0.0, 0.0, 0.0],
            [1.5, 0.0, 0.0],
            [-0.5, 0.0, 0.0],
            [-0.8, 0.0, 0.0],
        ];
        let table = RowVectors::new(&[0, 1, 3, 4], &flat).unwrap();
        assert!(!table.apart_beyond(1.0, Mean::OfTheseRows));
    }
}
