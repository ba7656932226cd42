//! A per-client token bucket for the endpoints that cost money (model calls, runs).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::AppState;

/// Default requests per minute per client.
pub const DEFAULT_PER_MINUTE: u32 = 30;

/// Tokens left and the time they were counted, per client address.
type Buckets = HashMap<Option<IpAddr>, (f64, Instant)>;

/// Token buckets keyed by client address.
#[derive(Clone)]
pub struct Limiter {
    per_minute: u32,
    buckets: Arc<Mutex<Buckets>>,
}

impl Limiter {
    /// A limiter allowing `per_minute` requests per client (bursts up to that many).
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute: per_minute.max(1),
            buckets: Default::default(),
        }
    }

    /// Take a token for `client`; false when its bucket is empty.
    pub fn allow(&self, client: Option<IpAddr>) -> bool {
        let Ok(mut buckets) = self.buckets.lock() else {
            return true;
        };
        let now = Instant::now();
        let cap = self.per_minute as f64;
        let (tokens, last) = buckets.entry(client).or_insert((cap, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * cap / 60.0).min(cap);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Middleware: 429 with a JSON error when the client's bucket is empty.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    if state.limiter.allow(client) {
        next.run(req).await
    } else {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "10")],
            Json(serde_json::json!({"error": {"code": "rate_limited", "message": "too many requests from this client; try again shortly"}})),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_empty_and_are_per_client() {
        let l = Limiter::new(3);
        let a = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(l.allow(a) && l.allow(a) && l.allow(a));
        assert!(!l.allow(a));
        assert!(l.allow(Some(IpAddr::from([127, 0, 0, 2]))));
    }
}
