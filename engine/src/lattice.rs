//! Cell geometry: lattice vectors, parameters, volume and coordinate conversion.
//!
//! Frame convention (the AtomWorld/ASE frame, also VESTA's): lattice vector **a** along +x,
//! **b** in the xy-plane, **c** completing a right-handed set. Every Cartesian position, vector
//! and axis in an AtomWorld prompt is expressed in this frame. (pymatgen's
//! `Lattice.from_parameters` puts **c** along z instead; we never use that frame for prompts.)

use serde::{Deserialize, Serialize};

use crate::numeric::{acos_deg, cos_deg, cross, dot, norm, sin_deg};

/// Angles this close to 90° count as exactly right (ASE: `2 * np.spacing(90.0)`).
pub const RIGHT_ANGLE_EPS: f64 = 2.0 * 1.4210854715202004e-14;

/// A 3×3 matrix whose rows are the lattice vectors a, b, c in Ångström.
pub type Matrix3 = [[f64; 3]; 3];

/// A periodic lattice given by its three row vectors (Å).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lattice {
    matrix: Matrix3,
}

/// Errors building a lattice from user-supplied parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LatticeError {
    /// A length or angle is not a finite positive number, or the angles cannot form a cell.
    #[error("degenerate cell: {0}")]
    Degenerate(String),
}

impl Lattice {
    /// A lattice from its row vectors (Å).
    pub fn from_matrix(matrix: Matrix3) -> Self {
        Self { matrix }
    }

