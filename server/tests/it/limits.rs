//! Every documented limit and protection of the server (docs/guide/limits.md and models.md),
//! through the real binary: the passcode on every endpoint that costs money, starts work or
//! stores data; the rate limit; the per-provider concurrency cap; `--replay-only`; the
//! `OPENAI_BASE_URL`/`OPENAI_MODEL` model; the Gemini provider against a fake; the 1 MiB body
//! and the 5,000 task samples of a run.

use crate::common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use common::{bin, get_json, wait_run, Server};
use serde_json::{json, Value};

const PASS: &str = "limits-passcode-7";

/// What the fake OpenAI-compatible provider saw and does.
#[derive(Clone, Default)]
struct Fake {
    /// Requests received.
    hits: Arc<AtomicUsize>,
    /// Requests being answered now, and the most at once.
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    /// While set, every request waits.
    hold: Arc<AtomicBool>,
    /// Hold each request until this many are in flight (or 300 ms pass), so that a broken
    /// concurrency cap shows.
    gather: usize,
    /// The last request's Authorization header.
    auth: Arc<Mutex<Option<String>>>,
}

/// A streamed answer as server-sent events.
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

async fn openai(State(f): State<Fake>, headers: HeaderMap, body: axum::Json<Value>) -> Response {
    f.hits.fetch_add(1, Ordering::SeqCst);
    *f.auth.lock().unwrap() = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let now = f.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    f.most.fetch_max(now, Ordering::SeqCst);
    let mut waited = 0;
    while f.hold.load(Ordering::SeqCst)
        || (f.gather > 0 && f.in_flight.load(Ordering::SeqCst) < f.gather && waited < 30)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    f.in_flight.fetch_sub(1, Ordering::SeqCst);
    let answer = format!("fake answer from {}", body["model"].as_str().unwrap_or("?"));
    if body["stream"] == true {
        let piece = json!({"choices": [{"delta": {"content": answer}}]});
        let usage = json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}});
        return sse(vec![
            format!("data: {piece}\n\n"),
            format!("data: {usage}\n\n"),
            "data: [DONE]\n\n".into(),
        ]);
    }
    common::completion(&answer, 3).into_response()
}

/// The fake provider; its base URL with `/v1`.
async fn fake_provider(f: &Fake) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .with_state(f.clone());
    common::spawn_app(app).await
}

