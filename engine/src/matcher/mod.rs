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
//! Only `primitive_cell = false`, `attempt_supercell = false` and `allow_subset = false` are
//! implemented; the other settings return [`MatcherError::Unsupported`]. Sites are compared
//! by element (occupancy is ignored).

pub mod assignment;
pub mod lattice_mapping;
pub mod linalg;
pub mod pbc;

mod reduced;

use crate::element::Element;
use crate::structure::Structure;
use assignment::{Assignment, AssignmentError};
use lattice_mapping::MappingError;
use linalg::{
    det_i64, from_parameters_pymatgen, inverse, parameters, reciprocal_lengths, vec_mat, volume,
    Mat3, Vec3,
};
use reduced::ReducedStructure;

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
    /// Reduce both structures to primitive cells first (not implemented yet).
    pub primitive_cell: bool,
    /// Scale both lattices to equal volume before matching.
    pub scale: bool,
    /// Try supercells when site counts differ (not implemented yet).
    pub attempt_supercell: bool,
    /// Allow struct2 to match a subset of struct1 (not implemented yet).
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
}

/// Errors from the matcher.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatcherError {
    /// An option combination this port does not implement.
    #[error("unsupported matcher option: {0}")]
    Unsupported(&'static str),
    /// A structure has no sites.
    #[error("structure has no sites")]
    Empty,
    /// A lattice is degenerate or a coordinate is not finite.
    #[error("degenerate input: {0}")]
    Degenerate(String),
    /// Lattice reduction failed.
    #[error(transparent)]
    Reduction(#[from] ReductionError),
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
    /// For each site of struct1, the index of the struct2 site it is paired with.
    pub mapping: Vec<usize>,
}

/// Whether two structures match (pymatgen's `StructureMatcher.fit` with `symmetric=False`).
pub fn fit(s1: &Structure, s2: &Structure, opts: &MatcherOptions) -> Result<bool, MatcherError> {
    check_options(opts)?;
    if !same_fractional_composition(s1, s2) {
        return Ok(false);
    }
    let (r1, r2) = preprocess(s1, s2, opts)?;
    let found = strict_match(&r1, &r2, opts, false, true)?;
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
    let (r1, r2) = preprocess(s1, s2, opts)?;
    let Some(m) = strict_match(&r1, &r2, opts, true, false)? else {
        return Ok(None);
    };
    let max_dist = m.dist.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // `sol[i]` is the struct1 site matched to struct2 site i; invert it.
    let mut mapping = vec![0; m.sol.len()];
    for (i2, &i1) in m.sol.iter().enumerate() {
        if let Some(slot) = mapping.get_mut(i1) {
            *slot = i2;
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
    if opts.primitive_cell {
        return Err(MatcherError::Unsupported("primitive_cell = true"));
    }
    if opts.attempt_supercell {
        return Err(MatcherError::Unsupported("attempt_supercell = true"));
    }
    if opts.allow_subset {
        return Err(MatcherError::Unsupported("allow_subset = true"));
    }
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

/// Niggli-reduces both structures and scales them to equal volume.
fn preprocess(
    s1: &Structure,
    s2: &Structure,
    opts: &MatcherOptions,
) -> Result<(ReducedStructure, ReducedStructure), MatcherError> {
    if s1.is_empty() || s2.is_empty() {
        return Err(MatcherError::Empty);
    }
    let mut r1 = ReducedStructure::niggli(s1)?;
    let mut r2 = ReducedStructure::niggli(s2)?;
    if opts.scale {
        let ratio = libm::pow(volume(&r2.lattice) / volume(&r1.lattice), 1.0 / 6.0);
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(MatcherError::Degenerate("volume ratio".into()));
        }
        r1.lattice = r1.lattice.map(|r| r.map(|x| x * ratio));
        r2.lattice = r2.lattice.map(|r| r.map(|x| x / ratio));
    }
    Ok((r1, r2))
}

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

/// Matches struct2 onto struct1 (pymatgen's `_strict_match` for equal-size structures).
fn strict_match(
    s1: &ReducedStructure,
    s2: &ReducedStructure,
    opts: &MatcherOptions,
    use_rms: bool,
    break_on_match: bool,
) -> Result<Option<Match>, MatcherError> {
    let (n1, n2) = (s1.elements.len(), s2.elements.len());
    // Without subsets or supercells the site multisets must agree exactly.
    if n1 != n2 {
        return Ok(None);
    }
    let mut c1 = counts_of(&s1.elements);
    let mut c2 = counts_of(&s2.elements);
    c1.sort();
    c2.sort();
    if c1 != c2 {
        return Ok(None);
    }
    // forbidden(i, j): struct2 site i may not pair with struct1 site j.
    let forbidden = |i: usize, j: usize| s2.elements[i] != s1.elements[j];
    // The struct2 site of the rarest element (first one), and its struct1 partners.
    let mut s2_t_ind = 0;
    let mut most_masked = 0;
    for i in 0..n2 {
        let masked = (0..n1).filter(|&j| forbidden(i, j)).count();
        if masked > most_masked {
            most_masked = masked;
            s2_t_ind = i;
        }
    }
    let s1_t_inds: Vec<usize> = (0..n1).filter(|&j| !forbidden(s2_t_ind, j)).collect();

    let cart1: Vec<Vec3> = s1.frac.iter().map(|f| vec_mat(*f, &s1.lattice)).collect();
    let s2fc = &s2.frac;
    let mut solver = Assignment::new();
    let mut best: Option<Match> = None;

    let mappings =
        lattice_mapping::find_all_mappings(&s1.lattice, &s2.lattice, opts.ltol, opts.angle_tol)?;
    for mapping in mappings {
        if det_i64(&mapping.scale).abs() != 1 {
            continue;
        }
        let Some(inv) = inverse(&mapping.aligned) else {
            continue;
        };
        let s1fc: Vec<Vec3> = cart1
            .iter()
            .map(|c| vec_mat(*c, &inv).map(|x| x - x.floor()))
            .collect();
        let avg = average_lattice(&mapping.aligned, &s2.lattice);
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

        for &s1i in &s1_t_inds {
            let t: Vec3 = std::array::from_fn(|k| s1fc[s1i][k] - s2fc[s2_t_ind][k]);
            let t_s2fc: Vec<Vec3> = s2fc
                .iter()
                .map(|f| std::array::from_fn(|k| f[k] + t[k]))
                .collect();
            if !pbc::is_coord_subset_pbc(&t_s2fc, &s1fc, frac_tol, forbidden) {
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
            let sv = pbc::pbc_shortest_vectors(lll, &t_s2fc, &s1fc, forbidden, Some(*lll_frac_tol));
            let sol = solver.solve(&sv.d2, n2, n1)?;
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

fn counts_of(elements: &[Element]) -> Vec<(Element, usize)> {
    let mut out: Vec<(Element, usize)> = Vec::new();
    for e in elements {
        match out.iter_mut().find(|(x, _)| x == e) {
            Some((_, n)) => *n += 1,
            None => out.push((*e, 1)),
        }
    }
    out
}

/// The lattice with the mean lengths and angles of two lattices, in pymatgen's frame.
fn average_lattice(l1: &Mat3, l2: &Mat3) -> Mat3 {
    let (p1, p2) = (parameters(l1), parameters(l2));
    from_parameters_pymatgen(std::array::from_fn(|i| (p1[i] + p2[i]) / 2.0))
}

#[cfg(test)]
mod tests;
