//! Lattice basis reduction: LLL (Lenstra–Lenstra–Lovász) and Niggli.
//!
//! Both follow pymatgen's `Lattice.get_lll_reduced_lattice` (δ = 0.75) and
//! `Lattice.get_niggli_reduced_lattice` (tolerance 1e-5 × V^(1/3), the numerically stable
//! algorithm of Grosse-Kunstleve, Sauter & Adams, Acta Cryst. A60 (2004) 1–6), including the
//! final step where the reduced parameters are realised as a basis of the input lattice, so
//! that reduced cells come out in the same orientation as pymatgen's.

use crate::lattice::Lattice;
use crate::lattice_mapping::{find_mapping, MappingError};
use crate::linalg::{
    det, from_parameters_pymatgen, is_finite, matmul, rad2deg, transpose, volume, Mat3, Vec3,
};
use crate::numeric::{dot_fused, fused_mul_add};

/// The Lovász parameter pymatgen uses.
pub const LLL_DELTA: f64 = 0.75;
/// pymatgen's default Niggli tolerance (relative to the cube root of the volume).
pub const NIGGLI_TOL: f64 = 1e-5;

/// Why a lattice could not be reduced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReductionError {
    /// The lattice has a zero or non-finite volume, or non-finite vectors.
    #[error("degenerate lattice: {0}")]
    Degenerate(String),
    /// The reduction did not converge or produced an impossible cell.
    #[error("reduction failed: {0}")]
    Failed(String),
}

impl From<MappingError> for ReductionError {
    fn from(e: MappingError) -> Self {
        match e {
            MappingError::Degenerate(s) => ReductionError::Degenerate(s),
        }
    }
}

/// An LLL-reduced basis and the integer matrix that produces it.
#[derive(Debug, Clone, PartialEq)]
pub struct LllReduction {
    /// Reduced basis vectors as rows (Å).
    pub matrix: Mat3,
    /// Integer (unimodular) matrix `U` with `matrix = U · original`.
    pub mapping: [[i64; 3]; 3],
}

impl LllReduction {
    /// Inverse of [`LllReduction::mapping`], as numpy computes it.
    pub fn mapping_inverse(&self) -> Mat3 {
        use crate::linalg::{inverse_numpy, unimodular_inverse};
        // pymatgen's `lll_inverse` is `np.linalg.inv(lll_mapping)`: exact integers whenever
        // the LU pivots are ±1 (nearly always), numpy's rounding otherwise.
        let float = self.mapping.map(|r| r.map(|x| x as f64));
        inverse_numpy(&float)
            .or_else(|| unimodular_inverse(&self.mapping).map(|m| m.map(|r| r.map(|x| x as f64))))
            // Not reached (LLL only applies unimodular steps); kept total without a panic.
            .unwrap_or([[0.0; 3]; 3])
    }
}

fn check(m: &Mat3) -> Result<(), ReductionError> {
    if !is_finite(m) {
        return Err(ReductionError::Degenerate(
            "non-finite lattice vectors".into(),
        ));
    }
    let v = volume(m);
    if !(v.is_finite() && v > 0.0) {
        return Err(ReductionError::Degenerate(format!("cell volume {v}")));
    }
    Ok(())
}

/// LLL-reduces a lattice with Lovász parameter `delta` (pymatgen uses 0.75).
pub fn lll_reduce(lattice: &Lattice, delta: f64) -> Result<LllReduction, ReductionError> {
    lll_reduce_matrix(lattice.matrix(), delta)
}

