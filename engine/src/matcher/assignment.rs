//! Minimum-cost linear assignment (the rectangular linear-sum-assignment problem).
//!
//! Shortest-augmenting-path algorithm (Jonker–Volgenant style, as described by D. F. Crouse,
//! "On implementing 2D rectangular assignment algorithms", IEEE TAES 52(4), 2016), with the
//! same tie-breaking as SciPy's `linear_sum_assignment`, so equal-cost optima resolve to the
//! same assignment the reference picks.

use crate::numeric::min_with;

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
    /// [`solve_blocks_noting_ties`]' buffers: union-find parents, each row's and column's
    /// block, the blocks' rows and columns (flat, by block), a block's dense costs, column
    /// positions within their block.
    blocks: BlockBuffers,
}

/// See [`Assignment::blocks`].
#[derive(Debug, Default, Clone)]
struct BlockBuffers {
    parent: Vec<usize>,
    label: Vec<usize>,
    row_start: Vec<usize>,
    col_start: Vec<usize>,
    fill: Vec<usize>,
    members: Vec<usize>,
    sub: Vec<f64>,
    position: Vec<usize>,
}

const NONE: usize = usize::MAX;

/// A (row, column) pair of a cost matrix.
pub type Pair = (usize, usize);

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
    fn solve_in_place(
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
            // Augment along the path back to the current row.
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
                    break;
                }
            }
        }
        Ok(())
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
    fn near_alternative_pairs(&self, rows: usize, cols: usize, delta: f64) -> Vec<(usize, usize)> {
        let mut tight: Vec<(usize, usize)> = Vec::new();
        for i in 0..rows {
            for j in 0..cols {
                if j == self.col4row[i] {
                    continue;
                }
                let r = self.cost[i * cols + j] - self.u[i] - self.v[j];
                if r <= delta {
                    if self.row4col.get(j).is_none_or(|&k| k == NONE) {
                        return (0..rows)
                            .flat_map(|i| (0..cols).map(move |j| (i, j)))
                            .collect();
                    }
                    tight.push((i, j));
                }
            }
        }
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
    fn check(&self) -> Result<(), AssignmentError> {
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

/// Solves the assignment of a sparse cost matrix one connected block at a time (callers try
/// [`unique_nearest`] first).
///
/// Why by hand: no assignment crate solves sparse blocks with SciPy's tie-breaking. The
/// matcher's cost matrices are almost empty (a site may only pair with the few sites within
/// the fractional tolerance), so the bipartite graph of allowed pairs falls apart into small
/// connected blocks. An optimal assignment that uses no forbidden pair is optimal on every
/// block, so solving each block's dense submatrix (forbidden pairs filled in) with
/// [`Assignment::solve`] gives the same optimum as solving the dense matrix, in
/// O(Σ block³) instead of O(rows · cols²): hundreds of times faster for a 500-site
/// supercell. Returns [`AssignmentError::Infeasible`] when some block has more rows than
/// columns, i.e. when every complete assignment must use a forbidden pair (the dense
/// solution would then cost at least `forbidden`).
pub fn solve_blocks(
    solver: &mut Assignment,
    m: SparseCosts<'_>,
) -> Result<Vec<usize>, AssignmentError> {
    solve_blocks_noting_ties(solver, m, None).map(|(sol, _)| sol)
}

/// [`solve_blocks`], and with `delta` given, the pairs `(row, column)` outside the solution
/// that another assignment within `delta` of the optimum could use (see
/// [`Assignment::solve`]'s duals; empty when none): the optimum returned depends on the
/// order of the columns there.
pub fn solve_blocks_noting_ties(
    solver: &mut Assignment,
    m: SparseCosts<'_>,
    delta: Option<f64>,
) -> Result<(Vec<usize>, Vec<Pair>), AssignmentError> {
    m.check()?;
    let mut near = Vec::new();
    let mut buf = std::mem::take(&mut solver.blocks);
    let result = solve_blocks_with(solver, &mut buf, m, delta, &mut near);
    solver.blocks = buf;
    result.map(|out| (out, near))
}

/// [`solve_blocks_noting_ties`] with its buffers.
fn solve_blocks_with(
    solver: &mut Assignment,
    buf: &mut BlockBuffers,
    m: SparseCosts<'_>,
    delta: Option<f64>,
    near: &mut Vec<Pair>,
) -> Result<Vec<usize>, AssignmentError> {
    let (rows, cols) = (m.rows, m.cols);
    let BlockBuffers {
        parent,
        label,
        row_start,
        col_start,
        fill,
        members,
        sub,
        position,
    } = buf;
    // Union-find over rows (0..rows) and columns (rows..rows + cols).
    parent.clear();
    parent.extend(0..rows + cols);
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for i in 0..rows {
        for &j in &m.col[m.start[i]..m.start[i + 1]] {
            let (a, b) = (root(parent, i), root(parent, rows + j));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    // Blocks numbered in order of their first row or column; each block's rows, then its
    // columns, listed in their relative order (a counting sort by block).
    let mut block_of_root = std::mem::take(position);
    block_of_root.clear();
    block_of_root.resize(rows + cols, usize::MAX);
    label.clear();
    row_start.clear();
    col_start.clear();
    for x in 0..rows + cols {
        let r = root(parent, x);
        if block_of_root[r] == usize::MAX {
            block_of_root[r] = row_start.len();
            row_start.push(0);
            col_start.push(0);
        }
        let b = block_of_root[r];
        label.push(b);
        if x < rows {
            row_start[b] += 1;
        } else {
            col_start[b] += 1;
        }
    }
    *position = block_of_root;
    let n_blocks = row_start.len();
    // Counts to starts: block b's rows at members[row_start[b]..row_start[b + 1]], its
    // columns at members[rows + col_start[b]..rows + col_start[b + 1]].
    for starts in [&mut *row_start, &mut *col_start] {
        let mut sum = 0;
        for s in starts.iter_mut() {
            let c = *s;
            *s = sum;
            sum += c;
        }
        starts.push(sum);
    }
    fill.clear();
    fill.extend_from_slice(&row_start[..n_blocks]);
    fill.extend(col_start[..n_blocks].iter().map(|c| rows + c));
    members.clear();
    members.resize(rows + cols, 0);
    for (x, &b) in label.iter().enumerate() {
        let slot = if x < rows { b } else { n_blocks + b };
        members[fill[slot]] = if x < rows { x } else { x - rows };
        fill[slot] += 1;
    }
    position.clear();
    position.resize(cols, NONE);
    let mut out = vec![NONE; rows];
    for b in 0..n_blocks {
        let brows = &members[row_start[b]..row_start[b + 1]];
        let bcols = &members[rows + col_start[b]..rows + col_start[b + 1]];
        if brows.is_empty() {
            continue;
        }
        if brows.len() > bcols.len() {
            return Err(AssignmentError::Infeasible);
        }
        for (k, &j) in bcols.iter().enumerate() {
            position[j] = k;
        }
        sub.clear();
        sub.resize(brows.len() * bcols.len(), m.forbidden);
        for (r, &i) in brows.iter().enumerate() {
            for k in m.start[i]..m.start[i + 1] {
                sub[r * bcols.len() + position[m.col[k]]] = m.cost[k];
            }
        }
        solver.solve_in_place(sub, brows.len(), bcols.len())?;
        if let Some(delta) = delta {
            let local = solver.near_alternative_pairs(brows.len(), bcols.len(), delta);
            near.extend(local.into_iter().map(|(r, k)| (brows[r], bcols[k])));
        }
        for (k, &i) in brows.iter().enumerate() {
            out[i] = bcols[solver.col4row[k]];
        }
    }
    Ok(out)
}

/// For the solution of [`unique_nearest`]: the pairs outside it that another assignment
/// costing at most `delta` more could use (empty when none). With duals `u_i` = the row's
/// smallest cost and `v = 0`, as in [`Assignment::solve`]'s test: pairs within `delta` of
/// their row's best that lie on a cycle; a pair with a column no row took makes every
/// allowed pair count.
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
fn pairs_on_cycles(
    rows: usize,
    tight: &[(usize, usize)],
    owner: impl Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    if tight.is_empty() {
        return Vec::new();
    }
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); rows];
    for &(i, j) in tight {
        next[i].push(owner(j));
    }
    let comp = components(&next);
    tight
        .iter()
        .copied()
        .filter(|&(i, j)| comp[i] == comp[owner(j)])
        .collect()
}

/// Strongly connected components (Tarjan's algorithm, iterative): a component index per
/// node.
fn components(next: &[Vec<usize>]) -> Vec<usize> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut comp = vec![usize::MAX; n];
    let mut counter = 0;
    let mut n_comp = 0;
    let mut call: Vec<(usize, usize)> = Vec::new();
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
            if let Some(&w) = next[v].get(*e) {
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

/// The assignment that gives every row its cheapest column, when each row has exactly one
/// cheapest allowed column and no two rows share one.
///
/// That assignment costs the sum of the row minima, a lower bound of every assignment, and
/// any other assignment gives some row a strictly dearer column: it is the unique optimum,
/// the one any exact solver returns. For a good match (every site near its partner, the
/// common case in evaluation) this replaces the O(n³) solve by a scan of the allowed pairs.
pub fn unique_nearest(m: SparseCosts<'_>) -> Option<Vec<usize>> {
    m.check().ok()?;
    let mut taken = vec![false; m.cols];
    let mut sol = Vec::with_capacity(m.rows);
    for i in 0..m.rows {
        let (mut best, mut best_j, mut tie) = (f64::INFINITY, NONE, false);
        for k in m.start[i]..m.start[i + 1] {
            let c = m.cost[k];
            if c < best {
                (best, best_j, tie) = (c, m.col[k], false);
            } else if c == best {
                tie = true;
            }
        }
        if tie || best_j == NONE || best >= m.forbidden || taken[best_j] {
            return None;
        }
        taken[best_j] = true;
        sol.push(best_j);
    }
    Some(sol)
}

/// The cost of some complete assignment, or `None` when there is none: an upper bound of
/// the optimum in O(entries · log entries) (plus repairs), where [`unique_nearest`] gives
/// the optimum's lower bound. Pairs are taken cheapest first while both ends are free (a
/// greedy matching, usually close to the optimum); a row left without a column takes one
/// along an augmenting path (Kuhn's algorithm), which moves other rows to other allowed
/// columns.
pub fn feasible_cost(m: SparseCosts<'_>) -> Option<f64> {
    m.check().ok()?;
    let allowed = |k: usize| m.cost[k] < m.forbidden;
    let mut owner = vec![NONE; m.cols];
    let mut assigned = vec![NONE; m.rows];
    let mut entries: Vec<(f64, usize, usize)> = (0..m.rows)
        .flat_map(|i| (m.start[i]..m.start[i + 1]).map(move |k| (i, k)))
        .filter(|&(_, k)| allowed(k))
        .map(|(i, k)| (m.cost[k], i, m.col[k]))
        .collect();
    entries.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    for (_, i, c) in entries {
        if assigned[i] == NONE && owner[c] == NONE {
            assigned[i] = c;
            owner[c] = i;
        }
    }
    let unmatched: Vec<usize> = (0..m.rows).filter(|&i| assigned[i] == NONE).collect();
    let mut seen = vec![usize::MAX; m.cols];
    for (round, &i) in unmatched.iter().enumerate() {
        // Depth-first search for an augmenting path from row i, with an explicit stack of
        // (row, next entry to try); `via[c]` is the row that reached column c.
        let mut via = Vec::new();
        let mut stack = vec![(i, m.start[i])];
        let mut free = None;
        while let Some(&mut (r, ref mut k)) = stack.last_mut() {
            if *k == m.start[r + 1] {
                stack.pop();
                continue;
            }
            let e = *k;
            *k += 1;
            let c = m.col[e];
            if !allowed(e) || seen[c] == round {
                continue;
            }
            seen[c] = round;
            via.push((c, r));
            if owner[c] == NONE {
                free = Some(c);
                break;
            }
            stack.push((owner[c], m.start[owner[c]]));
        }
        let mut c = free?;
        // Walk back: each row on the path takes the column it reached.
        loop {
            let r = via
                .iter()
                .rev()
                .find(|&&(col, _)| col == c)
                .map(|&(_, r)| r)?;
            let previous = assigned[r];
            assigned[r] = c;
            owner[c] = r;
            if r == i {
                break;
            }
            c = previous;
        }
    }
    let mut total = 0.0;
    for (i, &c) in assigned.iter().enumerate() {
        let k = (m.start[i]..m.start[i + 1]).find(|&k| m.col[k] == c && allowed(k))?;
        total += m.cost[k];
    }
    Some(total)
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
