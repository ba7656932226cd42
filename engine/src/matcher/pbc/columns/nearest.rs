//! A table row's nearest entry found without building the row: the query looks at the
//! columns within a small ball around the point before the whole tolerance box.
//!
//! A candidate near a match gives every row its own nearest column (the assignment is then
//! the optimum, see [`crate::matcher::assignment::unique_nearest`]); its distances need only
//! each row's nearest entry. At AtomWorld's stol (0.5) a row's tolerance box reaches one
//! site spacing along each axis; a ball of half a spacing has a box an eighth of that, with
//! a slab of the column window half as wide, and usually holds the row's partner alone.

use super::{cart_of_wrapped, wrap, Columns};
use crate::linalg::Vec3;
use crate::matcher::pbc::rule::PairRule;
use crate::matcher::pbc::FORBIDDEN;

/// A row's nearest entry, as the row of a table would hold it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NearestEntry {
    /// The column.
    pub col: usize,
    /// Its squared length (Å²).
    pub d2: f64,
    /// The entry's vector (Å), from the row point to the column point.
    pub vector: Vec3,
}

/// Buffers of [`Columns::own_nearest`], reused from candidate to candidate.
#[derive(Default)]
pub struct NearestWork {
    /// Each row's nearest entry, by row.
    pub entries: Vec<NearestEntry>,
    /// Columns taken, one bit each.
    taken: Vec<u64>,
    /// The column window's buffer.
    near: Vec<usize>,
}

