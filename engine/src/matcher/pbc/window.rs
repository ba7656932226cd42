//! The sorted window over one fractional coordinate through which the subset test and the
//! shortest-vector tables find a point's possible partners.

use crate::linalg::Vec3;
use crate::numeric::{distance_to_integer, max_with, min_with, total_order_key};

/// The columns whose coordinate along one axis can lie within a tolerance of a given value
/// (periodically), found by binary search in the columns sorted by that coordinate. The axis
/// is the one with the tightest tolerance, so the window holds the fewest columns (in a long
/// cell a few percent of them rather than a third).
///
/// Why by hand: it only narrows the pairs the exact per-axis test then sees. The window is
/// widened by 1e-9 beyond the tolerance, far more than the rounding of wrapping a coordinate
/// into [0, 1), so every pair the exact test would accept is among the candidates and the
/// table is the same as checking all pairs; rows then cost O(window) instead of O(n).
#[derive(Default)]
pub(super) struct ColumnWindow {
    /// The axis the columns are sorted along.
    axis: usize,
    /// The columns sorted by their wrapped coordinate along `axis`. One array (one
    /// allocation per window, a window being made per lattice mapping), which the per-axis
    /// test of the candidates reads in sequence.
    entries: Vec<Entry>,
    /// Half-width of the window, or `None` for every column.
    half: Option<f64>,
}

/// One column of a window.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Its coordinate along the window's axis, wrapped into [0, 1).
    key: f64,
    /// Its point (unwrapped).
    point: Vec3,
    /// Its index among the columns.
    col: usize,
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
        let mut entries: Vec<Entry> = l2
            .iter()
            .enumerate()
            .map(|(col, &point)| Entry {
                key: point[axis] - crate::numeric::floor(point[axis]),
                point,
                col,
            })
            .collect();
        // In `total_cmp`'s order, then by column: a total order, which any sort gives.
        entries.sort_unstable_by_key(|e| (total_order_key(e.key), e.col));
        Self {
            axis,
            entries,
            half,
        }
    }

    /// This window split by class (`classes[j]` for column `j`): part `c` holds the
    /// columns of class `c` alone, along the same axis with the same width. Classes beyond
    /// `count` are left out.
    pub(super) fn split(&self, classes: &[u32], count: usize) -> ClassWindows {
        let class = |j: usize| classes.get(j).map_or(usize::MAX, |&c| c as usize);
        // Counts to starts, then each column in sorted order into its class's range (so each
        // part is sorted too): one set of lists for all the parts.
        let mut starts = vec![0usize; count + 1];
        for e in &self.entries {
            let c = class(e.col);
            if c < count {
                starts[c + 1] += 1;
            }
        }
        for c in 0..count {
            starts[c + 1] += starts[c];
        }
        let total = starts[count];
        let blank = Entry {
            key: 0.0,
            point: [0.0; 3],
            col: 0,
        };
        let mut entries = vec![blank; total];
        // starts[c] is class c's next free slot while filling, and its end afterwards: the
        // list shifted by one is the starts again.
        for e in &self.entries {
            let c = class(e.col);
            if c < count {
                entries[starts[c]] = *e;
                starts[c] += 1;
            }
        }
        starts.rotate_right(1);
        starts[0] = 0;
        ClassWindows {
            all: ColumnWindow {
                axis: self.axis,
                entries,
                half: self.half,
            },
            starts,
        }
    }

    /// The axis the window narrows: a per-axis test of the candidates best looks at the
    /// other two first.
    pub(super) fn axis(&self) -> usize {
        self.axis
    }

    /// The whole window as a [`WindowPart`].
    pub(super) fn part(&self) -> WindowPart<'_> {
        WindowPart {
            axis: self.axis,
            entries: &self.entries,
            half: self.half,
        }
    }

    /// See [`WindowPart::near`].
    #[cfg(test)]
    pub(super) fn near(&self, p: &Vec3, out: &mut Vec<usize>) {
        self.part().near(p, out);
    }

    /// Whether `accept` holds for one of the columns [`ColumnWindow::near`] lists for `p`
    /// (asked in the window's order, up to the first it accepts).
    pub(super) fn any_near(&self, p: &Vec3, mut accept: impl FnMut(usize) -> bool) -> bool {
        let part = self.part();
        let (spans, count) = part.spans(p, self.half.unwrap_or(0.5));
        spans[..count].iter().any(|&(start, hi)| {
            // A NaN key ends the span, as it ends the sorted keys.
            let mut span = self.entries[start..].iter().take_while(|e| e.key <= hi);
            span.any(|e| accept(e.col))
        })
    }
}

