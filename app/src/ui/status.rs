//! The status line: what the server says about itself, or that there is none yet.
//!
//! A first start serves the page before the server has finished compiling
//! (`scripts/serve-page.py`), and a restarted server is briefly away: while the server may
//! still come, the line keeps asking, and pages that load from the API (the model lists) load
//! again once it answers.

use leptos::prelude::*;
use leptos::task::spawn_local;

/// How long to wait before asking again while the server is starting or unreachable.
const RETRY_MS: i32 = 3_000;

/// Counts the server's arrivals: a page that reads it in its loader loads again when a server
/// that was away comes up. Provided once, by the root component.
#[derive(Clone, Copy)]
pub struct ServerArrivals(RwSignal<u32>);

impl ServerArrivals {
    /// Provides the counter to the whole page.
    pub fn provide() {
        provide_context(ServerArrivals(RwSignal::new(0)));
    }

    /// Subscribes the caller's reactive scope (a resource's loader) to the server's arrivals;
    /// nothing outside the root component.
    pub fn track() {
        if let Some(ServerArrivals(n)) = use_context::<ServerArrivals>() {
            n.track();
        }
    }
}

/// The status line's state.
#[derive(Clone)]
enum Seen {
    Checking,
    Up(wire::Health),
    /// Not answering yet; asking again.
    Waiting(String),
    /// No server here, or a broken one.
    Away(String),
}

/// Shows the server's health answer, asking again while the server may still come.
#[component]
pub fn ServerStatus() -> impl IntoView {
    let seen = RwSignal::new(Seen::Checking);
    let arrivals = use_context::<ServerArrivals>();
    spawn_local(async move {
        loop {
            match crate::api::health().await {
                Ok(h) => {
                    let was_waiting = matches!(seen.get_untracked(), Seen::Waiting(_));
                    seen.set(Seen::Up(h));
                    if let (true, Some(ServerArrivals(n))) = (was_waiting, arrivals) {
                        n.update(|n| *n += 1);
                    }
                    return;
                }
                Err(e) if e.transient => seen.set(Seen::Waiting(e.message)),
                Err(e) => return seen.set(Seen::Away(e.message)),
            }
            crate::ui::pause::pause(RETRY_MS).await;
        }
    });
    view! {
        <footer class="status" id="server-status">
            {move || match seen.get() {
                Seen::Checking => "Server: checking…".to_string(),
                Seen::Up(h) => format!("Server: {} · version {} · build {}", h.status, h.version, h.commit),
                Seen::Waiting(e) => format!(
                    "Server: not there yet ({e}). Everything that needs no model works already; the rest comes when it answers."
                ),
                Seen::Away(e) => format!("Server: not available ({e}). Everything that needs no model still works."),
            }}
        </footer>
    }
}
