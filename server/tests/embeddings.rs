//! Embeddings through the gateway against a fake OpenAI-compatible endpoint on 127.0.0.1:
//! the vectors in input order, batching, the cache (a repeated call sends nothing, replay-only
//! serves it), cost and spend, retries, key secrecy, and the daily cap.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use server::config::{Config, EmbeddingModelConfig, Limits, ProviderKind};
use server::llm::{Gateway, GatewayOptions, LlmError};
use server::storage::Storage;

fn model(base: &str, key_env: &str, batch_size: usize) -> EmbeddingModelConfig {
    EmbeddingModelConfig {
        name: "emb".into(),
        provider: ProviderKind::OpenaiCompatible,
        model: "fake-embed".into(),
        base_url: Some(base.into()),
        api_key_env: Some(key_env.into()),
        dimensions: None,
        batch_size,
        price_input_per_mtok: 1.0,
    }
}

fn gateway(
    storage: &Storage,
    e: EmbeddingModelConfig,
    limits: Limits,
    options: GatewayOptions,
) -> Gateway {
    let config = Config {
        embeddings: vec![e],
        limits: Limits {
            max_retries: 2,
            backoff_base_ms: 10,
            backoff_max_ms: 100,
            ..limits
        },
        ..Config::default()
    };
    Gateway::new(config, storage.clone(), options).unwrap()
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn vectors_in_order_batched_cached_and_paid_once() {
    std::env::set_var("AW_EMB_KEY_A", "ek-secret-000111");
    let (base, fake) = common::fake_embeddings().await;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let cached = GatewayOptions {
        cache: true,
        replay_only: false,
    };
    let g = gateway(
        &storage,
        model(&base, "AW_EMB_KEY_A", 2),
        Limits::default(),
        cached,
    );
    let input = texts(&[
        "a vacancy defect",
        "crystal structure",
        "a vacancy defect",
        "read a POSCAR file",
        "formation energy",
        "halide perovskite",
    ]);
    let got = g.embed("emb", &input, None).await.unwrap();
    for (t, v) in input.iter().zip(&got.vectors) {
        assert_eq!(v, &common::concept_vector(t), "{t}");
    }
    // Five distinct texts in batches of two; the repeated one is sent once.
    assert_eq!(got.requests, 3);
    assert_eq!(fake.request_count(), 3);
    assert_eq!(fake.inputs().len(), 5);
    assert_eq!(got.cached, 0);
    let unique: std::collections::BTreeSet<&String> = input.iter().collect();
    let unique_bytes: usize = unique.iter().map(|t| t.len()).sum();
    assert_eq!(got.input_tokens, unique_bytes as u64);
    assert!((got.cost_usd - unique_bytes as f64 / 1e6).abs() < 1e-12);
    assert!((storage.spend_on(server::llm::today()).unwrap() - got.cost_usd).abs() < 1e-12);
    // The key went only into the authorization header.
    assert!(fake
        .auth
        .lock()
        .unwrap()
        .iter()
        .all(|a| a.as_deref() == Some("Bearer ek-secret-000111")));

    // Again, with one new text: only that one is sent, and it costs only its bytes.
    let mut more = input.clone();
    more.push("colloidal nanoparticles".into());
    let again = g.embed("emb", &more, None).await.unwrap();
    assert_eq!((again.cached, again.requests), (6, 1));
    assert_eq!(fake.request_count(), 4);
    assert_eq!(again.vectors[..6], got.vectors[..]);
    assert_eq!(again.input_tokens, "colloidal nanoparticles".len() as u64);

    // Replay-only serves the cache and never calls; a text it lacks is NotCached.
    let replay = gateway(
        &storage,
        model(&base, "AW_EMB_KEY_A", 2),
        Limits::default(),
        GatewayOptions {
            cache: false,
            replay_only: true,
        },
    );
    let r = replay.embed("emb", &more, None).await.unwrap();
    assert_eq!((r.cached, r.requests, r.cost_usd), (7, 0, 0.0));
    assert_eq!(
        replay.embed("emb", &texts(&["something new"]), None).await,
        Err(LlmError::NotCached)
    );
    assert_eq!(fake.request_count(), 4);
    assert_eq!(
        g.embed("nope", &input, None).await,
        Err(LlmError::UnknownModel("nope".into()))
    );
}

#[tokio::test]
async fn retries_redacts_and_respects_the_daily_cap() {
    std::env::set_var("AW_EMB_KEY_B", "ek-secret-222333");
    let (base, fake) = common::fake_embeddings().await;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    fake.fail_first.lock().unwrap().push((503, "busy".into()));
    let g = gateway(
        &storage,
        model(&base, "AW_EMB_KEY_B", 64),
        Limits {
            daily_spend_usd: Some(0.000_030),
            ..Limits::default()
        },
        GatewayOptions::default(),
    );
    // A 503 is retried.
    let one = g
        .embed("emb", &texts(&["crystal lattice"]), None)
        .await
        .unwrap();
    assert_eq!(one.vectors, vec![common::concept_vector("crystal lattice")]);
    // A 401 that echoes the key is not retried, and the key never shows.
    fake.fail_first
        .lock()
        .unwrap()
        .push((401, "bad key ek-secret-222333".into()));
    match g.embed("emb", &texts(&["battery cathode"]), None).await {
        Err(LlmError::Http {
            status: 401,
            message,
        }) => {
            assert!(!message.contains("ek-secret-222333"), "{message}");
            assert!(message.contains("[redacted]"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Spend so far: 15 bytes = $0.000015. 25 more bytes are admitted (nothing else is in
    // flight), after which the $0.00003 cap is reached and nothing more is sent.
    g.embed("emb", &texts(&["catalytic nanoparticles x"]), None)
        .await
        .unwrap();
    let sent = fake.request_count();
    assert!(matches!(
        g.embed("emb", &texts(&["halide perovskite"]), None).await,
        Err(LlmError::SpendCap(_))
    ));
    assert_eq!(fake.request_count(), sent);
}