    /// A lattice from a, b, c (Å) and α, β, γ (degrees) in the AtomWorld/ASE frame.
    ///
    /// Follows ASE's `cellpar_to_cell` with its default orientation: angles within
    /// [`RIGHT_ANGLE_EPS`] of 90° get an exact cosine of 0, so orthogonal cells have exactly
    /// zero off-diagonals.
    pub fn from_parameters(
        a: f64,
        b: f64,
        c: f64,
        alpha: f64,
        beta: f64,
        gamma: f64,
    ) -> Result<Self, LatticeError> {
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(LatticeError::Degenerate(format!(
                    "cell length {name} = {v} is not positive"
                )));
            }
        }
        for (name, v) in [("alpha", alpha), ("beta", beta), ("gamma", gamma)] {
            if !(v.is_finite() && v > 0.0 && v < 180.0) {
                return Err(LatticeError::Degenerate(format!(
                    "cell angle {name} = {v} is outside (0, 180) degrees"
                )));
            }
        }
        let cos = |deg: f64| {
            if (deg - 90.0).abs() < RIGHT_ANGLE_EPS {
                0.0
            } else {
                cos_deg(deg)
            }
        };
        let (cos_a, cos_b, cos_g) = (cos(alpha), cos(beta), cos(gamma));
        let sin_g = if (gamma - 90.0).abs() < RIGHT_ANGLE_EPS {
            1.0
        } else {
            sin_deg(gamma)
        };
        let cy = (cos_a - cos_b * cos_g) / sin_g;
        let cz_sq = 1.0 - cos_b * cos_b - cy * cy;
        if cz_sq.is_nan() || cz_sq <= 0.0 {
            return Err(LatticeError::Degenerate(format!(
                "angles alpha={alpha}, beta={beta}, gamma={gamma} do not form a cell"
            )));
        }
        let cz = cz_sq.sqrt();
        Ok(Self {
            matrix: [
                [a, 0.0, 0.0],
                [b * cos_g, b * sin_g, 0.0],
                [c * cos_b, c * cy, c * cz],
            ],
        })
    }

    /// The row vectors a, b, c (Å).
    pub fn matrix(&self) -> &Matrix3 {
        &self.matrix
    }

    /// Lengths |a|, |b|, |c| (Å).
    pub fn lengths(&self) -> [f64; 3] {
        self.matrix.map(norm)
    }

    /// Angles α (b,c), β (a,c), γ (a,b) in degrees.
    pub fn angles(&self) -> [f64; 3] {
        let [a, b, c] = self.matrix;
        [angle_deg(b, c), angle_deg(a, c), angle_deg(a, b)]
    }

    /// Signed volume a·(b×c) in Å³ (positive for a right-handed cell).
    pub fn volume(&self) -> f64 {
        let [a, b, c] = self.matrix;
        dot(a, cross(b, c))
    }

    /// Cartesian position (Å) of fractional coordinates.
    pub fn to_cartesian(&self, frac: [f64; 3]) -> [f64; 3] {
        let m = &self.matrix;
        std::array::from_fn(|k| frac[0] * m[0][k] + frac[1] * m[1][k] + frac[2] * m[2][k])
    }

    /// Distances (Å) between neighbouring lattice planes parallel to (b, c), (c, a), (a, b).
    pub fn plane_distances(&self) -> [f64; 3] {
        let m = self.matrix;
        let volume = self.volume().abs();
        std::array::from_fn(|k| volume / norm(cross(m[(k + 1) % 3], m[(k + 2) % 3])))
    }

    /// The shortest Cartesian vector (Å) among the periodic images of the fractional
    /// difference `d` (minimum image).
    ///
    /// First searches the 27 neighbouring images of `d` wrapped to [-0.5, 0.5] (enough for
    /// any reasonably shaped cell, and the choice among equally short images); then, for
    /// skewed cells where a shorter image can lie further out, every translation that could
    /// beat it (bounded by the distances between lattice planes), so the result is exact for
    /// any cell, as ASE's `find_mic` is.
    ///
    /// A degenerate cell that would need more than [`MAX_IMAGES`] images searched gets the
    /// answer of the 27.
    pub fn shortest_vector(&self, d: [f64; 3]) -> [f64; 3] {
        let d: [f64; 3] = d.map(|x| x - x.round());
        let mut best = [f64::INFINITY; 3];
        let mut best_len = f64::INFINITY;
        for n0 in -1..=1 {
            for n1 in -1..=1 {
                for n2 in -1..=1 {
                    let f = [d[0] + n0 as f64, d[1] + n1 as f64, d[2] + n2 as f64];
                    let v = self.to_cartesian(f);
                    let len = norm(v);
                    if len < best_len {
                        best_len = len;
                        best = v;
                    }
                }
            }
        }
        // Any image within best_len has |n_k + d_k| <= best_len / h_k along each axis.
        let reach = self.plane_distances().map(|h| best_len / h);
        if reach.iter().all(|&r| r < 0.5) || !best_len.is_finite() {
            return best; // the 27 images already cover every candidate
        }
        // A cell whose lattice planes nearly touch (a flat, degenerate cell) would need
        // billions of images: no crystal; keep the 27 images' answer rather than hang.
        let images: f64 = reach.iter().map(|r| 2.0 * r + 2.0).product();
        if images.is_nan() || images > MAX_IMAGES {
            return best;
        }
        for n in translations_within(d, reach) {
            let f = [d[0] + n[0] as f64, d[1] + n[1] as f64, d[2] + n[2] as f64];
            let v = self.to_cartesian(f);
            let len = norm(v);
            // Strictly shorter (beyond rounding) only: ties keep the first choice.
            if len < best_len * (1.0 - 1e-12) {
                best_len = len;
                best = v;
            }
        }
        best
    }

    /// Fractional coordinates of a Cartesian position (Å).
    pub fn to_fractional(&self, cart: [f64; 3]) -> [f64; 3] {
        let inv = self.inverse();
        std::array::from_fn(|k| cart[0] * inv[0][k] + cart[1] * inv[1][k] + cart[2] * inv[2][k])
    }

    /// Inverse of the row-vector matrix, so that `frac = cart · inverse`.
    pub fn inverse(&self) -> Matrix3 {
        let [a, b, c] = self.matrix;
        let v = self.volume();
        let (bc, ca, ab) = (cross(b, c), cross(c, a), cross(a, b));
        // Columns of the inverse are the reciprocal vectors (without 2π).
        std::array::from_fn(|i| [bc[i] / v, ca[i] / v, ab[i] / v])
    }

    /// Reciprocal lattice vectors with the crystallographic convention (no factor 2π).
    pub fn reciprocal_crystallographic(&self) -> Lattice {
        let inv = self.inverse();
        Lattice::from_matrix(std::array::from_fn(|i| [inv[0][i], inv[1][i], inv[2][i]]))
    }
}

