//! Two server instances on one PostgreSQL database: what one stores, the other serves (share
//! links, runs and their reports, rooms and their attempts), and the CLI writes to the same
//! store. Needs a PostgreSQL server (`ATOMWORLD_TEST_POSTGRES`, started by scripts/test.sh;
//! required there).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::common;
use common::{bin, create_run, get_json, get_text, post_json, wait_run, Server};

/// The URL of a fresh database, or `None` when no server is configured (and none required).
fn database() -> Option<String> {
    let mut url = None;
    server::storage::testing::each_postgres(|u| url = Some(u.to_string()));
    url
}

#[tokio::test]
async fn two_instances_share_one_postgres_database() {
    let Some(url) = database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (dir.path().join("a"), dir.path().join("b"));
    let a = Server::start(&a_dir, &["--database", &url], |_| {}).await;
    let b = Server::start(&b_dir, &["--database", &url], |_| {}).await;
    let c = reqwest::Client::new();
    for s in [&a, &b] {
        let health = get_json(&c, format!("{}/api/health", s.base)).await;
        assert_eq!(health["status"], "ok", "{health}");
        assert_eq!(health["database"], "postgres");
    }

    // A case shared through A opens through B.
    let case =
        json!({"v": 1, "prompt": "Remove the atom at index 0.", "response": "<cif>..</cif>"});
    let put = post_json(&c, format!("{}/api/cases", a.base), &case).await;
    let cid = put["id"].as_str().unwrap();
    assert_eq!(
        get_json(&c, format!("{}/api/cases/{cid}", b.base)).await,
        case
    );

    // A run started on A is listed, read and reported on B.
    let id = create_run(
        &c,
        &a.base,
        json!({"model": "reference", "per_action": 1, "seed": 3}),
    )
    .await;
    let run = wait_run(&c, &a.base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    let on_b = get_json(&c, format!("{}/api/runs/{id}", b.base)).await;
    assert_eq!(on_b["summary"]["overall"]["n"], 10, "{on_b}");
    assert_eq!(on_b["summary"]["overall"]["success_rate"], 1.0);
    let list = get_json(&c, format!("{}/api/runs", b.base)).await;
    assert!(list.to_string().contains(&id), "{list}");

    // A room opened on A takes an attempt sent through B; A's tally counts it.
    let room = post_json(
        &c,
        format!("{}/api/rooms", a.base),
        &json!({"name": "Tuesday workshop", "ttl_hours": 2}),
    )
    .await;
    let code = room["code"].as_str().unwrap();
    let token = room["host_token"].as_str().unwrap();
    let prompt = "Remove the atom at index 3 from the cif file.";
    let input = common::nacl_conventional();
    let truth = benchmarks::atomworld::task::resolve(&input, prompt, None).unwrap();
    // A's dashboard waits for the room's first attempt (`?after=0`) while it is sent
    // through B: A hears B's NOTIFY and answers then, long before its own wait runs out.
    let waiting = {
        let (c, url, token) = (
            c.clone(),
            format!("{}/api/rooms/{code}/summary?after=0", a.base),
            token.to_string(),
        );
        tokio::spawn(async move {
            let res = c
                .get(url)
                .header("X-Room-Token", token)
                .send()
                .await
                .unwrap();
            (
                std::time::Instant::now(),
                res.json::<serde_json::Value>().await.unwrap(),
            )
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "a dashboard with nothing new waits");
    let sent_at = std::time::Instant::now();
    let sent = post_json(
        &c,
        format!("{}/api/rooms/{code}/attempts", b.base),
        &json!({"who": "ann", "kind": "hand_edit", "input_cif": input, "prompt": prompt,
                "answer": format!("<cif>\n{}\n</cif>", truth.target_cif)}),
    )
    .await;
    assert_eq!(sent["label"], "Success", "{sent}");
    let (answered_at, woken) = waiting.await.unwrap();
    let after = answered_at.saturating_duration_since(sent_at);
    eprintln!("A's dashboard saw B's attempt {after:?} after it was sent");
    assert_eq!(woken["total"], 1, "{woken}");
    assert!(
        after < server::http::api::SUMMARY_WAIT / 2,
        "woken by the wait running out ({after:?}), not by B's signal"
    );
    let summary: serde_json::Value = c
        .get(format!("{}/api/rooms/{code}/summary", a.base))
        .header("X-Room-Token", token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(summary["total"], 1, "{summary}");
    assert_eq!(summary["latest"][0]["who"], "ann");

    // The CLI reports the run from the same database.
    let report = bin()
        .args(["report", &id, "--format", "json", "--database", &url])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(String::from_utf8_lossy(&report.stdout).contains(&id));
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_only_instance_leaves_its_runs_to_a_worker() {
    let Some(url) = database() else { return };
    let v1 = slow_counting_provider(Arc::new(AtomicUsize::new(0))).await;
    let dir = tempfile::tempdir().unwrap();
    let config = leasing_config(dir.path(), &v1);
    let config = config.to_str().unwrap();
    let a = Server::start(
        &dir.path().join("a"),
        &["--database", &url, "--config", config, "--web-only"],
        |_| {},
    )
    .await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &a.base,
        json!({"model": "fake", "per_action": 10, "seed": 3, "concurrency": 4}),
    )
    .await;
    // Nothing executes it until a worker comes.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let run = get_json(&c, format!("{}/api/runs/{id}", a.base)).await;
    assert_eq!(run["status"], "created", "{run}");
    assert_eq!(stored(&c, &a.base, &id).await, (0, 0));
    // A second run, cancelled while it waits, is never executed.
    let dropped = create_run(
        &c,
        &a.base,
        json!({"model": "fake", "per_action": 10, "seed": 4, "concurrency": 4}),
    )
    .await;
    let cancel = c
        .post(format!("{}/api/runs/{dropped}/cancel", a.base))
        .header(wire::RUN_TOKEN_HEADER, common::run_token(&dropped))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    let mut worker = std::process::Command::new(env!("CARGO_BIN_EXE_atomworld"))
        .args(["worker", "--database", &url, "--config", config])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = wait_finished(&c, &a.base, &id).await;
    let _ = worker.kill();
    let out = worker.wait_with_output().unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(run["status"], "finished", "{run}\n{log}");
    assert_eq!(stored(&c, &a.base, &id).await, (100, 100));
    assert!(log.contains("executing a run no instance held"), "{log}");
    let never = get_json(&c, format!("{}/api/runs/{dropped}", a.base)).await;
    assert_eq!(never["status"], "cancelled", "{never}");
    assert_eq!(stored(&c, &a.base, &dropped).await, (0, 0));
}

#[test]
fn a_bad_database_url_is_refused_with_what_to_give() {
    let out = bin()
        .args(["report", "run-x", "--database", "mysql://u:secret@h/db"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expected postgres://"), "{err}");
    assert!(!err.contains("secret"), "{err}");
    // Web-only or a worker on SQLite: no other instance could execute the runs.
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["serve", "--web-only", "--addr", "127.0.0.1:0"][..],
        &["worker"][..],
    ] {
        let out = bin()
            .args(args)
            .arg("--data-dir")
            .arg(dir.path())
            .env_remove("ATOMWORLD_DATABASE")
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("shared store"), "{err}");
    }
}

/// An OpenAI-compatible fake that takes 20 ms per answer (a wrong one) and counts its calls.
async fn slow_counting_provider(calls: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                common::completion("<cif>nope</cif>", 10)
            }
        }),
    );
    format!("{}/v1", common::serve_router(app).await)
}

