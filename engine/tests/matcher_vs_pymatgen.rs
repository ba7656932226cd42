//! Differential test of the structure matcher against pymatgen.
//!
//! The cases come from `engine/tests/pymatgen/matcher_cases.py` (run it with the pymatgen
//! venv); point `ATOMWORLD_MATCHER_CASES` at its JSON output. Without the variable the test
//! prints a notice and passes.
//!
//! Requirements: `fit` agrees on at least 99.9 % of the pairs, and wherever both sides report
//! a match, `rms` and `max_dist` agree within 1e-6.

#![cfg(not(target_arch = "wasm32"))]

use engine::matcher::{fit, get_rms_dist, MatcherOptions};
use engine::{Element, Lattice, Site, Structure};
use serde_json::Value;

fn float(bits: &Value) -> f64 {
    f64::from_bits(bits.as_u64().expect("bit pattern"))
}

fn triple(v: &Value) -> [f64; 3] {
    let a = v.as_array().expect("triple");
    [float(&a[0]), float(&a[1]), float(&a[2])]
}

fn structure(v: &Value) -> Structure {
    let m = v["matrix_bits"].as_array().expect("matrix");
    let lattice = Lattice::from_matrix([triple(&m[0]), triple(&m[1]), triple(&m[2])]);
    let species = v["species"].as_array().expect("species");
    let frac = v["frac_bits"].as_array().expect("frac");
    let sites = species
        .iter()
        .zip(frac)
        .map(|(sp, f)| {
            let sym = sp.as_str().expect("symbol");
            Site {
                element: Element::from_symbol(sym).expect("known element"),
                frac: triple(f),
                label: sym.to_string(),
                occupancy: 1.0,
            }
        })
        .collect();
    Structure::new(lattice, sites)
}

#[test]
fn matcher_agrees_with_pymatgen() {
    let Ok(path) = std::env::var("ATOMWORLD_MATCHER_CASES") else {
        eprintln!(
            "ATOMWORLD_MATCHER_CASES is not set: skipping the pymatgen differential test \
             (generate cases with engine/tests/pymatgen/matcher_cases.py)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let cases = doc["cases"].as_array().expect("cases");
    let opts = MatcherOptions::atomworld();

    let (mut fit_agree, mut rms_presence_agree) = (0usize, 0usize);
    let (mut max_d_rms, mut max_d_max) = (0.0f64, 0.0f64);
    let mut compared = 0usize;
    let mut failures = Vec::new();
    let started = std::time::Instant::now();
    for (k, case) in cases.iter().enumerate() {
        let s1 = structure(&case["s1"]);
        let s2 = structure(&case["s2"]);
        let label = format!(
            "case {k} ({}, {})",
            case["kind"].as_str().unwrap_or("?"),
            case["mineral"].as_str().unwrap_or("?")
        );
        let want_fit = case["fit"].as_bool().expect("fit");
        let got_fit = match fit(&s1, &s2, &opts) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{label}: fit error {e}"));
                continue;
            }
        };
        if got_fit == want_fit {
            fit_agree += 1;
        } else {
            failures.push(format!("{label}: fit {got_fit} vs pymatgen {want_fit}"));
        }
        let got = match get_rms_dist(&s1, &s2, &opts) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{label}: rms error {e}"));
                continue;
            }
        };
        let want = case["rms"].as_f64().zip(case["max_dist"].as_f64());
        match (&got, want) {
            (Some(g), Some((rms, max))) => {
                rms_presence_agree += 1;
                compared += 1;
                let (dr, dm) = ((g.rms - rms).abs(), (g.max_dist - max).abs());
                max_d_rms = max_d_rms.max(dr);
                max_d_max = max_d_max.max(dm);
                if dr > 1e-6 || dm > 1e-6 {
                    failures.push(format!(
                        "{label}: rms {} vs {rms}, max_dist {} vs {max}",
                        g.rms, g.max_dist
                    ));
                }
            }
            (None, None) => rms_presence_agree += 1,
            (g, w) => failures.push(format!(
                "{label}: get_rms_dist {:?} vs pymatgen {w:?}",
                g.as_ref().map(|x| (x.rms, x.max_dist))
            )),
        }
    }
    let n = cases.len();
    let pct = 100.0 * fit_agree as f64 / n.max(1) as f64;
    eprintln!(
        "matcher vs pymatgen: {n} cases in {:.2?}; fit agreement {fit_agree}/{n} = {pct:.2}%; \
         get_rms_dist presence agreement {rms_presence_agree}/{n}; compared {compared} \
         matches: max |Δrms| = {max_d_rms:.3e}, max |Δmax_dist| = {max_d_max:.3e}",
        started.elapsed()
    );
    for f in &failures {
        eprintln!("  {f}");
    }
    assert!(n > 0, "no cases in {path}");
    assert!(pct >= 99.9, "fit agreement {pct:.2}% < 99.9%");
    assert!(
        max_d_rms <= 1e-6 && max_d_max <= 1e-6,
        "rms/max_dist differ: {max_d_rms:e} / {max_d_max:e}"
    );
}
