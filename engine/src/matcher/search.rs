//! The search over lattice mappings and translations (pymatgen's `_strict_match`).
//!
//! Every candidate is a lattice mapping (a basis of the moving structure's lattice close to
//! the fixed one's) and a translation (the first struct2 site of the rarest element put onto
//! one struct1 site of that element). A candidate's sites are paired by a minimum-cost
//! assignment of squared periodic distances on the average lattice; its value is the RMS or
//! the largest of the distances after removing their mean.
//!
//! Two questions, two visiting orders, one answer each as the reference's:
//! - [`Goal::Fit`] asks whether *some* candidate has every distance below `stol`. The answer
//!   does not depend on the order, so the search starts with the most promising mappings
//!   (rotation closest to the identity) and translations (shortest): a correct answer in the
//!   target's own frame is found on the first candidate instead of after every mapping the
//!   reference happens to list first (a 512-site supercell with one site moved: fit and
//!   get_rms_dist together 5.5 s → 0.33 s).
//! - [`Goal::SmallestRms`] returns the first candidate, in the reference's order, with the
//!   smallest RMS (or the first below 1e-5, where the reference stops). The order matters
//!   for ties, so it is kept; but one promising candidate is scored first, and its RMS caps
//!   every later candidate: a candidate whose RMS provably exceeds that cap ([`bound`]) can be
//!   neither the smallest nor below 1e-5 (the cap never goes below 1e-5), so it is skipped
//!   without solving its assignment. The result is the one the full search gives.

use super::assignment::{self, Assignment, AssignmentError};
use super::bound;
use super::orbits::{MappingOrbits, Orbit, Symmetries};
use super::pbc;
use super::periodicity;
use super::reduced::ReducedStructure;
use super::supercell::{supercell_frac, Mask};
use super::{average_with_parameters, MatcherError, MatcherOptions};
use crate::lattice_mapping::{self, LatticeMapping};
use crate::linalg::{
    det_i64, inverse_numpy, parameters, reciprocal_lengths, vec_mat, vec_mat_fused, volume,
    FusedMatrix, Mat3, Vec3,
};
use crate::numeric::distance_to_integer;
use crate::reduction::{lll_reduce_matrix, LllReduction, LLL_DELTA};

/// Site counts from which candidates are dismissed by [`bound`] before their assignment is
/// solved (smaller tables solve faster than the proof runs). Measured on the evaluate and
/// matcher benchmarks: looking for the smallest RMS, the cap is tight and the proof usually
/// succeeds; looking for a fit against stol it mostly fails and only pays off on large cells.
const BOUND_MIN_ROWS_RMS: usize = 4;
const BOUND_MIN_ROWS_FIT: usize = 64;

/// Relative margin on the sum of squares before a bound dismisses a candidate (covers the
/// rounding of the bound against the rounding of the candidate's own value).
const BOUND_MARGIN: f64 = 4e-9;

/// Rows in the first stage of a bounded candidate's table (see [`spread_order`]): on the
/// evaluate benchmark most wrong candidates are ruled out by 8 or 16 rows, which with the
/// bound's boxes around one row's vectors took the 2,500 tasks from 5.5 s to 3.0 s.
const PREFIX_ROWS: usize = 8;

/// Squared distance (Å²) within which two assignments count as tied when folding fit
/// searches by symmetry: far above the rounding by which symmetric copies of a table differ
/// (coordinates printed to 8 decimals: about 1e-6 Å² on a 10 Å cell).
const TIE_DELTA: f64 = 1e-5;

/// Relative distance to stol within which a largest distance counts as at the fit
/// boundary (where rounding of the symmetric copies could decide).
const BOUNDARY: f64 = 1e-6;

/// Below this RMS the reference stops searching.
const RMS_EXACT: f64 = 1e-5;

/// The quantities of an average lattice the search needs, computed once per distinct lattice.
#[derive(Clone)]
struct AverageFacts {
    /// `(n/V)^(1/3)`, or `None` when not finite.
    normalization: Option<f64>,
    /// pymatgen's `reciprocal_lattice.abc`, `None` for a singular lattice.
    inv_abc: Option<Vec3>,
    /// Its LLL reduction, once asked for (`Err` when it failed).
    lll: Option<Result<LllReduction, crate::reduction::ReductionError>>,
}

/// A candidate match.
#[derive(Clone)]
pub(super) struct Match {
    /// The figure being minimised: RMS or largest normalised distance.
    pub val: f64,
    /// Normalised distance of each struct2 site to its partner.
    pub dist: Vec<f64>,
    /// For each struct2 site, the struct1 site it is paired with.
    pub sol: Vec<usize>,
    /// `(n/V)^(1/3)` of the average lattice.
    pub normalization: f64,
    /// Each struct2 site's vector to its partner (Å, average lattice frame), and their mean.
    pub short: Vec<Vec3>,
    /// The mean of `short` (the common shift the distances are measured without).
    pub translation: Vec3,
    /// The average lattice the vectors live on.
    pub average: Mat3,
    /// The mapped basis of the moving structure (rows, its own Cartesian frame) that the
    /// average lattice stands for.
    pub aligned: Mat3,
    /// For an orbit representative's candidate in a fit search (else false): whether
    /// another assignment costs within `TIE_DELTA` of this one's
    /// (a solver visiting the columns in another order could have returned it), or a pair's
    /// vector was one of two images within `TIE_DELTA` (the scan order picked it).
    pub ambiguous: bool,
    /// For a candidate scored while noting ties (else false): whether another assignment
    /// costs within `TIE_DELTA` of this one's, or one of its pairs' vectors was one of two
    /// images within `TIE_DELTA`: a symmetric copy of the candidate may then resolve the
    /// tie otherwise (see [`Search::settle_orbit_tie`]).
    pub tied: bool,
}

