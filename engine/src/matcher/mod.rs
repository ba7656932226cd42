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
//!    ([`lattice_mapping::find_all_mappings`]) with |det| = 1, express the first structure's
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
//! of the other's sites and compositions need not agree. Sites are compared by element
//! (occupancy is ignored).

pub mod assignment;
mod bound;
pub mod displacement;
pub mod lattice_mapping;
pub mod linalg;
pub mod pbc;
mod periodicity;

mod reduced;
mod supercell;

use crate::element::Element;
use crate::primitive::PrimitiveError;
use crate::structure::Structure;
use assignment::{Assignment, AssignmentError};
use lattice_mapping::MappingError;
use linalg::{
    det_i64, from_parameters_pymatgen, inverse, parameters, reciprocal_lengths, vec_mat, volume,
    Mat3, Vec3,
};
use reduced::ReducedStructure;
use supercell::{supercell_frac, supercell_size, Mask};

use crate::reduction::{lll_reduce_matrix, ReductionError, LLL_DELTA};

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
}

/// Whether two structures match (pymatgen's `StructureMatcher.fit` with `symmetric=False`).
pub fn fit(s1: &Structure, s2: &Structure, opts: &MatcherOptions) -> Result<bool, MatcherError> {
    check_options(opts)?;
    if !opts.allow_subset && !same_fractional_composition(s1, s2) {
        return Ok(false);
    }
    let pre = preprocess(s1, s2, opts)?;
    let found = match_structures(&pre, opts, false, true)?;
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
    check_options(opts)?;
    let pre = preprocess(s1, s2, opts)?;
    let Some(m) = match_structures(&pre, opts, true, false)? else {
        return Ok(None);
    };
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
    Ok(Some(RmsDist {
        rms: m.val,
        max_dist,
        max_dist_angstrom: max_dist / m.normalization,
        mapping,
    }))
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

/// Element counts in order of first appearance.
fn counts(s: &Structure) -> Vec<(Element, usize)> {
    let mut out: Vec<(Element, usize)> = Vec::new();
    for site in &s.sites {
        match out.iter_mut().find(|(e, _)| *e == site.element) {
            Some((_, n)) => *n += 1,
            None => out.push((site.element, 1)),
        }
    }
    out
}

/// pymatgen's composition hash for the species comparator: equal fractional compositions.
fn same_fractional_composition(s1: &Structure, s2: &Structure) -> bool {
    let (c1, c2) = (counts(s1), counts(s2));
    let (n1, n2) = (s1.len() as f64, s2.len() as f64);
    let frac = |c: &[(Element, usize)], n: f64, e: Element| {
        c.iter()
            .find(|(x, _)| *x == e)
            .map_or(0.0, |(_, k)| *k as f64 / n)
    };
    c1.iter()
        .chain(c2.iter())
        .all(|(e, _)| (frac(&c1, n1, *e) - frac(&c2, n2, *e)).abs() <= 1e-8)
}

/// Both structures reduced and scaled, with the supercell plan.
struct Preprocessed {
    r1: ReducedStructure,
    r2: ReducedStructure,
    /// Supercell size (1 without `attempt_supercell`).
    fu: usize,
    /// Whether struct1 (rather than struct2) is the structure to expand.
    s1_supercell: bool,
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
    let (mut r1, mut r2) = if opts.primitive_cell {
        (
            ReducedStructure::primitive(s1)?,
            ReducedStructure::primitive(s2)?,
        )
    } else {
        (ReducedStructure::niggli(s1)?, ReducedStructure::niggli(s2)?)
    };
    let (fu, s1_supercell) = if opts.attempt_supercell {
        supercell_size(r1.elements.len(), r2.elements.len())
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
    })
}

/// Matches the structure with fewer (expanded) sites onto the other (pymatgen's `_match`).
fn match_structures(
    pre: &Preprocessed,
    opts: &MatcherOptions,
    use_rms: bool,
    break_on_match: bool,
) -> Result<Option<Match>, MatcherError> {
    let (n1, n2) = (pre.r1.elements.len(), pre.r2.elements.len());
    let ratio = if pre.s1_supercell {
        pre.fu as f64
    } else {
        1.0 / pre.fu as f64
    };
    if n1 as f64 * ratio >= n2 as f64 {
        strict_match(
            &pre.r1,
            &pre.r2,
            pre.fu,
            pre.s1_supercell,
            opts,
            use_rms,
            break_on_match,
        )
    } else {
        strict_match(
            &pre.r2,
            &pre.r1,
            pre.fu,
            !pre.s1_supercell,
            opts,
            use_rms,
            break_on_match,
        )
    }
}

