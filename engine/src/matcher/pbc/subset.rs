//! The fractional-tolerance subset test (pymatgen's `is_coord_subset_pbc`) over an indexed
//! superset.

use super::window::ColumnWindow;
use crate::linalg::Vec3;
use crate::numeric::distance_to_integer;

/// The superset side of pymatgen's `is_coord_subset_pbc`, indexed once (per lattice mapping)
/// for the subset tests of many translation candidates: each test then looks at the points
/// within the tolerance along one axis instead of at all of them.
pub struct SupersetIndex {
    window: ColumnWindow,
    atol: Vec3,
}

impl SupersetIndex {
    /// An index of `superset` for the per-axis fractional tolerance `atol`.
    pub fn new(superset: &[Vec3], atol: Vec3) -> Self {
        Self {
            window: ColumnWindow::new(superset, Some(atol)),
            atol,
        }
    }

    /// True when every point of `subset` lies within the tolerance (per fractional axis,
    /// periodic) of a point of `superset` (the list indexed) it may be matched to;
    /// `forbidden(i, j)` says whether subset point `i` may not be matched to superset point
    /// `j`. The same answer as pymatgen's plain all-pairs test (checked against it in the
    /// tests): the window never misses a point the exact test accepts.
    pub fn contains(
        &self,
        superset: &[Vec3],
        subset: &[Vec3],
        forbidden: impl Fn(usize, usize) -> bool,
    ) -> bool {
        subset.iter().enumerate().all(|(i, p)| {
            self.window.any_near(p, |j| {
                let q = &superset[j];
                !forbidden(i, j) && (0..3).all(|k| distance_to_integer(p[k] - q[k]) <= self.atol[k])
            })
        })
    }
}
