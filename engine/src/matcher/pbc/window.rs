//! The sorted window over one fractional coordinate through which the subset test and the
//! shortest-vector tables find a point's possible partners.

use crate::linalg::Vec3;
use crate::numeric::{max_with, min_with};

/// The columns whose coordinate along one axis can lie within a tolerance of a given value
/// (periodically), found by binary search in the columns sorted by that coordinate. The axis
/// is the one with the tightest tolerance, so the window holds the fewest columns (in a long
/// cell a few percent of them rather than a third).
///
/// Why by hand: it only narrows the pairs the exact per-axis test then sees. The window is
/// widened by 1e-9 beyond the tolerance, far more than the rounding of wrapping a coordinate
/// into [0, 1), so every pair the exact test would accept is among the candidates and the
/// table is the same as checking all pairs; rows then cost O(window) instead of O(n).
pub(super) struct ColumnWindow {
    /// The axis the columns are sorted along.
    axis: usize,
    /// Wrapped coordinates, sorted, and the column of each.
    keys: Vec<f64>,
    cols: Vec<usize>,
    /// Half-width of the window, or `None` for every column.
    half: Option<f64>,
}

impl ColumnWindow {
    /// A window over `l2` for the per-axis tolerance `tol` (`None`: every column is near).
    pub(super) fn new(l2: &[Vec3], tol: Option<Vec3>) -> Self {
        // The tightest axis (the first of equals). A NaN tolerance elsewhere is never picked;
        // one on the first axis is, and then the window holds every column (`half` is None).
        let axis = tol.map_or(0, |t| {
            (1..3).fold(0, |a, k| if t[k] < t[a] { k } else { a })
        });
        let half = tol.map(|t| t[axis] + 1e-9).filter(|h| *h < 0.5);
        let mut sorted: Vec<(f64, usize)> = l2
            .iter()
            .enumerate()
            .map(|(j, p)| (p[axis] - crate::numeric::floor(p[axis]), j))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Self {
            axis,
            keys: sorted.iter().map(|p| p.0).collect(),
            cols: sorted.iter().map(|p| p.1).collect(),
            half,
        }
    }

    /// This window split by class (`classes[j]` for column `j`): window `c` holds the
    /// columns of class `c` alone, along the same axis with the same width. Classes beyond
    /// `count` are left out.
    pub(super) fn split(&self, classes: &[u32], count: usize) -> Vec<ColumnWindow> {
        let class = |j: usize| classes.get(j).map_or(usize::MAX, |&c| c as usize);
        let mut sizes = vec![0usize; count];
        for &j in &self.cols {
            if let Some(n) = sizes.get_mut(class(j)) {
                *n += 1;
            }
        }
        let mut parts: Vec<ColumnWindow> = sizes
            .iter()
            .map(|&n| ColumnWindow {
                axis: self.axis,
                keys: Vec::with_capacity(n),
                cols: Vec::with_capacity(n),
                half: self.half,
            })
            .collect();
        // Taken in the sorted order, each part is sorted too.
        for (&key, &j) in self.keys.iter().zip(&self.cols) {
            if let Some(w) = parts.get_mut(class(j)) {
                w.keys.push(key);
                w.cols.push(j);
            }
        }
        parts
    }

    /// The axis the window narrows: a per-axis test of the candidates best looks at the
    /// other two first.
    pub(super) fn axis(&self) -> usize {
        self.axis
    }

    /// Fills `out` with the candidate columns for a row at point `p` (each once, in no
    /// particular order: every pair is computed on its own).
    pub(super) fn near(&self, p: &Vec3, out: &mut Vec<usize>) {
        match self.half {
            Some(half) => self.near_within(p, half, out),
            None => {
                out.clear();
                out.extend_from_slice(&self.cols);
            }
        }
    }

    /// Fills `out` with the columns whose coordinate along the window's axis lies within
    /// `half` (below 0.5) of `p`'s, periodically.
    pub(super) fn near_within(&self, p: &Vec3, half: f64, out: &mut Vec<usize>) {
        out.clear();
        let x = p[self.axis];
        if !x.is_finite() || half.is_nan() || half >= 0.5 {
            out.extend_from_slice(&self.cols);
            return;
        }
        let c = x - crate::numeric::floor(x);
        let mut take = |lo: f64, hi: f64| {
            let start = self.keys.partition_point(|&k| k < lo);
            let end = start + self.keys[start..].partition_point(|&k| k <= hi);
            out.extend_from_slice(&self.cols[start..end]);
        };
        let (lo, hi) = (c - half, c + half);
        take(max_with(0.0, lo), min_with(1.0, hi));
        if lo < 0.0 {
            take(lo + 1.0, 1.0);
        }
        if hi > 1.0 {
            take(0.0, hi - 1.0);
        }
        // The ranges are disjoint (the window is narrower than the period): no duplicates.
    }
}
