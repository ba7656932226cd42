//! Adding a suite is one `impl Suite` and one registry line: a small suite that exists only
//! here runs through `atomworld eval`'s scorer and the server's run loop (HTTP API included)
//! with no other change, its judge question answered through the gateway.

use crate::common;

use common::{create_run, get_json, wait_run};
use std::sync::{Arc, Mutex};

use benchmarks::task::{Message, Need, NeedAnswer, Outcome, Prepared, Registry, Suite, TaskError};
use engine::interrupt::Interrupt;
use serde::{Deserialize, Serialize};
use server::config::{Config, Limits};
use server::http::{router, AppState};
use server::llm::{Gateway, GatewayOptions};
use server::storage::Storage;

/// Arithmetic questions; an answer counts when it holds the number and a judge agrees.
struct Sums;

#[derive(Serialize, Deserialize)]
struct SumTask {
    id: String,
    a: i64,
    b: i64,
}

#[derive(Serialize, Deserialize)]
struct SumVerdict {
    correct: bool,
    judge: String,
}

impl Suite for Sums {
    const NAME: &'static str = "sums";
    type Task = SumTask;
    type State = i64;
    type Verdict = SumVerdict;

    fn key(task: &SumTask) -> String {
        task.id.clone()
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &[("Wrong", "Wrong")]
    }

    fn prepare(&self, t: &SumTask) -> Result<Prepared<i64>, TaskError> {
        let sum = t.a.checked_add(t.b).ok_or(TaskError("overflow".into()))?;
        Ok(Prepared {
            messages: vec![Message::user(format!("What is {} + {}?", t.a, t.b))],
            group: if sum < 0 { "negative" } else { "positive" }.into(),
            state: sum,
        })
    }

    fn needs(&self, sum: &i64, response: &str) -> Vec<Need> {
        vec![Need::Judge {
            messages: vec![Message::user(format!("Is {response} equal to {sum}?"))],
        }]
    }

    fn score(
        &self,
        sum: &i64,
        response: &str,
        answers: &[NeedAnswer],
        _: &Interrupt,
    ) -> SumVerdict {
        let judge = match answers.first() {
            Some(NeedAnswer::Judge { text }) => text.clone(),
            Some(NeedAnswer::Failed { error }) => format!("judge failed: {error}"),
            Some(NeedAnswer::Ran { .. }) => "judge failed: a program answered".into(),
            None => "no judge".into(),
        };
        SumVerdict {
            correct: response.trim() == sum.to_string() && !judge.starts_with("judge failed"),
            judge,
        }
    }

    fn outcome(v: &SumVerdict) -> Outcome {
        Outcome {
            label: if v.correct { "Success" } else { "Wrong" }.into(),
            success: v.correct,
            metric: None,
            why: None,
        }
    }

    fn baselines(&self) -> &'static [&'static str] {
        &["calculator"]
    }

    fn baseline_answer(&self, name: &str, sum: &i64) -> Option<String> {
        (name == "calculator").then(|| sum.to_string())
    }
}

fn registry() -> Registry {
    Registry::standard().with(Sums)
}

#[test]
fn eval_scores_a_new_suite_offline() {
    let input = "{\"id\":\"1\",\"a\":2,\"b\":3,\"response\":\"5\"}\n\
                 {\"id\":\"2\",\"a\":-9,\"b\":3,\"response\":\"-6\"}\n";
    let mut out = Vec::new();
    let table =
        server::cli::eval::run_suite(&registry(), "sums", input.as_bytes(), &mut out).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Offline there is no judge: the suite's own rule turns that into a wrong answer.
    assert_eq!(lines[0]["verdict"]["correct"], false);
    assert!(lines[0]["verdict"]["judge"]
        .as_str()
        .unwrap()
        .contains("offline"));
    assert!(table.starts_with("group"), "{table}");
    assert!(
        table.contains("negative") && table.contains("Wrong"),
        "{table}"
    );
    let unknown = server::cli::eval::run_suite(&registry(), "nope", &b""[..], Vec::new());
    let message = unknown.unwrap_err().message;
    assert!(
        message.contains("available: atomworld, ") && message.ends_with(", sums)"),
        "{message}"
    );
}

