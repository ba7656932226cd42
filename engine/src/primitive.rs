//! Primitive cell reduction with pymatgen's `Structure.get_primitive_structure` semantics.
//!
//! A structure given in a supercell of its primitive cell (a conventional fcc cell, a 2×2×1
//! repeat, …) is reduced to a smaller cell that reproduces it. The search works as in the
//! reference (default tolerance 0.25 Å per coordinate, site properties ignored, `reduce`
//! on, no lattice constraints):
//!
//! 1. Sites are grouped by species string (the element symbol of an ordered site,
//!    `"In:0.5, Sn:0.5"` for a mixed one: [`crate::species::species_string`]), in the order
//!    of those strings.
//! 2. Candidate translations are the vectors from the first site of the smallest group to
//!    every site of that group, kept only when they map every site of every group onto a
//!    site of the same group (within twice the tolerance, per fractional axis).
//! 3. The number of formula units `f` is the gcd of the group sizes. For every divisor
//!    `d > 1` of `f`, in increasing order, every supercell matrix in Hermite normal form
//!    with determinant `d` ([`hnf`]) is a candidate: it is kept when the rows of its inverse
//!    (the primitive translations in the current cell) are all among the candidate
//!    translations.
//! 4. For a kept candidate, sites are expressed in the smaller cell and grouped: two sites of
//!    the same species fall in one group when they coincide in the small cell within the
//!    tolerance but were not already neighbours in the big cell. Every group must be a clique
//!    of exactly `d` sites; each group becomes one site at the running average of its
//!    members' positions (species and label of its first member).
//! 5. The first candidate that works is reduced again (recursively) and the result is
//!    Niggli-reduced ([`niggli_reduced_structure`]); when no candidate works the structure is
//!    returned unchanged.
//!
//! Sites are compared by their species strings, as the reference compares them (so
//! occupancies count to three significant digits).

mod buckets;
mod hnf;
mod merge;
#[cfg(test)]
mod tests;
mod translations;

use crate::lattice::Lattice;
use crate::linalg::{allclose, inverse, is_finite, lengths, py_mod1, vec_mat, Vec3};
use crate::numeric::distance_to_integer;
use crate::reduction::{niggli_reduce_matrix, ReductionError, NIGGLI_TOL};
use crate::species::species_string;
use crate::structure::{Site, Structure};

/// pymatgen's default tolerance (Å per coordinate) for `get_primitive_structure`.
pub const DEFAULT_TOLERANCE: f64 = 0.25;

/// Why a primitive (or reduced) cell could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrimitiveError {
    /// The tolerance is not a finite positive number.
    #[error("primitive cell tolerance must be positive and finite, got {0}")]
    Tolerance(f64),
    /// A lattice vector or a coordinate is not finite, or the cell is singular.
    #[error("degenerate input: {0}")]
    Degenerate(String),
    /// Niggli reduction failed.
    #[error(transparent)]
    Reduction(#[from] ReductionError),
}

/// The structure in its Niggli-reduced cell (pymatgen's `get_reduced_structure("niggli")`).
///
/// When the reduced cell equals the input cell (numpy `allclose`), the structure is returned
/// unchanged; otherwise every site is carried over through its Cartesian position and its
/// fractional coordinates are wrapped into [0, 1).
pub fn niggli_reduced_structure(s: &Structure) -> Result<Structure, PrimitiveError> {
    let m = *s.lattice.matrix();
    check_finite(s)?;
    let reduced = niggli_reduce_matrix(&m, NIGGLI_TOL)?;
    if allclose(&reduced, &m) {
        return Ok(s.clone());
    }
    let inv = inverse(&reduced)
        .ok_or_else(|| PrimitiveError::Degenerate("singular reduced lattice".into()))?;
    let sites = s
        .sites
        .iter()
        .map(|x| Site {
            frac: vec_mat(vec_mat(x.frac, &m), &inv).map(py_mod1),
            ..x.clone()
        })
        .collect();
    Ok(Structure::new(Lattice::from_matrix(reduced), sites))
}

