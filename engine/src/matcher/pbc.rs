//! Periodic geometry for the matcher: the fractional-tolerance subset test and the table of
//! shortest periodic vectors between two site lists (pymatgen's `is_coord_subset_pbc` and
//! `pbc_shortest_vectors`).

use super::linalg::{py_mod1, vec_mat, Mat3, Vec3};
use crate::reduction::LllReduction;

/// Cost written for pairs that may not be matched (masked, or beyond the fractional
/// tolerance), as in the reference.
pub const FORBIDDEN: f64 = 1e20;

/// |x − nearest integer|, bit for bit what `(x - x.round()).abs()` gives, without the libm
/// call (`round` was an eighth of the matcher's time on large structures).
///
/// Adding and subtracting 1.5·2⁵² rounds to the nearest integer (ties to even) exactly for
/// |x| < 2⁵¹; the difference from x is then exact, and at a tie both neighbours are 0.5 away,
/// so the absolute value equals the one `round` (ties away from zero) gives.
#[inline]
pub fn distance_to_integer(x: f64) -> f64 {
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    if x.abs() < 2_251_799_813_685_248.0 {
        // 2^51
        (x - ((x + MAGIC) - MAGIC)).abs()
    } else {
        (x - x.round()).abs()
    }
}

/// True when every point of `subset` lies within `atol` (per fractional axis, periodic) of a
/// point of `superset` it may be matched to. `forbidden(i, j)` says whether subset point `i`
/// may not be matched to superset point `j`.
pub fn is_coord_subset_pbc(
    subset: &[Vec3],
    superset: &[Vec3],
    atol: Vec3,
    forbidden: impl Fn(usize, usize) -> bool,
) -> bool {
    subset.iter().enumerate().all(|(i, p)| {
        superset.iter().enumerate().any(|(j, q)| {
            !forbidden(i, j) && (0..3).all(|k| distance_to_integer(p[k] - q[k]) <= atol[k])
        })
    })
}

/// The 27 image offsets `(-1..=1)³` with the last index fastest.
fn images() -> [Vec3; 27] {
    std::array::from_fn(|n| {
        [
            (n / 9) as f64 - 1.0,
            ((n / 3) % 3) as f64 - 1.0,
            (n % 3) as f64 - 1.0,
        ]
    })
}

/// Shortest periodic vectors from each point of `fc1` to each point of `fc2` on a lattice
/// given by its LLL reduction, searching the 27 neighbouring images of the LLL cell.
///
/// Output is row-major `fc1.len() × fc2.len()`: `vectors[i * n2 + j]` and its squared length
/// `d2[i * n2 + j]`. Forbidden pairs, and pairs whose LLL-fractional separation exceeds
/// `lll_frac_tol` on some axis, get [`FORBIDDEN`].
pub struct ShortestVectors {
    /// Displacement vectors (Å).
    pub vectors: Vec<Vec3>,
    /// Squared lengths (Å²).
    pub d2: Vec<f64>,
}

/// Computes [`ShortestVectors`]; see there.
pub fn pbc_shortest_vectors(
    lll: &LllReduction,
    fc1: &[Vec3],
    fc2: &[Vec3],
    forbidden: impl Fn(usize, usize) -> bool,
    lll_frac_tol: Option<Vec3>,
) -> ShortestVectors {
    let inv = lll.mapping_inverse();
    let lat: &Mat3 = &lll.matrix;
    let to_lll = |f: &Vec3| vec_mat(*f, &inv);
    let l1: Vec<Vec3> = fc1.iter().map(to_lll).collect();
    let l2: Vec<Vec3> = fc2.iter().map(to_lll).collect();
    let cart_mod = |f: &Vec3| -> Vec3 {
        let w = f.map(py_mod1);
        let mut o = [0.0; 3];
        for (k, wk) in w.iter().enumerate() {
            for (j, oj) in o.iter_mut().enumerate() {
                *oj += wk * lat[k][j];
            }
        }
        o
    };
    let c1: Vec<Vec3> = l1.iter().map(cart_mod).collect();
    let c2: Vec<Vec3> = l2.iter().map(cart_mod).collect();
    let cart_im: Vec<Vec3> = images()
        .iter()
        .map(|im| {
            let mut o = [0.0; 3];
            for (k, ik) in im.iter().enumerate() {
                for (j, oj) in o.iter_mut().enumerate() {
                    *oj += ik * lat[k][j];
                }
            }
            o
        })
        .collect();

    let (n1, n2) = (fc1.len(), fc2.len());
    let mut vectors = vec![[FORBIDDEN; 3]; n1 * n2];
    let mut d2 = vec![FORBIDDEN; n1 * n2];
    let columns = ColumnWindow::new(&l2, lll_frac_tol.map(|t| t[0]));
    let mut candidates = Vec::with_capacity(n2);
    for i in 0..n1 {
        columns.near(l1[i][0], &mut candidates);
        for &j in &candidates {
            if forbidden(i, j) {
                continue;
            }
            if let Some(tol) = lll_frac_tol {
                let beyond = (0..3).any(|l| distance_to_integer(l2[j][l] - l1[i][l]) > tol[l]);
                if beyond {
                    continue;
                }
            }
            let pre: Vec3 = std::array::from_fn(|l| c2[j][l] - c1[i][l]);
            let mut best = 1e100;
            let mut best_k = 0;
            for (k, im) in cart_im.iter().enumerate() {
                let da = pre[0] + im[0];
                let db = pre[1] + im[1];
                let dc = pre[2] + im[2];
                let d = da * da + db * db + dc * dc;
                if d < best {
                    best = d;
                    best_k = k;
                }
            }
            d2[i * n2 + j] = best;
            vectors[i * n2 + j] = std::array::from_fn(|l| pre[l] + cart_im[best_k][l]);
        }
    }
    ShortestVectors { vectors, d2 }
}

