//! The JSON API on a loopback port: models, passcode, rate limit, runs with the reference
//! baseline, exports, share-link cases, and that no response ever contains an API key.

use std::time::Duration;

use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use server::config::{Config, Limits, ModelConfig, ProviderKind};
use server::http::{router, AppState};
use server::llm::{Gateway, GatewayOptions};
use server::storage::Storage;

use crate::common;

use common::{create_run, get_json, get_text, post_json, wait_run};

const KEY: &str = "sk-api-test-SECRET-0b1c2d";

async fn fake_provider(delay: Duration) -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<serde_json::Value>| async move {
            tokio::time::sleep(delay).await;
            if body["stream"] == true {
                let mut events: Vec<String> = ["<cif>", "no", "pe</cif>"]
                    .iter()
                    .map(|p| format!("data: {}\n\n", serde_json::json!({"choices":[{"delta":{"content":p}}]})))
                    .collect();
                events.push("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n".into());
                return ([("content-type", "text/event-stream")], events.concat()).into_response();
            }
            axum::Json(serde_json::json!({"choices":[{"message":{"content":"<cif>nope</cif>"}}],"usage":{"prompt_tokens":10,"completion_tokens":5}})).into_response()
        }),
    );
    let v1 = common::spawn_app(app).await;
    v1
}

async fn start(passcode: Option<&str>, per_minute: u32) -> (String, tempfile::TempDir) {
    start_with(passcode, per_minute, Duration::ZERO).await
}

async fn start_with(
    passcode: Option<&str>,
    per_minute: u32,
    answer_delay: Duration,
) -> (String, tempfile::TempDir) {
    std::env::set_var("AW_API_TEST_KEY", KEY);
    let base = fake_provider(answer_delay).await;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let config = Config {
        models: vec![ModelConfig {
            name: "fake".into(),
            provider: ProviderKind::OpenaiCompatible,
            model: "f".into(),
            base_url: Some(base),
            api_key_env: Some("AW_API_TEST_KEY".into()),
            temperature: None,
            top_p: None,
            max_tokens: None,
            reasoning_effort: None,
            price_input_per_mtok: 1.0,
            price_output_per_mtok: 1.0,
        }],
        limits: Limits::default(),
        ..Config::default()
    };
    let gateway = Gateway::new(
        config,
        storage.clone(),
        GatewayOptions {
            cache: true,
            replay_only: false,
        },
    )
    .unwrap();
    let state = AppState::with_gateway(storage, gateway, passcode.map(str::to_string), per_minute);
    let app = router(state, dir.path());
    let base = common::serve_router(app).await;
    (base, dir)
}

