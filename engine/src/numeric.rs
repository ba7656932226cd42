//! Portable numerics: the same bits natively and in wasm32, and numpy's bits where pymatgen's
//! decisions hang on them.
//!
//! # The same bits on every target
//!
//! `f64::cos` and friends call the platform's libm (glibc natively, a Rust port in wasm),
//! which may differ in the last bit. Verdicts must not depend on where they are computed, so
//! the engine takes every transcendental function from the `libm` crate (the helpers here);
//! `engine/clippy.toml` makes clippy refuse the std methods. Basic arithmetic and `sqrt` are
//! correctly rounded by IEEE 754 everywhere and need no wrapper. [`floor`],
//! [`round_ties_even`] and [`distance_to_integer`] give the library's results without the
//! library call that baseline x86-64 makes (wasm has the instructions). wasm builds use
//! 128-bit SIMD (`.cargo/config.toml`) without relaxed operations, which changes no result.
//! `engine/tests/cross_target.rs` runs natively and in wasm and checks digests of parsed,
//! reduced and matched structures against one recorded value.
//!
//! # numpy's arithmetic, to the last bit
//!
//! Exact ties are common in crystals: a site at (1/3, 2/3) of a hexagonal cell is
//! equidistant from three lattice points, LLL size reduction meets μ = ½ in rhombohedral
//! cells, symmetric copies of a match have the same RMS. pymatgen breaks such ties by the
//! last bits of numpy's results, so the matcher computes what numpy computes, operation for
//! operation:
//! - [`dot_fused`] is `np.dot` (OpenBLAS accumulates with fused multiply-adds);
//!   [`crate::linalg::vec_mat_fused`] and [`crate::linalg::FusedMatrix`] are pymatgen's
//!   `get_cartesian_coords`, `get_fractional_coords` and `get_lll_frac_coords`;
//! - [`crate::linalg::inverse_numpy`] is `np.linalg.inv` (OpenBLAS `dgesv`: left-looking
//!   LU, reciprocal scaling, fused substitution);
//! - the LLL reduction ([`crate::reduction`]) follows pymatgen's `_calculate_lll`, including
//!   `np.linalg.lstsq`'s scaling;
//! - [`dot_numpy`] is the dot product under `np.linalg.norm` (the RMS), with the lane
//!   accumulators of OpenBLAS's AVX-512 `ddot`.
//!
//! `engine/tests/formats_vs_pymatgen.rs` holds these to numpy's bits (LLL reductions and
//! inverses from the oracle). wasm has no fused multiply-add: [`fused_mul_add`] emulates it
//! exactly there ([`fused_mul_add_emulated`]: Dekker's product, TwoSum, rounding to odd; two
//! lanes at a time for `FusedMatrix::apply_all`), checked against the x86-64 instruction.
//! Natively it is the CPU's instruction where there is one; `FusedMatrix` and
//! `inverse_numpy` check for it once (`cpu_has_fma`) and run code compiled for it, with
//! the multiply-adds in line.
//!
//! Not reproduced: numpy's `arccos` on AVX-512 machines is Intel's SVML, whose angles can
//! differ from `libm` by an ulp or so (average lattices then move by an ulp). The orders above
//! are those of the oracle's machine (x86-64 with AVX-512 and numpy's bundled OpenBLAS);
//! another BLAS may round otherwise.

/// Degrees to radians as ASE and numpy compute it (`deg * pi / 180`, two roundings), which
/// differs in the last bit from `f64::to_radians` for some angles.
pub fn radians(deg: f64) -> f64 {
    deg * std::f64::consts::PI / 180.0
}

/// Cosine of an angle in degrees.
pub fn cos_deg(deg: f64) -> f64 {
    libm::cos(radians(deg))
}

/// Sine of an angle in degrees.
pub fn sin_deg(deg: f64) -> f64 {
    libm::sin(radians(deg))
}

/// Arc cosine in degrees (argument clamped to [-1, 1]).
pub fn acos_deg(x: f64) -> f64 {
    libm::acos(x.clamp(-1.0, 1.0)).to_degrees()
}

/// Dot product.
pub fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Dot product as numpy's `np.dot` computes it with OpenBLAS on FMA hardware (its kernels
/// for dot, matrix-vector and matrix-matrix products alike): a chain of fused multiply-adds
/// in index order, `fma(a2, b2, fma(a1, b1, a0·b0))`. Checked bit for bit against numpy
/// 2.4 / OpenBLAS 0.3.31 on every shape pymatgen's matcher uses. Exact ties in pymatgen
/// (equidistant periodic images, LLL size reduction at μ = ½) are broken by these last bits,
/// so wherever the matcher mirrors an `np.dot`, it computes this.
pub fn dot_fused(a: [f64; 3], b: [f64; 3]) -> f64 {
    fused_mul_add(a[2], b[2], fused_mul_add(a[1], b[1], a[0] * b[0]))
}

