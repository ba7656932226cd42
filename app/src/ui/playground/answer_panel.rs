//! The answer: ask a model or paste an answer, see the verdict (computed by the scoring
//! worker), share the case.

use benchmarks::atomworld::evaluate::Verdict;
use leptos::prelude::*;

use super::super::ask::AskModel;

/// The answer panel.
#[component]
pub fn AnswerPanel(
    /// The answer text.
    answer: RwSignal<String>,
    /// The model that wrote it, if one did.
    answered_by: RwSignal<Option<String>>,
    /// The full prompt a model receives.
    full_prompt: Memo<Option<String>>,
    /// The target CIF.
    target_cif: Memo<Option<String>>,
    /// The input CIF.
    input_cif: Memo<Option<String>>,
    /// The verdict on the answer.
    verdict: Memo<Option<Verdict>>,
    /// Whether the verdict is being computed (in the scoring worker).
    matching: Signal<bool>,
    /// Why no answer can be scored in this browser.
    failure: RwSignal<Option<String>>,
    /// Start the scoring worker ahead of the first verdict (the person is about to answer).
    warm: Callback<()>,
    /// Whether it has been computed for a noticeable while (then "matching…" is shown).
    slow_match: Signal<bool>,
    /// Whether the target is too large to match on every keystroke.
    large_target: Memo<bool>,
    /// The target's site count.
    target_sites: Signal<usize>,
    /// The answer the person asked to evaluate (for large targets).
    requested_for: RwSignal<Option<String>>,
    /// Make a share link holding the whole case.
    make_link: Callback<()>,
    /// Make a short link through the server's case store.
    make_short_link: Callback<()>,
    /// The link made.
    share_link: RwSignal<Option<String>>,
    /// Why a link could not be made (or a shared case not opened).
    share_error: RwSignal<Option<String>>,
    /// Shown under the verdict (the workshop room's banner).
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    // Each new link goes to the clipboard; the page says whether it got there.
    let copied = RwSignal::new(None::<bool>);
    Effect::new(move |_| {
        let Some(link) = share_link.get() else { return };
        copied.set(None);
        leptos::task::spawn_local(async move {
            let ok = crate::share::copy_to_clipboard(&link).await;
            copied.set(Some(ok));
        });
    });
    view! {
        <div class="panel answer" on:pointerenter=move |_| warm.run(()) on:focusin=move |_| warm.run(())>
            <h2>"Answer"</h2>
            <div class="row buttons">
                <AskModel prompt=Signal::derive(move || full_prompt.get()) answer=answer answered_by=answered_by />
                <button id="paste-truth" on:click=move |_| {
                    answered_by.set(None);
                    answer.set(benchmarks::atomworld::evaluate::cif_answer(&target_cif.get_untracked().unwrap_or_default()));
                }>"Paste the ground truth"</button>
                <button id="paste-input" on:click=move |_| {
                    answered_by.set(None);
                    answer.set(format!("<cif>\n{}\n</cif>", input_cif.get_untracked().unwrap_or_default()));
                }>"Paste the input unchanged"</button>
                <button class="secondary" on:click=move |_| { answered_by.set(None); answer.set(String::new()) }>"Clear"</button>
            </div>
            <textarea
                id="answer"
                rows="8"
                placeholder="Paste a model's full answer here; the CIF between the last <cif> and </cif> is scored."
                prop:value=move || answer.get()
                on:input=move |ev| { answered_by.set(None); answer.set(event_target_value(&ev)) }
            ></textarea>
            {move || (matching.get() && slow_match.get()).then(|| view! {
                <p class="muted small" id="matching" role="status">"matching\u{2026} (in the background: the page stays usable)"</p>
            })}
            {move || verdict.get().map(|v| view! { <super::super::verdict::VerdictView verdict=v /> })}
            <super::super::verdict::ScoringFailure failure=failure />
            {children.map(|c| c())}
            {move || (verdict.get().is_none() && !matching.get() && large_target.get() && !answer.with(|a| a.trim().is_empty())).then(|| {
                let n = target_sites.get();
                view! {
                    <p class="notice" id="large-target">
                        {format!("The target has {n} sites: matching an answer against it can take a while, so it waits for you. ")}
                        <button id="evaluate-large" on:click=move |_| requested_for.set(Some(answer.get_untracked()))>"Evaluate"</button>
                    </p>
                }
            })}
            <div class="row buttons">
                <button id="share" class="secondary" on:click=move |_| make_link.run(()) title="the whole case in the link: works on any host">"Share link"</button>
                <button id="short-link" class="secondary" on:click=move |_| make_short_link.run(()) title="the case kept by this server under a short id">"Short link"</button>
                {move || copied.get().map(|ok| if ok {
                    view! { <span id="share-copied" class="ok small" role="status">"Copied ✓"</span> }.into_any()
                } else {
                    view! { <span id="share-not-copied" class="muted small" role="status">"Not copied (the browser refused): select the link and copy it."</span> }.into_any()
                })}
                {move || share_link.get().map(|l| view! { <input id="share-link" readonly prop:value=l /> })}
            </div>
            {move || share_error.get().map(|e| view! { <p class="error" id="share-error">{e}</p> })}
        </div>
    }
}
