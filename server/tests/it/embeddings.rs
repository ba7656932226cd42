//! Embeddings through the gateway against a fake OpenAI-compatible endpoint on 127.0.0.1:
//! the vectors in input order, batching, the cache (a repeated call sends nothing, replay-only
//! serves it), cost and spend, retries, key secrecy, and the daily cap.

use crate::common;

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

/// Batches go out side by side up to the endpoint's concurrency limit, never beyond it,
/// and the vectors still come back in the texts' order.
#[tokio::test]
async fn batches_run_concurrently_within_the_endpoint_limit() {
    let (base, fake) = common::fake_embeddings().await;
    *fake.delay.lock().unwrap() = std::time::Duration::from_millis(200);
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let g = gateway(
        &storage,
        model(&base, "AW_EMB_UNSET", 1),
        Limits {
            max_concurrency_per_provider: 3,
            ..Limits::default()
        },
        GatewayOptions::default(),
    );
    let input: Vec<String> = (0..9).map(|i| format!("crystal number {i} x{i}")).collect();
    let got = g.embed("emb", &input, None).await.unwrap();
    assert_eq!(got.requests, 9);
    for (t, v) in input.iter().zip(&got.vectors) {
        assert_eq!(v, &common::concept_vector(t), "{t}");
    }
    let (now, most) = *fake.in_flight.lock().unwrap();
    assert_eq!((now, most), (0, 3), "three at a time");
}

fn doc(name: &str, doc: &str) -> benchmarks::mattools::code::agent::DocEntry {
    benchmarks::mattools::code::agent::DocEntry {
        name: name.into(),
        kind: "function".into(),
        signature: String::new(),
        doc: doc.into(),
    }
}

/// MatTools' documentation search by embeddings: the fake's vectors put "vacancy" and
/// "defect" in one direction, so the vacancy entry ranks first where BM25, which matches
/// words, ranks the entry that shares "point"; the index is embedded once, and a repeated
/// query costs nothing.
#[tokio::test]
async fn documentation_search_by_embeddings_ranks_by_the_model() {
    use server::suites::mattools::docs::DocIndex;
    let (base, fake) = common::fake_embeddings().await;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let g = gateway(
        &storage,
        model(&base, "AW_EMB_UNSET", 64),
        Limits::default(),
        GatewayOptions {
            cache: true,
            replay_only: false,
        },
    );
    let index = DocIndex::new(vec![
        doc(
            "pymatgen.core.Structure.remove_sites",
            "Remove the sites at these point indices.",
        ),
        doc(
            "pymatgen.gen.VacancyMaker",
            "Make a vacancy in a supercell.",
        ),
        doc("pymatgen.io.vasp.Poscar.from_file", "Read a POSCAR file."),
    ])
    .unwrap();
    let bm25 = index.search("point defect", 3);
    assert_eq!(bm25[0].name, "pymatgen.core.Structure.remove_sites");
    let found = index
        .search_embedded(&g, "emb", "point defect", 2, None)
        .await
        .unwrap();
    let names: Vec<&str> = found.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names[0], "pymatgen.gen.VacancyMaker", "{names:?}");
    assert_eq!(names.len(), 2);
    // Three entries and the query, each text once.
    assert_eq!(fake.inputs().len(), 4);
    assert_eq!(
        found.input_tokens,
        fake.inputs().iter().map(|t| t.len() as u64).sum::<u64>()
    );
    let again = index
        .search_embedded(&g, "emb", "point defect", 2, None)
        .await
        .unwrap();
    assert_eq!(again.entries, found.entries);
    assert_eq!((again.input_tokens, fake.inputs().len()), (0, 4));
    // A new query sends only itself.
    let poscar = index
        .search_embedded(&g, "emb", "load a file", 1, None)
        .await
        .unwrap();
    assert_eq!(poscar.entries[0].name, "pymatgen.io.vasp.Poscar.from_file");
    assert_eq!(fake.inputs().len(), 5);
    // An unknown model is an error, not a silent BM25.
    assert!(index
        .search_embedded(&g, "nope", "point defect", 2, None)
        .await
        .is_err());
}

