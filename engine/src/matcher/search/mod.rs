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
//!   reference happens to list first.
//! - [`Goal::SmallestRms`] returns the first candidate, in the reference's order, with the
//!   smallest RMS (or the first below 1e-5, where the reference stops). The order matters
//!   for ties, so it is kept; but one promising candidate is scored first, and its RMS caps
//!   every later candidate: a candidate whose RMS provably exceeds that cap
//!   ([`bound`](super::bound)) can be neither the smallest nor below 1e-5 (the cap never
//!   goes below 1e-5), so it is skipped without solving its assignment; a lattice mapping
//!   all of whose candidates provably exceed it is skipped whole. The result is the one the
//!   full search gives.
//!
//! Submodules: `goals` (the two searches), `score` (one candidate), `pruning` (bounds over
//! the translations a candidate's mean can reach), `mapping_bound` (one bound over all of a
//! mapping's translations), `alternatives` (whether a tie could hide a fit), `orbit_tie`
//! (settling a tie across a symmetry orbit).

mod alternatives;
mod goals;
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(super) use goals::UNCAPPED_AGAIN;
mod mapping_bound;
mod orbit_tie;
mod pruning;
mod score;

use super::assignment::Assignment;
use super::orbits::{MappingOrbits, Symmetries};
use super::pbc;
use super::periodicity;
use super::reduced::ReducedStructure;
use super::supercell::{supercell_frac, Mask};
use super::{average_of_parameters, MatcherError, MatcherOptions};
use crate::lattice_mapping::{self, LatticeMapping};
use crate::linalg::{
    inverse_numpy, lengths_and_cosines, parameters, parameters_from, reciprocal_lengths, vec_mat,
    vec_mat_fused, volume, FusedMatrix, Mat3, Vec3,
};
use crate::numeric::distance_to_integer;
use crate::reduction::{lll_reduce_matrix, LllReduction, LLL_DELTA};
use crate::species::Relation;

/// Site counts from which candidates are dismissed by [`bound`](super::bound) before their
/// assignment is solved (smaller tables solve faster than the proof runs). Looking for the
/// smallest RMS, the cap is tight and the proof usually succeeds; looking for a fit against
/// stol it mostly fails and only pays off on large cells.
const BOUND_MIN_ROWS_RMS: usize = 4;
const BOUND_MIN_ROWS_FIT: usize = 64;

/// Relative margin on the sum of squares before a bound dismisses a candidate (covers the
/// rounding of the bound against the rounding of the candidate's own value).
const BOUND_MARGIN: f64 = 4e-9;

/// Rows in the first stage of a bounded candidate's table (see [`spread_order`]): most wrong
/// candidates are ruled out by 8 or 16 rows spread over the structure, long before the
/// whole table is built.
const PREFIX_ROWS: usize = 8;

/// Squared distance (Å²) within which two assignments count as tied when folding fit
/// searches by symmetry: far above the rounding by which symmetric copies of a table differ
/// (coordinates printed to 8 decimals: about 1e-6 Å² on a 10 Å cell).
const TIE_DELTA: f64 = 1e-5;

/// Radius (in units of the site spacing, as stol) of the ball in which a row's nearest entry
/// is looked for first (see [`pbc::Columns::nearest_entry`]): most rows of a candidate near a
/// match have their partner well within it, and at stol 0.5 its box is an eighth of the
/// tolerance box.
const NEAREST_RADIUS: f64 = 0.5;

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
    /// mappings often share one), by this search or the pair's other: see
    /// [`Search::average_facts`].
    averages: &'a Averages,
    stages: Vec<usize>,
}

/// What the pair's searches work out once per distinct lattice: see [`AverageCache`].
type Averages = std::cell::RefCell<AverageCache>;

