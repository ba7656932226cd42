//! Differential test of the evaluator against an independent Python pipeline (pymatgen).
//!
//! `benchmarks/tests/pyref/driver.py eval` makes deterministic answers for every task of a
//! generated task set (the target itself, the input unchanged, text without tags, a broken
//! CIF, an extra atom, two atoms on one spot, a globally shifted target, a slightly perturbed
//! target) and scores each with `benchmarks/tests/pyref/atomworld_ref.py` (`CifParser`, per-site
//! composition, `StructureMatcher(primitive_cell=False, stol=0.5).get_rms_dist`).
//! `scripts/pyref.sh` builds that file (cached under `~/.cache/atomworld/oracle/`) and prints
//! `ATOMWORLD_EVAL_REF=<path>`. Without the variable it fails under CI and otherwise prints a
//! notice and passes.
//!
//! Requirements: at least 2,000 answers; every label agrees where the two sides compute
//! alike to the last bits (no allowed exception), and at most one in 500 where they do not
//! (another OpenBLAS kernel, or shared successes that differ by more than 1e-12: then a
//! verdict decided by a tie, such as two equally cheap assignments with different largest
//! distances, can fall the other way); wherever both sides report a success, `rms` and
//! `max_dist` agree within 1e-6. Every disagreement is printed with both sides' reasons.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, HashMap};

use benchmarks::atomworld::evaluate::{evaluate, parse_target, Comparison};
use engine::cif::PymatgenCif;
use serde_json::Value;

/// Largest allowed difference of rms and max_dist where both succeed.
const TOL: f64 = 1e-6;

#[test]
fn evaluator_agrees_with_the_python_pipeline() {
    let Ok(path) = std::env::var("ATOMWORLD_EVAL_REF") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true")
                && std::env::var_os("ATOMWORLD_REQUIRE_SHARED").is_none(),
            "ATOMWORLD_EVAL_REF is not set: under CI the oracle must be built (scripts/test.sh does it)"
        );
        eprintln!(
            "ATOMWORLD_EVAL_REF is not set: skipping the Python (pymatgen) reference comparison \
             of the evaluator (run scripts/pyref.sh to build it)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut targets: HashMap<String, PymatgenCif> = HashMap::new();
    let (mut total, mut agree, mut both_success) = (0usize, 0usize, 0usize);
    let (mut max_d_rms, mut max_d_max) = (0.0f64, 0.0f64);
    let mut label_disagreements = Vec::new();
    let mut metric_disagreements = Vec::new();
    // (kind, python label) -> (answers, agreeing)
    let mut table: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let started = std::time::Instant::now();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("JSON line");
        if case.get("meta").is_some() {
            eprintln!("reference: {}", case["meta"]);
            continue;
        }
        let id = case["id"].as_str().unwrap_or("?");
        let kind = case["kind"].as_str().unwrap_or("?");
        let variant = case["variant"].as_str().unwrap_or("?");
        let target_cif = case["target_cif"].as_str().expect("target_cif");
        let target = targets
            .entry(target_cif.to_string())
            .or_insert_with(|| parse_target(target_cif).expect("the target parses"));
        let response = case["response"].as_str().expect("response");
        let v = evaluate(target, response, Comparison::Matcher);
        let want = case["label"].as_str().expect("label");
        total += 1;
        let same = v.label.name() == want;
        let row = table
            .entry((kind.to_string(), want.to_string()))
            .or_default();
        row.0 += 1;
        if same {
            agree += 1;
            row.1 += 1;
        } else {
            label_disagreements.push(format!(
                "{id} [{kind}/{variant}]: ours {} ({}), pymatgen {want} ({})",
                v.label.name(),
                v.detail,
                case["detail"].as_str().unwrap_or("")
            ));
        }
        if same && want == "Success" {
            both_success += 1;
            let (rms, max) = (
                case["rms"].as_f64().expect("rms"),
                case["max_dist"].as_f64().expect("max_dist"),
            );
            let (our_rms, our_max) = (v.rms.unwrap_or(f64::NAN), v.max_dist.unwrap_or(f64::NAN));
            let (d_rms, d_max) = ((our_rms - rms).abs(), (our_max - max).abs());
            max_d_rms = max_d_rms.max(d_rms);
            max_d_max = max_d_max.max(d_max);
            if !(d_rms <= TOL && d_max <= TOL) {
                metric_disagreements.push(format!(
                    "{id} [{kind}/{variant}]: rms {our_rms} vs {rms}, max_dist {our_max} vs {max}"
                ));
            }
        }
    }
    let share = agree as f64 / total.max(1) as f64;
    eprintln!(
        "{:<12} {:<18} {:>7} {:>7}",
        "answer", "pymatgen label", "n", "agree"
    );
    for ((kind, label), (n, a)) in &table {
        eprintln!("{kind:<12} {label:<18} {n:>7} {a:>7}");
    }
    eprintln!(
        "{total} answers in {:.1} s: labels agree on {agree} ({:.3} %); {both_success} \
         successes on both sides, max |Δrms| {max_d_rms:.3e}, max |Δmax_dist| {max_d_max:.3e}",
        started.elapsed().as_secs_f64(),
        100.0 * share
    );
    for d in label_disagreements.iter().chain(&metric_disagreements) {
        eprintln!("  {d}");
    }
    assert!(total >= 2000, "only {total} answers: need at least 2,000");
    // Our matcher reproduces numpy's arithmetic on its native AVX-512 (SkylakeX) kernels;
    // where this machine makes numpy run others (OPENBLAS_CORETYPE, which tests must not
    // change), or where the shared successes show that the two sides' arithmetic is not the
    // same to the last bits (their rms or max_dist differ by more than BIT_EXACT: on answers
    // printed to 8 decimals, the copies the matcher skips as symmetric, `periodicity` and
    // `fold_symmetric_mappings`, are equal only to ~1e-8, and pymatgen's minimum can lie in
    // one of them), a verdict a last bit decides may flip (equally cheap assignments, a
    // distance at stol): at most one in 500, each listed above.
    const BIT_EXACT: f64 = 1e-12;
    let foreign = std::env::var("OPENBLAS_CORETYPE")
        .ok()
        .filter(|k| !k.is_empty() && !k.eq_ignore_ascii_case("skylakex"))
        .map(|k| format!("OpenBLAS's {k} kernels (OPENBLAS_CORETYPE), not the SkylakeX ones"))
        .or_else(|| {
            (max_d_rms > BIT_EXACT || max_d_max > BIT_EXACT).then(|| {
                format!(
                    "arithmetic that differs from ours beyond the last bits (successes differ \
                     by up to {:.1e}, more than {BIT_EXACT:.0e})",
                    max_d_rms.max(max_d_max)
                )
            })
        });
    if let Some(why) = &foreign {
        let differ = label_disagreements.len() + metric_disagreements.len();
        eprintln!(
            "numpy ran {why}: {differ} of {total} answers differ (at most one in 500 allowed)"
        );
        assert!(
            differ * 500 <= total,
            "{differ} of {total} answers differ with {why}"
        );
        return;
    }
    assert!(
        label_disagreements.is_empty(),
        "{} of {total} labels differ from the Python pipeline's (listed above)",
        label_disagreements.len()
    );
    assert!(
        metric_disagreements.is_empty(),
        "{} successes differ in rms or max_dist by more than {TOL}",
        metric_disagreements.len()
    );
}