/// A [`ColumnWindow`] split by class ([`ColumnWindow::split`]): the parts' sorted columns
/// one after another in one window, part `c` at `starts[c]..starts[c + 1]`.
#[derive(Default)]
pub(super) struct ClassWindows {
    all: ColumnWindow,
    starts: Vec<usize>,
}

impl ClassWindows {
    /// Whether there are no parts (the columns were not split).
    pub(super) fn is_empty(&self) -> bool {
        self.starts.len() < 2
    }

    /// Part `c`: the window over the columns of class `c`.
    pub(super) fn get(&self, c: usize) -> Option<WindowPart<'_>> {
        let range = *self.starts.get(c)?..*self.starts.get(c + 1)?;
        Some(WindowPart {
            axis: self.all.axis,
            entries: self.all.entries.get(range)?,
            half: self.all.half,
        })
    }
}

/// A window's sorted columns (all of them, or one class's), to query.
pub(super) struct WindowPart<'a> {
    axis: usize,
    entries: &'a [Entry],
    half: Option<f64>,
}

impl WindowPart<'_> {
    /// Fills `out` with the candidate columns for a row at point `p` (each once, in no
    /// particular order: every pair is computed on its own).
    pub(super) fn near(&self, p: &Vec3, out: &mut Vec<usize>) {
        match self.half {
            Some(half) => self.near_within(p, half, out),
            None => {
                out.clear();
                out.extend(self.entries.iter().map(|e| e.col));
            }
        }
    }

    /// Fills `out` with the columns whose coordinate along the window's axis lies within
    /// `half` (below 0.5) of `p`'s, periodically.
    pub(super) fn near_within(&self, p: &Vec3, half: f64, out: &mut Vec<usize>) {
        out.clear();
        let (spans, count) = self.spans(p, half);
        for &(start, hi) in &spans[..count] {
            let end = start + self.entries[start..].partition_point(|e| e.key <= hi);
            out.extend(self.entries[start..end].iter().map(|e| e.col));
        }
    }

    /// [`WindowPart::near`], keeping only the columns within `tol` of `p` on every axis
    /// (see [`WindowPart::near_in_box`]); with `tol` `None`, every column near.
    pub(super) fn near_in_tolerance(
        &self,
        p: &Vec3,
        tol: Option<Vec3>,
        order: [usize; 3],
        out: &mut Vec<usize>,
    ) {
        match (tol, self.half) {
            (None, _) => self.near(p, out),
            (Some(tol), Some(half)) => self.near_in_box(p, half, tol, order, out),
            (Some(tol), None) => self.near_in_box(p, 0.5, tol, order, out),
        }
    }

    /// The columns within `half` of `p` along the window's axis ([`WindowPart::near_within`])
    /// that lie within `tol` of `p` on every axis, periodically (the distance of the
    /// difference to the nearest integer, pymatgen's per-axis test), the axes tested in
    /// `order`, into `out`.
    pub(super) fn near_in_box(
        &self,
        p: &Vec3,
        half: f64,
        tol: Vec3,
        order: [usize; 3],
        out: &mut Vec<usize>,
    ) {
        out.clear();
        // The axes in test order, unrolled (a closure per axis stays a call in wasm).
        let [a, b, c] = order;
        let (pa, pb, pc) = (p[a], p[b], p[c]);
        let (ta, tb, tc) = (tol[a], tol[b], tol[c]);
        let (spans, count) = self.spans(p, half);
        for &(start, hi) in &spans[..count] {
            // The span's columns in key order, up to the first key beyond `hi` (read in
            // passing instead of searched for).
            for &Entry {
                key,
                point: q,
                col: j,
            } in &self.entries[start..]
            {
                // Negated, so that a NaN key ends the span, as it ends the sorted keys (one
                // comparison in the hot loop).
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                if !(key <= hi) {
                    break;
                }
                if distance_to_integer(q[a] - pa) > ta
                    || distance_to_integer(q[b] - pb) > tb
                    || distance_to_integer(q[c] - pc) > tc
                {
                    continue;
                }
                out.push(j);
            }
        }
    }

    /// The spans (`count` of them) of the columns whose coordinate along the window's axis
    /// lies within `half` of `p`'s, periodically, each as its first index and the largest
    /// key it holds: the span is the columns from there whose keys are at most that
    /// (disjoint spans: the window is narrower than the period). Every column for a point or
    /// width the search cannot use.
    fn spans(&self, p: &Vec3, half: f64) -> ([(usize, f64); 3], usize) {
        let mut out = [(0, 0.0); 3];
        let x = p[self.axis];
        if !x.is_finite() || half.is_nan() || half >= 0.5 {
            out[0] = (0, f64::INFINITY);
            return (out, 1);
        }
        let c = x - crate::numeric::floor(x);
        let parts = PeriodicSpans::new(c, half, 0.0);
        for (k, &(lo, hi)) in parts.parts.iter().enumerate().take(parts.count) {
            // Keys are at least 0 (or NaN, which no comparison puts below): a span from
            // the period's start starts at the first entry.
            let start = if lo <= 0.0 {
                0
            } else {
                self.entries.partition_point(|e| e.key < lo)
            };
            out[k] = (start, hi);
        }
        (out, parts.count)
    }
}