/// `np.dot(x, y)` of two contiguous float64 vectors of equal length, bit for bit as numpy's
/// OpenBLAS computes it on AVX-512 machines (the SkylakeX `ddot` kernel): below 16 terms one
/// chain of fused multiply-adds from 0; otherwise the first multiple of 16 terms goes through
/// lane accumulators (four of 8 lanes over blocks of 32, folded to four of 4 lanes, which take
/// any remaining block of 16; then summed lane-wise, halves, and the pair), and the rest
/// continues the chain. Found by testing against numpy 2.4 / OpenBLAS 0.3.31 for lengths 1 to
/// 200. pymatgen's RMS (`np.linalg.norm(dist)`) is this dot product's square root, and
/// symmetric copies of one match tie in it up to these last bits.
pub fn dot_numpy(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len().min(y.len());
    let n16 = n & !15;
    let mut i = 0;
    let mut dot = 0.0;
    if n16 > 0 {
        let mut acc = [[0.0f64; 4]; 4];
        let n32 = n16 & !31;
        if n32 > 0 {
            let mut wide = [[0.0f64; 8]; 4];
            while i < n32 {
                for (r, lanes) in wide.iter_mut().enumerate() {
                    for (l, a) in lanes.iter_mut().enumerate() {
                        let k = i + 8 * r + l;
                        *a = fused_mul_add(x[k], y[k], *a);
                    }
                }
                i += 32;
            }
            for (r, lanes) in wide.iter().enumerate() {
                acc[r] = std::array::from_fn(|l| lanes[l] + lanes[l + 4]);
            }
        }
        while i < n16 {
            for (r, lanes) in acc.iter_mut().enumerate() {
                for (l, a) in lanes.iter_mut().enumerate() {
                    let k = i + 4 * r + l;
                    *a = fused_mul_add(x[k], y[k], *a);
                }
            }
            i += 16;
        }
        let lane: [f64; 4] =
            std::array::from_fn(|l| ((acc[0][l] + acc[1][l]) + acc[2][l]) + acc[3][l]);
        dot = (lane[0] + lane[2]) + (lane[1] + lane[3]);
    }
    while i < n {
        dot = fused_mul_add(x[i], y[i], dot);
        i += 1;
    }
    dot
}

/// `a · b + c` with a single rounding (IEEE fused multiply-add), the same bits on every
/// target. Natively this is the CPU's instruction where it has one, else `f64::mul_add`
/// (the C library's `fma`); wasm has no fused multiply-add, and the software `fma` Rust links
/// there is slow enough to dominate the matcher's inner loops, so wasm uses
/// [`fused_mul_add_emulated`].
#[inline]
pub fn fused_mul_add(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        fused_mul_add_emulated(a, b, c)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        native::fused_mul_add(a, b, c)
    }
}

/// The native fused multiply-add: baseline x86-64 has no FMA instruction, so `f64::mul_add`
/// becomes a call into the C library; where the CPU has one (nearly every x86-64 since 2013),
/// a function compiled for it does the same in one instruction. Same bits either way.
#[cfg(not(target_arch = "wasm32"))]
mod native {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    #[inline]
    pub(super) fn fused_mul_add(a: f64, b: f64, c: f64) -> f64 {
        #[target_feature(enable = "fma")]
        fn instruction(a: f64, b: f64, c: f64) -> f64 {
            a.mul_add(b, c)
        }
        if super::cpu_has_fma() {
            // SAFETY: the CPU was just found to have the FMA instructions.
            unsafe { instruction(a, b, c) }
        } else {
            a.mul_add(b, c)
        }
    }

