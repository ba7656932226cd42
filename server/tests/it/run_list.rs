//! `GET /api/runs` is a page of brief rows, not every run's tasks: twenty stored runs of a
//! thousand tasks each list in a few kilobytes, page by page, and twenty clients reading the
//! list at once leave health answering within 200 ms.

use crate::common;

use std::time::Duration;

use common::{get_json, HealthProbe, Server};
use server::storage::Storage;
use wire::{ImportedTasks, RunSpec, RunStatus, TaskSource};

/// Twenty finished runs (alternately two suites) of 1,000 tasks of about 1 KB each.
fn store_big_runs(data: &std::path::Path) -> Vec<String> {
    let storage = Storage::open(data).unwrap();
    let task = |n: usize| {
        serde_json::json!({"id": format!("t{n}"), "input_cif": "x".repeat(1000),
                           "action_prompt": "Remove the atom at index 0."})
    };
    let tasks: Vec<serde_json::Value> = (0..1000).map(task).collect();
    (0..20)
        .map(|i| {
            let spec = RunSpec {
                suite: if i % 2 == 0 {
                    "atomworld"
                } else {
                    "cif-repair"
                }
                .into(),
                tasks: TaskSource::Imported(ImportedTasks {
                    imported_from: "big.jsonl".into(),
                    tasks: tasks.clone(),
                    skipped: Vec::new(),
                    unverified: 0,
                }),
                model: format!("model-{i}"),
                samples: 3,
                concurrency: 1,
                agent: None,
                embeddings: None,
                condition: (i == 19).then(|| "K = 5".to_string()),
                batch: false,
            };
            let id = storage.create_run(&spec).unwrap();
            storage.set_status(&id, RunStatus::Finished).unwrap();
            id
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_list_is_brief_paged_and_cheap_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let ids = store_big_runs(&dir.path().join("data"));
    let server = Server::start(dir.path(), &["--rate-limit", "100000"], |_| {}).await;
    let base = server.base.clone();
    let c = reqwest::Client::new();

    let body = c
        .get(format!("{base}/api/runs"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.len() < 8_000, "{} bytes", body.len());
    let all: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(all["total"], 20);
    let runs = all["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 20);
    // Newest first, each brief: suite, model, repeats, how many tasks, status; no tasks.
    assert_eq!(runs[0]["id"], ids[19].as_str());
    assert_eq!(runs[0]["suite"], "cif-repair");
    assert_eq!(runs[0]["model"], "model-19");
    assert_eq!(runs[0]["condition"], "K = 5");
    assert_eq!(runs[0]["samples"], 3);
    assert_eq!(runs[0]["given_tasks"], 1000);
    assert_eq!(runs[0]["status"], "finished");
    assert!(runs[0].get("spec").is_none() && !body.contains("xxxxxxxx"));

    let page = get_json(&c, format!("{base}/api/runs?limit=5&offset=18")).await;
    let page_ids: Vec<&str> = page["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(page_ids, [ids[1].as_str(), ids[0].as_str()]);
    assert_eq!(
        (page["total"].as_u64(), page["limit"].as_u64()),
        (Some(20), Some(5))
    );
    let repairs = get_json(&c, format!("{base}/api/runs?suite=cif-repair&limit=3")).await;
    assert_eq!(repairs["total"], 10);
    assert!(repairs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["suite"] == "cif-repair"));
    let clamped = get_json(&c, format!("{base}/api/runs?limit=100000")).await;
    assert_eq!(clamped["limit"], wire::RunListQuery::MAX_LIMIT);

    // Twenty clients read the list five times each; health stays quick meanwhile.
    let probe = HealthProbe::start(&base);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let readers: Vec<_> = (0..20)
        .map(|_| {
            let (c, url) = (c.clone(), format!("{base}/api/runs"));
            tokio::spawn(async move {
                for _ in 0..5 {
                    let r = c
                        .get(&url)
                        .header("accept-encoding", "br")
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status(), 200);
                    let _ = r.bytes().await.unwrap();
                }
            })
        })
        .collect();
    for r in readers {
        r.await.unwrap();
    }
    let times = probe.stop();
    let slowest = times.iter().max().unwrap();
    assert!(times.len() >= 2, "{times:?}");
    assert!(
        *slowest <= Duration::from_millis(200),
        "health took {slowest:?} while the list was read"
    );
    println!("health: {} answers, slowest {slowest:?}", times.len());
    server.stop();
}
