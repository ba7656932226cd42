//! The real router on a loopback port, against a temporary data dir and dist dir.

use std::path::Path;

use server::http::{router, AppState};
use server::storage::Storage;

async fn start(dist: &Path, data: &Path) -> String {
    let storage = Storage::open(data).expect("open storage");
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
    assert_eq!(body["schema_version"], 2);
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
