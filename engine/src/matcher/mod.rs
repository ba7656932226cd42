//! Structure matching with pymatgen's `StructureMatcher` semantics.
//!
//! Two structures match when, after Niggli reduction and scaling to equal volume, some basis
//! of the first lattice has lengths and angles within `ltol` / `angle_tol` of the second's,
//! and on the average of the two lattices every site can be paired with a site of the same
//! element so that, after removing the mean displacement, no pair is farther apart than
//! `stol × (V/n)^(1/3)`.
//!
//! The steps, as in the reference:
//! 1. Niggli-reduce both structures (sites are re-expressed in the reduced cell and wrapped).
//! 2. Scale both lattices to the geometric mean of their volumes (`scale`).
//! 3. For every mapping of the first lattice onto the second
//!    ([`crate::lattice_mapping::find_mappings_of_size`]) with |det| = 1, express the first structure's
//!    sites in the mapped basis and build the average lattice (mean lengths and angles).
//! 4. For every site of struct1 with the rarest element, translate struct2 so its first site
//!    of that element lands there; if every struct2 site is then within a fractional
//!    tolerance of a same-element struct1 site, pair sites by a minimum-cost assignment of
//!    squared periodic distances ([`assignment`]), subtract the mean displacement and measure.
//!
//! With `primitive_cell`, step 1 is Niggli reduction followed by the primitive cell search of
//! [`crate::primitive`] (then step 1's result is what gets matched). With
//! `attempt_supercell`, the structure with fewer sites is expanded: the lattice mappings of
//! step 3 must then have |det| equal to the site-count ratio (rounded half to even) and the
//! smaller structure's sites are repeated over the lattice points of the supercell
//! ([`supercell`]). With `allow_subset`, the structure with fewer sites may match a subset
//! of the other's sites and compositions need not agree. Sites are compared by all their
//! species, occupancies and oxidation states, as pymatgen's `SpeciesComparator` compares
//! them ([`crate::species`]: the listed order of a mixed site's species does not matter; a
//! plain element of struct1 pairs with that element's species in struct2, not the reverse).
//!
//! The evaluator asks [`rms_dist_if_fit`]: `fit` first, then `get_rms_dist` on a fit, as the
//! reference does.
//!
//! # The search
//!
//! `search` visits candidates (lattice mapping × translation). Looking for the smallest RMS
//! (`get_rms_dist`) it keeps pymatgen's order and its first-best rule, since the order decides
//! ties. Looking for a fit, whose yes/no answer does not depend on the order, it starts with
//! the most promising mappings (rotation nearest the identity) and the shortest translations.
//! Distance tables are sparse ([`pbc::Table`]: only the pairs inside the tolerance box; the
//! reference's `1e20` entries are left out), and struct1's side of them ([`pbc::Columns`])
//! and of the subset test ([`pbc::SupersetIndex`]) is prepared once per mapping.
//!
//! All numbers follow numpy's order of operations where pymatgen's ties depend on the last
//! bit (see [`crate::numeric`]).
//!
//! # Shortcuts that cannot change the answer
//!
//! The rule: a shortcut only skips work whose outcome is known, so the search returns exactly
//! what the full search returns. Each shortcut carries its proof in its doc comment and a
//! test against the dense path, and [`get_rms_dist_unbounded`], which solves every
//! candidate, must give the same numbers and pairing bit for bit in the differential test.
//! - A table where every site has its own unique nearest partner is its optimum
//!   ([`assignment::unique_nearest`], O(n²)); other tables are solved one block of
//!   connected allowed pairs at a time ([`assignment::solve_blocks`]).
//! - A candidate whose RMS provably exceeds a cap (the best so far, the fit's RMS in
//!   [`rms_dist_if_fit`], or a promising candidate scored first; stol for a fit) is dismissed
//!   before its assignment is solved. The first test is shared between candidates: the mean
//!   shift lies within `√limit` of one of the anchor row's vectors, which puts the
//!   candidate's translation near the one onto another anchor partner, and the bound near
//!   each such translation is computed once per mapping from a cube query
//!   ([`pbc::Columns::in_cube`]). A candidate left open there is tried again on its full
//!   table, where the cost of any complete assignment ([`assignment::feasible_cost`]) limits
//!   how far the mean can go. Otherwise the box bound of `bound` runs on small boxes around
//!   one row's vectors, on 8 and then 16 rows of the table before the rest of it, and the
//!   subset test, are built.
//!
//! # Shortcuts that may pick another of equal candidates
//!
//! Two shortcuts rest on symmetry and so may change which of several equal candidates wins:
//! the site pairing, and where equal-cost assignments or equidistant images tie, the
//! reported numbers.
//! - `periodicity` tries one translation per class of struct1's own periodicity (a
//!   supercell's copies give tables with permuted columns); `get_rms_dist` only, since for
//!   a fit a permutation can break a tie otherwise and change the verdict.
//! - `orbits` tries one lattice mapping per orbit of struct1's point symmetry
//!   ([`MatcherOptions::fold_symmetric_mappings`]), and folds a mapping only when its
//!   average lattice and LLL basis agree too, since pymatgen's tolerance box is measured in
//!   that basis. Symmetric mappings give the same tables in exact arithmetic, not in the
//!   last bits. A fit search folds an orbit only when no candidate of its representative
//!   was ambiguous: [`assignment::solve_blocks_noting_ties`] and
//!   [`pbc::Columns::noting_image_ties`] find the pairs a tie could swap, and a bound or a
//!   listing of them must show that no such alternative brings the largest distance under
//!   stol. When the best candidate of an RMS search has a tie (an assignment as cheap, or
//!   two images as short), the other mappings of its orbit are searched near its RMS and
//!   pymatgen's pick, the first of the lowest in its order, is kept. A tie in another candidate is not
//!   re-checked: a folded mapping can break it into a smaller RMS, which is rare and
//!   happens only for pairs that do not fit.
//!
//! # Setup per pair
//!
//! The lattice points of the mapping search are kept only near a target length and put into
//! pymatgen's cell-list order by a counting sort ([`crate::lattice_mapping`]); the Niggli
//! reduction stops at its first proper mapping and is shared by two structures with the
//! same cell; struct1's places for the symmetry tests sit in a dense grid of about one site
//! per cell.
//!
//! # pymatgen's memo of reduced structures
//!
//! pymatgen caches reduced structures (`_get_reduced_istructure`) on a key that compares
//! structures to 1e-5 Å: within one call, a struct2 that close to struct1 (a target
//! re-printed with six decimals) gets struct1's reduced structure and matches it exactly.
//! The matcher does the same (`memo`). Across calls that cache makes pymatgen's answers
//! depend on what the process matched before; ours, like the oracle's (which clears the
//! cache before each pair), are the answers for the pair alone.

