//! The status line: what the server says about itself, or that there is none.

use leptos::prelude::*;
use leptos::task::spawn_local;

/// Shows the server's health answer.
#[component]
pub fn ServerStatus() -> impl IntoView {
    let (status, set_status) = signal(None::<Result<wire::Health, String>>);
    spawn_local(async move {
        set_status.set(Some(crate::api::health().await));
    });
    view! {
        <footer class="status" id="server-status">
            {move || match status.get() {
                None => "Server: checking…".to_string(),
                Some(Ok(h)) => format!("Server: {} · version {} · build {}", h.status, h.version, h.commit),
                Some(Err(e)) => format!("Server: not available ({e}). Everything that needs no model still works."),
            }}
        </footer>
    }
}
