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

mod hnf;
#[cfg(test)]
mod tests;

use crate::lattice::Lattice;
use crate::linalg::{allclose, inverse, is_finite, lengths, matmul, py_mod1, vec_mat};
use crate::linalg::{Mat3, Vec3};
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
    /// `non_nbrs[i * n + j]`: sites i and j are farther apart than twice the tolerance on
    /// some fractional axis of the current cell (always true on the diagonal).
    non_nbrs: Vec<bool>,
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
    let groups: Vec<Group> = groups
        .into_iter()
        .map(|sites| {
            let frac: Vec<Vec3> = sites.iter().map(|&i| s.sites[i].frac).collect();
            let n = frac.len();
            let mut non_nbrs = vec![false; n * n];
            for i in 0..n {
                for j in 0..n {
                    non_nbrs[i * n + j] = i == j
                        || (0..3).any(|k| {
                            distance_to_integer(frac[j][k] - frac[i][k]) > super_ftol_2[k]
                        });
                }
            }
            Group {
                sites,
                frac,
                non_nbrs,
            }
        })
        .collect();

    let min_vecs = candidate_translations(&groups, super_ftol_2);
    let num_fu = groups.iter().map(|g| g.sites.len()).fold(0, gcd);
    for (size, hnf) in hnf::supercell_matrices(num_fu) {
        let inv = hnf::upper_triangular_inverse(&hnf);
        let all_rows_present = inv.iter().all(|row| {
            min_vecs
                .iter()
                .any(|v| (0..3).all(|k| distance_to_integer(row[k] - v[k]) < super_ftol[k]))
        });
        if !all_rows_present {
            continue;
        }
        if let Some(smaller) = merge_into_cell(s, &groups, &m, &hnf, &inv, size, tol)? {
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

/// Translations from the first site of the smallest group to each of its sites that map
/// every group onto itself within `tol2` (per fractional axis, periodic).
fn candidate_translations(groups: &[Group], tol2: Vec3) -> Vec<Vec3> {
    let Some(smallest) = groups.iter().min_by_key(|g| g.sites.len()) else {
        return Vec::new();
    };
    let origin = smallest.frac[0];
    let mut vecs: Vec<Vec3> = smallest
        .frac
        .iter()
        .map(|f| std::array::from_fn(|k| f[k] - origin[k]))
        .collect();
    let mut by_size: Vec<&Group> = groups.iter().collect();
    by_size.sort_by_key(|g| g.sites.len());
    for g in by_size {
        for f in &g.frac {
            let shifted: Vec<Vec3> = g
                .frac
                .iter()
                .map(|x| std::array::from_fn(|k| x[k] - f[k]))
                .collect();
            vecs = periodic_intersection(vecs, &shifted, tol2);
        }
    }
    vecs
}

/// The points of `a` (in order) within `tol` of some point of `b` on every fractional axis,
/// periodically; as the reference's k-d tree query, coordinates are wrapped into [0, 1),
/// scaled by `1/tol` and compared in the Chebyshev metric with a strict bound of 1.
fn periodic_intersection(a: Vec<Vec3>, b: &[Vec3], tol: Vec3) -> Vec<Vec3> {
    let scale: Vec3 = tol.map(|t| 1.0 / t);
    let scaled = |p: &Vec3| -> Vec3 {
        std::array::from_fn(|k| (py_mod1(p[k]) * scale[k]).clamp(0.0, scale[k] * (1.0 - 1e-15)))
    };
    let bs: Vec<Vec3> = b.iter().map(scaled).collect();
    a.into_iter()
        .filter(|p| {
            let ps = scaled(p);
            bs.iter().any(|q| {
                (0..3).all(|k| {
                    let (full, half) = (scale[k], scale[k] / 2.0);
                    let mut d = ps[k] - q[k];
                    if d < -half {
                        d += full;
                    } else if d > half {
                        d -= full;
                    }
                    d.abs() < 1.0
                })
            })
        })
        .collect()
}

/// Tries the cell `inv · lattice`: returns the merged structure when every element's sites
/// fall into cliques of exactly `size` coinciding sites, else `None`.
fn merge_into_cell(
    s: &Structure,
    groups: &[Group],
    m: &Mat3,
    hnf: &[[i64; 3]; 3],
    inv: &Mat3,
    size: usize,
    tol: f64,
) -> Result<Option<Structure>, PrimitiveError> {
    let new_m = matmul(inv, m);
    let ftol: Vec3 = lengths(&new_m).map(|l| tol / l);
    let hnf_f: Mat3 = hnf.map(|r| r.map(|x| x as f64));
    let mut sites = Vec::new();
    for g in groups {
        let n = g.frac.len();
        let all_frac: Vec<Vec3> = g.frac.iter().map(|f| vec_mat(*f, &hnf_f)).collect();
        let mut same = vec![false; n * n];
        for i in 0..n {
            let mut count = 0;
            for j in 0..n {
                let close = g.non_nbrs[i * n + j]
                    && (0..3)
                        .all(|k| distance_to_integer(all_frac[j][k] - all_frac[i][k]) < ftol[k]);
                same[i * n + j] = close;
                count += usize::from(close);
            }
            // Every site must coincide with exactly `size` sites (`same` is symmetric, so
            // each row counts its column): most cells fail on the first row.
            if count != size {
                return Ok(None);
            }
        }
        // …and the coinciding sets must be cliques.
        for i in 0..n {
            let members: Vec<usize> = (0..n).filter(|&j| same[i * n + j]).collect();
            if !members
                .iter()
                .all(|&p| members.iter().all(|&q| same[p * n + q]))
            {
                return Ok(None);
            }
        }
        let wrapped: Vec<Vec3> = all_frac.iter().map(|f| f.map(py_mod1)).collect();
        let mut added = vec![false; n];
        for i in 0..n {
            if added[i] {
                continue;
            }
            let members: Vec<usize> = (0..n).filter(|&j| same[i * n + j]).collect();
            for &j in &members {
                added[j] = true;
            }
            let Some((&first, rest)) = members.split_first() else {
                continue;
            };
            let mut coords = wrapped[first];
            for (k, &j) in rest.iter().enumerate() {
                let weight = (k + 2) as f64;
                for (c, w) in coords.iter_mut().zip(wrapped[j]) {
                    let offset = w - *c;
                    *c += (offset - offset.round_ties_even()) / weight;
                }
            }
            let template = &s.sites[g.sites[first]];
            sites.push(Site {
                frac: coords,
                ..template.clone()
            });
        }
    }
    Ok(Some(Structure::new(Lattice::from_matrix(new_m), sites)))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
