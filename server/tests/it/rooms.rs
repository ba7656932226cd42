//! Workshop rooms through HTTP on a loopback port: open, join, attempts scored by the server
//! (a verdict sent by the client is ignored), the host's tally behind the host token, the
//! passcode, the limits, expiry and closing.

use reqwest::StatusCode;
use serde_json::{json, Value};
use server::config::Config;
use server::http::{router, AppState};
use server::llm::{Gateway, GatewayOptions};
use server::storage::{RoomLimits, Storage};

use crate::common;

const PROMPT: &str = "Remove the atom at index 3 from the cif file.";

async fn start(
    passcode: Option<&str>,
    per_minute: u32,
    limits: RoomLimits,
) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let gateway = Gateway::new(
        Config::default(),
        storage.clone(),
        GatewayOptions::default(),
    )
    .unwrap();
    let state = AppState::with_gateway(storage, gateway, passcode.map(str::to_string), per_minute)
        .with_room_limits(limits);
    let app = router(state, dir.path());
    let base = common::serve_router(app).await;
    (base, dir)
}

fn input() -> String {
    common::nacl_conventional()
}

fn truth() -> String {
    let r = benchmarks::atomworld::task::resolve(&input(), PROMPT, None).unwrap();
    format!("<cif>\n{}\n</cif>", r.target_cif)
}

async fn open(c: &reqwest::Client, base: &str, passcode: Option<&str>) -> (StatusCode, Value) {
    let mut req = c
        .post(format!("{base}/api/rooms"))
        .json(&json!({"name": "Tuesday workshop", "ttl_hours": 2}));
    if let Some(p) = passcode {
        req = req.header("X-Atomworld-Passcode", p);
    }
    let r = req.send().await.unwrap();
    (r.status(), r.json().await.unwrap())
}

