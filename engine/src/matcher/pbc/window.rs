//! The sorted window over the first fractional coordinate through which the subset test and
//! the shortest-vector tables find a point's possible partners.

use crate::linalg::Vec3;

/// The columns whose first LLL-fractional coordinate can lie within a tolerance of a given
/// value (periodically), found by binary search in the columns sorted by that coordinate.
///
/// Why by hand: it only narrows the pairs the exact per-axis test then sees. The window is
/// widened by 1e-9 beyond the tolerance, far more than the rounding of wrapping a coordinate
/// into [0, 1), so every pair the exact test would accept is among the candidates and the
/// table is the same as checking all pairs; rows then cost O(window) instead of O(n).
pub(super) struct ColumnWindow {
    /// Wrapped coordinates, sorted, and the column of each.
    keys: Vec<f64>,
    cols: Vec<usize>,
    /// Half-width of the window, or `None` for every column.
    half: Option<f64>,
}

impl ColumnWindow {
    pub(super) fn new(l2: &[Vec3], tol: Option<f64>) -> Self {
        let half = tol.map(|t| t + 1e-9).filter(|h| *h < 0.5);
        let mut sorted: Vec<(f64, usize)> = l2
            .iter()
            .enumerate()
            .map(|(j, p)| (p[0] - crate::numeric::floor(p[0]), j))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Self {
            keys: sorted.iter().map(|p| p.0).collect(),
            cols: sorted.iter().map(|p| p.1).collect(),
            half,
        }
    }

    /// Fills `out` with the candidate columns for a row at coordinate `x` (each once, in no
    /// particular order: every pair is computed on its own).
    pub(super) fn near(&self, x: f64, out: &mut Vec<usize>) {
        match self.half {
            Some(half) => self.near_within(x, half, out),
            None => {
                out.clear();
                out.extend(0..self.cols.len());
            }
        }
    }

    /// Fills `out` with the columns whose coordinate lies within `half` (below 0.5) of `x`,
    /// periodically.
    pub(super) fn near_within(&self, x: f64, half: f64, out: &mut Vec<usize>) {
        out.clear();
        if !x.is_finite() || half.is_nan() || half >= 0.5 {
            out.extend(0..self.cols.len());
            return;
        }
        let c = x - crate::numeric::floor(x);
        let mut take = |lo: f64, hi: f64| {
            let start = self.keys.partition_point(|&k| k < lo);
            let end = start + self.keys[start..].partition_point(|&k| k <= hi);
            out.extend_from_slice(&self.cols[start..end]);
        };
        let (lo, hi) = (c - half, c + half);
        take(lo.max(0.0), hi.min(1.0));
        if lo < 0.0 {
            take(lo + 1.0, 1.0);
        }
        if hi > 1.0 {
            take(0.0, hi - 1.0);
        }
        // The ranges are disjoint (the window is narrower than the period): no duplicates.
    }
}
