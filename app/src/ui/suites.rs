//! The suites page (`/suites`): MatTools, OmniMatBench and the other suites' tasks that the
//! server holds. Pick a suite and a task, read the exact prompt, write or paste an answer
//! (for MatTools' code tasks: Python), and score it on the server, which runs code in its
//! sandbox. MatTools verdicts show each property's expected and returned value and the error
//! class of the paper's taxonomy. An OmniMatBench item's images are shown under its prompt
//! (served by the server from its images folder), or why they are unavailable.

use benchmarks::task::ViewTable;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wire::case::{SuiteCase, CASE_VERSION};
use wire::{ScoreRequest, ScoreResult, SuiteInfo, SuiteTask};

use benchmarks::mattools::code::highlight::highlight;

/// A starting point for a MatTools answer (the layout the prompt asks for).
const CODE_TEMPLATE: &str = "<answer><code>```python\nfrom pymatgen.core import Structure\n\n\ndef compute():\n    path = 'tool_source_code/pymatgen-analysis-defects/tests/test_files/GaN.vasp'\n    structure = Structure.from_file(path)\n    return {}\n```</code><name>compute</name></answer>";

/// The suites page.
#[component]
pub fn Suites() -> impl IntoView {
    let suites = LocalResource::new(crate::api::suites);
    let chosen = RwSignal::new(String::new());
    // What the chosen suite's descriptor says (its answers, references, …).
    let info = Memo::new(move |_| {
        let name = chosen.get();
        suites
            .get()
            .and_then(|r| r.ok())
            .and_then(|list| list.into_iter().find(|s: &SuiteInfo| s.name == name))
    });
    let tasks = LocalResource::new(move || {
        let name = chosen.get();
        async move {
            if name.is_empty() {
                Ok(Vec::new())
            } else {
                crate::api::suite_tasks(&name).await
            }
        }
    });
    let task_id = RwSignal::new(String::new());
    let answer = RwSignal::new(String::new());
    let answered_by = RwSignal::new(None::<String>);
    // A shared task (`#suite-case=…`) opens with its suite, task and answer; its task comes
    // with the link, so it opens even where this server holds other tasks.
    let (linked, link_error) = match crate::share::suite_case_from_location() {
        Some(Ok(case)) => {
            chosen.set(case.suite.clone());
            task_id.set(case.task.id.clone());
            answer.set(case.answer.clone());
            answered_by.set(case.model.clone());
            (Some(case.task), None)
        }
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    let linked = StoredValue::new(linked);
    let listed = Memo::new(move |_| {
        let id = task_id.get();
        tasks
            .get()
            .and_then(|r| r.ok())
            .and_then(|ts| ts.into_iter().find(|t: &SuiteTask| t.id == id))
            .or_else(|| linked.get_value().filter(|t| t.id == id))
    });
    // AlchemyBench: the listed task with its K nearest recipes as references (the server
    // retrieves them); K = 0 is the task as listed.
    let rag_k = RwSignal::new(0usize);
    let retrieved = RwSignal::new(None::<Result<SuiteTask, String>>);
    Effect::new(move |_| {
        let k = rag_k.get();
        let base = listed.get();
        retrieved.set(None);
        let takes = info
            .get_untracked()
            .is_some_and(|s| !s.reference_counts.is_empty());
        let (Some(base), true) = (base, k > 0 && takes) else {
            return;
        };
        let suite = chosen.get_untracked();
        let request = wire::ReferencesRequest { task: base.task, k };
        spawn_local(async move {
            let r = crate::api::suite_references(&suite, &request).await;
            // A later choice may have replaced this one meanwhile.
            if rag_k.get_untracked() == k {
                retrieved.set(Some(r));
            }
        });
    });
    let task = Memo::new(move |_| {
        let base = listed.get();
        match (retrieved.get(), &base) {
            (Some(Ok(t)), Some(b)) if t.id == b.id => Some(t),
            _ => base,
        }
    });
    // A new suite starts at its first task; a new task starts with an empty verdict.
    Effect::new(move |_| {
        if let Some(Ok(ts)) = tasks.get() {
            let id = task_id.get_untracked();
            let is_linked = linked.with_value(|l| l.as_ref().is_some_and(|t| t.id == id));
            if !is_linked && !ts.iter().any(|t| t.id == id) {
                task_id.set(ts.first().map(|t| t.id.clone()).unwrap_or_default());
            }
        }
    });
    let share_link = RwSignal::new(None::<String>);
    let share_error = RwSignal::new(None::<String>);
    let current_case = move || {
        task.get_untracked().map(|task| SuiteCase {
            v: CASE_VERSION,
            suite: chosen.get_untracked(),
            task,
            answer: answer.get_untracked(),
            model: answered_by.get_untracked(),
        })
    };
    let share = move |_| {
        if let Some(case) = current_case() {
            share_error.set(None);
            share_link.set(crate::share::publish_suite_case(&case));
        }
    };
    // A short link: the case kept by the server under a short id (the long link carries the
    // whole task, thousands of characters).
    let share_short = move |_| {
        let Some(case) = current_case() else { return };
        spawn_local(async move {
            match crate::api::put_case(&case).await {
                Ok(id) => {
                    share_error.set(None);
                    let link = crate::share::short_link(&id);
                    if let Some(l) = &link {
                        crate::share::copy_to_clipboard(l).await;
                    }
                    share_link.set(link);
                }
                Err(e) => share_error.set(Some(format!("no short link: {e}"))),
            }
        });
    };
    let prompt = Signal::derive(move || task.get().map(|t| t.prompt));
    // MatTools' code answers get Python colouring; the layer scrolls with the text.
    let python = move || info.get().is_some_and(|s| s.code_answers);
    let layer: NodeRef<leptos::html::Pre> = NodeRef::new();
    let editor: NodeRef<leptos::html::Textarea> = NodeRef::new();
    let sync_scroll = move || {
        if let (Some(l), Some(e)) = (layer.get(), editor.get()) {
            l.set_scroll_top(e.scroll_top());
            l.set_scroll_left(e.scroll_left());
        }
    };
    let messages = Signal::derive(move || task.get().map(|t| t.messages).unwrap_or_default());
    let result = RwSignal::new(None::<Result<ScoreResult, String>>);
    // The answer the verdict is about: another answer (a new model reply, an edit) is not it.
    let scored = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    // Seconds since Score was pressed, while the server works (code may run for minutes).
    let elapsed = RwSignal::new(0u64);
    let in_flight = StoredValue::new_local(None::<web_sys::AbortController>);
    let ticker = StoredValue::new_local(None::<IntervalHandle>);
    let stop_ticking = move || {
        if let Some(h) = ticker.get_value() {
            h.clear();
        }
        ticker.set_value(None);
    };
    Effect::new(move |_| {
        task.track();
        // Another task: a scoring still running was for the previous one.
        if let Some(c) = in_flight.get_value() {
            c.abort();
        }
        in_flight.set_value(None);
        stop_ticking();
        busy.set(false);
        result.set(None);
        if info.get_untracked().is_some_and(|s| s.code_answers) && answer.get_untracked().is_empty()
        {
            answer.set(CODE_TEMPLATE.to_string());
        }
    });
    let score_now = move || {
        let Some(t) = task.get_untracked() else {
            return;
        };
        let request = ScoreRequest {
            suite: chosen.get_untracked(),
            task: t.task,
            response: answer.get_untracked(),
        };
        let Ok(controller) = web_sys::AbortController::new() else {
            return;
        };
        let signal = controller.signal();
        in_flight.set_value(Some(controller));
        busy.set(true);
        result.set(None);
        scored.set(request.response.clone());
        elapsed.set(0);
        stop_ticking();
        ticker.set_value(
            set_interval_with_handle(
                move || elapsed.update(|s| *s += 1),
                std::time::Duration::from_secs(1),
            )
            .ok(),
        );
        spawn_local(async move {
            let r = crate::api::score(&request, &signal).await;
            if !signal.aborted() {
                result.set(Some(r));
                busy.set(false);
                stop_ticking();
            }
        });
    };
    let run = move |_| score_now();
    // A shared task with an answer opens with its verdict, scored here and now by this
    // server (never one carried in the link).
    let open_scored = StoredValue::new(false);
    Effect::new(move |_| {
        let Some(t) = task.get() else { return };
        let is_linked = linked.with_value(|l| l.as_ref().is_some_and(|l| l.id == t.id));
        if is_linked && !open_scored.get_value() && !answer.get_untracked().trim().is_empty() {
            open_scored.set_value(true);
            score_now();
        }
    });
    let cancel = move |_| {
        if let Some(c) = in_flight.get_value() {
            c.abort();
        }
        in_flight.set_value(None);
        stop_ticking();
        busy.set(false);
        result.set(Some(Err(format!(
            "Cancelled after {} s: the server stopped scoring this answer.",
            elapsed.get_untracked()
        ))));
    };
    view! {
        <div class="panel suites" id="suites-page">
            {link_error.map(|e| view! { <p class="error notice" id="suite-link-error">{e}</p> })}
            <h2>"Suites"</h2>
            <p class="muted">
                "MatTools (pymatgen code tasks and knowledge questions), OmniMatBench "
                "(calculations and open questions) and AlchemyBench (synthesis recipes, with K "
                "retrieved references): pick a task, read the exact prompt, answer it, and "
                "score the answer on the server. Code runs in the server's sandbox."
            </p>
            <div class="row">
                <label class="field">
                    <span>"Suite"</span>
                    <select id="suite-select" on:change=move |e| {
                        answer.set(String::new());
                        answered_by.set(None);
                        task_id.set(String::new());
                        rag_k.set(0);
                        chosen.set(event_target_value(&e));
                    }>
                        <option value="" selected=move || chosen.get().is_empty()>"Choose a suite…"</option>
                        {move || match suites.get() {
                            Some(Ok(list)) => list.into_iter().filter(|s: &SuiteInfo| !s.generates).map(|s| {
                                let label = format!("{} ({} tasks)", s.name, s.tasks);
                                let name = s.name.clone();
                                view! { <option value=s.name.clone() selected=move || chosen.get() == name>{label}</option> }
                            }).collect_view().into_any(),
                            Some(Err(e)) => view! { <option disabled=true>{e}</option> }.into_any(),
                            None => view! { <option disabled=true>"Loading…"</option> }.into_any(),
                        }}
                    </select>
                </label>
                {move || info.get().filter(|s| !s.reference_counts.is_empty()).map(|s| view! {
                    <crate::ui::references::KChooser k=rag_k choices=s.reference_counts />
                })}
                <label class="field wide">
                    <span>"Task"</span>
                    <select id="suite-task" on:change=move |e| task_id.set(event_target_value(&e))>
                        {move || match tasks.get() {
                            Some(Ok(ts)) => ts.into_iter().map(|t| {
                                let selected = t.id == task_id.get();
                                let label = format!("{} · {}", t.group, t.id);
                                view! { <option value=t.id.clone() selected=selected>{label}</option> }
                            }).collect_view().into_any(),
                            Some(Err(e)) => view! { <option disabled=true>{e}</option> }.into_any(),
                            None => view! { <option disabled=true>"Loading…"</option> }.into_any(),
                        }}
                    </select>
                </label>
            </div>
            {move || suites.get().and_then(|r| r.ok()).and_then(|list| {
                let name = chosen.get();
                list.into_iter().find(|s| s.name == name && s.tasks == 0).map(|s| view! {
                    <p class="notice" id="suite-no-tasks">
                        {format!("This server holds no tasks for {}: {}", s.name, s.source)}
                    </p>
                })
            })}
            <details open=true>
                <summary>"Prompt"</summary>
                <pre class="prompt" id="suite-prompt">{move || task.get().map(|t| t.prompt).unwrap_or_default()}</pre>
                {move || match retrieved.get() {
                    Some(Err(e)) => Some(view! { <p class="error" id="suite-references-error">{e}</p> }),
                    _ => None,
                }}
                {move || task.get().map(|t| view! { <crate::ui::references::RetrievedReferences task=t /> })}
                {move || task.get().map(|t| view! { <TaskImages suite=chosen.get() task=t /> })}
            </details>
            <label class="field wide">
                <span>"Answer (a model's full reply, or your own)"</span>
                <div class="code-editor" class:highlighted=python>
                    // Python answers are coloured by a layer under the (transparent) text.
                    {move || python().then(|| view! {
                        <pre class="highlight" id="suite-answer-highlight" aria-hidden="true" node_ref=layer>
                            {move || answer.with(|a| {
                                highlight(a)
                                    .into_iter()
                                    .map(|(kind, piece)| view! { <span class=kind.class()>{piece.to_string()}</span> })
                                    .collect_view()
                            })}
                            // A trailing newline needs a line to show the caret on.
                            "\n"
                        </pre>
                    })}
                    <textarea id="suite-answer" class="code" rows="14" spellcheck="false" node_ref=editor
                        prop:value=move || answer.get()
                        on:scroll=move |_| sync_scroll()
                        on:input=move |e| {
                            answer.set(event_target_value(&e));
                            answered_by.set(None);
                            sync_scroll();
                        }></textarea>
                </div>
            </label>
            <div class="row buttons">
                <button id="suite-score" on:click=run
                    disabled=move || busy.get() || task.get().is_none() || answer.get().trim().is_empty()>
                    {move || if busy.get() { "Scoring…" } else { "Score" }}
                </button>
                <Show when=move || busy.get()>
                    <span class="muted small" id="suite-elapsed" role="status">
                        {move || format!("{} s", elapsed.get())}
                        {move || python().then_some(" · the code runs in the server's sandbox")}
                    </span>
                    <button id="suite-cancel" class="secondary" on:click=cancel>"Cancel"</button>
                </Show>
                // An item whose images are unavailable is never asked text-only.
                <Show when=move || task.get().is_some_and(|t| t.unavailable.is_none())>
                    <crate::ui::ask::AskModel prompt=prompt answer=answer answered_by=answered_by messages=messages />
                </Show>
                <button id="suite-share" class="secondary" on:click=share
                    disabled=move || task.get().is_none()
                    title="the task and the answer in the link: works on any host">"Share link"</button>
                <button id="suite-short-link" class="secondary" on:click=share_short
                    disabled=move || task.get().is_none()
                    title="the task and the answer kept by this server under a short id">"Short link"</button>
            </div>
            {move || share_link.get().map(|l| view! {
                <p class="small">"Copied: " <a id="suite-share-link" href=l.clone()>{l.clone()}</a></p>
            })}
            {move || share_error.get().map(|e| view! { <p class="error small" id="suite-share-error">{e}</p> })}
            <div id="suite-verdict">
                {move || result.get().map(|r| match r {
                    _ if answer.with(|a| scored.with(|s| a != s)) => view! {
                        <p class="notice" id="suite-stale">"The answer changed since it was scored: press Score for its verdict."</p>
                    }.into_any(),
                    Ok(s) => view! { <Verdict result=s /> }.into_any(),
                    Err(e) => view! { <p class="error" id="suite-error">{e}</p> }.into_any(),
                })}
            </div>
        </div>
    }
}

/// A task's images, in order, each from the server; or why they are unavailable (then no
/// model is asked it).
#[component]
fn TaskImages(suite: String, task: SuiteTask) -> impl IntoView {
    let unavailable = task.unavailable.clone();
    let images = if unavailable.is_some() {
        Vec::new()
    } else {
        task.images.clone()
    };
    let id = task.id.clone();
    view! {
        {unavailable.map(|why| view! { <p class="notice" id="suite-images-unavailable">{why}</p> })}
        {(!images.is_empty()).then(|| view! {
            <div class="task-images" id="suite-images">
                {images.into_iter().map(|stem| {
                    let src = format!(
                        "/api/suites/{}/tasks/{}/images/{}",
                        crate::api::url_segment(&suite),
                        crate::api::url_segment(&id),
                        crate::api::url_segment(&stem)
                    );
                    view! {
                        <figure>
                            <img src=src alt=format!("image {stem} of the task") loading="lazy" />
                            <figcaption class="small muted">{stem.clone()}</figcaption>
                        </figure>
                    }
                }).collect_view()}
            </div>
        })}
    }
}

/// A scored answer: the label, then what the suite declares worth showing of its verdict
/// (facts, tags, a comparison table, texts), then the whole verdict folded.
#[component]
fn Verdict(result: ScoreResult) -> impl IntoView {
    let class = if result.outcome.success {
        "verdict ok"
    } else {
        "verdict bad"
    };
    let metric = result.outcome.metric.map(|m| format!("{:.3}", m));
    let view = result.view.clone();
    let facts = metric
        .into_iter()
        .chain(view.facts)
        .map(|f| format!(" · {f}"))
        .collect::<String>();
    view! {
        <div class=class>
            <strong id="suite-label">{result.outcome.label.clone()}</strong>
            <span>{facts}</span>
            {(!view.tags.is_empty()).then(|| view! {
                <span id="suite-tags">
                    {view.tags.into_iter().map(|t| view! { <span class="tag">{t}</span> }).collect_view()}
                </span>
            })}
        </div>
        {result.outcome.why.clone().map(|why| view! { <p class="why" id="suite-why">{why}</p> })}
        {view.table.map(|table| view! { <VerdictTable table /> })}
        {view.texts.into_iter().map(|t| view! {
            <details class="verdict-text" open=t.open>
                <summary>{t.title}</summary>
                <pre>{t.body}</pre>
            </details>
        }).collect_view()}
        <details>
            <summary>"Full verdict"</summary>
            <pre>{serde_json::to_string_pretty(&result.verdict).unwrap_or_default()}</pre>
        </details>
    }
}

/// A verdict's comparison table; a row judged wrong is marked.
#[component]
fn VerdictTable(table: ViewTable) -> impl IntoView {
    let judged = table.rows.iter().any(|r| r.ok.is_some());
    view! {
        <table class="properties" id="suite-table">
            <thead><tr>
                {table.columns.into_iter().map(|c| view! { <th>{c}</th> }).collect_view()}
                {judged.then(|| view! { <th></th> })}
            </tr></thead>
            <tbody>
                {table.rows.into_iter().map(|row| {
                    let mark = row.ok.map(|ok| if ok { "✓" } else { "✗" });
                    view! {
                        <tr class:bad=row.ok == Some(false)>
                            {row.cells.into_iter().map(|c| view! { <td><code>{c}</code></td> }).collect_view()}
                            {judged.then(|| view! { <td>{mark.unwrap_or_default()}</td> })}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