/// A configuration whose model `fake` is served at `v1`, holding runs for leases of 3 s
/// (renewed, and claimable runs looked for, every second).
fn leasing_config(dir: &std::path::Path, v1: &str) -> std::path::PathBuf {
    common::fake_model_config(
        dir,
        v1,
        "\n[limits]\nrun_lease_secs = 3\nmax_concurrency_per_provider = 16\n",
    )
}

/// Two instances on database `url` with [`leasing_config`].
async fn leasing_instances(url: &str, v1: &str, dir: &std::path::Path) -> (Server, Server) {
    let config = leasing_config(dir, v1);
    let args = ["--database", url, "--config", config.to_str().unwrap()];
    let a = Server::start(&dir.join("a"), &args, |_| {}).await;
    let b = Server::start(&dir.join("b"), &args, |_| {}).await;
    (a, b)
}

/// Two [`leasing_instances`] A and B on `url` with a [`slow_counting_provider`] counting in
/// `calls`, and a 1,000-task run of that model started through A at `concurrency`; its id.
async fn a_run_through_a(
    url: &str,
    calls: &Arc<AtomicUsize>,
    dir: &std::path::Path,
    seed: u64,
    concurrency: usize,
) -> (Server, Server, String) {
    let v1 = slow_counting_provider(calls.clone()).await;
    let (a, b) = leasing_instances(url, &v1, dir).await;
    let spec =
        json!({"model": "fake", "per_action": 100, "seed": seed, "concurrency": concurrency});
    let id = create_run(&reqwest::Client::new(), &a.base, spec).await;
    (a, b, id)
}