/// A configuration with the models `names`, all on the fake at `base`, plus `extra`.
fn config(dir: &std::path::Path, base: &str, names: &[&str], extra: &str) -> String {
    let mut text = String::new();
    for n in names {
        text.push_str(&format!(
            "[[models]]\nname = \"{n}\"\nprovider = \"openai-compatible\"\nmodel = \"{n}-m\"\n\
             base_url = \"{base}\"\n\n"
        ));
    }
    text.push_str(extra);
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Start the binary with `args`, none of the environment's model variables and `env` set.
async fn start(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Server {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Server::start(dir, args, move |c| {
        for k in [
            "ATOMWORLD_PASSCODE",
            "OPENAI_BASE_URL",
            "OPENAI_MODEL",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
        ] {
            c.env_remove(k);
        }
        for (k, v) in env {
            c.env(k, v);
        }
    })
    .await
}

const CIF: &str = "data_x\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n\
    _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n\
    _atom_site_type_symbol\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n\
    _atom_site_fract_z\nNa Na0 0 0 0\nCl Cl1 0.5 0.5 0.5\n";

/// An AtomWorld task removing atom `index` of NaCl.
fn task(id: &str, index: usize) -> Value {
    json!({"id": id, "input_cif": CIF,
           "action_prompt": format!("Remove the atom at index {index} from the cif file.")})
}

/// How a request gives the passcode.
#[derive(Clone, Copy)]
enum Pass {
    None,
    Bearer(&'static str),
    Header(&'static str),
}

async fn send(
    c: &reqwest::Client,
    base: &str,
    method: &str,
    path: &str,
    body: &Value,
    pass: Pass,
) -> reqwest::Response {
    let url = format!("{base}{path}");
    let mut r = match method {
        "GET" => c.get(url),
        "POST" => c.post(url),
        "PUT" => c.put(url),
        "DELETE" => c.delete(url),
        other => panic!("method {other}"),
    };
    if method != "GET" {
        r = r.json(body);
    }
    r = match pass {
        Pass::None => r,
        Pass::Bearer(p) => r.bearer_auth(p),
        Pass::Header(p) => r.header("X-Atomworld-Passcode", p),
    };
    // The run's starter (these tests) holds its token.
    let run = path
        .strip_prefix("/api/runs/")
        .and_then(|p| p.split('/').next());
    if let Some(token) = run.and_then(|id| RUN_TOKENS.lock().unwrap().get(id).cloned()) {
        r = r.header(wire::RUN_TOKEN_HEADER, token);
    }
    r.send().await.unwrap()
}

/// The tokens of the runs these tests started, by id.
static RUN_TOKENS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, String>>,
> = std::sync::LazyLock::new(Default::default);

/// The id of the run a `POST /api/runs` answer names; its token is kept for [`send`].
fn started_run(answer: &Value) -> String {
    let id = answer["run_id"].as_str().unwrap().to_string();
    let token = answer["run_token"].as_str().unwrap().to_string();
    RUN_TOKENS.lock().unwrap().insert(id.clone(), token);
    id
}

/// Polls the provider until it has seen `n` requests (about 10 s at most).
async fn wait_hits(f: &Fake, n: usize) {
    for _ in 0..1000 {
        if f.hits.load(Ordering::SeqCst) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the provider saw {} requests, not {n}",
        f.hits.load(Ordering::SeqCst)
    );
}

/// The routes that need the passcode (method, OpenAPI path).
const GUARDED: [(&str, &str); 10] = [
    ("POST", "/api/complete"),
    ("POST", "/api/complete/stream"),
    ("POST", "/api/runs"),
    ("POST", "/api/runs/{id}/cancel"),
    ("POST", "/api/runs/{id}/resume"),
    ("POST", "/api/cases"),
    ("POST", "/api/score"),
    ("PUT", "/api/runs/{id}/human-scores"),
    ("POST", "/api/rooms"),
    ("POST", "/api/suites/{name}/references"),
];

/// Writing routes that are open by design, and what admits a request instead.
const OPEN_BY_DESIGN: [(&str, &str, &str); 2] = [
    // Participants have the room's code, not the server's passcode.
    ("POST", "/api/rooms/{code}/attempts", "the room code"),
    ("DELETE", "/api/rooms/{code}", "the host token"),
];

/// Reads that show other people's prompts, answers or scores: the passcode, when one is set.
const PRIVATE_READS: [&str; 7] = [
    "/api/runs",
    "/api/runs/{id}",
    "/api/runs/{id}/results",
    "/api/runs/{id}/events",
    "/api/report",
    "/api/runs/{id}/human-scores",
    "/api/runs/{id}/human-scores.csv",
];

/// Reads open to anyone, and why.
const OPEN_READS: [(&str, &str); 10] = [
    ("/api/health", "the server's state, no one's data"),
    ("/api/models", "the configured models' names and prices"),
    ("/api/suites", "the suites and the server's own task counts"),
    ("/api/suites/{name}/tasks", "the server's own tasks"),
    (
        "/api/suites/{name}/tasks/{id}/images/{stem}",
        "the server's own tasks' images",
    ),
    ("/api/cases/{id}", "a share link: its unguessable id admits"),
    ("/api/rooms/{code}", "participants hold the room code"),
    (
        "/api/rooms/{code}/summary",
        "participants hold the room code",
    ),
    (
        "/api/rooms/{code}/attempts/{id}",
        "participants hold the room code",
    ),
    ("/api/openapi.json", "the API's description"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_passcode_guards_every_endpoint_that_costs_money_or_starts_work() {
    let f = Fake::default();
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url, &["fake"], "");
    let server = start(
        dir.path(),
        &["--config", &cfg, "--rate-limit", "1000"],
        &[("ATOMWORLD_PASSCODE", PASS)],
    )
    .await;
    let base = server.base.as_str();
    let c = reqwest::Client::new();

    // No writing route is missed: the OpenAPI document's non-GET operations are exactly the
    // guarded ones and those open by design.
    let doc = get_json(&c, format!("{base}/api/openapi.json")).await;
    let mut writes = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            if method != "get" {
                writes.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    let expected: BTreeSet<(String, String)> = GUARDED
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .chain(
            OPEN_BY_DESIGN
                .iter()
                .map(|(m, p, _)| (m.to_string(), p.to_string())),
        )
        .collect();
    assert_eq!(
        writes, expected,
        "a writing route was added or removed: guard it or list why it is open"
    );
    let mut reads = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        if ops.get("get").is_some() {
            reads.insert(path.as_str());
        }
    }
    let listed: BTreeSet<&str> = PRIVATE_READS
        .iter()
        .copied()
        .chain(OPEN_READS.iter().map(|(p, _)| *p))
        .collect();
    assert_eq!(
        reads, listed,
        "a read was added or removed: guard it or list why it is open"
    );

    // A run that holds the provider (two tasks, one at a time), so cancel and resume have
    // something to act on.
    f.hold.store(true, Ordering::SeqCst);
    let started = send(
        &c,
        base,
        "POST",
        "/api/runs",
        &json!({"model": "fake", "tasks": [task("t1", 1), task("t2", 0)], "concurrency": 1}),
        Pass::Bearer(PASS),
    )
    .await;
    assert_eq!(started.status(), 201);
    let id = started_run(&started.json::<Value>().await.unwrap());
    wait_hits(&f, 1).await;

    let body_of = |path: &str| -> Value {
        match path {
            "/api/complete" | "/api/complete/stream" => json!({"model": "fake", "prompt": "p"}),
            "/api/runs" => json!({"model": "fake", "tasks": [task("t9", 1)]}),
            "/api/cases" => json!({"v": 1, "prompt": "Remove the atom at index 0."}),
            "/api/score" => json!({"suite": "atomworld", "task": task("s1", 1),
                                   "response": format!("<cif>\n{CIF}</cif>")}),
            "/api/runs/{id}/human-scores" => {
                json!({"task_id": "t1", "sample": 0, "criterion": "overall_score", "score": 4})
            }
            "/api/rooms" => json!({"name": "limits", "ttl_hours": 1}),
            "/api/suites/{name}/references" => json!({"k": 5, "task": {"id": "q",
                "contribution": "## Key Contributions\n- a perovskite film",
                "recipe": "## Materials\n- PbI2"}}),
            _ => json!({}),
        }
    };
    // Without the passcode, or with a wrong one either way: 401 with the JSON error, and
    // nothing reaches the provider or starts.
    let hits = f.hits.load(Ordering::SeqCst);
    for (method, path) in GUARDED {
        let url = path.replace("{id}", &id).replace("{name}", "alchemy");
        for pass in [Pass::None, Pass::Bearer("wrong"), Pass::Header("wrong")] {
            let r = send(&c, base, method, &url, &body_of(path), pass).await;
            assert_eq!(r.status(), 401, "{method} {path}");
            assert!(r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"));
            let e: Value = r.json().await.unwrap();
            assert_eq!(
                e["error"]["code"], "passcode_required",
                "{method} {path}: {e}"
            );
            assert!(
                e["error"]["message"].as_str().unwrap().contains("passcode"),
                "{e}"
            );
        }
    }
    assert_eq!(
        f.hits.load(Ordering::SeqCst),
        hits,
        "a refused call reached the provider"
    );
    // The reads of runs: refused without the passcode, answered with it.
    for path in PRIVATE_READS {
        let url = path.replace("{id}", &id);
        let url = if path == "/api/report" {
            format!("{url}?runs={id}")
        } else {
            url
        };
        for pass in [Pass::None, Pass::Bearer("wrong")] {
            let r = send(&c, base, "GET", &url, &json!(null), pass).await;
            assert_eq!(r.status(), 401, "GET {path}");
        }
        if path != "/api/runs/{id}/events" {
            let r = send(&c, base, "GET", &url, &json!(null), Pass::Header(PASS)).await;
            assert!(
                r.status() == 200 || r.status() == 409,
                "GET {path}: {}",
                r.status()
            );
        }
    }
    let runs: Value = send(
        &c,
        base,
        "GET",
        "/api/runs",
        &json!(null),
        Pass::Bearer(PASS),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    let run: Value = send(
        &c,
        base,
        "GET",
        &format!("/api/runs/{id}"),
        &json!(null),
        Pass::Bearer(PASS),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        run["status"], "running",
        "a refused cancel stopped the run: {run}"
    );

    // With the passcode (either way of giving it): each is accepted.
    let ok = |r: &reqwest::Response, status: u16, what: &str| {
        assert_eq!(r.status(), status, "{what}");
    };
    let r = send(
        &c,
        base,
        "POST",
        &format!("/api/runs/{id}/cancel"),
        &json!({}),
        Pass::Header(PASS),
    )
    .await;
    ok(&r, 202, "cancel");
    f.hold.store(false, Ordering::SeqCst);
    // Polling the run reads it: with the passcode.
    let mut with_pass = reqwest::header::HeaderMap::new();
    with_pass.insert(
        "x-atomworld-passcode",
        reqwest::header::HeaderValue::from_static(PASS),
    );
    let reader = reqwest::Client::builder()
        .default_headers(with_pass)
        .build()
        .unwrap();
    let run = wait_run(&reader, base, &id, |r| r["status"] == "cancelled").await;
    assert_eq!(run["status"], "cancelled", "{run}");
    let r = send(
        &c,
        base,
        "POST",
        &format!("/api/runs/{id}/resume"),
        &json!({}),
        Pass::Bearer(PASS),
    )
    .await;
    ok(&r, 202, "resume");
    let run = wait_run(&reader, base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    for (method, path, status) in [
        ("POST", "/api/complete", 200),
        ("POST", "/api/complete/stream", 200),
        ("POST", "/api/cases", 201),
        ("POST", "/api/score", 200),
        ("PUT", "/api/runs/{id}/human-scores", 200),
        ("POST", "/api/rooms", 201),
        ("POST", "/api/runs", 201),
        ("POST", "/api/suites/{name}/references", 200),
    ] {
        for pass in [Pass::Bearer(PASS), Pass::Header(PASS)] {
            let url = path.replace("{id}", &id).replace("{name}", "alchemy");
            let r = send(&c, base, method, &url, &body_of(path), pass).await;
            let status_got = r.status();
            let text = r.text().await.unwrap();
            assert_eq!(status_got, status, "{method} {path}: {text}");
            if path == "/api/complete/stream" {
                assert!(text.contains("event: done"), "{text}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_refuses_the_request_after_n_with_retry_after() {
    let f = Fake::default();
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url, &["fake"], "");
    let server = start(dir.path(), &["--config", &cfg, "--rate-limit", "4"], &[]).await;
    let (base, c) = (server.base.as_str(), reqwest::Client::new());
    // Four writing requests to different endpoints share one bucket.
    let four = [
        ("/api/complete", json!({"model": "fake", "prompt": "p"})),
        ("/api/cases", json!({"v": 1, "prompt": "x"})),
        ("/api/rooms", json!({"name": "r", "ttl_hours": 1})),
        (
            "/api/score",
            json!({"suite": "atomworld", "task": task("s1", 1), "response": "no"}),
        ),
    ];
    for (path, body) in &four {
        let r = send(&c, base, "POST", path, body, Pass::None).await;
        assert!(r.status().is_success(), "{path}: {}", r.status());
        // Reading is free.
        let health = c.get(format!("{base}/api/health")).send().await.unwrap();
        assert_eq!(health.status(), 200);
    }
    let r = send(&c, base, "POST", "/api/complete", &four[0].1, Pass::None).await;
    assert_eq!(r.status(), 429);
    // One token comes back every 60/4 = 15 s.
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=15).contains(&wait), "Retry-After: {wait}");
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "rate_limited", "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("try again in {wait} s")),
        "{e}"
    );
    assert_eq!(
        f.hits.load(Ordering::SeqCst),
        1,
        "the refused call reached the provider"
    );
    let runs = send(
        &c,
        base,
        "POST",
        "/api/runs",
        &json!({"model": "reference"}),
        Pass::None,
    )
    .await;
    assert_eq!(
        runs.status(),
        429,
        "every writing endpoint shares the bucket"
    );
}

/// POST a room from a client a proxy names `forwarded`; the status.
async fn open_room_as(c: &reqwest::Client, base: &str, forwarded: &str) -> u16 {
    c.post(format!("{base}/api/rooms"))
        .header("x-forwarded-for", forwarded)
        .json(&json!({"name": "r", "ttl_hours": 1}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_allowance() {
    let dir = tempfile::tempdir().unwrap();
    let c = reqwest::Client::new();
    // The proxy (loopback here) is trusted: two clients behind it, two allowances of two.
    let behind = start(
        &dir.path().join("behind"),
        &["--rate-limit", "2", "--trusted-proxy", "127.0.0.0/8"],
        &[],
    )
    .await;
    let first: Vec<u16> = [
        open_room_as(&c, &behind.base, "198.51.100.1").await,
        open_room_as(&c, &behind.base, "198.51.100.1").await,
        open_room_as(&c, &behind.base, "198.51.100.1").await,
    ]
    .into();
    assert_eq!(first, [201, 201, 429]);
    assert_eq!(open_room_as(&c, &behind.base, "198.51.100.2").await, 201);
    // What a client writes before the proxy's own entry is not believed.
    assert_eq!(
        open_room_as(&c, &behind.base, "203.0.113.50, 198.51.100.1").await,
        429
    );
    // Not trusted (the default): the header is ignored, every request is the peer's.
    let direct = start(&dir.path().join("direct"), &["--rate-limit", "2"], &[]).await;
    let spoofed: Vec<u16> = [
        open_room_as(&c, &direct.base, "198.51.100.1").await,
        open_room_as(&c, &direct.base, "198.51.100.2").await,
        open_room_as(&c, &direct.base, "198.51.100.3").await,
    ]
    .into();
    assert_eq!(spoofed, [201, 201, 429]);
    let refused = bin()
        .args(["serve", "--trusted-proxy", "lb.example"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("not an address or network"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_one_provider_never_exceed_max_concurrency_per_provider() {
    // Each request waits for a third to arrive (or 300 ms): with a cap of 2, none does.
    let f = Fake {
        gather: 3,
        ..Fake::default()
    };
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    // Two models on the same endpoint share its cap.
    let cfg = config(
        dir.path(),
        &base_url,
        &["one", "two"],
        "[limits]\nmax_concurrency_per_provider = 2\n",
    );
    let server = start(dir.path(), &["--config", &cfg, "--rate-limit", "1000"], &[]).await;
    let c = reqwest::Client::new();
    let calls = (0..6).map(|k| {
        let (c, base) = (c.clone(), server.base.clone());
        let model = if k % 2 == 0 { "one" } else { "two" };
        async move {
            c.post(format!("{base}/api/complete"))
                .json(&json!({"model": model, "prompt": format!("prompt {k}")}))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    for status in futures_util::future::join_all(calls).await {
        assert_eq!(status, 200);
    }
    assert_eq!(f.hits.load(Ordering::SeqCst), 6);
    let most = f.most.load(Ordering::SeqCst);
    assert!((1..=2).contains(&most), "{most} calls at once");
}

/// The rows of a run's results.
async fn results(c: &reqwest::Client, base: &str, id: &str) -> Vec<Value> {
    let r = get_json(c, format!("{base}/api/runs/{id}/results?format=json")).await;
    r["results"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_only_never_calls_the_provider_and_names_what_is_missing() {
    let f = Fake::default();
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url, &["fake"], "");
    let c = reqwest::Client::new();
    // A workshop's rehearsal fills the cache: one completion, one run of one task.
    let server = start(dir.path(), &["--config", &cfg], &[]).await;
    let first = send(
        &c,
        &server.base,
        "POST",
        "/api/complete",
        &json!({"model": "fake", "prompt": "cached"}),
        Pass::None,
    )
    .await;
    assert_eq!(first.status(), 200);
    let id = common::create_run(
        &c,
        &server.base,
        json!({"model": "fake", "tasks": [task("t1", 1)]}),
    )
    .await;
    let run = wait_run(&c, &server.base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    server.stop();
    let rehearsed = f.hits.load(Ordering::SeqCst);
    assert_eq!(rehearsed, 2);

    let server = start(dir.path(), &["--config", &cfg, "--replay-only"], &[]).await;
    let base = server.base.as_str();
    let again: Value = send(
        &c,
        base,
        "POST",
        "/api/complete",
        &json!({"model": "fake", "prompt": "cached"}),
        Pass::None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(again["text"], "fake answer from fake-m", "{again}");
    assert_eq!(again["cached"], true, "{again}");
    let missing = send(
        &c,
        base,
        "POST",
        "/api/complete",
        &json!({"model": "fake", "prompt": "new"}),
        Pass::None,
    )
    .await;
    assert_eq!(missing.status(), 404);
    let e: Value = missing.json().await.unwrap();
    assert_eq!(e["error"]["code"], "not_cached", "{e}");
    let streamed = send(
        &c,
        base,
        "POST",
        "/api/complete/stream",
        &json!({"model": "fake", "prompt": "new"}),
        Pass::None,
    )
    .await
    .text()
    .await
    .unwrap();
    assert!(
        streamed.contains("event: error") && streamed.contains("not_cached"),
        "{streamed}"
    );
    // A run: the rehearsed task comes from the cache, the new one is reported missing.
    let id = common::create_run(
        &c,
        base,
        json!({"model": "fake", "tasks": [task("t1", 1), task("t2", 0)]}),
    )
    .await;
    // A missing answer is a failed call: the run ends incomplete (resumable once the cache
    // has it), with the one answer it had.
    let run = wait_run(&c, base, &id, |r| r["status"] == "incomplete").await;
    assert_eq!(run["status"], "incomplete", "{run}");
    assert_eq!(run["progress"]["done"], 1, "{run}");
    let rows = results(&c, base, &id).await;
    let row = |t: &str| rows.iter().find(|r| r["task_id"] == t).unwrap().clone();
    let (t1, t2) = (row("t1"), row("t2"));
    assert_eq!(t1["cached"], true, "{t1}");
    assert_eq!(t1["response"], "fake answer from fake-m", "{t1}");
    assert!(t2["response"].is_null(), "{t2}");
    assert!(
        t2["error"]
            .as_str()
            .unwrap()
            .contains("not in the response cache"),
        "{t2}"
    );
    assert_eq!(
        f.hits.load(Ordering::SeqCst),
        rehearsed,
        "replay-only called the provider"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_base_url_and_model_alone_offer_env_model() {
    let f = Fake::default();
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &[],
        &[
            ("OPENAI_BASE_URL", &base_url),
            ("OPENAI_MODEL", "local-llm"),
        ],
    )
    .await;
    let c = reqwest::Client::new();
    let models = get_json(&c, format!("{}/api/models", server.base)).await;
    let configured: Vec<&Value> = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["baseline"] == false)
        .collect();
    assert_eq!(configured.len(), 1, "{models}");
    assert_eq!(configured[0]["name"], "env-model");
    assert_eq!(configured[0]["provider"], "openai-compatible");
    let r: Value = send(
        &c,
        &server.base,
        "POST",
        "/api/complete",
        &json!({"model": "env-model", "prompt": "hi"}),
        Pass::None,
    )
    .await
    .json()
    .await
    .unwrap();
    // The fake names the model it was asked for: OPENAI_MODEL's.
    assert_eq!(r["text"], "fake answer from local-llm", "{r}");
    assert_eq!(f.hits.load(Ordering::SeqCst), 1);
    assert_eq!(*f.auth.lock().unwrap(), None, "no key set, none sent");
}

/// What the fake Gemini server saw: (path, query, headers, body) per request.
type Seen = Arc<Mutex<Vec<(String, Option<String>, HeaderMap, Value)>>>;

async fn gemini(
    State(seen): State<Seen>,
    Path(call): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    seen.lock()
        .unwrap()
        .push((format!("/v1beta/models/{call}"), query, headers, body));
    if call.ends_with(":streamGenerateContent") {
        let a = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Gem"}]}}],
                       "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 1}});
        let b = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ini"}]},
                                       "finishReason": "STOP"}],
                       "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 2}});
        return sse(vec![
            format!("data: {a}\r\n\r\n"),
            format!("data: {b}\r\n\r\n"),
        ]);
    }
    axum::Json(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hello "}, {"text": "there"}]},
                        "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 500, "totalTokenCount": 1500}
    }))
    .into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gemini_provider_speaks_generate_content_with_the_key_in_a_header() {
    const KEY: &str = "AIza-fake-GEMINI-key-0123456789";
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/v1beta/models/{call}", post(gemini))
        .with_state(seen.clone());
    let v1 = common::spawn_app(app).await;
    let base_url = v1.replace("/v1", "/v1beta");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[models]]\nname = \"gem\"\nprovider = \"gemini\"\nmodel = \"gemini-test\"\n\
             base_url = \"{base_url}\"\nmax_tokens = 256\ntemperature = 0.5\n\
             price_input_per_mtok = 1.0\nprice_output_per_mtok = 10.0\n"
        ),
    )
    .unwrap();
    let server = start(
        dir.path(),
        &["--config", cfg.to_str().unwrap()],
        &[("GEMINI_API_KEY", KEY)],
    )
    .await;
    let c = reqwest::Client::new();
    let messages = json!([{"role": "system", "content": "Answer briefly."},
                          {"role": "user", "content": "Say hello."}]);
    let plain: Value = send(
        &c,
        &server.base,
        "POST",
        "/api/complete",
        &json!({"model": "gem", "prompt": "", "messages": messages}),
        Pass::None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(plain["text"], "Hello there", "{plain}");
    assert_eq!(plain["input_tokens"], 1000);
    assert_eq!(plain["output_tokens"], 500);
    // $1/M in, $10/M out.
    assert!(
        (plain["cost_usd"].as_f64().unwrap() - 0.006).abs() < 1e-12,
        "{plain}"
    );
    let streamed = send(
        &c,
        &server.base,
        "POST",
        "/api/complete/stream",
        &json!({"model": "gem", "prompt": "Stream it."}),
        Pass::None,
    )
    .await
    .text()
    .await
    .unwrap();
    let done = streamed
        .split("event: done\ndata: ")
        .nth(1)
        .and_then(|d| d.lines().next())
        .unwrap_or_else(|| panic!("{streamed}"));
    let done: Value = serde_json::from_str(done).unwrap();
    assert_eq!(done["text"], "Gemini", "{done}");
    assert_eq!(
        (
            done["input_tokens"].as_u64(),
            done["output_tokens"].as_u64()
        ),
        (Some(11), Some(2))
    );

    let log = server.stop();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let (path, query, headers, body) = &seen[0];
    assert_eq!(path, "/v1beta/models/gemini-test:generateContent");
    assert_eq!(query, &None, "the key is never in the URL");
    assert_eq!(headers["x-goog-api-key"], KEY);
    assert!(headers.get("authorization").is_none());
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "Say hello."}]}])
    );
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"], "Answer briefly.",
        "{body}"
    );
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 256);
    assert_eq!(body["generationConfig"]["temperature"], 0.5);
    let (path, query, headers, body) = &seen[1];
    assert_eq!(path, "/v1beta/models/gemini-test:streamGenerateContent");
    assert_eq!(query.as_deref(), Some("alt=sse"));
    assert_eq!(headers["x-goog-api-key"], KEY);
    assert_eq!(body["contents"][0]["parts"][0]["text"], "Stream it.");
    assert!(!log.contains(KEY) && !streamed.contains(KEY), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_exactly_1_mib_passes_and_one_byte_more_is_too_large() {
    let f = Fake::default();
    let base_url = fake_provider(&f).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url, &["fake"], "");
    let server = start(dir.path(), &["--config", &cfg], &[]).await;
    let c = reqwest::Client::new();
    const MIB: usize = 1024 * 1024;
    let body_of = |len: usize| {
        let bare = json!({"model": "fake", "prompt": ""}).to_string().len();
        let text = json!({"model": "fake", "prompt": "x".repeat(len - bare)}).to_string();
        assert_eq!(text.len(), len);
        text
    };
    let post = |text: String| {
        c.post(format!("{}/api/complete", server.base))
            .header("content-type", "application/json")
            .body(text)
            .send()
    };
    let at = post(body_of(MIB)).await.unwrap();
    assert_eq!(at.status(), 200);
    let over = post(body_of(MIB + 1)).await.unwrap();
    assert_eq!(over.status(), 413);
    let e: Value = over.json().await.unwrap();
    assert_eq!(e["error"]["code"], "too_large", "{e}");
    assert!(!e["error"]["message"].as_str().unwrap().is_empty(), "{e}");
    assert_eq!(f.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_5000_task_samples_starts_and_5001_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &["--rate-limit", "1000"], &[]).await;
    let (base, c) = (server.base.as_str(), reqwest::Client::new());
    let refused = |r: Value| {
        assert_eq!(r["error"]["code"], "bad_request", "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("1 to 5000 task samples"),
            "{r}"
        );
    };
    // One task sampled 5,001 times; 5,001 tasks; a generated set of 10 actions × 501.
    for body in [
        json!({"model": "copy-input", "tasks": [task("t1", 1)], "samples": 5001}),
        json!({"model": "copy-input", "tasks": vec![json!({}); 5001]}),
        json!({"model": "copy-input", "per_action": 1, "samples": 501}),
    ] {
        let r = send(&c, base, "POST", "/api/runs", &body, Pass::None).await;
        assert_eq!(r.status(), 400);
        refused(r.json().await.unwrap());
    }
    assert_eq!(
        get_json(&c, format!("{base}/api/runs")).await["runs"],
        json!([])
    );
    // Exactly 5,000 starts (then is cancelled: its size, not its end, is under test).
    let r = send(
        &c,
        base,
        "POST",
        "/api/runs",
        &json!({"model": "copy-input", "tasks": [task("t1", 1)], "samples": 5000}),
        Pass::None,
    )
    .await;
    assert_eq!(r.status(), 201);
    let id = started_run(&r.json::<Value>().await.unwrap());
    let _ = send(
        &c,
        base,
        "POST",
        &format!("/api/runs/{id}/cancel"),
        &json!({}),
        Pass::None,
    )
    .await;
    let run = get_json(&c, format!("{base}/api/runs/{id}")).await;
    assert_eq!(run["spec"]["samples"], 5000, "{run}");
}
