//! Scoring one candidate (a lattice mapping and a translation): struct2's sites moved by the
//! translation, the subset test, the table of shortest periodic vectors to struct1's sites,
//! the minimum-cost assignment and its distances after removing the mean displacement.
//!
//! A candidate near a match, whose rows each have their own nearest column, skips the table:
//! that assignment is the optimum, read from each row's nearest entry
//! ([`pbc::Columns::own_nearest`]), where the pair's recent candidates make it worth trying
//! ([`NearestOdds`]).
//!
//! A candidate with a cap is built in stages (a few rows spread over the structure, then
//! more, then all) and dropped as soon as a [`bound`] proves its sum
//! of squares exceeds the cap, before its assignment is solved; looking for a fit, also as
//! soon as some row is provably farther than stol from any mean the vectors can have
//! ([`bound::RowVectors::apart_beyond`]). A fit found at the boundary
//! of stol is checked against the other solutions an exact tie could have given
//! ([`alternatives`]).

use super::{
    alternatives, rms, Goal, Match, Prepared, Search, Work, BOUNDARY, BOUND_MIN_ROWS_FIT,
    BOUND_MIN_ROWS_RMS, NEAREST_RADIUS, TIE_DELTA,
};
use crate::linalg::Vec3;
use crate::matcher::assignment::AssignmentError;
use crate::matcher::{assignment, bound, pbc, MatcherError};