pub mod assignment;
mod bound;
pub mod displacement;
mod memo;
mod orbits;
pub mod pbc;
mod periodicity;
mod reduced;
mod search;
mod supercell;

pub use crate::interrupt::Interrupt;
use crate::lattice_mapping::MappingError;
use crate::linalg::{self, from_parameters_pymatgen, volume, Mat3, Vec3};
use crate::primitive::PrimitiveError;
use crate::species::composition::Composition;
use crate::species::{species_amounts, Kinds, Relation};
use crate::structure::{Site, Structure};
use assignment::AssignmentError;
use reduced::ReducedStructure;
use search::{strict_match, Goal, Match, Roles, Shared};
use supercell::supercell_size;

use crate::reduction::ReductionError;

/// Matcher tolerances and options (pymatgen's `StructureMatcher` arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherOptions {
    /// Fractional length tolerance for lattice vectors.
    pub ltol: f64,
    /// Site tolerance as a fraction of the mean free length per atom `(V/n)^(1/3)`.
    pub stol: f64,
    /// Angle tolerance (degrees).
    pub angle_tol: f64,
    /// Reduce both structures to primitive cells first (pymatgen's
    /// `get_primitive_structure`, tolerance 0.25 Å).
    pub primitive_cell: bool,
    /// Scale both lattices to equal volume before matching.
    pub scale: bool,
    /// When the site counts differ, expand the smaller structure into supercells of the
    /// rounded size ratio.
    pub attempt_supercell: bool,
    /// Allow the structure with fewer sites to match a subset of the other's sites.
    pub allow_subset: bool,
    /// Not a pymatgen option: search one lattice mapping of each orbit under struct1's
    /// point symmetry instead of all of them (see `orbits`). The symmetric mappings give the
    /// same tables up to rounding, so the answer is the same except where exact ties
    /// (equidistant periodic images, equally cheap assignments) break otherwise in a
    /// skipped mapping. A tie in the best match itself is settled by searching its orbit in
    /// full; a tie elsewhere can still give a skipped mapping a smaller RMS, which is rare
    /// and only happens for pairs that do not fit; turning this off reproduces pymatgen
    /// there. On by default: searching every mapping costs about 1.7× the matching time.
    pub fold_symmetric_mappings: bool,
    /// Not a pymatgen option: a flag that stops the search with
    /// [`MatcherError::Interrupted`] (checked before each candidate and lattice mapping), for
    /// a caller's time budget. Inert by default.
    pub interrupt: Interrupt,
}

