//! OmniMatBench with code execution (`--agent python`, our own setting) through the binary:
//! the model's program runs in the embedded wasm sandbox and its output comes back to the
//! model; every step is stored. Needs the `wasm-sandbox` feature (scripts/test.sh runs it).
#![cfg(feature = "wasm-sandbox")]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use server::storage::Storage;

/// A model that first asks to run a program, then answers with what the program printed.
async fn reply(
    axum::extract::State(calls): axum::extract::State<Arc<AtomicUsize>>,
    axum::Json(body): axum::Json<serde_json::Value>,
) -> axum::Json<serde_json::Value> {
    calls.fetch_add(1, Ordering::SeqCst);
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("You can run Python"), "{system}");
    let last = messages.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default();
    let content = match last.strip_prefix("<output>\n") {
        Some(output) => {
            let printed = output.lines().next().unwrap_or_default();
            format!("<think>ran it</think><answer>[\"{printed}\"]</answer>")
        }
        None => {
            "Let me compute it.\n<python>\nimport math\nprint(math.factorial(5) - 78)\n</python>"
                .to_string()
        }
    };
    common::completion(&content, 10)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_program_runs_and_its_output_reaches_the_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(reply))
        .with_state(calls.clone());
    let v1 = common::spawn_app(app).await;
    let dir = tempfile::tempdir().unwrap();
    let config = common::fake_model_config(dir.path(), &v1, "");
    let data = dir.path().join("data");
    let run = |suite: &'static str| {
        common::run_fake(&config, &data)
            .args(["--suite", suite, "--agent", "python"])
            .output()
    };
    let out = run("omnimat-cal").await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let storage = Storage::open(&data).unwrap();
    let (id, spec, _) = storage.list_runs().unwrap().remove(0);
    assert_eq!(spec.agent.as_deref(), Some("python"));
    let rows = storage.results(&id).unwrap();
    assert!(!rows.is_empty());
    // Two calls per task: the program, then the answer.
    assert_eq!(calls.load(Ordering::SeqCst), 2 * rows.len());
    for r in &rows {
        assert_eq!(
            r.response.as_deref(),
            Some("<think>ran it</think><answer>[\"42\"]</answer>")
        );
        let rounds = r.transcript.as_ref().unwrap().as_array().unwrap();
        assert_eq!(rounds.len(), 2, "{rounds:?}");
        assert_eq!(
            rounds[0]["code"],
            "import math\nprint(math.factorial(5) - 78)"
        );
        assert_eq!(rounds[0]["run"]["stdout"], "42\n", "{rounds:?}");
        assert_eq!(rounds[0]["run"]["exit_code"], 0);
        assert!(rounds[1]["code"].is_null());
        assert_eq!(r.input_tokens, 20);
    }

    // The agent is refused where it does not belong.
    let out = run("atomworld").await.unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("answers omnimat-cal and omnimat-qa"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
