//! Cheap answers without solving: the optimum when every row's nearest allowed column is
//! unique and untaken ([`unique_nearest`], also the lower bound of any assignment), and the
//! cost of some complete assignment, an upper bound ([`feasible_cost`]).

use super::{SparseCosts, NONE};
use crate::numeric::total_order_key;

/// The assignment that gives every row its cheapest column, when each row has exactly one
/// cheapest allowed column and no two rows share one.
///
/// That assignment costs the sum of the row minima, a lower bound of every assignment, and
/// any other assignment gives some row a strictly dearer column: it is the unique optimum,
/// the one any exact solver returns. For a good match (every site near its partner, the
/// common case in evaluation) this replaces the O(n³) solve by a scan of the allowed pairs.
pub fn unique_nearest(m: SparseCosts<'_>) -> Option<Vec<usize>> {
    m.check().ok()?;
    // Columns taken, one bit each (on the stack up to 256 columns).
    let mut taken = smallvec::SmallVec::<[u64; 4]>::from_elem(0, m.cols.div_ceil(64));
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
        if tie || best_j == NONE || best >= m.forbidden {
            return None;
        }
        let (word, bit) = (best_j / 64, 1u64 << (best_j % 64));
        match taken.get_mut(word) {
            Some(w) if *w & bit == 0 => *w |= bit,
            _ => return None,
        }
        sol.push(best_j);
    }
    Some(sol)
}

/// The cost of some complete assignment, or `None` when there is none: an upper bound of
/// the optimum in O(entries + rows · log rows) (plus repairs), where [`unique_nearest`]
/// gives the optimum's lower bound. Rows take their cheapest free column, rows with the
/// cheapest nearest column first (a greedy matching, close to the optimum when most rows
/// have their own nearest column, as in a table near a match); a row left without a column
/// takes one along an augmenting path (Kuhn's algorithm), which moves other rows to other
/// allowed columns.
pub fn feasible_cost(m: SparseCosts<'_>) -> Option<f64> {
    m.check().ok()?;
    let allowed = |k: usize| m.cost[k] < m.forbidden;
    let mut owner = vec![NONE; m.cols];
    let mut assigned = vec![NONE; m.rows];
    // Rows by their cheapest allowed cost, in `f64::total_cmp`'s order.
    let mut rows: Vec<(i64, usize)> = (0..m.rows)
        .map(|i| {
            let least = (m.start[i]..m.start[i + 1])
                .filter(|&k| allowed(k))
                .map(|k| m.cost[k])
                .fold(f64::INFINITY, |a, c| if c < a { c } else { a });
            (total_order_key(least), i)
        })
        .collect();
    rows.sort_unstable();
    for (_, i) in rows {
        let mut best: Option<(f64, usize)> = None;
        for k in m.start[i]..m.start[i + 1] {
            let c = m.col[k];
            if allowed(k) && owner[c] == NONE && best.is_none_or(|(b, _)| m.cost[k] < b) {
                best = Some((m.cost[k], c));
            }
        }
        if let Some((_, c)) = best {
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
