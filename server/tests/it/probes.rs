//! The AtomWorld paper's probes and sensitivity studies as suites, end to end with the keyless baselines: generated,
//! run and stored by `atomworld run` and by `POST /api/runs`, and tabled by `atomworld
//! report` and `GET /api/report` as the paper's tables (the answer with the truth succeeds
//! everywhere, the copied or empty answer nowhere).

use crate::common;

use common::{bin, create_run, get_json, wait_run};
use server::storage::Storage;

/// Each probe or study suite, the baseline that answers with the truth (if it has one), the one that
/// does not, and the label the second gets everywhere (if one label).
const PROBES: [(&str, Option<&str>, &str, Option<&str>); 8] = [
    ("pointworld", Some("reference"), "copy-input", None),
    ("cif-repair", Some("reference"), "copy-input", None),
    (
        "cif-gen",
        Some("reference"),
        "empty",
        Some("OutputFormatError"),
    ),
    ("struct-prop", None, "copy-input", Some("Unchanged")),
    ("move-all", Some("reference"), "copy-input", None),
    (
        "atomworld-atoms",
        Some("reference"),
        "copy-input",
        Some("AtomCountMismatch"),
    ),
    (
        "atomworld-bravais",
        Some("reference"),
        "copy-input",
        Some("AtomCountMismatch"),
    ),
    (
        "atomworld-position",
        Some("reference"),
        "copy-input",
        Some("AtomCountMismatch"),
    ),
];

fn run(data: &std::path::Path, suite: &str, model: &str) -> serde_json::Value {
    let summary = data.join(format!("{suite}-{model}.json"));
    let out = bin()
        .args(["run", "--suite", suite, "--model", model])
        .args(["--per-action", "1", "--seed", "4", "--data-dir"])
        .arg(data)
        .arg("--summary-json")
        .arg(&summary)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{suite} {model}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap()
}

/// The cells of the paper table of `suite` in `report`, by row label.
fn table<'a>(report: &'a serde_json::Value, suite: &str) -> &'a serde_json::Value {
    report["paper"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["suite"] == suite)
        .unwrap_or_else(|| panic!("no paper table of {suite}: {report}"))
}

