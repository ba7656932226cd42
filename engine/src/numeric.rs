//! Portable numerics: the same bits natively and in wasm32.
//!
//! `f64::cos` and friends call the platform's libm (glibc natively, a Rust port in wasm),
//! which may differ in the last bit. Verdicts must not depend on where they are computed, so
//! the engine takes every transcendental function from the `libm` crate. Basic arithmetic and
//! `sqrt` are correctly rounded by IEEE 754 everywhere and need no wrapper.

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
    (x - round_ties_even(x)).abs()
}

#[cfg(test)]
mod tests {
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
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
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
        }
    }
}
