//! Response headers every answer carries: caching by kind of path, and the security headers
//! (a Content-Security-Policy made for the wasm app, `nosniff`, no referrer).

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

/// The Content-Security-Policy for the app in `dist`: scripts only from the server, plus the
/// inline loader Trunk writes into `index.html` (allowed by its hash, read at start-up);
/// WebAssembly compilation; inline styles (component style attributes); images from data
/// and blob URLs (downloads, canvases); workers from the server (the matching worker); no
/// plugins, no framing, no foreign forms.
///
/// Connections ([`CONNECT_SRC`]): the server, and, for a model asked with the user's own key
/// straight from the page, any HTTPS origin (the provider's API or whatever OpenAI-compatible
/// base URL the user types, which we cannot list in advance) and plain HTTP to this computer
/// only (a local Ollama or vLLM; CSP cannot name `[::1]`). Plain HTTP elsewhere stays
/// blocked: a key would cross the network in the clear. This widens where a script could
/// send data, not which scripts run: `script-src` still admits only our own files.
pub fn content_security_policy(dist: &Path) -> String {
    let html = std::fs::read_to_string(dist.join("index.html")).unwrap_or_default();
    let hashes: String = inline_scripts(&html)
        .map(|script| {
            let digest = Sha256::digest(script.as_bytes());
            format!(" 'sha256-{}'", base64(&digest))
        })
        .collect();
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src {CONNECT_SRC}; \
         worker-src 'self' blob:; object-src 'none'; base-uri 'self'; \
         frame-ancestors 'none'; form-action 'self'"
    )
}

/// Where the page may connect: see [`content_security_policy`].
pub const CONNECT_SRC: &str = "'self' https: http://localhost:* http://127.0.0.1:*";

/// The texts of the `<script>` elements without a `src` in `html`.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script").skip(1).filter_map(|rest| {
        let open_end = rest.find('>')?;
        let attributes = &rest[..open_end];
        if attributes.contains("src=") {
            return None;
        }
        let body = &rest[open_end + 1..];
        Some(&body[..body.find("</script>")?])
    })
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// True for file names that carry Trunk's content hash (`app-0123456789abcdef_bg.wasm`),
/// which may be cached forever.
pub fn is_hashed_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split(['-', '_', '.'])
        .any(|part| part.len() == 16 && part.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Middleware: cache and security headers on every response.
pub async fn add(State(csp): State<Arc<HeaderValue>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut res = next.run(req).await;
    let cache = if path.starts_with("/api/") {
        "no-store"
    } else if is_hashed_asset(&path) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(header::CONTENT_SECURITY_POLICY, (*csp).clone());
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_asset_names() {
        assert!(is_hashed_asset("/app-1a2b3c4d5e6f7a8b_bg.wasm"));
        assert!(is_hashed_asset("/app-1a2b3c4d5e6f7a8b.js"));
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/c/abc"));
    }

    #[test]
    fn inline_scripts_are_allowed_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("index.html"),
            "<html><script src=\"/a.js\"></script><script type=\"module\">init('/x.wasm');</script></html>",
        )
        .unwrap();
        let csp = content_security_policy(dir.path());
        // echo -n "init('/x.wasm');" | openssl dgst -sha256 -binary | base64
        let expected = base64(&Sha256::digest(b"init('/x.wasm');"));
        assert!(csp.contains(&format!("'sha256-{expected}'")), "{csp}");
        assert_eq!(csp.matches("sha256-").count(), 1);
        assert_eq!(base64(b"abcd"), "YWJjZA==");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn own_key_calls_may_reach_providers_and_this_computer_only() {
        let dir = tempfile::tempdir().unwrap();
        let csp = content_security_policy(dir.path());
        let connect = csp
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("connect-src "))
            .unwrap();
        let sources: Vec<&str> = connect.split_whitespace().skip(1).collect();
        assert_eq!(
            sources,
            [
                "'self'",
                "https:",
                "http://localhost:*",
                "http://127.0.0.1:*"
            ]
        );
        // Not plain HTTP to other hosts, and scripts still only our own.
        assert!(!sources.contains(&"http:") && !sources.contains(&"*"));
        assert!(
            csp.contains("script-src 'self' 'wasm-unsafe-eval';"),
            "{csp}"
        );
    }
}