impl Search<'_> {
    /// Scores one candidate: `None` when it fails the subset test, cannot pair every site
    /// without a forbidden pair, or provably has an RMS above `cap` (when given).
    pub(super) fn score(
        &self,
        p: &mut Prepared,
        s1i: usize,
        cap: Option<f64>,
        work: &mut Work,
    ) -> Result<Option<Match>, MatcherError> {
        self.check_interrupt()?;
        let (n1, n2) = (self.n1, self.n2);
        let forbidden = &self.mask;
        let min_rows = match self.goal {
            Goal::SmallestRms { .. } => BOUND_MIN_ROWS_RMS,
            Goal::Fit => BOUND_MIN_ROWS_FIT,
        };
        let mut limit = cap
            .filter(|_| n2 >= min_rows)
            .map(|cap| self.sum_limit(p, cap));
        // Looking for a fit: how far (Å) from the vectors' mean every row must come, with a
        // margin above the boundary within which a fit is checked for ties.
        let fit_reach = (self.goal == Goal::Fit)
            .then(|| self.opts.stol * (1.0 + BOUNDARY) * (1.0 + 1e-9) / p.normalization);
        // Whether the rows of `t` so far put some row beyond that reach of any mean: no
        // assignment fits, whatever the other rows hold (a row noting an image tie could hold
        // another vector, so such tables are left to the solver).
        let apart = |r: &bound::RowVectors<'_>, t: &pbc::Table| {
            let mean = if t.rows == n2 {
                bound::Mean::OfTheseRows
            } else {
                bound::Mean::OfMoreRows
            };
            fit_reach.is_some_and(|reach| !t.tied.contains(&true) && r.apart_beyond(reach, mean))
        };
        // The limit the neighbourhood bound could not prove, to try again on the full table.
        let mut open = None;
        if let (Some(l), Goal::SmallestRms { .. }) = (limit, self.goal) {
            match self.reach_exceeds(p, s1i, l, &mut work.reach) {
                Some(true) => return Ok(None),
                // Near a translation the bound could not rule out, the staged bounds below
                // rarely can either, and trying them costs more than solving.
                Some(false) => {
                    open = limit;
                    limit = None;
                }
                None => {}
            }
        }
        let Work {
            solver,
            moved: t_s2fc,
            staged,
            full,
            near,
            reach,
            nearest,
            nearest_odds: odds,
        } = work;
        {
            let (s1fc, s2fc) = self.coords(p);
            let t: Vec3 = std::array::from_fn(|k| s1fc[s1i][k] - s2fc[self.s2_t_ind][k]);
            t_s2fc.clear();
            t_s2fc.extend(
                s2fc.iter()
                    .map(|f| -> Vec3 { std::array::from_fn(|k| f[k] + t[k]) }),
            );
        }
        let t_s2fc: &[Vec3] = t_s2fc;
        // Rows in stages, spread over the structure first: the bound of a few rows alone
        // often rules the candidate out before the whole table is built, and before the
        // subset test (which looks at every row; a candidate either test rules out is
        // skipped, so their order does not matter). An error preparing the columns is left
        // for after the subset test, where the reference would meet it.
        staged.clear(n1);
        let mut done = 0;
        if let (Some(limit), Ok(columns)) = (limit, self.columns(p)) {
            let upto = self.stages[0];
            if upto < n2 {
                let rows = self.row_order[..upto].iter().copied();
                columns.append_rows(t_s2fc, rows, forbidden, staged, near);
                done = upto;
                match bound::RowVectors::new(&staged.start, &staged.vectors) {
                    Some(r) if !apart(&r, staged) && !r.exceeds(limit) => {}
                    _ => return Ok(None), // over the cap, or a row without partners
                }
            }
        }
        {
            let Prepared {
                moved,
                frac_tol,
                superset,
                ..
            } = &mut *p;
            let (s1fc, _) = self.coords_of(moved);
            let superset = superset.get_or_insert_with(|| pbc::SupersetIndex::new(s1fc, *frac_tol));
            if !superset.contains(s1fc, t_s2fc, |i, j| forbidden.forbidden(i, j)) {
                return Ok(None);
            }
        }
        let note_ties = p.note_ties;
        let radius = NEAREST_RADIUS / p.normalization;
        let columns = self.columns(p)?;
        // Near a match every row has its own nearest column: that assignment is the optimum,
        // found from each row's nearest entry without building the table. Looking for ties,
        // only where no other entry is within the tie distance and no image ties (else the
        // table says which alternatives there are). The first stage's rows, when built,
        // already show most candidates where two rows share a nearest column.
        let delta = if note_ties { TIE_DELTA } else { 0.0 };
        let may_own = done == 0 || assignment::unique_nearest(costs_of(staged)).is_some();
        let settled = may_own && odds.worth_trying() && {
            let own =
                columns.own_nearest(t_s2fc, &self.row_order, forbidden, (radius, delta), nearest);
            odds.record(own);
            own
        };
        if settled {
            let sol = nearest.entries.iter().map(|e| e.col).collect();
            let short = nearest.entries.iter().map(|e| e.vector).collect();
            return Ok(Some(
                self.matched(p, (sol, short), cap, |_, _| (false, false)),
            ));
        }
        let table = match limit {
            Some(limit) => {
                let first = done;
                for &upto in self.stages.iter().filter(|&&u| u > first) {
                    let rows = self.row_order[done..upto].iter().copied();
                    columns.append_rows(t_s2fc, rows, forbidden, staged, near);
                    done = upto;
                    if upto < n2 {
                        match bound::RowVectors::new(&staged.start, &staged.vectors) {
                            Some(r) if !apart(&r, staged) && !r.exceeds(limit) => {}
                            _ => return Ok(None),
                        }
                    }
                }
                staged.reordered_into(&self.row_order, full);
                &*full
            }
            None => {
                columns.table_into(t_s2fc, forbidden, full, near);
                &*full
            }
        };
        let costs = costs_of(table);
        // Looking for a fit: pairs an equally cheap alternative could use instead.
        let mut alternatives: Vec<(usize, usize)> = Vec::new();
        let sol = match assignment::unique_nearest(costs) {
            // Every site has its own nearest partner: the optimum, found in O(n²).
            Some(sol) => {
                if note_ties {
                    alternatives = assignment::near_alternative_to_nearest(costs, &sol, TIE_DELTA);
                }
                sol
            }
            None => {
                // The bounds' view of the table, made once when some bound will look at it.
                let rows = (fit_reach.is_some() || limit.is_some())
                    .then(|| bound::RowVectors::new(&table.start, &table.vectors));
                if let Some(Some(r)) = &rows {
                    if apart(r, table) {
                        return Ok(None);
                    }
                }
                if let Some(l) = open {
                    if self.mean_cannot_reach(p, table, costs, l, reach) {
                        return Ok(None);
                    }
                }
                if let (Some(limit), Some(rows)) = (limit, &rows) {
                    let Some(rows) = rows else {
                        return Ok(None); // a row with no allowed partner: infeasible
                    };
                    if rows.exceeds(limit) {
                        return Ok(None);
                    }
                }
                // Every complete assignment of an infeasible block pays a forbidden pair:
                // its value is astronomically above stol, so it can neither win nor be
                // returned.
                match assignment::solve_blocks_noting_ties(
                    solver,
                    costs,
                    note_ties.then_some(TIE_DELTA),
                ) {
                    Ok((sol, near)) => {
                        alternatives = near;
                        sol
                    }
                    Err(AssignmentError::Infeasible) => return Ok(None),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        let short: Vec<Vec3> = sol
            .iter()
            .enumerate()
            .map(|(i, &j)| table.vector(i, j))
            .collect();
        let flags = |sol: &[usize], dist: &[f64]| {
            let tied = note_ties
                && (!alternatives.is_empty()
                    || sol.iter().enumerate().any(|(i, &j)| {
                        table
                            .range(i)
                            .find(|&k| table.col[k] == j)
                            .is_some_and(|k| table.tied.get(k) == Some(&true))
                    }));
            let ambiguous = note_ties
                && !alternatives::no_alternative_fits(
                    (table, |v| {
                        p.columns
                            .as_ref()
                            .map_or_else(Vec::new, |c| c.tied_images(v))
                    }),
                    (sol, &alternatives),
                    dist,
                    p.normalization,
                    self.opts.stol,
                );
            (tied, ambiguous)
        };
        Ok(Some(self.matched(p, (sol, short), cap, flags)))
    }

    /// The match of solution `sol` with its vectors `short`: their distances after removing
    /// the mean, valued for the goal; `flags` says from the solution and the distances
    /// whether the candidate is tied and ambiguous (see [`Match`]).
    fn matched(
        &self,
        p: &Prepared,
        (sol, short): (Vec<usize>, Vec<Vec3>),
        cap: Option<f64>,
        flags: impl FnOnce(&[usize], &[f64]) -> (bool, bool),
    ) -> Match {
        let n = short.len();
        let mut translation = [0.0; 3];
        for v in &short {
            for k in 0..3 {
                translation[k] += v[k];
            }
        }
        let translation = translation.map(|x| x / n as f64);
        let dist: Vec<f64> = short
            .iter()
            .map(|v| {
                let d: Vec3 = std::array::from_fn(|k| v[k] - translation[k]);
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * p.normalization
            })
            .collect();
        let (tied, ambiguous) = flags(&sol, &dist);
        let val = match self.goal {
            Goal::SmallestRms { .. } => rms_against(&dist, cap),
            Goal::Fit => dist.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        };
        Match {
            val,
            dist,
            sol,
            normalization: p.normalization,
            short,
            translation,
            average: p.average,
            aligned: p.aligned,
            ambiguous,
            tied,
        }
    }
}

/// Whether looking for each row's own nearest entry ([`pbc::Columns::own_nearest`]) has been
/// settling this pair's candidates: it is tried while it does; after two failures in a row,
/// on one candidate in [`NearestOdds::RETRY`] only, so that a pair whose candidates are far
/// from any match (rows sharing their nearest column) does not pay for it before every table.
/// It decides only how a candidate's assignment is found, never what it is.
#[derive(Default)]
pub(super) struct NearestOdds {
    failures: u32,
    skipped: u32,
}

impl NearestOdds {
    const RETRY: u32 = 8;

    fn worth_trying(&mut self) -> bool {
        if self.failures < 2 {
            return true;
        }
        self.skipped += 1;
        self.skipped.is_multiple_of(Self::RETRY)
    }

    fn record(&mut self, settled: bool) {
        self.failures = if settled { 0 } else { self.failures + 1 };
    }
}

/// A table as the assignment solvers read it.
fn costs_of(t: &pbc::Table) -> assignment::SparseCosts<'_> {
    assignment::SparseCosts {
        rows: t.rows,
        cols: t.cols,
        start: &t.start,
        col: &t.col,
        cost: &t.d2,
        forbidden: pbc::FORBIDDEN,
    }
}

/// [`rms`], except that a candidate a plain sum already puts above `limit`, by far more than
/// the two sums can differ (about n ulps), gets the plain value: it cannot become the best,
/// and numpy's order costs more where fused multiply-adds are emulated (wasm).
pub(super) fn rms_against(dist: &[f64], limit: Option<f64>) -> f64 {
    if let Some(limit) = limit {
        let plain = dist.iter().map(|d| d * d).sum::<f64>().sqrt() / (dist.len() as f64).sqrt();
        if plain > limit * (1.0 + 1e-10) {
            return plain;
        }
    }
    rms(dist)
}