    #[cfg(not(all(target_arch = "x86_64", not(target_feature = "fma"))))]
    #[inline]
    pub(super) fn fused_mul_add(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// Whether this x86-64 CPU has the FMA instructions (checked at run time: the baseline
/// target lacks them). Code with many multiply-adds checks once and runs a function compiled
/// for them ([`crate::linalg::FusedMatrix`]), instead of checking and calling per product.
#[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
#[inline]
pub fn cpu_has_fma() -> bool {
    std::arch::is_x86_feature_detected!("fma")
}

/// A correctly rounded `a · b + c` from ordinary double operations: the exact product as a
/// pair (Veltkamp/Dekker), its exact sum with `c` (Knuth's TwoSum), the two low parts added
/// with rounding to odd, then one rounding to nearest. Boldo & Melquiond proved this gives
/// the fused result when nothing overflows or underflows ("Emulation of FMA and correctly
/// rounded sums: proved algorithms using rounding to odd", IEEE Trans. Computers 57 (2008)
/// 462–471). Outside the range where that holds (and for non-finite values), it defers to
/// `f64::mul_add`. No crate offers this: `libm::fma` is the slow integer version. Tested bit
/// for bit against the hardware instruction.
pub fn fused_mul_add_emulated(a: f64, b: f64, c: f64) -> f64 {
    fused_mul_add_split_emulated(&Split::new(a), &Split::new(b), c)
}

/// 2^±300: within them, products and sums stay far from overflow and from subnormals.
const SAFE_HI: f64 = 2.037035976334486e90;
const SAFE_LO: f64 = 4.909093465297727e-91;

/// A factor of fused products split once (Veltkamp) into halves of at most 26 significant
/// bits, whose products are exact: a matrix applied to many vectors splits its entries once.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    x: f64,
    hi: f64,
    lo: f64,
}

impl Split {
    /// Splits `x`.
    #[inline]
    pub fn new(x: f64) -> Self {
        let t = 134_217_729.0 * x; // 2^27 + 1
        let hi = t - (t - x);
        Self { x, hi, lo: x - hi }
    }

    /// Whether the emulation's proof covers products with this factor (zero is handled apart).
    #[inline]
    fn in_range(&self) -> bool {
        self.x.abs() > SAFE_LO && self.x.abs() < SAFE_HI
    }
}

/// [`fused_mul_add`] of split factors: `a · b + c` with one rounding, the same bits.
#[inline]
pub fn fused_mul_add_split(a: &Split, b: &Split, c: f64) -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        fused_mul_add_split_emulated(a, b, c)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        native::fused_mul_add(a.x, b.x, c)
    }
}

/// [`fused_mul_add_split`] on two lanes at once, `[a0·b + c0, a1·b + c1]`, the same bits.
/// In wasm with SIMD both lanes run the emulation together (f64x2); a lane needing the
/// library path (see [`fused_mul_add_emulated`]) sends the pair through the scalar one.
#[inline]
pub fn fused_mul_add_split_pair(a: [f64; 2], b: &Split, c: [f64; 2]) -> [f64; 2] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        if let Some(r) = simd::fused_pair(&simd::Lanes::new(a), b, c) {
            return r;
        }
    }
    fused_mul_add_split_pair_scalar(a, b, c)
}

/// [`fused_mul_add_split_pair`] lane by lane.
#[inline]
fn fused_mul_add_split_pair_scalar(a: [f64; 2], b: &Split, c: [f64; 2]) -> [f64; 2] {
    [
        fused_mul_add_split(&Split::new(a[0]), b, c[0]),
        fused_mul_add_split(&Split::new(a[1]), b, c[1]),
    ]
}

/// Three columns of two lanes, each `c[j] + a1·b1[j] + a2·b2[j]` as two
/// [`fused_mul_add_split_pair`]s (`a1` first), the same bits. In wasm with SIMD the lanes of
/// `a1` and of `a2` are split and range-checked once for the three columns rather than once
/// per product (a matrix applied to two vectors: `a1`, `a2` their second and third
/// coordinates, `b1`, `b2` the matrix's second and third rows).
#[inline]
pub fn fused_columns_pair(
    (a1, b1): ([f64; 2], &[Split; 3]),
    (a2, b2): ([f64; 2], &[Split; 3]),
    c: [[f64; 2]; 3],
) -> [[f64; 2]; 3] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let (l1, l2) = (simd::Lanes::new(a1), simd::Lanes::new(a2));
        std::array::from_fn(|j| {
            let c = simd::fused_pair(&l1, &b1[j], c[j])
                .unwrap_or_else(|| fused_mul_add_split_pair_scalar(a1, &b1[j], c[j]));
            simd::fused_pair(&l2, &b2[j], c)
                .unwrap_or_else(|| fused_mul_add_split_pair_scalar(a2, &b2[j], c))
        })
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        std::array::from_fn(|j| {
            let c = fused_mul_add_split_pair(a1, &b1[j], c[j]);
            fused_mul_add_split_pair(a2, &b2[j], c)
        })
    }
}

