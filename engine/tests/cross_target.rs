//! Tests that run both natively and in wasm32 (wasm-bindgen-test under node) and must give
//! bit-identical results: each digest below was recorded once and both builds must hit it.
//! A digest recorded from our own output shows that native and wasm agree and that nothing
//! changed, not that either is right: agreement with pymatgen is the differential tests' job.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use engine::cif::read_cif;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const POOL: &str = include_str!("../../data/structures/minerals.jsonl");

/// FNV-1a over the bit patterns of every number, so any last-bit difference shows.
fn digest(values: impl Iterator<Item = f64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for b in v.to_bits().to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[test]
fn mineral_pool_parses_bit_identically() {
    let mut numbers = Vec::new();
    let mut n = 0;
    for line in POOL.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let cif = v["cif"].as_str().unwrap();
        let s = read_cif(cif).unwrap_or_else(|e| panic!("{}: {e}", v["mineral"]));
        assert_eq!(s.len() as u64, v["n_sites"].as_u64().unwrap());
        numbers.extend(s.lattice.matrix().iter().flatten().copied());
        numbers.push(s.lattice.volume());
        for p in s.cartesian_positions() {
            numbers.extend(p);
        }
        n += 1;
    }
    assert_eq!(n, 180);
    assert_eq!(digest(numbers.into_iter()), EXPECTED_POOL_DIGEST);
}

const EXPECTED_POOL_DIGEST: u64 = 10310796485800281496;

/// Primitive reduction and the CIF-Gen matcher (primitive cells and supercells): the reduced
/// cells of pool supercells and the RMS of each mineral against a perturbed supercell.
/// (Recorded again 2026-11-25: the `orbits` shortcut keeps another of equal candidates; 30 of
/// the 903 numbers moved, by at most 3e-14 relative. And again later that day, when the
/// matcher took numpy's arithmetic (fused dot products, LAPACK's inverse): 43 moved, by at
/// most 3.7e-14 relative; then when the RMS took numpy's dot product: one moved, by 1.6e-16.)
#[test]
fn primitive_cells_and_supercell_matching_are_bit_identical() {
    use engine::matcher::{get_rms_dist, MatcherOptions};
    use engine::primitive::matcher_reduction;

    let mut numbers = Vec::new();
    let opts = MatcherOptions::cif_gen();
    for line in POOL.lines().take(60) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = read_cif(v["cif"].as_str().unwrap()).unwrap();
        if s.len() > 8 {
            continue;
        }
        let mut sup = s.supercell([2, 1, 1]);
        let p = matcher_reduction(&sup).unwrap();
        numbers.extend(p.lattice.matrix().iter().flatten().copied());
        numbers.extend(p.sites.iter().flat_map(|x| x.frac));
        sup.sites[0].frac[1] += 0.03;
        match get_rms_dist(&s, &sup, &opts).unwrap() {
            Some(r) => numbers.extend([r.rms, r.max_dist]),
            None => numbers.push(-1.0),
        }
    }
    assert!(numbers.len() > 100);
    assert_eq!(digest(numbers.into_iter()), EXPECTED_PRIMITIVE_DIGEST);
}

const EXPECTED_PRIMITIVE_DIGEST: u64 = 3233926650177137909;

/// POSCAR, extended XYZ and pymatgen JSON written and read back, neighbour distances and
/// space groups of every pool structure.
#[test]
fn formats_neighbours_and_symmetry_are_bit_identical() {
    use engine::format::{read_structure, write_structure, Format};
    use engine::symmetry::{space_group, DEFAULT_SYMPREC};

    let mut numbers = Vec::new();
    for line in POOL.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = read_cif(v["cif"].as_str().unwrap()).unwrap();
        for f in [Format::Poscar, Format::Xyz, Format::PymatgenJson] {
            let text = write_structure(f, &s);
            numbers.push(digest(text.bytes().map(f64::from)) as f64);
            let back = read_structure(f, &text).unwrap();
            numbers.extend(back.sites.iter().flat_map(|x| x.frac));
        }
        numbers.extend(s.neighbours(0, 4.0).iter().map(|n| n.distance));
        numbers.push(space_group(&s, DEFAULT_SYMPREC).map_or(-1.0, |g| g.number as f64));
    }
    assert_eq!(digest(numbers.into_iter()), EXPECTED_FORMATS_DIGEST);
}

