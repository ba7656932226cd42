//! The page: header, the AtomWorld playground and the server status line.

mod canvas;
mod playground;
mod status;
mod verdict;

use leptos::prelude::*;

/// The root component.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <header class="top">
            <h1>"AtomWorld Playground"</h1>
            <span class="tagline">"How do language models handle crystal structures?"</span>
        </header>
        <main>
            <playground::Playground />
        </main>
        <status::ServerStatus />
    }
}