/// What the search is for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Goal {
    /// Whether some candidate has its largest distance below `stol` (`fit`).
    Fit,
    /// The candidate with the smallest RMS (`get_rms_dist`). `known`: an RMS that some
    /// candidate of this search is known to reach (the fit found before), which caps the
    /// search from its start. `bounded`: whether candidates that provably exceed the best
    /// so far are skipped (always, except to check that skipping them changes nothing).
    SmallestRms { known: Option<f64>, bounded: bool },
}

/// The fixed data of one search.
struct Search<'a> {
    s1: &'a ReducedStructure,
    moving: &'a ReducedStructure,
    fixed: &'a ReducedStructure,
    /// The fixed lattice's parameters, which every average lattice takes half of.
    fixed_parameters: [f64; 6],
    cart_moving: Vec<Vec3>,
    mask: Mask,
    n1: usize,
    n2: usize,
    s2_t_ind: usize,
    s1_t_inds: Vec<usize>,
    fu: usize,
    s1_supercell: bool,
    opts: &'a MatcherOptions,
    goal: Goal,
    /// Struct1's internal translations in its own reduced basis, when candidates are thinned
    /// by them (see [`Search::candidates`]); found once, carried into each mapping's basis.
    self_translations: Option<Vec<Vec3>>,
    /// Struct2's sites in the order candidates' tables are built, spread over the structure
    /// first, and the row counts after which the bound is tried.
    row_order: Vec<usize>,
    /// What was worked out for each distinct average lattice met so far (symmetric lattice
    /// mappings often share one): see [`Search::average_facts`].
    averages: std::cell::RefCell<rustc_hash::FxHashMap<[[u64; 3]; 3], AverageFacts>>,
    stages: Vec<usize>,
}

/// What two searches of the same preprocessed pair (a fit, then the smallest RMS) share: the
/// lattice mappings, found once, struct1's point operations already tested (see `orbits`),
/// and the fitting candidate (mapping index, struct1 site, match), which the smallest-RMS
/// search would otherwise score again: its table and assignment are the same whichever
/// search builds them (staged or whole, noting ties or not), so only its value, the RMS of
/// the same distances, is computed again.
#[derive(Default)]
pub(super) struct Shared {
    mappings: Option<Vec<LatticeMapping>>,
    symmetries: Symmetries,
    fitted: Option<(usize, usize, Match)>,
}

/// Buffers reused from candidate to candidate of a search.
#[derive(Default)]
struct Work {
    solver: Assignment,
    /// Struct2's sites moved by the candidate's translation.
    moved: Vec<Vec3>,
    /// The candidate's table, built in stages.
    staged: pbc::Table,
    /// The candidate's whole table.
    full: pbc::Table,
    /// The column window's buffer.
    near: Vec<usize>,
    /// The neighbourhood bound's buffers.
    reach: ReachWork,
}

/// Buffers of the neighbourhood bound (see [`Search::reach_exceeds`]).
#[derive(Default)]
struct ReachWork {
    /// Anchor partners whose neighbourhoods are asked about.
    partners: Vec<usize>,
    /// Rows' vectors near a translation, flattened, and where each row starts.
    cube: Vec<Vec3>,
    cube_start: Vec<usize>,
    /// The column window's buffer.
    near: Vec<usize>,
}

/// One lattice mapping, ready for its candidates.
struct Prepared {
    /// The moving structure's sites in the mapped basis (expanded when `fu > 1`), placed by
    /// [`Search::place_sites`] once the mapping is to be searched.
    moved: Vec<Vec3>,
    /// The mapping's integer matrix (for the supercell expansion when `fu > 1`).
    scale: [[i64; 3]; 3],
    /// Cartesian → mapped fractional coordinates (`fu == 1`).
    to_mapped: Option<Mat3>,
    /// The mapping's basis of the moving lattice.
    aligned: Mat3,
    average: Mat3,
    normalization: f64,
    /// pymatgen's per-axis fractional tolerance of the subset test.
    frac_tol: Vec3,
    /// Struct1's sites indexed for the subset test of each translation, built when a first
    /// candidate gets that far (most mappings have none: the bounds dismiss them all).
    superset: Option<pbc::SupersetIndex>,
    /// The LLL reduction of the average lattice when it was already computed (for the
    /// orbit test), so the columns below need not reduce it again.
    lll: Option<LllReduction>,
    /// Struct1's sites as the columns of distance tables on the LLL reduction of the average
    /// lattice, prepared when a first candidate passes the subset test (the reference reduces
    /// the lattice at that point).
    columns: Option<pbc::Columns>,
    /// Whether candidates note how ambiguous their assignment is ([`Match::ambiguous`]):
    /// for a fit search's orbit representatives, whose answer stands for their orbit.
    note_ties: bool,
    /// Per struct1 site `k`: the limit at which the neighbourhood of the translation onto
    /// `k` was bounded, and whether the bound exceeded it (see [`Search::reach_exceeds`]).
    regions: Vec<Option<(f64, bool)>>,
}