/// The columns whose first LLL-fractional coordinate can lie within a tolerance of a given
/// value (periodically), found by binary search in the columns sorted by that coordinate.
///
/// Why by hand: it only narrows the pairs the exact per-axis test then sees. The window is
/// widened by 1e-9 beyond the tolerance, far more than the rounding of wrapping a coordinate
/// into [0, 1), so every pair the exact test would accept is among the candidates and the
/// table is the same as checking all pairs; rows then cost O(window) instead of O(n).
struct ColumnWindow {
    /// (wrapped coordinate, column), sorted.
    sorted: Vec<(f64, usize)>,
    /// Half-width of the window, or `None` for every column.
    half: Option<f64>,
}

impl ColumnWindow {
    fn new(l2: &[Vec3], tol: Option<f64>) -> Self {
        let half = tol.map(|t| t + 1e-9).filter(|h| *h < 0.5);
        let mut sorted: Vec<(f64, usize)> = l2
            .iter()
            .enumerate()
            .map(|(j, p)| (p[0] - p[0].floor(), j))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Self { sorted, half }
    }

    /// Fills `out` with the candidate columns for a row at coordinate `x` (each once, in no
    /// particular order: every pair is computed on its own).
    fn near(&self, x: f64, out: &mut Vec<usize>) {
        out.clear();
        let Some(half) = self.half.filter(|_| x.is_finite()) else {
            out.extend(0..self.sorted.len());
            return;
        };
        let c = x - x.floor();
        let mut take = |lo: f64, hi: f64| {
            let start = self.sorted.partition_point(|p| p.0 < lo);
            let end = self.sorted.partition_point(|p| p.0 <= hi);
            out.extend(self.sorted[start..end.max(start)].iter().map(|p| p.1));
        };
        let (lo, hi) = (c - half, c + half);
        take(lo.max(0.0), hi.min(1.0));
        if lo < 0.0 {
            take(lo + 1.0, 1.0);
        }
        if hi > 1.0 {
            take(0.0, hi - 1.0);
        }
        // The ranges are disjoint (the window is narrower than the period): no duplicates.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_window_never_misses_a_pair_the_exact_test_accepts() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
        };
        let cols: Vec<Vec3> = (0..300).map(|_| [rnd(), 0.0, 0.0]).collect();
        let mut out = Vec::new();
        for tol in [0.01, 0.1, 0.3, 0.49, 0.6] {
            let w = ColumnWindow::new(&cols, Some(tol));
            for _ in 0..300 {
                let r = rnd();
                w.near(r, &mut out);
                let mut once = out.clone();
                once.sort_unstable();
                once.dedup();
                assert_eq!(once.len(), out.len(), "a column listed twice");
                for (j, c) in cols.iter().enumerate() {
                    if distance_to_integer(c[0] - r) <= tol {
                        assert!(
                            out.contains(&j),
                            "tol {tol}: row {r} misses column {j} at {}",
                            c[0]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn distance_to_integer_is_exactly_the_rounding_formula() {
        let mut x: u64 = 0x1234_5678_9abc_def0;
        let mut cases = vec![
            0.5,
            -0.5,
            1.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            1e-300,
            -0.0,
            2251799813685247.5,
            4503599627370497.0,
            1e300,
            -7.25,
            3.0,
        ];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as f64 / u64::MAX as f64 - 0.5) * 40.0);
        }
        for c in cases {
            assert_eq!(
                distance_to_integer(c).to_bits(),
                (c - c.round()).abs().to_bits(),
                "{c}"
            );
        }
    }
    use crate::reduction::{lll_reduce_matrix, LLL_DELTA};

    #[test]
    fn shortest_vector_crosses_the_boundary() {
        let m = [[4.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 6.0]];
        let lll = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
        let sv = pbc_shortest_vectors(
            &lll,
            &[[0.05, 0.0, 0.0]],
            &[[0.95, 0.5, 0.0], [0.1, 0.0, 0.0]],
            |_, j| j == 1,
            None,
        );
        let v = sv.vectors[0];
        assert!(
            (v[0] + 0.4).abs() < 1e-12 && (v[1].abs() - 2.5).abs() < 1e-12,
            "{v:?}"
        );
        assert_eq!(sv.d2[1], FORBIDDEN);
    }

    #[test]
    fn subset_test_is_periodic() {
        let a = [[0.99, 0.5, 0.5]];
        let b = [[0.01, 0.5, 0.5]];
        assert!(is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| false));
        assert!(!is_coord_subset_pbc(&a, &b, [0.01; 3], |_, _| false));
        assert!(!is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| true));
    }
}