impl Columns {
    /// Each point of `points` (a row each)'s nearest entry into `work.entries`, when every
    /// row has one ([`Columns::nearest_entry`], with `radius` and `delta`) and no two rows
    /// share its column: then the assignment of each row to that column is the optimum of
    /// the table these rows would make, and the only assignment within `delta` of it. The
    /// rows are measured in `order` (every row once), which stops at the first that fails.
    pub fn own_nearest(
        &self,
        points: &[Vec3],
        order: &[usize],
        rule: &impl PairRule,
        (radius, delta): (f64, f64),
        work: &mut NearestWork,
    ) -> bool {
        let NearestWork {
            entries,
            taken,
            near,
        } = work;
        let blank = NearestEntry {
            col: usize::MAX,
            d2: 0.0,
            vector: [0.0; 3],
        };
        entries.clear();
        entries.resize(points.len(), blank);
        taken.clear();
        taken.resize(self.l2.len().div_ceil(64), 0);
        let mut row = |i: usize, l1: Vec3| -> bool {
            let Some(e) = self.nearest_entry((rule, i), l1, radius, delta, near) else {
                return false;
            };
            let (word, bit) = (e.col / 64, 1u64 << (e.col % 64));
            match taken.get_mut(word) {
                Some(w) if *w & bit == 0 => *w |= bit,
                _ => return false,
            }
            entries[i] = e;
            true
        };
        if order.len() != points.len() {
            return false;
        }
        // Two rows at a time through the fused products, as tables take them.
        for pair in order.chunks(2) {
            let ok = match *pair {
                [a, b] if a < points.len() && b < points.len() => {
                    let (la, lb) = self.inv.apply_pair(points[a], points[b]);
                    row(a, la) && row(b, lb)
                }
                [a] if a < points.len() => row(a, self.inv.apply(points[a])),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        entries.iter().all(|e| e.col != usize::MAX)
    }

    /// The nearest entry of row `i` at LLL-fractional coordinates `l1`, as the row of a
    /// table would hold it, when it is the row's only entry within `delta` (Å²) of the
    /// smallest squared length (`delta` 0: the only one at it) and its own shortest image
    /// is not tied (with [`Columns::noting_image_ties`]). `None` when another entry is that
    /// close, or the row has no entry.
    ///
    /// First the entries whose vector can be at most `radius` (Å) long are measured (a box
    /// of the ball's extent along each LLL axis, within the tolerance box); when the nearest
    /// of them is short enough that every entry within `delta` of it lies in the ball, the
    /// answer is settled. Otherwise the whole tolerance box is measured, as the table does.
    pub fn nearest_entry(
        &self,
        (rule, i): (&impl PairRule, usize),
        l1: Vec3,
        radius: f64,
        delta: f64,
        near: &mut Vec<usize>,
    ) -> Option<NearestEntry> {
        // The row point as a table row measures from it, for both queries.
        let w1 = wrap(&l1);
        let c1 = cart_of_wrapped(&w1, &self.lat);
        if let Some(ball) = self.ball_box(radius) {
            let half = ball[self.window.axis()] + 1e-9;
            let all_allowed = self.candidates(
                (rule, i),
                |w, out| w.near_in_box(&l1, half, ball, self.tol_order, out),
                near,
            );
            let found = self.nearest_of(near, (rule, i, all_allowed), (&w1, &c1));
            // An entry within `delta` of the nearest is at most `radius` long, so in the box.
            if let Some((best, second)) = found {
                if best.d2 + delta <= radius * radius {
                    return (second - best.d2 > delta).then_some(best);
                }
            }
        }
        let all_allowed = self.candidates(
            (rule, i),
            |w, out| w.near_in_tolerance(&l1, self.tol, self.tol_order, out),
            near,
        );
        let (best, second) = self.nearest_of(near, (rule, i, all_allowed), (&w1, &c1))?;
        (second - best.d2 > delta).then_some(best)
    }

    /// The per-axis half-widths (LLL-fractional) of a box holding every point within
    /// `radius` (Å) of the centre, cut to the tolerance: a vector with LLL coordinate `x_k`
    /// is at least `|x_k| / |b_k|` long (`b_k` the dual basis vector). A margin far above
    /// rounding keeps every such point inside. `None` when the box would not be narrower
    /// than half a cell along every axis.
    fn ball_box(&self, radius: f64) -> Option<Vec3> {
        let mut ball = [0.0; 3];
        for (k, b) in ball.iter_mut().enumerate() {
            let w = self.axis_weight[k];
            if w.is_nan() || w <= 0.0 {
                return None;
            }
            let reach = radius / w.sqrt() * (1.0 + 1e-9) + 1e-9;
            *b = match self.tol {
                Some(t) if t[k] < reach => t[k],
                _ => reach,
            };
            if b.is_nan() || *b >= 0.5 {
                return None;
            }
        }
        Some(ball)
    }

    /// The nearest of the columns `near` lists for row `i` at wrapped LLL-fractional
    /// coordinates `w1` (Cartesian `c1`; those `rule` forbids skipped unless
    /// `all_allowed`), measured as [`Columns::append_rows`] measures them, and the
    /// second smallest squared length (infinite without one). An image tie of the nearest
    /// counts as a second entry at its length.
    fn nearest_of(
        &self,
        near: &[usize],
        (rule, i, all_allowed): (&impl PairRule, usize, bool),
        (w1, c1): (&Vec3, &Vec3),
    ) -> Option<(NearestEntry, f64)> {
        let (w2, c2) = self.wrapped();
        // As `unique_nearest` reads a row: a strictly smaller value takes the lead, an equal
        // one ties it, a NaN is passed over.
        let mut best: Option<(NearestEntry, bool)> = None;
        let mut least = f64::INFINITY;
        let mut second = f64::INFINITY;
        for &j in near {
            if !all_allowed && rule.forbidden(i, j) {
                continue;
            }
            let (d2, vector, tied) = self.entry((w2, c2), j, (w1, c1));
            if d2 < least {
                second = least;
                least = d2;
                best = Some((NearestEntry { col: j, d2, vector }, tied));
            } else if d2 < second {
                second = d2;
            }
        }
        let (entry, tied) = best?;
        if entry.d2 >= FORBIDDEN {
            return None;
        }
        if tied {
            second = second.min(entry.d2);
        }
        Some((entry, second))
    }
}
