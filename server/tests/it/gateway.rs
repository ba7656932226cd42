//! The LLM gateway against scripted fake providers on 127.0.0.1 (OpenAI- and
//! Anthropic-shaped): retries and their bound, Retry-After, timeouts, malformed answers,
//! cache hits, cost, spend cap and key secrecy.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use futures_util::StreamExt;
use server::config::{Config, Limits, ModelConfig, ProviderKind};
use server::llm::{Gateway, GatewayOptions, LlmError, Message, StreamEvent};
use server::storage::Storage;

/// What the fake provider does for one request.
#[derive(Clone)]
enum Act {
    Answer(&'static str),
    Status(u16, Option<&'static str>, &'static str),
    Malformed,
    Slow(Duration),
    /// An event stream of these pieces; `cut` ends it before the `[DONE]` marker.
    Stream(&'static [&'static str], bool),
}

/// A streamed response body: each event 5 ms after the last.
fn sse_body(events: Vec<String>) -> Response {
    let chunks = futures_util::stream::iter(events).then(|e| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok::<_, std::convert::Infallible>(e)
    });
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(chunks),
    )
        .into_response()
}

#[derive(Clone, Default)]
struct Fake {
    script: Arc<Mutex<VecDeque<Act>>>,
    hits: Arc<Mutex<Vec<(Instant, HeaderMap)>>>,
}

async fn openai(State(f): State<Fake>, headers: HeaderMap) -> Response {
    f.hits.lock().unwrap().push((Instant::now(), headers));
    let act = f
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Act::Answer("default"));
    match act {
        Act::Answer(text) => axum::Json(serde_json::json!({
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500}
        }))
        .into_response(),
        Act::Status(code, retry_after, body) => {
            let mut r = (StatusCode::from_u16(code).unwrap(), body.to_string()).into_response();
            if let Some(ra) = retry_after {
                r.headers_mut().insert("retry-after", ra.parse().unwrap());
            }
            r
        }
        Act::Malformed => (StatusCode::OK, "{\"choices\": [").into_response(),
        Act::Slow(d) => {
            tokio::time::sleep(d).await;
            axum::Json(serde_json::json!({"choices": [{"message": {"content": "late"}}]}))
                .into_response()
        }
        Act::Stream(pieces, cut) => {
            let mut events: Vec<String> = pieces
                .iter()
                .map(|p| {
                    let chunk = serde_json::json!({"choices": [{"delta": {"content": p}}]});
                    format!("data: {chunk}\n\n")
                })
                .collect();
            if !cut {
                let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
                events.push(format!("data: {usage}\n\n"));
                events.push("data: [DONE]\n\n".into());
            }
            sse_body(events)
        }
    }
}

async fn anthropic(
    State(f): State<Fake>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<serde_json::Value>,
) -> Response {
    f.hits.lock().unwrap().push((Instant::now(), headers));
    if body["stream"] == true {
        let events = [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"from "}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"claude"}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","usage":{"output_tokens":20}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ];
        return sse_body(
            events
                .iter()
                .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
                .collect(),
        );
    }
    axum::Json(serde_json::json!({
        "content": [{"type": "text", "text": "from claude"}],
        "usage": {"input_tokens": 10, "output_tokens": 20}
    }))
    .into_response()
}

async fn start(script: Vec<Act>) -> (Fake, String) {
    let fake = Fake {
        script: Arc::new(Mutex::new(script.into())),
        ..Fake::default()
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (fake, format!("http://{addr}/v1"))
}

fn model(name: &str, provider: ProviderKind, base: &str, key_env: &str) -> ModelConfig {
    ModelConfig {
        name: name.into(),
        provider,
        model: "fake-1".into(),
        base_url: Some(base.into()),
        api_key_env: Some(key_env.into()),
        temperature: Some(1.0),
        top_p: None,
        max_tokens: None,
        reasoning_effort: None,
        price_input_per_mtok: 2.0,
        price_output_per_mtok: 10.0,
    }
}

fn gateway(models: Vec<ModelConfig>, limits: Limits, cache: bool) -> (Gateway, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let config = Config {
        models,
        limits,
        ..Config::default()
    };
    let g = Gateway::new(
        config,
        storage,
        GatewayOptions {
            cache,
            replay_only: false,
        },
    )
    .unwrap();
    (g, dir)
}

fn fast_limits() -> Limits {
    Limits {
        max_retries: 2,
        backoff_base_ms: 20,
        backoff_max_ms: 2000,
        request_timeout_secs: 1,
        ..Limits::default()
    }
}

fn msgs() -> Vec<Message> {
    vec![Message::user("Remove the atom at index 0.")]
}

#[tokio::test]
async fn rate_limit_is_retried_after_retry_after() {
    let (fake, base) = start(vec![
        Act::Status(429, Some("1"), "{\"error\":{\"message\":\"slow down\"}}"),
        Act::Answer("ok"),
    ])
    .await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_A",
        )],
        fast_limits(),
        false,
    );
    let c = g.complete("m", &msgs(), 0).await.unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("ok", 2));
    let hits = fake.hits.lock().unwrap();
    let gap = hits[1].0 - hits[0].0;
    assert!(
        gap >= Duration::from_millis(950) && gap < Duration::from_millis(1900),
        "{gap:?}"
    );
    // 1000 input tokens at $2/M + 500 output at $10/M.
    assert!((c.cost_usd - 0.007).abs() < 1e-12);
}

