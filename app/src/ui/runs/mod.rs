//! The Runs page: start benchmark runs on the server (one per chosen model), follow their
//! progress with an ETA, compare them in a bar chart of success rate per action and a chart
//! of max_dist, and browse every result in a filterable table whose rows open as cases.
//! Runs live on the server and the page keeps their ids in its address, so a reload (or a
//! shared address) shows them again.

mod charts;

use std::collections::{BTreeMap, HashMap};

use bench::atomworld::prompt::split_model_prompt;
use bench::atomworld::Semantics;
use bench::case::{encode, Case, CaseStructure, CASE_VERSION};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_bindgen::JsCast;

/// The actions in the paper's table order.
pub const ACTIONS: [&str; 10] = [
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

/// The run ids in the page's address (`?runs=a,b`).
fn runs_in_address() -> Vec<String> {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix("runs="))
        .map(|v| {
            v.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Put the shown run ids in the address without reloading.
fn set_address(ids: &[String]) {
    if let Some(w) = web_sys::window() {
        let url = format!("/runs?runs={}", ids.join(","));
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }
}

/// The playground link of one stored result: the task's input, prompt and the answer.
fn case_link(result: &Value, model: &str) -> Option<String> {
    let (cif, action) = split_model_prompt(result["prompt"].as_str()?)?;
    let case = Case {
        v: CASE_VERSION,
        structure: CaseStructure::Cif {
            cif: cif.to_string(),
        },
        prompt: action.to_string(),
        semantics: Semantics::Reference,
        answer: result["response"].as_str().unwrap_or_default().to_string(),
        model: Some(model.to_string()),
        seed: None,
    };
    Some(format!("/#case={}", encode(&case)))
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// "3 min 20 s" style.
fn duration_text(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}
/// The runs page.
#[component]
pub fn Runs() -> impl IntoView {
    let models = LocalResource::new(crate::api::models);
    let earlier = LocalResource::new(|| crate::api::get_json("/api/runs"));
    let chosen = RwSignal::new(vec!["reference".to_string()]);
    let per_action = RwSignal::new(5usize);
    let seed = RwSignal::new(2026u64);
    let concurrency = RwSignal::new(4usize);
    let error = RwSignal::new(None::<String>);
    // The runs shown, in order; what the server says about each; their results.
    let shown = RwSignal::new(Vec::<String>::new());
    let data = RwSignal::new(BTreeMap::<String, Value>::new());
    let results = RwSignal::new(BTreeMap::<String, Vec<Value>>::new());
    // When the page first saw each run and how far it was then (for the ETA).
    let first_seen = StoredValue::new(HashMap::<String, (f64, u64)>::new());
    let filter_action = RwSignal::new(String::new());
    let filter_label = RwSignal::new(String::new());

    // Follow one run until it is no longer running, then load its results.
    let follow = move |id: String| {
        spawn_local(async move {
            loop {
                if !shown.with_untracked(|s| s.contains(&id)) {
                    break;
                }
                match crate::api::get_json(&format!("/api/runs/{id}")).await {
                    Ok(v) => {
                        let done = v["status"] != "running" && v["status"] != "created";
                        let count = v["progress"]["done"].as_u64().unwrap_or(0);
                        first_seen.update_value(|m| {
                            m.entry(id.clone()).or_insert((now_ms(), count));
                        });
                        data.update(|d| {
                            d.insert(id.clone(), v);
                        });
                        if done {
                            if let Ok(r) =
                                crate::api::get_json(&format!("/api/runs/{id}/results")).await
                            {
                                let list = r["results"].as_array().cloned().unwrap_or_default();
                                results.update(|m| {
                                    m.insert(id.clone(), list);
                                });
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
    let show = move |ids: Vec<String>| {
        set_address(&ids);
        data.set(BTreeMap::new());
        results.set(BTreeMap::new());
        shown.set(ids.clone());
        for id in ids {
            follow(id);
        }
    };
    // Runs named in the address (a reload, or a shared address).
    let from_address = runs_in_address();
    if !from_address.is_empty() {
        show(from_address);
    }

    let start = move |_| {
        error.set(None);
        let (ms, n, s, c) = (
            chosen.get_untracked(),
            per_action.get_untracked(),
            seed.get_untracked(),
            concurrency.get_untracked(),
        );
        if ms.is_empty() {
            error.set(Some("choose at least one model".into()));
            return;
        }
        spawn_local(async move {
            let mut ids = Vec::new();
            for m in ms {
                match crate::api::start_run(&m, n, s, c).await {
                    Ok(id) => ids.push(id),
                    Err(e) => error.set(Some(format!("{m}: {e}"))),
                }
            }
            if !ids.is_empty() {
                show(ids);
            }
        });
    };

    // (model, run JSON) of the shown runs, in order.
    let shown_runs = move || {
        let d = data.get();
        shown
            .get()
            .into_iter()
            .filter_map(|id| d.get(&id).cloned())
            .map(|v| (v["spec"]["model"].as_str().unwrap_or("").to_string(), v))
            .collect::<Vec<_>>()
    };

    let progress = move || {
        shown_runs()
            .into_iter()
            .enumerate()
            .map(|(k, (model, v))| {
                let id = v["id"].as_str().unwrap_or("").to_string();
                let s = &v["summary"]["overall"];
                let status = v["status"].as_str().unwrap_or("").to_string();
                let n = s["n"].as_u64().unwrap_or(0);
                let (done, total) = (
                    v["progress"]["done"].as_u64().unwrap_or(n),
                    v["progress"]["total"].as_u64().unwrap_or(n),
                );
                let eta = first_seen
                    .with_value(|m| m.get(&id).copied())
                    .filter(|_| status == "running")
                    .and_then(|(t0, d0)| {
                        let rate = (done.saturating_sub(d0)) as f64 / ((now_ms() - t0) / 1000.0);
                        (rate > 0.0).then(|| format!(" · ETA {}", duration_text((total - done) as f64 / rate)))
                    })
                    .unwrap_or_default();
                let colour = charts::RUN_COLOURS[k % charts::RUN_COLOURS.len()];
                view! {
                    <div class="run-line" data-run=id.clone()>
                        <span class="swatch" style=format!("background: {colour}")></span>
                        <progress max=total.max(1) value=done></progress>
                        {format!(
                            " {model} · {id} · {status} · {done}/{total} tasks · success {:.3} · {} tokens · ${:.4}{eta}",
                            s["success_rate"].as_f64().unwrap_or(0.0),
                            v["summary"]["tokens"].as_u64().unwrap_or(0),
                            v["summary"]["cost_usd"].as_f64().unwrap_or(0.0),
                        )}
                    </div>
                }
            })
            .collect_view()
    };

    let charts = move || {
        let runs = shown_runs();
        if runs.is_empty() {
            return None;
        }
        let r = results.get();
        let hist: Vec<(String, [usize; 10])> = runs
            .iter()
            .map(|(model, v)| {
                let id = v["id"].as_str().unwrap_or("");
                (
                    model.clone(),
                    charts::histogram(r.get(id).map(Vec::as_slice).unwrap_or(&[])),
                )
            })
            .collect();
        Some(view! {
            <h3>"Success rate per action"</h3>
            {charts::success_chart(&runs)}
            <h3>"max_dist of the successes"</h3>
            {charts::max_dist_chart(&hist)}
        })
    };

    let rows = move || {
        let (fa, fl) = (filter_action.get(), filter_label.get());
        let d = data.get();
        results
            .get()
            .into_iter()
            .flat_map(|(id, list)| {
                let model = d
                    .get(&id)
                    .and_then(|v| v["spec"]["model"].as_str())
                    .unwrap_or("")
                    .to_string();
                list.into_iter().map(move |r| (model.clone(), r))
            })
            .filter(|(_, r)| fa.is_empty() || r["action"] == fa.as_str())
            .filter(|(_, r)| fl.is_empty() || r["label"].as_str().unwrap_or("ProviderError") == fl)
            .map(|(model, r)| {
                let label = r["label"].as_str().unwrap_or("ProviderError").to_string();
                let shown_label = label.clone();
                let md = r["verdict"]["max_dist"].as_f64().map_or("—".into(), |d| format!("{d:.4}"));
                let open_model = model.clone();
                let row = r.clone();
                view! {
                    <tr data-label=label>
                        <td>{model}</td>
                        <td>{r["task_id"].as_str().unwrap_or("").to_string()}</td>
                        <td>{r["action"].as_str().unwrap_or("").to_string()}</td>
                        <td>{shown_label}</td>
                        <td>{md}</td>
                        <td class="detail">{r["verdict"]["detail"].as_str().or(r["error"].as_str()).unwrap_or("").to_string()}</td>
                        <td><a class="open-case" href="#" title="open this task and answer in the playground" on:click=move |e: leptos::ev::MouseEvent| {
                            e.prevent_default();
                            if let (Some(link), Some(w)) = (case_link(&row, &open_model), web_sys::window()) {
                                let _ = w.location().set_href(&link);
                            }
                        }>"open"</a></td>
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
                    <span>"Models (one run each; ctrl-click for several)"</span>
                    <select id="run-model" multiple size="3" on:change=move |ev| {
                        let Some(select) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) else { return };
                        let options = select.selected_options();
                        let names = (0..options.length())
                            .filter_map(|i| options.item(i))
                            .filter_map(|o| o.dyn_into::<web_sys::HtmlOptionElement>().ok())
                            .map(|o| o.value())
                            .collect();
                        chosen.set(names);
                    }>
                        {move || match models.get() {
                            Some(Ok(list)) => list
                                .into_iter()
                                .map(|m| {
                                    let label = if m.baseline { format!("{} (baseline)", m.name) } else { m.name.clone() };
                                    let selected = chosen.with_untracked(|c| c.contains(&m.name));
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
                <label class="field narrow"><span>"Concurrency"</span>
                    <input id="run-concurrency" type="number" min="1" max="32" prop:value=move || concurrency.get().to_string()
                        on:change=move |ev| if let Ok(v) = event_target_value(&ev).parse() { concurrency.set(v) } />
                </label>
                <button id="start-run" on:click=start>"Start"</button>
            </div>
            <div class="row">
                <label class="field">
                    <span>"…or open an earlier run"</span>
                    <select id="earlier-runs" on:change=move |ev| {
                        let id = event_target_value(&ev);
                        if !id.is_empty() {
                            show(vec![id]);
                        }
                    }>
                        <option value="">"—"</option>
                        {move || earlier.get().and_then(|r| r.ok()).map(|v| {
                            v["runs"].as_array().cloned().unwrap_or_default().into_iter().map(|r| {
                                let id = r["id"].as_str().unwrap_or("").to_string();
                                let text = format!("{id} · {} · {}", r["spec"]["model"].as_str().unwrap_or(""), r["status"].as_str().unwrap_or(""));
                                view! { <option value=id>{text}</option> }
                            }).collect_view()
                        })}
                    </select>
                </label>
            </div>
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
            <div id="run-progress" class="muted">{progress}</div>
            {charts}
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
                <thead><tr><th>"model"</th><th>"task"</th><th>"action"</th><th>"verdict"</th><th>"max_dist"</th><th>"detail"</th><th></th></tr></thead>
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
