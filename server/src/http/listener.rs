//! Accepting connections with limits: at most so many open connections in total and per
//! client address, a deadline for a request's headers (which also closes a keep-alive
//! connection left idle), and a shutdown that waits a short grace period for requests in
//! flight, then closes whatever is left (event streams never end by themselves).
//!
//! `axum::serve` has none of these knobs, hence this loop over hyper's HTTP/1 connection.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

/// Connection limits of the listener.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// Open connections in total; further ones are closed at once.
    pub total: usize,
    /// Open connections per client address; further ones are closed at once.
    pub per_client: usize,
    /// Time a client has to send a request's headers, counted from when the connection
    /// opens or its previous response ends (so it is also the keep-alive idle timeout).
    pub header_read_timeout: Duration,
    /// After a shutdown signal, how long requests in flight may take to finish.
    pub shutdown_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            total: 4096,
            per_client: 128,
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(3),
        }
    }
}

impl ConnectionLimits {
    /// These limits with `total` lowered so that open connections can never exhaust the
    /// process's file descriptors (the soft limit, less a reserve for the database, the
    /// sandbox and provider calls).
    pub fn within_descriptor_limit(mut self) -> Self {
        const RESERVE: u64 = 256;
        if let Some(fds) = descriptor_limit() {
            let room = usize::try_from(fds.saturating_sub(RESERVE).max(16)).unwrap_or(usize::MAX);
            if room < self.total {
                tracing::info!("at most {room} open connections (the descriptor limit is {fds})");
                self.total = room;
            }
        }
        self
    }
}

/// The soft limit on open file descriptors.
#[cfg(unix)]
fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given and reads nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    ok.then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
fn descriptor_limit() -> Option<u64> {
    None
}

/// Open connections per client address.
#[derive(Clone, Default)]
struct PerClient(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// A client's claim on one of its connection slots, given back when dropped.
struct ClientSlot {
    table: PerClient,
    ip: IpAddr,
}

impl PerClient {
    fn take(&self, ip: IpAddr, limit: usize) -> Option<ClientSlot> {
        let mut t = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = t.entry(ip).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            table: self.clone(),
            ip,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut t = self
            .table
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = t.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                t.remove(&self.ip);
            }
        }
    }
}

/// Connections that have not sent a request yet, per client address, oldest first, each with
/// the switch that closes it. When every slot is taken, a newcomer from a lighter address
/// takes the slot of the oldest such connection of the address holding the most: a few
/// addresses that open connections and send nothing (slow headers) cannot lock the others out.
#[derive(Clone, Default)]
struct Unserved(Arc<Mutex<UnservedTable>>);

#[derive(Default)]
struct UnservedTable {
    next: u64,
    by_ip: HashMap<IpAddr, std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>>,
}

impl Unserved {
    fn table(&self) -> std::sync::MutexGuard<'_, UnservedTable> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a new connection of `ip`; its id and the switch's receiving end.
    fn add(&self, ip: IpAddr) -> (u64, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut t = self.table();
        t.next += 1;
        let id = t.next;
        t.by_ip.entry(ip).or_default().insert(id, tx);
        (id, rx)
    }

    /// The connection sent a request (or closed): it is no longer evicted.
    fn remove(&self, ip: IpAddr, id: u64) {
        let mut t = self.table();
        if let Some(m) = t.by_ip.get_mut(&ip) {
            m.remove(&id);
            if m.is_empty() {
                t.by_ip.remove(&ip);
            }
        }
    }

    /// Closes the oldest unserved connection of the address holding the most open
    /// connections, if that is more than `newcomer` holds plus one; whether one was closed.
    fn evict_for(&self, newcomer: IpAddr, open: &PerClient) -> bool {
        let counts = open
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let mine = counts.get(&newcomer).copied().unwrap_or(0);
        let mut t = self.table();
        let heaviest = t
            .by_ip
            .keys()
            .filter(|ip| **ip != newcomer)
            .max_by_key(|ip| counts.get(*ip).copied().unwrap_or(0))
            .copied();
        let Some(ip) = heaviest.filter(|ip| counts.get(ip).copied().unwrap_or(0) > mine + 1) else {
            return false;
        };
        let Some(m) = t.by_ip.get_mut(&ip) else {
            return false;
        };
        let oldest = m.pop_first();
        if m.is_empty() {
            t.by_ip.remove(&ip);
        }
        oldest.is_some_and(|(_, close)| close.send(()).is_ok())
    }
}

/// How long a newcomer waits for the slot of a connection it had closed.
const EVICTION_WAIT: Duration = Duration::from_millis(250);

/// Serve `app` on `listener` until `shutdown` completes, then give requests in flight
/// `limits.shutdown_grace` and return.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let total = Arc::new(Semaphore::new(limits.total.max(1)));
    let clients = PerClient::default();
    let unserved = Unserved::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, addr) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors and the like: wait a moment rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let ip = addr.ip();
        let permit = match total.clone().try_acquire_owned() {
            Ok(p) => p,
            // Full: take the slot of a heavier address's connection that never asked.
            Err(_) if unserved.evict_for(ip, &clients) => {
                match tokio::time::timeout(EVICTION_WAIT, total.clone().acquire_owned()).await {
                    Ok(Ok(p)) => p,
                    _ => continue,
                }
            }
            Err(_) => continue, // dropping the stream closes it
        };
        let Some(slot) = clients.take(ip, limits.per_client) else {
            continue;
        };
        let app = app.clone();
        let mut stop = stop_rx.clone();
        let limits = limits.clone();
        let (id, evicted) = unserved.add(ip);
        let unserved = unserved.clone();
        tokio::spawn(async move {
            let _held = (permit, slot);
            let asked = unserved.clone();
            let service = TowerToHyperService::new(app.map_request(
                move |mut req: axum::http::Request<hyper::body::Incoming>| {
                    asked.remove(ip, id);
                    req.extensions_mut().insert(ConnectInfo::<SocketAddr>(addr));
                    req.map(axum::body::Body::new)
                },
            ));
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                // Closed for a newcomer (it had sent nothing): dropping it ends it.
                Ok(()) = evicted => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(limits.shutdown_grace, conn).await;
                }
            }
            unserved.remove(ip, id);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Wait until every connection has closed, or the grace period (plus a margin) is over.
    let all = u32::try_from(limits.total.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(
        limits.shutdown_grace + Duration::from_millis(500),
        total.acquire_many(all),
    )
    .await;
}