/// The two-lane emulation: the scalar one's steps, lane by lane, in wasm SIMD registers.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::{Split, SAFE_HI, SAFE_LO};
    use core::arch::wasm32::*;

    /// Two lanes of first factors with what every product with them needs: their
    /// Veltkamp halves, which lanes are zero, and which the emulation covers.
    #[derive(Clone, Copy)]
    pub(super) struct Lanes {
        av: v128,
        ah: v128,
        al: v128,
        a_zero: v128,
        a_ok: v128,
    }

    impl Lanes {
        #[inline]
        pub(super) fn new(a: [f64; 2]) -> Self {
            let av = f64x2(a[0], a[1]);
            let (lo, hi) = (f64x2_splat(SAFE_LO), f64x2_splat(SAFE_HI));
            let aa = f64x2_abs(av);
            let a_zero = f64x2_eq(av, f64x2_splat(0.0));
            let a_ok = v128_or(a_zero, v128_and(f64x2_gt(aa, lo), f64x2_lt(aa, hi)));
            // Veltkamp halves of the lanes.
            let t = f64x2_mul(f64x2_splat(134_217_729.0), av);
            let ah = f64x2_sub(t, f64x2_sub(t, av));
            let al = f64x2_sub(av, ah);
            Self {
                av,
                ah,
                al,
                a_zero,
                a_ok,
            }
        }
    }

    /// `None` when a lane is outside the emulation's range (the caller goes scalar).
    #[inline]
    pub(super) fn fused_pair(a: &Lanes, b: &Split, c: [f64; 2]) -> Option<[f64; 2]> {
        if !b.in_range() {
            return None;
        }
        let Lanes {
            av,
            ah,
            al,
            a_zero,
            a_ok,
        } = *a;
        let cv = f64x2(c[0], c[1]);
        let (lo, hi) = (f64x2_splat(SAFE_LO), f64x2_splat(SAFE_HI));
        let zero = f64x2_splat(0.0);
        let ca = f64x2_abs(cv);
        let c_ok = v128_or(
            f64x2_eq(cv, zero),
            v128_and(f64x2_gt(ca, lo), f64x2_lt(ca, hi)),
        );
        if !i64x2_all_true(v128_and(a_ok, c_ok)) {
            return None;
        }
        // Dekker's exact product p + e = a·b.
        let (bx, bh, bl) = (f64x2_splat(b.x), f64x2_splat(b.hi), f64x2_splat(b.lo));
        let p = f64x2_mul(av, bx);
        let e = f64x2_add(
            f64x2_add(
                f64x2_add(f64x2_sub(f64x2_mul(ah, bh), p), f64x2_mul(ah, bl)),
                f64x2_mul(al, bh),
            ),
            f64x2_mul(al, bl),
        );
        // TwoSum(c, p).
        let th = f64x2_add(cv, p);
        let bb = f64x2_sub(th, cv);
        let tl = f64x2_add(f64x2_sub(cv, f64x2_sub(th, bb)), f64x2_sub(p, bb));
        // tl + e rounded to odd.
        let s = f64x2_add(tl, e);
        let bb2 = f64x2_sub(s, tl);
        let err = f64x2_add(f64x2_sub(tl, f64x2_sub(s, bb2)), f64x2_sub(e, bb2));
        let even = i64x2_eq(v128_and(s, i64x2_splat(1)), i64x2_splat(0));
        let adjust = v128_and(f64x2_ne(err, zero), even);
        let away = v128_not(v128_xor(f64x2_gt(err, zero), f64x2_gt(s, zero)));
        let step = v128_bitselect(i64x2_splat(1), i64x2_splat(-1), away);
        let odd = i64x2_add(s, v128_and(step, adjust));
        let fused = f64x2_add(th, odd);
        // A zero lane's product is an exact ±0: the plain sum, as the scalar path.
        let r = v128_bitselect(f64x2_add(p, cv), fused, a_zero);
        Some([f64x2_extract_lane::<0>(r), f64x2_extract_lane::<1>(r)])
    }
}