/// The interval `[c − half, c + half]` of a periodic coordinate (period 1, `c` wrapped into
/// `[base, base + 1]`, `half` below ½) as up to three intervals within that period: the
/// part inside it, and the parts beyond either end moved back by one period.
pub(in crate::matcher) struct PeriodicSpans {
    parts: [(f64, f64); 3],
    count: usize,
}

impl PeriodicSpans {
    #[inline]
    pub(in crate::matcher) fn new(c: f64, half: f64, base: f64) -> Self {
        let end = base + 1.0;
        let (lo, hi) = (c - half, c + half);
        let mut parts = [
            (max_with(base, lo), min_with(end, hi)),
            (0.0, 0.0),
            (0.0, 0.0),
        ];
        let mut count = 1;
        if lo < base {
            parts[count] = (lo + 1.0, end);
            count += 1;
        }
        if hi > end {
            parts[count] = (base, hi - 1.0);
            count += 1;
        }
        Self { parts, count }
    }

    /// The intervals, each as (lowest, highest) value.
    pub(in crate::matcher) fn iter(&self) -> impl Iterator<Item = &(f64, f64)> {
        self.parts[..self.count].iter()
    }
}

#[cfg(test)]
mod tests {
    use super::PeriodicSpans;

    fn spans(c: f64, half: f64, base: f64) -> Vec<(f64, f64)> {
        PeriodicSpans::new(c, half, base).iter().copied().collect()
    }

    #[test]
    fn periodic_spans_wrap_at_either_end_of_the_period() {
        assert_eq!(spans(0.5, 0.25, 0.0), [(0.25, 0.75)]);
        assert_eq!(spans(0.125, 0.25, 0.0), [(0.0, 0.375), (0.875, 1.0)]);
        assert_eq!(spans(0.875, 0.25, 0.0), [(0.625, 1.0), (0.0, 0.125)]);
        assert_eq!(spans(-0.375, 0.25, -0.5), [(-0.5, -0.125), (0.375, 0.5)]);
        assert_eq!(spans(0.375, 0.25, -0.5), [(0.125, 0.5), (-0.5, -0.375)]);
        // A NaN centre gives the whole period once (no comparison holds for it).
        assert_eq!(spans(f64::NAN, 0.25, 0.0), [(0.0, 1.0)]);
    }
}
