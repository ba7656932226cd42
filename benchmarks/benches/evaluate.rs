//! Speed of the evaluator on the default task set (a benchmark, not a timed test).
//!
//! Generates `TaskSetSpec::atommotor_default()` (2,500 tasks, seed 2026, no-op rejection as
//! `atomworld gen` does; not timed), makes one perturbed answer per task (one site moved by
//! 0.3 Å, written as CIF and wrapped in `<cif>` tags), then times parsing each target and
//! evaluating its answer as the reference does: `fit`, then on a fit `get_rms_dist`, which
//! enumerates every lattice mapping and translation (thinned by the target's own symmetry)
//! for an answer that is not an exact match. A second line times the benchmark's verdict
//! together with the second opinion (`evaluate_with_same_crystal`: primitive cells and
//! supercells). Figures and their history are in the commit messages that changed them.
//!
//! Native: `cargo bench -p benchmarks --bench evaluate` (`ATOMWORLD_BENCH_SLOWEST=1` sums the
//! time per action kind and lists the twenty slowest tasks; `ATOMWORLD_BENCH_PAIRS=FILE` writes
//! the pairs for `bench-matcher`, which runs them natively, in wasm or under a profiler).
//! wasm32 under node: `cargo test --release -p benchmarks --bench evaluate --target
//! wasm32-unknown-unknown -- --nocapture` (wasm-bindgen-test-runner runs the
//! `evaluate_default_set` test below).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use benchmarks::atomworld::evaluate::{evaluate, parse_target, Comparison, Label};
use benchmarks::atomworld::generator::{generate, GeneratedTask, TaskSetSpec};
use benchmarks::atomworld::noop::copy_would_pass;
use engine::cif::{read_cif, write_cif};

/// The default task set.
fn tasks() -> Vec<GeneratedTask> {
    generate(&TaskSetSpec::atommotor_default(), &copy_would_pass).0
}

/// The target with site `n mod len` moved by 0.3 Å along (1, 1, 1)/√3, as CIF text (empty
/// when the target does not read).
fn perturbed_cif(task: &GeneratedTask, n: usize) -> String {
    let Ok(mut s) = read_cif(&task.target_cif) else {
        return String::new();
    };
    if !s.is_empty() {
        let i = n % s.len();
        let k = 0.3 / 3f64.sqrt();
        let p = s.cartesian(i);
        s.sites[i].frac = s.lattice.to_fractional([p[0] + k, p[1] + k, p[2] + k]);
    }
    write_cif(&s)
}

/// [`perturbed_cif`] as a model's answer.
fn perturbed_answer(task: &GeneratedTask, n: usize) -> String {
    format!(
        "Here is the result:\n<cif>\n{}\n</cif>",
        perturbed_cif(task, n)
    )
}

/// Parse every target and evaluate its answer; returns the number of successes.
fn run(cases: &[(String, String)]) -> usize {
    let mut successes = 0;
    for (target_cif, answer) in cases {
        let Ok(target) = parse_target(target_cif) else {
            continue;
        };
        if evaluate(&target, answer, Comparison::Matcher).label == Label::Success {
            successes += 1;
        }
    }
    successes
}

/// [`run`] with the second verdict; returns the number of answers that are the same crystal.
#[cfg(not(target_arch = "wasm32"))]
fn run_with_same_crystal(cases: &[(String, String)]) -> usize {
    let interrupt = engine::interrupt::Interrupt::default();
    cases
        .iter()
        .filter_map(|(target_cif, answer)| {
            let target = parse_target(target_cif).ok()?;
            benchmarks::atomworld::evaluate::evaluate_with_same_crystal(
                &target,
                answer,
                Comparison::Matcher,
                &interrupt,
            )
            .same_crystal
            .filter(|s| s.fit)
        })
        .count()
}