/// The emulation of [`fused_mul_add_emulated`] on split factors.
#[inline]
fn fused_mul_add_split_emulated(a: &Split, b: &Split, c: f64) -> f64 {
    if (a.x == 0.0 || b.x == 0.0) && c.is_finite() {
        // The product is an exact ±0: one rounding of the sum, as the fused operation.
        return a.x * b.x + c;
    }
    let c_in_range = c == 0.0 || (c.abs() > SAFE_LO && c.abs() < SAFE_HI);
    if !(a.in_range() && b.in_range() && c_in_range) {
        return a.x.mul_add(b.x, c);
    }
    // Dekker's product: p + e = a·b exactly.
    let p = a.x * b.x;
    let e = ((a.hi * b.hi - p) + a.hi * b.lo + a.lo * b.hi) + a.lo * b.lo;
    let (th, tl) = two_sum(c, p);
    th + add_round_to_odd(tl, e)
}

/// `(s, e)` with `s = a + b` rounded and `s + e = a + b` exactly (Knuth's TwoSum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b` rounded to odd: exact sums stay; otherwise the neighbour of the exact value
/// whose last significand bit is 1.
fn add_round_to_odd(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    let bits = s.to_bits();
    if e == 0.0 || bits & 1 == 1 {
        return s;
    }
    // s ≠ 0 here (an exact zero sum has no error); step one unit towards the exact value.
    let away = (e > 0.0) == (s > 0.0);
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

/// Cross product.
pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Euclidean norm.
pub fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// The smaller of `acc` and `x`, for an accumulator `acc` that is never NaN (a NaN `x`
/// leaves `acc`, as `f64::min` does). Why not `f64::min`: wasm's `f64.min` instruction
/// propagates NaN, so Rust's `min` becomes a call to `fmin` there, a real cost in the
/// matcher's bounds, which take minima in their inner loops; a comparison is one select.
#[inline]
pub fn min_with(acc: f64, x: f64) -> f64 {
    if x < acc {
        x
    } else {
        acc
    }
}

/// The larger of `acc` and `x`, for an accumulator `acc` that is never NaN: see
/// [`min_with`].
#[inline]
pub fn max_with(acc: f64, x: f64) -> f64 {
    if x > acc {
        x
    } else {
        acc
    }
}

/// `x.floor()`, bit for bit (signed zeros, infinities and NaN included), without the
/// library call baseline x86-64 makes for it (no SSE4.1 `roundsd`): wrapping coordinates into
/// the cell was a visible share of the matcher's time. Truncating to an integer is exact
/// below 2⁵², and one step down corrects negative non-integers. In wasm `floor` is one
/// instruction, used as it is.
#[inline]
pub fn floor(x: f64) -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        x.floor()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // 2⁵² and beyond (already integers), infinities, NaN.
        if x.is_nan() || x.abs() >= 4_503_599_627_370_496.0 {
            return x.floor();
        }
        let t = x as i64 as f64;
        if t == x {
            x // integers, and −0.0 keeps its sign
        } else if x < 0.0 {
            t - 1.0
        } else {
            t
        }
    }
}

/// `x.round_ties_even()`, bit for bit, without the library call (`rint`) baseline x86-64
/// makes for it: the CIF reader's closeness test rounds every coordinate difference it
/// compares. Adding and subtracting 1.5·2⁵² rounds to the nearest integer, ties to even,
/// exactly for |x| < 2⁵¹; the sign is copied back for the zeros (−0.3 rounds to −0.0).
#[inline]
pub fn round_ties_even(x: f64) -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        x.round_ties_even()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
        if x.is_nan() || x.abs() >= 2_251_799_813_685_248.0 {
            return x.round_ties_even(); // 2⁵¹ and beyond (already integers or halves), NaN
        }
        ((x + MAGIC) - MAGIC).copysign(x)
    }
}

/// |x − nearest integer|, bit for bit what `(x - x.round()).abs()` gives (at a tie both
/// neighbours are 0.5 away, so rounding ties to even or away from zero gives the same), without
/// the library call: the periodic closeness tests of the matcher and the CIF reader compare
/// every coordinate difference this way (`round` was an eighth of the matcher's time on large
/// structures).
#[inline]
pub fn distance_to_integer(x: f64) -> f64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        // `round_ties_even` without its sign fix-up: below 2⁵¹ the magic sum rounds to the
        // nearest integer, and where it gives +0 for −0 (x in (−½, 0]) the difference is x
        // either way. NaN and larger magnitudes fail the comparison and take the general path.
        const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
        if x.abs() < 2_251_799_813_685_248.0 {
            return (x - ((x + MAGIC) - MAGIC)).abs();
        }
    }
    (x - round_ties_even(x)).abs()
}

/// An integer that orders as `f64::total_cmp` orders `x` (negative values' magnitude bits
/// flipped): sorting integer keys is several times faster than sorting floats compared
/// through `total_cmp`, and gives the same order.
pub fn total_order_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

