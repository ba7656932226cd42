//! Retrieved references on the suites page (AlchemyBench's recipes): the K chooser (the
//! counts the suite takes; AlchemyBench: 0, 1, 5, 10, 25, the benchmark's settings), and, for
//! a task that has references, how they were found and each one's recipe id, similarity and
//! text.

use leptos::prelude::*;
use wire::SuiteTask;

/// The K chooser, offering `choices`.
#[component]
pub fn KChooser(k: RwSignal<usize>, choices: Vec<usize>) -> impl IntoView {
    view! {
        <label class="field" title="K nearest recipes in the prompt (RAG); 0: the one-shot prompt">
            <span>"References (K)"</span>
            <select id="suite-rag-k" on:change=move |e| {
                k.set(event_target_value(&e).parse().unwrap_or(0));
            }>
                {choices.into_iter().map(|n| view! {
                    <option value=n.to_string() selected=move || k.get() == n>{n.to_string()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// The references of `task` (an AlchemyBench task), nearest first, with the retrieval
/// method; nothing for a task without references.
#[component]
pub fn RetrievedReferences(task: SuiteTask) -> impl IntoView {
    let references = task.task["references"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let retrieval = &task.task["retrieval"];
    let method = retrieval["method"]
        .as_str()
        .unwrap_or("retrieved before this task was stored (method not recorded)")
        .to_string();
    let hits = retrieval["hits"].as_array().cloned().unwrap_or_default();
    (!references.is_empty()).then(|| {
        view! {
            <details open=true id="suite-references">
                <summary>{format!("{} retrieved references", references.len())}</summary>
                <p class="small muted" id="suite-retrieval-method">{method}</p>
                <ol class="references">
                    {references.into_iter().enumerate().map(|(i, r)| {
                        let hit = hits.get(i);
                        let id = hit.and_then(|h| h[0].as_str()).unwrap_or("?").to_string();
                        let score = hit
                            .and_then(|h| h[1].as_f64())
                            .map(|s| format!(" · score {s:.3}"))
                            .unwrap_or_default();
                        let contribution = r["contribution"].as_str().unwrap_or_default().to_string();
                        let recipe = r["recipe"].as_str().unwrap_or_default().to_string();
                        let headline = contribution
                            .lines()
                            .find(|l| l.trim_start().starts_with('-'))
                            .unwrap_or_default()
                            .trim_start_matches([' ', '-']);
                        // "**Novel materials or compounds**: X" reads as X.
                        let headline = headline
                            .split_once("**: ")
                            .map_or(headline, |(_, rest)| rest)
                            .to_string();
                        view! {
                            <li data-recipe=id.clone()>
                                <details>
                                    <summary>
                                        <strong>{id.clone()}</strong>{score}" · "{headline}
                                    </summary>
                                    <pre class="prompt small">{format!("{contribution}\n\n{recipe}")}</pre>
                                </details>
                            </li>
                        }
                    }).collect_view()}
                </ol>
            </details>
        }
    })
}
