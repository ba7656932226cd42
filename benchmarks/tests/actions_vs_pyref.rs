//! Differential test of the actions against an independent Python reference (ASE).
//!
//! `benchmarks/tests/pyref/driver.py actions` applies every task of a generated task set with
//! `benchmarks/tests/pyref/atomworld_ref.py` (ASE, the spec's reference semantics) and stores the
//! resulting cell, elements and Cartesian positions. `scripts/pyref.sh` builds that file (cached
//! under `~/.cache/atomworld/oracle/`) and prints `ATOMWORLD_ACTIONS_REF=<path>`. Without the
//! variable this test prints a notice and passes.
//!
//! Requirements: at least 2,000 tasks, at least 200 of each of the ten benchmark actions, and
//! for every task our `apply(.., Semantics::Reference)` gives the same cell (1e-9 Å), the same
//! number of sites, the same element per site, and every position within 1e-6 Å of the
//! reference's up to a lattice translation.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use benchmarks::atomworld::{apply, Action, ActionKind, Semantics};
use engine::cif::read_cif;
use serde_json::Value;

/// Largest allowed positional deviation (Å).
const TOL: f64 = 1e-6;
/// Largest allowed deviation of a cell-matrix entry (Å).
const CELL_TOL: f64 = 1e-9;

fn triples(v: &Value) -> Vec<[f64; 3]> {
    v.as_array()
        .expect("array of triples")
        .iter()
        .map(|t| {
            let a = t.as_array().expect("triple");
            [0, 1, 2].map(|k| a[k].as_f64().expect("number"))
        })
        .collect()
}

#[derive(Default)]
struct PerAction {
    tasks: usize,
    max_dev: f64,
    ase_wrap_matters: usize,
}

/// Compare one task; `Err` says what differs. On success, the largest deviation (Å).
fn compare(case: &Value) -> Result<f64, String> {
    let input = read_cif(case["input_cif"].as_str().ok_or("no input_cif")?)
        .map_err(|e| format!("input_cif: {e}"))?;
    let action: Action = serde_json::from_value(case["parameters"].clone())
        .map_err(|e| format!("parameters: {e}"))?;
    let ours = apply(&input, &action, Semantics::Reference)
        .map_err(|e| format!("apply: {e}"))?
        .structure;
    let cell = triples(&case["cell"]);
    let m = ours.lattice.matrix();
    for (i, row) in cell.iter().enumerate() {
        for k in 0..3 {
            if (row[k] - m[i][k]).abs() > CELL_TOL {
                return Err(format!("cell differs: ours {m:?}, reference {cell:?}"));
            }
        }
    }
    let elements: Vec<&str> = case["elements"]
        .as_array()
        .ok_or("no elements")?
        .iter()
        .map(|e| e.as_str().unwrap_or("?"))
        .collect();
    let positions = triples(&case["positions"]);
    if ours.len() != elements.len() || ours.len() != positions.len() {
        return Err(format!(
            "{} sites, the reference has {}",
            ours.len(),
            elements.len()
        ));
    }
    let mut max_dev = 0.0f64;
    for (i, (site, (el, p))) in ours
        .sites
        .iter()
        .zip(elements.iter().zip(&positions))
        .enumerate()
    {
        if site.element.symbol() != *el {
            return Err(format!(
                "site {i}: element {} vs reference {el}",
                site.element.symbol()
            ));
        }
        let q = ours.cartesian(i);
        let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
        // Remove the lattice translation: round the fractional difference.
        let f = ours.lattice.to_fractional(d).map(|x| x - x.round());
        let r = ours.lattice.to_cartesian(f);
        let dev = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
        if dev > TOL {
            return Err(format!(
                "site {i} ({el}): ours {q:?}, reference {p:?}: {dev:.3e} Å apart"
            ));
        }
        max_dev = max_dev.max(dev);
    }
    Ok(max_dev)
}