/// A line `eval` cannot score is named with its reason and skipped; the others are scored
/// and written (it stopped at the first bad line and kept nothing).
#[test]
fn eval_names_bad_lines_and_scores_the_rest() {
    let input = "{\"id\":\"1\",\"a\":2,\"b\":3,\"response\":\"5\"}\n\
                 not json\n\
                 {\"id\":\"3\",\"a\":1,\"b\":1,\"response\":\"2\"}\n";
    let mut out = Vec::new();
    let table =
        server::cli::eval::run_suite(&registry(), "sums", input.as_bytes(), &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
    assert!(
        table.contains("2 lines scored, 1 skipped:\nline 2: not a JSON object"),
        "{table}"
    );
    let none = server::cli::eval::run_suite(&registry(), "sums", &b"nope\n"[..], Vec::new());
    assert!(none
        .unwrap_err()
        .message
        .contains("line 1: not a JSON object"));
}

/// An OpenAI-compatible judge that always agrees.
async fn judge() -> String {
    async fn yes() -> axum::Json<serde_json::Value> {
        common::completion("yes", 1)
    }
    let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(yes));
    let v1 = common::spawn_app(app).await;
    v1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_loop_runs_a_new_suite_with_its_judge() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let config = Config {
        models: vec![common::free_model("judge", judge().await)],
        limits: Limits {
            judge_model: Some("judge".into()),
            ..Limits::default()
        },
        ..Config::default()
    };
    let gateway = Gateway::new(config, storage.clone(), GatewayOptions::default()).unwrap();
    let suites = server::suites::Catalogue::standard().with(Sums, None);
    let state = AppState::with_suites(storage, gateway, None, 1000, suites);
    let app = router(state, dir.path());
    let base = common::serve_router(app).await;
    let c = reqwest::Client::new();
    let body = serde_json::json!({"suite": "sums", "model": "calculator", "tasks": [
        {"id": "1", "a": 2, "b": 3}, {"id": "2", "a": -9, "b": 3}]});
    let id = create_run(&c, &base, body).await;
    let run = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["summary"]["overall"]["n"], 2);
    assert_eq!(run["summary"]["overall"]["success_rate"], 1.0);
    assert_eq!(run["summary"]["per_group"]["negative"]["n"], 1);
    let results = get_json(&c, format!("{base}/api/runs/{id}/results")).await;
    let row = &results["results"][0];
    assert_eq!(row["verdict"]["judge"], "yes", "{row}");
    assert_eq!(row["task"]["a"], 2);
    assert_eq!(row["prompt"], "What is 2 + 3?");
    // A task the suite cannot prepare is named, not run.
    let bad = c
        .post(format!("{base}/api/runs"))
        .json(
            &serde_json::json!({"suite": "sums", "model": "calculator", "tasks": [
            {"id": "big", "a": i64::MAX, "b": 1}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("task big: overflow"));
}

/// `atomworld eval --suite omnimat-cal`: lines `{"id", "final_answer_list", "prediction"}`
/// with the prediction as text or as a list gain the slot verdict.
#[test]
fn eval_scores_omnimat_cal_predictions() {
    let input = concat!(
        r#"{"id": "1", "final_answer_list": ["2.50", "3"], "prediction": "<answer>[\"2.5\", \"3\"]</answer>"}"#,
        "\n",
        r#"{"id": "2", "final_answer_list": ["2.50", "3"], "prediction": ["2.5", "4"]}"#,
        "\n",
    );
    let mut out = Vec::new();
    server::cli::eval::run_suite(
        &benchmarks::task::Registry::standard(),
        "omnimat-cal",
        input.as_bytes(),
        &mut out,
    )
    .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["verdict"]["slots"],
        serde_json::json!([true, true])
    );
    assert_eq!(lines[0]["verdict"]["item_exact"], 1.0);
    assert_eq!(
        lines[1]["verdict"]["slots"],
        serde_json::json!([true, false])
    );
    // An item counts only when every slot matches (the reference's item score).
    assert_eq!(lines[1]["verdict"]["item_exact"], 0.0);
}

/// One AlchemyBench recipe line with its stored contribution embedding.
fn recipe(id: &str, embedding: &[f32]) -> String {
    serde_json::json!({
        "id": id,
        "contribution": format!("## Key Contributions\n- Novel materials or compounds: {id}"),
        "recipe": format!("## Materials\n- {id} precursor\n## Synthesis Procedure\n1. Heat."),
        "contributions_embedding": embedding,
    })
    .to_string()
}

/// `run --suite alchemy --model reference --rag-k K` of `dir`'s test.jsonl with its
/// train.jsonl as the references' pool, into `data`.
fn alchemy_rag_run(
    dir: &std::path::Path,
    k: &str,
    data: &std::path::Path,
) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "run",
        "--suite",
        "alchemy",
        "--model",
        "reference",
        "--rag-k",
        k,
        "--tasks",
    ]
    .map(Into::into)
    .into();
    args.push(dir.join("test.jsonl").into());
    args.push("--train".into());
    args.push(dir.join("train.jsonl").into());
    args.push("--data-dir".into());
    args.push(data.into());
    args
}