#[cfg(test)]
mod tests {
    #[test]
    fn total_order_keys_order_as_total_cmp() {
        let mut rng = crate::test_rng::XorShift::new(7);
        let mut values = vec![
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            1.0,
            -1.0,
        ];
        values.extend((0..2000).map(|_| f64::from_bits(rng.next_u64())));
        for a in &values {
            for b in values.iter().step_by(7) {
                let want = a.total_cmp(b);
                let got = super::total_order_key(*a).cmp(&super::total_order_key(*b));
                assert_eq!(got, want, "{a:e} vs {b:e}");
            }
        }
    }

    /// The emulated fused multiply-add against the hardware one, on random operands of
    /// mixed scales and signs, on near-cancelling sums (c ≈ −a·b, where the low parts
    /// decide everything) and on exact halfway cases (ties to even).
    #[test]
    fn emulated_fma_is_bit_identical_to_the_instruction() {
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut unit = move || rng.unit();
        for i in 0..400_000 {
            let r: [f64; 6] = std::array::from_fn(|_| unit());
            let scaled = |u: f64, e: f64| (u * 2.0 - 1.0) * libm::exp2((e * 80.0).round() - 40.0);
            let (a, b, c) = match i % 4 {
                0 => (scaled(r[0], r[1]), scaled(r[2], r[3]), scaled(r[4], r[5])),
                // Cancelling: c is −a·b rounded, then perturbed in its last bits.
                1 | 2 => {
                    let (a, b) = (scaled(r[0], r[1]), scaled(r[2], r[3]));
                    let c = -(a * b);
                    (
                        a,
                        b,
                        if i % 4 == 1 {
                            c * (1.0 + (r[4] - 0.5) * 1e-15)
                        } else {
                            c
                        },
                    )
                }
                // Halfway: c in [1024, 2048) has ulp 2^-42; a·b is an odd number of
                // half ulps, so the exact sum lies on a rounding tie.
                _ => {
                    let c = 1024.0 * (1.0 + r[0]);
                    let odd =
                        (2.0 * (r[1] * 8.0).floor() + 1.0) * if i % 8 == 3 { 1.0 } else { -1.0 };
                    (libm::exp2(-43.0), odd, c)
                }
            };
            let want = a.mul_add(b, c);
            let got = super::fused_mul_add_emulated(a, b, c);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "fma({a:e}, {b:e}, {c:e}): {got:e} vs {want:e}"
            );
        }
        // Operands outside the emulation's range take the library path; none may panic.
        for (a, b, c) in [
            (0.0, 1.0, -0.0),
            (-0.0, 1.0, 0.0),
            (1e300, 1e10, -1e308),
            (1e-300, 1e-20, 1e-310),
            (f64::NAN, 1.0, 1.0),
            (f64::INFINITY, 0.0, 1.0),
        ] {
            let (want, got) = (a.mul_add(b, c), super::fused_mul_add_emulated(a, b, c));
            assert!(want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()));
        }
    }

    use super::*;

    #[test]
    fn floor_and_rounding_are_bit_for_bit_the_library_ones() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.0 - f64::EPSILON / 2.0,
            -(1.0 - f64::EPSILON / 2.0),
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_497.0,
            9.0e18,
            -9.3e18,
            1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            let s = rng.next_u64();
            // Random bit patterns (all magnitudes) and random values near small integers.
            cases.push(f64::from_bits(s));
            let near = (s % 2001) as f64 - 1000.0 + ((s >> 20) % 3) as f64 * 1e-17;
            cases.push(near);
            cases.push((s >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0);
        }
        for &x in &cases {
            assert_eq!(floor(x).to_bits(), x.floor().to_bits(), "floor({x:e})");
        }
        // Halves (the ties) and values next to them, for the rounding too.
        for k in -2000..2000 {
            let h = k as f64 + 0.5;
            cases.extend([h, h.next_up(), h.next_down()]);
        }
        cases.extend([
            2_251_799_813_685_247.5,
            -2_251_799_813_685_247.5,
            2_251_799_813_685_248.0,
        ]);
        for x in cases {
            assert_eq!(
                round_ties_even(x).to_bits(),
                x.round_ties_even().to_bits(),
                "round_ties_even({x:e})"
            );
            assert_eq!(
                distance_to_integer(x).to_bits(),
                (x - x.round_ties_even()).abs().to_bits(),
                "distance_to_integer({x:e})"
            );
        }
    }
}
