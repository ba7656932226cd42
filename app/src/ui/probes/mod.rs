//! The probes page (`/probes`): the AtomWorld paper's probes of what a model can do apart from
//! CIF actions. Each tab generates a seeded task, shows the exact prompt, takes an answer
//! (asked from a model or pasted) and scores it in the scoring worker (`crate::matching`).

mod gen;
mod points;
mod repair;

use leptos::prelude::*;
use matcher_worker::{Outcome, Scoring, Work};

use crate::matching::Worker;

/// Which probe is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Points,
    Repair,
    Gen,
}

impl Probe {
    const ALL: [Probe; 3] = [Probe::Points, Probe::Repair, Probe::Gen];

    fn id(self) -> &'static str {
        match self {
            Probe::Points => "points",
            Probe::Repair => "repair",
            Probe::Gen => "gen",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Probe::Points => "Pure coordinates",
            Probe::Repair => "CIF-Repair",
            Probe::Gen => "CIF-Gen",
        }
    }
}

/// The probes page.
#[component]
pub fn Probes() -> impl IntoView {
    let shown = RwSignal::new(Probe::Points);
    view! {
        <div class="panel probes">
            <div class="tabs" role="tablist">
                {Probe::ALL.into_iter().map(|p| view! {
                    <button
                        role="tab"
                        class="tab"
                        data-probe=p.id()
                        class:active=move || shown.get() == p
                        on:click=move |_| shown.set(p)
                    >{p.title()}</button>
                }).collect_view()}
            </div>
            // One probe at a time: the answer controls keep their ids unique.
            {move || match shown.get() {
                Probe::Points => view! { <points::PointsProbe /> }.into_any(),
                Probe::Repair => view! { <repair::RepairProbe /> }.into_any(),
                Probe::Gen => view! { <gen::GenProbe /> }.into_any(),
            }}
        </div>
    }
}

/// An answer and its verdict, as a probe shows them.
struct Scored<V: Send + Sync + 'static> {
    /// The answer text.
    answer: RwSignal<String>,
    /// Its verdict (none while the answer is blank or being scored).
    verdict: Memo<Option<V>>,
    /// The worker that scores it.
    matcher: Worker<Scoring>,
}

/// The answer to `task`, emptied whenever the task changes (a new task starts blank), and its
/// verdict: `work` says what the scoring worker is to score, `verdict` picks the verdict from
/// its outcome. The probes share this wiring.
fn answer_and_verdict<T, V>(
    task: Memo<Option<T>>,
    work: impl Fn(&T, String) -> Work + Send + Sync + 'static,
    verdict: impl Fn(Outcome) -> Option<V> + Send + Sync + 'static,
) -> Scored<V>
where
    T: Clone + PartialEq + Send + Sync + 'static,
    V: Clone + PartialEq + Send + Sync + 'static,
{
    let answer = RwSignal::new(String::new());
    Effect::new(move |_| {
        task.track();
        answer.set(String::new());
    });
    let job = Memo::new(move |_| {
        let text = answer.get();
        if text.trim().is_empty() {
            return None;
        }
        task.with(|t| t.as_ref().map(|t| work(t, text)))
    });
    let matcher = Worker::<Scoring>::new();
    let outcome = matcher.follow(job);
    let verdict = Memo::new(move |_| outcome.get().and_then(&verdict));
    Scored {
        answer,
        verdict,
        matcher,
    }
}

/// The seed field and the buttons that draw a task (shared by the three probes).
#[component]
fn SeedRow(seed: RwSignal<u64>, children: Children) -> impl IntoView {
    view! {
        <div class="row">
            {children()}
            <label class="field narrow">
                <span>"Seed"</span>
                <input id="probe-seed" type="number" min="0"
                    prop:value=move || seed.get().to_string()
                    on:change=move |e| {
                        if let Ok(v) = event_target_value(&e).trim().parse::<u64>() {
                            seed.set(v);
                        }
                    } />
            </label>
            <button id="probe-random" on:click=move |_| seed.update(|s| *s = s.wrapping_add(1))>"Random"</button>
        </div>
    }
}

/// The prompt a model receives, with a copy button.
#[component]
fn PromptView(prompt: Signal<Option<String>>) -> impl IntoView {
    let copy = move |_| {
        if let (Some(w), Some(text)) = (web_sys::window(), prompt.get_untracked()) {
            let _ = w.navigator().clipboard().write_text(&text);
        }
    };
    view! {
        <details class="model-prompt" open>
            <summary>"Prompt sent to a model " <button class="secondary small" on:click=copy>"copy"</button></summary>
            <pre id="probe-prompt">{move || prompt.get().unwrap_or_else(|| "(no task for this seed)".into())}</pre>
        </details>
    }
}

/// The answer box with the model controls, a "paste the ground truth" button and "clear".
#[component]
fn AnswerBox(
    prompt: Signal<Option<String>>,
    answer: RwSignal<String>,
    /// The ground-truth answer, in the format the probe expects.
    truth: Signal<Option<String>>,
    placeholder: &'static str,
    /// The worker that scores it (for its notes).
    matcher: Worker<Scoring>,
) -> impl IntoView {
    let answered_by = RwSignal::new(None::<String>);
    // About to answer: the scoring worker starts loading now, not at the first verdict.
    view! {
        <div class="row buttons" on:pointerenter=move |_| matcher.warm() on:focusin=move |_| matcher.warm()>
            <super::ask::AskModel prompt=prompt answer=answer answered_by=answered_by />
            <button id="paste-truth" on:click=move |_| answer.set(truth.get_untracked().unwrap_or_default())>
                "Paste the ground truth"
            </button>
            <button class="secondary" on:click=move |_| answer.set(String::new())>"Clear"</button>
        </div>
        <textarea id="answer" rows="8" placeholder=placeholder on:focus=move |_| matcher.warm()
            prop:value=move || answer.get()
            on:input=move |ev| answer.set(event_target_value(&ev))></textarea>
        {move || (matcher.busy.get() && matcher.slow.get()).then(|| view! {
            <p class="muted small" id="scoring" role="status">"scoring\u{2026} (in the background: the page stays usable)"</p>
        })}
        <crate::ui::verdict::ScoringFailure failure=matcher.failure />
    }
}

/// A probe verdict: label, the sentence that explains it, and named numbers.
#[component]
fn ProbeVerdict(
    label: String,
    success: bool,
    detail: String,
    /// (name, DOM id, value) rows.
    numbers: Vec<(&'static str, &'static str, String)>,
) -> impl IntoView {
    let class = if success {
        "verdict success"
    } else {
        "verdict failure"
    };
    let shown = label.clone();
    view! {
        <div class=class id="verdict" data-label=label>
            <p class="label">{shown}</p>
            <p class="detail">{detail}</p>
            {(!numbers.is_empty()).then(|| view! {
                <dl class="numbers">
                    {numbers.into_iter().map(|(name, id, v)| view! { <dt>{name}</dt><dd id=id>{v}</dd> }).collect_view()}
                </dl>
            })}
        </div>
    }
}