#[test]
fn each_probe_runs_and_is_tabled_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for (suite, truth, other, label) in PROBES {
        if let Some(truth) = truth {
            let s = run(&data, suite, truth);
            assert_eq!(s["overall"]["success_rate"], 1.0, "{suite} {truth}: {s}");
        }
        let s = run(&data, suite, other);
        assert_eq!(s["overall"]["success_rate"], 0.0, "{suite} {other}: {s}");
        assert!(s["overall"]["n"].as_u64().unwrap() > 0, "{suite}: {s}");
        if let Some(label) = label {
            for (group, g) in s["per_group"].as_object().unwrap() {
                assert_eq!(g["errors"][label], g["n"], "{suite} {group}: {s}");
            }
        }
    }
    let storage = Storage::open(&data).unwrap();
    let runs = storage.list_runs().unwrap();
    assert_eq!(runs.len(), 15);
    for (suite, truth, other, _) in PROBES {
        let mut ids: Vec<(String, String)> = runs
            .iter()
            .filter(|(_, spec, _)| spec.suite == suite)
            .map(|(id, spec, _)| (spec.model.clone(), id.clone()))
            .collect();
        ids.sort_by_key(|(model, _)| (Some(model.as_str()) != truth, model.clone()));
        let out = bin()
            .arg("report")
            .args(ids.iter().map(|(_, id)| id.as_str()))
            .args(["--format", "json", "--data-dir"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = table(&report, suite);
        assert!(
            t["source"].as_str().unwrap().starts_with("AtomWorld"),
            "{t}"
        );
        let rows = t["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{t}");
        let per_run = t["values"].as_array().unwrap().len().max(1);
        for row in rows {
            let cells = row["cells"].as_array().unwrap();
            assert_eq!(cells.len(), ids.len() * per_run, "{suite}: {row}");
        }
        // The success column of each run, where the table has one.
        let success = t["values"]
            .as_array()
            .unwrap()
            .iter()
            .position(|v| v.as_str().unwrap().starts_with("success"));
        if let Some(col) = success {
            for row in rows {
                let cell = |run: usize| row["cells"][run * per_run + col]["mean"].as_f64();
                if truth.is_some() {
                    assert_eq!(cell(0), Some(1.0), "{suite} {}: {row}", ids[0].0);
                }
                assert_eq!(cell(ids.len() - 1), Some(0.0), "{suite} {other}: {row}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_probe_runs_and_is_tabled_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::Server::start(dir.path(), &[], |_| {}).await;
    let base = server.base.clone();
    let c = reqwest::Client::new();
    let suites = get_json(&c, format!("{base}/api/suites")).await;
    for (suite, truth, other, _) in PROBES {
        let listed = suites["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == suite)
            .unwrap_or_else(|| panic!("{suite} not listed: {suites}"));
        assert_eq!(listed["generates"], true, "{listed}");
        let mut ids = Vec::new();
        for model in truth.into_iter().chain([other]) {
            let body =
                serde_json::json!({"suite": suite, "model": model, "per_action": 1, "seed": 2});
            let id = create_run(&c, &base, body).await;
            let r = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
            assert_eq!(r["status"], "finished", "{suite} {model}: {r}");
            ids.push(id);
        }
        let report = get_json(
            &c,
            format!("{base}/api/report?runs={}&format=json", ids.join(",")),
        )
        .await;
        let t = table(&report, suite);
        assert_eq!(t["columns"].as_array().unwrap().len() % ids.len(), 0, "{t}");
    }
    server.stop();
}

/// A prompt ablation in one command: `run --variant data2026,newest,four_decimal` runs the
/// same AtomWorld set once per wording, each run stored with its wording and named by it in
/// the report that follows; over HTTP a run names its variant, and a variant the suite lacks
/// is refused with those it has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wording_ablation_runs_each_variant_and_reports_them_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = bin()
        .args([
            "run",
            "--model",
            "reference",
            "--per-group",
            "1",
            "--seed",
            "3",
        ])
        .args(["--variant", "data2026,newest,four_decimal", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let storage = Storage::open(&data).unwrap();
    let runs = storage.list_runs().unwrap();
    assert_eq!(runs.len(), 3);
    for (wording, condition) in [
        ("data2026", "2026 data wording"),
        ("newest", "Table 1 wording"),
        ("four_decimal", "four-decimal wording"),
    ] {
        let (id, spec, _) = runs
            .iter()
            .find(|(_, s, _)| s.condition.as_deref() == Some(condition))
            .unwrap_or_else(|| panic!("no run of {condition}: {runs:?}"));
        let wire::TaskSource::Generated(params) = &spec.tasks else {
            panic!("{spec:?}")
        };
        assert_eq!(params["wording"], wording, "{params}");
        assert!(
            stdout.contains(&format!("reference · {condition} ({id})")),
            "{stdout}"
        );
        assert_eq!(storage.results(id).unwrap().len(), 10, "{condition}");
    }
    // A variant the suite lacks, and a suite without variants.
    let out = bin()
        .args([
            "run",
            "--model",
            "reference",
            "--variant",
            "fancy",
            "--data-dir",
        ])
        .arg(&data)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no variant 'fancy' (variants: data2026, newest, four_decimal, oldest)"),
        "{stderr}"
    );

    let server = common::Server::start(dir.path(), &[], |_| {}).await;
    let base = server.base.clone();
    let c = reqwest::Client::new();
    let suites = get_json(&c, format!("{base}/api/suites")).await;
    let atomworld = suites["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["variants"].as_array().is_some_and(|v| !v.is_empty()))
        .unwrap();
    assert_eq!(atomworld["variants"][1]["name"], "newest", "{atomworld}");
    let body = serde_json::json!({"model": "reference", "per_group": 1, "variant": "newest"});
    let id = create_run(&c, &base, body).await;
    wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    let run = get_json(&c, format!("{base}/api/runs/{id}")).await;
    assert_eq!(run["spec"]["condition"], "Table 1 wording", "{run}");
    assert_eq!(run["spec"]["tasks"]["wording"], "newest", "{run}");
    for (suite, variant) in [("atomworld", "fancy"), ("cif-repair", "newest")] {
        let body = serde_json::json!({"suite": suite, "model": "reference", "variant": variant});
        let r = c
            .post(format!("{base}/api/runs"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{suite} {variant}");
        let text = r.text().await.unwrap();
        assert!(text.contains(&format!("'{variant}'")), "{text}");
    }
    server.stop();
}