/// [`AverageFacts`] by average lattice (bit for bit), and the average lattice by a mapped
/// lattice's row lengths and cosines (bit for bit; the parameters, and so the average,
/// depend on them alone, and symmetric mappings share them: this skips the four arccosines
/// and five sines and cosines of averaging, which are software in wasm).
#[derive(Default)]
struct AverageCache {
    facts: rustc_hash::FxHashMap<[[u64; 3]; 3], AverageFacts>,
    average: rustc_hash::FxHashMap<[u64; 6], Mat3>,
}

/// What two searches of the same preprocessed pair (a fit, then the smallest RMS) share: the
/// lattice mappings, found once, struct1's point operations already tested (see `orbits`),
/// and the fitting candidate (mapping index, struct1 site, match), which the smallest-RMS
/// search would otherwise score again: its table and assignment are the same whichever
/// search builds them (staged or whole, noting ties or not), so only its value, the RMS of
/// the same distances, is computed again. Also what both work out the same way for an
/// average lattice (the roles of the two structures, and so every average lattice and its
/// normalisation, are the pair's), and the buffers, grown once for the pair.
#[derive(Default)]
pub(super) struct Shared {
    mappings: Option<Vec<LatticeMapping>>,
    symmetries: Symmetries,
    fitted: Option<(usize, usize, Match)>,
    averages: Averages,
    work: Work,
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
    /// The rows' nearest entries (see [`pbc::Columns::own_nearest`]), and how often they
    /// have settled a candidate.
    nearest: pbc::NearestWork,
    nearest_odds: score::NearestOdds,
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
    /// The row whose term ended the last proof of [`Search::region_exceeds`].
    lead: Option<usize>,
    /// The same for [`Search::mapping_exceeds`].
    mapping_lead: Option<usize>,
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

/// The two structures of a strict match in their roles, and how their sites may pair.
pub(super) struct Roles<'a> {
    /// The structure matched onto.
    pub s1: &'a ReducedStructure,
    /// The structure moved onto `s1`.
    pub s2: &'a ReducedStructure,
    /// Supercell size (1 without `attempt_supercell`).
    pub fu: usize,
    /// Whether `s1` (rather than `s2`) is expanded into the supercell.
    pub s1_supercell: bool,
    /// Which species classes pair when more than equal ones do (oxidation states).
    pub relation: Option<&'a Relation>,
}

