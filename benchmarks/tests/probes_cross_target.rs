//! The probes' generators and scores are bit-identical natively and in wasm32.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use benchmarks::probes::cif_gen::{self, GenTaskSpec, EXAMPLES};
use benchmarks::probes::cif_repair::{self, RepairTaskSpec};
use benchmarks::probes::points::{self, points_json, PointTaskSpec};
use benchmarks::probes::struct_prop::{self, PropTaskSpec};

/// FNV-1a over bytes, so any difference in any prompt or number shows.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn push_json<T: serde::Serialize>(bytes: &mut Vec<u8>, value: &T) {
    bytes.extend(serde_json::to_vec(value).unwrap());
}

#[test]
fn probe_generators_are_bit_identical_on_every_target() {
    let mut bytes = Vec::new();

    let point_tasks = points::generate(&PointTaskSpec::per_action(2026, 5));
    assert_eq!(point_tasks.len(), 20);
    for t in &point_tasks {
        push_json(&mut bytes, t);
        // The exact bits of every target coordinate (trigonometry included).
        for p in &t.target {
            for x in p {
                bytes.extend(x.to_bits().to_le_bytes());
            }
        }
        // A slightly-off answer: the matched distances, bit for bit.
        let off: Vec<[f64; 3]> = t.target.iter().map(|p| p.map(|x| x + 0.01)).collect();
        let v = points::evaluate(
            &t.target,
            &format!("<answer>{}</answer>", points_json(&off)),
        );
        for x in [v.mean_distance, v.max_distance].into_iter().flatten() {
            bytes.extend(x.to_bits().to_le_bytes());
        }
    }

    let repair = cif_repair::generate(&RepairTaskSpec::new(2026, 10));
    assert_eq!(repair.len(), 10);
    push_json(&mut bytes, &repair);

    let gen = cif_gen::generate(&GenTaskSpec {
        seed: 2026,
        count: 10,
    });
    assert_eq!(gen.len(), 10);
    push_json(&mut bytes, &gen);
    for (i, e) in EXAMPLES.iter().enumerate() {
        let t = cif_gen::generator::task_for(e, format!("{i}")).unwrap();
        bytes.extend(t.reference_cif.bytes());
    }

    let prop = struct_prop::generate(&PropTaskSpec::new(2026, 5));
    assert_eq!(prop.len(), 5);
    push_json(&mut bytes, &prop);

    assert_eq!(fnv(&bytes), EXPECTED_PROBES_DIGEST, "{}", fnv(&bytes));
}

/// Recorded natively; `cargo test -p benchmarks --target wasm32-unknown-unknown` confirms it. It
/// catches change and native/wasm differences, not error (the probes' own tests check values).
const EXPECTED_PROBES_DIGEST: u64 = 5031726969187748191;
