//! Serving behind a load balancer or reverse proxy: every request then comes from the
//! proxy's address, so per-client limits and quotas (rate limits, rooms and share links per
//! address, scorings in flight) would treat all clients as one. For the proxies named with
//! `--trusted-proxy`, the client is read from `X-Forwarded-For` instead: walking the list
//! from its right end (the entry the nearest proxy added), the first address that is not a
//! trusted proxy. A request from any other peer keeps its peer address, whatever it sends.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

/// The proxies whose `X-Forwarded-For` is believed (addresses or networks).
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Arc<Vec<IpNet>>);

impl TrustedProxies {
    /// Proxies from `--trusted-proxy` values (`10.0.0.5`, `10.0.0.0/8`, `::1`).
    pub fn parse(values: &[String]) -> Result<Self, String> {
        values
            .iter()
            .map(|v| {
                let v = v.trim();
                v.parse::<IpNet>()
                    .or_else(|_| v.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!("--trusted-proxy {v}: not an address or network (10.0.0.0/8)")
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|nets| Self(Arc::new(nets)))
    }

    /// Whether no proxy is trusted (the default: peers are clients).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that `peer` sent with `forwarded` (its `X-Forwarded-For`).
    pub fn client(&self, peer: IpAddr, forwarded: Option<&str>) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for hop in forwarded.unwrap_or("").rsplit(',') {
            match hop.trim().parse::<IpAddr>() {
                Ok(ip) if self.trusts(ip) => client = ip,
                Ok(ip) => return canonical(ip),
                // Garbage where an address should be: the last trusted hop is the client.
                Err(_) => return client,
            }
        }
        client
    }
}

/// An IPv4 address mapped into IPv6 as itself.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Middleware: a request from a trusted proxy carries its client's address from here on.
pub async fn forwarded_client(
    State(proxies): State<TrustedProxies>,
    mut req: Request,
    next: Next,
) -> Response {
    if !proxies.is_empty() {
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        if let Some(peer) = peer {
            let forwarded = req
                .headers()
                .get("x-forwarded-for")
                .and_then(|v| v.to_str().ok());
            let client = proxies.client(peer.ip(), forwarded);
            if client != peer.ip() {
                req.extensions_mut()
                    .insert(ConnectInfo(SocketAddr::new(client, 0)));
            }
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_trusted_peers_are_believed_and_the_list_is_read_from_the_right() {
        let p = TrustedProxies::parse(&["10.0.0.0/8".into(), "192.168.1.7".into()]).unwrap();
        // Not a proxy: its own address, whatever it claims.
        assert_eq!(
            p.client(ip("203.0.113.9"), Some("1.2.3.4")),
            ip("203.0.113.9")
        );
        // The balancer's entry is the last one; what the client wrote before it is ignored.
        assert_eq!(
            p.client(ip("10.1.2.3"), Some("6.6.6.6, 198.51.100.4")),
            ip("198.51.100.4")
        );
        // Two proxies in a row.
        assert_eq!(
            p.client(ip("10.1.2.3"), Some("198.51.100.4, 192.168.1.7")),
            ip("198.51.100.4")
        );
        // No header, or garbage: the proxy itself.
        assert_eq!(p.client(ip("10.1.2.3"), None), ip("10.1.2.3"));
        assert_eq!(p.client(ip("10.1.2.3"), Some("unknown")), ip("10.1.2.3"));
        // An IPv4 peer seen as IPv6.
        assert_eq!(
            p.client(ip("::ffff:10.0.0.1"), Some("198.51.100.4")),
            ip("198.51.100.4")
        );
        assert!(TrustedProxies::parse(&["ten".into()]).is_err());
        assert!(TrustedProxies::default().is_empty());
    }
}
