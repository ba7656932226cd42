//! Which OpenBLAS kernels numpy ran when the oracles were made.

/// The OpenBLAS kernels numpy was made to run (`OPENBLAS_CORETYPE`, which some machines of
/// this workplace set and tests must not change) when they are not the native AVX-512
/// (SkylakeX) ones whose arithmetic `engine::linalg` and `numeric::dot_numpy` reproduce. The
/// oracle files are named by it (`scripts/pymatgen-oracles.sh`). Under another kernel numpy's
/// own last bits differ, so the bit-for-bit tests check the bounds of floating-point
/// arithmetic instead, and say so.
pub fn foreign() -> Option<String> {
    std::env::var("OPENBLAS_CORETYPE")
        .ok()
        .filter(|k| !k.is_empty() && !k.eq_ignore_ascii_case("skylakex"))
}