/// [`lll_reduce`] on a bare row matrix.
pub fn lll_reduce_matrix(matrix: &Mat3, delta: f64) -> Result<LllReduction, ReductionError> {
    check(matrix)?;
    // Basis vectors a[i], their Gram–Schmidt orthogonalisation b[i] with squared norms m[i],
    // and the coefficients u[i][j] = <a_i, b_j> / m_j.
    let mut a: Mat3 = *matrix;
    let mut b: Mat3 = [[0.0; 3]; 3];
    let mut u: Mat3 = [[0.0; 3]; 3];
    let mut m: Vec3 = [0.0; 3];
    let mut mapping: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    // The arithmetic is numpy's, operation for operation (see `numeric::dot_fused`): the
    // size reduction rounds u to the nearest integer, and at u = ½ (rhombohedral and
    // hexagonal cells meet it exactly) the last bit decides which basis comes out.
    let gram_schmidt_row = |s: usize, a: &Mat3, b: &mut Mat3, u: &mut Mat3, m: &mut Vec3| {
        for j in 0..s {
            u[s][j] = dot_fused(a[s], b[j]) / m[j];
        }
        // `np.dot(b[:, :s], u[s, :s])`: OpenBLAS's strided matrix-vector kernel accumulates
        // the two terms in reverse order.
        let v: Vec3 = std::array::from_fn(|c| match s {
            0 => a[s][c],
            1 => a[s][c] - b[0][c] * u[s][0],
            _ => a[s][c] - fused_mul_add(b[0][c], u[s][0], b[1][c] * u[s][1]),
        });
        b[s] = v;
        m[s] = dot_fused(v, v);
    };
    for s in 0..3 {
        gram_schmidt_row(s, &a, &mut b, &mut u, &mut m);
    }

    let mut k = 2usize;
    let mut steps = 0;
    while k <= 3 {
        steps += 1;
        if steps > 10_000 {
            return Err(ReductionError::Failed("LLL did not converge".into()));
        }
        // Size reduction of vector k-1 against the earlier ones.
        for i in (1..k).rev() {
            let q = u[k - 1][i - 1].round_ties_even();
            if q != 0.0 {
                for c in 0..3 {
                    a[k - 1][c] -= q * a[i - 1][c];
                    mapping[k - 1][c] -= q * mapping[i - 1][c];
                }
                let earlier = u[i - 1];
                for (j, coef) in u[k - 1].iter_mut().enumerate().take(i) {
                    let uu = if j + 1 == i { 1.0 } else { earlier[j] };
                    *coef -= q * uu;
                }
            }
        }
        // Lovász condition.
        let lhs = dot_fused(b[k - 1], b[k - 1]);
        let mu = u[k - 1][k - 2].abs();
        if lhs >= (delta - mu * mu) * dot_fused(b[k - 2], b[k - 2]) {
            k += 1;
        } else {
            a.swap(k - 1, k - 2);
            mapping.swap(k - 1, k - 2);
            for s in (k - 1)..=k {
                gram_schmidt_row(s - 1, &a, &mut b, &mut u, &mut m);
            }
            if k > 2 {
                k -= 1;
            } else {
                // Refresh the coefficients of the vectors after the swapped pair (pymatgen
                // solves the diagonal system with `np.linalg.lstsq`).
                let pair = [m[k - 2], m[k - 1]];
                for r in k..3 {
                    for (c, &mc) in pair.iter().enumerate() {
                        u[r][k - 2 + c] = lstsq_diagonal(dot_fused(a[r], b[k - 2 + c]), mc, pair);
                    }
                }
            }
        }
        if !is_finite(&a) {
            return Err(ReductionError::Failed(
                "LLL produced non-finite vectors".into(),
            ));
        }
    }
    let mut int_map = [[0i64; 3]; 3];
    for (r, row) in mapping.iter().enumerate() {
        for (c, x) in row.iter().enumerate() {
            if x.abs() > 1e12 {
                return Err(ReductionError::Failed("LLL mapping overflow".into()));
            }
            int_map[r][c] = *x as i64;
        }
    }
    Ok(LllReduction {
        matrix: a,
        mapping: int_map,
    })
}

/// `p / d` as LAPACK's `dgelsd` (behind `np.linalg.lstsq`) solves one row of a positive
/// diagonal system `diag(pair) x = p`: the diagonal is first scaled by its largest entry, each
/// division is a multiplication by a reciprocal, and the result is scaled back; a diagonal
/// entry below machine epsilon (after scaling) counts as zero and gives 0.
fn lstsq_diagonal(p: f64, d: f64, pair: [f64; 2]) -> f64 {
    let norm = pair[0].abs().max(pair[1].abs());
    if norm == 0.0 || !norm.is_finite() {
        return p / d;
    }
    let scaled = d * (1.0 / norm);
    let largest = (pair[0] * (1.0 / norm))
        .abs()
        .max((pair[1] * (1.0 / norm)).abs());
    if scaled <= f64::EPSILON * largest {
        return 0.0;
    }
    (p * (1.0 / scaled)) * (1.0 / norm)
}