impl Default for MatcherOptions {
    /// pymatgen's defaults: ltol 0.2, stol 0.3, angle_tol 5°, primitive_cell, scale.
    fn default() -> Self {
        Self {
            ltol: 0.2,
            stol: 0.3,
            angle_tol: 5.0,
            primitive_cell: true,
            scale: true,
            attempt_supercell: false,
            allow_subset: false,
            fold_symmetric_mappings: true,
            interrupt: Interrupt::default(),
        }
    }
}

impl MatcherOptions {
    /// The AtomWorld evaluator's matcher: `StructureMatcher(primitive_cell=False, stol=0.5)`.
    pub fn atomworld() -> Self {
        Self {
            primitive_cell: false,
            stol: 0.5,
            ..Self::default()
        }
    }

    /// The CIF-Gen probe's matcher:
    /// `StructureMatcher(primitive_cell=True, attempt_supercell=True, stol=0.5)`.
    pub fn cif_gen() -> Self {
        Self {
            attempt_supercell: true,
            stol: 0.5,
            ..Self::default()
        }
    }
}

/// Errors from the matcher.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatcherError {
    /// A structure has no sites.
    #[error("structure has no sites")]
    Empty,
    /// A lattice is degenerate or a coordinate is not finite.
    #[error("degenerate input: {0}")]
    Degenerate(String),
    /// Lattice reduction failed.
    #[error(transparent)]
    Reduction(#[from] ReductionError),
    /// The primitive cell search failed.
    #[error(transparent)]
    Primitive(#[from] PrimitiveError),
    /// The assignment step failed (non-finite distances).
    #[error(transparent)]
    Assignment(#[from] AssignmentError),
    /// [`MatcherOptions::interrupt`] was raised before the search finished.
    #[error("the search was interrupted before it finished")]
    Interrupted,
}

impl From<MappingError> for MatcherError {
    fn from(e: MappingError) -> Self {
        match e {
            MappingError::Degenerate(s) => MatcherError::Degenerate(s),
        }
    }
}

/// The best match found by [`get_rms_dist`].
#[derive(Debug, Clone, PartialEq)]
pub struct RmsDist {
    /// Root-mean-square site displacement divided by `(V/n)^(1/3)` of the average lattice.
    pub rms: f64,
    /// Largest site displacement of the same match, divided by `(V/n)^(1/3)`.
    pub max_dist: f64,
    /// Largest site displacement in Å, measured on the average lattice after both
    /// structures were scaled to equal volume (equals the plain Å distance when the volumes
    /// already agree).
    pub max_dist_angstrom: f64,
    /// For each site of struct1, the index of the struct2 site it is paired with. Empty
    /// when the match was made between transformed site lists (`primitive_cell`,
    /// `attempt_supercell` or `allow_subset` set), whose sites are not the input sites.
    pub mapping: Vec<usize>,
    /// With `mapping`: for each site of struct1, the vector (Å, struct1's Cartesian frame)
    /// to its partner, common shift removed: the very vectors the distances were measured
    /// from, carried from the average lattice back into struct1's cell (so the longest has
    /// length `max_dist_angstrom` when the two cells agree). For drawing a match.
    pub displacements: Vec<Vec3>,
}

/// Whether two structures match (pymatgen's `StructureMatcher.fit` with `symmetric=False`).
pub fn fit(s1: &Structure, s2: &Structure, opts: &MatcherOptions) -> Result<bool, MatcherError> {
    check_options(opts)?;
    if !opts.allow_subset && !same_fractional_composition(s1, s2) {
        return Ok(false);
    }
    let pre = preprocess(s1, s2, opts)?;
    let found = match_structures(&pre, opts, Goal::Fit, &mut Shared::default())?;
    Ok(found.is_some_and(|m| m.val <= opts.stol))
}

/// The smallest-RMS match of two structures (pymatgen's `StructureMatcher.get_rms_dist`), or
/// `None` when no match has an RMS below `stol`.
///
/// Note that, as in the reference, the criterion here is the RMS, not the largest
/// displacement: a result can have `max_dist > stol` while [`fit`] says false.
pub fn get_rms_dist(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
) -> Result<Option<RmsDist>, MatcherError> {
    smallest_rms(s1, s2, opts, true)
}

/// [`get_rms_dist`] solving the assignment of every candidate the reference solves: no
/// candidate is skipped for provably exceeding the best one so far (except, in the search of
/// a tied best's symmetric copies, those provably above the best by more than rounding). The
/// same answer, bit for bit, many times slower; it exists to check exactly that.
pub fn get_rms_dist_unbounded(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
) -> Result<Option<RmsDist>, MatcherError> {
    smallest_rms(s1, s2, opts, false)
}

/// The smallest-RMS search on its own, with or without its bounds.
fn smallest_rms(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
    bounded: bool,
) -> Result<Option<RmsDist>, MatcherError> {
    check_options(opts)?;
    let pre = preprocess(s1, s2, opts)?;
    let goal = Goal::SmallestRms {
        known: None,
        bounded,
    };
    Ok(match_structures(&pre, opts, goal, &mut Shared::default())?.map(|m| rms_dist(m, opts, s1)))
}

/// The reported figures of the smallest-RMS match.
fn rms_dist(m: Match, opts: &MatcherOptions, s1: &Structure) -> RmsDist {
    let max_dist = m.dist.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let plain = !(opts.primitive_cell || opts.attempt_supercell || opts.allow_subset);
    let mut mapping = Vec::new();
    if plain {
        // `sol[i]` is the struct1 site matched to struct2 site i; invert it.
        mapping = vec![0; m.sol.len()];
        for (i2, &i1) in m.sol.iter().enumerate() {
            if let Some(slot) = mapping.get_mut(i1) {
                *slot = i2;
            }
        }
    }
    RmsDist {
        rms: m.val,
        max_dist,
        max_dist_angstrom: max_dist / m.normalization,
        displacements: if plain {
            displacements(&m, s1)
        } else {
            Vec::new()
        },
        mapping,
    }
}

/// `fit`, then on a fit `get_rms_dist`: what the AtomWorld evaluator asks (the reference evaluator: no fit is
/// a mismatch; a fit reports the smallest-RMS match). `Ok(None)` when there is no fit. The
/// structures are reduced, their lattice mappings enumerated and struct1's symmetry tested,
/// once for both questions.
pub fn rms_dist_if_fit(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
) -> Result<Option<RmsDist>, MatcherError> {
    check_options(opts)?;
    if !opts.allow_subset && !same_fractional_composition(s1, s2) {
        return Ok(None);
    }
    let pre = preprocess(s1, s2, opts)?;
    let mut shared = Shared::default();
    let fit = match_structures(&pre, opts, Goal::Fit, &mut shared)?;
    let Some(fit) = fit.filter(|m| m.val <= opts.stol) else {
        return Ok(None);
    };
    // The fitting candidate is one of those the smallest-RMS search visits: its RMS caps it.
    let goal = Goal::SmallestRms {
        known: Some(search::rms(&fit.dist)),
        bounded: true,
    };
    let found = match_structures(&pre, opts, goal, &mut shared)?;
    Ok(found.map(|m| rms_dist(m, opts, s1)))
}

/// [`RmsDist::displacements`] of a plain match: each vector from struct1 site `sol[i]` to
/// struct2 site `i` is the negated centred pair vector; its fractional coordinates on the
/// average lattice are coordinates in the mapped basis `aligned` of struct1's (volume-scaled)
/// lattice, which the scale factor takes back to struct1's own cell.
fn displacements(m: &Match, s1: &Structure) -> Vec<Vec3> {
    let Some(inv) = linalg::inverse(&m.average) else {
        return Vec::new();
    };
    let scale = libm::cbrt(volume(&m.aligned) / s1.lattice.volume());
    if !(scale.is_finite() && scale > 0.0) {
        return Vec::new();
    }
    let mut out = vec![[0.0; 3]; s1.len()];
    for (i, &j) in m.sol.iter().enumerate() {
        let (Some(v), Some(slot)) = (m.short.get(i), out.get_mut(j)) else {
            return Vec::new();
        };
        let back: Vec3 = std::array::from_fn(|k| m.translation[k] - v[k]);
        let frac = linalg::vec_mat(back, &inv);
        *slot = linalg::vec_mat(frac, &m.aligned).map(|x| x / scale);
    }
    out
}

fn check_options(opts: &MatcherOptions) -> Result<(), MatcherError> {
    for (name, v) in [
        ("ltol", opts.ltol),
        ("stol", opts.stol),
        ("angle_tol", opts.angle_tol),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(MatcherError::Degenerate(format!("{name} = {v}")));
        }
    }
    Ok(())
}

/// pymatgen's composition hash for the species comparator, compared as `fit` compares it:
/// `s1.composition.fractional_composition == s2.composition.fractional_composition`, whose
/// species carry their oxidation states (so, like [`crate::species::pairs_with`], not
/// symmetric once oxidation states appear).
fn same_fractional_composition(s1: &Structure, s2: &Structure) -> bool {
    let fractional = |s: &Structure| {
        let amounts = species_amounts(s.sites.iter().flat_map(Site::occupants));
        let total: f64 = amounts.iter().map(|(_, n)| n).sum();
        Composition::new(amounts.into_iter().map(|(sp, n)| (sp, n / total)))
    };
    fractional(s1).equals(&fractional(s2))
}

/// Both structures reduced and scaled, with the supercell plan.
struct Preprocessed {
    r1: ReducedStructure,
    r2: ReducedStructure,
    /// Supercell size (1 without `attempt_supercell`).
    fu: usize,
    /// Whether struct1 (rather than struct2) is the structure to expand.
    s1_supercell: bool,
    /// Which species classes pair, when more than equal ones do (oxidation states).
    relation: Option<Relation>,
}

/// Reduces both structures (Niggli, and primitive cell when asked), decides the supercell
/// size and scales them to equal volume per primitive cell.
fn preprocess(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
) -> Result<Preprocessed, MatcherError> {
    if s1.is_empty() || s2.is_empty() {
        return Err(MatcherError::Empty);
    }
    let kinds = Kinds::of(s1.sites.iter().chain(&s2.sites));
    let (mut r1, mut r2) = if memo::reuses_reduction(s1, s2) {
        // pymatgen hands struct2 struct1's reduced structure (see `memo`).
        let r1 = if opts.primitive_cell {
            ReducedStructure::primitive(s1, &kinds)?
        } else {
            ReducedStructure::niggli(s1, &kinds)?
        };
        (r1.clone(), r1)
    } else if opts.primitive_cell {
        (
            ReducedStructure::primitive(s1, &kinds)?,
            ReducedStructure::primitive(s2, &kinds)?,
        )
    } else {
        ReducedStructure::niggli_pair(s1, s2, &kinds)?
    };
    let (fu, s1_supercell) = if opts.attempt_supercell {
        supercell_size(r1.kinds.len(), r2.kinds.len())
    } else {
        (1, true)
    };
    let mult = if s1_supercell {
        fu as f64
    } else {
        1.0 / fu as f64
    };
    if opts.scale {
        let ratio = libm::pow(
            volume(&r2.lattice) / (volume(&r1.lattice) * mult),
            1.0 / 6.0,
        );
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(MatcherError::Degenerate("volume ratio".into()));
        }
        r1.lattice = r1.lattice.map(|r| r.map(|x| x * ratio));
        r2.lattice = r2.lattice.map(|r| r.map(|x| x / ratio));
    }
    Ok(Preprocessed {
        r1,
        r2,
        fu,
        s1_supercell,
        relation: kinds.relation(),
    })
}