/// Matches struct2 onto struct1 (pymatgen's `_strict_match`): struct1, after expansion into
/// `fu` cells when `s1_supercell`, must have at least as many sites as struct2 (after its
/// expansion otherwise). `shared` holds what a second search of the same pair (a fit, then
/// the smallest RMS) need not find again: the lattice mappings and struct1's symmetry.
pub(super) fn strict_match(
    s1: &ReducedStructure,
    s2: &ReducedStructure,
    fu: usize,
    s1_supercell: bool,
    opts: &MatcherOptions,
    goal: Goal,
    shared: &mut Shared,
) -> Result<Option<Match>, MatcherError> {
    let mask = Mask::new(&s1.elements, &s2.elements, fu, s1_supercell);
    let (n1, n2) = (mask.cols.len(), mask.rows.len());
    // Without subsets the expanded site counts must agree; in any case every struct2 site
    // needs its own partner of the same element.
    if n2 > n1 || (!opts.allow_subset && n1 != n2) || !mask.feasible() {
        return Ok(None);
    }
    // The struct2 site of the rarest element (first one), and its struct1 partners.
    let (s2_t_ind, s1_t_inds) = mask.translation_indices(fu, s1_supercell);
    // The structure whose lattice is mapped onto the other's (and expanded when fu > 1).
    let (moving, fixed) = if s1_supercell { (s1, s2) } else { (s2, s1) };
    let Shared {
        mappings,
        symmetries,
        fitted,
    } = shared;
    if mappings.is_none() {
        *mappings = Some(
            lattice_mapping::find_all_mappings(
                &moving.lattice,
                &fixed.lattice,
                opts.ltol,
                opts.angle_tol,
            )?
            .into_iter()
            .filter(|m| det_i64(&m.scale).unsigned_abs() == fu as u64)
            .collect(),
        );
    }
    let mappings: &[LatticeMapping] = mappings.as_deref().unwrap_or_default();
    // Looking for the smallest RMS, candidates a translation of struct1's own periodicity
    // apart give the same distance tables up to a column permutation (see `periodicity`): one
    // of each is kept. Not when looking for a fit: there the permutation can break ties
    // between equal-cost assignments differently and change whether some candidate's largest
    // distance is within stol (measured: one of 10,282 differential cases). With fu > 1
    // `translation_indices` already thins the copies.
    let self_translations = match s1_t_inds.first() {
        Some(&anchor)
            if matches!(goal, Goal::SmallestRms { .. }) && fu == 1 && s1_t_inds.len() > 1 =>
        {
            Some(periodicity::self_translations(
                &s1.frac,
                &s1.elements,
                anchor,
            ))
        }
        _ => None,
    };
    let search = Search {
        s1,
        moving,
        fixed,
        fixed_parameters: parameters(&fixed.lattice),
        cart_moving: FusedMatrix::new(moving.lattice).apply_all(&moving.frac),
        mask,
        n1,
        n2,
        s2_t_ind,
        s1_t_inds,
        fu,
        s1_supercell,
        opts,
        goal,
        self_translations,
        row_order: spread_order(n2),
        averages: Default::default(),
        stages: stages(n2),
    };
    match goal {
        Goal::Fit => search.first_fit(mappings, symmetries, fitted),
        Goal::SmallestRms {
            known,
            bounded: true,
        } => search.smallest_rms(mappings, known, symmetries, fitted),
        Goal::SmallestRms { bounded: false, .. } => {
            search.smallest_below(mappings, None, &mut Work::default(), symmetries, &mut None)
        }
    }
}

