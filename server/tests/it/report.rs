//! `atomworld report`: two models' runs of three repeats each, tabled as mean ± standard
//! deviation over the repeats; every number of the table recomputed here from the stored
//! rows.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::routing::post;
use axum::Router;
use common::bin;
use server::storage::Storage;

/// A provider that answers the letters A, B, C, D in turn, call after call.
async fn letters_in_turn() -> String {
    let calls = Arc::new(AtomicUsize::new(0));
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                let letter = ["A", "B", "C", "D"][n % 4];
                common::completion(&format!("<answer>{letter}</answer>"), 10)
            }
        }),
    );
    common::spawn_app(app).await
}

/// Mean and sample standard deviation (n − 1).
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    (mean, (ss / (n - 1.0)).sqrt())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_models_with_three_repeats_each_are_tabled_as_mean_and_std() {
    let base = letters_in_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let second = format!(
        "[[models]]\nname = \"fake2\"\nprovider = \"openai-compatible\"\nmodel = \"g\"\n\
         base_url = \"{base}\"\n"
    );
    let config = common::fake_model_config(dir.path(), &base, &second);
    let data = dir.path().join("data");
    for model in ["fake", "fake2"] {
        let out = bin()
            .args([
                "run",
                "--suite",
                "mattools-qa",
                "--model",
                model,
                "--repeats",
                "3",
            ])
            .args(["--concurrency", "1", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let storage = Storage::open(&data).unwrap();
    let mut ids: Vec<(String, String)> = storage
        .list_runs()
        .unwrap()
        .into_iter()
        .map(|(id, spec, _)| (spec.model, id))
        .collect();
    ids.sort();
    let report = bin()
        .arg("report")
        .args(ids.iter().map(|(_, id)| id.as_str()))
        .args(["--format", "json", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let table = &report["numbers"][0];
    // The paper's Table 1: accuracy per file, a row per file, accuracy and its interval.
    let paper = &report["paper"][0];
    assert_eq!(paper["source"], "MatTools, Table 1");
    assert_eq!(paper["columns"].as_array().unwrap().len(), 6);
    let paper_rows: BTreeMap<String, serde_json::Value> = paper["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["label"].as_str().unwrap().to_string(), r["cells"].clone()))
        .collect();
    assert_eq!(table["suite"], "mattools-qa");
    assert_eq!(table["repeats"], serde_json::json!([3, 3]));
    let rows: BTreeMap<String, serde_json::Value> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].clone()))
        .collect();

    for (col, (model, id)) in ids.iter().enumerate() {
        assert!(table["columns"][col].as_str().unwrap().starts_with(model));
        // By hand from the stored rows: per repeat (sample), the share of correct answers,
        // overall and per data set (file).
        let stored = storage.results(id).unwrap();
        let mut overall = vec![(0usize, 0usize); 3];
        let mut per_file: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
        for r in &stored {
            let correct = r.label.as_deref() == Some("Correct");
            let s = r.sample as usize;
            overall[s].0 += usize::from(correct);
            overall[s].1 += 1;
            let f = per_file.entry(r.group.clone()).or_insert(vec![(0, 0); 3]);
            f[s].0 += usize::from(correct);
            f[s].1 += 1;
        }
        assert_eq!(overall.iter().map(|o| o.1).sum::<usize>(), 84 * 3);
        let check = |path: &str, counts: &[(usize, usize)]| {
            let values: Vec<f64> = counts.iter().map(|(c, n)| *c as f64 / *n as f64).collect();
            let (mean, std) = mean_std(&values);
            let cell = &rows[path][col];
            assert!(
                (cell["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
                "{path}: {cell}"
            );
            assert!(
                (cell["std"].as_f64().unwrap() - std).abs() < 1e-12,
                "{path}: {cell}"
            );
            assert_eq!(cell["n"], 3);
            std
        };
        // The letters in turn make the repeats differ: a standard deviation above zero.
        assert!(check("success_rate", &overall) > 0.0);
        for (file, counts) in &per_file {
            let std = check(&format!("{file}.accuracy"), counts);
            // The paper table's accuracy cell of this run is the same mean and std.
            let values: Vec<f64> = counts.iter().map(|(c, n)| *c as f64 / *n as f64).collect();
            let cell = &paper_rows[file][col * 3];
            assert!((cell["mean"].as_f64().unwrap() - mean_std(&values).0).abs() < 1e-12);
            assert!((cell["std"].as_f64().unwrap() - std).abs() < 1e-12);
        }
    }

    // Markdown and CSV carry the same cells.
    let md = bin()
        .arg("report")
        .args(ids.iter().map(|(_, id)| id.as_str()))
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.starts_with(
            "#### Accuracy per question file, with its 95 % Wilson interval (MatTools, Table 1)\n\n| file | fake ("
        ),
        "{md}"
    );
    assert!(
        md.contains("\n### mattools-qa\n\n| number | fake ("),
        "{md}"
    );
    assert!(md.contains("(3 repeats) |"), "{md}");
    let line = md
        .lines()
        .find(|l| l.starts_with("| success_rate |"))
        .unwrap();
    assert_eq!(line.matches(" ± ").count(), 2, "{line}");
    let csv = bin()
        .arg("report")
        .args(ids.iter().map(|(_, id)| id.as_str()))
        .args(["--format", "csv", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("table,row,column,mean,std,n\n"), "{csv}");
    assert_eq!(
        csv.lines().filter(|l| l.contains(",success_rate,")).count(),
        2
    );
    // The papers' tables as bar charts: one bar per row and run that has the table's first
    // number, in table, row and run order, each titled with that number.
    let svg = bin()
        .arg("report")
        .args(ids.iter().map(|(_, id)| id.as_str()))
        .args(["--format", "svg", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let svg = String::from_utf8(svg.stdout).unwrap();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    let mut expected = Vec::new();
    for t in report["paper"].as_array().unwrap() {
        let per_run = t["values"].as_array().map_or(1, |v| v.len().max(1));
        assert!(svg.contains(t["title"].as_str().unwrap()), "{svg}");
        for row in t["rows"].as_array().unwrap() {
            for c in row["cells"].as_array().unwrap().iter().step_by(per_run) {
                if let Some(mean) = c["mean"].as_f64() {
                    expected.push(format!("{mean:.3}"));
                }
            }
        }
    }
    let pieces: Vec<&str> = svg.split("</title></rect>").collect();
    // Each piece but the last ends with a bar's title: "<run>, <row>: <value>".
    let drawn: Vec<String> = pieces[..pieces.len() - 1]
        .iter()
        .filter_map(|piece| Some(piece.rsplit_once(": ")?.1.to_string()))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(drawn, expected);
    // The same report over HTTP, for the Runs page: the same JSON; an unknown run is 404, a
    // request naming none is 400.
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<!doctype html>").unwrap();
    let state = server::http::AppState::new(Storage::open(&data).unwrap()).unwrap();
    let app = server::http::router(state, dist.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let runs = ids
        .iter()
        .map(|(_, id)| id.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let http: serde_json::Value = reqwest::get(format!("http://{addr}/api/report?runs={runs}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(http, report);
    let csv_http = reqwest::get(format!("http://{addr}/api/report?runs={runs}&format=csv"))
        .await
        .unwrap();
    assert_eq!(
        csv_http.headers()["content-type"],
        "text/csv; charset=utf-8"
    );
    assert_eq!(csv_http.text().await.unwrap(), csv);
    let svg_http = reqwest::get(format!("http://{addr}/api/report?runs={runs}&format=svg"))
        .await
        .unwrap();
    assert_eq!(svg_http.headers()["content-type"], "image/svg+xml");
    assert_eq!(svg_http.text().await.unwrap(), svg);
    let missing = reqwest::get(format!("http://{addr}/api/report?runs={runs},run-nope"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing.text().await.unwrap().contains("no run run-nope"));
    let empty = reqwest::get(format!("http://{addr}/api/report?runs=,"))
        .await
        .unwrap();
    assert_eq!(empty.status(), 400);

    // An unknown run is named.
    let none = bin()
        .args(["report", "run-nope", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no run run-nope"));
}