/// Matches struct2 onto struct1 (pymatgen's `_strict_match`): struct1, after expansion into
/// `fu` cells when `s1_supercell`, must have at least as many sites as struct2 (after its
/// expansion otherwise). `shared` holds what a second search of the same pair (a fit, then
/// the smallest RMS) need not find again: the lattice mappings and struct1's symmetry.
pub(super) fn strict_match(
    roles: Roles<'_>,
    opts: &MatcherOptions,
    goal: Goal,
    shared: &mut Shared,
) -> Result<Option<Match>, MatcherError> {
    let Roles {
        s1,
        s2,
        fu,
        s1_supercell,
        relation,
    } = roles;
    let mask = Mask::new(&s1.kinds, &s2.kinds, fu, s1_supercell, relation);
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
        averages,
        work,
    } = shared;
    if mappings.is_none() {
        *mappings = Some(lattice_mapping::find_mappings_of_size(
            &moving.lattice,
            &fixed.lattice,
            (opts.ltol, opts.angle_tol),
            fu as u64,
        )?);
    }
    let mappings: &[LatticeMapping] = mappings.as_deref().unwrap_or_default();
    // Looking for the smallest RMS, candidates a translation of struct1's own periodicity
    // apart give the same distance tables up to a column permutation (see `periodicity`): one
    // of each is kept. Not when looking for a fit: there the permutation can break ties
    // between equal-cost assignments differently and change whether some candidate's largest
    // distance is within stol. With fu > 1
    // `translation_indices` already thins the copies.
    let self_translations = match s1_t_inds.first() {
        Some(&anchor)
            if matches!(goal, Goal::SmallestRms { .. }) && fu == 1 && s1_t_inds.len() > 1 =>
        {
            Some(periodicity::self_translations(&s1.frac, &s1.kinds, anchor))
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
        averages,
        stages: stages(n2),
    };
    match goal {
        Goal::Fit => search.first_fit(mappings, symmetries, fitted, work),
        Goal::SmallestRms {
            known,
            bounded: true,
        } => search.smallest_rms(mappings, known, symmetries, fitted, work),
        Goal::SmallestRms { bounded: false, .. } => {
            search.smallest_below(mappings, None, work, symmetries, &mut None)
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
        let mut p = self.prepare_average(mapping)?;
        self.mapped_basis(&mut p)?;
        Some(p)
    }

    /// [`Search::prepare`] up to the mapped basis, which [`Search::mapped_basis`] adds:
    /// enough for the mapping bound, which most mappings do not get past.
    fn prepare_average(&self, mapping: &LatticeMapping) -> Option<Prepared> {
        let average = self.average_of(&mapping.aligned);
        let facts = self.average_facts(&average, false);
        let (normalization, inv_abc) = (facts.normalization?, facts.inv_abc?);
        let frac_tol = inv_abc.map(|x| x * self.opts.stol / (std::f64::consts::PI * normalization));
        Some(Prepared {
            moved: Vec::new(),
            scale: mapping.scale,
            to_mapped: None,
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

    /// The sum of squares (Å², over struct2's sites) of an RMS `rms` on mapping `p`, with
    /// the margin a bound needs before it dismisses a candidate above it.
    fn sum_limit(&self, p: &Prepared, rms: f64) -> f64 {
        self.n2 as f64 * (rms / p.normalization).powi(2) * (1.0 + BOUND_MARGIN)
    }

    /// The inverse of the mapped basis, with which the moving structure's sites are placed
    /// when `fu == 1`; `None` when it is singular (the mapping is degenerate).
    fn mapped_basis(&self, p: &mut Prepared) -> Option<()> {
        if self.fu == 1 {
            p.to_mapped = Some(inverse_numpy(&p.aligned)?);
        }
        Some(())
    }

    /// The average of a mapped lattice and the fixed one ([`average_of_parameters`]),
    /// from the cache when a lattice with the same row lengths and cosines was met before.
    fn average_of(&self, aligned: &Mat3) -> Mat3 {
        let (l, c) = lengths_and_cosines(aligned);
        let key = [l[0], l[1], l[2], c[0], c[1], c[2]].map(f64::to_bits);
        *self
            .averages
            .borrow_mut()
            .average
            .entry(key)
            .or_insert_with(|| {
                average_of_parameters(&parameters_from((l, c)), &self.fixed_parameters)
            })
    }

    /// The normalization, reciprocal lengths and (with `lll`) LLL reduction of an average
    /// lattice, from the cache when this lattice (bit for bit) was met before.
    fn average_facts(&self, average: &Mat3, lll: bool) -> AverageFacts {
        let mut cache = self.averages.borrow_mut();
        let facts = cache
            .facts
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

    /// The orbits of lattice mappings under struct1's point symmetry, where they apply (no
    /// supercell, struct1 the structure whose lattice is mapped) and are asked for
    /// ([`super::MatcherOptions::fold_symmetric_mappings`]).
    fn orbits<'t>(&'t self, tested: &'t mut Symmetries) -> Option<MappingOrbits<'t>> {
        if !self.opts.fold_symmetric_mappings {
            return None;
        }
        // With fu > 1 the candidates' columns are struct1's sites expanded parent by parent:
        // the anchor's parent is the struct1 site the orbits test symmetries from.
        match self.s1_t_inds.first() {
            Some(&anchor) if self.s1_supercell => Some(MappingOrbits::new(
                &self.s1.lattice,
                &self.s1.frac,
                &self.s1.kinds,
                anchor / self.fu.max(1),
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
            let columns = pbc::Columns::new(&lll, s1fc, Some(tol)).with_classes(&self.mask.cols);
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
