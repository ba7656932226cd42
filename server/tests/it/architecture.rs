//! The crates depend one way only: llm-protocol (on none) ← benchmarks (also on engine) ← wire
//! ← {app, server}; engine ← viewer ← first-view ← app (the first view's test reads the pool
//! in benchmarks); {engine, benchmarks} ← matcher-worker ← app; engine-bench on engine and
//! benchmarks; the sandbox (on no workspace crate)
//! ← server. Read from `cargo metadata`, so a wrong dependency
//! fails here rather than in review.

use std::collections::BTreeMap;
use std::process::Command;

/// Which workspace crates each workspace crate may depend on.
const ALLOWED: [(&str, &[&str]); 11] = [
    ("engine", &[]),
    ("viewer", &["engine"]),
    ("first-view", &["engine", "viewer", "benchmarks"]),
    ("matcher-worker", &["engine", "benchmarks"]),
    ("llm-protocol", &[]),
    ("benchmarks", &["engine", "llm-protocol"]),
    ("wire", &["benchmarks"]),
    (
        "app",
        &[
            "engine",
            "llm-protocol",
            "benchmarks",
            "wire",
            "viewer",
            "first-view",
            "matcher-worker",
        ],
    ),
    (
        "server",
        &["engine", "llm-protocol", "benchmarks", "wire", "sandbox"],
    ),
    ("engine-bench", &["engine", "benchmarks"]),
    ("sandbox", &[]),
];

#[test]
fn crates_depend_the_right_way() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let members: Vec<&str> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().unwrap_or_default().to_string();
        let deps = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            // Normal and build dependencies (dev-dependencies of tests may reach further).
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .filter(|d| members.contains(d))
            .map(str::to_string)
            .collect();
        found.insert(name, deps);
    }
    for (krate, deps) in &found {
        let allowed = ALLOWED
            .iter()
            .find(|(k, _)| k == krate)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("a new crate needs its line in ALLOWED: {krate}"));
        for d in deps {
            assert!(
                allowed.contains(&d.as_str()),
                "{krate} depends on {d}; allowed: {allowed:?}"
            );
        }
    }
    for (krate, _) in ALLOWED.iter() {
        assert!(
            found.contains_key(*krate),
            "{krate} is not a workspace member"
        );
    }
}

/// The suite-neutral layers know no suite by name: a suite's name in quotes appears only in
/// its own modules (`benchmarks/src/<suite>/`, the server's `src/suites/`), in tests and in
/// docs: the task model, the protocol, the wire types, the server's other modules and the app
/// are scanned. Everything else asks the suite's descriptor (`benchmarks::task::Suite`) or its host
/// (`server::suites::SuiteHost`).
#[test]
fn no_suite_is_named_outside_its_own_modules() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let names = benchmarks::task::Registry::standard().names();
    let mut found = Vec::new();
    for dir in [
        "server/src",
        "app/src",
        "viewer/src",
        "first-view/src",
        "matcher-worker/src",
        "wire/src",
        "llm-protocol/src",
        "benchmarks/src/task",
    ] {
        for file in rust_files(&root.join(dir)) {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("server/src/suites/") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            // Unit tests at the end of a file may name the suites they exercise.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                // The binary is called `atomworld` too.
                if rel == "server/src/main.rs" && line.trim() == "name = \"atomworld\"," {
                    continue;
                }
                for name in &names {
                    if line.contains(&format!("\"{name}\"")) {
                        found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "suite names outside their modules (ask the suite's descriptor or host instead):\n{}",
        found.join("\n")
    );
}

/// The page's own module scores nothing and searches no symmetry: both run in the scoring
/// worker (`matcher-worker`), so that the matcher and moyo stay out of a first visit's
/// download. The app's sources name neither the matcher, the symmetry search nor a scorer.
#[test]
fn the_page_leaves_scoring_and_symmetry_to_the_worker() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    // Paths into the engine's and the benchmarks' scoring and symmetry code.
    let banned = [
        "engine::matcher",
        "engine::symmetry",
        "::evaluate::evaluate",
        "evaluate::{evaluate",
        "evaluate_with",
        "evaluate_against",
        "explain_mismatch",
        "score::evaluate",
    ];
    // What the workers' binaries call, named from `matcher_worker` (in a `use` of it,
    // however it is wrapped, or as a path).
    let worker_only = ["score", "search_space_group", "TargetCache", "listen"];
    let mut found = Vec::new();
    for file in rust_files(&root.join("app/src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for b in banned.iter().filter(|b| line.contains(*b)) {
                found.push(format!("{}:{}: {b}", file.display(), n + 1));
            }
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("matcher_worker::") {
            rest = &rest[at + "matcher_worker::".len()..];
            let path = &rest[..rest.find(';').unwrap_or(rest.len())];
            let path = if path.starts_with('{') {
                path
            } else {
                &path[..path
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(path.len())]
            };
            let names = path.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            for name in names.filter(|w| worker_only.contains(w)) {
                found.push(format!("{}: matcher_worker::{name}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the page scores or searches symmetry itself (send a matcher_worker::Work instead):\n{}",
        found.join("\n")
    );
}

fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The server's modules in layers, lowest first: a module may use its own layer and those
/// below, never one above (`main.rs` wires them all).
const SERVER_LAYERS: [&[&str]; 6] = [
    // Plain data and helpers.
    &["config", "build_info", "cpu"],
    &["storage"],
    // The effect hosts: model calls, the sandboxes.
    &["llm", "execution"],
    // The suites' adapters and agents, and the tasks they read.
    &["suites", "agents", "task_files", "task_sets"],
    &["runs"],
    &["http", "cli"],
];

/// Each top-level module of `server/src` uses (`crate::name`) only its own layer and lower.
#[test]
fn server_modules_use_only_lower_layers() {
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let layer_of = |m: &str| SERVER_LAYERS.iter().position(|l| l.contains(&m));
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if ["lib", "main"].contains(&name.as_str()) {
            continue;
        }
        let own = layer_of(&name)
            .unwrap_or_else(|| panic!("server module {name} needs its place in SERVER_LAYERS"));
        let files = if path.is_dir() {
            rust_files(&path)
        } else {
            vec![path.clone()]
        };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                for used in line.split("crate::").skip(1) {
                    let m: String = used
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if let Some(layer) = layer_of(&m) {
                        if layer > own {
                            wrong.push(format!(
                                "{}:{}: {name} uses {m}",
                                file.strip_prefix(src).unwrap().display(),
                                n + 1
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module uses one above its layer (see SERVER_LAYERS):\n{}",
        wrong.join("\n")
    );
}
