//! Near ties: the pairs outside a solution that another assignment within a tolerance of the
//! optimum could use (pairs within the tolerance of their row's dual that lie on a cycle of
//! alternating pairs), so a caller can tell whether a solver visiting columns in another
//! order could have returned something else.

use super::{SparseCosts, NONE};
use crate::grouped::Grouped;
use crate::numeric::min_with;

/// For the solution of [`unique_nearest`](super::unique_nearest): the pairs outside it that another
/// assignment costing at most `delta` more could use (empty when none). With duals `u_i` = the
/// row's smallest cost and `v = 0`, as in [`Assignment::solve`](super::Assignment::solve)'s test:
/// pairs within `delta` of their row's best that lie on a cycle; a pair with a column no row took
/// makes every allowed pair count.
pub fn near_alternative_to_nearest(
    m: SparseCosts<'_>,
    sol: &[usize],
    delta: f64,
) -> Vec<(usize, usize)> {
    let every_pair = || -> Vec<(usize, usize)> {
        (0..m.rows)
            .flat_map(|i| {
                m.col[m.start[i]..m.start[i + 1]]
                    .iter()
                    .map(move |&j| (i, j))
            })
            .collect()
    };
    if m.check().is_err() {
        return Vec::new();
    }
    if sol.len() != m.rows || sol.iter().any(|&j| j >= m.cols) {
        return every_pair();
    }
    let mut row4col = vec![NONE; m.cols];
    for (i, &j) in sol.iter().enumerate() {
        row4col[j] = i;
    }
    let mut tight = Vec::new();
    for (i, &own) in sol.iter().enumerate() {
        let range = m.start[i]..m.start[i + 1];
        let best = m.cost[range.clone()]
            .iter()
            .copied()
            .fold(f64::INFINITY, min_with);
        for k in range {
            let j = m.col[k];
            if j == own || m.cost[k] - best > delta {
                continue;
            }
            if row4col[j] == NONE {
                return every_pair();
            }
            tight.push((i, j));
        }
    }
    pairs_on_cycles(m.rows, &tight, |j| row4col[j])
}

/// The pairs `(i, j)` of `tight` that lie on a cycle of the graph over rows with an edge
/// `i → owner(j)` for each: those whose two rows share a strongly connected component.
pub(super) fn pairs_on_cycles(
    rows: usize,
    tight: &[(usize, usize)],
    owner: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    if tight.is_empty() {
        return Vec::new();
    }
    // The edges by row, in order, in one list (no list per row).
    let rows_of: Vec<usize> = tight.iter().map(|&(i, _)| i).collect();
    let by_row = Grouped::new(&rows_of, rows);
    let next: Vec<usize> = by_row
        .members()
        .iter()
        .map(|&e| owner(tight[e].1))
        .collect();
    let comp = components(&Graph {
        start: by_row.starts(),
        next: &next,
    });
    tight
        .iter()
        .copied()
        .filter(|&(i, j)| comp[i] == comp[owner(j)])
        .collect()
}

/// A directed graph: node `v`'s successors are `next[start[v]..start[v + 1]]`.
pub(super) struct Graph<'g> {
    pub start: &'g [usize],
    pub next: &'g [usize],
}

impl Graph<'_> {
    fn nodes(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Successor `e` of node `v`, if it has that many.
    fn successor(&self, v: usize, e: usize) -> Option<usize> {
        let k = self.start[v] + e;
        (k < self.start[v + 1]).then(|| self.next[k])
    }
}

/// Strongly connected components (Tarjan's algorithm, iterative): a component index per
/// node.
pub(super) fn components(graph: &Graph<'_>) -> Vec<usize> {
    let n = graph.nodes();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::with_capacity(n);
    let mut comp = vec![usize::MAX; n];
    let mut counter = 0;
    let mut n_comp = 0;
    let mut call: Vec<(usize, usize)> = Vec::with_capacity(n);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        call.push((root, 0));
        while let Some(&mut (v, ref mut e)) = call.last_mut() {
            if *e == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(w) = graph.successor(v, *e) {
                *e += 1;
                if index[w] == usize::MAX {
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            // All edges of v done.
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = n_comp;
                    if w == v {
                        break;
                    }
                }
                n_comp += 1;
            }
        }
    }
    comp
}
