//! The page: header, the AtomWorld playground and the server status line.

mod canvas;
mod edit_panel;
mod measure;
mod playground;
mod runs;
mod shortcuts;
mod status;
mod structure_file;
mod verdict;

use leptos::prelude::*;

/// The root component.
#[component]
pub fn App() -> impl IntoView {
    // Two pages, chosen by the path: the playground (default) and /runs. Links are plain
    // anchors: the server's SPA fallback serves the app on every path.
    let on_runs = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .is_some_and(|p| p.trim_end_matches('/') == "/runs");
    view! {
        <header class="top">
            <h1>"AtomWorld Playground"</h1>
            <span class="tagline">"How do language models handle crystal structures?"</span>
            <nav>
                <a href="/" class:active=!on_runs>"Playground"</a>
                <a href="/runs" id="nav-runs" class:active=on_runs>"Runs"</a>
            </nav>
        </header>
        <main>
            {if on_runs {
                view! { <runs::Runs /> }.into_any()
            } else {
                view! { <playground::Playground /> }.into_any()
            }}
        </main>
        <status::ServerStatus />
    }
}
