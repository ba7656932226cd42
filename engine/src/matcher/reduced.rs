//! A structure re-expressed in its Niggli-reduced cell, as the matcher works on it.

use super::MatcherError;
use crate::linalg::{allclose, inverse_numpy, is_finite, py_mod1, FusedMatrix, Mat3, Vec3};
use crate::primitive::matcher_reduction;
use crate::reduction::{niggli_reduce_matrix, NIGGLI_TOL};
use crate::species::{Kind, Kinds};
use crate::structure::Structure;

/// Lattice rows, fractional coordinates and species classes ([`Kinds`]), in the original
/// site order.
#[derive(Debug, Clone)]
pub(crate) struct ReducedStructure {
    pub lattice: Mat3,
    pub frac: Vec<Vec3>,
    pub kinds: Vec<Kind>,
}

impl ReducedStructure {
    /// The structure in its Niggli cell (pymatgen's `get_reduced_structure("niggli")`): when
    /// the reduced cell differs from the input cell, sites are carried over through their
    /// Cartesian positions and wrapped into [0, 1); otherwise they are kept unchanged.
    pub fn niggli(s: &Structure, kinds: &Kinds) -> Result<Self, MatcherError> {
        Self::niggli_given(s, None, kinds)
    }

    /// [`ReducedStructure::niggli`] of two structures; the reduction is computed once when
    /// both have the same lattice to the last bit (a prediction often keeps its target's
    /// cell), since it depends on nothing else.
    pub fn niggli_pair(
        s1: &Structure,
        s2: &Structure,
        kinds: &Kinds,
    ) -> Result<(Self, Self), MatcherError> {
        let r1 = Self::niggli(s1, kinds)?;
        let same = s1
            .lattice
            .matrix()
            .as_flattened()
            .iter()
            .map(|x| x.to_bits())
            .eq(s2
                .lattice
                .matrix()
                .as_flattened()
                .iter()
                .map(|x| x.to_bits()));
        let r2 = Self::niggli_given(s2, same.then_some(r1.lattice), kinds)?;
        Ok((r1, r2))
    }

    /// [`ReducedStructure::niggli`], with the reduced lattice already known when given.
    fn niggli_given(
        s: &Structure,
        known: Option<Mat3>,
        kinds: &Kinds,
    ) -> Result<Self, MatcherError> {
        let m = *s.lattice.matrix();
        if !is_finite(&m) {
            return Err(MatcherError::Degenerate("non-finite lattice".into()));
        }
        if s.sites
            .iter()
            .any(|x| !x.frac.iter().all(|v| v.is_finite()))
        {
            return Err(MatcherError::Degenerate("non-finite coordinate".into()));
        }
        let site_kinds = kinds.kinds(&s.sites);
        let reduced = match known {
            Some(r) => r,
            None => niggli_reduce_matrix(&m, NIGGLI_TOL)?,
        };
        if allclose(&reduced, &m) {
            return Ok(Self {
                lattice: m,
                frac: s.sites.iter().map(|x| x.frac).collect(),
                kinds: site_kinds,
            });
        }
        let inv = inverse_numpy(&reduced)
            .map(FusedMatrix::new)
            .ok_or_else(|| MatcherError::Degenerate("singular reduced lattice".into()))?;
        // pymatgen's Cartesian coordinates and their fractional coordinates in the reduced
        // cell: two numpy products.
        let lattice = FusedMatrix::new(m);
        let fracs: Vec<Vec3> = s.sites.iter().map(|x| x.frac).collect();
        let mut frac = inv.apply_all(&lattice.apply_all(&fracs));
        for f in &mut frac {
            *f = f.map(py_mod1);
        }
        Ok(Self {
            lattice: reduced,
            frac,
            kinds: site_kinds,
        })
    }

    /// The structure as StructureMatcher sees it with `primitive_cell=True`: Niggli-reduced,
    /// then reduced to its primitive cell ([`matcher_reduction`]).
    pub fn primitive(s: &Structure, kinds: &Kinds) -> Result<Self, MatcherError> {
        let p = matcher_reduction(s)?;
        Ok(Self {
            lattice: *p.lattice.matrix(),
            frac: p.sites.iter().map(|x| x.frac).collect(),
            kinds: kinds.kinds(&p.sites),
        })
    }
}
