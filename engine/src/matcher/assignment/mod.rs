//! Minimum-cost linear assignment (the rectangular linear-sum-assignment problem).
//!
//! Shortest-augmenting-path algorithm (Jonker–Volgenant style, as described by D. F. Crouse,
//! "On implementing 2D rectangular assignment algorithms", IEEE TAES 52(4), 2016), with the
//! same tie-breaking as SciPy's `linear_sum_assignment`, so equal-cost optima resolve to the
//! same assignment the reference picks.
//!
//! The dense solver is [`Assignment::solve`] (`solver`). The matcher's cost matrices are
//! sparse ([`SparseCosts`]): [`solve_blocks`] (`blocks`) solves each connected block of
//! allowed pairs with the dense solver's steps restricted to the allowed pairs (`sparse`,
//! the same result to the bit; densely where a path needs a forbidden pair) and can note the pairs another equally cheap assignment could use
//! (`ties`); [`unique_nearest`] and [`feasible_cost`] (`bounds`) give the optimum when every
//! row's nearest column is unique, and an upper bound of it otherwise, without solving.

mod blocks;
mod bounds;
mod solver;
mod sparse;
mod ties;

use blocks::BlockBuffers;
pub use blocks::{solve_blocks, solve_blocks_noting_ties};
pub use bounds::{feasible_cost, unique_nearest};
pub use ties::near_alternative_to_nearest;

/// Why an assignment could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssignmentError {
    /// More rows than columns, or a cost slice of the wrong length.
    #[error("bad cost matrix shape: {rows}×{cols} with {len} entries")]
    Shape {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Entries supplied.
        len: usize,
    },
    /// A cost is NaN or −∞.
    #[error("cost matrix contains invalid numeric entries")]
    Invalid,
    /// No complete assignment has finite cost.
    #[error("cost matrix is infeasible")]
    Infeasible,
}

/// Work buffers for [`Assignment::solve`], reusable across calls of the same size.
#[derive(Debug, Default, Clone)]
pub struct Assignment {
    cost: Vec<f64>,
    u: Vec<f64>,
    v: Vec<f64>,
    shortest: Vec<f64>,
    path: Vec<usize>,
    col4row: Vec<usize>,
    row4col: Vec<usize>,
    in_sr: Vec<bool>,
    in_sc: Vec<bool>,
    remaining: Vec<usize>,
    /// The sparse solver's marks (`sparse`): each column's place in `remaining`, the
    /// columns and rows the current augmenting path reached.
    position: Vec<usize>,
    touched: Vec<usize>,
    visited_rows: Vec<usize>,
    /// [`solve_blocks_noting_ties`]' buffers: union-find parents, each row's and column's
    /// block, the blocks' rows and columns (flat, by block), a block's dense costs, column
    /// positions within their block.
    blocks: BlockBuffers,
}

const NONE: usize = usize::MAX;

/// A (row, column) pair of a cost matrix.
pub type Pair = (usize, usize);

/// A sparse cost matrix: row `i` may pair only with columns `col[start[i]..start[i + 1]]`
/// (in any order), at costs `cost[…]`; every other pair is forbidden (the dense matrix the
/// reference solves holds `forbidden` there).
#[derive(Debug, Clone, Copy)]
pub struct SparseCosts<'a> {
    /// Rows of the dense matrix.
    pub rows: usize,
    /// Columns of the dense matrix.
    pub cols: usize,
    /// Row starts into `col` and `cost` (`rows + 1` entries).
    pub start: &'a [usize],
    /// Column of each allowed pair.
    pub col: &'a [usize],
    /// Cost of each allowed pair (below `forbidden`).
    pub cost: &'a [f64],
    /// The value the dense matrix holds at forbidden pairs.
    pub forbidden: f64,
}

impl SparseCosts<'_> {
    pub(super) fn check(&self) -> Result<(), AssignmentError> {
        let consistent = self.start.len() == self.rows + 1
            && self.col.len() == self.cost.len()
            && self.start.last() == Some(&self.col.len())
            && self.start.windows(2).all(|w| w[0] <= w[1])
            && self.col.iter().all(|&j| j < self.cols);
        if self.rows > self.cols || !consistent {
            return Err(AssignmentError::Shape {
                rows: self.rows,
                cols: self.cols,
                len: self.cost.len(),
            });
        }
        if self.cost.iter().any(|c| c.is_nan()) {
            return Err(AssignmentError::Invalid);
        }
        Ok(())
    }
}

/// A `rows × cols` row-major matrix with `rows ≤ cols`, or the shape error.
fn check_shape(cost: &[f64], rows: usize, cols: usize) -> Result<(), AssignmentError> {
    if rows > cols || cost.len() != rows * cols {
        return Err(AssignmentError::Shape {
            rows,
            cols,
            len: cost.len(),
        });
    }
    Ok(())
}

fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// Convenience wrapper: the column assigned to each row of a `rows × cols` cost matrix.
pub fn linear_sum_assignment(
    cost: &[f64],
    rows: usize,
    cols: usize,
) -> Result<Vec<usize>, AssignmentError> {
    Assignment::new().solve(cost, rows, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The allowed pairs of a dense matrix (entries below `forbidden`), as sparse rows.
    struct Owned {
        rows: usize,
        cols: usize,
        start: Vec<usize>,
        col: Vec<usize>,
        cost: Vec<f64>,
        forbidden: f64,
    }

    impl Owned {
        fn of(dense: &[f64], rows: usize, cols: usize, forbidden: f64) -> Self {
            let mut o = Owned {
                rows,
                cols,
                start: vec![0],
                col: Vec::new(),
                cost: Vec::new(),
                forbidden,
            };
            for i in 0..rows {
                for j in 0..cols {
                    let c = dense[i * cols + j];
                    if c < forbidden || c.is_nan() {
                        o.col.push(j);
                        o.cost.push(c);
                    }
                }
                o.start.push(o.col.len());
            }
            o
        }

        fn view(&self) -> SparseCosts<'_> {
            SparseCosts {
                rows: self.rows,
                cols: self.cols,
                start: &self.start,
                col: &self.col,
                cost: &self.cost,
                forbidden: self.forbidden,
            }
        }
    }

    fn total(cost: &[f64], cols: usize, sol: &[usize]) -> f64 {
        sol.iter()
            .enumerate()
            .map(|(i, &j)| cost[i * cols + j])
            .sum()
    }

    /// Costs of every permutation of a small square matrix, sorted.
    fn all_costs(cost: &[f64], n: usize) -> Vec<f64> {
        fn rec(
            cost: &[f64],
            n: usize,
            used: &mut Vec<bool>,
            row: usize,
            acc: f64,
            out: &mut Vec<f64>,
        ) {
            if row == n {
                out.push(acc);
                return;
            }
            for j in 0..n {
                if !used[j] {
                    used[j] = true;
                    rec(cost, n, used, row + 1, acc + cost[row * n + j], out);
                    used[j] = false;
                }
            }
        }
        let mut out = Vec::new();
        rec(cost, n, &mut vec![false; n], 0, 0.0, &mut out);
        out.sort_by(f64::total_cmp);
        out
    }

    #[test]
    fn a_feasible_cost_exists_exactly_when_an_assignment_does_and_bounds_the_optimum() {
        let mut seed: u64 = 5;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let (mut feasible, mut infeasible) = (0, 0);
        for rows in 1..=9 {
            for extra in 0..3 {
                let cols = rows + extra;
                for _ in 0..200 {
                    // Sparse: most pairs forbidden, so greedy choices often need repair.
                    let dense: Vec<f64> = (0..rows * cols)
                        .map(|_| if rnd() < 0.35 { rnd() * 10.0 } else { 1e20 })
                        .collect();
                    let owned = Owned::of(&dense, rows, cols, 1e20);
                    let got = feasible_cost(owned.view());
                    // The solver pays a forbidden pair where no assignment avoids one.
                    let best = solve_blocks_noting_ties(&mut Assignment::new(), owned.view(), None)
                        .map(|(sol, _)| total(&dense, cols, &sol))
                        .ok()
                        .filter(|&c| c < 1e19);
                    match best {
                        Some(best) => {
                            let upper = got.expect("an assignment exists");
                            assert!(upper >= best - 1e-9, "{upper} below the optimum {best}");
                            assert!(upper < 1e19);
                            feasible += 1;
                        }
                        None => {
                            assert_eq!(got, None, "{dense:?}");
                            infeasible += 1;
                        }
                    }
                }
            }
        }
        assert!(
            feasible > 500 && infeasible > 500,
            "{feasible} / {infeasible}"
        );
    }

    #[test]
    fn near_ties_are_noted_whenever_another_assignment_is_that_close() {
        let mut seed: u64 = 99;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 40) % 4
        };
        let (mut flagged, mut clean) = (0, 0);
        for n in 2..=5 {
            for _ in 0..300 {
                // Small integer costs make exact and near ties common.
                let c: Vec<f64> = (0..n * n).map(|_| rnd() as f64 + 1.0).collect();
                let costs = all_costs(&c, n);
                let gap = costs[1] - costs[0];
                let owned = Owned::of(&c, n, n, 1e20);
                for delta in [1e-9, 1.0, 2.5] {
                    let mut solver = Assignment::new();
                    let (sol, rows) =
                        solve_blocks_noting_ties(&mut solver, owned.view(), Some(delta)).unwrap();
                    let near = !rows.is_empty();
                    assert!(rows.iter().all(|&(i, j)| i < n && j < n && sol[i] != j));
                    assert_eq!(total(&c, n, &sol), costs[0]);
                    if gap <= delta {
                        assert!(near, "gap {gap} within {delta} not noted: {c:?}");
                    }
                    if near {
                        assert!(gap <= n as f64 * delta, "gap {gap} noted at {delta}: {c:?}");
                        flagged += 1;
                    } else {
                        clean += 1;
                    }
                    if let Some(sol) = unique_nearest(owned.view()) {
                        let near =
                            !near_alternative_to_nearest(owned.view(), &sol, delta).is_empty();
                        if gap <= delta {
                            assert!(near, "nearest: gap {gap} within {delta} not noted");
                        }
                        if near {
                            assert!(gap <= n as f64 * delta, "nearest: gap {gap} at {delta}");
                        }
                    }
                }
            }
        }
        assert!(
            flagged > 100 && clean > 100,
            "{flagged} flagged, {clean} clean"
        );
    }

    #[test]
    fn small_square_problem() {
        let c = [4.0, 1.0, 3.0, 2.0, 0.0, 5.0, 3.0, 2.0, 2.0];
        let sol = linear_sum_assignment(&c, 3, 3).unwrap();
        assert_eq!(sol, vec![1, 0, 2]);
        assert_eq!(total(&c, 3, &sol), 5.0);
    }

    #[test]
    fn constant_matrix_gives_identity() {
        let c = [1.0; 16];
        assert_eq!(linear_sum_assignment(&c, 4, 4).unwrap(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn matches_brute_force_on_pseudo_random_matrices() {
        let mut seed: u64 = 12345;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 1000) as f64 / 10.0
        };
        for _ in 0..50 {
            let n = 5;
            let c: Vec<f64> = (0..n * n).map(|_| rnd()).collect();
            let sol = linear_sum_assignment(&c, n, n).unwrap();
            let mut best = f64::INFINITY;
            let mut perm = [0, 1, 2, 3, 4];
            permute(&mut perm, 0, &mut |p| {
                best = best.min(total(&c, n, p));
            });
            assert!((total(&c, n, &sol) - best).abs() < 1e-9);
        }
    }

    fn permute(p: &mut [usize; 5], k: usize, f: &mut impl FnMut(&[usize])) {
        if k == p.len() {
            f(p);
            return;
        }
        for i in k..p.len() {
            p.swap(k, i);
            permute(p, k + 1, f);
            p.swap(k, i);
        }
    }

    #[test]
    fn blocks_give_the_dense_optimum_and_detect_infeasible_blocks() {
        const F: f64 = 1e20;
        let mut seed: u64 = 99;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % 1000
        };
        let mut solver = Assignment::new();
        for _ in 0..200 {
            let (rows, cols) = (8, 8 + (rnd() % 3) as usize);
            // Each row may pair with a few columns; the diagonal keeps it feasible.
            let mut c = vec![F; rows * cols];
            for i in 0..rows {
                c[i * cols + i] = rnd() as f64 / 7.0;
                for _ in 0..2 {
                    let j = (rnd() as usize) % cols;
                    c[i * cols + j] = rnd() as f64 / 7.0;
                }
            }
            let dense = linear_sum_assignment(&c, rows, cols).unwrap();
            let blocks = solve_blocks(&mut solver, Owned::of(&c, rows, cols, F).view()).unwrap();
            assert!((total(&c, cols, &dense) - total(&c, cols, &blocks)).abs() < 1e-9);
            assert!(total(&c, cols, &blocks) < F);
        }
        // Two rows that can only take the same column: infeasible without a forbidden pair.
        let c = [1.0, F, F, 2.0, F, F, F, F, 3.0];
        assert_eq!(
            solve_blocks(&mut solver, Owned::of(&c, 3, 3, F).view()),
            Err(AssignmentError::Infeasible)
        );
    }

    #[test]
    fn unique_row_minima_are_the_optimum_and_ties_fall_back() {
        const F: f64 = 1e20;
        let mut solver = Assignment::new();
        let c = [0.1, 5.0, F, 4.0, 0.2, 3.0, F, 6.0, 0.3];
        assert_eq!(
            unique_nearest(Owned::of(&c, 3, 3, F).view()),
            Some(vec![0, 1, 2])
        );
        assert_eq!(
            solve_blocks(&mut solver, Owned::of(&c, 3, 3, F).view()),
            Ok(vec![0, 1, 2])
        );
        assert_eq!(linear_sum_assignment(&c, 3, 3), Ok(vec![0, 1, 2]));
        // A tie in row 0: not unique, so the solver decides (as SciPy would).
        let t = [1.0, 1.0, 2.0, 3.0];
        assert_eq!(unique_nearest(Owned::of(&t, 2, 2, F).view()), None);
        assert_eq!(
            solve_blocks(&mut solver, Owned::of(&t, 2, 2, F).view()),
            linear_sum_assignment(&t, 2, 2)
        );
        // Two rows preferring the same column.
        let s = [1.0, 2.0, 1.5, 9.0];
        assert_eq!(unique_nearest(Owned::of(&s, 2, 2, F).view()), None);
        assert_eq!(
            solve_blocks(&mut solver, Owned::of(&s, 2, 2, F).view()),
            Ok(vec![1, 0])
        );
    }

    #[test]
    fn rejects_bad_input() {
        assert!(linear_sum_assignment(&[f64::NAN], 1, 1).is_err());
        assert!(linear_sum_assignment(&[1.0, 2.0], 2, 1).is_err());
        assert!(linear_sum_assignment(&[1.0], 1, 2).is_err());
    }
}