#[tokio::test]
async fn server_errors_are_retried_a_bounded_number_of_times() {
    let (fake, base) = start(vec![Act::Status(500, None, "boom"); 10]).await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_B",
        )],
        fast_limits(),
        false,
    );
    let e = g.complete("m", &msgs(), 0).await.unwrap_err();
    assert_eq!(
        e,
        LlmError::Http {
            status: 500,
            message: "boom".into()
        }
    );
    assert_eq!(
        fake.hits.lock().unwrap().len(),
        3,
        "one attempt plus max_retries = 2"
    );
}

#[tokio::test]
async fn malformed_answers_and_client_errors_are_not_retried() {
    let (fake, base) = start(vec![
        Act::Malformed,
        Act::Status(400, None, "{\"error\":{\"message\":\"bad request\"}}"),
    ])
    .await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_C",
        )],
        fast_limits(),
        false,
    );
    assert!(matches!(
        g.complete("m", &msgs(), 0).await,
        Err(LlmError::Malformed(_))
    ));
    let e = g.complete("m", &msgs(), 1).await.unwrap_err();
    assert_eq!(
        e,
        LlmError::Http {
            status: 400,
            message: "bad request".into()
        }
    );
    assert_eq!(fake.hits.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn slow_answers_time_out_and_are_retried() {
    let (fake, base) = start(vec![Act::Slow(Duration::from_secs(3)), Act::Answer("fast")]).await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_D",
        )],
        fast_limits(),
        false,
    );
    let t0 = Instant::now();
    let c = g.complete("m", &msgs(), 0).await.unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("fast", 2));
    assert!(
        t0.elapsed() < Duration::from_millis(2800),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(fake.hits.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn cache_serves_repeats_for_free_and_keys_samples_apart() {
    let (fake, base) = start(vec![
        Act::Answer("first"),
        Act::Answer("second"),
        Act::Answer("third"),
    ])
    .await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_E",
        )],
        fast_limits(),
        true,
    );
    let a = g.complete("m", &msgs(), 0).await.unwrap();
    let b = g.complete("m", &msgs(), 0).await.unwrap();
    let c = g.complete("m", &msgs(), 1).await.unwrap();
    assert_eq!((a.text.as_str(), a.cached), ("first", false));
    assert_eq!(
        (b.text.as_str(), b.cached, b.cost_usd),
        ("first", true, 0.0)
    );
    assert_eq!((c.text.as_str(), c.cached), ("second", false));
    assert_eq!(fake.hits.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn daily_spend_cap_stops_new_calls() {
    let (fake, base) = start(vec![Act::Answer("a"), Act::Answer("b")]).await;
    let limits = Limits {
        daily_spend_usd: Some(0.005),
        ..fast_limits()
    };
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_F",
        )],
        limits,
        false,
    );
    g.complete("m", &msgs(), 0).await.unwrap();
    let e = g.complete("m", &msgs(), 1).await.unwrap_err();
    assert!(matches!(e, LlmError::SpendCap(_)), "{e}");
    assert_eq!(fake.hits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn keys_reach_the_provider_and_nothing_else() {
    let key = "sk-test-SECRET-7f3a9c";
    std::env::set_var("AW_T_KEY_G", key);
    let echo: &'static str =
        "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-SECRET-7f3a9c\"}}";
    let (fake, base) = start(vec![Act::Answer("fine"), Act::Status(401, None, echo)]).await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_G",
        )],
        fast_limits(),
        false,
    );
    g.complete("m", &msgs(), 0).await.unwrap();
    let auth = fake.hits.lock().unwrap()[0].1["authorization"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(auth, format!("Bearer {key}"));
    let e = g.complete("m", &msgs(), 1).await.unwrap_err();
    let shown = format!("{e} {e:?} {}", serde_json::to_string(&e).unwrap());
    assert!(!shown.contains(key), "{shown}");
    assert!(shown.contains("[redacted]"));
}

