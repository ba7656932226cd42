//! The dense solver's steps on a sparse block, without the dense matrix.
//!
//! The dense solver ([`Assignment::solve_in_place`]) scans every remaining column at each
//! step of an augmenting path, although in a block of the matcher's table a row has only a
//! handful of allowed columns and the others hold the forbidden value (1e20). Those columns
//! can only be picked once no allowed column is left to reach, so the scan here looks at
//! the columns the path's rows allow and picks among them exactly as the dense scan does:
//! the smallest value, the first in the remaining list's order, unless a free column of
//! that value comes later in it (the remaining list and its swap removals are kept as the
//! dense solver keeps them). Duals, paths and the solution are then bit for bit the dense
//! solver's. When a step would have to pick a forbidden column, this solver gives up and
//! the caller solves the block densely.

use super::{reset, Assignment, AssignmentError, NONE};
use crate::numeric::min_with;

/// One block's allowed pairs in local indices: row `r` may pair with columns
/// `col[start[r]..start[r + 1]]` at costs `cost[…]`.
#[derive(Debug, Default, Clone)]
pub(super) struct LocalRows {
    pub start: Vec<usize>,
    pub col: Vec<usize>,
    pub cost: Vec<f64>,
}

/// What a sparse solve ended with.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Sparse {
    /// Solved: the solution is in `col4row`, the duals in `u` and `v`.
    Solved,
    /// A path had to go through a forbidden pair: solve the dense matrix instead.
    NeedsDense,
}

impl Assignment {
    /// [`Assignment::solve_in_place`] of the `rows × cols` matrix holding `m`'s costs at its
    /// pairs and `forbidden` everywhere else, when no augmenting path needs a forbidden
    /// pair. `cost` keeps the costs minus their minimum, entry by entry, for
    /// [`Assignment::near_alternative_pairs_sparse`].
    pub(super) fn solve_sparse_in_place(
        &mut self,
        m: &LocalRows,
        rows: usize,
        cols: usize,
        forbidden: f64,
    ) -> Result<Sparse, AssignmentError> {
        let consistent = rows <= cols
            && m.start.len() == rows + 1
            && m.col.len() == m.cost.len()
            && m.start.last() == Some(&m.col.len())
            && m.col.iter().all(|&j| j < cols);
        if !consistent || m.cost.iter().any(|c| !c.is_finite() || *c >= forbidden) {
            return Ok(Sparse::NeedsDense);
        }
        if rows == 0 {
            self.col4row.clear();
            return Ok(Sparse::Solved);
        }
        // The dense matrix's minimum: the smallest allowed cost (every forbidden one is
        // larger), or the forbidden value in a block with none.
        let minval = m.cost.iter().copied().fold(forbidden, min_with);
        self.begin(&m.cost, minval, rows, cols);
        reset(&mut self.position, cols, 0);
        self.touched.clear();
        self.visited_rows.clear();
        for cur_row in 0..rows {
            let Some((sink, min_val)) = self.sparse_augmenting_path(m, cols, cur_row) else {
                return Ok(Sparse::NeedsDense);
            };
            // The dense solver's dual updates, over the rows and columns the path reached.
            self.u[cur_row] += min_val;
            for &i in &self.visited_rows {
                if i != cur_row {
                    let c = self.col4row[i];
                    if c != NONE {
                        self.u[i] += min_val - self.shortest[c];
                    }
                }
            }
            for &j in &self.touched {
                if self.in_sc[j] {
                    self.v[j] -= min_val - self.shortest[j];
                }
            }
            self.augment(sink, cur_row, rows)?;
        }
        Ok(Sparse::Solved)
    }