impl Search<'_> {
    /// Struct1's and struct2's fractional coordinates for a prepared mapping.
    fn coords<'p>(&'p self, p: &'p Prepared) -> (&'p [Vec3], &'p [Vec3]) {
        self.coords_of(&p.moved)
    }

    /// [`Search::coords`] from a prepared mapping's moved sites.
    fn coords_of<'p>(&'p self, moved: &'p [Vec3]) -> (&'p [Vec3], &'p [Vec3]) {
        if self.s1_supercell {
            (moved, &self.fixed.frac)
        } else {
            (&self.fixed.frac, moved)
        }
    }

    /// The average lattice and tolerances of one mapping (its sites are placed by
    /// [`Search::place_sites`]); `None` when the mapping is degenerate (the reference would
    /// skip it too).
    fn prepare(&self, mapping: &LatticeMapping) -> Option<Prepared> {
        let to_mapped = match self.fu {
            1 => Some(inverse_numpy(&mapping.aligned)?),
            _ => None,
        };
        let average = average_with_parameters(&mapping.aligned, &self.fixed_parameters);
        let facts = self.average_facts(&average, false);
        let (normalization, inv_abc) = (facts.normalization?, facts.inv_abc?);
        let frac_tol = inv_abc.map(|x| x * self.opts.stol / (std::f64::consts::PI * normalization));
        Some(Prepared {
            moved: Vec::new(),
            scale: mapping.scale,
            to_mapped,
            aligned: mapping.aligned,
            average,
            normalization,
            frac_tol,
            superset: None,
            lll: None,
            columns: None,
            note_ties: false,
            regions: Vec::new(),
        })
    }

    /// The normalization, reciprocal lengths and (with `lll`) LLL reduction of an average
    /// lattice, from the cache when this lattice (bit for bit) was met before.
    fn average_facts(&self, average: &Mat3, lll: bool) -> AverageFacts {
        let mut cache = self.averages.borrow_mut();
        let facts = cache
            .entry(average.map(|r| r.map(f64::to_bits)))
            .or_insert_with(|| {
                let normalization = libm::pow(self.n1 as f64 / volume(average), 1.0 / 3.0);
                AverageFacts {
                    normalization: normalization.is_finite().then_some(normalization),
                    inv_abc: reciprocal_lengths(average),
                    lll: None,
                }
            });
        if lll && facts.lll.is_none() {
            facts.lll = Some(lll_reduce_matrix(average, LLL_DELTA));
        }
        facts.clone()
    }

    /// The LLL reduction of an average lattice (cached with [`Search::average_facts`]).
    fn lll_of(&self, average: &Mat3) -> Result<LllReduction, crate::reduction::ReductionError> {
        match self.average_facts(average, true).lll {
            Some(r) => r,
            None => lll_reduce_matrix(average, LLL_DELTA),
        }
    }

    /// Places the moving structure's sites in the mapped basis of a prepared mapping, as the
    /// reference does (Cartesian coordinates times numpy's inverse of the mapped lattice,
    /// wrapped, or the supercell expansion when `fu > 1`); `None` for a degenerate mapping.
    /// Deferred until a mapping is searched: mappings folded into an orbit never need them.
    fn place_sites(&self, p: &mut Prepared) -> Option<()> {
        if !p.moved.is_empty() || self.moving.frac.is_empty() {
            return Some(());
        }
        p.moved = match p.to_mapped {
            Some(inv) => {
                let mut moved = FusedMatrix::new(inv).apply_all(&self.cart_moving);
                for f in &mut moved {
                    *f = f.map(|x| x - crate::numeric::floor(x));
                }
                moved
            }
            None => supercell_frac(&self.moving.frac, &p.scale)?,
        };
        Some(())
    }

    /// The translation candidates of a prepared mapping, in the reference's order, thinned by
    /// struct1's internal translations when [`Search::self_translations`] holds them.
    fn candidates(&self, p: &Prepared) -> Vec<usize> {
        let Some(own) = self.self_translations.as_ref() else {
            return self.s1_t_inds.clone();
        };
        let (s1fc, _) = self.coords(p);
        // Struct1 is the moving structure: its translations follow its sites into the
        // mapped basis (through Cartesian coordinates, as the sites do).
        let translations: Vec<Vec3> = match (self.s1_supercell, p.to_mapped) {
            (true, Some(inv)) => own
                .iter()
                .map(|t| vec_mat_fused(vec_mat_fused(*t, &self.s1.lattice), &inv))
                .collect(),
            _ => own.clone(),
        };
        periodicity::distinct_candidates(s1fc, &self.s1_t_inds, &translations)
    }

    /// The translation candidates ordered by the length of their translation (shortest
    /// first; ties in the reference's order).
    fn candidates_by_promise(&self, p: &Prepared) -> Vec<usize> {
        let (s1fc, s2fc) = self.coords(p);
        let anchor = s2fc[self.s2_t_ind];
        let mut keyed: Vec<(f64, usize)> = self
            .candidates(p)
            .into_iter()
            .map(|s1i| {
                let t: Vec3 =
                    std::array::from_fn(|k| distance_to_integer(s1fc[s1i][k] - anchor[k]));
                let c = vec_mat(t, &p.average);
                (c[0] * c[0] + c[1] * c[1] + c[2] * c[2], s1i)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        keyed.into_iter().map(|(_, s1i)| s1i).collect()
    }

    /// Stops the search once the caller's interrupt is raised.
    fn check_interrupt(&self) -> Result<(), MatcherError> {
        if self.opts.interrupt.is_raised() {
            return Err(MatcherError::Interrupted);
        }
        Ok(())
    }

    /// Scores one candidate: `None` when it fails the subset test, cannot pair every site
    /// without a forbidden pair, or provably has an RMS above `cap` (when given).
    fn score(
        &self,
        p: &mut Prepared,
        s1i: usize,
        cap: Option<f64>,
        work: &mut Work,
    ) -> Result<Option<Match>, MatcherError> {
        self.check_interrupt()?;
        let (n1, n2) = (self.n1, self.n2);
        let forbidden = |i: usize, j: usize| self.mask.forbidden(i, j);
        let min_rows = match self.goal {
            Goal::SmallestRms { .. } => BOUND_MIN_ROWS_RMS,
            Goal::Fit => BOUND_MIN_ROWS_FIT,
        };
        let mut limit = cap
            .filter(|_| n2 >= min_rows)
            .map(|cap| n2 as f64 * (cap / p.normalization).powi(2) * (1.0 + BOUND_MARGIN));
        // The limit the neighbourhood bound could not prove, to try again on the full table.
        let mut open = None;
        if let (Some(l), Goal::SmallestRms { .. }) = (limit, self.goal) {
            match self.reach_exceeds(p, s1i, l, &mut work.reach) {
                Some(true) => return Ok(None),
                // Near a translation the bound could not rule out, the staged bounds below
                // rarely can either (measured on the evaluate benchmark: 760 of 7,760
                // such candidates, for more time than solving all of them took).
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
                    Some(r) if !r.exceeds(limit) => {}
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
            if !superset.contains(s1fc, t_s2fc, forbidden) {
                return Ok(None);
            }
        }
        let columns = self.columns(p)?;
        let table = match limit {
            Some(limit) => {
                let first = done;
                for &upto in self.stages.iter().filter(|&&u| u > first) {
                    let rows = self.row_order[done..upto].iter().copied();
                    columns.append_rows(t_s2fc, rows, forbidden, staged, near);
                    done = upto;
                    if upto < n2 {
                        match bound::RowVectors::new(&staged.start, &staged.vectors) {
                            Some(r) if !r.exceeds(limit) => {}
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
        let costs = assignment::SparseCosts {
            rows: n2,
            cols: n1,
            start: &table.start,
            col: &table.col,
            cost: &table.d2,
            forbidden: pbc::FORBIDDEN,
        };
        let note_ties = p.note_ties;
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
                if let Some(l) = open {
                    if self.mean_cannot_reach(p, table, costs, l, reach) {
                        return Ok(None);
                    }
                }
                if let Some(limit) = limit {
                    let Some(rows) = bound::RowVectors::new(&table.start, &table.vectors) else {
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
        let mut translation = [0.0; 3];
        for v in &short {
            for k in 0..3 {
                translation[k] += v[k];
            }
        }
        let translation = translation.map(|x| x / n2 as f64);
        let dist: Vec<f64> = short
            .iter()
            .map(|v| {
                let d: Vec3 = std::array::from_fn(|k| v[k] - translation[k]);
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * p.normalization
            })
            .collect();
        let tied = note_ties
            && (!alternatives.is_empty()
                || sol.iter().enumerate().any(|(i, &j)| {
                    table
                        .range(i)
                        .find(|&k| table.col[k] == j)
                        .is_some_and(|k| table.tied.get(k) == Some(&true))
                }));
        let ambiguous = note_ties
            && !alternatives_exceed(
                table,
                &sol,
                &alternatives,
                &dist,
                p.normalization,
                self.opts.stol,
            );
        let val = match self.goal {
            Goal::SmallestRms { .. } => rms_against(&dist, cap),
            Goal::Fit => dist.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        };
        Ok(Some(Match {
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
        }))
    }

    /// Whether the candidate putting struct2's anchor site onto struct1 site `s1i` provably
    /// has a sum of squares above `limit` (Å²), from what is known near the translations its
    /// mean can reach.
    ///
    /// The anchor row's own term alone exceeds `limit` unless the mean `t̄` lies within
    /// `r = √limit` of one of that row's vectors, each of which leads to another anchor
    /// partner `k`: then the candidate's total translation is the translation onto `k` plus
    /// a shift `δ` with `|δ| ≤ r`, and every row's vector minus `t̄` is a periodic image of
    /// its vector at that translation minus `δ`. So a bound on the box `[-r, r]³` at the
    /// translation onto `k` ([`Search::region_exceeds`]), once per mapping and `k`, holds for
    /// every candidate reaching `k`; a wrong translation usually fails on its first rows.
    /// `None` when the question cannot be answered cheaply (the cube query would span half
    /// a cell, or the columns are not available).
    fn reach_exceeds(
        &self,
        p: &mut Prepared,
        s1i: usize,
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        self.columns(p).ok()?;
        let Prepared {
            moved,
            columns: Some(columns),
            regions,
            ..
        } = p
        else {
            return None;
        };
        let (s1fc, s2fc) = self.coords_of(moved);
        let anchor = self.s2_t_ind;
        // Where the candidate puts the anchor, computed as its table row is (to the last bit:
        // a partner at the tolerance's edge must be one of the row's entries, or not).
        let a = s2fc[anchor];
        let at: Vec3 = std::array::from_fn(|x| a[x] + (s1fc[s1i][x] - a[x]));
        columns.partners(
            at,
            |j| !self.mask.forbidden(anchor, j),
            &mut work.near,
            &mut work.partners,
        );
        // Without a partner for the anchor, no assignment avoids a forbidden pair.
        if work.partners.is_empty() {
            return Some(true);
        }
        self.partner_regions_exceed(columns, regions, s1fc, s2fc, limit, work)
    }

    /// Whether the bound exceeds `limit` near the translation onto each struct1 site listed
    /// in `work.partners` (computed once per mapping and site, see
    /// [`Search::region_exceeds`]); `None` when a region cannot be bounded cheaply.
    fn partner_regions_exceed(
        &self,
        columns: &pbc::Columns,
        regions: &mut Vec<Option<(f64, bool)>>,
        s1fc: &[Vec3],
        s2fc: &[Vec3],
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        let a = s2fc[self.s2_t_ind];
        let onto = |k: usize| -> Vec3 { std::array::from_fn(|x| s1fc[k][x] - a[x]) };
        let r = limit.sqrt() * (1.0 + 1e-9) + 1e-9;
        regions.resize(self.n1, None);
        for n in 0..work.partners.len() {
            let k = work.partners[n];
            let exceeds = match regions[k] {
                // Exceeded at a limit at least this one, or not at one at most this one.
                Some((l, true)) if l >= limit => Some(true),
                Some((l, false)) if l <= limit => Some(false),
                _ => {
                    let e = self.region_exceeds(columns, s2fc, onto(k), r, limit, work);
                    if let Some(e) = e {
                        regions[k] = Some((limit, e));
                    }
                    e
                }
            };
            if exceeds != Some(true) {
                return exceeds;
            }
        }
        Some(true)
    }

    /// Whether a candidate whose neighbourhood bound did not rule it out still provably has
    /// a sum of squares above `limit`, now that its whole `table` is built: its optimal
    /// assignment costs `Σ |v_i|² = Σ |v_i − t̄|² + n |t̄|²`, at most what any complete
    /// assignment costs ([`assignment::feasible_cost`]), so the mean lies within `√(that / n)`
    /// of zero, and only the anchor partners
    /// whose vector is within that plus `√limit` can lead the mean to them (see
    /// [`Search::reach_exceeds`]). Usually that leaves the candidate's own translation, far
    /// from the one that matches: a supercell with one site moved had seven such candidates
    /// per search, each a 512-site assignment solved for nothing.
    fn mean_cannot_reach(
        &self,
        p: &mut Prepared,
        table: &pbc::Table,
        costs: assignment::SparseCosts<'_>,
        limit: f64,
        work: &mut ReachWork,
    ) -> bool {
        let Some(upper) = assignment::feasible_cost(costs) else {
            return false;
        };
        let anchor = self.s2_t_ind;
        if anchor >= table.rows {
            return false;
        }
        let r = limit.sqrt() * (1.0 + 1e-9) + 1e-9;
        // The margin covers a solver returning an assignment a rounding above the optimum.
        let reach = (upper * (1.0 + 1e-9) / self.n2 as f64).sqrt() + r + 1e-9;
        work.partners.clear();
        for e in table.range(anchor) {
            let v = table.vectors[e];
            if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() <= reach {
                work.partners.push(table.col[e]);
            }
        }
        let Prepared {
            moved,
            columns: Some(columns),
            regions,
            ..
        } = p
        else {
            return false;
        };
        let (s1fc, s2fc) = self.coords_of(moved);
        self.partner_regions_exceed(columns, regions, s1fc, s2fc, limit, work) == Some(true)
    }

    /// Whether, at translation `t` of struct2's sites, `Σ_i min_v |v − δ|²` over each row's
    /// allowed vectors `v` exceeds `limit` for every `δ` in the box `[-r, r]³` (with
    /// `r² > limit`). A row's vectors outside the cube `[-2r, 2r]³` are more than `r` from
    /// the box, so a row without any there ends the proof; the rows are taken in spread
    /// order, and the sum of their distances to the whole box usually exceeds `limit` after
    /// a few. What remains is split as in [`bound`]. `None` when a row's cube query
    /// declines (the cube would span half a cell).
    fn region_exceeds(
        &self,
        columns: &pbc::Columns,
        s2fc: &[Vec3],
        t: Vec3,
        r: f64,
        limit: f64,
        work: &mut ReachWork,
    ) -> Option<bool> {
        let ReachWork {
            near,
            cube,
            cube_start,
            ..
        } = work;
        cube.clear();
        cube_start.clear();
        cube_start.push(0);
        let mut total = 0.0;
        for &i in &self.row_order {
            let f: Vec3 = std::array::from_fn(|x| s2fc[i][x] + t[x]);
            let start = cube.len();
            if !columns.in_cube(f, 2.0 * r, |j| !self.mask.forbidden(i, j), near, cube) {
                return None;
            }
            let best = cube[start..]
                .iter()
                .map(|v| {
                    v.iter()
                        .map(|&x| (x.abs() - r).max(0.0).powi(2))
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min);
            total += best;
            if total > limit {
                return Some(true);
            }
            cube_start.push(cube.len());
        }
        Some(
            bound::RowVectors::new(cube_start, cube)
                .is_some_and(|rows| rows.exceeds_on_box([-r; 3], [r; 3], limit)),
        )
    }

    /// The orbits of lattice mappings under struct1's point symmetry, where they apply (no
    /// supercell, struct1 the structure whose lattice is mapped) and are asked for
    /// ([`super::MatcherOptions::fold_symmetric_mappings`]).
    fn orbits<'t>(&'t self, tested: &'t mut Symmetries) -> Option<MappingOrbits<'t>> {
        if !self.opts.fold_symmetric_mappings {
            return None;
        }
        match self.s1_t_inds.first() {
            Some(&anchor) if self.fu == 1 && self.s1_supercell => Some(MappingOrbits::new(
                &self.s1.lattice,
                &self.s1.frac,
                &self.s1.elements,
                anchor,
                tested,
            )),
            _ => None,
        }
    }

    /// The mapping's shortest-vector columns: struct1's sites on the LLL reduction of the
    /// average lattice, prepared on first use.
    fn columns<'p>(&self, p: &'p mut Prepared) -> Result<&'p pbc::Columns, MatcherError> {
        if p.columns.is_none() {
            let lll = match p.lll.take() {
                Some(lll) => lll,
                None => self.lll_of(&p.average)?,
            };
            let inv_lll_abc = reciprocal_lengths(&lll.matrix)
                .ok_or_else(|| MatcherError::Degenerate("average lattice".into()))?;
            let tol =
                inv_lll_abc.map(|x| x * self.opts.stol / (std::f64::consts::PI * p.normalization));
            let (s1fc, _) = self.coords(p);
            let columns = pbc::Columns::new(&lll, s1fc, Some(tol));
            p.columns = Some(if p.note_ties {
                columns.noting_image_ties(TIE_DELTA)
            } else {
                columns
            });
        }
        p.columns
            .as_ref()
            .ok_or_else(|| MatcherError::Degenerate("average lattice".into()))
    }

    /// The first candidate found with its largest distance below stol, trying the most
    /// promising mappings and translations first. A candidate whose RMS provably exceeds
    /// stol cannot qualify (the largest distance is at least the RMS) and is not solved.
    fn first_fit(
        &self,
        mappings: &[LatticeMapping],
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
    ) -> Result<Option<Match>, MatcherError> {
        let mut work = Work::default();
        // A mapping a point symmetry of struct1 away from one already searched gives the same
        // candidates (see `orbits`), so whether one of them fits is already known: unless a
        // candidate of the representative was ambiguous (another assignment almost as cheap,
        // which the other mapping's column order could have picked, or a largest distance at
        // stol to rounding). Then the mapping is searched too.
        let mut orbits = self.orbits(symmetries);
        let mut clean: Vec<bool> = Vec::new();
        for i in by_promise(mappings) {
            self.check_interrupt()?;
            let Some(mut p) = self.prepare(&mappings[i]) else {
                continue;
            };
            let mut representative = None;
            if let Some(o) = orbits.as_mut() {
                if let Ok(lll) = self.lll_of(&p.average) {
                    match o.classify(&mappings[i].scale, &p.average, &lll.mapping) {
                        Orbit::Of(k) if clean.get(k) == Some(&true) => continue,
                        Orbit::New(k) => {
                            clean.resize(k + 1, true);
                            representative = Some(k);
                            p.note_ties = true;
                        }
                        _ => {}
                    }
                    p.lll = Some(lll);
                }
            }
            if self.place_sites(&mut p).is_none() {
                continue;
            }
            for s1i in self.candidates_by_promise(&p) {
                if let Some(m) = self.score(&mut p, s1i, Some(self.opts.stol), &mut work)? {
                    if m.val < self.opts.stol {
                        *fitted = Some((i, s1i, m.clone()));
                        return Ok(Some(m));
                    }
                    let boundary = (m.val - self.opts.stol).abs() <= BOUNDARY * self.opts.stol;
                    if m.ambiguous || boundary {
                        if let Some(k) = representative {
                            clean[k] = false;
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    /// The smallest-RMS candidate in the reference's order (see the module notes).
    fn smallest_rms(
        &self,
        mappings: &[LatticeMapping],
        known: Option<f64>,
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
    ) -> Result<Option<Match>, MatcherError> {
        let stol = self.opts.stol;
        let mut work = Work::default();
        // A cap from a candidate known to exist: the one given, or else the best of the most
        // promising mapping's shortest translations. Its mapping may be folded into an orbit
        // below, whose representative scores the same candidate only to within the orbit
        // tolerance (1e-9 relative), so the cap keeps a 1e-6 relative margin.
        const CAP_MARGIN: f64 = 1.0 + 1e-6;
        let mut cap = stol;
        if let Some(known) = known {
            cap = cap.min(known * CAP_MARGIN);
        } else if let Some(&i) = by_promise(mappings).first() {
            if let Some(mut p) = self
                .prepare(&mappings[i])
                .and_then(|mut p| self.place_sites(&mut p).map(|()| p))
            {
                for s1i in self.candidates_by_promise(&p).into_iter().take(3) {
                    if let Ok(Some(m)) = self.score(&mut p, s1i, Some(cap), &mut work) {
                        cap = cap.min(m.val * CAP_MARGIN);
                    }
                }
            }
        }
        let best = self.smallest_below(mappings, Some(cap), &mut work, symmetries, fitted)?;
        if cap < stol && best.as_ref().is_none_or(|b| b.val > cap.max(RMS_EXACT)) {
            // The capping candidate is not among those visited with its value (it may be one
            // that struct1's own translations thin out, whose equal-cost assignment breaks a
            // tie differently): the cap proved nothing, so search again without it.
            return self.smallest_below(mappings, Some(stol), &mut work, symmetries, fitted);
        }
        Ok(best)
    }

    /// The smallest-RMS candidate in the reference's order, skipping candidates that provably
    /// exceed `cap` or the best so far; exact when some visited candidate reaches `cap`.
    /// Without a cap, no candidate is skipped.
    fn smallest_below(
        &self,
        mappings: &[LatticeMapping],
        cap: Option<f64>,
        work: &mut Work,
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
    ) -> Result<Option<Match>, MatcherError> {
        let stol = self.opts.stol;
        // Looking for the smallest RMS, a mapping a point symmetry of struct1 away from an
        // earlier one gives the same tables (see `orbits`): try the first of each orbit.
        let mut orbits = self.orbits(symmetries);
        let mut best: Option<Match> = None;
        // Each mapping's orbit, and where the best so far was found (mapping, translation).
        let mut orbit_of: Vec<Option<usize>> = vec![None; mappings.len()];
        let mut best_at = (0, 0);
        // The best's mapping, as prepared for the search.
        let mut best_in: Option<Prepared> = None;
        for (mi, mapping) in mappings.iter().enumerate() {
            self.check_interrupt()?;
            let Some(mut p) = self.prepare(mapping) else {
                continue;
            };
            if let Some(o) = orbits.as_mut() {
                // The orbit test also needs the LLL basis the distances are measured in.
                if let Ok(lll) = self.lll_of(&p.average) {
                    match o.classify(&mapping.scale, &p.average, &lll.mapping) {
                        Orbit::Of(k) => {
                            orbit_of[mi] = Some(k);
                            continue;
                        }
                        Orbit::New(k) => orbit_of[mi] = Some(k),
                        Orbit::Alone => {}
                    }
                    p.lll = Some(lll);
                }
            }
            if self.place_sites(&mut p).is_none() {
                continue;
            }
            for s1i in self.candidates(&p) {
                let limit =
                    cap.map(|cap| best.as_ref().map_or(cap, |b| b.val.min(cap)).max(RMS_EXACT));
                let reuse = matches!(fitted, Some((fm, fs, _)) if *fm == mi && *fs == s1i);
                let cached = if reuse { fitted.take() } else { None };
                let m = match cached {
                    // The fit's candidate: the same distances, valued by their RMS. (Scored
                    // here, it could only be skipped when above the best so far, where it
                    // does not replace it either.)
                    Some((_, _, m)) => Match {
                        val: rms(&m.dist),
                        ambiguous: false,
                        tied: false,
                        ..m
                    },
                    None => match self.score(&mut p, s1i, limit, work)? {
                        Some(m) => m,
                        None => continue,
                    },
                };
                if best.as_ref().is_none_or(|b| m.val < b.val) {
                    let exact = m.val < RMS_EXACT && m.val < stol;
                    best = Some(m);
                    best_at = (mi, s1i);
                    if exact {
                        return Ok(best);
                    }
                }
            }
            if best_at.0 == mi && best.is_some() {
                best_in = Some(p);
            }
        }
        let (best, best_in) = match (best, best_in) {
            (Some(b), Some(p)) if b.val < stol => (b, p),
            _ => return Ok(None),
        };
        if cap.is_some_and(|c| best.val > c.max(RMS_EXACT)) {
            // Above a cap that proved nothing: the caller searches again without it (see
            // `smallest_rms`), and that search settles the tie of its own best.
            return Ok(Some(best));
        }
        self.settle_orbit_tie(mappings, &orbit_of, (best, best_at, best_in), work)
            .map(Some)
    }

    /// The best candidate, found at `(mapping, translation)` with the mapping prepared as
    /// `p`, or the copy the reference would return instead. The search tries one mapping per
    /// orbit; the other mappings of an orbit hold copies of its candidates, equal up to
    /// rounding. Where the best candidate has a tie (an assignment as cheap, or two images as
    /// short), a copy can break it otherwise: the same RMS to the last bits but other
    /// distances (measured: case 1214 of the differential set, max_dist 0.475 against the
    /// reference's 0.411). Then the best's orbit is searched in full, near the best's RMS,
    /// and the first candidate in the reference's order with the smallest RMS is kept. Ties
    /// are rare: of the 2,500 tasks of the evaluate benchmark, 950 re-score their best to
    /// look for one (about 2 % of that benchmark's time in wasm) and 1 searches its orbit.
    fn settle_orbit_tie(
        &self,
        mappings: &[LatticeMapping],
        orbit_of: &[Option<usize>],
        (best, (bm, bs), mut p): (Match, (usize, usize), Prepared),
        work: &mut Work,
    ) -> Result<Match, MatcherError> {
        let Some(orbit) = orbit_of.get(bm).copied().flatten() else {
            return Ok(best);
        };
        if !orbit_of
            .iter()
            .enumerate()
            .any(|(mi, o)| mi != bm && *o == Some(orbit))
        {
            return Ok(best);
        }
        // Score the best again, noting its ties.
        p.note_ties = true;
        if let Some(c) = p.columns.take() {
            p.columns = Some(c.noting_image_ties(TIE_DELTA));
        }
        let tied = match self.score(&mut p, bs, None, work)? {
            Some(m) if m.val.to_bits() == best.val.to_bits() => m.tied,
            _ => false,
        };
        if !tied {
            return Ok(best);
        }
        // Copies differ from the best by rounding: a relative 1e-9 keeps every copy.
        let cap = Some(best.val * (1.0 + 1e-9));
        let mut settled = best;
        for mi in (0..mappings.len()).filter(|&mi| mi != bm && orbit_of[mi] == Some(orbit)) {
            let Some(mut p) = self.prepare(&mappings[mi]).and_then(|mut p| {
                p.lll = self.lll_of(&p.average).ok();
                self.place_sites(&mut p).map(|()| p)
            }) else {
                continue;
            };
            for s1i in self.candidates(&p) {
                let Some(m) = self.score(&mut p, s1i, cap, work)? else {
                    continue;
                };
                // Copies come after their representative, in the reference's order, which
                // returns at once on a near-exact match and otherwise keeps the first of
                // equal values.
                if m.val < RMS_EXACT && m.val < self.opts.stol {
                    return Ok(m);
                }
                if m.val < settled.val {
                    settled = m;
                }
            }
        }
        Ok(settled)
    }
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
fn alternatives_exceed(
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

/// [`rms`], except that a candidate a plain sum already puts above `limit`, by far more than
/// the two sums can differ (about n ulps), gets the plain value: it cannot become the best,
/// and numpy's order costs more where fused multiply-adds are emulated (wasm).
fn rms_against(dist: &[f64], limit: Option<f64>) -> f64 {
    if let Some(limit) = limit {
        let plain = dist.iter().map(|d| d * d).sum::<f64>().sqrt() / (dist.len() as f64).sqrt();
        if plain > limit * (1.0 + 1e-10) {
            return plain;
        }
    }
    rms(dist)
}

/// The RMS of a candidate's normalised distances.
pub(super) fn rms(dist: &[f64]) -> f64 {
    // pymatgen: `np.linalg.norm(dist) / len(dist) ** 0.5`, the norm being √(dist · dist).
    crate::numeric::dot_numpy(dist, dist).sqrt() / (dist.len() as f64).sqrt()
}

/// `0..n` with `PREFIX_ROWS` evenly spaced rows first, then the rows halfway between them,
/// then the others in order.
fn spread_order(n: usize) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for k in [PREFIX_ROWS, 2 * PREFIX_ROWS] {
        for r in 0..k.min(n) {
            let i = r * n / k.min(n);
            if !seen[i] {
                seen[i] = true;
                order.push(i);
            }
        }
    }
    order.extend((0..n).filter(|&i| !seen[i]));
    order
}

/// The row counts at which a staged table is bounded: `PREFIX_ROWS`, twice that, all.
fn stages(n: usize) -> Vec<usize> {
    let mut s: Vec<usize> = [PREFIX_ROWS, 2 * PREFIX_ROWS]
        .into_iter()
        .filter(|&k| k < n)
        .collect();
    s.push(n);
    s
}

/// Mapping indices with the rotation closest to the identity first (ties in the
/// reference's order): for an answer given in the target's own frame, the mapping that fits.
fn by_promise(mappings: &[LatticeMapping]) -> Vec<usize> {
    let mut keyed: Vec<(f64, usize)> = mappings
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let r = &m.rotation;
            let off: f64 = (0..3)
                .flat_map(|a| (0..3).map(move |b| (a, b)))
                .map(|(a, b)| (r[a][b] - f64::from(u8::from(a == b))).powi(2))
                .sum();
            (off, i)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    keyed.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_staged_as_a_permutation_spread_first() {
        for n in 1..70 {
            let order = spread_order(n);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            let st = stages(n);
            assert_eq!(st.last(), Some(&n));
            assert!(st.windows(2).all(|w| w[0] < w[1]));
        }
        // The first stage of 64 rows: every eighth row.
        assert_eq!(spread_order(64)[..8], [0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!(stages(64), [8, 16, 64]);
        assert_eq!(stages(12), [8, 12]);
    }
}
