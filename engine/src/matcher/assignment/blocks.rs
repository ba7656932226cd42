//! Block decomposition: a sparse cost matrix solved one connected block of allowed pairs at
//! a time, each block through the dense solver's steps on its allowed pairs (or its dense
//! submatrix where a path needs a forbidden pair).

use super::sparse::{LocalRows, Sparse};
use super::{Assignment, AssignmentError, Pair, SparseCosts, NONE};

/// See [`Assignment::blocks`].
#[derive(Debug, Default, Clone)]
pub(super) struct BlockBuffers {
    parent: Vec<usize>,
    label: Vec<usize>,
    row_start: Vec<usize>,
    col_start: Vec<usize>,
    fill: Vec<usize>,
    members: Vec<usize>,
    sub: Vec<f64>,
    position: Vec<usize>,
    /// A block's allowed pairs in its own indices, and the row that last wrote each column
    /// there (a column listed twice in a row is left to the dense fill, where the last wins).
    local: LocalRows,
    stamp: Vec<usize>,
}

/// Solves the assignment of a sparse cost matrix one connected block at a time (callers try
/// [`unique_nearest`](super::unique_nearest) first).
///
/// Why by hand: no assignment crate solves sparse blocks with SciPy's tie-breaking. The
/// matcher's cost matrices are almost empty (a site may only pair with the few sites within
/// the fractional tolerance), so the bipartite graph of allowed pairs falls apart into small
/// connected blocks. An optimal assignment that uses no forbidden pair is optimal on every
/// block, so solving each block's dense submatrix (forbidden pairs filled in) with
/// [`Assignment::solve`] gives the same optimum as solving the dense matrix, in
/// O(Σ block³) instead of O(rows · cols²). A block (a compact supercell is one block) is
/// solved by the dense solver's steps on its allowed pairs alone (`sparse`), which give
/// the dense solver's result to the bit, unless a path needs a forbidden pair. Returns [`AssignmentError::Infeasible`] when some block has more rows than
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
        local,
        stamp,
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
        let (nr, nc) = (brows.len(), bcols.len());
        local.start.clear();
        local.col.clear();
        local.cost.clear();
        local.start.push(0);
        stamp.clear();
        stamp.resize(nc, NONE);
        let mut repeated = false;
        for (r, &i) in brows.iter().enumerate() {
            for k in m.start[i]..m.start[i + 1] {
                let c = position[m.col[k]];
                repeated |= stamp[c] == r;
                stamp[c] = r;
                local.col.push(c);
                local.cost.push(m.cost[k]);
            }
            local.start.push(local.col.len());
        }
        let sparse = !repeated
            && solver.solve_sparse_in_place(local, nr, nc, m.forbidden)? == Sparse::Solved;
        if sparse {
            if let Some(delta) = delta {
                let pairs = solver.near_alternative_pairs_sparse(local, nr, nc, delta);
                near.extend(pairs.into_iter().map(|(r, k)| (brows[r], bcols[k])));
            }
        } else {
            sub.clear();
            sub.resize(nr * nc, m.forbidden);
            for (r, &i) in brows.iter().enumerate() {
                for k in m.start[i]..m.start[i + 1] {
                    sub[r * nc + position[m.col[k]]] = m.cost[k];
                }
            }
            solver.solve_in_place(sub, nr, nc)?;
            if let Some(delta) = delta {
                let local = solver.near_alternative_pairs(nr, nc, delta);
                near.extend(local.into_iter().map(|(r, k)| (brows[r], bcols[k])));
            }
        }
        for (k, &i) in brows.iter().enumerate() {
            out[i] = bcols[solver.col4row[k]];
        }
    }
    Ok(out)
}