/// The stored results of run `id` as B serves them: (rows, rows with a verdict).
async fn stored(c: &reqwest::Client, base: &str, id: &str) -> (usize, usize) {
    let jsonl = get_text(c, format!("{base}/api/runs/{id}/results?format=jsonl")).await;
    let rows: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scored = rows.iter().filter(|r| !r["verdict"].is_null()).count();
    (rows.len(), scored)
}

/// How many of run `id`'s stored results came from the response cache: a task whose prompt
/// an earlier task of the run already asked, once that answer was stored (whether the two
/// overlapped in flight depends on timing).
async fn cached_results(c: &reqwest::Client, base: &str, id: &str) -> usize {
    let jsonl = get_text(c, format!("{base}/api/runs/{id}/results?format=jsonl")).await;
    jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["cached"] == true)
        .count()
}

/// Polls run `id` on `base` until it has finished, for a minute at most; its last state.
async fn wait_finished(c: &reqwest::Client, base: &str, id: &str) -> serde_json::Value {
    let mut run = json!(null);
    for _ in 0..240 {
        run = get_json(c, format!("{base}/api/runs/{id}")).await;
        if run["status"] == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    run
}

/// Polls run `id`'s stored results on `base` until there are `n`, for 30 s at most; the last
/// count (rows, scored rows).
async fn wait_stored(c: &reqwest::Client, base: &str, id: &str, n: usize) -> (usize, usize) {
    let mut seen = (0, 0);
    for _ in 0..600 {
        seen = stored(c, base, id).await;
        if seen.0 >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_survives_its_instance_killed_mid_run() {
    let Some(url) = database() else { return };
    let calls = Arc::new(AtomicUsize::new(0));
    let dir = tempfile::tempdir().unwrap();
    let (a, b, id) = a_run_through_a(&url, &calls, dir.path(), 3, 16).await;
    let c = reqwest::Client::new();
    // Kill A once it has stored a good part of the run, but far from all of it.
    let before = wait_stored(&c, &b.base, &id, 150).await;
    a.kill();
    let calls_at_kill = calls.load(Ordering::SeqCst);
    assert!(
        (150..1_000).contains(&before.0),
        "A stored {} results before the kill",
        before.0
    );
    // B takes the run over once A's lease runs out, and finishes it.
    let run = wait_finished(&c, &b.base, &id).await;
    assert_eq!(run["status"], "finished", "{run}");
    let (rows, scored) = stored(&c, &b.base, &id).await;
    assert_eq!((rows, scored), (1_000, 1_000), "one scored row per task");
    let total = calls.load(Ordering::SeqCst);
    let cached = cached_results(&c, &b.base, &id).await;
    // Every task asked once (or answered from the cache), but those A had in flight when it
    // died (16 at most, the run's concurrency), which B asked again.
    assert!(
        total <= 1_000 + 16,
        "{total} provider calls ({calls_at_kill} when A was killed)"
    );
    assert!(
        total + cached >= 1_000,
        "{total} provider calls, {cached} cached results"
    );
    eprintln!(
        "killed A after {} stored results and {calls_at_kill} provider calls; B finished: \
         {rows} results, {total} calls in all",
        before.0
    );
    let log = b.stop();
    assert!(log.contains("executing a run no instance held"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_execute_one_run_slice_by_slice() {
    let Some(url) = database() else { return };
    let calls = Arc::new(AtomicUsize::new(0));
    let dir = tempfile::tempdir().unwrap();
    // 1,000 tasks at 2 calls at a time: about 10 s for one instance alone.
    let (a, b, id) = a_run_through_a(&url, &calls, dir.path(), 5, 2).await;
    let c = reqwest::Client::new();
    let run = wait_finished(&c, &b.base, &id).await;
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(stored(&c, &a.base, &id).await, (1_000, 1_000));
    // Every task asked once or answered from the cache (a prompt asked before): no slice
    // was executed twice.
    let cached = cached_results(&c, &a.base, &id).await;
    assert_eq!(
        calls.load(Ordering::SeqCst) + cached,
        1_000,
        "{cached} cached results"
    );
    // Both instances executed slices of it: A, which holds the run, and B, helping.
    let store =
        server::storage::Storage::open_at(&server::storage::Location::Postgres(url.clone()))
            .unwrap();
    let owners = store.slice_owners(&id).unwrap();
    let slices: usize = owners.iter().map(|(_, n)| n).sum();
    assert_eq!(slices, 1_000usize.div_ceil(16), "{owners:?}");
    assert!(
        owners.iter().any(|(o, _)| o.ends_with("/helper"))
            && owners.iter().any(|(o, _)| !o.ends_with("/helper")),
        "{owners:?}"
    );
    eprintln!("slices done per instance: {owners:?}; {cached} results from the cache");
    let log = b.stop();
    assert!(log.contains("helping another instance"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_cancelled_and_resumed_through_the_other_instance() {
    let Some(url) = database() else { return };
    let v1 = slow_counting_provider(Arc::new(AtomicUsize::new(0))).await;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = leasing_instances(&url, &v1, dir.path()).await;
    let c = reqwest::Client::new();
    // One task at a time, 20 ms each: about 20 s for the whole run.
    let id = create_run(
        &c,
        &a.base,
        json!({"model": "fake", "per_action": 100, "seed": 3, "concurrency": 1}),
    )
    .await;
    wait_stored(&c, &b.base, &id, 20).await;
    let post = |what: &'static str| {
        c.post(format!("{}/api/runs/{id}/{what}", b.base))
            .header(wire::RUN_TOKEN_HEADER, common::run_token(&id))
            .send()
    };
    assert_eq!(post("cancel").await.unwrap().status(), 202);
    let run = wait_run(&c, &b.base, &id, |r| r["status"] == "cancelled").await;
    assert_eq!(run["status"], "cancelled", "{run}");
    let kept = stored(&c, &b.base, &id).await.0;
    assert!((20..1_000).contains(&kept), "{kept} results when cancelled");
    // Resumed through B, which executes it now (A gave its lease back when it stopped).
    assert_eq!(post("resume").await.unwrap().status(), 202);
    let run = wait_finished(&c, &b.base, &id).await;
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(stored(&c, &b.base, &id).await, (1_000, 1_000));
    let log = a.stop();
    assert!(log.contains("cancelled through another instance"), "{log}");
}

/// The pymatgen sandbox lives on a worker only (`worker --role sandbox`): an instance
/// without it scores MatTools' code through the worker, and says so in its health; with the
/// worker gone it says the sandbox is unavailable again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_worker_runs_the_code_of_an_instance_without_the_sandbox() {
    let Some(url) = database() else { return };
    let data = common::mattools_data();
    if let Err(e) = server::cli::eval::context("mattools-code", Some(&data), None) {
        assert!(!common::required(), "{e:?} (required under CI)");
        eprintln!("SKIPPED: {e:?}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let without = dir.path().join("no-pymatgen.toml");
    std::fs::write(&without, "[sandbox.pymatgen]\nbackend = \"none\"\n").unwrap();
    let a = Server::start(
        &dir.path().join("a"),
        &["--database", &url, "--config", without.to_str().unwrap()],
        |cmd| {
            cmd.env("ATOMWORLD_MATTOOLS_DIR", &data);
        },
    )
    .await;
    let c = reqwest::Client::new();
    let health = get_json(&c, format!("{}/api/health", a.base)).await;
    assert_eq!(health["pymatgen"]["available"], false, "{health}");

    let worker = std::process::Command::new(env!("CARGO_BIN_EXE_atomworld"))
        .args(["worker", "--role", "sandbox", "--database", &url])
        .env("ATOMWORLD_MATTOOLS_DIR", &data)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let health = loop {
        let h = get_json(&c, format!("{}/api/health", a.base)).await;
        if h["pymatgen"]["available"] == true {
            break h;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the worker never showed: {h}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        health["pymatgen"]["detail"]
            .as_str()
            .unwrap()
            .contains("1 worker"),
        "{health}"
    );
    let task = common::listed_task(&a.base, "mattools-code", "test_antisite_generator").await;
    let score = |response: String| {
        let (c, url) = (c.clone(), format!("{}/api/score", a.base));
        let body = json!({"suite": "mattools-code", "task": task, "response": response});
        async move { post_json(&c, url, &body).await }
    };
    let right = score(common::mattools_answer(common::ANTISITE_NAMES, "names")).await;
    assert_eq!(right["outcome"]["label"], "Success", "{right}");
    let wrong = score(common::mattools_answer(
        &common::ANTISITE_NAMES.replace("d.name", "d.nmae"),
        "names",
    ))
    .await;
    assert_eq!(wrong["outcome"]["label"], "FunctionError", "{wrong}");
    assert_eq!(
        wrong["verdict"]["error_class"], "ApiHallucination",
        "{wrong}"
    );

    // SIGTERM: the worker leaves the store's list, and A no longer counts on it.
    let pid = worker.id().to_string();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    let out = worker.wait_with_output().unwrap();
    let log =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("AtomWorld worker (sandbox; sandbox environments:")
            && log.contains("pymatgen)"),
        "{log}"
    );
    let health = get_json(&c, format!("{}/api/health", a.base)).await;
    assert_eq!(health["pymatgen"]["available"], false, "{health}\n{log}");
    drop(a);
}