/// The most primitive cell found for `s` (pymatgen's `get_primitive_structure(tolerance)`
/// with its other arguments at their defaults); see the module documentation.
///
/// The result's sites are ordered by species string when a smaller cell was found; when none
/// was, `s` is returned unchanged (not Niggli-reduced), as in the reference.
pub fn get_primitive_structure(s: &Structure, tolerance: f64) -> Result<Structure, PrimitiveError> {
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(PrimitiveError::Tolerance(tolerance));
    }
    check_finite(s)?;
    primitive_step(s, tolerance)
}

/// The reduction StructureMatcher applies with `primitive_cell=True`: Niggli reduction,
/// then [`get_primitive_structure`] with the default tolerance.
pub fn matcher_reduction(s: &Structure) -> Result<Structure, PrimitiveError> {
    let niggli = niggli_reduced_structure(s)?;
    get_primitive_structure(&niggli, DEFAULT_TOLERANCE)
}

fn check_finite(s: &Structure) -> Result<(), PrimitiveError> {
    if !is_finite(s.lattice.matrix()) {
        return Err(PrimitiveError::Degenerate("non-finite lattice".into()));
    }
    if s.sites
        .iter()
        .any(|x| !x.frac.iter().all(|v| v.is_finite()))
    {
        return Err(PrimitiveError::Degenerate("non-finite coordinate".into()));
    }
    Ok(())
}

/// Sites of one species: their indices in the structure and fractional coordinates.
struct Group {
    sites: Vec<usize>,
    frac: Vec<Vec3>,
}

fn primitive_step(s: &Structure, tol: f64) -> Result<Structure, PrimitiveError> {
    if s.is_empty() {
        return Ok(s.clone());
    }
    let m = *s.lattice.matrix();
    let groups = group_sites(s);
    let abc = lengths(&m);
    let super_ftol: Vec3 = abc.map(|l| tol / l);
    let super_ftol_2: Vec3 = super_ftol.map(|x| x * 2.0);
    if !super_ftol.iter().all(|x| x.is_finite() && *x > 0.0) {
        return Err(PrimitiveError::Degenerate(
            "zero-length lattice vector".into(),
        ));
    }
    // Only a divisor d > 1 of the formula units can give a smaller cell: with none (site
    // counts without a common factor) no cell is tried, and the translations below, which
    // only vet the cells, are not looked for.
    let num_fu = groups.iter().map(Vec::len).fold(0, gcd);
    if num_fu < 2 {
        return Ok(s.clone());
    }
    let groups: Vec<Group> = groups
        .into_iter()
        .map(|sites| Group {
            frac: sites.iter().map(|&i| s.sites[i].frac).collect(),
            sites,
        })
        .collect();
    let fracs: Vec<&[Vec3]> = groups.iter().map(|g| g.frac.as_slice()).collect();
    let min_vecs = translations::candidate_translations(&fracs, super_ftol_2);
    // A cell is a candidate when every primitive translation it implies is among the
    // translations found.
    let present = |row: &Vec3| {
        min_vecs
            .iter()
            .any(|v| (0..3).all(|k| distance_to_integer(row[k] - v[k]) < super_ftol[k]))
    };
    let cells = hnf::divisors(num_fu).filter(|&d| d > 1).flat_map(|size| {
        hnf::candidate_cells(size, present)
            .into_iter()
            .map(move |c| (size, c))
    });
    for (size, (hnf, inv)) in cells {
        let cell = merge::Cell {
            hnf: &hnf,
            inv: &inv,
            size,
        };
        if let Some(smaller) = merge::merge_into_cell(s, &groups, &m, cell, (tol, super_ftol_2)) {
            let prim = primitive_step(&smaller, tol)?;
            return niggli_reduced_structure(&prim);
        }
    }
    Ok(s.clone())
}

/// Site indices grouped by species string ([`species_string`]: the element symbol of an
/// ordered site), groups in the order of those strings (a stable sort, so sites keep their
/// relative order within a group).
fn group_sites(s: &Structure) -> Vec<Vec<usize>> {
    let names: Vec<String> = s.sites.iter().map(species_string).collect();
    let mut order: Vec<usize> = (0..s.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(&names[b]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(g) if g.first().is_some_and(|&f| names[f] == names[i]) => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
