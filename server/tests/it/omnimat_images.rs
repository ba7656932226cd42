//! OmniMatBench's multimodal items: a run sends an item's images after its question as data
//! URLs of the files' own bytes (media type from the bytes, not the name), an item whose
//! image is missing is asked of no model and counted apart; the page's image route serves a
//! task's own stems only and refuses paths.

use crate::common;

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use server::config::Config;
use server::http::{router, AppState};
use server::llm::{Gateway, GatewayOptions};
use server::storage::Storage;

/// A fake OpenAI-compatible provider that keeps every request body.
async fn recording_provider() -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    async fn reply(
        axum::extract::State(seen): axum::extract::State<Arc<Mutex<Vec<serde_json::Value>>>>,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> axum::Json<serde_json::Value> {
        seen.lock().unwrap().push(body);
        common::completion("<think>count</think><answer>[\"2\"]</answer>", 10)
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(reply))
        .with_state(seen.clone());
    (common::spawn_app(app).await, seen)
}

fn data_url(media_type: &str, bytes: &[u8]) -> String {
    format!(
        "data:{media_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_sends_the_files_bytes_and_skips_an_item_whose_image_is_missing() {
    let (v1, seen) = recording_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let images = dir.path().join("images");
    std::fs::create_dir(&images).unwrap();
    let png = b"\x89PNG\r\n\x1a\nnot really pixels".to_vec();
    // A GIF under a .jpg name: the media type comes from the bytes.
    let gif = b"GIF89a\x01\x00\x01\x00tiny".to_vec();
    std::fs::write(images.join("t_img_a.png"), &png).unwrap();
    std::fs::write(images.join("t_img_b.jpg"), &gif).unwrap();
    let tasks = dir.path().join("items.jsonl");
    let line = |id: &str, url: &str| {
        serde_json::json!({
            "id": id, "type": "Test", "multimodal": true, "image_url": url,
            "question": format!("Question {id}"), "final_answer_list": ["2"]
        })
        .to_string()
    };
    std::fs::write(
        &tasks,
        format!(
            "{}\n{}\n",
            line("m1", "t_img_a, t_img_b"),
            line("m2", "t_img_missing")
        ),
    )
    .unwrap();
    let config = common::fake_model_config(dir.path(), &v1, "");
    let data = dir.path().join("data");
    let out = common::run_fake(&config, &data)
        .args(["--suite", "omnimat-cal", "--tasks"])
        .arg(&tasks)
        .arg("--images")
        .arg(&images)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One call: m1's, with both images after the text, in the stems' order.
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let content = &bodies[0]["messages"][1]["content"];
    assert_eq!(content[0]["type"], "text");
    assert!(content[0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Question m1"));
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(content[1]["image_url"]["url"], data_url("image/png", &png));
    assert_eq!(content[2]["image_url"]["url"], data_url("image/gif", &gif));
    assert_eq!(content.as_array().unwrap().len(), 3);
    // m2: no call, its own status and group, left out of the figures, counted in the summary.
    let (_, _, rows) = common::only_run(&data);
    let m2 = rows.iter().find(|r| r.task_id == "Test/m2").unwrap();
    assert_eq!(m2.label.as_deref(), Some("ImagesUnavailable"));
    assert_eq!(m2.group, "images unavailable");
    assert_eq!((m2.response.as_deref(), m2.input_tokens), (None, 0));
    let verdict = serde_json::to_value(m2.verdict.as_ref().unwrap()).unwrap();
    let note = verdict["note"].as_str().unwrap();
    assert!(
        note.contains(&format!(
            "images unavailable (stem t_img_missing not found in {})",
            images.display()
        )),
        "{note}"
    );
    let m1 = rows.iter().find(|r| r.task_id == "Test/m1").unwrap();
    assert_eq!(m1.label.as_deref(), Some("Correct"));
    // The stored task is the file's, without the image bytes.
    assert!(m1.task.as_ref().unwrap().get("images").is_none());
    assert!(
        stdout.contains("items skipped, images unavailable (left out of every figure): 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("item accuracy (all slots right, right slot count): exact 1.0000"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_images_folder_multimodal_items_are_unavailable_not_sent() {
    let (v1, seen) = recording_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("items.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\": \"m3\", \"type\": \"Test\", \"image_url\": \"t_img_c\", \"question\": \"q\", \"final_answer_list\": [\"1\"]}\n\
         {\"id\": \"t1\", \"type\": \"Test\", \"question\": \"text only\", \"final_answer_list\": [\"2\"]}\n",
    )
    .unwrap();
    let config = common::fake_model_config(dir.path(), &v1, "");
    let data = dir.path().join("data");
    let out = common::run_fake(&config, &data)
        .env_remove("ATOMWORLD_OMNIMAT_IMAGES_DIR")
        .args(["--suite", "omnimat-cal", "--tasks"])
        .arg(&tasks)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1);
    // The text-only item keeps its plain string content.
    assert_eq!(
        bodies[0]["messages"][1]["content"]
            .as_str()
            .map(|s| s.starts_with("text only")),
        Some(true)
    );
    let (_, _, rows) = common::only_run(&data);
    let m3 = rows.iter().find(|r| r.task_id == "Test/m3").unwrap();
    assert_eq!(m3.label.as_deref(), Some("ImagesUnavailable"));
    let verdict = serde_json::to_value(m3.verdict.as_ref().unwrap()).unwrap();
    assert!(
        verdict["note"]
            .as_str()
            .unwrap()
            .contains("no images directory is configured"),
        "{verdict}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_gets_a_tasks_own_images_and_no_path_leaves_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let images = dir.path().join("images");
    std::fs::create_dir(&images).unwrap();
    std::fs::write(dir.path().join("secret.png"), b"\x89PNG\r\n\x1a\nsecret").unwrap();
    let mut config = Config::default();
    config.suites.omnimat_images_dir = Some(images.clone());
    let storage = Storage::open(&dir.path().join("data")).unwrap();
    let gateway = Gateway::new(config, storage.clone(), GatewayOptions::default()).unwrap();
    let state = AppState::with_gateway(storage, gateway, None, 1000);
    let base = common::serve_router(router(state, dir.path())).await;
    let c = reqwest::Client::new();
    // Our demo item c21 comes with its image, built in, in the listing's messages too.
    let tasks = common::get_json(&c, format!("{base}/api/suites/omnimat-cal/tasks")).await;
    let c21 = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "Materials Physics/c21")
        .unwrap()
        .clone();
    assert_eq!(c21["images"], serde_json::json!(["awp_demo_c21_img"]));
    assert!(c21.get("unavailable").is_none(), "{c21}");
    let shipped = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../benchmarks/data/omnimat_images/awp_demo_c21_img.png"),
    )
    .unwrap();
    assert_eq!(
        c21["messages"][1]["images"][0],
        serde_json::json!({
            "media_type": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(&shipped)
        })
    );
    // The task's key (subfield/id) travels percent-encoded in one path segment.
    let url = |stem: &str| {
        format!("{base}/api/suites/omnimat-cal/tasks/Materials%20Physics%2Fc21/images/{stem}")
    };
    let r = c.get(url("awp_demo_c21_img")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap().to_vec(), shipped);
    // Paths are refused before anything is looked up; stems the task does not name are not
    // found.
    for stem in ["..%2Fsecret", "%2Fetc%2Fpasswd", "a%5Cb", ".hidden"] {
        let r = c.get(url(stem)).send().await.unwrap();
        assert_eq!(r.status(), 400, "{stem}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "bad_request", "{stem}");
    }
    for u in [
        url("secret"),
        format!(
            "{base}/api/suites/omnimat-cal/tasks/Materials%20Physics%2Fc01/images/awp_demo_c21_img"
        ),
        format!("{base}/api/suites/omnimat-cal/tasks/c21/images/awp_demo_c21_img"),
        format!("{base}/api/suites/omnimat-cal/tasks/nope/images/x"),
        format!("{base}/api/suites/mattools-qa/tasks/c21/images/awp_demo_c21_img"),
    ] {
        assert_eq!(c.get(&u).send().await.unwrap().status(), 404, "{u}");
    }
    // Our demo items never have images missing; a text-only one has none.
    let c01 = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "Materials Physics/c01")
        .unwrap();
    assert!(c01.get("images").is_none() && c01.get("unavailable").is_none());
}
