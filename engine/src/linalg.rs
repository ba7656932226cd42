//! Small 3×3 linear algebra in pymatgen's conventions (row vectors, `frac · matrix = cart`).
//!
//! Shared by the matcher, lattice reduction and the primitive cell search. The matcher
//! compares floating-point quantities against tolerances, so this module follows the
//! order of operations of the reference implementation where that is cheap to do; the
//! transcendental functions come from `libm` so native and wasm builds agree bit for bit.

use crate::numeric::{cross, dot, dot_fused, fused_columns_pair, fused_mul_add_split, Split};

/// A 3-vector.
pub type Vec3 = [f64; 3];
/// A 3×3 matrix stored by rows.
pub type Mat3 = [[f64; 3]; 3];

/// Determinant (expanded along the first row).
pub fn det(m: &Mat3) -> f64 {
    dot(m[0], cross(m[1], m[2]))
}

/// Entries below this magnitude keep every product of three, and sums of six such, far
/// inside `i64`: plain 64-bit arithmetic is exact (in wasm, 128-bit and overflow-checked
/// multiplication are library calls).
const SMALL_ENTRY: i64 = 1 << 20;

/// Whether every entry of an integer matrix is below [`SMALL_ENTRY`] in magnitude.
pub(crate) fn small_entries(m: &[[i64; 3]; 3]) -> bool {
    m.iter()
        .flatten()
        .all(|x| x.unsigned_abs() < SMALL_ENTRY as u64)
}