    /// One augmenting path from row `start` (see the module notes); `None` when it would
    /// need a forbidden pair. Leaves the rows and columns it reached in `visited_rows` and
    /// `touched` for the dual update, and resets its marks on the next call.
    fn sparse_augmenting_path(
        &mut self,
        m: &LocalRows,
        nc: usize,
        start: usize,
    ) -> Option<(usize, f64)> {
        for &j in &self.touched {
            self.shortest[j] = f64::INFINITY;
            self.in_sc[j] = false;
        }
        for &i in &self.visited_rows {
            self.in_sr[i] = false;
        }
        self.touched.clear();
        self.visited_rows.clear();
        // The dense solver's remaining list, filled in reverse, with each column's place.
        self.remaining.clear();
        self.remaining.extend((0..nc).rev());
        for (p, &j) in self.remaining.iter().enumerate() {
            self.position[j] = p;
        }
        let mut min_val = 0.0;
        let mut i = start;
        loop {
            self.in_sr[i] = true;
            self.visited_rows.push(i);
            let u = self.u[i];
            for k in m.start[i]..m.start[i + 1] {
                let j = m.col[k];
                if self.in_sc[j] {
                    continue;
                }
                let r = min_val + self.cost[k] - u - self.v[j];
                if self.shortest[j] == f64::INFINITY {
                    self.touched.push(j);
                }
                if r < self.shortest[j] {
                    self.path[j] = i;
                    self.shortest[j] = r;
                }
            }
            // The dense scan's pick among the reached columns still remaining: the smallest
            // value; of equals the first in the list, or the last free one.
            let mut lowest = f64::INFINITY;
            let mut first = NONE;
            let mut last_free = NONE;
            for &j in &self.touched {
                if self.in_sc[j] {
                    continue;
                }
                let (s, p) = (self.shortest[j], self.position[j]);
                let free = self.row4col[j] == NONE;
                if s < lowest {
                    lowest = s;
                    first = p;
                    last_free = if free { p } else { NONE };
                } else if s == lowest {
                    first = first.min(p);
                    if free && (last_free == NONE || p > last_free) {
                        last_free = p;
                    }
                }
            }
            if first == NONE || lowest == f64::INFINITY {
                return None;
            }
            let index = if last_free != NONE { last_free } else { first };
            min_val = lowest;
            let j = self.remaining[index];
            self.in_sc[j] = true;
            let last = self.remaining.len() - 1;
            let moved = self.remaining[last];
            self.remaining[index] = moved;
            self.position[moved] = index;
            self.remaining.truncate(last);
            if self.row4col[j] == NONE {
                return Some((j, min_val));
            }
            i = self.row4col[j];
        }
    }

    /// [`Assignment::near_alternative_pairs`] after [`Assignment::solve_sparse_in_place`]
    /// of `m` (forbidden pairs are never within `delta`: their reduced costs are near 1e20).
    pub(super) fn near_alternative_pairs_sparse(
        &self,
        m: &LocalRows,
        rows: usize,
        cols: usize,
        delta: f64,
    ) -> Vec<(usize, usize)> {
        let entries =
            (0..rows).flat_map(|i| (m.start[i]..m.start[i + 1]).map(move |k| (i, m.col[k], k)));
        self.near_pairs_among(rows, cols, delta, entries)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const FORBIDDEN: f64 = 1e20;

    /// A random sparse block: `rows × cols`, each row with a few allowed columns at costs
    /// drawn from a small set (many exact ties) or spread out.
    fn block(seed: u64, rows: usize, cols: usize, per_row: usize, ties: bool) -> LocalRows {
        let mut rng = crate::test_rng::XorShift::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut next = move || rng.next_u64();
        let mut m = LocalRows::default();
        m.start.push(0);
        for _ in 0..rows {
            let mut cs: Vec<usize> = (0..per_row)
                .map(|_| (next() % cols as u64) as usize)
                .collect();
            cs.sort_unstable();
            cs.dedup();
            for c in cs {
                m.col.push(c);
                m.cost.push(if ties {
                    (next() % 4) as f64 * 0.25
                } else {
                    (next() >> 11) as f64 / (1u64 << 53) as f64 * 3.0
                });
            }
            m.start.push(m.col.len());
        }
        m
    }

    #[test]
    fn the_sparse_steps_are_the_dense_solvers_to_the_bit() {
        let (mut solved, mut dense_only) = (0, 0);
        for seed in 0..3000u64 {
            let rows = 1 + (seed % 23) as usize;
            let cols = rows + (seed % 3) as usize;
            let per_row = 1 + (seed % 5) as usize;
            let m = block(seed, rows, cols, per_row, seed % 2 == 0);
            let mut sparse = Assignment::new();
            let outcome = sparse.solve_sparse_in_place(&m, rows, cols, FORBIDDEN);
            let mut full = vec![FORBIDDEN; rows * cols];
            for r in 0..rows {
                for k in m.start[r]..m.start[r + 1] {
                    full[r * cols + m.col[k]] = m.cost[k];
                }
            }
            let mut dense = Assignment::new();
            let want = dense.solve_in_place(&full, rows, cols);
            match outcome.unwrap() {
                Sparse::NeedsDense => {
                    dense_only += 1;
                    continue;
                }
                Sparse::Solved => solved += 1,
            }
            want.unwrap();
            assert_eq!(sparse.col4row, dense.col4row, "seed {seed}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&sparse.u), bits(&dense.u), "seed {seed}");
            assert_eq!(bits(&sparse.v), bits(&dense.v), "seed {seed}");
            for delta in [0.0, 1e-5, 0.3] {
                assert_eq!(
                    sparse.near_alternative_pairs_sparse(&m, rows, cols, delta),
                    dense.near_alternative_pairs(rows, cols, delta),
                    "seed {seed}, delta {delta}"
                );
            }
        }
        assert!(
            solved > 1000 && dense_only > 100,
            "{solved} solved, {dense_only} dense"
        );
    }
}