fn cases() -> Vec<(String, String)> {
    tasks()
        .iter()
        .enumerate()
        .map(|(n, t)| (t.target_cif.clone(), perturbed_answer(t, n)))
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let started = std::time::Instant::now();
    let cases = cases();
    eprintln!(
        "generated {} tasks with answers in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    if std::env::var_os("ATOMWORLD_BENCH_SLOWEST").is_some() {
        slowest(&cases);
    }
    if let Some(path) = std::env::var_os("ATOMWORLD_BENCH_PAIRS") {
        write_pairs(std::path::Path::new(&path));
    }
    for round in 1..=1 {
        let t = std::time::Instant::now();
        let successes = run(&cases);
        let s = t.elapsed().as_secs_f64();
        println!(
            "native round {round}: {} tasks in {:.3} s = {:.3} ms per task ({successes} successes)",
            cases.len(),
            s,
            1e3 * s / cases.len() as f64
        );
    }
    let t = std::time::Instant::now();
    let same = run_with_same_crystal(&cases);
    let s = t.elapsed().as_secs_f64();
    println!(
        "with the second verdict: {} tasks in {:.3} s = {:.3} ms per task ({same} the same crystal)",
        cases.len(),
        s,
        1e3 * s / cases.len() as f64
    );
}

/// Prints the time per action kind, then the twenty slowest tasks with their site counts
/// (where the time goes).
#[cfg(not(target_arch = "wasm32"))]
fn slowest(cases: &[(String, String)]) {
    let tasks = tasks();
    let mut times: Vec<(f64, usize)> = cases
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let t = std::time::Instant::now();
            run(std::slice::from_ref(c));
            (t.elapsed().as_secs_f64(), n)
        })
        .collect();
    let total: f64 = times.iter().map(|t| t.0).sum();
    let mut by_kind: std::collections::BTreeMap<&str, (usize, f64)> = Default::default();
    for (s, n) in &times {
        let e = by_kind.entry(tasks[*n].action.kind().name()).or_default();
        e.0 += 1;
        e.1 += s;
    }
    for (kind, (count, s)) in &by_kind {
        println!(
            "{kind:>24}: {count:4} tasks {:8.1} ms {:5.1} % ({:.3} ms per task)",
            s * 1e3,
            100.0 * s / total,
            1e3 * s / *count as f64
        );
    }
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (s, n) in times.iter().take(20) {
        let t = &tasks[*n];
        println!(
            "{:8.1} ms  {:5.1} %  task {n} {} {} sites -> {}",
            s * 1e3,
            100.0 * s / total,
            t.action.kind().name(),
            t.input.len(),
            read_cif(&t.target_cif).map_or(0, |s| s.len())
        );
    }
}

/// Writes the tasks' (target, perturbed answer) pairs in `bench-matcher`'s pairs format, with
/// the action kind, so that the native binary, its wasm build and profilers run this set.
#[cfg(not(target_arch = "wasm32"))]
fn write_pairs(path: &std::path::Path) {
    let pairs: Vec<serde_json::Value> = tasks()
        .iter()
        .enumerate()
        .map(|(n, t)| {
            serde_json::json!({
                "kind": t.action.kind().name(),
                "target": t.target_cif,
                "prediction": perturbed_cif(t, n),
            })
        })
        .collect();
    let json = serde_json::json!({ "pairs": pairs }).to_string();
    std::fs::write(path, json).unwrap();
    eprintln!("wrote {} pairs to {}", pairs.len(), path.display());
}

#[cfg(target_arch = "wasm32")]
fn main() {}

/// The same measurement under wasm-bindgen-test (node).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
fn evaluate_default_set() {
    use wasm_bindgen_test::console_log;
    let now = js_sys::Date::now;
    let started = now();
    let cases = cases();
    console_log!(
        "generated {} tasks with answers in {:.1} s",
        cases.len(),
        (now() - started) / 1e3
    );
    for round in 1..=1 {
        let t = now();
        let successes = run(&cases);
        let s = (now() - t) / 1e3;
        console_log!(
            "wasm round {round}: {} tasks in {:.3} s = {:.3} ms per task ({successes} successes)",
            cases.len(),
            s,
            1e3 * s / cases.len() as f64
        );
    }
}