/// Determinant of an integer matrix, exactly (computed in 128-bit, saturated to `i64`).
pub fn det_i64(m: &[[i64; 3]; 3]) -> i64 {
    if small_entries(m) {
        return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    }
    let w = m.map(|r| r.map(i128::from));
    let d = w[0][0] * (w[1][1] * w[2][2] - w[1][2] * w[2][1])
        - w[0][1] * (w[1][0] * w[2][2] - w[1][2] * w[2][0])
        + w[0][2] * (w[1][0] * w[2][1] - w[1][1] * w[2][0]);
    d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The inverse of an integer matrix with determinant ±1 (its adjugate times the
/// determinant, exactly), or `None` for any other determinant.
pub fn unimodular_inverse(m: &[[i64; 3]; 3]) -> Option<[[i64; 3]; 3]> {
    let d = det_i64(m);
    if d != 1 && d != -1 {
        return None;
    }
    // inverse = adjugate / det, and 1 / det = det for det = ±1.
    Some(adjugate_i64(m).map(|r| r.map(|x| x * d)))
}

/// The adjugate of an integer matrix (`m · adj = det(m) · I`), saturating.
pub fn adjugate_i64(m: &[[i64; 3]; 3]) -> [[i64; 3]; 3] {
    let small = small_entries(m);
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        if small {
            return m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
        }
        m[r0][c0]
            .saturating_mul(m[r1][c1])
            .saturating_sub(m[r0][c1].saturating_mul(m[r1][c0]))
    };
    // adj[j][i] = cofactor(i, j) (the cyclic indices carry the cofactor's sign).
    std::array::from_fn(|j| std::array::from_fn(|i| c(i, j)))
}

/// Cell volume as pymatgen reports it: `|(a × b) · c|`.
pub fn volume(m: &Mat3) -> f64 {
    dot_fused(cross(m[0], m[1]), m[2]).abs()
}

/// The inverse as numpy's `np.linalg.inv` computes it, to the last bit, or `None` where numpy
/// raises (an exactly zero pivot) or the result is not finite.
///
/// pymatgen's `Lattice.inv_matrix` (behind every `get_fractional_coords`) is this inverse,
/// and which of two tied periodic images or lattice mappings it prefers can hang on its last
/// bits. numpy solves `A X = I` with LAPACK's `dgesv` as OpenBLAS implements it: a
/// left-looking LU factorisation with partial pivoting (first largest |value| wins; the
/// column below a pivot is scaled by the pivot's reciprocal), then forward and back
/// substitution column by column, multiplying by reciprocals of U's diagonal; the updates
/// are fused multiply-adds where its kernels fuse them. Found by testing candidate orders
/// against numpy 2.4 / OpenBLAS 0.3.31 (SkylakeX kernels) until 57,000 matrices of every
/// pivot order, scale and sign of zero agreed bit for bit; the differential test
/// `formats_vs_pymatgen` holds it to numpy's bits on thousands more.
pub fn inverse_numpy(m: &Mat3) -> Option<Mat3> {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    if crate::numeric::cpu_has_fma() {
        // SAFETY: the CPU has the FMA instructions.
        return unsafe { fma_x86::inverse_numpy(m) };
    }
    inverse_numpy_with(m, crate::numeric::fused_mul_add)
}

/// [`inverse_numpy`] with `fma` as the fused multiply-add (inlined into each caller, so
/// that one compiled for the FMA instructions has them in line).
#[inline(always)]
fn inverse_numpy_with(m: &Mat3, fma: impl Fn(f64, f64, f64) -> f64) -> Option<Mat3> {
    if !is_finite(m) {
        return None;
    }
    // `x * y + 0.0` is `fma(x, y, 0.0)`: one rounding, and −0 becomes +0, as the kernels'
    // accumulators starting from +0 give.
    let mut a = *m;
    let mut ipiv = [0usize; 3];
    for j in 0..3 {
        for (i, &p) in ipiv.iter().enumerate().take(j) {
            if p != i {
                let t = a[i][j];
                a[i][j] = a[p][j];
                a[p][j] = t;
            }
        }
        if j == 2 {
            // The U entry above the diagonal: one dot-product update.
            a[1][2] -= a[1][0] * a[0][2] + 0.0;
        }
        // Matrix-vector update of the column at and below the diagonal.
        for r in j..3 {
            let t = match j {
                0 => continue,
                1 => a[r][0] * a[0][1] + 0.0,
                _ => fma(a[r][1], a[1][2], a[r][0] * a[0][2] + 0.0),
            };
            a[r][j] -= t;
        }
        let mut p = j;
        for r in j + 1..3 {
            if a[r][j].abs() > a[p][j].abs() {
                p = r;
            }
        }
        ipiv[j] = p;
        if a[p][j] == 0.0 {
            return None;
        }
        let reciprocal = 1.0 / a[p][j];
        if p != j {
            // Rows j and p swap in the columns factored so far only.
            let (upper, lower) = a.split_at_mut(p);
            upper[j][..=j].swap_with_slice(&mut lower[0][..=j]);
        }
        for row in a.iter_mut().skip(j + 1) {
            row[j] *= reciprocal;
        }
    }
    let [[u00, u01, u02], [l10, u11, u12], [l20, l21, u22]] = a;
    let (r00, r11, r22) = (1.0 / u00, 1.0 / u11, 1.0 / u22);
    let mut b = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for (i, &p) in ipiv.iter().enumerate() {
        b.swap(i, p);
    }
    let mut x = [[0.0; 3]; 3];
    for col in 0..3 {
        let (y0, c1, c2) = (b[0][col], b[1][col], b[2][col]);
        let y1 = fma(-y0, l10, c1);
        let y2 = c2 - fma(l21, y1, l20 * y0 + 0.0);
        let x2 = y2 * r22;
        let c0 = y0 - (u02 * x2 + 0.0);
        let c1 = y1 - (u12 * x2 + 0.0);
        let x1 = c1 * r11;
        let x0 = fma(-x1, u01, c0) * r00;
        x[0][col] = x0;
        x[1][col] = x1;
        x[2][col] = x2;
    }
    is_finite(&x).then_some(x)
}

/// Inverse of a matrix, or `None` when it is singular or not finite.
pub fn inverse(m: &Mat3) -> Option<Mat3> {
    let d = det(m);
    if !d.is_finite() || d == 0.0 {
        return None;
    }
    let [a, b, c] = *m;
    let (bc, ca, ab) = (cross(b, c), cross(c, a), cross(a, b));
    let inv: Mat3 = std::array::from_fn(|i| [bc[i] / d, ca[i] / d, ab[i] / d]);
    inv.iter()
        .all(|r| r.iter().all(|x| x.is_finite()))
        .then_some(inv)
}

/// Product `a · b` of two matrices.
pub fn matmul(a: &Mat3, b: &Mat3) -> Mat3 {
    std::array::from_fn(|i| vec_mat(a[i], b))
}

/// Transpose.
pub fn transpose(m: &Mat3) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

/// Row vector times matrix as numpy's `np.dot` computes it (see
/// [`crate::numeric::dot_fused`]): what pymatgen's `get_cartesian_coords`,
/// `get_fractional_coords` and `get_lll_frac_coords` give, to the last bit.
pub fn vec_mat_fused(v: Vec3, m: &Mat3) -> Vec3 {
    std::array::from_fn(|j| dot_fused(v, [m[0][j], m[1][j], m[2][j]]))
}

/// A matrix that row vectors are multiplied by as numpy does ([`vec_mat_fused`]), prepared
/// for many vectors. It knows whether every product with it is exact (entries 0 or ± powers
/// of two, as in the integer LLL mappings, almost always 0 and ±1): then fusing changes no
/// bit and plain arithmetic gives the same result. Otherwise, where the multiply-add is
/// emulated (wasm), its entries are split once rather than at every product.
#[derive(Clone, Copy, Debug)]
pub struct FusedMatrix {
    m: Mat3,
    split: [[Split; 3]; 3],
    exact: bool,
}

impl FusedMatrix {
    /// Wraps `m`.
    pub fn new(m: Mat3) -> Self {
        let exact_factor = |x: f64| {
            x == 0.0
                || (x.is_finite() && x.abs().to_bits() & ((1u64 << 52) - 1) == 0 && x.abs() >= 1.0)
        };
        Self {
            m,
            split: m.map(|r| r.map(Split::new)),
            exact: m.iter().flatten().all(|&x| exact_factor(x)),
        }
    }

    /// [`FusedMatrix::apply`] to two vectors at once (in wasm, the two run side by side).
    #[inline]
    pub fn apply_pair(&self, v: Vec3, w: Vec3) -> (Vec3, Vec3) {
        if self.exact {
            return (vec_mat(v, &self.m), vec_mat(w, &self.m));
        }
        #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
        if crate::numeric::cpu_has_fma() {
            // SAFETY: the CPU has the FMA instructions.
            return unsafe { (fma_x86::apply(&self.m, v), fma_x86::apply(&self.m, w)) };
        }
        let s = &self.split;
        let first: [[f64; 2]; 3] =
            std::array::from_fn(|j| [v[0] * self.m[0][j], w[0] * self.m[0][j]]);
        let cols = fused_columns_pair(([v[1], w[1]], &s[1]), ([v[2], w[2]], &s[2]), first);
        (
            std::array::from_fn(|j| cols[j][0]),
            std::array::from_fn(|j| cols[j][1]),
        )
    }

    /// `v · m` for every vector of `vs`, in order (pairs side by side: [`FusedMatrix::apply_pair`]).
    pub fn apply_all(&self, vs: &[Vec3]) -> Vec<Vec3> {
        #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
        if !self.exact && crate::numeric::cpu_has_fma() {
            // SAFETY: the CPU has the FMA instructions.
            return unsafe { fma_x86::apply_all(&self.m, vs) };
        }
        let mut out = Vec::with_capacity(vs.len());
        let mut pairs = vs.chunks_exact(2);
        for pair in &mut pairs {
            let (a, b) = self.apply_pair(pair[0], pair[1]);
            out.push(a);
            out.push(b);
        }
        out.extend(pairs.remainder().iter().map(|v| self.apply(*v)));
        out
    }

    /// `v · m`, bit for bit [`vec_mat_fused`].
    #[inline]
    pub fn apply(&self, v: Vec3) -> Vec3 {
        if self.exact {
            // Exact products: fma(v2, m2, fma(v1, m1, v0·m0)) rounds the same two sums.
            return vec_mat(v, &self.m);
        }
        #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
        if crate::numeric::cpu_has_fma() {
            // SAFETY: the CPU has the FMA instructions.
            return unsafe { fma_x86::apply(&self.m, v) };
        }
        let (v1, v2) = (Split::new(v[1]), Split::new(v[2]));
        let s = &self.split;
        std::array::from_fn(|j| {
            fused_mul_add_split(
                &v2,
                &s[2][j],
                fused_mul_add_split(&v1, &s[1][j], v[0] * self.m[0][j]),
            )
        })
    }
}

/// [`FusedMatrix`]'s products compiled for x86-64 CPUs with FMA: the multiply-adds are single
/// instructions in line, where the portable path checks for the instruction and calls a
/// function at every one. The same operations in the same order, so the same bits.
#[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
mod fma_x86 {
    use super::{Mat3, Vec3};

    /// `fma(v2, m2j, fma(v1, m1j, v0 · m0j))` for each column `j`.
    #[target_feature(enable = "fma")]
    pub(super) fn apply(m: &Mat3, v: Vec3) -> Vec3 {
        let column = |j: usize| v[2].mul_add(m[2][j], v[1].mul_add(m[1][j], v[0] * m[0][j]));
        [column(0), column(1), column(2)]
    }

    /// [`super::inverse_numpy`].
    #[target_feature(enable = "fma")]
    pub(super) fn inverse_numpy(m: &Mat3) -> Option<Mat3> {
        super::inverse_numpy_with(m, f64::mul_add)
    }

    /// [`apply`] to every vector of `vs`, in order.
    #[target_feature(enable = "fma")]
    pub(super) fn apply_all(m: &Mat3, vs: &[Vec3]) -> Vec<Vec3> {
        vs.iter().map(|&v| apply(m, v)).collect()
    }
}

/// Row vector times matrix: `v · m`.
pub fn vec_mat(v: Vec3, m: &Mat3) -> Vec3 {
    std::array::from_fn(|j| v[0] * m[0][j] + v[1] * m[1][j] + v[2] * m[2][j])
}

/// Euclidean norm computed as pymatgen's `np.sqrt(np.sum(v**2))`.
pub fn norm(v: Vec3) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// True when every entry of the matrix is finite.
pub fn is_finite(m: &Mat3) -> bool {
    m.iter().all(|r| r.iter().all(|x| x.is_finite()))
}

/// Lengths of the three row vectors.
pub fn lengths(m: &Mat3) -> Vec3 {
    m.map(norm)
}

/// Radians to degrees as numpy does (`x * (180/π)`).
pub fn rad2deg(x: f64) -> f64 {
    x * (180.0 / std::f64::consts::PI)
}

/// Degrees to radians as numpy does (`x * (π/180)`).
pub fn deg2rad(x: f64) -> f64 {
    x * (std::f64::consts::PI / 180.0)
}

/// The lengths of the rows and the cosines of α (b,c), β (a,c), γ (a,b), clamped to
/// [-1, 1], as pymatgen computes them on the way to [`parameters`] (which depend on them
/// alone: two lattices with the same ones have the same parameters, bit for bit).
pub fn lengths_and_cosines(m: &Mat3) -> (Vec3, Vec3) {
    let l = lengths(m);
    let c = std::array::from_fn(|dim| {
        let (j, k) = ((dim + 1) % 3, (dim + 2) % 3);
        (dot_fused(m[j], m[k]) / (l[j] * l[k])).clamp(-1.0, 1.0)
    });
    (l, c)
}

/// Angles α (b,c), β (a,c), γ (a,b) in degrees, as pymatgen's `Lattice.angles`.
pub fn angles(m: &Mat3) -> Vec3 {
    lengths_and_cosines(m).1.map(|c| rad2deg(libm::acos(c)))
}

/// Lattice parameters `[a, b, c, α, β, γ]`.
pub fn parameters(m: &Mat3) -> [f64; 6] {
    parameters_from(lengths_and_cosines(m))
}

/// [`parameters`] from [`lengths_and_cosines`].
pub fn parameters_from((l, c): (Vec3, Vec3)) -> [f64; 6] {
    let a = c.map(|c| rad2deg(libm::acos(c)));
    [l[0], l[1], l[2], a[0], a[1], a[2]]
}

/// A lattice matrix from parameters in pymatgen's frame (`Lattice.from_parameters` with
/// `vesta=False`: **c** along z, **a** in the xz-plane).
pub fn from_parameters_pymatgen(p: [f64; 6]) -> Mat3 {
    let [a, b, c, alpha, beta, gamma] = p;
    let (ar, br, gr) = (deg2rad(alpha), deg2rad(beta), deg2rad(gamma));
    let (cos_a, cos_b, cos_g) = (libm::cos(ar), libm::cos(br), libm::cos(gr));
    let (sin_a, sin_b) = (libm::sin(ar), libm::sin(br));
    let val = ((cos_a * cos_b - cos_g) / (sin_a * sin_b)).clamp(-1.0, 1.0);
    let gamma_star = libm::acos(val);
    [
        [a * sin_b, 0.0, a * cos_b],
        [
            -b * sin_a * libm::cos(gamma_star),
            b * sin_a * libm::sin(gamma_star),
            b * cos_a,
        ],
        [0.0, 0.0, c],
    ]
}

/// Lengths of the reciprocal lattice vectors with the 2π factor (pymatgen's
/// `reciprocal_lattice.abc`), or `None` for a singular matrix.
pub fn reciprocal_lengths(m: &Mat3) -> Option<Vec3> {
    let inv = inverse_numpy(m)?;
    // Rows of the reciprocal lattice are the columns of the inverse.
    Some(std::array::from_fn(|r| {
        norm(std::array::from_fn(|c| {
            inv[c][r] * 2.0 * std::f64::consts::PI
        }))
    }))
}

/// `x % 1.0` with Python semantics (result in `[0, 1]`, sign of the divisor).
///
/// The remainder is taken as `x − trunc(x)`: exact for every finite `x` (the fractional
/// bits of `x` are representable), so it equals Rust's `x % 1.0` up to the sign of a zero
/// result, which the branch below maps to `0.0` either way; no `fmod` call (it was a visible
/// share of the matcher's distance tables).
#[inline]
pub fn py_mod1(x: f64) -> f64 {
    let r = if x.abs() < 2_251_799_813_685_248.0 {
        // trunc(x) from the nearest integer (the 1.5·2⁵² addition; `trunc` itself is a
        // library call on baseline x86-64).
        const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
        let n = (x + MAGIC) - MAGIC;
        let t = if x >= 0.0 {
            if n > x {
                n - 1.0
            } else {
                n
            }
        } else if n < x {
            n + 1.0
        } else {
            n
        };
        x - t
    } else if x.is_finite() {
        x - x.trunc()
    } else {
        x % 1.0
    };
    if r != 0.0 {
        if r < 0.0 {
            r + 1.0
        } else {
            r
        }
    } else {
        0.0
    }
}

/// numpy's `allclose(a, b)` with its default tolerances (rtol 1e-5, atol 1e-8).
pub fn allclose(a: &Mat3, b: &Mat3) -> bool {
    (0..3).all(|i| (0..3).all(|j| (a[i][j] - b[i][j]).abs() <= 1e-8 + 1e-5 * b[i][j].abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_mod1_is_exactly_the_remainder_formula() {
        let reference = |x: f64| {
            let r = x % 1.0;
            if r != 0.0 {
                if r < 0.0 {
                    r + 1.0
                } else {
                    r
                }
            } else {
                0.0
            }
        };
        let mut rng = crate::test_rng::XorShift::new(0x0123_4567_89ab_cdef);
        let mut cases = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1e-300,
            -1e-300,
            4503599627370497.5,
            -3.0,
            1e300,
            -1e300,
            0.9999999999999999,
            -0.9999999999999999,
            f64::NAN,
            f64::INFINITY,
        ];
        for _ in 0..200_000 {
            let s = rng.next_u64();
            cases.push(f64::from_bits(s));
            cases.push((s as f64 / u64::MAX as f64 - 0.5) * 64.0);
        }
        for x in cases {
            assert_eq!(py_mod1(x).to_bits(), reference(x).to_bits(), "{x:e}");
        }
    }

    #[test]
    fn integer_determinant_and_adjugate_are_exact_on_either_path() {
        let mut seed: u64 = 7;
        let mut next = move |range: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64 % (2 * range + 1)) - range
        };
        for n in 0..4000 {
            // Small entries, entries at the edge of the small path, and large ones (whose
            // cofactors still fit in 64 bits; determinants saturate).
            let range = [3, SMALL_ENTRY - 1, SMALL_ENTRY, 1 << 28][n % 4];
            let m: [[i64; 3]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| next(range)));
            let w = m.map(|r| r.map(i128::from));
            let exact = w[0][0] * (w[1][1] * w[2][2] - w[1][2] * w[2][1])
                - w[0][1] * (w[1][0] * w[2][2] - w[1][2] * w[2][0])
                + w[0][2] * (w[1][0] * w[2][1] - w[1][1] * w[2][0]);
            let saturated = exact.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
            assert_eq!(det_i64(&m), saturated, "{m:?}");
            // adj[i][j] is the cofactor of entry (j, i).
            let want: [[i64; 3]; 3] = std::array::from_fn(|i| {
                std::array::from_fn(|j| {
                    let (r0, r1) = ((j + 1) % 3, (j + 2) % 3);
                    let (c0, c1) = ((i + 1) % 3, (i + 2) % 3);
                    let cof = w[r0][c0] * w[r1][c1] - w[r0][c1] * w[r1][c0];
                    cof.clamp(i64::MIN.into(), i64::MAX.into()) as i64
                })
            });
            assert_eq!(adjugate_i64(&m), want, "{m:?}");
        }
    }

    #[test]
    fn python_modulo_wraps_negatives_up() {
        assert_eq!(py_mod1(-0.25), 0.75);
        assert_eq!(py_mod1(1.5), 0.5);
        assert_eq!(py_mod1(-1e-20), 1.0);
        assert_eq!(py_mod1(-2.0), 0.0);
    }

    #[test]
    fn pymatgen_frame_puts_c_along_z() {
        let m = from_parameters_pymatgen([3.0, 4.0, 5.0, 80.0, 95.0, 110.0]);
        assert_eq!(m[2], [0.0, 0.0, 5.0]);
        let p = parameters(&m);
        for (x, y) in p.iter().zip([3.0, 4.0, 5.0, 80.0, 95.0, 110.0]) {
            assert!((x - y).abs() < 1e-9, "{p:?}");
        }
    }

    #[test]
    fn inverse_of_singular_is_none() {
        assert!(inverse(&[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).is_none());
        let m = [[2.0, 0.0, 0.0], [0.5, 3.0, 0.0], [0.1, 0.2, 4.0]];
        let p = matmul(&m, &inverse(&m).unwrap());
        for (i, row) in p.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                assert!((x - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
    }
}
