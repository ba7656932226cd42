//! The engine's modules in layers, lowest first: a module uses (`crate::name`) modules of
//! lower layers only, so the modules form no cycle and each can be read knowing only what
//! is below it.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

const ENGINE_LAYERS: [&[&str]; 8] = [
    // Test support (the unit tests' random generator), below everything that tests with it.
    &["test_rng"],
    &["numeric", "element", "interrupt", "python", "grouped"],
    &["linalg", "lattice"],
    // The structure and its sites' occupants; lattice mappings.
    &["structure", "lattice_mapping"],
    // What is computed of a structure or lattice: species classes, bonds, order, symmetry,
    // cell reduction.
    &["species", "bonds", "ordered", "symmetry", "reduction"],
    &["cif"],
    &["format", "primitive"],
    &["matcher"],
];

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() || p.extension().is_some_and(|e| e == "rs") {
            out.extend(rust_files(&p));
        }
    }
    out
}

/// The modules `text` uses by `crate::name`, outside comments and unit tests.
fn used(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for rest in line.split("crate::").skip(1) {
            let m: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, m));
        }
    }
    out
}

#[test]
fn engine_modules_use_only_lower_layers() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let layer_of = |m: &str| ENGINE_LAYERS.iter().position(|l| l.contains(&m));
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let own = layer_of(&name)
            .unwrap_or_else(|| panic!("engine module {name} needs its place in ENGINE_LAYERS"));
        for file in rust_files(&path) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, m) in used(&text) {
                if m != name && layer_of(&m).is_some_and(|l| l >= own) {
                    let at = file.strip_prefix(src).unwrap().display().to_string();
                    wrong.push(format!("{at}:{line}: {name} uses {m}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module uses one of its own layer or above (see ENGINE_LAYERS):\n{}",
        wrong.join("\n")
    );
}

/// The check sees a use: the line that made `species` and `structure` use each other.
#[test]
fn a_use_upwards_is_seen() {
    let uses = used(
        "//! [`crate::species`]\nuse crate::species::Occupant;\n#[cfg(test)]\nuse crate::matcher;",
    );
    assert_eq!(uses, [(2, "species".to_string())]);
}
