//! A per-client token bucket for the endpoints that cost money, start work or store data
//! (model calls, runs, share-link cases). Every request counts, a refused passcode too: so
//! many wrong passcodes from one address also lock that address out until its bucket
//! refills, and the answer says so.

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

    /// Whether `client` has a token left, without taking it; else the seconds until it has.
    pub fn check(&self, client: Option<IpAddr>) -> Result<(), u64> {
        self.count(client, 0.0)
    }

    /// Take a token for `client`; when its bucket is empty, the seconds until it holds one.
    pub fn take(&self, client: Option<IpAddr>) -> Result<(), u64> {
        self.count(client, 1.0)
    }

    /// The requests a client may make a minute.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Refill `client`'s bucket and take `cost` tokens if it holds a whole one.
    fn count(&self, client: Option<IpAddr>, cost: f64) -> Result<(), u64> {
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        let cap = self.per_minute as f64;
        let (tokens, last) = buckets.entry(client).or_insert((cap, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * cap / 60.0).min(cap);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= cost;
            Ok(())
        } else {
            Err(((1.0 - *tokens) * 60.0 / cap).ceil().max(1.0) as u64)
        }
    }
}

/// Requests of one kind in progress per client address, at most `max` each: a person's
/// scorings, so one participant's flood waits in no one else's way and is told "busy".
#[derive(Clone)]
pub struct InFlight {
    max: usize,
    counts: Arc<Mutex<HashMap<Option<IpAddr>, usize>>>,
}

/// One request counted by [`InFlight`]; dropping it ends it.
pub struct Entered {
    of: InFlight,
    client: Option<IpAddr>,
}

impl InFlight {
    /// At most `max` requests in progress per client.
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            counts: Arc::default(),
        }
    }

    /// Count a request of `client`, or say how many it already has in progress.
    pub fn enter(&self, client: Option<IpAddr>) -> Result<Entered, usize> {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = counts.entry(client).or_default();
        if *n >= self.max {
            return Err(*n);
        }
        *n += 1;
        Ok(Entered {
            of: self.clone(),
            client,
        })
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut counts = self
            .of
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = counts.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.client);
            }
        }
    }
}

/// Middleware: 429 with a JSON error when the client's bucket is empty.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    match state.limiter.take(client) {
        Ok(()) => next.run(req).await,
        Err(wait) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", wait.to_string())],
            Json(serde_json::json!({"error": {
                "code": "rate_limited",
                "message": format!(
                    "this address has made more than {} requests in the last minute to \
                     model, run and share endpoints (requests refused for a wrong passcode \
                     count too); try again in {wait} s",
                    state.limiter.per_minute
                ),
            }})),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_in_progress_are_bounded_per_client() {
        let f = InFlight::new(2);
        let (a, b) = (
            Some(IpAddr::from([127, 0, 0, 1])),
            Some(IpAddr::from([127, 0, 0, 2])),
        );
        let first = f.enter(a).unwrap();
        let _second = f.enter(a).unwrap();
        assert_eq!(f.enter(a).err(), Some(2));
        assert!(f.enter(b).is_ok());
        drop(first);
        assert!(f.enter(a).is_ok());
    }

    #[test]
    fn checking_takes_nothing() {
        let l = Limiter::new(1);
        let a = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(l.check(a).is_ok() && l.check(a).is_ok());
        assert!(l.take(a).is_ok());
        assert_eq!(l.check(a), Err(60));
    }

    #[test]
    fn buckets_empty_and_are_per_client() {
        let l = Limiter::new(3);
        let a = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(l.take(a).is_ok() && l.take(a).is_ok() && l.take(a).is_ok());
        // A token comes back every 20 s at 3 per minute.
        assert_eq!(l.take(a), Err(20));
        assert!(l.take(Some(IpAddr::from([127, 0, 0, 2]))).is_ok());
    }
}
