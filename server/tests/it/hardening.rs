//! The server as an attacker or a careless operator would try it, through the real binary:
//! a provider that echoes the key, spend caps under concurrency, and the limits that keep
//! one request from taking the server down.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use common::{bin, create_run, get_json, nacl_conventional, Server};

const KEY: &str = "sk-live-ECHOED-0123456789abcdefXYZ";

/// A provider that puts the Authorization header it got into everything it says: error
/// bodies (the key straddling the 300th character), stream error events and answer text.
async fn echoing_provider() -> String {
    async fn answer(
        State(n): State<Arc<AtomicUsize>>,
        headers: HeaderMap,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> Response {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
        let k = n.fetch_add(1, Ordering::SeqCst);
        if prompt.contains("stream-error") {
            let event = serde_json::json!({"error": {"message": format!("bad key {auth}")}});
            return sse(vec![format!("data: {event}\n\n")]);
        }
        if prompt.contains("stream-echo") {
            // The key split across three events, inside an otherwise good answer.
            let (a, rest) = auth.split_at(12);
            let (b, c) = rest.split_at(9);
            let mut events: Vec<String> = ["your key is ", a, b, c, " ok"]
                .iter()
                .map(|p| {
                    let chunk = serde_json::json!({"choices": [{"delta": {"content": p}}]});
                    format!("data: {chunk}\n\n")
                })
                .collect();
            events.push("data: [DONE]\n\n".into());
            return sse(events);
        }
        // Server errors are retried (and logged) before the error reaches the caller.
        let message = format!("{}{auth} is not valid (attempt {k})", "x".repeat(290));
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(serde_json::json!({"error": {"message": message}})),
        )
            .into_response()
    }
    fn sse(events: Vec<String>) -> Response {
        let chunks = futures_util::stream::iter(
            events
                .into_iter()
                .map(Ok::<_, std::convert::Infallible>)
                .collect::<Vec<_>>(),
        );
        (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(chunks),
        )
            .into_response()
    }
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(Arc::new(AtomicUsize::new(0)));
    common::spawn_app(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_echoing_the_key_never_gets_it_shown_or_logged() {
    let base = echoing_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[models]]\nname = \"echo\"\nprovider = \"openai-compatible\"\nmodel = \"e\"\n\
             base_url = \"{base}\"\napi_key_env = \"AW_ECHO_KEY\"\n\n[limits]\nmax_retries = 2\n\
             backoff_base_ms = 10\nbackoff_max_ms = 20\n"
        ),
    )
    .unwrap();
    let server = Server::start(dir.path(), &["--config", cfg.to_str().unwrap()], |c| {
        c.env("AW_ECHO_KEY", KEY);
    })
    .await;
    let c = reqwest::Client::new();
    let mut shown = String::new();
    for (path, prompt) in [
        ("/api/complete", "plain"),
        ("/api/complete/stream", "plain"),
        ("/api/complete/stream", "stream-error"),
        ("/api/complete/stream", "stream-echo"),
    ] {
        let r = c
            .post(format!("{}{path}", server.base))
            .json(&serde_json::json!({"model": "echo", "prompt": prompt}))
            .send()
            .await
            .unwrap();
        shown.push_str(&r.text().await.unwrap());
    }
    let log = server.stop();
    // The requests went through every path: retried errors, stream errors, echoed text.
    assert!(log.contains("retrying"), "{log}");
    assert!(shown.contains("event: error"), "{shown}");
    assert!(shown.contains("your key is "), "{shown}");
    for (what, text) in [("responses", &shown), ("log", &log)] {
        // Not whole, not in part: no 10-character piece of the key anywhere.
        for i in 0..KEY.len() - 10 {
            assert!(
                !text.contains(&KEY[i..i + 10]),
                "{what} hold part of the key: {}",
                &KEY[i..i + 10]
            );
        }
        assert!(text.contains("[redacted]"), "{what}: {text}");
    }
}

