//! The crates depend one way only: engine ← bench ← {app, server, engine-bench}, and the
//! sandbox (on no workspace crate) ← server. Read from `cargo metadata`, so a wrong dependency
//! fails here rather than in review.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::process::Command;

/// Which workspace crates each workspace crate may depend on.
const ALLOWED: [(&str, &[&str]); 6] = [
    ("engine", &[]),
    ("bench", &["engine"]),
    ("app", &["engine", "bench"]),
    ("server", &["engine", "bench", "sandbox"]),
    ("engine-bench", &["engine", "bench"]),
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
    for (krate, _) in ALLOWED.iter().take(5) {
        assert!(
            found.contains_key(*krate),
            "{krate} is not a workspace member"
        );
    }
}