/// Matches the structure with fewer (expanded) sites onto the other (pymatgen's `_match`).
///
/// `shared` carries the lattice mappings and struct1's tested point operations between calls
/// on the same preprocessed pair (the roles of the two structures are decided by `pre`
/// alone, so they are the same).
fn match_structures(
    pre: &Preprocessed,
    opts: &MatcherOptions,
    goal: Goal,
    shared: &mut Shared,
) -> Result<Option<Match>, MatcherError> {
    let (n1, n2) = (pre.r1.kinds.len(), pre.r2.kinds.len());
    let ratio = if pre.s1_supercell {
        pre.fu as f64
    } else {
        1.0 / pre.fu as f64
    };
    let relation = pre.relation.as_ref();
    let roles = if n1 as f64 * ratio >= n2 as f64 {
        Roles {
            s1: &pre.r1,
            s2: &pre.r2,
            fu: pre.fu,
            s1_supercell: pre.s1_supercell,
            relation,
        }
    } else {
        Roles {
            s1: &pre.r2,
            s2: &pre.r1,
            fu: pre.fu,
            s1_supercell: !pre.s1_supercell,
            relation,
        }
    };
    strict_match(roles, opts, goal, shared)
}

/// The lattice with the mean lengths and angles of a lattice with parameters `p1` and one
/// with parameters `p2` (pymatgen's `av_lat`), in pymatgen's frame. `p2` is worked out
/// once: every lattice mapping is averaged with the same fixed lattice.
pub(super) fn average_of_parameters(p1: &[f64; 6], p2: &[f64; 6]) -> Mat3 {
    from_parameters_pymatgen(std::array::from_fn(|i| (p1[i] + p2[i]) / 2.0))
}

#[cfg(test)]
mod tests;
