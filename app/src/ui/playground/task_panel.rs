//! The task: action and seed, the editable prompt with its parsed form, the reading shown,
//! and the full prompt a model receives.

use benchmarks::atomworld::render_prompt;
use benchmarks::atomworld::{Action, ActionKind, Applied, PromptStyle, Semantics};
use engine::Structure;
use leptos::prelude::*;

use super::super::action_form::ActionForm;

/// The task panel.
#[component]
pub fn TaskPanel(
    /// The action kind drawn by Random.
    kind: RwSignal<ActionKind>,
    /// The seed of Random.
    seed: RwSignal<u64>,
    /// Draw a new prompt of `kind` with `seed`.
    randomise: Callback<()>,
    /// The action prompt.
    prompt: RwSignal<String>,
    /// The input structure.
    input: Memo<Option<Structure>>,
    /// The prompt read as an action.
    parsed: Memo<Option<Result<Action, String>>>,
    /// The action applied (and the target CIF), or why not.
    applied: Memo<Option<Result<(Applied, String), String>>>,
    /// Whether the two readings of the action differ.
    differ: Memo<Option<bool>>,
    /// The reading shown.
    semantics: RwSignal<Semantics>,
    /// The full prompt a model receives.
    full_prompt: Memo<Option<String>>,
) -> impl IntoView {
    let prompt_form_error = RwSignal::new(None::<String>);
    let copy_prompt = move |_| {
        if let (Some(w), Some(text)) = (web_sys::window(), full_prompt.get_untracked()) {
            let _ = w.navigator().clipboard().write_text(&text);
        }
    };
    view! {
            <div class="row">
                <label class="field">
                    <span>"Action"</span>
                    <select
                        id="action-kind"
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            if let Some(k) = ActionKind::BENCHMARK.iter().chain(&[ActionKind::MoveAll]).find(|k| k.name() == v) {
                                kind.set(*k);
                            }
                        }
                    >
                        {ActionKind::BENCHMARK
                            .iter()
                            .chain(&[ActionKind::MoveAll])
                            .map(|k| {
                                let k = *k;
                                view! { <option value=k.name() selected=move || kind.get() == k>{k.name()}</option> }
                            })
                            .collect_view()}
                    </select>
                </label>
                <label class="field narrow">
                    <span>"Seed"</span>
                    <input
                        id="seed"
                        type="number"
                        min="0"
                        prop:value=move || seed.get().to_string()
                        on:change=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse::<u64>() {
                                seed.set(v);
                                randomise.run(());
                            }
                        }
                    />
                </label>
                <button id="random" on:click=move |_| {
                    seed.update(|s| *s = s.wrapping_add(1));
                    randomise.run(());
                }>"Random"</button>
            </div>

            <label class="field">
                <span>"Action prompt (editable)"</span>
                <textarea
                    id="action-prompt"
                    rows="3"
                    prop:value=move || prompt.get()
                    on:input=move |ev| prompt.set(event_target_value(&ev))
                ></textarea>
            </label>
            <ActionForm
                action=Signal::derive(move || parsed.get().and_then(|r| r.ok()))
                on_change=Callback::new(move |a: Action| {
                    if let Some(s) = input.get_untracked() {
                        match render_prompt(&a, PromptStyle::default(), &s) {
                            Ok(text) => {
                                prompt_form_error.set(None);
                                prompt.set(text);
                            }
                            Err(e) => prompt_form_error.set(Some(e.to_string())),
                        }
                    }
                })
            />
            {move || prompt_form_error.get().map(|e| view! { <p class="error small">{e}</p> })}
            <p class="parsed" id="parsed-action">
                {move || match parsed.get() {
                    Some(Ok(a)) => match applied.get() {
                        Some(Err(e)) => view! { <span class="error">{e}</span> }.into_any(),
                        _ => view! { <span class="ok">{format!("{} · {}", a.kind().name(), serde_json::to_string(&a).unwrap_or_default())}</span> }.into_any(),
                    },
                    Some(Err(e)) => view! { <span class="error">{e}</span> }.into_any(),
                    None => view! { <span></span> }.into_any(),
                }}
            </p>
            // A free-text prompt the parser does not take: the closest accepted wording with
            // the user's own numbers, one click to use it.
            {move || {
                let Some(Err(_)) = parsed.get() else { return None };
                let structure = input.get()?;
                let suggestion = benchmarks::atomworld::suggest::suggest(&prompt.get(), &structure)?;
                let shown = suggestion.clone();
                Some(view! {
                    <p class="notice" id="prompt-suggestion">
                        "Did you mean: "
                        <button class="secondary small" id="use-suggestion"
                            on:click=move |_| prompt.set(suggestion.clone())>{shown}</button>
                    </p>
                })
            }}
            {move || (differ.get() == Some(true)).then(|| view! {
                <p class="notice" id="semantics-notice">
                    "The reference implementation and the physical reading give different results for this task "
                    "(the benchmark's ground truth follows the reference). "
                    <label>
                        <input
                            type="checkbox"
                            id="physical-toggle"
                            prop:checked=move || semantics.get() == Semantics::Physical
                            on:change=move |ev| semantics.set(if event_target_checked(&ev) { Semantics::Physical } else { Semantics::Reference })
                        />
                        " show the physical reading"
                    </label>
                </p>
            })}
            <details class="model-prompt">
                <summary>"Full prompt sent to a model"</summary>
                <button id="copy-prompt" on:click=copy_prompt>"Copy"</button>
                <pre id="full-prompt">{move || full_prompt.get().unwrap_or_default()}</pre>
            </details>
    }
}
