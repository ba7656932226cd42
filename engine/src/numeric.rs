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