async fn attempt(c: &reqwest::Client, base: &str, code: &str, body: Value) -> (StatusCode, Value) {
    let r = c
        .post(format!("{base}/api/rooms/{code}/attempts"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

fn body(who: &str, kind: &str, model: Option<&str>, answer: &str) -> Value {
    json!({"who": who, "kind": kind, "model": model, "input_cif": input(), "prompt": PROMPT,
           "answer": answer})
}

#[tokio::test]
async fn a_room_collects_attempts_scored_by_the_server() {
    let (base, _d) = start(None, 100, RoomLimits::default()).await;
    let c = reqwest::Client::new();
    let (status, room) = open(&c, &base, None).await;
    assert_eq!(status, StatusCode::CREATED, "{room}");
    let code = room["code"].as_str().unwrap().to_string();
    let token = room["host_token"].as_str().unwrap().to_string();
    assert_eq!(code.len(), 6);
    // A participant joins with the code, typed in lower case.
    let info = common::get_json(&c, format!("{base}/api/rooms/{}", code.to_lowercase())).await;
    assert_eq!(info["name"], "Tuesday workshop");
    assert!(info.get("host_token").is_none());

    let (s, a) = attempt(&c, &base, &code, body("ann", "hand_edit", None, &truth())).await;
    assert_eq!(s, StatusCode::CREATED, "{a}");
    assert_eq!(
        (a["label"].as_str(), a["action"].as_str()),
        (Some("Success"), Some("remove"))
    );
    // A forged verdict is not read: the input unchanged has one atom too many.
    let mut forged = body(
        "bob",
        "pasted",
        None,
        &format!("<cif>\n{}\n</cif>", input()),
    );
    forged["label"] = json!("Success");
    forged["verdict"] = json!({"label": "Success"});
    let (s, b) = attempt(&c, &base, &code, forged).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(b["label"], "AtomCountMismatch");
    let (s, m) = attempt(
        &c,
        &base,
        &code,
        body("cy", "model", Some("gpt-x"), "no cif here"),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(m["label"], "OutputFormatError");
    let (s, _) = attempt(
        &c,
        &base,
        &code,
        body("cy", "model", Some("gpt-x"), &truth()),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);

    // Refused attempts: no nickname, a model attempt without its model, a task that is not
    // one, a room that does not exist.
    let (s, e) = attempt(&c, &base, &code, body(" ", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let (s, _) = attempt(&c, &base, &code, body("cy", "model", None, &truth())).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let mut nonsense = body("cy", "pasted", None, &truth());
    nonsense["prompt"] = json!("make it prettier");
    let (s, e) = attempt(&c, &base, &code, nonsense).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cannot be scored"));
    let (s, _) = attempt(&c, &base, "ZZZZZZ", body("ann", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // The tally needs the host token.
    let summary_url = format!("{base}/api/rooms/{code}/summary");
    let r = c.get(&summary_url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = c
        .get(&summary_url)
        .header("X-Room-Token", "0".repeat(64))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let sum: Value = c
        .get(&summary_url)
        .header("X-Room-Token", &token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sum["total"], 4);
    assert_eq!(sum["participants"], 3);
    assert_eq!(sum["sides"], json!(["people", "pasted", "gpt-x"]));
    assert_eq!(
        sum["actions"][0]["cells"],
        json!([
            {"side": "people", "attempts": 1, "successes": 1},
            {"side": "pasted", "attempts": 1, "successes": 0},
            {"side": "gpt-x", "attempts": 2, "successes": 1},
        ])
    );
    assert_eq!(
        sum["failures"],
        json!([{"label": "AtomCountMismatch", "count": 1}, {"label": "OutputFormatError", "count": 1}])
    );
    let latest = sum["latest"].as_array().unwrap();
    assert_eq!(latest.len(), 4);
    assert_eq!(latest[3]["who"], "ann");
    // An attempt in full (to open as a case), for the host only.
    let id = latest[2]["id"].as_i64().unwrap();
    let url = format!("{base}/api/rooms/{code}/attempts/{id}");
    assert_eq!(
        c.get(&url).send().await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    let detail: Value = c
        .get(&url)
        .header("X-Room-Token", &token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(detail["attempt"]["who"], "bob");
    assert_eq!(detail["prompt"], PROMPT);
    assert_eq!(detail["input_cif"], input());

    // Closing: only the host; then the room and its attempts are gone.
    let room_url = format!("{base}/api/rooms/{code}");
    assert_eq!(
        c.delete(&room_url).send().await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    let r = c
        .delete(&room_url)
        .header("X-Room-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        c.get(&room_url).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let (s, _) = attempt(&c, &base, &code, body("ann", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let r = c
        .get(&url)
        .header("X-Room-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn opening_a_room_needs_the_passcode_joining_needs_the_code() {
    let (base, _d) = start(Some("pw"), 100, RoomLimits::default()).await;
    let c = reqwest::Client::new();
    let (s, e) = open(&c, &base, None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert_eq!(e["error"]["code"], "passcode_required");
    let (s, _) = open(&c, &base, Some("wrong")).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, room) = open(&c, &base, Some("pw")).await;
    assert_eq!(s, StatusCode::CREATED);
    let code = room["code"].as_str().unwrap();
    let (s, a) = attempt(&c, &base, code, body("ann", "hand_edit", None, &truth())).await;
    assert_eq!(s, StatusCode::CREATED, "{a}");
}

#[tokio::test]
async fn limits_on_time_rooms_attempts_size_and_rate() {
    let limits = RoomLimits {
        max_per_client: 1,
        max_attempts: 1,
        ..RoomLimits::default()
    };
    let (base, _d) = start(None, 8, limits).await;
    let c = reqwest::Client::new();
    for ttl in [0, 169] {
        let r = c
            .post(format!("{base}/api/rooms"))
            .json(&json!({"name": "x", "ttl_hours": ttl}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    }
    let r = c
        .post(format!("{base}/api/rooms"))
        .json(&json!({"name": "x".repeat(81), "ttl_hours": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let (s, room) = open(&c, &base, None).await;
    assert_eq!(s, StatusCode::CREATED);
    let code = room["code"].as_str().unwrap();
    let (s, e) = open(&c, &base, None).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(e["error"]["code"], "room_quota");
    let big = "x".repeat(256 * 1024 + 1);
    let (s, _) = attempt(&c, &base, code, body("ann", "pasted", None, &big)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = attempt(&c, &base, code, body("ann", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, e) = attempt(&c, &base, code, body("bob", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::INSUFFICIENT_STORAGE);
    assert_eq!(e["error"]["code"], "room_full");
    // Eight requests so far on the limited routes: the ninth waits.
    let (s, e) = attempt(&c, &base, code, body("bob", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{e}");
}

/// The host's summary with `?after=N` from another task: the JSON, or the status.
fn wait_summary(
    c: &reqwest::Client,
    base: &str,
    code: &str,
    token: &str,
    after: u64,
) -> tokio::task::JoinHandle<Result<Value, StatusCode>> {
    let req = c
        .get(format!("{base}/api/rooms/{code}/summary?after={after}"))
        .header("X-Room-Token", token);
    tokio::spawn(async move {
        let r = req.send().await.unwrap();
        match r.status() {
            StatusCode::OK => Ok(r.json().await.unwrap()),
            other => Err(other),
        }
    })
}

#[tokio::test]
async fn a_waiting_dashboard_wakes_when_an_attempt_arrives_or_the_room_closes() {
    let (base, _dir) = start(None, 100, RoomLimits::default()).await;
    let c = reqwest::Client::new();
    let (_, room) = open(&c, &base, None).await;
    let code = room["code"].as_str().unwrap();
    let token = room["host_token"].as_str().unwrap();
    // Behind the room (it holds 0, the dashboard shows 5): answered at once.
    let stale = wait_summary(&c, &base, code, token, 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stale["total"], 0, "{stale}");
    // Current: it waits, and the attempt wakes it.
    let waiting = wait_summary(&c, &base, code, token, 0);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "nothing new yet: it waits");
    let (s, _) = attempt(&c, &base, code, body("ann", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::CREATED);
    let woken = waiting.await.unwrap().unwrap();
    assert_eq!(woken["total"], 1, "{woken}");
    assert_eq!(woken["latest"][0]["who"], "ann");
    // Closing the room wakes a waiting dashboard with "no open room".
    let waiting = wait_summary(&c, &base, code, token, 1);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let r = c
        .delete(format!("{base}/api/rooms/{code}"))
        .header("X-Room-Token", token)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(waiting.await.unwrap(), Err(StatusCode::NOT_FOUND));
}

#[tokio::test]
async fn an_expired_room_is_gone() {
    let (base, dir) = start(None, 100, RoomLimits::default()).await;
    let c = reqwest::Client::new();
    let (_, room) = open(&c, &base, None).await;
    let code = room["code"].as_str().unwrap();
    let token = room["host_token"].as_str().unwrap();
    let (s, _) = attempt(&c, &base, code, body("ann", "pasted", None, &truth())).await;
    assert_eq!(s, StatusCode::CREATED);
    // Aged by hand, as an operator with sqlite3 would.
    let db = rusqlite::Connection::open(dir.path().join(server::storage::DB_FILE)).unwrap();
    db.execute("UPDATE rooms SET expires_at = '2000-01-01T00:00:00Z'", [])
        .unwrap();
    let r = c
        .get(format!("{base}/api/rooms/{code}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = c
        .get(format!("{base}/api/rooms/{code}/summary"))
        .header("X-Room-Token", token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    // The next write sweeps it and its attempts out of the database.
    let (s, _) = open(&c, &base, None).await;
    assert_eq!(s, StatusCode::CREATED);
    let left: (i64, i64) = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM rooms), (SELECT COUNT(*) FROM room_attempts)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(left, (1, 0));
}

/// A client from another address than `n`'s others (127.0.0.n on loopback).
fn client_from(n: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, n]))
        .build()
        .unwrap()
}

#[tokio::test]
async fn room_codes_cannot_be_found_by_trying_them() {
    let (base, _dir) = start(None, 1000, RoomLimits::default()).await;
    let (status, room) = open(&reqwest::Client::new(), &base, None).await;
    assert_eq!(status, StatusCode::CREATED, "{room}");
    let code = room["code"].as_str().unwrap().to_string();
    // One address tries well-formed codes that name no room.
    let prober = client_from(3);
    let tries: Vec<String> = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
        .chars()
        .map(|ch| format!("{ch}{ch}{ch}{ch}{ch}{ch}"))
        .filter(|c| *c != code)
        .take(30)
        .collect();
    let mut statuses = Vec::new();
    for t in &tries {
        let r = prober
            .get(format!("{base}/api/rooms/{t}"))
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            let e: Value = r.json().await.unwrap();
            assert_eq!(e["error"]["code"], "too_many_unknown_rooms", "{e}");
            assert!(
                e["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("try again in"),
                "{e}"
            );
        }
    }
    let allowed = server::http::ROOM_MISSES_PER_MINUTE as usize;
    assert!(
        statuses[..allowed].iter().all(|s| *s == 404),
        "{statuses:?}"
    );
    assert!(
        statuses[allowed..].iter().all(|s| *s == 429),
        "{statuses:?}"
    );
    // Sending attempts to made-up codes counts the same way.
    let r = prober
        .post(format!("{base}/api/rooms/{}/attempts", tries[0]))
        .json(&body("x", "pasted", None, &truth()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    // A participant elsewhere, given the code, joins and sends an attempt at once; so does
    // one who mistyped the code a few times first.
    let participant = client_from(4);
    let r = participant
        .get(format!("{base}/api/rooms/{code}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (status, _) = attempt(
        &participant,
        &base,
        &code,
        body("ana", "pasted", None, &truth()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let typo = client_from(5);
    for t in &tries[..3] {
        let r = typo
            .get(format!("{base}/api/rooms/{t}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
    }
    let r = typo
        .get(format!("{base}/api/rooms/{code}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}
