//! Calls to the AtomWorld server's JSON API.

use serde::Deserialize;

/// The server's `GET /api/health` answer (the fields the page shows).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Health {
    /// `"ok"` when healthy.
    pub status: String,
    /// Server version.
    pub version: String,
    /// Git commit of the server build.
    pub commit: String,
}

/// Ask the server how it is. An error means no server (static hosting) or a broken one.
pub async fn health() -> Result<Health, String> {
    let res = gloo_net::http::Request::get("/api/health")
        .send()
        .await
        .map_err(|e| format!("server unreachable: {e}"))?;
    if !res.ok() {
        return Err(format!("server answered HTTP {}", res.status()));
    }
    res.json::<Health>()
        .await
        .map_err(|e| format!("unexpected health answer: {e}"))
}