/// Site count from which `get_rms_dist` tries to dismiss candidates by [`bound`] before
/// solving their assignment.
const BOUND_MIN_ROWS: usize = 64;

/// A candidate match.
struct Match {
    /// The figure being minimised: RMS or largest normalised distance.
    val: f64,
    /// Normalised distance of each struct2 site to its partner.
    dist: Vec<f64>,
    /// For each struct2 site, the struct1 site it is paired with.
    sol: Vec<usize>,
    /// `(n/V)^(1/3)` of the average lattice.
    normalization: f64,
}

/// Matches struct2 onto struct1 (pymatgen's `_strict_match`): struct1, after expansion into
/// `fu` cells when `s1_supercell`, must have at least as many sites as struct2 (after its
/// expansion otherwise).
fn strict_match(
    s1: &ReducedStructure,
    s2: &ReducedStructure,
    fu: usize,
    s1_supercell: bool,
    opts: &MatcherOptions,
    use_rms: bool,
    break_on_match: bool,
) -> Result<Option<Match>, MatcherError> {
    let mask = Mask::new(&s1.elements, &s2.elements, fu, s1_supercell);
    let (n1, n2) = (mask.cols.len(), mask.rows.len());
    // Without subsets the expanded site counts must agree; in any case every struct2 site
    // needs its own partner of the same element.
    if n2 > n1 || (!opts.allow_subset && n1 != n2) || !mask.feasible() {
        return Ok(None);
    }
    let forbidden = |i: usize, j: usize| mask.forbidden(i, j);
    // The struct2 site of the rarest element (first one), and its struct1 partners.
    let (s2_t_ind, s1_t_inds) = mask.translation_indices(fu, s1_supercell);
    // The structure whose lattice is mapped onto the other's (and expanded when fu > 1).
    let (moving, fixed) = if s1_supercell { (s1, s2) } else { (s2, s1) };
    let cart_moving: Vec<Vec3> = moving
        .frac
        .iter()
        .map(|f| vec_mat(*f, &moving.lattice))
        .collect();
    let mut solver = Assignment::new();
    let mut best: Option<Match> = None;

    let mappings = lattice_mapping::find_all_mappings(
        &moving.lattice,
        &fixed.lattice,
        opts.ltol,
        opts.angle_tol,
    )?;
    for mapping in mappings {
        if det_i64(&mapping.scale).unsigned_abs() != fu as u64 {
            continue;
        }
        let moved: Vec<Vec3> = if fu == 1 {
            let Some(inv) = inverse(&mapping.aligned) else {
                continue;
            };
            cart_moving
                .iter()
                .map(|c| vec_mat(*c, &inv).map(|x| x - x.floor()))
                .collect()
        } else {
            match supercell_frac(&moving.frac, &mapping.scale) {
                Some(v) => v,
                None => continue,
            }
        };
        let (s1fc, s2fc) = if s1_supercell {
            (&moved, &fixed.frac)
        } else {
            (&fixed.frac, &moved)
        };
        let avg = average_lattice(&mapping.aligned, &fixed.lattice);
        let avg_volume = volume(&avg);
        let normalization = libm::pow(n1 as f64 / avg_volume, 1.0 / 3.0);
        let Some(inv_abc) = reciprocal_lengths(&avg) else {
            continue;
        };
        if !normalization.is_finite() {
            continue;
        }
        let frac_tol = inv_abc.map(|x| x * opts.stol / (std::f64::consts::PI * normalization));
        let mut lll_cache = None;
        // Looking for the smallest RMS, candidates a translation of struct1's own periodicity
        // apart give the same distance tables up to a column permutation (see
        // `periodicity`): keep one of each. Not when looking for the first fit: there the
        // permutation can break ties between equal-cost assignments differently and change
        // whether some candidate's largest distance is within stol (measured: one of 10,282
        // differential cases). With fu > 1 `translation_indices` already thins the copies.
        let candidates = match s1_t_inds.first() {
            Some(&anchor) if use_rms && !break_on_match && fu == 1 && s1_t_inds.len() > 1 => {
                let translations = periodicity::self_translations(s1fc, &s1.elements, anchor);
                periodicity::distinct_candidates(s1fc, &s1_t_inds, &translations)
            }
            _ => s1_t_inds.clone(),
        };

        for &s1i in &candidates {
            let t: Vec3 = std::array::from_fn(|k| s1fc[s1i][k] - s2fc[s2_t_ind][k]);
            let t_s2fc: Vec<Vec3> = s2fc
                .iter()
                .map(|f| std::array::from_fn(|k| f[k] + t[k]))
                .collect();
            if !pbc::is_coord_subset_pbc(&t_s2fc, s1fc, frac_tol, forbidden) {
                continue;
            }
            if lll_cache.is_none() {
                let lll = lll_reduce_matrix(&avg, LLL_DELTA)?;
                let inv_lll_abc = reciprocal_lengths(&lll.matrix)
                    .ok_or_else(|| MatcherError::Degenerate("average lattice".into()))?;
                let lll_frac_tol =
                    inv_lll_abc.map(|x| x * opts.stol / (std::f64::consts::PI * normalization));
                lll_cache = Some((lll, lll_frac_tol));
            }
            let Some((lll, lll_frac_tol)) = lll_cache.as_ref() else {
                continue;
            };
            let sv = pbc::pbc_shortest_vectors(lll, &t_s2fc, s1fc, forbidden, Some(*lll_frac_tol));
            let sol = match assignment::unique_nearest(&sv.d2, n2, n1, pbc::FORBIDDEN) {
                // Every site has its own nearest partner: the optimum, found in O(n²).
                Some(sol) => sol,
                None => {
                    // Looking for the smallest RMS: skip a candidate that provably cannot
                    // beat the best so far (see `bound`); the answer is the one the full
                    // search gives. Small tables solve faster than the proof runs.
                    if use_rms && !break_on_match && n2 >= BOUND_MIN_ROWS {
                        if let Some(b) = best.as_ref() {
                            let Some(rows) =
                                bound::RowVectors::new(&sv.vectors, &sv.d2, n2, n1, pbc::FORBIDDEN)
                            else {
                                continue; // a row with no allowed partner: infeasible
                            };
                            let limit = n2 as f64 * (b.val / normalization).powi(2) * (1.0 + 4e-9);
                            if rows.exceeds(limit) {
                                continue;
                            }
                        }
                    }
                    // Every complete assignment of an infeasible block pays a forbidden
                    // pair: its value is astronomically above stol, so it can neither win
                    // nor be returned.
                    match assignment::solve_blocks(&mut solver, &sv.d2, n2, n1, pbc::FORBIDDEN) {
                        Ok(sol) => sol,
                        Err(AssignmentError::Infeasible) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
            };
            let short: Vec<Vec3> = sol
                .iter()
                .enumerate()
                .map(|(i, &j)| sv.vectors[i * n1 + j])
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
                    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * normalization
                })
                .collect();
            let val = if use_rms {
                dist.iter().map(|d| d * d).sum::<f64>().sqrt() / (dist.len() as f64).sqrt()
            } else {
                dist.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            };
            if best.as_ref().is_none_or(|b| val < b.val) {
                best = Some(Match {
                    val,
                    dist,
                    sol,
                    normalization,
                });
                if (break_on_match || val < 1e-5) && val < opts.stol {
                    return Ok(best);
                }
            }
        }
    }
    Ok(best.filter(|b| b.val < opts.stol))
}

/// The lattice with the mean lengths and angles of two lattices, in pymatgen's frame.
fn average_lattice(l1: &Mat3, l2: &Mat3) -> Mat3 {
    let (p1, p2) = (parameters(l1), parameters(l2));
    from_parameters_pymatgen(std::array::from_fn(|i| (p1[i] + p2[i]) / 2.0))
}

#[cfg(test)]
mod tests;