#[tokio::test]
async fn anthropic_shaped_provider_and_missing_keys() {
    std::env::set_var("AW_T_KEY_H", "ak-123456");
    let (fake, base) = start(vec![]).await;
    let (g, _d) = gateway(
        vec![
            model("claude", ProviderKind::Anthropic, &base, "AW_T_KEY_H"),
            model(
                "nokey",
                ProviderKind::Anthropic,
                &base,
                "AW_T_KEY_UNSET_XYZ",
            ),
        ],
        fast_limits(),
        false,
    );
    let c = g.complete("claude", &msgs(), 0).await.unwrap();
    assert_eq!(
        (c.text.as_str(), c.input_tokens, c.output_tokens),
        ("from claude", 10, 20)
    );
    assert_eq!(fake.hits.lock().unwrap()[0].1["x-api-key"], "ak-123456");
    assert_eq!(
        g.complete("nokey", &msgs(), 0).await.unwrap_err(),
        LlmError::MissingKey("AW_T_KEY_UNSET_XYZ".into())
    );
    assert_eq!(
        g.complete("other", &msgs(), 0).await.unwrap_err(),
        LlmError::UnknownModel("other".into())
    );
}

/// Runs a streamed call and writes down what `on` heard: pieces as text, restarts as `|`.
async fn stream_log(
    g: &Gateway,
    name: &str,
    sample: u32,
) -> (Result<server::llm::Completion, LlmError>, Vec<String>) {
    let mut heard = Vec::new();
    let r = g
        .complete_stream(name, &msgs(), sample, |e| match e {
            StreamEvent::Delta(t) => heard.push(t.to_string()),
            StreamEvent::Restart { attempt } => heard.push(format!("|{attempt}")),
        })
        .await;
    (r, heard)
}

#[tokio::test]
async fn streamed_answers_arrive_in_pieces_with_tokens_cost_and_cache() {
    std::env::set_var("AW_T_KEY_S", "sk-stream");
    let (fake, base) = start(vec![Act::Stream(&["<cif>", "\ndata_x", "\n</cif>"], false)]).await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_S",
        )],
        fast_limits(),
        true,
    );
    let (c, heard) = stream_log(&g, "m", 0).await;
    let c = c.unwrap();
    assert_eq!(heard, ["<cif>", "\ndata_x", "\n</cif>"]);
    assert_eq!(c.text, "<cif>\ndata_x\n</cif>");
    assert_eq!(
        (c.input_tokens, c.output_tokens, c.attempts, c.cached),
        (1000, 500, 1, false)
    );
    assert!((c.cost_usd - (1000.0 * 2.0 + 500.0 * 10.0) / 1e6).abs() < 1e-12);
    // The repeat comes from the cache in one piece, for free, without a request.
    let (again, heard) = stream_log(&g, "m", 0).await;
    let again = again.unwrap();
    assert_eq!(heard, std::slice::from_ref(&c.text));
    assert!(again.cached && again.cost_usd == 0.0);
    assert_eq!(fake.hits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_cut_stream_is_retried_from_the_start_a_bounded_number_of_times() {
    std::env::set_var("AW_T_KEY_C", "sk-cut");
    let (fake, base) = start(vec![
        Act::Status(429, Some("0"), "{}"),
        Act::Stream(&["<cif>", "\ndata_"], true),
        Act::Stream(&["<cif>", "\ndata_x"], false),
        Act::Stream(&["a"], true),
        Act::Stream(&["b"], true),
        Act::Stream(&["c"], true),
    ])
    .await;
    let (g, _d) = gateway(
        vec![model(
            "m",
            ProviderKind::OpenaiCompatible,
            &base,
            "AW_T_KEY_C",
        )],
        fast_limits(),
        false,
    );
    let (c, heard) = stream_log(&g, "m", 0).await;
    let c = c.unwrap();
    // The 429 came before any text (no restart); the cut stream did show text.
    assert_eq!(heard, ["<cif>", "\ndata_", "|3", "<cif>", "\ndata_x"]);
    assert_eq!((c.text.as_str(), c.attempts), ("<cif>\ndata_x", 3));
    // Cut three times with two retries allowed: an error naming the cut, then no more calls.
    let (e, heard) = stream_log(&g, "m", 1).await;
    assert!(
        matches!(e, Err(LlmError::Stream(ref m)) if m.contains("before the end")),
        "{e:?}"
    );
    assert_eq!(heard, ["a", "|2", "b", "|3", "c"]);
    assert_eq!(fake.hits.lock().unwrap().len(), 6);
}

#[tokio::test]
async fn anthropic_streams_skip_thinking_and_count_tokens() {
    std::env::set_var("AW_T_KEY_AS", "ak-stream");
    let (_fake, base) = start(vec![]).await;
    let (g, _d) = gateway(
        vec![model(
            "claude",
            ProviderKind::Anthropic,
            &base,
            "AW_T_KEY_AS",
        )],
        fast_limits(),
        false,
    );
    let (c, heard) = stream_log(&g, "claude", 0).await;
    let c = c.unwrap();
    assert_eq!(heard, ["from ", "claude"]);
    assert_eq!(
        (c.text.as_str(), c.input_tokens, c.output_tokens),
        ("from claude", 10, 20)
    );
}
