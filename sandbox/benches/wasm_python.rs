//! Benchmark of the `wasm` backend (a benchmark, not a timed test):
//! `cargo bench -p sandbox --features wasm --bench wasm_python`.
//!
//! Prints: first compile time (fresh cache dir) and cached load time, `print('hi')` end to end
//! warm (goal < 50 ms), a script importing common stdlib modules, a CPU-bound loop, and the
//! same scripts in the native `python3` of this machine for comparison.
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::median;
use sandbox::wasm::interpreter::KNOWN;
use sandbox::wasm::{verify_runtime_dir, Interpreter, WasmBackend, WasmConfig, DIR_ENV};
use sandbox::{Limits, Program};

const HELLO: &str = "print('hi')";
const IMPORTS: &str =
    "import json, re, math, collections, fractions, decimal, statistics\nprint('ok')";
const CPU: &str = "s = 0\nfor i in range(3_000_000):\n    s += i * i % 7\nprint(s)";

/// `d` in milliseconds with one decimal (finer than [`common::ms`]).
fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

async fn wasm_median(b: &WasmBackend, code: &str, n: usize) -> Duration {
    let limits = Limits {
        wall: Duration::from_secs(120),
        ..Limits::default()
    };
    common::median_run(b, &Program::new(code), &limits, n).await
}

/// The real interpreter behind `python3` (not a pyenv shim, whose start-up would be counted).
fn native_python() -> Option<(String, String)> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, platform; print(sys.executable); print(platform.python_version())",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut lines = text.lines();
    Some((lines.next()?.to_string(), lines.next()?.to_string()))
}

fn native_median(code: &str, n: usize) -> Option<(Duration, String)> {
    let (exe, version) = native_python()?;
    let version = format!("Python {version} ({exe})");
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let out = Command::new(&exe)
            .args(["-S", "-s", "-B", "-c", code])
            .output()
            .ok()?;
        times.push(t.elapsed());
        assert!(out.status.success());
    }
    Some((median(times), version))
}

/// The runtime directories to measure: `$ATOMWORLD_PYTHON_WASM_DIR` alone, else every known
/// build present in its default directory (the `-O3` build and the download, when both are
/// there), each verified.
fn runtime_dirs() -> Vec<(PathBuf, Interpreter)> {
    let dirs: Vec<PathBuf> = match std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        Some(dir) => vec![PathBuf::from(dir)],
        None => KNOWN.iter().map(Interpreter::default_dir).collect(),
    };
    dirs.into_iter()
        .filter_map(|dir| match verify_runtime_dir(&dir) {
            Ok(i) => Some((dir, i)),
            Err(e) => {
                eprintln!("not measured: {e}");
                None
            }
        })
        .collect()
}

fn main() {
    let rt = common::runtime();
    let dirs = runtime_dirs();
    if dirs.is_empty() {
        std::process::exit(1);
    }
    let native = (
        native_median(HELLO, 30),
        native_median(IMPORTS, 10),
        native_median(CPU, 3),
    );
    match &native {
        (Some((h, v)), Some((i, _)), Some((c, _))) => println!(
            "native {v} (process start included): print('hi') {}, stdlib imports {}, CPU loop {}",
            ms(*h),
            ms(*i),
            ms(*c)
        ),
        _ => println!("native python3 not found: no comparison"),
    }
    for (dir, interpreter) in dirs {
        println!("\n{} ({})", interpreter.name, dir.display());
        let config = WasmConfig {
            runtime_dir: dir,
            ..WasmConfig::default()
        };
        measure(&rt, config, &native);
    }
}

type Native = (
    Option<(Duration, String)>,
    Option<(Duration, String)>,
    Option<(Duration, String)>,
);

fn measure(rt: &tokio::runtime::Runtime, config: WasmConfig, native: &Native) {
    // First compile into an empty cache dir, then a cached load (as a new process would).
    let cache = tempfile::tempdir().unwrap();
    let fresh = WasmConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        ..config.clone()
    };
    let first = WasmBackend::new(fresh.clone()).warm_up().unwrap();
    let cached = WasmBackend::new(fresh).warm_up().unwrap();
    println!(
        "load: first compile {} (of which sha256 check {}), cached load {} (of which sha256 check {}), .cwasm {} bytes",
        ms(first.load_time),
        ms(first.verify_time),
        ms(cached.load_time),
        ms(cached.verify_time),
        std::fs::metadata(&cached.cache_file).map(|m| m.len()).unwrap_or(0)
    );

    let b = WasmBackend::new(config);
    b.warm_up().unwrap();
    rt.block_on(async {
        wasm_median(&b, HELLO, 3).await; // warm-up
        let hello = wasm_median(&b, HELLO, 30).await;
        let imports = wasm_median(&b, IMPORTS, 10).await;
        let cpu = wasm_median(&b, CPU, 3).await;
        println!(
            "wasm:   print('hi') {} (median of 30, goal < 50 ms), stdlib imports {} (+{} over print), CPU loop {}",
            ms(hello),
            ms(imports),
            ms(imports.saturating_sub(hello)),
            ms(cpu)
        );
        if let (Some((h, _)), Some((i, _)), Some((c, _))) = native {
            println!(
                "ratio wasm/native: print {:.1}x, imports {:.1}x, CPU loop {:.1}x",
                hello.as_secs_f64() / h.as_secs_f64(),
                imports.as_secs_f64() / i.as_secs_f64(),
                cpu.as_secs_f64() / c.as_secs_f64()
            );
        }
    });
}