/// Niggli-reduces a lattice with pymatgen's semantics (`tol` is relative to V^(1/3);
/// pymatgen's default is [`NIGGLI_TOL`]).
///
/// The result is a basis of the same lattice, oriented in the input's Cartesian frame, with
/// a positive determinant.
pub fn niggli_reduce(lattice: &Lattice, tol: f64) -> Result<Lattice, ReductionError> {
    niggli_reduce_matrix(lattice.matrix(), tol).map(Lattice::from_matrix)
}

/// [`niggli_reduce`] on a bare row matrix.
pub fn niggli_reduce_matrix(matrix: &Mat3, tol: f64) -> Result<Mat3, ReductionError> {
    check(matrix)?;
    let lll = lll_reduce_matrix(matrix, LLL_DELTA)?;
    let e = tol * libm::pow(volume(matrix), 1.0 / 3.0);
    let mut g = matmul(&lll.matrix, &transpose(&lll.matrix));

    let apply = |g: &Mat3, t: &Mat3| matmul(&transpose(t), &matmul(g, t));
    let params = |g: &Mat3| {
        (
            g[0][0],
            g[1][1],
            g[2][2],
            2.0 * g[1][2],
            2.0 * g[0][2],
            2.0 * g[0][1],
        )
    };
    let sign = |x: f64| if x.abs() < e { 0.0 } else { x / x.abs() };

    for _ in 0..100 {
        let (a, b, _, ee, n, _) = params(&g);
        if b + e < a || ((a - b).abs() < e && ee.abs() > n.abs() + e) {
            // A1: swap a and b.
            g = apply(&g, &[[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]);
        }
        let (_, b, c, _, n, y) = params(&g);
        if c + e < b || ((b - c).abs() < e && n.abs() > y.abs() + e) {
            // A2: swap b and c.
            g = apply(&g, &[[-1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, -1.0, 0.0]]);
            continue;
        }
        let (_, _, _, ee, n, y) = params(&g);
        let (l, mm, nn) = (sign(ee), sign(n), sign(y));
        let prod = l * mm * nn;
        if prod == 1.0 {
            // A3: make all off-diagonal terms positive.
            let i = if l == -1.0 { -1.0 } else { 1.0 };
            let j = if mm == -1.0 { -1.0 } else { 1.0 };
            let k = if nn == -1.0 { -1.0 } else { 1.0 };
            g = apply(&g, &[[i, 0.0, 0.0], [0.0, j, 0.0], [0.0, 0.0, k]]);
        } else if prod == 0.0 || prod == -1.0 {
            // A4: make all off-diagonal terms non-positive.
            let mut i = if l == 1.0 { -1.0 } else { 1.0 };
            let mut j = if mm == 1.0 { -1.0 } else { 1.0 };
            let mut k = if nn == 1.0 { -1.0 } else { 1.0 };
            if i * j * k == -1.0 {
                if nn == 0.0 {
                    k = -1.0;
                } else if mm == 0.0 {
                    j = -1.0;
                } else if l == 0.0 {
                    i = -1.0;
                }
            }
            g = apply(&g, &[[i, 0.0, 0.0], [0.0, j, 0.0], [0.0, 0.0, k]]);
        }
        let (a, b, _c, ee, n, y) = params(&g);
        // A5
        if ee.abs() > b + e
            || ((ee - b).abs() < e && y - e > 2.0 * n)
            || ((ee + b).abs() < e && -e > y)
        {
            g = apply(
                &g,
                &[[1.0, 0.0, 0.0], [0.0, 1.0, -ee / ee.abs()], [0.0, 0.0, 1.0]],
            );
            continue;
        }
        // A6
        if n.abs() > a + e
            || ((a - n).abs() < e && y - e > 2.0 * ee)
            || ((a + n).abs() < e && -e > y)
        {
            g = apply(
                &g,
                &[[1.0, 0.0, -n / n.abs()], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            );
            continue;
        }
        // A7
        if y.abs() > a + e
            || ((a - y).abs() < e && n - e > 2.0 * ee)
            || ((a + y).abs() < e && -e > n)
        {
            g = apply(
                &g,
                &[[1.0, -y / y.abs(), 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            );
            continue;
        }
        // A8
        let s = ee + n + y + a + b;
        if -e > s || (s.abs() < e && e < y + (a + n) * 2.0) {
            g = apply(&g, &[[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]);
            continue;
        }
        break;
    }
    if !is_finite(&g) {
        return Err(ReductionError::Failed("Niggli reduction diverged".into()));
    }

    let (a2, b2, c2, ee, n, y) = params(&g);
    let (a, b, c) = (a2.sqrt(), b2.sqrt(), c2.sqrt());
    let acos_deg = |x: f64| -> Result<f64, ReductionError> {
        if !(-1.0..=1.0).contains(&x) {
            return Err(ReductionError::Failed(format!("cosine {x} out of range")));
        }
        Ok(rad2deg(libm::acos(x)))
    };
    let alpha = acos_deg(ee / 2.0 / b / c)?;
    let beta = acos_deg(n / 2.0 / a / c)?;
    let gamma = acos_deg(y / 2.0 / a / b)?;
    let target = from_parameters_pymatgen([a, b, c, alpha, beta, gamma]);
    if !is_finite(&target) {
        return Err(ReductionError::Failed(
            "impossible Niggli parameters".into(),
        ));
    }

    match find_mapping(matrix, &target, e, 1.0)? {
        Some(mapped) => {
            let m = mapped.aligned;
            if det(&m) > 0.0 {
                Ok(m)
            } else {
                Ok(m.map(|r| r.map(|x| -x)))
            }
        }
        None => Err(ReductionError::Failed("can't find niggli".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{angles, lengths};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn lll_reduces_a_skewed_basis_of_the_cubic_lattice() {
        let m = [[1.0, 0.0, 0.0], [5.0, 1.0, 0.0], [3.0, 7.0, 1.0]];
        let r = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
        for l in lengths(&r.matrix) {
            assert!(close(l, 1.0, 1e-12), "{:?}", r.matrix);
        }
        // matrix = mapping · original
        let back = matmul(&r.mapping.map(|row| row.map(|x| x as f64)), &m);
        assert_eq!(back, r.matrix);
        let inv = r.mapping_inverse();
        let id = matmul(&inv, &r.mapping.map(|row| row.map(|x| x as f64)));
        assert_eq!(id, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    }

    #[test]
    fn niggli_of_fcc_primitive_is_the_rhombohedral_cell() {
        // A skewed basis of the fcc primitive lattice with a = 4.
        let p = [[0.0, 2.0, 2.0], [2.0, 0.0, 2.0], [2.0, 2.0, 0.0]];
        let m = [
            p[0],
            [p[1][0] + p[0][0], p[1][1] + p[0][1], p[1][2] + p[0][2]],
            [
                p[2][0] - 2.0 * p[1][0],
                p[2][1] - 2.0 * p[1][1],
                p[2][2] - 2.0 * p[1][2],
            ],
        ];
        let n = niggli_reduce_matrix(&m, NIGGLI_TOL).unwrap();
        for l in lengths(&n) {
            assert!(close(l, 8f64.sqrt(), 1e-9), "{n:?}");
        }
        for ang in angles(&n) {
            assert!(close(ang, 60.0, 1e-9), "{n:?}");
        }
        assert!(det(&n) > 0.0);
    }

    #[test]
    fn niggli_orders_lengths() {
        let m = [[7.0, 0.0, 0.0], [0.0, 3.0, 0.0], [1.0, 1.0, 5.0]];
        let n = niggli_reduce_matrix(&m, NIGGLI_TOL).unwrap();
        let l = lengths(&n);
        assert!(l[0] <= l[1] + 1e-9 && l[1] <= l[2] + 1e-9, "{l:?}");
        assert!(close(volume(&n), volume(&m), 1e-9));
    }

    #[test]
    fn degenerate_lattices_are_errors() {
        let flat = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]];
        assert!(niggli_reduce_matrix(&flat, NIGGLI_TOL).is_err());
        let nan = [[f64::NAN, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(niggli_reduce_matrix(&nan, NIGGLI_TOL).is_err());
        assert!(lll_reduce_matrix(&flat, LLL_DELTA).is_err());
    }
}
