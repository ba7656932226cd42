//! Whether a fit search's candidate could hide a fit behind a tie: the assignments a solver
//! visiting columns or images in another order could have returned instead of the one found
//! (a symmetric copy of the candidate holds its columns and images in another order). An
//! orbit's other mappings are skipped only when none of these alternatives brings the largest
//! distance under stol; a cheap bound decides most candidates, an enumeration the rest.

use super::BOUNDARY;
use crate::linalg::Vec3;
use crate::matcher::pbc;

/// How much work (rows visited, plus rows measured per complete alternative)
/// [`every_alternative_exceeds`] may do before it gives up and leaves the candidate
/// ambiguous.
const ENUMERATION_BUDGET: usize = 1 << 16;

/// Whether every alternative to the solution `sol` of a candidate (its normalised distances
/// `dist`; `images`: the other vectors of a pair whose images tie, see
/// [`pbc::Columns::tied_images`]) keeps its largest distance above `stol`: by
/// [`alternatives_exceed`]'s bound, or else by listing them ([`every_alternative_exceeds`]).
pub(super) fn no_alternative_fits(
    (table, images): (&pbc::Table, impl Fn(Vec3) -> Vec<Vec3>),
    (sol, alternatives): (&[usize], &[(usize, usize)]),
    dist: &[f64],
    normalization: f64,
    stol: f64,
) -> bool {
    alternatives_exceed(table, sol, alternatives, dist, normalization, stol)
        || every_alternative_exceeds(table, (sol, alternatives), images, normalization, stol)
}

/// Whether every alternative of a candidate a solver visiting columns or images in another
/// order could have returned still has its largest distance above `stol`. The alternatives
/// use, on some rows, one of the `alternatives` pairs instead of the solution's pair, or
/// another image of a pair whose images tie ([`pbc::Table::tied`]). A row's vector then
/// moves by at most the largest such change (an image change moves it by at most twice its
/// length); the other rows keep theirs, and the mean moves by at most the sum of the
/// changes over the row count, which bounds how much their largest distance can drop.
/// Wherever the mean goes, two kept rows cannot both come closer to it than half their
/// mutual distance: that bounds the largest distance from below too.
pub(super) fn alternatives_exceed(
    table: &pbc::Table,
    sol: &[usize],
    alternatives: &[(usize, usize)],
    dist: &[f64],
    normalization: f64,
    stol: f64,
) -> bool {
    let n = sol.len();
    let entry = |i: usize, j: usize| table.range(i).find(|&k| table.col[k] == j);
    let image_change = |k: usize| {
        if table.tied.get(k) == Some(&true) {
            2.0 * table.d2[k].sqrt()
        } else {
            0.0
        }
    };
    // The largest change of each row's vector (0 for rows no alternative touches).
    let mut change = vec![0.0f64; n];
    for (i, &j) in sol.iter().enumerate() {
        match entry(i, j) {
            Some(k) => change[i] = image_change(k),
            None => return false,
        }
    }
    for &(i, j) in alternatives {
        let (Some(own), Some(k)) = (entry(i, sol[i]), entry(i, j)) else {
            return false;
        };
        let (a, b) = (table.vectors[own], table.vectors[k]);
        let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        change[i] = change[i].max(d + image_change(k));
    }
    let shift = change.iter().sum::<f64>() / n as f64 * normalization;
    let kept = (0..n)
        .filter(|&i| change[i] == 0.0)
        .map(|i| dist[i])
        .fold(f64::NEG_INFINITY, f64::max);
    let limit = stol * (1.0 + BOUNDARY);
    if shift == 0.0 || kept - shift > limit {
        return true;
    }
    // Half the largest distance between two kept rows' vectors (normalised).
    let kept_rows: Vec<usize> = (0..n).filter(|&i| change[i] == 0.0).collect();
    let mut widest = 0.0f64;
    for (a, &i) in kept_rows.iter().enumerate() {
        let Some(u) = entry(i, sol[i]).map(|k| table.vectors[k]) else {
            return false;
        };
        for &l in &kept_rows[a + 1..] {
            let Some(w) = entry(l, sol[l]).map(|k| table.vectors[k]) else {
                return false;
            };
            let d2 = (u[0] - w[0]).powi(2) + (u[1] - w[1]).powi(2) + (u[2] - w[2]).powi(2);
            widest = widest.max(d2);
        }
    }
    widest.sqrt() / 2.0 * normalization > limit
}

