//! Benchmark of the `wasm` backend (a benchmark, not a timed test):
//! `cargo bench -p sandbox --features wasm --bench wasm_python`.
//!
//! Prints: first compile time (fresh cache dir) and cached load time, `print('hi')` end to end
//! warm (goal < 50 ms), a script importing common stdlib modules, a CPU-bound loop, and the
//! same scripts in the native `python3` of this machine for comparison.
#![allow(clippy::unwrap_used)] // benchmark code: a failed unwrap is a failed run

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::median;
use sandbox::wasm::{WasmBackend, WasmConfig};
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

fn main() {
    let rt = common::runtime();
    let config = WasmConfig::default();
    if let Err(e) = sandbox::wasm::verify_runtime_dir(&config.runtime_dir) {
        eprintln!("{e}");
        std::process::exit(1);
    }

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
        match (
            native_median(HELLO, 30),
            native_median(IMPORTS, 10),
            native_median(CPU, 3),
        ) {
            (Some((h, v)), Some((i, _)), Some((c, _))) => {
                println!(
                    "native {v} (process start included): print('hi') {}, stdlib imports {}, CPU loop {}",
                    ms(h),
                    ms(i),
                    ms(c)
                );
                println!(
                    "ratio wasm/native: print {:.1}x, imports {:.1}x, CPU loop {:.1}x",
                    hello.as_secs_f64() / h.as_secs_f64(),
                    imports.as_secs_f64() / i.as_secs_f64(),
                    cpu.as_secs_f64() / c.as_secs_f64()
                );
            }
            _ => println!("native python3 not found: no comparison"),
        }
    });
}
