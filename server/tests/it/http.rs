//! The real router on a loopback port, against a temporary data dir and dist dir.

use std::path::Path;

use server::http::{router, AppState};
use server::storage::Storage;

async fn start(dist: &Path, data: &Path) -> String {
    start_on(dist, Storage::open(data).expect("open storage")).await
}

async fn start_on(dist: &Path, storage: Storage) -> String {
    let app = router(AppState::new(storage).expect("state"), dist);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn write_dist(dir: &Path) {
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>AtomWorld</title>",
    )
    .unwrap();
    // Large and repetitive enough that the compression layer compresses it.
    let wasm: Vec<u8> = b"\0asm\x01\0\0\0"
        .iter()
        .copied()
        .cycle()
        .take(64 * 1024)
        .collect();
    std::fs::write(dir.join("app-0123456789abcdef_bg.wasm"), wasm).unwrap();
}

#[tokio::test]
async fn health_reports_version_and_schema() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let base = start(dist.path(), data.path()).await;
    let res = reqwest::get(format!("{base}/api/health")).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["schema_version"], 19);
    assert_eq!(body["database"], "sqlite");
    assert!(body["commit"].is_string());
    assert!(data.path().join(server::storage::DB_FILE).is_file());
}

#[tokio::test]
async fn wasm_is_served_compressed_with_mime_and_immutable_cache() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let base = start(dist.path(), data.path()).await;
    let client = reqwest::Client::new();
    for (enc, expected) in [("br", "br"), ("gzip", "gzip")] {
        let res = client
            .get(format!("{base}/app-0123456789abcdef_bg.wasm"))
            .header("accept-encoding", enc)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "application/wasm");
        assert_eq!(res.headers()["content-encoding"], expected);
        assert_eq!(
            res.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        let bytes = res.bytes().await.unwrap();
        assert!(
            bytes.len() < 64 * 1024 / 4,
            "compressed size {}",
            bytes.len()
        );
    }
}

/// Once the app's files are precompressed, a browser gets the brotli sibling's very bytes
/// (no pass per request), with the wasm's type and cache headers; one that takes no brotli
/// gets the gzip sibling, and one that takes neither the file itself.
#[tokio::test]
async fn precompressed_siblings_are_served_as_they_are() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let done = server::http::assets::precompress(dist.path()).unwrap();
    assert_eq!(
        done.written, 1,
        "the wasm (index.html is under the size worth compressing)"
    );
    let base = start(dist.path(), data.path()).await;
    let client = reqwest::Client::new();
    let wasm = "app-0123456789abcdef_bg.wasm";
    for (enc, sibling) in [("br", Some("br")), ("gzip", Some("gz")), ("identity", None)] {
        let res = client
            .get(format!("{base}/{wasm}"))
            .header("accept-encoding", enc)
            .send()
            .await
            .unwrap();
        assert_eq!(res.headers()["content-type"], "application/wasm");
        assert_eq!(
            res.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        let encoding = res.headers().get("content-encoding").cloned();
        let bytes = res.bytes().await.unwrap();
        let expected = match sibling {
            Some(ext) => std::fs::read(dist.path().join(format!("{wasm}.{ext}"))).unwrap(),
            None => std::fs::read(dist.path().join(wasm)).unwrap(),
        };
        assert_eq!(encoding.is_some(), sibling.is_some(), "{enc}");
        assert_eq!(bytes.as_ref(), expected.as_slice(), "{enc}");
    }
}

#[tokio::test]
async fn client_routes_fall_back_to_the_app() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let base = start(dist.path(), data.path()).await;
    let res = reqwest::get(format!("{base}/c/abc123")).await.unwrap();
    assert_eq!(res.headers()["cache-control"], "no-cache");
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("<title>AtomWorld</title>"));
}

#[tokio::test]
async fn health_fails_when_the_database_takes_no_writes() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let storage = Storage::open(data.path()).unwrap();
    let base = start_on(dist.path(), storage.clone()).await;
    assert_eq!(
        reqwest::get(format!("{base}/api/health"))
            .await
            .unwrap()
            .status(),
        200
    );
    // Read-only: reads work, every write fails (as on a read-only file).
    storage.set_read_only(true).unwrap();
    let res = reqwest::get(format!("{base}/api/health")).await.unwrap();
    assert_eq!(res.status(), 503);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "error");
    assert_eq!(body["error"]["code"], "database_unavailable");
}

#[tokio::test]
async fn every_api_error_is_json_with_a_stable_code() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let base = start(dist.path(), data.path()).await;
    let c = reqwest::Client::new();
    let cases = [
        // Not JSON, wrong content type, wrong shape, too large, no such route or method.
        (
            c.post(format!("{base}/api/complete"))
                .header("content-type", "application/json")
                .body("{nope"),
            400,
            "bad_request",
        ),
        (
            c.post(format!("{base}/api/complete")).body("{}"),
            415,
            "unsupported_media_type",
        ),
        (
            c.post(format!("{base}/api/complete"))
                .json(&serde_json::json!({"prompt": 1})),
            422,
            "invalid_body",
        ),
        (
            c.post(format!("{base}/api/runs"))
                .header("content-type", "application/json")
                .body(vec![b' '; 2 * 1024 * 1024]),
            413,
            "too_large",
        ),
        (c.get(format!("{base}/api/no-such-thing")), 404, "not_found"),
        (
            c.delete(format!("{base}/api/health")),
            405,
            "method_not_allowed",
        ),
        (c.get(format!("{base}/api/runs/nope")), 404, "not_found"),
    ];
    for (req, status, code) in cases {
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), status);
        assert!(res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"));
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
}

#[tokio::test]
async fn security_headers_allow_the_app_and_little_else() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        dist.path().join("index.html"),
        "<!doctype html><script type=\"module\">import init from '/app.js'; init();</script>",
    )
    .unwrap();
    let base = start(dist.path(), data.path()).await;
    for path in ["/", "/api/health", "/c/abc"] {
        let res = reqwest::get(format!("{base}{path}")).await.unwrap();
        let h = res.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("'wasm-unsafe-eval'") && csp.contains("'sha256-"),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("connect-src 'self'"));
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["referrer-policy"], "no-referrer");
    }
}

#[tokio::test]
async fn the_openapi_document_lists_every_route_and_matches_the_answers() {
    let (dist, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_dist(dist.path());
    let base = start(dist.path(), data.path()).await;
    let doc: serde_json::Value = reqwest::get(format!("{base}/api/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"].as_str().map(|v| &v[..2]), Some("3."));
    // Every route the router declares is documented, and nothing else.
    let source = include_str!("../../src/http/mod.rs");
    let mut routes: Vec<&str> = source
        .split(".route(")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix('"')?.split('"').next())
        .filter(|r| !r.contains('*'))
        .collect();
    routes.sort();
    routes.dedup();
    let mut documented: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    documented.sort();
    assert_eq!(routes, documented);
    // An answer has exactly the fields its schema names.
    let health: serde_json::Value = reqwest::get(format!("{base}/api/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schema = &doc["components"]["schemas"]["Health"]["properties"];
    let mut keys: Vec<&String> = health.as_object().unwrap().keys().collect();
    let mut props: Vec<&String> = schema.as_object().unwrap().keys().collect();
    keys.sort();
    props.sort();
    assert_eq!(keys, props);
}