#[tokio::test]
async fn models_complete_and_secrecy() {
    let (base, _d) = start(None, 100).await;
    let c = reqwest::Client::new();
    let models = get_text(&c, format!("{base}/api/models")).await;
    assert!(
        models.contains("\"fake\"")
            && models.contains("\"reference\"")
            && models.contains("copy-input")
    );
    assert!(
        !models.contains("http://"),
        "no upstream URL reaches the browser: {models}"
    );
    let r = c
        .post(format!("{base}/api/complete"))
        .json(&serde_json::json!({"model": "fake", "prompt": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    assert!(body.contains("<cif>nope</cif>"));
    let unknown = c
        .post(format!("{base}/api/complete"))
        .json(&serde_json::json!({"model": "https://evil.example/v1", "prompt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let e: serde_json::Value = unknown.json().await.unwrap();
    assert_eq!(e["error"]["code"], "unknown_model");
    // The streamed variant: pieces, then the completion with tokens and cost.
    let r = c
        .post(format!("{base}/api/complete/stream"))
        .json(&serde_json::json!({"model": "fake", "prompt": "stream it"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let streamed = r.text().await.unwrap();
    let events: Vec<(&str, serde_json::Value)> = streamed
        .split("\n\n")
        .filter_map(|block| {
            let event = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((event, serde_json::from_str(data).unwrap()))
        })
        .collect();
    let pieces: Vec<&str> = events
        .iter()
        .filter(|(e, _)| *e == "delta")
        .map(|(_, d)| d["text"].as_str().unwrap())
        .collect();
    assert_eq!(pieces, ["<cif>", "no", "pe</cif>"]);
    let (last, done) = events.last().unwrap();
    assert_eq!(*last, "done");
    assert_eq!(done["text"], "<cif>nope</cif>");
    assert_eq!(
        (
            done["input_tokens"].as_u64(),
            done["output_tokens"].as_u64()
        ),
        (Some(10), Some(5))
    );
    let unknown_stream = c
        .post(format!("{base}/api/complete/stream"))
        .json(&serde_json::json!({"model": "nobody", "prompt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_stream.status(), 404);
    for text in [models, body, streamed] {
        assert!(!text.contains(KEY));
    }
}

#[tokio::test]
async fn passcode_and_rate_limit() {
    let (base, _d) = start(Some("letmein"), 3).await;
    let c = reqwest::Client::new();
    let ask = |pass: Option<&'static str>| {
        let mut r = c
            .post(format!("{base}/api/complete"))
            .json(&serde_json::json!({"model": "fake", "prompt": "p"}));
        if let Some(p) = pass {
            r = r.bearer_auth(p);
        }
        r.send()
    };
    assert_eq!(ask(None).await.unwrap().status(), 401);
    assert_eq!(ask(Some("wrong")).await.unwrap().status(), 401);
    assert_eq!(ask(Some("letmein")).await.unwrap().status(), 200);
    assert_eq!(
        ask(Some("letmein")).await.unwrap().status(),
        429,
        "the bucket of 3 is spent"
    );
    let health = c.get(format!("{base}/api/health")).send().await.unwrap();
    assert_eq!(health.status(), 200, "free endpoints are not rate limited");
}

#[tokio::test]
async fn runs_exports_and_cases() {
    let (base, _d) = start(None, 100).await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &base,
        serde_json::json!({"model": "reference", "per_action": 2, "seed": 3}),
    )
    .await;
    let run = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["summary"]["overall"]["n"], 20);
    assert_eq!(run["summary"]["overall"]["success_rate"], 1.0);
    let jsonl = get_text(&c, format!("{base}/api/runs/{id}/results?format=jsonl")).await;
    assert_eq!(jsonl.lines().count(), 20);
    let csv = get_text(&c, format!("{base}/api/runs/{id}/results?format=csv")).await;
    assert_eq!(csv.lines().count(), 21);
    assert!(csv.lines().nth(1).unwrap().contains(",Success,"));
    let list = get_text(&c, format!("{base}/api/runs")).await;
    assert!(list.contains(&id));

    let case = serde_json::json!({"v": 1, "prompt": "Remove the atom at index 0.", "response": "<cif>..</cif>"});
    let put = post_json(&c, format!("{base}/api/cases"), &case).await;
    let cid = put["id"].as_str().unwrap();
    assert_eq!(cid.len(), 12);
    let again = post_json(&c, format!("{base}/api/cases"), &case).await;
    assert_eq!(again["id"], put["id"], "content-addressed");
    let got: serde_json::Value = get_json(&c, format!("{base}/api/cases/{cid}")).await;
    assert_eq!(got, case);
    let big = serde_json::json!({"blob": "x".repeat(300 * 1024)});
    assert_eq!(
        c.post(format!("{base}/api/cases"))
            .json(&big)
            .send()
            .await
            .unwrap()
            .status(),
        413
    );
    assert_eq!(
        c.get(format!("{base}/api/cases/000000000000"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let spec = get_json(&c, format!("{base}/api/openapi.json")).await;
    assert_eq!(spec["openapi"], "3.1.0");
}

#[tokio::test]
async fn a_cancelled_run_keeps_its_results_and_resumes_to_the_end() {
    let (base, _d) = start_with(None, 1000, Duration::from_millis(150)).await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &base,
        serde_json::json!({"model": "fake", "per_action": 2, "seed": 5, "concurrency": 1}),
    )
    .await;
    wait_run(&c, &base, &id, |r| {
        r["progress"]["done"].as_u64().unwrap_or(0) >= 3
    })
    .await;
    // Only the run's starter may stop it: its token, given when it started.
    let token = common::run_token(&id);
    for wrong in [None, Some("0123456789abcdef")] {
        let mut r = c.post(format!("{base}/api/runs/{id}/cancel"));
        if let Some(w) = wrong {
            r = r.header(wire::RUN_TOKEN_HEADER, w);
        }
        let refused = r.send().await.unwrap();
        assert_eq!(refused.status(), 403);
        let body: serde_json::Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_your_run", "{body}");
    }
    let cancel = c
        .post(format!("{base}/api/runs/{id}/cancel"))
        .header(wire::RUN_TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    let run = wait_run(&c, &base, &id, |r| r["status"] == "cancelled").await;
    assert_eq!(run["status"], "cancelled", "{run}");
    let kept = run["summary"]["overall"]["n"].as_u64().unwrap();
    assert!((3..20).contains(&kept), "{run}");
    // Not running any more: a second cancel is a conflict.
    let again = c
        .post(format!("{base}/api/runs/{id}/cancel"))
        .header(wire::RUN_TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);

    let resume = c
        .post(format!("{base}/api/runs/{id}/resume"))
        .header(wire::RUN_TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(resume.status(), 202);
    let run = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    let rows: serde_json::Value = get_json(&c, format!("{base}/api/runs/{id}/results")).await;
    let keys: std::collections::BTreeSet<(String, u64)> = rows["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["task_id"].as_str().unwrap().to_string(),
                r["sample"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows["results"].as_array().unwrap().len(),
        20,
        "no duplicates"
    );
    assert_eq!(keys.len(), 20);
    let resume = c
        .post(format!("{base}/api/runs/{id}/resume"))
        .header(wire::RUN_TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(resume.status(), 409, "a finished run has nothing to resume");
    let table = get_text(&c, format!("{base}/api/runs/{id}/results?format=table")).await;
    assert!(table.lines().any(|l| l.starts_with("overall")), "{table}");
    assert!(table.contains("rotate_around"), "{table}");
    let missing = c
        .post(format!("{base}/api/runs/nope/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn run_progress_streams_as_server_sent_events_until_the_end() {
    let (base, _d) = start(None, 1000).await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &base,
        serde_json::json!({"model": "reference", "per_action": 1, "seed": 9}),
    )
    .await;
    let events = c
        .get(format!("{base}/api/runs/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    // The stream ends by itself once the run has finished.
    let body = tokio::time::timeout(Duration::from_secs(60), events.text())
        .await
        .expect("the stream ends")
        .unwrap();
    let data: Vec<serde_json::Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(body.lines().any(|l| l == "event: progress"), "{body}");
    let last = data.last().unwrap();
    assert_eq!(last["status"], "finished", "{body}");
    assert_eq!(
        (last["done"].as_u64(), last["total"].as_u64()),
        (Some(10), Some(10))
    );
    assert_eq!(last["successes"], 10);
    // Progress never goes backwards.
    let done: Vec<u64> = data.iter().filter_map(|d| d["done"].as_u64()).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    let missing = c
        .get(format!("{base}/api/runs/nope/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn imported_tasks_run_through_the_api_and_a_bad_one_is_named() {
    let (base, _d) = start(None, 1000).await;
    let c = reqwest::Client::new();
    let cif = "data_x\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa Na0 0 0 0\nCl Cl1 0.5 0.5 0.5\n";
    let good = serde_json::json!({"id": "t1", "input_cif": cif, "action_prompt": "Remove the atom at index 1 from the cif file.", "target_cif": null});
    let bad = serde_json::json!({"id": "t2", "input_cif": cif, "action_prompt": "Remove the atom at index 9 from the cif file."});
    let r = c
        .post(format!("{base}/api/runs"))
        .json(&serde_json::json!({"model": "reference", "tasks": [good.clone(), bad]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let e: serde_json::Value = r.json().await.unwrap();
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("task t2:"),
        "{e}"
    );
    // Two tasks with one key would store one result over the other: refused, both named.
    let r = c
        .post(format!("{base}/api/runs"))
        .json(&serde_json::json!({"model": "reference", "tasks": [good.clone(), good.clone()]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let e: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        e["error"]["message"],
        "tasks 1 and 2 share the key \"t1\": results would overwrite each other",
        "{e}"
    );
    let id = create_run(
        &c,
        &base,
        serde_json::json!({"model": "reference", "tasks": [good]}),
    )
    .await;
    let run = wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["summary"]["overall"]["n"], 1, "{run}");
    let counts = &run["summary"]["counts"];
    assert_eq!(
        (counts["read"].as_u64(), counts["scored"].as_u64()),
        (Some(1), Some(1)),
        "{run}"
    );
    assert_eq!(run["summary"]["overall"]["success_rate"], 1.0);
    assert_eq!(run["spec"]["tasks"]["imported_from"], "api");
}

/// Tasks a client gives are scored as given: a changed reference answer still "succeeds".
/// Such a run is labelled: its counts, its summary text and `atomworld report` say how many
/// of its tasks are not the server's own.
#[tokio::test]
async fn a_run_of_tasks_the_server_does_not_hold_is_labelled_unverified() {
    let (base, _d) = start(None, 1000).await;
    let c = reqwest::Client::new();
    let listed = get_json(&c, format!("{base}/api/suites/omnimat-cal/tasks")).await;
    let held: Vec<serde_json::Value> = listed["tasks"].as_array().unwrap()[..2]
        .iter()
        .map(|t| t["task"].clone())
        .collect();
    let own = create_run(
        &c,
        &base,
        serde_json::json!({"suite": "omnimat-cal", "model": "reference", "tasks": held}),
    )
    .await;
    let mut forged = held.clone();
    forged[1]["final_answer_list"] = serde_json::json!(["12345"]);
    let theirs = create_run(
        &c,
        &base,
        serde_json::json!({"suite": "omnimat-cal", "model": "reference", "tasks": forged}),
    )
    .await;
    let own = wait_run(&c, &base, &own, |r| r["status"] == "finished").await;
    let theirs = wait_run(&c, &base, &theirs, |r| r["status"] == "finished").await;
    assert_eq!(own["summary"]["counts"]["unverified"], 0, "{own}");
    assert_eq!(theirs["summary"]["counts"]["unverified"], 1, "{theirs}");
    // The forged task still scores as a success: hence the label.
    assert_eq!(
        theirs["summary"]["overall"]["success_rate"], 1.0,
        "{theirs}"
    );
    assert_eq!(theirs["spec"]["tasks"]["unverified"], 1);
}