/// Whether every assignment that takes, on each row, the solution's pair or one of the
/// `alternatives` (each column at most once), with any image of a pair that ties its shortest
/// (`images`: the other vectors of a tied entry), has its largest distance after the mean
/// shift above `stol`, found by listing them all. Exact where [`alternatives_exceed`]'s
/// bound is loose: when a swap moves the farthest row, the bound knows only how far. False
/// when the listing would exceed [`ENUMERATION_BUDGET`].
fn every_alternative_exceeds(
    table: &pbc::Table,
    (sol, alternatives): (&[usize], &[(usize, usize)]),
    images: impl Fn(Vec3) -> Vec<Vec3>,
    normalization: f64,
    stol: f64,
) -> bool {
    // A pair's choices: the table's vector, then the images that tie it.
    let choices = |i: usize, j: usize, own: bool| -> Option<Vec<Choice>> {
        let k = table.range(i).find(|&k| table.col[k] == j)?;
        let v = table.vectors[k];
        let mut out = vec![Choice { col: j, v, own }];
        if table.tied.get(k) == Some(&true) {
            out.extend(images(v).into_iter().map(|v| Choice {
                col: j,
                v,
                own: false,
            }));
        }
        Some(out)
    };
    let mut options: Vec<Vec<Choice>> = Vec::with_capacity(sol.len());
    for (i, &j) in sol.iter().enumerate() {
        match choices(i, j, true) {
            Some(c) => options.push(c),
            None => return false,
        }
    }
    for &(i, j) in alternatives {
        match (choices(i, j, false), options.get_mut(i)) {
            (Some(c), Some(own)) => own.extend(c),
            _ => return false,
        }
    }
    let limit = stol * (1.0 + BOUNDARY);
    // Two vectors more than twice the limit apart cannot both be within it of the mean
    // (the margin covers the rounding of the mean a fit is measured from).
    let reach = 2.0 * limit * (1.0 + 1e-9) / normalization;
    let apart = |a: &Vec3, b: &Vec3| farther_than(a, b, reach);
    let (fixed, mut open): (Vec<usize>, Vec<usize>) =
        (0..sol.len()).partition(|&i| options[i].len() == 1);
    let mut taken = vec![false; table.cols];
    for &i in &fixed {
        let c = &options[i][0];
        match taken.get_mut(c.col) {
            Some(t) if !*t => *t = true,
            _ => return false,
        }
        if fixed.iter().any(|&l| apart(&c.v, &options[l][0].v)) {
            return true; // in every alternative
        }
    }
    // An open row's choices that some fixed row is apart from lead nowhere.
    for &i in &open {
        let kept: Vec<Choice> = options[i]
            .iter()
            .filter(|c| !fixed.iter().any(|&l| apart(&c.v, &options[l][0].v)))
            .copied()
            .collect();
        if kept.is_empty() {
            return true;
        }
        options[i] = kept;
    }
    open.sort_by_key(|&i| options[i].len());
    Listing {
        options: &options,
        open: &open,
        taken,
        chosen: vec![0; sol.len()],
        budget: ENUMERATION_BUDGET,
        limit,
        reach,
        normalization,
    }
    .every_completion_exceeds(0)
}

/// Whether two vectors are more than `reach` apart.
fn farther_than(a: &Vec3, b: &Vec3, reach: f64) -> bool {
    (0..3).map(|x| (a[x] - b[x]).powi(2)).sum::<f64>() > reach * reach
}

