//! `engine::python` against CPython itself (the `python3` on the path): `str.isspace()` for
//! every code point, `float()` on a grammar's worth of strings, and `repr(float)` on random
//! bit patterns and on decimal numbers with few digits.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::process::{Command, Stdio};

use engine::python::{is_py_space, py_float, py_repr, py_strip};

/// CPython's answer to `script` with `input` on stdin, or `None` (with a notice) when there is
/// no python3 here; under CI (`CI` or `ATOMWORLD_REQUIRE_SHARED` set) a missing python3 fails.
fn cpython(script: &str, input: &str) -> Option<String> {
    let child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e)
            if std::env::var_os("CI").is_some()
                || std::env::var_os("ATOMWORLD_REQUIRE_SHARED").is_some() =>
        {
            panic!("python3 is required under CI: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: no python3 ({e})");
            return None;
        }
    };
    // Written from its own thread: CPython answers while it reads, and a full stdout pipe
    // would otherwise stop both sides.
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "python3 failed");
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn isspace_and_strip_for_every_code_point() {
    let Some(theirs) = cpython(
        "import sys\nprint(' '.join(str(c) for c in range(0x110000) if chr(c).isspace()))",
        "",
    ) else {
        return;
    };
    let theirs: Vec<u32> = theirs
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect();
    let ours: Vec<u32> = (0..0x110000u32)
        .filter(|&c| char::from_u32(c).is_some_and(is_py_space))
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(py_strip("\u{1f} a\u{3000}b \u{85}"), "a\u{3000}b");
}

/// A small generator of float-like strings: signs, digits, underscores, points, exponents,
/// the special words and white space, in random order and number.
fn candidates() -> Vec<String> {
    let parts = [
        "1", "0", "9", "12", "_", ".", "e", "E", "+", "-", "inf", "nan", "Infinity", " ", "\t",
        "x", "1e308", "5e-324", "00", "\u{a0}",
    ];
    let mut seed: u64 = 41;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    (0..20_000)
        .map(|_| {
            (0..1 + next() % 5)
                .map(|_| parts[next() % parts.len()])
                .collect()
        })
        .collect()
}

#[test]
fn float_accepts_and_reads_what_cpython_does() {
    let inputs = candidates();
    // One JSON string per line (the inputs hold no newline); CPython prints `float()`'s bits
    // or `-` where it raises.
    let lines: String = inputs
        .iter()
        .map(|s| serde_json::to_string(s).unwrap() + "\n")
        .collect();
    let script = "import sys, json, struct\n\
        for line in sys.stdin:\n\
        \x20   s = json.loads(line)\n\
        \x20   try: print(struct.unpack('<Q', struct.pack('<d', float(s)))[0])\n\
        \x20   except ValueError: print('-')";
    let Some(theirs) = cpython(script, &lines) else {
        return;
    };
    let mut wrong = Vec::new();
    for (s, want) in inputs.iter().zip(theirs.lines()) {
        let ours = py_float(s).map_or("-".to_string(), |x| {
            // NaN's payload is not Python's business: compare NaN as NaN.
            if x.is_nan() { f64::NAN } else { x }.to_bits().to_string()
        });
        let want = match want.parse::<u64>().map(f64::from_bits) {
            Ok(x) if x.is_nan() => f64::NAN.to_bits().to_string(),
            _ => want.to_string(),
        };
        if ours != want {
            wrong.push(format!("{s:?}: ours {ours}, CPython {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn repr_is_cpythons_for_random_bits_and_short_decimals() {
    let mut seed: u64 = 7;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed
    };
    let mut values: Vec<f64> = (0..20_000).map(|_| f64::from_bits(next())).collect();
    // Decimals with few digits at every scale: where shortest round-trip digits can tie.
    values.extend((0..20_000).map(|i| {
        let mantissa = (next() % 100_000) as f64;
        let exp = (next() % 60) as i32 - 30;
        if i % 2 == 0 {
            mantissa * 10f64.powi(exp)
        } else {
            mantissa / 10f64.powi(-exp)
        }
    }));
    values.extend([
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        1e16,
        1e-4,
        f64::from_bits(0x4341_c379_37e0_7fff),
    ]);
    let lines: String = values
        .iter()
        .map(|x| format!("{}\n", x.to_bits()))
        .collect();
    let script = "import sys, struct\n\
        for line in sys.stdin:\n\
        \x20   print(repr(struct.unpack('<d', struct.pack('<Q', int(line)))[0]))";
    let Some(theirs) = cpython(script, &lines) else {
        return;
    };
    let wrong: Vec<String> = values
        .iter()
        .zip(theirs.lines())
        .filter(|(x, want)| py_repr(**x) != *want)
        .map(|(x, want)| format!("{:#x}: ours {}, CPython {want}", x.to_bits(), py_repr(*x)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn str_repr_is_cpythons_over_latin_1_and_quotes() {
    let mut texts: Vec<String> = (0u32..0x100)
        .filter_map(char::from_u32)
        .map(|c| format!("a{c}b"))
        .collect();
    texts.extend(
        [
            "it's",
            "say \"hi\"",
            "both ' and \"",
            "",
            "tab\tnew\nline\\",
            "Å 5 µm",
        ]
        .map(String::from),
    );
    let lines: String = texts
        .iter()
        .map(|s| serde_json::to_string(s).unwrap() + "\n")
        .collect();
    let script =
        "import sys, json\nfor line in sys.stdin:\n    print(json.dumps(repr(json.loads(line))))";
    let Some(theirs) = cpython(script, &lines) else {
        return;
    };
    let wrong: Vec<String> = texts
        .iter()
        .zip(theirs.lines())
        .filter_map(|(t, want)| {
            let want: String = serde_json::from_str(want).unwrap();
            let ours = engine::python::py_str_repr(t);
            (ours != want).then(|| format!("{t:?}: ours {ours}, CPython {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
