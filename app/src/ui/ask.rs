//! Asking a configured model through the server: pick a model, ask, watch the answer stream
//! in, cancel. Used by the playground and the probes; the caller owns the answer text.

use leptos::prelude::*;

use crate::api::StreamNews;

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
    messages: Signal<Vec<bench::task::Message>>,
) -> impl IntoView {
    let models = LocalResource::new(crate::api::models);
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
    // With exactly one model there is nothing to choose.
    Effect::new(move |_| {
        if let [only] = configured().as_slice() {
            if chosen_model.get_untracked().is_empty() {
                chosen_model.set(only.clone());
            }
        }
    });
    let can_ask = move || !asking.get() && !chosen_model.get().is_empty() && prompt.get().is_some();
    let ask_status = RwSignal::new(None::<Result<String, String>>);
    // The abort handle of the call in flight (browser objects stay on this thread).
    let in_flight = StoredValue::new_local(None::<web_sys::AbortController>);
    let ask = move |_| {
        let (Some(text), model) = (prompt.get_untracked(), chosen_model.get_untracked()) else {
            return;
        };
        let messages = messages.get_untracked();
        if model.is_empty() {
            ask_status.set(Some(Err("choose a model first".into())));
            return;
        }
        let Ok(controller) = web_sys::AbortController::new() else {
            ask_status.set(Some(Err("this browser cannot stream answers".into())));
            return;
        };
        let signal = controller.signal();
        in_flight.set_value(Some(controller));
        asking.set(true);
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
                Err(e) => ask_status.set(Some(Err(e))),
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
            disabled=move || configured().is_empty()>
            <option value="">"— model —"</option>
            {move || configured()
                .into_iter()
                .map(|name| {
                    let selected = chosen_model.with(|c| *c == name);
                    view! { <option value=name.clone() selected=selected>{name.clone()}</option> }
                })
                .collect_view()}
        </select>
        <button id="ask-model" on:click=ask disabled=move || !can_ask()
            title=move || if configured().is_empty() { "no model is configured on this server" } else { "" }>
            {move || if asking.get() { "Asking…" } else { "Ask the model" }}
        </button>
        <Show when=move || asking.get()>
            <button id="cancel-ask" class="secondary" on:click=cancel>"Cancel"</button>
        </Show>
        <span class="muted small ask-status" id="ask-status">
            {move || match (models.get(), ask_status.get()) {
                (_, Some(Ok(m))) => m,
                (_, Some(Err(e))) => format!("model call failed: {e}"),
                (Some(Err(_)), None) => "No server: models are unavailable here, but pasting an answer works.".to_string(),
                (Some(Ok(l)), None) if l.iter().all(|m| m.baseline) => "No model is configured on this server: start it with --config FILE naming models and their providers (README, \"Using models\"), or with OPENAI_BASE_URL and OPENAI_MODEL set. Pasting an answer works meanwhile.".to_string(),
                (Some(Ok(_)), None) if chosen_model.with(String::is_empty) => "Choose a model to ask.".to_string(),
                _ => String::new(),
            }}
        </span>
    }
}
