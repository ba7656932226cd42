//! The Runs page (first version): start a benchmark run on the server, follow its progress,
//! see the per-action success rates as a bar chart and every result in a filterable table.
//! Runs live on the server, so they survive page reloads.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

const ACTIONS: [&str; 10] = [
    "change",
    "remove",
    "swap",
    "add",
    "move",
    "move_towards",
    "insert_between",
    "delete_below",
    "rotate_around",
    "super_cell",
];

/// The runs page.
#[component]
pub fn Runs() -> impl IntoView {
    let models = LocalResource::new(crate::api::models);
    let model = RwSignal::new("reference".to_string());
    let per_action = RwSignal::new(5usize);
    let seed = RwSignal::new(2026u64);
    let error = RwSignal::new(None::<String>);
    let current = RwSignal::new(None::<String>);
    let run = RwSignal::new(None::<Value>);
    let results = RwSignal::new(Vec::<Value>::new());
    let filter_action = RwSignal::new(String::new());
    let filter_label = RwSignal::new(String::new());

    // Poll the current run every second until it is finished.
    let poll = move || {
        spawn_local(async move {
            while let Some(id) = current.get_untracked() {
                match crate::api::get_json(&format!("/api/runs/{id}")).await {
                    Ok(v) => {
                        let done = v["status"] != "running" && v["status"] != "created";
                        run.set(Some(v));
                        if done {
                            if let Ok(r) =
                                crate::api::get_json(&format!("/api/runs/{id}/results")).await
                            {
                                results.set(r["results"].as_array().cloned().unwrap_or_default());
                            }
                            break;
                        }
                    }
                    Err(e) => {
                        error.set(Some(e));
                        break;
                    }
                }
                gloo_timers_sleep(1000).await;
            }
        });
    };

    let start = move |_| {
        error.set(None);
        results.set(Vec::new());
        let (m, n, s) = (
            model.get_untracked(),
            per_action.get_untracked(),
            seed.get_untracked(),
        );
        spawn_local(async move {
            match crate::api::start_run(&m, n, s, 4).await {
                Ok(id) => {
                    current.set(Some(id));
                    poll();
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };

    let progress = move || {
        run.get().map(|v| {
            let p = &v["progress"];
            let s = &v["summary"]["overall"];
            let (done, total) = (
                p["done"].as_u64().unwrap_or(0),
                p["total"].as_u64().unwrap_or(0),
            );
            format!(
                "{} · {} · {done}/{total} tasks · success {:.3} · {} tokens · ${:.4}",
                v["id"].as_str().unwrap_or(""),
                v["status"].as_str().unwrap_or(""),
                s["success_rate"].as_f64().unwrap_or(0.0),
                v["summary"]["tokens"].as_u64().unwrap_or(0),
                v["summary"]["cost_usd"].as_f64().unwrap_or(0.0),
            )
        })
    };

    let chart = move || {
        let v = run.get()?;
        let per = &v["summary"]["per_action"];
        let bars = ACTIONS
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let rate = per[*a]["success_rate"].as_f64().unwrap_or(0.0);
                let h = (rate * 120.0).round();
                let x = 10.0 + i as f64 * 58.0;
                view! {
                    <g class="bar" data-action=*a data-rate=format!("{rate:.3}")>
                        <rect x=x y=130.0 - h width="40" height=h fill="#2b6cb0"></rect>
                        <text x=x + 20.0 y="145" text-anchor="middle" font-size="8">{a.replace('_', " ")}</text>
                        <text x=x + 20.0 y=126.0 - h text-anchor="middle" font-size="9">{format!("{:.0}%", rate * 100.0)}</text>
                    </g>
                }
            })
            .collect_view();
        Some(view! {
            <svg id="success-chart" viewBox="0 0 600 150" class="chart" role="img" aria-label="success rate per action">
                <line x1="5" y1="130" x2="595" y2="130" stroke="#999"></line>
                {bars}
            </svg>
        })
    };

    let rows = move || {
        let (fa, fl) = (filter_action.get(), filter_label.get());
        results
            .get()
            .into_iter()
            .filter(|r| fa.is_empty() || r["action"] == fa.as_str())
            .filter(|r| fl.is_empty() || r["label"].as_str().unwrap_or("ProviderError") == fl)
            .map(|r| {
                let label = r["label"].as_str().unwrap_or("ProviderError").to_string();
                let shown = label.clone();
                let md = r["verdict"]["max_dist"].as_f64().map_or("—".into(), |d| format!("{d:.4}"));
                view! {
                    <tr data-label=label.clone()>
                        <td>{r["task_id"].as_str().unwrap_or("").to_string()}</td>
                        <td>{r["action"].as_str().unwrap_or("").to_string()}</td>
                        <td>{shown}</td>
                        <td>{md}</td>
                        <td class="detail">{r["verdict"]["detail"].as_str().or(r["error"].as_str()).unwrap_or("").to_string()}</td>
                    </tr>
                }
            })
            .collect_view()
    };

    view! {
        <section class="runs panel">
            <h2>"Benchmark runs"</h2>
            <div class="row">
                <label class="field">
                    <span>"Model"</span>
                    <select id="run-model" on:change=move |ev| model.set(event_target_value(&ev))>
                        {move || match models.get() {
                            Some(Ok(list)) => list
                                .into_iter()
                                .map(|m| {
                                    let label = if m.baseline { format!("{} (baseline)", m.name) } else { m.name.clone() };
                                    let selected = m.name == model.get_untracked();
                                    view! { <option value=m.name.clone() selected=selected>{label}</option> }
                                })
                                .collect_view()
                                .into_any(),
                            Some(Err(e)) => view! { <option value="">{format!("no server: {e}")}</option> }.into_any(),
                            None => view! { <option value="">"loading…"</option> }.into_any(),
                        }}
                    </select>
                </label>
                <label class="field narrow"><span>"Per action"</span>
                    <input id="run-per-action" type="number" min="1" max="500" prop:value=move || per_action.get().to_string()
                        on:change=move |ev| if let Ok(v) = event_target_value(&ev).parse() { per_action.set(v) } />
                </label>
                <label class="field narrow"><span>"Seed"</span>
                    <input id="run-seed" type="number" min="0" prop:value=move || seed.get().to_string()
                        on:change=move |ev| if let Ok(v) = event_target_value(&ev).parse() { seed.set(v) } />
                </label>
                <button id="start-run" on:click=start>"Start run"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
            <p id="run-progress" class="muted">{progress}</p>
            {chart}
            <div class="row">
                <select id="filter-action" on:change=move |ev| filter_action.set(event_target_value(&ev))>
                    <option value="">"all actions"</option>
                    {ACTIONS.iter().map(|a| view! { <option value=*a>{*a}</option> }).collect_view()}
                </select>
                <select id="filter-label" on:change=move |ev| filter_label.set(event_target_value(&ev))>
                    <option value="">"all verdicts"</option>
                    {["Success", "OutputFormatError", "CifParsingError", "AtomCountMismatch", "StructureMismatch", "ProviderError"]
                        .iter().map(|l| view! { <option value=*l>{*l}</option> }).collect_view()}
                </select>
            </div>
            <table id="results" class="results">
                <thead><tr><th>"task"</th><th>"action"</th><th>"verdict"</th><th>"max_dist"</th><th>"detail"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Wait `ms` milliseconds without blocking the page.
async fn gloo_timers_sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
