//! A periodic grid over fractional coordinates, to find the points near a place without
//! comparing against every point.

use crate::grouped::Grouped;
use crate::linalg::{py_mod1, Vec3};

/// Points bucketed by their wrapped fractional coordinates on a periodic grid whose cells
/// are at least `reach` wide per axis, so that every point within `reach` of a place (per
/// axis, periodically) is in one of the few cells around it.
///
/// Why by hand: it only narrows the points an exact comparison then sees (a superset by
/// construction), on a grid rebuilt per species and cell; a k-d tree crate would answer
/// another metric's question and then need the same exact check.
pub(super) struct Buckets {
    reach: Vec3,
    cells: [usize; 3],
    /// The points of each cell.
    by_cell: Grouped,
}

/// Most cells per axis.
const MAX_CELLS: usize = 64;

impl Buckets {
    pub(super) fn new(points: &[Vec3], reach: Vec3) -> Self {
        // At most (2 (⌊∛n⌋ + 1))³ cells for n points, about eight per point (a few dozen
        // for the smallest groups): setting up more costs more than they save.
        let mut most = 1;
        while most * most * most <= points.len() && most < MAX_CELLS {
            most += 1;
        }
        let most = 2 * most;
        let cells = reach.map(|r| {
            if r > 0.0 && r < 0.5 {
                ((1.0 / r) as usize).clamp(1, most)
            } else {
                1
            }
        });
        let total = cells[0] * cells[1] * cells[2];
        let index: Vec<usize> = points.iter().map(|p| Self::cell_of(p, cells)).collect();
        Self {
            reach,
            cells,
            by_cell: Grouped::new(&index, total),
        }
    }

    /// The cell along one axis of wrapped coordinate `w` (in [0, 1]).
    fn axis_cell(w: f64, n: usize) -> usize {
        ((w * n as f64) as usize).min(n - 1)
    }

    fn cell_of(p: &Vec3, cells: [usize; 3]) -> usize {
        let [a, b, c] = std::array::from_fn(|k| Self::axis_cell(py_mod1(p[k]), cells[k]));
        (a * cells[1] + b) * cells[2] + c
    }

    /// Whether `accept(j)` holds for some point `j` among those that may lie within the
    /// grid's `reach` of `at` (wrapped into [0, 1)) on every axis, periodically; stops at the
    /// first.
    pub(super) fn any_near(&self, at: Vec3, mut accept: impl FnMut(usize) -> bool) -> bool {
        let reach = self.reach;
        // Per axis, the cells the interval [at - reach, at + reach] meets (all of them when
        // it wraps onto itself).
        let ranges: [(i64, i64); 3] = std::array::from_fn(|k| {
            let n = self.cells[k] as i64;
            let lo = crate::numeric::floor((at[k] - reach[k]) * n as f64) as i64;
            let hi = crate::numeric::floor((at[k] + reach[k]) * n as f64) as i64;
            if hi - lo + 1 >= n {
                (0, n - 1)
            } else {
                (lo, hi)
            }
        });
        // A range of fewer than n cells around a place in [0, 1] lies within one period
        // on either side of the grid.
        let wrap = |x: i64, k: usize| {
            let n = self.cells[k] as i64;
            (if x < 0 {
                x + n
            } else if x >= n {
                x - n
            } else {
                x
            }) as usize
        };
        for a in ranges[0].0..=ranges[0].1 {
            for b in ranges[1].0..=ranges[1].1 {
                for c in ranges[2].0..=ranges[2].1 {
                    let cell =
                        (wrap(a, 0) * self.cells[1] + wrap(b, 1)) * self.cells[2] + wrap(c, 2);
                    if self.by_cell.group(cell).iter().any(|&j| accept(j)) {
                        return true;
                    }
                }
            }
        }
        false
    }
}
