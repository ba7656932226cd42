//! The page: header, the AtomWorld playground and the server status line.

mod ask;
mod canvas;
mod edit_panel;
mod measure;
mod playground;
mod probes;
mod runs;
mod shortcuts;
mod status;
mod structure_file;
mod verdict;

use leptos::prelude::*;

/// The root component.
#[component]
pub fn App() -> impl IntoView {
    // Pages chosen by the path: the playground (default), /probes and /runs. Links are plain
    // anchors: the server's SPA fallback serves the app on every path.
    let path = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .map(|p| p.trim_end_matches('/').to_string())
        .unwrap_or_default();
    let on_runs = path == "/runs";
    let on_probes = path == "/probes";
    view! {
        <header class="top">
            <h1>"AtomWorld Playground"</h1>
            <span class="tagline">"How do language models handle crystal structures?"</span>
            <nav>
                <a href="/" class:active=!on_runs && !on_probes>"Playground"</a>
                <a href="/probes" id="nav-probes" class:active=on_probes>"Probes"</a>
                <a href="/runs" id="nav-runs" class:active=on_runs>"Runs"</a>
            </nav>
        </header>
        <main>
            {if on_runs {
                view! { <runs::Runs /> }.into_any()
            } else if on_probes {
                view! { <probes::Probes /> }.into_any()
            } else {
                view! { <playground::Playground /> }.into_any()
            }}
        </main>
        <status::ServerStatus />
    }
}