/// `atomworld run --suite alchemy --rag-k 2 --train T`: each recipe gets its two nearest train
/// recipes by cosine over the stored embeddings (never itself), nearest first, in its task.
#[test]
fn alchemy_runs_resolve_rag_references_from_the_train_split() {
    let dir = tempfile::tempdir().unwrap();
    let train = [
        recipe("far", &[0.0, 0.0, 1.0]),
        recipe("near", &[1.0, 0.1, 0.0]),
        recipe("middle", &[1.0, 1.0, 0.0]),
        recipe("query", &[1.0, 0.0, 0.0]),
    ]
    .join("\n");
    std::fs::write(dir.path().join("train.jsonl"), train).unwrap();
    std::fs::write(
        dir.path().join("test.jsonl"),
        recipe("query", &[1.0, 0.0, 0.0]),
    )
    .unwrap();
    let data = dir.path().join("data");
    let out = common::bin()
        .args(alchemy_rag_run(dir.path(), "2", &data))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, _, rows) = common::only_run(&data);
    let task = rows[0].task.as_ref().unwrap();
    let refs: Vec<&str> = task["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["recipe"].as_str().unwrap())
        .collect();
    assert_eq!(refs.len(), 2);
    assert!(
        refs[0].contains("near precursor") && refs[1].contains("middle precursor"),
        "{refs:?}"
    );
    assert!(
        rows[0].prompt.contains("# Reference 1:"),
        "{}",
        rows[0].prompt
    );
    // No judge is configured: the answer is not scored, and the table says so.
    assert_eq!(rows[0].label.as_deref(), Some("JudgeFailed"));
}