fn angle_deg(a: [f64; 3], b: [f64; 3]) -> f64 {
    acos_deg(dot(a, b) / (norm(a) * norm(b)))
}

/// Every integer translation `n` with `|d_k + n_k| <= reach_k` on each axis (fractional
/// units), in lexicographic order: the images that can lie within a sphere whose radius is
/// `reach_k` plane spacings along axis k.
/// The most lattice images [`Lattice::shortest_vector`] searches.
pub const MAX_IMAGES: f64 = 1e6;

pub(crate) fn translations_within(d: [f64; 3], reach: [f64; 3]) -> impl Iterator<Item = [i64; 3]> {
    let lo: [i64; 3] = std::array::from_fn(|k| (-reach[k] - d[k]).ceil() as i64);
    let hi: [i64; 3] = std::array::from_fn(|k| (reach[k] - d[k]).floor() as i64);
    (lo[0]..=hi[0]).flat_map(move |a| {
        (lo[1]..=hi[1]).flat_map(move |b| (lo[2]..=hi[2]).map(move |c| [a, b, c]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell whose planes are 1e-8 Å apart (pymatgen's "superflat" test file): an answer,
    /// not an endless search.
    #[test]
    fn a_flat_cell_does_not_hang_the_minimum_image() {
        let l = Lattice::from_parameters(
            1.49244463,
            3.79421616,
            30.42398643,
            20.62129211,
            83.61568451,
            62.9943924,
        )
        .unwrap();
        assert!(l.plane_distances().iter().any(|h| *h < 1e-3));
        let v = l.shortest_vector([0.3, 0.2, 0.1]);
        assert!(v.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn cubic_cell_is_diagonal_and_has_cube_volume() {
        let l = Lattice::from_parameters(4.0, 4.0, 4.0, 90.0, 90.0, 90.0).unwrap();
        assert_eq!(
            l.matrix(),
            &[[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]
        );
        assert!((l.volume() - 64.0).abs() < 1e-12);
    }

    #[test]
    fn hexagonal_cell_round_trips_parameters() {
        let l = Lattice::from_parameters(3.0, 3.0, 5.0, 90.0, 90.0, 120.0).unwrap();
        let [a, b, c] = l.lengths();
        let [al, be, ga] = l.angles();
        assert!((a - 3.0).abs() < 1e-12 && (b - 3.0).abs() < 1e-12 && (c - 5.0).abs() < 1e-12);
        assert!((al - 90.0).abs() < 1e-9 && (be - 90.0).abs() < 1e-9);
        assert!((ga - 120.0).abs() < 1e-9);
        // a along x, b in the xy-plane.
        assert_eq!(l.matrix()[0][1], 0.0);
        assert_eq!(l.matrix()[1][2], 0.0);
    }

    #[test]
    fn fractional_cartesian_round_trip_in_triclinic_cell() {
        let l = Lattice::from_parameters(5.1, 6.3, 7.7, 71.0, 83.0, 101.0).unwrap();
        let f = [0.12, 0.77, 0.43];
        let back = l.to_fractional(l.to_cartesian(f));
        for k in 0..3 {
            assert!((back[k] - f[k]).abs() < 1e-13);
        }
    }

    #[test]
    fn impossible_angles_are_rejected() {
        assert!(Lattice::from_parameters(1.0, 1.0, 1.0, 10.0, 10.0, 170.0).is_err());
        assert!(Lattice::from_parameters(0.0, 1.0, 1.0, 90.0, 90.0, 90.0).is_err());
    }
}
