//! Bench tests that run natively and in wasm32 alike.
//!
//! The digests below were recorded once from our own output: both builds hitting the same
//! digest proves native and wasm agree to the bit, and a changed digest shows a change; they
//! do not show that either is right. Correctness against pymatgen is the differential tests'
//! job (`evaluator_vs_pyref`, `engine/tests/*_vs_pymatgen.rs`).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use benchmarks::atomworld::prompt::model_prompt;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn model_prompt_is_the_same_on_every_target() {
    let p = model_prompt(
        "data_NaCl\n",
        "Remove the atom at index 3 from the cif file.",
    );
    // Length computed independently from the reference's prompt with Python's " ".join(parts).
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
    use benchmarks::atomworld::generator::{generate, TaskSetSpec};
    use benchmarks::atomworld::{apply, Semantics};
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

const EXPECTED_GENERATOR_DIGEST: u64 = 4961426938256747337;

/// The evaluator on real verdicts: for generated tasks of every action, the target itself,
/// the input unchanged, the target with one site moved by 0.3 Å and by 1.5 Å, and a broken
/// CIF, each scored with the second verdict. Labels and every number (rms, max_dist in both
/// units, the same-crystal match) must come out bit for bit the same natively and in wasm.
#[test]
fn evaluator_verdicts_are_bit_identical_on_every_target() {
    use benchmarks::atomworld::evaluate::{evaluate_with_same_crystal, parse_target, Comparison};
    use benchmarks::atomworld::generator::{generate, TaskSetSpec};
    use engine::cif::{read_cif, write_cif};
    use engine::interrupt::Interrupt;

    let (tasks, _) = generate(&TaskSetSpec::per_action(2027, 3), &|_, _, _| false);
    assert_eq!(tasks.len(), 30);
    let moved = |cif: &str, by: f64| {
        let mut s = read_cif(cif).unwrap();
        let p = s.cartesian(0);
        s.sites[0].frac = s.lattice.to_fractional([p[0] + by, p[1], p[2]]);
        write_cif(&s)
    };
    let mut bytes = Vec::new();
    let mut labels = std::collections::BTreeMap::new();
    for t in &tasks {
        let target = parse_target(&t.target_cif).unwrap();
        let answers = [
            t.target_cif.clone(),
            t.input_cif.clone(),
            moved(&t.target_cif, 0.3),
            moved(&t.target_cif, 1.5),
            t.target_cif
                .replacen("_cell_length_b", "_cell_length_b x", 1),
        ];
        for a in answers {
            let v = evaluate_with_same_crystal(
                &target,
                &format!("<cif>\n{a}\n</cif>"),
                Comparison::Matcher,
                &Interrupt::default(),
            );
            *labels.entry(v.label.name()).or_insert(0) += 1;
            bytes.extend(v.label.name().bytes());
            let numbers = [v.rms, v.max_dist, v.max_dist_angstrom];
            let same = v.same_crystal.map_or([None, None], |s| [s.rms, s.max_dist]);
            for x in numbers.into_iter().chain(same) {
                bytes.extend(x.map_or(u64::MAX, f64::to_bits).to_le_bytes());
            }
            bytes.push(v.same_crystal.map_or(2, |s| u8::from(s.fit)));
        }
    }
    // Every kind of verdict is among them.
    for label in [
        "Success",
        "AtomCountMismatch",
        "StructureMismatch",
        "CifParsingError",
    ] {
        assert!(labels.contains_key(label), "{labels:?}");
    }
    let digest = fnv(bytes.into_iter());
    assert_eq!(digest, EXPECTED_EVALUATOR_DIGEST, "{digest} {labels:?}");
}

/// Recorded natively; `cargo test -p benchmarks --target wasm32-unknown-unknown` confirms it.
const EXPECTED_EVALUATOR_DIGEST: u64 = 13309355652821745941;