#[test]
fn actions_agree_with_the_python_reference() {
    let Ok(path) = std::env::var("ATOMWORLD_ACTIONS_REF") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true")
                && std::env::var_os("ATOMWORLD_REQUIRE_SHARED").is_none(),
            "ATOMWORLD_ACTIONS_REF is not set: under CI the oracle must be built (scripts/test.sh does it)"
        );
        eprintln!(
            "ATOMWORLD_ACTIONS_REF is not set: skipping the Python (ASE) reference comparison \
             of the actions (run scripts/pyref.sh to build it)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut per_action: BTreeMap<String, PerAction> = BTreeMap::new();
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("JSON line");
        if case.get("meta").is_some() {
            eprintln!("reference: {}", case["meta"]);
            continue;
        }
        let id = case["id"].as_str().unwrap_or("?").to_string();
        let action = case["action"].as_str().unwrap_or("?").to_string();
        let entry = per_action.entry(action).or_default();
        entry.tasks += 1;
        if case["ase_wrap_matters"].as_bool() == Some(true) {
            entry.ase_wrap_matters += 1;
        }
        match compare(&case) {
            Ok(dev) => entry.max_dev = entry.max_dev.max(dev),
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    let total: usize = per_action.values().map(|p| p.tasks).sum();
    eprintln!(
        "{:<16} {:>6} {:>12} {:>16}",
        "action", "tasks", "max dev (Å)", "ASE wrap matters"
    );
    for (name, p) in &per_action {
        eprintln!(
            "{name:<16} {:>6} {:>12.3e} {:>16}",
            p.tasks, p.max_dev, p.ase_wrap_matters
        );
    }
    eprintln!("{total} tasks, {} disagreements", failures.len());
    for f in &failures {
        eprintln!("  {f}");
    }
    assert!(failures.is_empty(), "{} tasks disagree", failures.len());
    assert!(total >= 2000, "only {total} tasks: need at least 2,000");
    for kind in ActionKind::BENCHMARK {
        let n = per_action.get(kind.name()).map_or(0, |p| p.tasks);
        assert!(
            n >= 200,
            "only {n} {} tasks: need at least 200",
            kind.name()
        );
    }
}

/// The reference's own code (AtomWorldBench's action classes, run by
/// `benchmarks/tests/upstream/record_actions.py`) on the four actions it has no recorded tasks
/// for: move_all, delete_around, move_selected and move_around, 30 tasks each (and three
/// move_selected tasks listing a site twice) on minerals of
/// our pool read as the reference reads them (`ase.io.read`, coordinates wrapped). Ours reads
/// the CIF's coordinates as written; the two agree up to lattice translations. Each task's
/// prompt, as the reference prints it, is read back by our parser into the same action.
#[test]
fn four_actions_agree_with_the_reference_code() {
    const RECORDED: &str = include_str!("upstream/actions.jsonl");
    const POOL: &str = include_str!("../../data/structures/minerals.jsonl");
    let pool: Vec<Value> = POOL
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut per_action: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for line in RECORDED.lines().filter(|l| !l.trim().is_empty()) {
        let mut case: Value = serde_json::from_str(line).unwrap();
        if case.get("meta").is_some() {
            eprintln!("reference code: {}", case["meta"]);
            continue;
        }
        let id = case["id"].as_str().unwrap().to_string();
        let mineral = &pool[case["pool_line"].as_u64().unwrap() as usize];
        assert_eq!(
            mineral["mineral"], case["mineral"],
            "{id}: the pool changed"
        );
        let cif = mineral["cif"].as_str().unwrap();
        case["input_cif"] = Value::from(cif);
        *per_action
            .entry(case["action"].as_str().unwrap().to_string())
            .or_default() += 1;
        if let Err(e) = compare(&case) {
            failures.push(format!("{id}: {e}"));
        }
        let input = read_cif(cif).unwrap();
        let expected: Action = serde_json::from_value(case["parameters"].clone()).unwrap();
        let prompt = case["upstream_prompt"].as_str().unwrap();
        match benchmarks::atomworld::parse_prompt(prompt, &input) {
            Ok(a) if a == expected => {}
            Ok(a) => failures.push(format!("{id}: {prompt:?} read as {a:?}, not {expected:?}")),
            Err(e) => failures.push(format!("{id}: {prompt:?} not read: {e}")),
        }
    }
    eprintln!(
        "reference code: {per_action:?}, {} disagreements",
        failures.len()
    );
    for f in &failures {
        eprintln!("  {f}");
    }
    assert!(failures.is_empty(), "{} tasks disagree", failures.len());
    // 30 drawn tasks each, and three move_selected tasks that list a site twice.
    for (kind, n) in [
        ("move_all", 30),
        ("delete_around", 30),
        ("move_selected", 33),
        ("move_around", 30),
    ] {
        assert_eq!(per_action.get(kind), Some(&n), "{kind}: {per_action:?}");
    }
}