/// One way a row can be paired: a column and the vector to it.
#[derive(Clone, Copy)]
struct Choice {
    col: usize,
    v: Vec3,
    /// Whether this is the solution's pair with the table's vector.
    own: bool,
}

/// The state of [`every_alternative_exceeds`]'s depth-first listing.
struct Listing<'a> {
    /// Per row, the choices it may take.
    options: &'a [Vec<Choice>],
    /// The rows with more than one choice, in the order they are decided.
    open: &'a [usize],
    /// Columns held by a decided row.
    taken: Vec<bool>,
    /// Each row's choice in the assignment being built.
    chosen: Vec<usize>,
    budget: usize,
    /// The largest distance at or below which an alternative could fit.
    limit: f64,
    /// How far apart (Å) two vectors of an alternative that fits can be.
    reach: f64,
    normalization: f64,
}

impl Listing<'_> {
    /// Whether every assignment completing the decided rows (those before `open[depth]`)
    /// keeps its largest distance above the limit; false too once the budget is spent.
    fn every_completion_exceeds(&mut self, depth: usize) -> bool {
        let Some(&i) = self.open.get(depth) else {
            return self.largest_exceeds();
        };
        let Some(rest) = self.budget.checked_sub(depth + 1) else {
            return false;
        };
        self.budget = rest;
        for n in 0..self.options[i].len() {
            let c = self.options[i][n];
            if self.taken[c.col] || self.apart_from_decided(&c.v, depth) {
                continue;
            }
            self.taken[c.col] = true;
            self.chosen[i] = n;
            let exceeds = self.every_completion_exceeds(depth + 1);
            self.taken[c.col] = false;
            if !exceeds {
                return false;
            }
        }
        true
    }

    /// Whether `v` is too far from a vector the rows decided before `depth` chose for both
    /// to be within the limit of one mean.
    fn apart_from_decided(&self, v: &Vec3, depth: usize) -> bool {
        self.open[..depth].iter().any(|&l| {
            let w = self.options[l][self.chosen[l]].v;
            farther_than(v, &w, self.reach)
        })
    }

    /// Whether the complete assignment in `chosen` has its largest distance above the limit
    /// (the solution itself counts as exceeding: the caller judges it).
    fn largest_exceeds(&mut self) -> bool {
        let n = self.chosen.len();
        let Some(rest) = self.budget.checked_sub(n) else {
            return false;
        };
        self.budget = rest;
        let choice = |i: usize| self.options[i][self.chosen[i]];
        if self.open.iter().all(|&i| choice(i).own) {
            return true;
        }
        let mut mean = [0.0; 3];
        for i in 0..n {
            let v = choice(i).v;
            for a in 0..3 {
                mean[a] += v[a];
            }
        }
        let mean = mean.map(|x| x / n as f64);
        (0..n).any(|i| {
            let v = choice(i).v;
            let d2: f64 = (0..3).map(|a| (v[a] - mean[a]).powi(2)).sum();
            d2.sqrt() * self.normalization > self.limit
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of three rows and three columns with the given vectors (row-major, `None`
    /// for a pair left out) and the entries whose images tie.
    fn table(vectors: [[Option<Vec3>; 3]; 3], tied: &[(usize, usize)]) -> pbc::Table {
        let mut t = pbc::Table::empty(3);
        for (i, row) in vectors.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if let Some(v) = v {
                    t.col.push(j);
                    t.d2.push(v.iter().map(|x| x * x).sum());
                    t.vectors.push(*v);
                    t.tied.push(tied.contains(&(i, j)));
                }
            }
            t.rows += 1;
            t.start.push(t.col.len());
        }
        t
    }

    const SOL: [usize; 3] = [0, 1, 2];
    const SWAP: [(usize, usize); 2] = [(0, 1), (1, 0)];

    /// The solution's vectors put rows 0 and 1 a whole unit from their mean (stol 0.5); the
    /// swap of their columns gives `swapped` to both.
    fn swap_table(swapped: [Vec3; 2]) -> pbc::Table {
        table(
            [
                [Some([1.0, 0.0, 0.0]), Some(swapped[0]), None],
                [Some(swapped[1]), Some([-1.0, 0.0, 0.0]), None],
                [None, None, Some([0.0; 3])],
            ],
            &[],
        )
    }

    /// The solution's normalised distances in [`swap_table`].
    const DIST: [f64; 3] = [1.0, 1.0, 0.0];

    fn fits(
        t: &pbc::Table,
        alternatives: &[(usize, usize)],
        images: fn(Vec3) -> Vec<Vec3>,
    ) -> bool {
        !no_alternative_fits((t, images), (&SOL, alternatives), &DIST, 1.0, 0.5)
    }

    /// Whether the cheap bound alone rules the swap out.
    fn bound_settles(t: &pbc::Table) -> bool {
        alternatives_exceed(t, &SOL, &SWAP, &DIST, 1.0, 0.5)
    }

    #[test]
    fn a_swap_that_fits_is_found() {
        let t = swap_table([[0.0; 3]; 2]);
        assert!(!bound_settles(&t));
        assert!(fits(&t, &SWAP, |_| Vec::new()));
        // Without the alternative pairs, only the solution is left.
        assert!(!fits(&t, &[], |_| Vec::new()));
    }

    #[test]
    fn a_swap_that_cannot_fit_is_proved_where_the_bound_is_loose() {
        let t = swap_table([[3.0, 0.0, 0.0], [-3.0, 0.0, 0.0]]);
        assert!(!bound_settles(&t));
        assert!(!fits(&t, &SWAP, |_| Vec::new()));
    }

    #[test]
    fn tied_images_count_as_alternatives() {
        let mut t = swap_table([[3.0, 0.0, 0.0], [-3.0, 0.0, 0.0]]);
        t.tied = vec![true, false, false, true, false];
        // Another image of each solution pair at the mean: a fit.
        assert!(fits(&t, &[], |_| vec![[0.0; 3]]));
        // Other images far from it: none.
        assert!(!fits(&t, &[], |v| vec![v.map(|x| -4.0 * x)]));
        // An image of one row alone does not bring the other within stol.
        t.tied = vec![true, false, false, false, false];
        assert!(!fits(&t, &[], |_| vec![[0.0; 3]]));
    }

    /// An `n`×`n` table where every row may take every column, column `j`'s vector being
    /// `vector(j)`, with the identity as solution and every other pair as an alternative.
    fn every_pair_allowed(n: usize, vector: impl Fn(usize) -> Vec3) -> bool {
        let mut t = pbc::Table::empty(n);
        for _ in 0..n {
            for j in 0..n {
                t.col.push(j);
                t.d2.push(1.0);
                t.vectors.push(vector(j));
                t.tied.push(false);
            }
            t.rows += 1;
            t.start.push(t.col.len());
        }
        let sol: Vec<usize> = (0..n).collect();
        let every: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        every_alternative_exceeds(&t, (&sol, &every), |_| Vec::new(), 1.0, 0.5)
    }

    #[test]
    fn too_many_alternatives_stay_ambiguous() {
        // Column j's vector is a corner of a triangle of side 0.99 (stol 0.5): any two are
        // within 2·stol of each other, but no three corners are within stol of their mean.
        let corners = [[0.0, 0.0, 0.0], [0.99, 0.0, 0.0], [0.495, 0.857_365, 0.0]];
        // 12! assignments, each with four rows at every corner: the budget runs out.
        assert!(!every_pair_allowed(12, |j| corners[j % 3]));
        // 3! assignments, listed in full.
        assert!(every_pair_allowed(3, |j| corners[j]));
    }
}
