//! Supercell matrices in Hermite normal form, in the order the primitive cell search tries
//! them, and their inverses.

use crate::linalg::Mat3;

/// Divisors of `n` in increasing order.
fn divisors(n: usize) -> impl Iterator<Item = usize> {
    (1..=n).filter(move |&d| n.is_multiple_of(d))
}

/// Every upper-triangular Hermite normal form `[[a, b, c], [0, e, f], [0, 0, g]]` with
/// determinant `d`, for each divisor `d > 1` of `form_units` in increasing order, paired with
/// `d`. Within one determinant: `a` and then `e` run over divisors in increasing order, and
/// for each `(a, e)` the off-diagonal entries run over `b ∈ [0, a)`, `c ∈ [0, a)`,
/// `f ∈ [0, e)` with `f` fastest.
pub(super) fn supercell_matrices(
    form_units: usize,
) -> impl Iterator<Item = (usize, [[i64; 3]; 3])> {
    divisors(form_units).filter(|&d| d > 1).flat_map(|det| {
        divisors(det).flat_map(move |a| {
            divisors(det / a).flat_map(move |e| {
                let g = det / a / e;
                (0..a).flat_map(move |b| {
                    (0..a).flat_map(move |c| {
                        (0..e).map(move |f| {
                            let m = [a, b, c, e, f, g].map(|x| x as i64);
                            (det, [[m[0], m[1], m[2]], [0, m[3], m[4]], [0, 0, m[5]]])
                        })
                    })
                })
            })
        })
    })
}

/// Inverse of an upper-triangular matrix with a non-zero diagonal, by back substitution on
/// each column of the identity (the operation order of LAPACK's triangular solve).
pub(super) fn upper_triangular_inverse(m: &[[i64; 3]; 3]) -> Mat3 {
    let u = m.map(|r| r.map(|x| x as f64));
    let mut inv = [[0.0; 3]; 3];
    for col in 0..3 {
        let mut b = [0.0; 3];
        b[col] = 1.0;
        for k in (0..3).rev() {
            if b[k] != 0.0 {
                b[k] /= u[k][k];
                for i in 0..k {
                    b[i] -= b[k] * u[i][k];
                }
            }
        }
        for (row, x) in inv.iter_mut().zip(b) {
            row[col] = x;
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_number_of_sublattices() {
        // Sublattices of index d of Z³: 1, 7, 13, 35 for d = 1, 2, 3, 4.
        let count = |n| supercell_matrices(n).filter(|(d, _)| *d == n).count();
        assert_eq!(count(2), 7);
        assert_eq!(count(3), 13);
        assert_eq!(count(4), 35);
        // Determinants come in increasing order.
        let dets: Vec<usize> = supercell_matrices(4).map(|(d, _)| d).collect();
        assert!(dets.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(dets.len(), 7 + 35);
    }

    #[test]
    fn inverse_is_exact_for_small_matrices() {
        for (_, m) in supercell_matrices(6) {
            let inv = upper_triangular_inverse(&m);
            let mf = m.map(|r| r.map(|x| x as f64));
            let product = crate::linalg::matmul(&mf, &inv);
            for (i, row) in product.iter().enumerate() {
                for (j, x) in row.iter().enumerate() {
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((x - want).abs() < 1e-12, "{m:?}");
                }
            }
        }
    }
}