/// `--rag-k 0,2`: one run per K (each stored with its condition), then their report side by
/// side: the judge's scores per criterion, a column per K, each cell the stored verdict's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rag_k_sweep_runs_each_k_and_reports_them_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let train = [
        recipe("a", &[1.0, 0.0]),
        recipe("bb", &[0.0, 1.0]),
        recipe("ccc", &[1.0, 1.0]),
    ];
    std::fs::write(dir.path().join("train.jsonl"), train.join("\n")).unwrap();
    std::fs::write(dir.path().join("test.jsonl"), recipe("q", &[1.0, 0.2])).unwrap();
    let config = common::fake_model_config(
        dir.path(),
        &alchemy_judge().await,
        "[limits]\njudge_model = \"fake\"\n",
    );
    let data = dir.path().join("data");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_atomworld"))
        .args(alchemy_rag_run(dir.path(), "0,2", &data))
        .arg("--config")
        .arg(&config)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let storage = Storage::open(&data).unwrap();
    let mut runs = storage.list_runs().unwrap();
    runs.sort_by_key(|(_, spec, _)| spec.condition.clone());
    let conditions: Vec<Option<String>> =
        runs.iter().map(|(_, s, _)| s.condition.clone()).collect();
    assert_eq!(conditions, [Some("K = 0".into()), Some("K = 2".into())]);
    for (id, spec, _) in &runs {
        let k = spec.condition.as_deref().unwrap();
        assert!(stdout.contains(&format!("## {k} ({id})")), "{stdout}");
        // The report's overall_score cell of this run is its one verdict's score.
        let rows = storage.results(id).unwrap();
        let score = rows[0]
            .verdict
            .as_ref()
            .map(|v| serde_json::to_value(v).unwrap())
            .unwrap()["scores"]["overall_score"]
            .as_f64()
            .unwrap();
        let line = stdout
            .lines()
            .find(|l| l.starts_with("| overall_score |"))
            .unwrap_or_else(|| panic!("{stdout}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // The report's header (the runs' own summaries have criterion tables too).
        let column = stdout
            .lines()
            .rfind(|l| l.starts_with("| criterion |"))
            .unwrap()
            .split('|')
            .map(str::trim)
            .position(|c| c == format!("reference · {k} ({id}): mean"))
            .unwrap_or_else(|| panic!("{stdout}"));
        assert_eq!(cells[column].parse::<f64>().unwrap(), score, "{line}");
    }
}

/// A judge for AlchemyBench that gives every criterion the same score, taken from the length
/// of the recipe it is shown (so scores differ between recipes).
async fn alchemy_judge() -> String {
    async fn score(
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> axum::Json<serde_json::Value> {
        let text = body["messages"].to_string();
        let s = 1.0 + (text.len() % 9) as f64 * 0.5;
        let keys = benchmarks::alchemy::judge::KEYS;
        let scores: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .map(|k| (k.to_string(), serde_json::json!(s)))
            .collect();
        let content = format!(
            "Reasoning.\n```json\n{}\n```",
            serde_json::Value::Object(scores)
        );
        common::completion(&content, 1)
    }
    let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(score));
    let v1 = common::spawn_app(app).await;
    v1
}

/// AlchemyBench's human scoring: a run of the demo recipes judged by a (fake) judge; a
/// person's scores are saved, checked, exported and compared with the judge's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_scores_are_saved_and_compared_with_the_judge() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let config = Config {
        models: vec![common::free_model("judge", alchemy_judge().await)],
        limits: Limits {
            judge_model: Some("judge".into()),
            ..Limits::default()
        },
        ..Config::default()
    };
    let gateway = Gateway::new(config, storage.clone(), GatewayOptions::default()).unwrap();
    let state = AppState::with_gateway(storage, gateway, None, 1000);
    let app = router(state, dir.path());
    let base = common::serve_router(app).await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &base,
        serde_json::json!({"suite": "alchemy", "model": "reference"}),
    )
    .await;
    let run = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["summary"]["overall"]["n"], 12, "{run}");
    assert_eq!(run["summary"]["overall"]["success_rate"], 1.0, "{run}");
    let results = get_json(&c, format!("{base}/api/runs/{id}/results")).await;
    let rows = results["results"].as_array().unwrap();
    let judge = |i: usize| {
        rows[i]["verdict"]["scores"]["overall_score"]
            .as_f64()
            .unwrap()
    };
    // The person agrees with the judge's order on four recipes (scores one step lower).
    let url = format!("{base}/api/runs/{id}/human-scores");
    let mut last = serde_json::Value::Null;
    for (i, row) in rows.iter().enumerate().take(4) {
        let body = serde_json::json!({"task_id": row["task_id"], "criterion": "overall_score",
            "score": (judge(i) - 0.5).max(1.0)});
        last = c
            .put(&url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    }
    let overall = last["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["criterion"] == "overall_score")
        .unwrap()
        .clone();
    assert_eq!(overall["n"], 4, "{last}");
    // Saved: a fresh read gives the same.
    let again = get_json(&c, url.clone()).await;
    assert_eq!(again["scores"].as_array().unwrap().len(), 4);
    // Out-of-range scores and unknown criteria are refused.
    for bad in [
        serde_json::json!({"task_id": rows[0]["task_id"], "criterion": "overall_score", "score": 5.5}),
        serde_json::json!({"task_id": rows[0]["task_id"], "criterion": "overall_score", "score": 2.25}),
        serde_json::json!({"task_id": rows[0]["task_id"], "criterion": "taste", "score": 3}),
        serde_json::json!({"task_id": "nope", "criterion": "overall_score", "score": 3}),
    ] {
        let r = c.put(&url).json(&bad).send().await.unwrap();
        assert_eq!(r.status(), 400, "{bad}");
    }
    let csv = c
        .get(format!("{base}/api/runs/{id}/human-scores.csv"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(csv.lines().count(), 1 + 12 * 8);
    assert!(csv.starts_with("task_id,sample,criterion,judge,person\n"));
    // Removing a score.
    let body = serde_json::json!({"task_id": rows[0]["task_id"], "criterion": "overall_score", "score": null});
    let after: serde_json::Value = c
        .put(&url)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(after["scores"].as_array().unwrap().len(), 3);

    // Two named people score the first three recipes' overall score; each sees only their
    // own, and their agreement is ICC(3,k) over the recipes all three people scored.
    let ana = [4.0, 2.0, 5.0];
    let ben = [3.5, 2.0, 4.0];
    for (who, marks) in [("ana", ana), ("ben", ben)] {
        for (i, m) in marks.iter().enumerate() {
            let body = serde_json::json!({"task_id": rows[i]["task_id"], "criterion": "overall_score",
                "score": m, "scorer": format!("  {who} ")});
            let r = c.put(&url).json(&body).send().await.unwrap();
            assert_eq!(r.status(), 200);
        }
    }
    let theirs = get_json(&c, format!("{url}?scorer=ana")).await;
    let mine: Vec<f64> = theirs["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["score"].as_f64().unwrap())
        .collect();
    assert_eq!(mine, ana, "ana's own scores only, her name trimmed");
    assert_eq!(theirs["scorers"].as_array().unwrap().len(), 3, "{theirs}");
    // The unnamed scorer still has three overall scores (recipes 1-3): a 3 × 3 matrix.
    let unnamed: Vec<f64> = (1..=3)
        .map(|i| {
            after["scores"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["task_id"] == rows[i]["task_id"])
                .and_then(|s| s["score"].as_f64())
                .unwrap_or(f64::NAN)
        })
        .collect();
    let consensus = theirs["consensus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["criterion"] == "overall_score")
        .unwrap()
        .clone();
    assert_eq!(consensus["raters"], 3, "{consensus}");
    // Recipes 1 and 2 are the only ones all three scored (the unnamed one removed recipe 0).
    assert_eq!(consensus["items"], 2, "{consensus}");
    let matrix = vec![
        vec![unnamed[0], ana[1], ben[1]],
        vec![unnamed[1], ana[2], ben[2]],
    ];
    let expected = benchmarks::alchemy::summary::icc3k(&matrix);
    assert!(expected.is_some(), "{matrix:?}");
    assert_eq!(consensus["icc3k"].as_f64(), expected, "{consensus}");
    // A name too long is refused.
    let long = serde_json::json!({"task_id": rows[0]["task_id"], "criterion": "overall_score",
        "score": 3, "scorer": "x".repeat(41)});
    assert_eq!(c.put(&url).json(&long).send().await.unwrap().status(), 400);
}

/// OmniMatBench's one reminder: a reply without `<answer>` is asked again once with the
/// reminder after the question; the second reply is the one scored; tokens add up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_without_answer_gets_one_reminder() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    async fn reply(
        axum::extract::State(calls): axum::extract::State<Arc<AtomicUsize>>,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> axum::Json<serde_json::Value> {
        calls.fetch_add(1, Ordering::SeqCst);
        let text = body["messages"].to_string();
        let content = if text.contains("did not follow the required format") {
            "<think>ok</think><answer>[\"1\"]</answer>"
        } else {
            "The answer is probably 1."
        };
        common::completion(content, 10)
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(reply))
        .with_state(calls.clone());
    let v1 = common::spawn_app(app).await;
    let dir = tempfile::tempdir().unwrap();
    let config = common::fake_model_config(dir.path(), &v1, common::PRICED);
    let data = dir.path().join("data");
    let out = common::run_fake(&config, &data)
        .args(["--suite", "omnimat-cal", "--summary-json"])
        .arg(dir.path().join("summary.json"))
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The suite's own numbers travel with the table: slot accuracy, pooled and per subfield.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert!(
        summary["headline"]["json"]["macro_by_subfield"].is_object(),
        "{summary}"
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(summary["headline"]["text"].as_str().unwrap()),
        "{printed}"
    );
    let (_, _, rows) = common::only_run(&data);
    assert_eq!(calls.load(Ordering::SeqCst), 2 * rows.len());
    for r in &rows {
        assert!(r.response.as_deref().unwrap().contains("<answer>"), "{r:?}");
        assert_eq!(r.input_tokens, 20);
    }
}

/// AtomWorld's headline says so when no answer failed, instead of "0 of 0 failed answers".
#[test]
fn atomworld_headline_says_when_no_answer_failed() {
    let cif = common::nacl_conventional();
    let prompt = "Remove the atom at index 0 from the cif file.";
    let target = benchmarks::atomworld::task::resolve(&cif, prompt, None)
        .unwrap()
        .target_cif;
    let line = serde_json::json!({"input_cif": cif, "action_prompt": prompt,
        "target_cif": null, "response": format!("<cif>\n{target}\n</cif>")});
    let table = server::cli::eval::run_suite(
        &Registry::standard(),
        "atomworld",
        format!("{line}\n").as_bytes(),
        Vec::new(),
    )
    .unwrap();
    assert!(
        table.contains("Stricter than chemistry: no answer failed"),
        "{table}"
    );
}

/// A provider that records each request's sampling settings and answers `<answer>A</answer>`.
async fn recording() -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(
                    serde_json::json!({"temperature": body["temperature"], "top_p": body["top_p"]}),
                );
                common::completion("<answer>A</answer>", 1)
            }
        }),
    );
    (common::spawn_app(app).await, seen)
}

/// The paper's temperature reaches a model that sets none (MatTools: 0.7); a model's own
/// temperature and `top_p` are sent as configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_sample_at_the_papers_temperature_unless_the_model_sets_its_own() {
    let (base, seen) = recording().await;
    let dir = tempfile::tempdir().unwrap();
    let own = format!(
        "[[models]]\nname = \"own\"\nprovider = \"openai-compatible\"\nmodel = \"o\"\n\
         base_url = \"{base}\"\ntemperature = 0.2\ntop_p = 0.9\n"
    );
    let config = common::fake_model_config(dir.path(), &base, &own);
    for model in ["fake", "own"] {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_atomworld"))
            .args([
                "run",
                "--suite",
                "mattools-qa",
                "--model",
                model,
                "--config",
            ])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join(model))
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let seen = seen.lock().unwrap().clone();
    let half = seen.len() / 2;
    assert!(half > 0);
    assert!(
        seen[..half]
            .iter()
            .all(|s| s["temperature"] == 0.7 && s["top_p"].is_null()),
        "{:?}",
        &seen[..half]
    );
    assert!(
        seen[half..]
            .iter()
            .all(|s| s["temperature"] == 0.2 && s["top_p"] == 0.9),
        "{:?}",
        &seen[half..]
    );
}
