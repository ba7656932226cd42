//! Bench tests that run natively and in wasm32 alike.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bench::atomworld::prompt::model_prompt;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn model_prompt_is_the_same_on_every_target() {
    let p = model_prompt(
        "data_NaCl\n",
        "Remove the atom at index 3 from the cif file.",
    );
    // Length computed independently from spec §3 with Python's " ".join(parts).
    assert_eq!(p.len(), 550);
    assert!(p.ends_with("Action prompt: Remove the atom at index 3 from the cif file. "));
}

/// FNV-1a over bytes, so any difference in any prompt or number shows.
fn fnv(bytes: impl Iterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[test]
fn generator_is_bit_identical_on_every_target() {
    use bench::atomworld::generator::{generate, TaskSetSpec};
    use bench::atomworld::{apply, Semantics};
    let (tasks, _) = generate(&TaskSetSpec::per_action(2026, 3), &|_, _, _| false);
    assert_eq!(tasks.len(), 30);
    let mut bytes = Vec::new();
    for t in &tasks {
        bytes.extend(t.prompt.bytes());
        bytes.extend(t.target_cif.bytes());
        let target = apply(&t.input, &t.action, Semantics::Reference).unwrap();
        for site in &target.structure.sites {
            for x in site.frac {
                bytes.extend(x.to_bits().to_le_bytes());
            }
        }
    }
    assert_eq!(fnv(bytes.into_iter()), EXPECTED_GENERATOR_DIGEST);
}

const EXPECTED_GENERATOR_DIGEST: u64 = 9255714441203997630;