/// A provider whose every answer costs 1,000 input and 500 output tokens, after a short
/// wait so that calls overlap.
async fn priced_provider() -> (Arc<AtomicUsize>, String) {
    async fn answer(State(n): State<Arc<AtomicUsize>>) -> axum::Json<serde_json::Value> {
        n.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(40)).await;
        axum::Json(serde_json::json!({
            "choices": [{"message": {"content": "no tags"}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500}
        }))
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(hits.clone());
    (hits, common::spawn_app(app).await)
}

/// `atomworld run` at concurrency 32 under `limits`; the summary's cost.
fn capped_run(dir: &std::path::Path, base: &str, limits: &str) -> f64 {
    let cfg = dir.join("config.toml");
    // $1/M input, $10/M output: a call costs $0.006; max_tokens 600 bounds its worst case
    // by prompt bytes × $1/M + $0.006.
    std::fs::write(
        &cfg,
        format!(
            "[[models]]\nname = \"paid\"\nprovider = \"openai-compatible\"\nmodel = \"p\"\n\
             base_url = \"{base}\"\nmax_tokens = 600\nprice_input_per_mtok = 1.0\n\
             price_output_per_mtok = 10.0\n\n[limits]\nmax_concurrency_per_provider = 32\n{limits}"
        ),
    )
    .unwrap();
    let out = dir.join("summary.json");
    let run = bin()
        .args([
            "run",
            "--model",
            "paid",
            "--per-action",
            "10",
            "--seed",
            "3",
        ])
        .args(["--concurrency", "32", "--no-cache", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(&cfg)
        .arg("--summary-json")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("spend cap"), "{stderr}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    s["cost_usd"].as_f64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spend_caps_hold_at_concurrency_32() {
    // A bound on one call's worst case: every prompt of the set is below 16 KB.
    let worst = 16_384.0 * 1e-6 + 64e-6 + 600.0 * 10e-6;
    let (_, base) = priced_provider().await;
    let dir = tempfile::tempdir().unwrap();
    let spent = capped_run(dir.path(), &base, "run_spend_usd = 0.10\n");
    assert!(
        spent >= 0.10 - 0.006 && spent <= 0.10 + worst,
        "run cap: ${spent}"
    );

    let dir = tempfile::tempdir().unwrap();
    let spent = capped_run(dir.path(), &base, "daily_spend_usd = 0.05\n");
    assert!(
        spent >= 0.05 - 0.006 && spent <= 0.05 + worst,
        "daily cap: ${spent}"
    );
}

/// 400 atom sites under 997 symmetry operations: about 400,000 sites once expanded.
fn symmetry_bomb() -> String {
    let ops: String = (0..997).map(|k| format!("'x+{k}/997, y, z'\n")).collect();
    let rows: String = (0..400)
        .map(|k| format!("Na{k} Na 0.{k:03} 0.1 0.2\n"))
        .collect();
    format!(
        "data_bomb\n_cell_length_a 5\n_cell_length_b 5\n_cell_length_c 5\n_cell_angle_alpha 90\n\
         _cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_symmetry_equiv_pos_as_xyz\n{ops}loop_\n\
         _atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
         _atom_site_fract_z\n{rows}"
    )
}

/// A fake model that answers every prompt with `answer` after `delay`.
async fn answering_provider(answer: String, delay: Duration) -> String {
    async fn reply(
        State((answer, delay)): State<(Arc<String>, Duration)>,
    ) -> axum::Json<serde_json::Value> {
        tokio::time::sleep(delay).await;
        axum::Json(serde_json::json!({
            "choices": [{"message": {"content": answer.as_str()}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10}
        }))
    }
    let app = Router::new()
        .route("/v1/chat/completions", post(reply))
        .with_state((Arc::new(answer), delay));
    common::spawn_app(app).await
}

fn model_config(dir: &std::path::Path, base: &str, extra_limits: &str) -> std::path::PathBuf {
    common::fake_model_config(dir, base, &format!("\n[limits]\n{extra_limits}"))
}

/// Polls `/api/health` every 25 ms until `done` says stop or `limit` passes; the slowest
/// answer.
async fn slowest_health(base: &str, limit: Duration, done: impl Fn() -> bool) -> Duration {
    let c = reqwest::Client::new();
    let started = std::time::Instant::now();
    let mut worst = Duration::ZERO;
    while started.elapsed() < limit && !done() {
        let t = std::time::Instant::now();
        let r = c.get(format!("{base}/api/health")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        worst = worst.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    worst
}

async fn run_status(base: &str, id: &str) -> serde_json::Value {
    get_json(&reqwest::Client::new(), format!("{base}/api/runs/{id}")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_tasks_never_stall_health_and_shutdown_is_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("nacl.cif");
    std::fs::write(&input, nacl_conventional()).unwrap();
    let prompt = "Create a supercell with the size 10*12*20.";
    // The 19,200-site target, and an answer with one atom nudged (a real match to make).
    let target = bin()
        .args(["apply", "--cif"])
        .arg(&input)
        .args(["--prompt", prompt])
        .output()
        .unwrap();
    assert!(target.status.success());
    let target = String::from_utf8(target.stdout).unwrap();
    let nudged = target.replacen(
        "  0.00000000  0.00000000  0.00000000",
        "  0.00100000  0.00000000  0.00000000",
        1,
    );
    assert_ne!(nudged, target);
    let base = answering_provider(format!("<cif>\n{nudged}\n</cif>"), Duration::ZERO).await;
    let cfg = model_config(dir.path(), &base, "match_budget_secs = 5\n");
    let server = Server::start(dir.path(), &["--config", cfg.to_str().unwrap()], |_| {}).await;
    let c = reqwest::Client::new();

    // The symmetry bomb is refused at once, with where and why.
    let bomb = c
        .post(format!("{}/api/runs", server.base))
        .json(&serde_json::json!({"model": "reference", "tasks": [{
            "id": "bomb", "input_cif": symmetry_bomb(),
            "action_prompt": "Remove the atom at index 0 from the cif file."}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bomb.status(), 400);
    let text = bomb.text().await.unwrap();
    assert!(text.contains("limit is 100000"), "{text}");

    // Two runs of the 19,200-site task.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let body = serde_json::json!({"model": "fake", "tasks": [{
            "id": "big", "input_cif": nacl_conventional(), "action_prompt": prompt}]});
        ids.push(create_run(&c, &server.base, body).await);
    }
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (b, ids2, f) = (server.base.clone(), ids.clone(), finished.clone());
    let watcher = tokio::spawn(async move {
        loop {
            let mut all = true;
            for id in &ids2 {
                all &= run_status(&b, id).await["status"] == "finished";
            }
            if all {
                f.store(true, Ordering::SeqCst);
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let worst = slowest_health(&server.base, Duration::from_secs(90), || {
        finished.load(Ordering::SeqCst)
    })
    .await;
    watcher.abort();
    assert!(finished.load(Ordering::SeqCst), "the runs did not finish");
    eprintln!("slowest health answer while two 19,200-site answers were scored: {worst:?}");
    assert!(worst < Duration::from_millis(200), "health took {worst:?}");
    for id in &ids {
        let results = get_json(&c, format!("{}/api/runs/{id}/results", server.base)).await;
        let label = results["results"][0]["label"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        eprintln!("{label}: {}", results["results"][0]["verdict"]["detail"]);
        assert!(
            label == "Success" || label == "EvaluationTimeout",
            "{label}: {}",
            results["results"][0]["verdict"]["detail"]
        );
    }

    // A third run in flight does not hold up SIGTERM.
    c.post(format!("{}/api/runs", server.base))
        .json(&serde_json::json!({"model": "fake", "tasks": [{
            "id": "big2", "input_cif": nacl_conventional(), "action_prompt": prompt}]}))
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let took = server.stop_within(Duration::from_secs(10));
    // The promise: requests in flight get 3 s, then the server exits. The run's match would
    // take its whole 20 s budget if it held the exit up; 3 s plus up to 1 s for the runtime
    // to wind down on a loaded 2-core machine is what the promise allows.
    eprintln!("SIGTERM to exit with a run in flight: {took:?}");
    assert!(took.is_some_and(|t| t < Duration::from_secs(4)), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_makes_no_progress_across_restarts_is_held() {
    let dir = tempfile::tempdir().unwrap();
    // A provider that never answers in time: the run can make no progress.
    let base = answering_provider("<cif></cif>".into(), Duration::from_secs(600)).await;
    let cfg = model_config(dir.path(), &base, "");
    let args = ["--config", cfg.to_str().unwrap()];
    let server = Server::start(dir.path(), &args, |_| {}).await;
    let id = create_run(
        &reqwest::Client::new(),
        &server.base,
        serde_json::json!({"model": "fake", "tasks": [{
            "id": "t", "input_cif": nacl_conventional(),
            "action_prompt": "Remove the atom at index 0 from the cif file."}]}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.kill();
    // First restart: resumed.
    let server = Server::start(dir.path(), &args, |_| {}).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = server.stop();
    assert!(log.contains("resuming run"), "{log}");
    // Second restart, still no progress: held and reported, not resumed.
    let server = Server::start(dir.path(), &args, |_| {}).await;
    let status = run_status(&server.base, &id).await;
    assert_eq!(status["status"], "interrupted", "{status}");
    let log = server.stop();
    assert!(log.contains("marked interrupted"), "{log}");
    assert!(!log.contains("resuming run"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_case_store_has_a_passcode_quotas_and_says_why_it_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, "[cases]\nmax_per_client = 3\nttl_days = 30\n").unwrap();
    let server = Server::start(
        dir.path(),
        &["--config", cfg.to_str().unwrap(), "--rate-limit", "6"],
        |c| {
            c.env("ATOMWORLD_PASSCODE", "open-sesame");
        },
    )
    .await;
    let c = reqwest::Client::new();
    let put = |n: u32, pass: Option<&'static str>| {
        let mut r = c
            .post(format!("{}/api/cases", server.base))
            .json(&serde_json::json!({"case": n}));
        if let Some(p) = pass {
            r = r.bearer_auth(p);
        }
        r.send()
    };
    let e = put(0, None).await.unwrap();
    assert_eq!(e.status(), 401);
    for n in 1..=3 {
        assert_eq!(put(n, Some("open-sesame")).await.unwrap().status(), 201);
    }
    let full = put(4, Some("open-sesame")).await.unwrap();
    assert_eq!(full.status(), 429);
    let body: serde_json::Value = full.json().await.unwrap();
    assert_eq!(body["error"]["code"], "case_quota", "{body}");
    // Reading a stored case needs nothing.
    let r: serde_json::Value = put(1, Some("open-sesame"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = r["id"].as_str().unwrap().to_string();
    let got = c
        .get(format!("{}/api/cases/{id}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    // The rate limit counts refused passcodes too, and says so.
    let locked = put(5, Some("wrong")).await.unwrap();
    assert_eq!(locked.status(), 429);
    assert!(locked.headers().contains_key("retry-after"));
    let body: serde_json::Value = locked.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("wrong passcode"),
        "{body}"
    );
}

/// A workshop behind one NAT address: each participant's browser session has its own
/// allowance (the page names its session), all of them together twenty times one; a session
/// that spends its own is told so, and so is one beyond the address's. (With one bucket per
/// address, the fourth request of the room was refused.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_behind_one_address_is_many_clients() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--rate-limit", "3"], |_| {}).await;
    let c = reqwest::Client::new();
    let put = |session: String| {
        c.post(format!("{}/api/cases", server.base))
            .header(wire::SESSION_HEADER, session)
            .json(&serde_json::json!({"case": 1}))
            .send()
    };
    let session = |n: usize| format!("participant-{n:06}");
    for n in 0..20 {
        for _ in 0..3 {
            assert_eq!(put(session(n)).await.unwrap().status(), 201, "session {n}");
        }
    }
    let message = |r: reqwest::Response| async move {
        assert_eq!(r.status(), 429);
        let body: serde_json::Value = r.json().await.unwrap();
        body["error"]["message"].as_str().unwrap().to_string()
    };
    let own = message(put(session(0)).await.unwrap()).await;
    assert!(
        own.starts_with("this browser session has made more than 3 requests"),
        "{own}"
    );
    let shared = message(put(session(20)).await.unwrap()).await;
    assert!(
        shared.starts_with("the sessions of this address have made more than 60 together"),
        "{shared}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connection_floods_are_capped_and_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "--max-connections-per-client",
            "100",
            "--header-timeout-secs",
            "1",
        ],
        |_| {},
    )
    .await;
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    // 300 connections from 127.0.0.2 that never send a byte.
    let mut idle = Vec::new();
    for _ in 0..300 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        idle.push(socket.connect(addr).await.unwrap());
    }
    // Another client is served throughout.
    let worst = slowest_health(&server.base, Duration::from_millis(600), || false).await;
    assert!(worst < Duration::from_millis(200), "{worst:?}");
    // Past the cap, the flood's connections were closed at once; the rest close after the
    // header timeout.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut open = 0;
    for s in &idle {
        let mut buf = [0u8; 1];
        match s.try_read(&mut buf) {
            Ok(0) => {}                                                        // closed
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => open += 1, // still open
            _ => {}
        }
    }
    assert_eq!(open, 0, "{open} idle connections still open");
    drop(idle);
    let worst = slowest_health(&server.base, Duration::from_millis(200), || false).await;
    assert!(worst < Duration::from_millis(200));
}

/// Connections that send nothing from a few addresses fill every slot (each address under
/// its own cap); another address is still served: its connection takes the slot of the
/// heaviest address's oldest silent one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_from_a_few_addresses_do_not_lock_out_another() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "--max-connections",
            "40",
            "--max-connections-per-client",
            "20",
            "--header-timeout-secs",
            "60",
        ],
        |_| {},
    )
    .await;
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    // 127.0.0.2 and 127.0.0.3 open 20 each and never send a byte: all 40 slots.
    let mut silent = Vec::new();
    for host in [2u8, 3] {
        for _ in 0..20 {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket
                .bind(std::net::SocketAddr::from(([127, 0, 0, host], 0)))
                .unwrap();
            silent.push(socket.connect(addr).await.unwrap());
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A third address asks eleven times, each on a connection of its own.
    let mut answered = 0;
    for _ in 0..11 {
        let client = reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 0, 4]))
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        if let Ok(r) = client
            .get(format!("{}/api/health", server.base))
            .send()
            .await
        {
            answered += usize::from(r.status().is_success());
        }
    }
    assert_eq!(answered, 11, "{answered} of 11 health requests answered");
    // The slots came from the silent connections (the oldest of the heavier address).
    let mut closed = 0;
    for s in &silent {
        let mut buf = [0u8; 1];
        if let Ok(0) = s.try_read(&mut buf) {
            closed += 1;
        }
    }
    assert!(closed >= 1, "no silent connection was closed");
    drop(silent);
    server.stop();
}

#[test]
fn eval_never_destroys_its_input_nor_leaves_half_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("answers.jsonl");
    let line = serde_json::json!({
        "input_cif": nacl_conventional(), "action_prompt": "Remove the atom at index 0 from the cif file.",
        "target_cif": null, "response": "no tags"});
    // A byte-order mark first, as some editors write.
    std::fs::write(&input, format!("\u{feff}{line}\n")).unwrap();
    let before = std::fs::read(&input).unwrap();
    let same = bin()
        .arg("eval")
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&same.stderr).contains("is the input"));
    assert_eq!(std::fs::read(&input).unwrap(), before);
    // The BOM is no error.
    let out = dir.path().join("scored.jsonl");
    let ok = bin()
        .arg("eval")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("OutputFormatError"));
    // A bad second line is named and skipped; the first is scored and written.
    std::fs::write(&input, format!("{line}\n{{broken\n")).unwrap();
    let partial = bin()
        .arg("eval")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(partial.status.success());
    assert!(String::from_utf8_lossy(&partial.stderr).contains("line 2: not a JSON object"));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 1);
    // Nothing scorable: the command fails, and an earlier output stays as it was.
    std::fs::write(&input, "{broken\n").unwrap();
    let before_out = std::fs::read(&out).unwrap();
    let bad = bin()
        .arg("eval")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(std::fs::read(&out).unwrap(), before_out);
    let fresh = dir.path().join("fresh.jsonl");
    let bad = bin()
        .arg("eval")
        .arg(&input)
        .arg("-o")
        .arg(&fresh)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(!fresh.exists());
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".atomworld-")
        })
        .count();
    assert_eq!(leftovers, 0);
}

#[test]
fn absurd_cells_and_unknown_models_are_refused_before_anything_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.cif");
    std::fs::write(
        &huge,
        nacl_conventional().replace("_cell_length_a 5.64", "_cell_length_a 1e308"),
    )
    .unwrap();
    let out = bin()
        .args(["apply", "--cif"])
        .arg(&huge)
        .args(["--prompt", "Remove the atom at index 0 from the cif file."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("exceeds the limit"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let run = bin()
        .args([
            "run",
            "--model",
            "nobody",
            "--per-action",
            "1",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let conn = rusqlite::Connection::open(dir.path().join("data/atomworld.sqlite3")).unwrap();
    let runs: i64 = conn
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 0, "a run that cannot start is not recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_exports_cannot_smuggle_spreadsheet_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[], |_| {}).await;
    let c = reqwest::Client::new();
    let id = create_run(
        &c,
        &server.base,
        serde_json::json!({"model": "copy-input", "tasks": [{
            "id": "=HYPERLINK(\"http://evil.invalid\",\"x\")", "input_cif": nacl_conventional(),
            "action_prompt": "Remove the atom at index 0 from the cif file."}]}),
    )
    .await;
    let mut csv = String::new();
    for _ in 0..100 {
        csv = c
            .get(format!("{}/api/runs/{id}/results?format=csv", server.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if csv.lines().count() > 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let row = csv.lines().nth(1).unwrap_or_default();
    assert!(row.starts_with("\"'=HYPERLINK("), "{csv}");
}
