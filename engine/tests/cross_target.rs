//! Tests that run both natively and in wasm32 (wasm-bindgen-test under node) and must give
//! bit-identical results: each digest below was recorded once and both builds must hit it.

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
