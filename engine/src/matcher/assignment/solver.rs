//! The dense solver: shortest augmenting paths over a row-major cost matrix, with SciPy's
//! tie-breaking, and the pairs its final duals leave within a tolerance of the optimum.

use super::ties::pairs_on_cycles;
use super::{check_shape, reset, Assignment, AssignmentError, NONE};
use crate::numeric::min_with;

impl Assignment {
    /// New, empty work buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Solves the assignment for a `rows × cols` cost matrix in row-major order
    /// (`rows ≤ cols`) and returns, for each row, the column assigned to it.
    pub fn solve(
        &mut self,
        cost: &[f64],
        rows: usize,
        cols: usize,
    ) -> Result<Vec<usize>, AssignmentError> {
        self.solve_in_place(cost, rows, cols)?;
        Ok(self.col4row.clone())
    }

    /// [`Assignment::solve`], leaving the solution in `self.col4row`.
    pub(super) fn solve_in_place(
        &mut self,
        cost: &[f64],
        rows: usize,
        cols: usize,
    ) -> Result<(), AssignmentError> {
        check_shape(cost, rows, cols)?;
        if cost.iter().any(|x| x.is_nan() || *x == f64::NEG_INFINITY) {
            return Err(AssignmentError::Invalid);
        }
        if rows == 0 {
            self.col4row.clear();
            return Ok(());
        }
        let minval = cost.iter().copied().fold(f64::INFINITY, min_with);
        self.begin(cost, minval, rows, cols);
        for cur_row in 0..rows {
            let (sink, min_val) = self.augmenting_path(cols, cur_row)?;
            // Update the dual variables.
            self.u[cur_row] += min_val;
            for i in 0..rows {
                if self.in_sr[i] && i != cur_row {
                    let c = self.col4row[i];
                    if c != NONE {
                        self.u[i] += min_val - self.shortest[c];
                    }
                }
            }
            for j in 0..cols {
                if self.in_sc[j] {
                    self.v[j] -= min_val - self.shortest[j];
                }
            }
            self.augment(sink, cur_row, rows)?;
        }
        Ok(())
    }

    /// Empties the buffers for a `rows × cols` solve of `cost` (dense, or a sparse block's
    /// entries) with `minval` taken off every cost.
    pub(super) fn begin(&mut self, cost: &[f64], minval: f64, rows: usize, cols: usize) {
        self.cost.clear();
        self.cost.extend(cost.iter().map(|x| x - minval));
        reset(&mut self.u, rows, 0.0);
        reset(&mut self.v, cols, 0.0);
        reset(&mut self.shortest, cols, f64::INFINITY);
        reset(&mut self.path, cols, NONE);
        reset(&mut self.col4row, rows, NONE);
        reset(&mut self.row4col, cols, NONE);
        reset(&mut self.in_sr, rows, false);
        reset(&mut self.in_sc, cols, false);
    }

    /// Flips the pairs along the augmenting path that ends at column `sink`, back to row
    /// `cur_row` (`rows` bounds its length).
    pub(super) fn augment(
        &mut self,
        sink: usize,
        cur_row: usize,
        rows: usize,
    ) -> Result<(), AssignmentError> {
        let mut j = sink;
        let mut guard = 0;
        loop {
            let i = self.path[j];
            if i == NONE || guard > rows {
                return Err(AssignmentError::Infeasible);
            }
            guard += 1;
            self.row4col[j] = i;
            std::mem::swap(&mut self.col4row[i], &mut j);
            if i == cur_row {
                return Ok(());
            }
        }
    }

    /// After [`Assignment::solve`] of a `rows × cols` matrix: the pairs `(row, column)`
    /// outside the solution that another assignment costing at most `delta` more could use
    /// (so that a solver visiting the columns in another order could have returned it);
    /// empty when there is no such assignment.
    ///
    /// The final duals `u, v` make every reduced cost `c_ij − u_i − v_j` non-negative and
    /// zero on the solution; for a square matrix any other assignment costs the solution's
    /// plus the reduced costs of its pairs, which follow cycles alternating between the two.
    /// So such an assignment uses only pairs within `delta` that lie on such a cycle. For a
    /// rectangular matrix a cheap free column makes every pair count (conservatively).
    pub(super) fn near_alternative_pairs(
        &self,
        rows: usize,
        cols: usize,
        delta: f64,
    ) -> Vec<(usize, usize)> {
        let entries = (0..rows).flat_map(|i| (0..cols).map(move |j| (i, j, i * cols + j)));
        self.near_pairs_among(rows, cols, delta, entries)
    }

    /// [`Assignment::near_alternative_pairs`] over `entries`, each `(row, column, index of
    /// its cost in self.cost)`, after a solve (the pairs come sorted, as a dense scan finds
    /// them).
    pub(super) fn near_pairs_among(
        &self,
        rows: usize,
        cols: usize,
        delta: f64,
        entries: impl IntoIterator<Item = (usize, usize, usize)>,
    ) -> Vec<(usize, usize)> {
        let mut tight: Vec<(usize, usize)> = Vec::new();
        for (i, j, k) in entries {
            if j == self.col4row[i] {
                continue;
            }
            let r = self.cost[k] - self.u[i] - self.v[j];
            if r <= delta {
                if self.row4col.get(j).is_none_or(|&k| k == NONE) {
                    return (0..rows)
                        .flat_map(|i| (0..cols).map(move |j| (i, j)))
                        .collect();
                }
                tight.push((i, j));
            }
        }
        tight.sort_unstable();
        pairs_on_cycles(rows, &tight, |j| self.row4col[j])
    }

    fn augmenting_path(
        &mut self,
        nc: usize,
        start: usize,
    ) -> Result<(usize, f64), AssignmentError> {
        let mut min_val = 0.0;
        let mut i = start;
        // Filled in reverse so that a constant cost matrix yields the identity.
        self.remaining.clear();
        self.remaining.extend((0..nc).rev());
        self.in_sr.iter_mut().for_each(|x| *x = false);
        self.in_sc.iter_mut().for_each(|x| *x = false);
        self.shortest.iter_mut().for_each(|x| *x = f64::INFINITY);

        // Every column index is below `nc`: slicing once lets the loop below index these
        // without a bounds check each (it is the solver's inner loop).
        let (v, path, shortest, row4col) = (
            &self.v[..nc],
            &mut self.path[..nc],
            &mut self.shortest[..nc],
            &self.row4col[..nc],
        );
        loop {
            let mut index = NONE;
            let mut lowest = f64::INFINITY;
            self.in_sr[i] = true;
            let (row, u) = (&self.cost[i * nc..][..nc], self.u[i]);
            for (it, &j) in self.remaining.iter().enumerate() {
                let j = j.min(nc - 1);
                let r = min_val + row[j] - u - v[j];
                if r < shortest[j] {
                    path[j] = i;
                    shortest[j] = r;
                }
                // Among equal minima prefer a free column: it ends the search.
                if shortest[j] < lowest || (shortest[j] == lowest && row4col[j] == NONE) {
                    lowest = shortest[j];
                    index = it;
                }
            }
            min_val = lowest;
            if index == NONE || min_val == f64::INFINITY {
                return Err(AssignmentError::Infeasible);
            }
            let j = self.remaining[index];
            self.in_sc[j] = true;
            let last = self.remaining.len() - 1;
            self.remaining[index] = self.remaining[last];
            self.remaining.truncate(last);
            if row4col[j] == NONE {
                return Ok((j, min_val));
            }
            i = row4col[j];
        }
    }
}
