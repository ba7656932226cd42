//! Asking a model: one configured on the server (the answer streams in through it), or one
//! the user sets up with their own key, called straight from the browser (`own_key`). Pick a
//! model, ask, cancel. Used by the playground, the probes and the suites; the caller owns
//! the answer text.

use benchmarks::task::Message;
use leptos::prelude::*;
use llm_protocol::direct::DirectModel;
use llm_protocol::provider::Provider;

use crate::api::StreamNews;
use crate::own_key::{use_own_keys, OwnKey};

/// The model list's value for the user's own-key model.
const OWN: &str = "__own_key__";

/// Model choice, ask and cancel buttons, and a status line (tokens, cost, errors). Renders
/// inside the caller's button row; `answer` receives the streamed text.
#[component]
pub fn AskModel(
    /// The whole message for the model (nothing to ask while `None`).
    prompt: Signal<Option<String>>,
    /// Where the answer goes.
    answer: RwSignal<String>,
    /// The model that wrote the answer, set when asking.
    answered_by: RwSignal<Option<String>>,
    /// The exact messages to send instead of `prompt` alone (a suite task's system and user
    /// messages); empty by default.
    #[prop(optional, into)]
    messages: Signal<Vec<benchmarks::task::Message>>,
) -> impl IntoView {
    let models = LocalResource::new(|| {
        crate::ui::status::ServerArrivals::track();
        crate::api::models()
    });
    let own_keys = use_own_keys();
    let asking = RwSignal::new(false);
    let chosen_model = RwSignal::new(String::new());
    // The models that answer prompts (the baselines answer whole tasks, in runs).
    let configured = move || match models.get() {
        Some(Ok(list)) => list
            .into_iter()
            .filter(|m| !m.baseline)
            .map(|m| m.name)
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    let own_name = move || own_keys.current.with(|o| o.as_ref().map(OwnKey::name));
    // With exactly one model there is nothing to choose.
    Effect::new(move |_| {
        let only = match (configured().as_slice(), own_name()) {
            ([only], None) => only.clone(),
            ([], Some(_)) => OWN.to_string(),
            _ => return,
        };
        if chosen_model.get_untracked().is_empty() {
            chosen_model.set(only);
        }
    });
    let can_ask = move || !asking.get() && !chosen_model.get().is_empty() && prompt.get().is_some();
    let ask_status = RwSignal::new(None::<Result<String, String>>);
    // The abort handle of the call in flight (browser objects stay on this thread).
    let in_flight = StoredValue::new_local(None::<web_sys::AbortController>);
    // Puts back what the answer box held before a call that gave no answer.
    let restore = move |(text, by): (String, Option<String>)| {
        answer.set(text);
        answered_by.set(by);
    };
    // The own-key path: one request from the browser to the provider, the whole answer at once.
    let ask_own = move |text: String, messages: Vec<Message>| {
        let Some(own) = own_keys.current.get_untracked() else {
            ask_status.set(Some(Err("set up your own key first (below)".into())));
            return;
        };
        let Ok(controller) = web_sys::AbortController::new() else {
            ask_status.set(Some(Err("this browser cannot make the call".into())));
            return;
        };
        let signal = controller.signal();
        in_flight.set_value(Some(controller));
        asking.set(true);
        // What the person had in the box comes back if the call fails.
        let kept = (answer.get_untracked(), answered_by.get_untracked());
        answer.set(String::new());
        answered_by.set(Some(own.model.model.trim().to_string()));
        let provider = own.model.provider.label();
        ask_status.set(Some(Ok(format!(
            "waiting for {provider} (straight from this browser, with your key)…"
        ))));
        let messages = if messages.is_empty() {
            vec![Message::user(text)]
        } else {
            messages
        };
        leptos::task::spawn_local(async move {
            match crate::own_key::ask(&own, &messages, &signal).await {
                Ok(a) => {
                    answer.set(a.text);
                    ask_status.set(Some(Ok(format!(
                        "{} prompt + {} answer tokens · asked {provider} directly with your key",
                        a.input_tokens, a.output_tokens
                    ))));
                }
                Err(_) if signal.aborted() => {
                    restore(kept);
                    ask_status.set(Some(Ok("Cancelled.".into())));
                }
                Err(e) => {
                    restore(kept);
                    ask_status.set(Some(Err(e)));
                }
            }
            in_flight.set_value(None);
            asking.set(false);
        });
    };
    let ask = move |_| {
        let (Some(text), model) = (prompt.get_untracked(), chosen_model.get_untracked()) else {
            return;
        };
        let messages = messages.get_untracked();
        if model.is_empty() {
            ask_status.set(Some(Err("choose a model first".into())));
            return;
        }
        if model == OWN {
            ask_own(text, messages);
            return;
        }
        let Ok(controller) = web_sys::AbortController::new() else {
            ask_status.set(Some(Err("this browser cannot stream answers".into())));
            return;
        };
        let signal = controller.signal();
        in_flight.set_value(Some(controller));
        asking.set(true);
        let kept = (answer.get_untracked(), answered_by.get_untracked());
        answer.set(String::new());
        answered_by.set(Some(model.clone()));
        ask_status.set(Some(Ok("waiting for the model…".into())));
        leptos::task::spawn_local(async move {
            let on = |news: StreamNews| match news {
                StreamNews::Piece(p) => {
                    answer.update(|a| a.push_str(&p));
                    let n = answer.with_untracked(|a| a.chars().count());
                    ask_status.set(Some(Ok(format!("receiving… {n} characters"))));
                }
                StreamNews::Restart(attempt) => {
                    answer.set(String::new());
                    ask_status.set(Some(Ok(format!(
                        "the stream broke off; the server asks again (attempt {attempt})"
                    ))));
                }
            };
            match crate::api::complete_stream(&model, &text, &messages, &signal, on).await {
                Ok(c) => {
                    answer.set(c.text);
                    ask_status.set(Some(Ok(format!(
                        "{} prompt + {} answer tokens · ${:.4}{}",
                        c.input_tokens,
                        c.output_tokens,
                        c.cost_usd,
                        if c.cached {
                            " · from the server's cache"
                        } else {
                            ""
                        }
                    ))));
                }
                Err(_) if signal.aborted() => ask_status.set(Some(Ok(
                    "Cancelled; the partial answer is kept below.".into(),
                ))),
                Err(e) => {
                    // A failed stream's pieces are not an answer: the box gets back what the
                    // person had in it.
                    restore(kept);
                    ask_status.set(Some(Err(e)));
                }
            }
            in_flight.set_value(None);
            asking.set(false);
        });
    };
    let cancel = move |_| {
        in_flight.with_value(|c| {
            if let Some(c) = c {
                c.abort();
            }
        })
    };
    view! {
        <select id="model-select" on:change=move |ev| chosen_model.set(event_target_value(&ev))
            disabled=move || configured().is_empty() && own_name().is_none()>
            <option value="">"— model —"</option>
            {move || configured()
                .into_iter()
                .map(|name| {
                    let selected = chosen_model.with(|c| *c == name);
                    view! { <option value=name.clone() selected=selected>{name.clone()}</option> }
                })
                .collect_view()}
            {move || own_name().map(|name| {
                let selected = chosen_model.with(|c| c == OWN);
                view! { <option value=OWN selected=selected>{name}</option> }
            })}
        </select>
        <button id="ask-model" on:click=ask disabled=move || !can_ask()
            title=move || if configured().is_empty() && own_name().is_none() { "no model is configured on this server; use your own key (below)" } else { "" }>
            {move || if asking.get() { "Asking…" } else { "Ask the model" }}
        </button>
        <Show when=move || asking.get()>
            <button id="cancel-ask" class="secondary" on:click=cancel>"Cancel"</button>
        </Show>
        <span class="muted small ask-status" id="ask-status">
            {move || match (models.get(), ask_status.get()) {
                (_, Some(Ok(m))) => m,
                (_, Some(Err(e))) => format!("model call failed: {e}"),
                (_, None) if own_name().is_some() && chosen_model.with(String::is_empty) => "Choose a model to ask.".to_string(),
                (_, None) if own_name().is_some() => String::new(),
                (Some(Err(_)), None) => "No server: its models are unavailable here, but your own key works (below), and so does pasting an answer.".to_string(),
                (Some(Ok(l)), None) if l.iter().all(|m| m.baseline) => "No model is configured on this server: start it with --config FILE naming models and their providers (docs/guide/models.md), or with OPENAI_BASE_URL and OPENAI_MODEL set. Pasting an answer works meanwhile, and so does your own key (below).".to_string(),
                (Some(Ok(_)), None) if chosen_model.with(String::is_empty) => "Choose a model to ask.".to_string(),
                _ => String::new(),
            }}
        </span>
        <OwnKeyForm on_use=Callback::new(move |()| chosen_model.set(OWN.to_string())) />
    }
}

/// Setting up a model with the user's own key: provider, base URL, model, key, "remember".
#[component]
fn OwnKeyForm(
    /// Called once the model is set up (the caller then picks it).
    on_use: Callback<()>,
) -> impl IntoView {
    let own_keys = use_own_keys();
    let start = own_keys.current.get_untracked().unwrap_or_default();
    let provider = RwSignal::new(start.model.provider);
    let base_url = RwSignal::new(start.model.base_url.clone());
    let model = RwSignal::new(start.model.model.clone());
    let key = RwSignal::new(start.key.clone());
    let remember = RwSignal::new(own_keys.remember.get_untracked());
    let error = RwSignal::new(None::<String>);
    let use_it = move |_| {
        let own = OwnKey {
            model: DirectModel {
                provider: provider.get_untracked(),
                base_url: base_url.get_untracked().trim().to_string(),
                model: model.get_untracked().trim().to_string(),
            },
            key: key.get_untracked().trim().to_string(),
        };
        // The same checks the call makes (a model name, a key, a usable base URL).
        if let Err(e) = own.model.request(&own.key, &[]) {
            error.set(Some(e.to_string()));
            return;
        }
        error.set(None);
        own_keys.set(own, remember.get_untracked());
        on_use.run(());
    };
    let forget = move |_| {
        own_keys.forget();
        key.set(String::new());
        remember.set(false);
    };
    view! {
        <details class="own-key" id="own-key">
            <summary>"Use your own API key"</summary>
            <p class="small" id="own-key-note">
                "Your key stays in this browser: the page sends it only to the provider you choose, "
                "straight from your browser, never through or to this site's server. It is kept in "
                "memory and forgotten when you leave or reload the page, unless you tick \"remember\" "
                "(then it is kept in this browser's local storage until you press \"Forget my key\")."
            </p>
            <div class="own-key-fields">
                <label>"Provider "
                    <select id="own-provider" on:change=move |ev| {
                        if let Some(p) = Provider::from_id(&event_target_value(&ev)) {
                            provider.set(p);
                        }
                    }>
                        {Provider::ALL.into_iter().map(|p| view! {
                            <option value=p.id() selected=move || provider.get() == p>{p.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label>"Base URL "
                    <input id="own-base-url" type="url" prop:value=move || base_url.get()
                        placeholder=move || provider.get().default_base_url().unwrap_or("http://localhost:11434/v1")
                        on:input=move |ev| base_url.set(event_target_value(&ev)) />
                </label>
                <label>"Model "
                    <input id="own-model" prop:value=move || model.get() placeholder="e.g. gpt-5.4, claude-opus-4-6, llama3.2"
                        on:input=move |ev| model.set(event_target_value(&ev)) />
                </label>
                <label>"API key "
                    <input id="own-key-input" type="password" autocomplete="off" prop:value=move || key.get()
                        placeholder=move || if provider.get() == Provider::OpenaiCompatible { "none needed for most local servers" } else { "" }
                        on:input=move |ev| key.set(event_target_value(&ev)) />
                </label>
                <label class="small">
                    <input type="checkbox" id="own-remember" prop:checked=move || remember.get()
                        on:change=move |ev| remember.set(event_target_checked(&ev)) />
                    " remember on this device"
                </label>
            </div>
            <p class="row">
                <button id="own-use" on:click=use_it>"Use this model"</button>
                <button id="own-forget" class="secondary" on:click=forget>"Forget my key"</button>
            </p>
            {move || error.get().map(|e| view! { <p class="error small" id="own-error">{e}</p> })}
        </details>
    }
}