const EXPECTED_FORMATS_DIGEST: u64 = 10415836903737713440;

/// Numpy-order matrix products two vectors at a time (side by side in wasm SIMD) give the
/// bits of one at a time, and a digest fixes those bits on both targets: random matrices
/// and vectors of mixed scales and signs, with exact zeros, power-of-two (exact) matrices
/// and entries outside the emulated range.
#[test]
fn fused_matrix_products_are_bit_identical() {
    use engine::linalg::FusedMatrix;

    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut unit = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut numbers = Vec::new();
    for n in 0..3000 {
        let mut entry = |k: usize| match (n + k) % 11 {
            0 => 0.0,
            1 => -0.0,
            2 if n % 97 == 0 => 1e-200,
            _ => (unit() * 2.0 - 1.0) * libm::exp2((unit() * 12.0).round() - 6.0),
        };
        let m: [[f64; 3]; 3] = if n % 13 == 0 {
            [[1.0, 0.0, -2.0], [0.0, 1.0, 0.0], [4.0, 0.0, 1.0]]
        } else {
            std::array::from_fn(|i| std::array::from_fn(|j| entry(3 * i + j)))
        };
        let fm = FusedMatrix::new(m);
        let vs: Vec<[f64; 3]> = (0..5)
            .map(|i| std::array::from_fn(|k| entry(7 + 3 * i + k)))
            .collect();
        let all = fm.apply_all(&vs);
        for (v, got) in vs.iter().zip(&all) {
            let one = fm.apply(*v);
            assert_eq!(
                one.map(f64::to_bits),
                got.map(f64::to_bits),
                "{m:?} · {v:?}"
            );
            numbers.extend(one);
        }
    }
    assert_eq!(digest(numbers.into_iter()), EXPECTED_FUSED_DIGEST);

    // Triples (a, b, c, fma(a, b, c)) on which adding the low parts with plain rounding
    // instead of rounding to odd gives a wrong last bit (found by a search against the
    // x86-64 instruction; random operands essentially never meet one): both the scalar and
    // the two-lane emulation must get them right.
    const DOUBLE_ROUNDING: [[u64; 4]; 4] = [
        [
            0x3ffe7fbfa07e729e,
            0x3ff43ad1f9b92725,
            0xc1d00000009a3f3c,
            0xc1d0000000000001,
        ],
        [
            0x3ff03b649daafea8,
            0x400a4a19de6a171e,
            0xc1d0000000d55d84,
            0xc1d0000000000001,
        ],
        [
            0x3ff977cbdd421ee0,
            0x3ff6c4a31056b382,
            0xc1d000000090f6de,
            0xc1d0000000000001,
        ],
        [
            0x3ff00123b2b7a71f,
            0x3ff970af925d2634,
            0xc1d000000065c9fe,
            0xc1d0000000000001,
        ],
    ];
    for [a, b, c, want] in DOUBLE_ROUNDING.map(|t| t.map(f64::from_bits)) {
        assert_eq!(
            engine::numeric::fused_mul_add_emulated(a, b, c).to_bits(),
            want.to_bits()
        );
        assert_eq!(
            engine::numeric::fused_mul_add(a, b, c).to_bits(),
            want.to_bits()
        );
        // Column 0 of v · m is fma(0.5, 0, fma(a, b, c · 1)) = fma(a, b, c).
        let fm = FusedMatrix::new([[1.0, 0.3, 0.0], [b, 0.7, 0.0], [0.0, 0.1, 1.0]]);
        let v = [c, a, 0.5];
        let (x, y) = fm.apply_pair(v, v);
        for got in [fm.apply(v), x, y] {
            assert_eq!(got[0].to_bits(), want.to_bits(), "fma({a:e}, {b:e}, {c:e})");
        }
    }
}

const EXPECTED_FUSED_DIGEST: u64 = 10312600129317263277;
