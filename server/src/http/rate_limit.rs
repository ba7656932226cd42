//! A per-client token bucket for the endpoints that cost money, start work or store data
//! (model calls, runs, share-link cases). Every request counts, a refused passcode too: so
//! many wrong passcodes from one address also lock that address out until its bucket
//! refills, and the answer says so.
//!
//! A client is a browser session where the request names one ([`SESSION_HEADER`], which the
//! page sends), else its address: a workshop behind one NAT address is many sessions, each
//! with its own bucket. An address's sessions together get [`SESSIONS_PER_ADDRESS`] times one
//! session's allowance, so making up sessions buys at most that.

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

/// The header naming a browser session; a value not well formed is no session.
pub use wire::SESSION_HEADER;

/// How many sessions' allowance one address's sessions share (a room of that many people
/// behind one NAT address is served as if each had an address of their own).
pub const SESSIONS_PER_ADDRESS: u32 = 20;

/// Buckets kept before full ones (clients quiet for a minute) are forgotten.
const MAX_BUCKETS: usize = 100_000;

/// Whose bucket: an address, the session of an address, or all of an address's requests.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// Requests that name no session, by address.
    Address(Option<IpAddr>),
    /// A session's requests.
    Session(Option<IpAddr>, String),
    /// Every request of the address.
    Total(Option<IpAddr>),
}

/// Tokens left and the time they were counted, per key.
type Buckets = HashMap<Key, (f64, Instant)>;

/// Which allowance a refused request ran out of, and the seconds until it has a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The client's own (its session's, or its address's without one).
    Client(u64),
    /// The address's, shared by its sessions.
    Address(u64),
}

impl Refused {
    /// Seconds until a request would be taken.
    pub fn wait(self) -> u64 {
        match self {
            Refused::Client(w) | Refused::Address(w) => w,
        }
    }
}

/// Token buckets keyed by client.
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
        self.count(Key::Address(client), self.per_minute, 0.0)
    }

    /// Take a token for `client`; when its bucket is empty, the seconds until it holds one.
    pub fn take(&self, client: Option<IpAddr>) -> Result<(), u64> {
        self.count(Key::Address(client), self.per_minute, 1.0)
    }

    /// Take a token for `session` of `client` (none, or one not well formed: the address's
    /// own bucket) and one of the address's shared allowance; neither is taken unless both
    /// have one.
    pub fn take_as(&self, client: Option<IpAddr>, session: Option<&str>) -> Result<(), Refused> {
        let own = match session.filter(|s| well_formed(s)) {
            Some(s) => Key::Session(client, s.to_string()),
            None => Key::Address(client),
        };
        let shared = self.per_minute.saturating_mul(SESSIONS_PER_ADDRESS);
        let mut buckets = self.lock();
        let now = Instant::now();
        let mine = refill(&mut buckets, own.clone(), self.per_minute, now);
        let all = refill(&mut buckets, Key::Total(client), shared, now);
        if mine < 1.0 {
            return Err(Refused::Client(wait(mine, self.per_minute)));
        }
        if all < 1.0 {
            return Err(Refused::Address(wait(all, shared)));
        }
        for key in [own, Key::Total(client)] {
            if let Some((tokens, _)) = buckets.get_mut(&key) {
                *tokens -= 1.0;
            }
        }
        Ok(())
    }

    /// The requests a client may make a minute.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() > MAX_BUCKETS {
            // A bucket a minute old is full again: forgetting it changes nothing.
            let now = Instant::now();
            buckets.retain(|_, (_, last)| now.duration_since(*last).as_secs() < 60);
        }
        buckets
    }

    /// Refill `key`'s bucket (of `cap` a minute) and take `cost` tokens if it holds a whole
    /// one.
    fn count(&self, key: Key, cap: u32, cost: f64) -> Result<(), u64> {
        let mut buckets = self.lock();
        let tokens = refill(&mut buckets, key.clone(), cap, Instant::now());
        if tokens < 1.0 {
            return Err(wait(tokens, cap));
        }
        if let Some((t, _)) = buckets.get_mut(&key) {
            *t -= cost;
        }
        Ok(())
    }
}

/// Whether `session` is a session name ([`SESSION_HEADER`]).
fn well_formed(session: &str) -> bool {
    (16..=64).contains(&session.len())
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `key`'s tokens after refilling its bucket (of `cap` a minute, bursts as many) up to `now`.
fn refill(buckets: &mut Buckets, key: Key, cap: u32, now: Instant) -> f64 {
    let cap = cap as f64;
    let (tokens, last) = buckets.entry(key).or_insert((cap, now));
    *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * cap / 60.0).min(cap);
    *last = now;
    *tokens
}

/// Seconds until a bucket of `cap` a minute holding `tokens` holds a whole one.
fn wait(tokens: f64, cap: u32) -> u64 {
    ((1.0 - tokens) * 60.0 / cap as f64).ceil().max(1.0) as u64
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

/// Middleware: 429 with a JSON error when the client's bucket, or its address's, is empty.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let per_minute = state.limiter.per_minute;
    let refused = match state.limiter.take_as(client, session.as_deref()) {
        Ok(()) => return next.run(req).await,
        Err(r) => r,
    };
    let who = match refused {
        Refused::Client(_) if session.is_some() => {
            format!("this browser session has made more than {per_minute}")
        }
        Refused::Client(_) => format!("this address has made more than {per_minute}"),
        Refused::Address(_) => format!(
            "the sessions of this address have made more than {} together",
            per_minute.saturating_mul(SESSIONS_PER_ADDRESS)
        ),
    };
    let wait = refused.wait();
    (
        StatusCode::TOO_MANY_REQUESTS,
        [("retry-after", wait.to_string())],
        Json(serde_json::json!({"error": {
            "code": "rate_limited",
            "message": format!(
                "{who} requests in the last minute to model, run and share endpoints \
                 (requests refused for a wrong passcode count too); try again in {wait} s"
            ),
        }})),
    )
        .into_response()
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

    /// Sessions behind one address each have their own allowance, all of them together the
    /// address's; a request without a session (or a malformed one) is the address's own.
    #[test]
    fn sessions_of_one_address_share_a_larger_allowance() {
        let l = Limiter::new(2);
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let session = |n: usize| format!("session-{n:010}");
        // Twenty sessions take two each: forty, the address's whole allowance.
        for n in 0..20 {
            assert!(l.take_as(a, Some(&session(n))).is_ok());
            assert!(l.take_as(a, Some(&session(n))).is_ok());
            assert!(matches!(
                l.take_as(a, Some(&session(n))),
                Err(Refused::Client(_))
            ));
        }
        assert!(matches!(
            l.take_as(a, Some(&session(20))),
            Err(Refused::Address(_))
        ));
        assert!(matches!(l.take_as(a, None), Err(Refused::Address(_))));
        // Another address is untouched; a malformed session is no session.
        let b = Some(IpAddr::from([10, 0, 0, 2]));
        assert!(l.take_as(b, Some("short")).is_ok());
        assert!(l.take_as(b, Some("no spaces allowed here!")).is_ok());
        assert!(matches!(l.take_as(b, None), Err(Refused::Client(_))));
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
