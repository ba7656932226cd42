//! `bench-matcher`: times the native evaluation path on a pairs file.
//!
//! ```text
//! bench-matcher PAIRS.json [--repeat N] [--verdicts OUT.jsonl] [--by-kind] [--parse-only]
//! ```
//!
//! `PAIRS.json` is written by `engine-bench/pymatgen_bench.py pairs` (`{"pairs": [{"target":
//! …, "prediction": …}, …]}`). One untimed warm-up pass, then `N` timed passes (default 5);
//! prints one JSON line with the best and median seconds per pass. `--verdicts` writes one
//! verdict per pair (JSON lines) for the agreement check in `scripts/bench-matcher.sh`.
//! `--by-kind` adds one more pass that times each pair and prints, on stderr, the time spent
//! per kind of pair and in parsing alone. `--parse-only` times the evaluator's CIF reader
//! alone instead (each pass reads every target and prediction).

use std::time::Instant;

use anyhow::{bail, Context, Result};
use engine_bench::evaluate_pair_json;
use serde::Deserialize;

#[derive(Deserialize)]
struct Pair {
    #[serde(default)]
    kind: String,
    target: String,
    prediction: String,
}

#[derive(Deserialize)]
struct PairsFile {
    pairs: Vec<Pair>,
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut repeat = 5usize;
    let mut verdicts_out = None;
    let mut by_kind = false;
    let mut parse_only = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => {
                repeat = args
                    .next()
                    .context("--repeat needs a number")?
                    .parse()
                    .context("--repeat needs a number")?;
            }
            "--by-kind" => by_kind = true,
            "--parse-only" => parse_only = true,
            "--verdicts" => verdicts_out = Some(args.next().context("--verdicts needs a path")?),
            _ if path.is_none() => path = Some(arg),
            _ => bail!("usage: bench-matcher PAIRS.json [--repeat N] [--verdicts OUT.jsonl] [--by-kind] [--parse-only]"),
        }
    }
    let path = path.context(
        "usage: bench-matcher PAIRS.json [--repeat N] [--verdicts OUT] [--by-kind] [--parse-only]",
    )?;
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let file: PairsFile = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;

    let verdicts: Vec<String> = file
        .pairs
        .iter()
        .map(|p| evaluate_pair_json(&p.target, &p.prediction))
        .collect();
    if let Some(out) = verdicts_out {
        std::fs::write(&out, verdicts.join("\n") + "\n")
            .with_context(|| format!("writing {out}"))?;
    }
    let mut times = Vec::with_capacity(repeat.max(1));
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        for p in &file.pairs {
            if parse_only {
                for text in [&p.target, &p.prediction] {
                    let read = engine::cif::parse_cif_like_pymatgen(std::hint::black_box(text));
                    std::hint::black_box(read.is_ok());
                }
                continue;
            }
            std::hint::black_box(evaluate_pair_json(
                std::hint::black_box(&p.target),
                std::hint::black_box(&p.prediction),
            ));
        }
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    if by_kind {
        print_by_kind(&file.pairs);
    }
    println!(
        "{}",
        serde_json::json!({
            "impl": if parse_only { "native-parse" } else { "native" },
            "pairs": file.pairs.len(),
            "passes": times.len(),
            "best_seconds": times[0],
            "median_seconds": times[times.len() / 2],
        })
    );
    Ok(())
}

/// Times each pair once and prints the total per kind, the share spent parsing, and the
/// ten slowest pairs (their index in the file, kind and site counts).
fn print_by_kind(pairs: &[Pair]) {
    let mut kinds: Vec<(String, usize, f64, f64)> = Vec::new();
    let mut each: Vec<(f64, usize)> = Vec::with_capacity(pairs.len());
    for (i, p) in pairs.iter().enumerate() {
        let start = Instant::now();
        std::hint::black_box(evaluate_pair_json(&p.target, &p.prediction));
        let total = start.elapsed().as_secs_f64();
        let start = Instant::now();
        std::hint::black_box(engine::cif::parse_cif_like_pymatgen(&p.target).is_ok());
        std::hint::black_box(engine::cif::parse_cif_like_pymatgen(&p.prediction).is_ok());
        let parse = start.elapsed().as_secs_f64();
        each.push((total, i));
        match kinds.iter_mut().find(|k| k.0 == p.kind) {
            Some(k) => {
                k.1 += 1;
                k.2 += total;
                k.3 += parse;
            }
            None => kinds.push((p.kind.clone(), 1, total, parse)),
        }
    }
    kinds.sort_by(|a, b| b.2.total_cmp(&a.2));
    eprintln!(
        "{:<18}{:>6}{:>12}{:>12}",
        "kind", "pairs", "total ms", "parse ms"
    );
    for (kind, n, total, parse) in kinds {
        eprintln!("{kind:<18}{n:>6}{:>12.2}{:>12.2}", total * 1e3, parse * 1e3);
    }
    each.sort_by(|a, b| b.0.total_cmp(&a.0));
    eprintln!("slowest pairs: index, kind, ms, sites (target, prediction)");
    let sites = |text: &str| engine::cif::parse_cif_like_pymatgen(text).map_or(0, |s| s.len());
    for &(t, i) in each.iter().take(10) {
        let p = &pairs[i];
        let (a, b) = (sites(&p.target), sites(&p.prediction));
        eprintln!("{i:>6}  {:<18}{:>8.3}  {a} {b}", p.kind, t * 1e3);
    }
}