fn recipe_line(id: &str, contribution: &str) -> String {
    serde_json::json!({
        "id": id,
        "contribution": format!("## Key Contributions\n- {contribution}"),
        "recipe": format!("## Materials\n- recipe of {id}"),
    })
    .to_string()
}

/// AlchemyBench's RAG condition over recipes without stored embeddings: `atomworld run`
/// computes them through the embeddings endpoint, each test recipe gets the train recipe the
/// fake's vectors put nearest, the run records the model, and a second run pays nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alchemy_references_from_computed_embeddings() {
    let (base, fake) = common::fake_embeddings().await;
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.jsonl");
    std::fs::write(
        &train,
        [
            recipe_line("t1", "Colloidal nanoparticles of gold"),
            recipe_line("t2", "A layered cathode for a sodium battery"),
            recipe_line("t3", "Halide perovskite films by spin coating"),
        ]
        .join("\n"),
    )
    .unwrap();
    let test = dir.path().join("test_high_impact.jsonl");
    std::fs::write(
        &test,
        [
            recipe_line("q1", "Electrode for battery anode"),
            recipe_line("q2", "Perovskite halide absorber"),
        ]
        .join("\n"),
    )
    .unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[embeddings]]\nname = \"emb\"\nprovider = \"openai-compatible\"\n\
             model = \"fake-embed\"\nbase_url = \"{base}\"\nprice_input_per_mtok = 1.0\n"
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let run_in = |data: &std::path::Path, extra: &[&str]| {
        let mut cmd = common::bin();
        cmd.args([
            "run",
            "--suite",
            "alchemy",
            "--model",
            "reference",
            "--rag-k",
            "1",
        ])
        .arg("--tasks")
        .arg(&test)
        .arg("--train")
        .arg(&train)
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(data)
        .args(extra);
        cmd.output().unwrap()
    };
    let run = |extra: &[&str]| run_in(&data, extra);
    // Without an embeddings model the missing embeddings are an input error.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--embeddings-model"), "{stderr}");
    assert_eq!(fake.request_count(), 0);

    let out = run(&["--embeddings-model", "emb"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("embeddings of 5 entries by emb: 0 from the cache"),
        "{stderr}"
    );
    assert_eq!(fake.inputs().len(), 5);
    let storage = Storage::open(&data).unwrap();
    let (id, spec, _) = storage.list_runs().unwrap().remove(0);
    assert_eq!(spec.embeddings.as_deref(), Some("emb"));
    let rows = storage.results(&id).unwrap();
    let nearest = |task: &str| {
        let row = rows.iter().find(|r| r.task_id == task).unwrap();
        assert_eq!(
            row.group, "test_high_impact",
            "the split comes from the file name"
        );
        let t = row.task.as_ref().unwrap();
        assert!(t.get("contributions_embedding").is_none());
        t["references"][0]["recipe"].as_str().unwrap().to_string()
    };
    assert_eq!(nearest("q1"), "## Materials\n- recipe of t2");
    assert_eq!(nearest("q2"), "## Materials\n- recipe of t3");

    // Again: every embedding comes from the cache.
    let out = run(&["--embeddings-model", "emb"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("embeddings of 5 entries by emb: 5 from the cache, 0 tokens"),
        "{stderr}"
    );
    assert_eq!(fake.request_count(), 1);

    // A workshop elsewhere: the exported cache carries the embeddings, and --replay-only
    // serves them with no call.
    let file = dir.path().join("cache.jsonl");
    let other = dir.path().join("other");
    for (action, d) in [("export", &data), ("import", &other)] {
        let out = common::bin()
            .args(["cache", action])
            .arg(&file)
            .arg("--data-dir")
            .arg(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run_in(&other, &["--embeddings-model", "emb", "--replay-only"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("5 from the cache, 0 tokens"), "{stderr}");
    assert_eq!(fake.request_count(), 1);
}

/// Embeddings computed for an AlchemyBench run count against the run's spend cap: when they
/// alone reach it, no answer is asked for, and the summary shows what they cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alchemy_embeddings_count_against_the_run_cap() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (emb, fake) = common::fake_embeddings().await;
    let answers = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = answers.clone();
    let chat = common::spawn_app(axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { common::completion("## Materials\n- gold", 10) }
        }),
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.jsonl");
    std::fs::write(&train, recipe_line("t1", "Colloidal gold")).unwrap();
    let test = dir.path().join("test_high_impact.jsonl");
    std::fs::write(&test, recipe_line("q1", "Gold electrode")).unwrap();
    // $0.01 per embedded byte: the two recipes cost more than the $0.05 cap.
    let config = common::fake_model_config(
        dir.path(),
        &chat,
        &format!(
            "{}[[embeddings]]\nname = \"emb\"\nprovider = \"openai-compatible\"\n\
             model = \"fake-embed\"\nbase_url = \"{emb}\"\nprice_input_per_mtok = 10000.0\n\
             [limits]\nrun_spend_usd = 0.05\n",
            common::PRICED
        ),
    );
    let data = dir.path().join("data");
    let summary = dir.path().join("summary.json");
    let out = common::run_fake(&config, &data)
        .args([
            "--suite",
            "alchemy",
            "--rag-k",
            "1",
            "--embeddings-model",
            "emb",
        ])
        .arg("--tasks")
        .arg(&test)
        .arg("--train")
        .arg(&train)
        .arg("--summary-json")
        .arg(&summary)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bytes: usize = fake.inputs().iter().map(String::len).sum();
    let cost = bytes as f64 * 0.01;
    assert!(cost > 0.05, "{cost}");
    assert!(
        stderr.contains(&format!(
            "the run's spend cap $0.05 is reached (${cost:.4} spent)"
        )),
        "{stderr}"
    );
    assert_eq!(answers.load(Ordering::SeqCst), 0, "no answer was asked for");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let recorded = summary["preparation_cost_usd"].as_f64().unwrap();
    assert!((recorded - cost).abs() < 1e-9, "{recorded} vs {cost}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("preparing the tasks (embeddings) cost $"),
        "{table}"
    );
}

/// `POST /api/runs`: MatTools' retrieving agents take the configured embeddings model, and
/// the run's spec (`GET /api/runs/{id}`) names it; the single agent does not retrieve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_runs_take_the_configured_embeddings_model() {
    use server::http::{router, AppState};
    let (base, _fake) = common::fake_embeddings().await;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let g = gateway(
        &storage,
        model(&base, "AW_EMB_UNSET", 64),
        Limits {
            embeddings_model: Some("emb".into()),
            ..Limits::default()
        },
        GatewayOptions::default(),
    );
    let app = router(AppState::with_gateway(storage, g, None, 1000), dir.path());
    let server = common::serve_router(app).await;
    let c = reqwest::Client::new();
    let task = serde_json::json!({
        "name": "t", "question": "Make a vacancy.", "verification": "def t(properties):\n    return 'ok'\n",
        "properties": [{"name": "a", "description": "d", "format": "float", "value": 1}],
        "unavailable": "no data here"
    });
    for (agent, want) in [("rag", Some("emb")), ("single", None)] {
        let body = serde_json::json!({"suite": "mattools-code", "model": "reference",
            "agent": agent, "tasks": [task]});
        let id = common::create_run(&c, &server, body).await;
        let run = common::get_json(&c, format!("{server}/api/runs/{id}")).await;
        assert_eq!(run["spec"]["embeddings"].as_str(), want, "{run}");
    }
}

/// `POST /api/suites/alchemy/references`: the page's K references among the server's recipes,
/// by cosine over embeddings from the configured model (behind the passcode: it costs
/// money), the ranking equal to a brute-force one; without a model, by BM25, labelled as a
/// stand-in; K outside the benchmark's settings is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_retrieves_alchemy_references() {
    use server::http::{router, AppState};
    let (base, fake) = common::fake_embeddings().await;
    let c = reqwest::Client::new();
    let serve = |embeddings: bool, passcode: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(dir.path()).unwrap();
        let limits = Limits {
            embeddings_model: embeddings.then(|| "emb".to_string()),
            ..Limits::default()
        };
        let g = gateway(
            &storage,
            model(&base, "AW_EMB_UNSET", 64),
            limits,
            GatewayOptions::default(),
        );
        let app = router(
            AppState::with_gateway(storage, g, passcode.map(str::to_string), 1000),
            dir.path(),
        );
        (dir, app)
    };
    let (_keep, app) = serve(true, Some("sesame"));
    let server = common::serve_router(app).await;
    let tasks = common::get_json(&c, format!("{server}/api/suites/alchemy/tasks")).await;
    let tasks = tasks["tasks"].as_array().unwrap().clone();
    assert!(tasks.len() >= 10);
    let query = tasks[0]["task"].clone();
    let ask = |k: usize, pass: Option<&'static str>| {
        let mut r = c
            .post(format!("{server}/api/suites/alchemy/references"))
            .json(&serde_json::json!({"task": query, "k": k}));
        if let Some(p) = pass {
            r = r.bearer_auth(p);
        }
        r.send()
    };
    assert_eq!(ask(5, None).await.unwrap().status(), 401);
    assert_eq!(fake.request_count(), 0);
    let r = ask(3, Some("sesame")).await.unwrap();
    assert_eq!(r.status(), 400);
    let e: serde_json::Value = r.json().await.unwrap();
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("0, 1, 5, 10 or 25"),
        "{e}"
    );
    let got: serde_json::Value = ask(5, Some("sesame")).await.unwrap().json().await.unwrap();
    let retrieval = &got["task"]["retrieval"];
    assert!(
        retrieval["method"]
            .as_str()
            .unwrap()
            .starts_with("cosine top-5 over embeddings"),
        "{retrieval}"
    );
    // Brute force: cosine of the fake model's vectors over every other recipe.
    let cos = |a: &[f32], b: &[f32]| {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (n(a) * n(b))
    };
    let q = common::concept_vector(query["contribution"].as_str().unwrap());
    let mut brute: Vec<(String, f32)> = tasks[1..]
        .iter()
        .map(|t| {
            let v = common::concept_vector(t["task"]["contribution"].as_str().unwrap());
            (t["id"].as_str().unwrap().to_string(), cos(&q, &v))
        })
        .collect();
    brute.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let hits = retrieval["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 5);
    for (hit, (id, score)) in hits.iter().zip(&brute) {
        assert!(
            (hit[1].as_f64().unwrap() as f32 - score).abs() < 1e-5,
            "{hit} vs {id} {score}"
        );
    }
    let prompt = got["prompt"].as_str().unwrap();
    assert!(prompt.contains("# Reference 5:"), "{prompt}");
    assert!(!prompt.contains("# Reference 6:"));
    assert_eq!(got["task"]["references"].as_array().unwrap().len(), 5);

    // No embeddings model (and no passcode on this server): BM25, said to be a stand-in, and
    // K = 0 is the listed one-shot task.
    let (_keep2, app) = serve(false, None);
    let server = common::serve_router(app).await;
    let post = |k: usize| {
        c.post(format!("{server}/api/suites/alchemy/references"))
            .json(&serde_json::json!({"task": query, "k": k}))
            .send()
    };
    let sent = fake.request_count();
    let got: serde_json::Value = post(10).await.unwrap().json().await.unwrap();
    assert_eq!(fake.request_count(), sent);
    let method = got["task"]["retrieval"]["method"].as_str().unwrap();
    assert!(
        method.starts_with("BM25") && method.contains("stand-in"),
        "{method}"
    );
    let ids: Vec<&str> = got["task"]["retrieval"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 10.min(tasks.len() - 1));
    assert!(
        !ids.contains(&tasks[0]["id"].as_str().unwrap()),
        "never itself"
    );
    let one_shot: serde_json::Value = post(0).await.unwrap().json().await.unwrap();
    assert_eq!(one_shot["prompt"], tasks[0]["prompt"]);
    assert!(one_shot["task"].get("retrieval").is_none());
}
