//! The page: header, the AtomWorld playground (and the other pages: probes, suites, human
//! scores, runs, workshop rooms) and the server status line.

mod action_form;
mod ask;
mod canvas;
mod edit_panel;
mod human;
mod measure;
mod pause;
mod playground;
mod probes;
mod references;
mod room;
mod runs;
mod shortcuts;
mod status;
mod structure_file;
mod suites;
mod verdict;

use leptos::prelude::*;
use wire::case::StoredCase;

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
    let on_suites = path == "/suites";
    let on_human = path == "/human";
    let on_room = path == "/room";
    let on_open_attempt = path == "/room/open";
    let short_id = path.strip_prefix("/c/").map(str::to_string);
    // The user's own API key, shared by every "Ask the model" (kept in this browser only).
    provide_context(crate::own_key::OwnKeys::load());
    status::ServerArrivals::provide();
    // A share link pasted into a tab already on the page changes only the fragment: open it.
    let _ = window_event_listener(leptos::ev::hashchange, |_| {
        if let Some(w) = web_sys::window() {
            let _ = w.location().reload();
        }
    });
    view! {
        <header class="top">
            <h1>"AtomWorld Playground"</h1>
            <span class="tagline">"How do language models handle crystal structures?"</span>
            <nav>
                <a href="/" class:active=!on_runs && !on_probes && !on_suites && !on_human && !on_room>"Playground"</a>
                <a href="/probes" id="nav-probes" class:active=on_probes>"Probes"</a>
                <a href="/suites" id="nav-suites" class:active=on_suites>"Suites"</a>
                <a href="/human" id="nav-human" class:active=on_human>"Score recipes"</a>
                <a href="/runs" id="nav-runs" class:active=on_runs>"Runs"</a>
                <a href="/room" id="nav-room" class:active=on_room>"Room"</a>
            </nav>
        </header>
        <main>
            {if on_runs {
                view! { <runs::Runs /> }.into_any()
            } else if on_probes {
                view! { <probes::Probes /> }.into_any()
            } else if on_suites {
                view! { <suites::Suites /> }.into_any()
            } else if on_human {
                view! { <human::Human /> }.into_any()
            } else if on_room {
                view! { <room::Room /> }.into_any()
            } else if on_open_attempt {
                view! { <room::OpenAttempt /> }.into_any()
            } else if let Some(id) = short_id {
                view! { <ShortCase id=id /> }.into_any()
            } else if let Some(e) = crate::share::error_from_location() {
                view! { <BrokenLink technical=e /> }.into_any()
            } else {
                let shared = crate::share::case_from_location();
                let first_visit = shared.is_none();
                view! {
                    {first_visit.then(|| view! { <FirstVisit /> })}
                    <playground::Playground shared=shared shared_error=None />
                }.into_any()
            }}
        </main>
        <status::ServerStatus />
    }
}

/// Where the page remembers that the first-visit line was dismissed.
const INTRO_KEY: &str = "atomworld.intro.dismissed";

/// One line for a first visit that says what to do here; dismissed for good with its button.
#[component]
fn FirstVisit() -> impl IntoView {
    let storage = web_sys::window().and_then(|w| w.local_storage().ok().flatten());
    let dismissed = storage
        .as_ref()
        .and_then(|s| s.get_item(INTRO_KEY).ok().flatten())
        .is_some();
    let shown = RwSignal::new(!dismissed);
    let dismiss = move |_| {
        if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = s.set_item(INTRO_KEY, "1");
        }
        shown.set(false);
    };
    move || {
        shown.get().then(|| view! {
            <p class="notice first-visit" id="first-visit">
                "Pick a structure and an action, see the exact target in 3D, then paste a "
                "model's answer (or ask a configured model): the verdict is the one the "
                "benchmark would give. Press ? on a viewer for its keys. "
                <button class="secondary small" id="first-visit-dismiss" on:click=dismiss>"Got it"</button>
            </p>
        })
    }
}

/// `/c/<id>`: the playground opened on a case from the server's case store (a suite's case
/// goes on to the suites page).
#[component]
fn ShortCase(id: String) -> impl IntoView {
    let case = LocalResource::new(move || {
        let id = id.clone();
        async move { crate::api::get_case(&id).await }
    });
    move || match case.get() {
        None => {
            view! { <p class="muted" id="case-loading">"Loading the shared case…"</p> }.into_any()
        }
        Some(Ok(StoredCase::Playground(c))) => {
            view! { <playground::Playground shared=Some(c) shared_error=None /> }.into_any()
        }
        // A suite's task opens on the suites page, as its long link would.
        Some(Ok(StoredCase::Suite(c))) => {
            if let Some(w) = web_sys::window() {
                let link = format!("/suites#suite-case={}", wire::case::encode_suite_case(&c));
                let _ = w.location().replace(&link);
            }
            view! { <p class="muted" id="case-loading">"Opening the shared task…"</p> }.into_any()
        }
        Some(Err(e)) => view! { <BrokenLink technical=e /> }.into_any(),
    }
}

/// A share link that cannot be opened: said at the top, in plain words, with no default task
/// under it that could be taken for the shared one.
#[component]
fn BrokenLink(
    /// What exactly failed (shown on request).
    technical: String,
) -> impl IntoView {
    view! {
        <section class="panel broken-link" id="broken-link">
            <h2>"This share link cannot be opened"</h2>
            <p>
                "The link is damaged or incomplete (links are often cut off when copied), or the "
                "case it names is no longer on this server. Ask for the link again, or "
                <a href="/" id="fresh-start">"start with a fresh task"</a>"."
            </p>
            <details>
                <summary>"Details"</summary>
                <pre id="broken-link-detail">{technical}</pre>
            </details>
        </section>
    }
}
