//! Supercell matrices in Hermite normal form, in the order the primitive cell search tries
//! them, and their inverses.

use crate::linalg::{Mat3, Vec3};

/// Divisors of `n` in increasing order.
pub(super) fn divisors(n: usize) -> impl Iterator<Item = usize> {
    (1..=n).filter(move |&d| n.is_multiple_of(d))
}

/// The supercell matrices of determinant `det` whose inverse's rows (the primitive
/// translations in the current cell) all pass `present`, with that inverse, in the order of
/// [`supercell_matrices`].
///
/// Rows 1 and 2 of the inverse of `[[a, b, c], [0, e, f], [0, 0, g]]` depend on `e`, `f` and
/// `g` alone (back substitution never carries row 0 into them), so they are tested once per
/// `(e, f, g)`, and the `a²` matrices sharing a failing pair are never formed: a cell with
/// many formula units has thousands of matrices, and a structure without translations fails
/// nearly all of them on those rows.
pub(super) fn candidate_cells(
    det: usize,
    present: impl Fn(&Vec3) -> bool,
) -> Vec<([[i64; 3]; 3], Mat3)> {
    let mut out = Vec::new();
    for a in divisors(det) {
        for e in divisors(det / a) {
            let g = (det / a / e) as i64;
            let (a, e) = (a as i64, e as i64);
            let tails: Vec<i64> = (0..e)
                .filter(|&f| {
                    let inv = upper_triangular_inverse(&[[1, 0, 0], [0, e, f], [0, 0, g]]);
                    present(&inv[1]) && present(&inv[2])
                })
                .collect();
            if tails.is_empty() {
                continue;
            }
            for b in 0..a {
                for c in 0..a {
                    for &f in &tails {
                        let m = [[a, b, c], [0, e, f], [0, 0, g]];
                        let inv = upper_triangular_inverse(&m);
                        if present(&inv[0]) {
                            out.push((m, inv));
                        }
                    }
                }
            }
        }
    }
    out
}

/// Every upper-triangular Hermite normal form `[[a, b, c], [0, e, f], [0, 0, g]]` with
/// determinant `d`, for each divisor `d > 1` of `form_units` in increasing order, paired with
/// `d`. Within one determinant: `a` and then `e` run over divisors in increasing order, and
/// for each `(a, e)` the off-diagonal entries run over `b ∈ [0, a)`, `c ∈ [0, a)`,
/// `f ∈ [0, e)` with `f` fastest: the reference's order, which [`candidate_cells`] keeps
/// (the tests hold it to this list).
#[cfg(test)]
fn supercell_matrices(form_units: usize) -> impl Iterator<Item = (usize, [[i64; 3]; 3])> {
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
    fn candidate_cells_are_the_matrices_whose_rows_pass_in_order() {
        // Rows accepted by a few arbitrary rules: the pruned search must keep exactly the
        // matrices a full scan keeps, in the same order, with the same inverse bits.
        let rules: [fn(&Vec3) -> bool; 4] = [
            |_| true,
            |r| r[2] == 0.0 || r[2] >= 0.5,
            |r| r[1] == 0.0 || r[1] <= -0.25 || r[1] == 0.5,
            |r| r[0] != 0.25,
        ];
        for rule in rules {
            for det in [2, 3, 4, 6, 8, 12] {
                let want: Vec<([[i64; 3]; 3], Mat3)> = supercell_matrices(det)
                    .filter(|(d, _)| *d == det)
                    .map(|(_, m)| (m, upper_triangular_inverse(&m)))
                    .filter(|(_, inv)| inv.iter().all(rule))
                    .collect();
                let got = candidate_cells(det, rule);
                assert_eq!(got.len(), want.len(), "det {det}");
                for ((gm, gi), (wm, wi)) in got.iter().zip(&want) {
                    assert_eq!(gm, wm);
                    let bits = |m: &Mat3| m.map(|r| r.map(f64::to_bits));
                    assert_eq!(bits(gi), bits(wi), "{gm:?}");
                }
            }
        }
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
