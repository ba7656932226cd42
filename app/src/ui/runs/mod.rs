//! The Runs page: start benchmark runs on the server (one per chosen model), follow their
//! progress with an ETA, compare them in a bar chart of success rate per group (and, where
//! verdicts have one, a chart of max_dist), read the papers' tables of finished runs with
//! their downloads, and browse every result in a filterable table whose rows open as cases.
//! Runs live on the server and the page keeps their ids in its address, so a reload (or a
//! shared address) shows them again.

mod charts;
mod tables;

use std::collections::{BTreeMap, HashMap};

use benchmarks::atomworld::prompt::split_model_prompt;
use benchmarks::atomworld::{AtomWorldTask, Semantics};
use benchmarks::task::summary::PROVIDER_ERROR;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wire::case::{encode, Case, CaseStructure, CASE_VERSION};
use wire::{ResultRow, Results, RunList, RunStatus, RunView};

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

/// The playground link of one stored result: the task's input, prompt and the answer (rows
/// stored before tasks were kept: taken from the prompt).
fn case_link(result: &ResultRow, model: &str) -> Option<String> {
    let task: Option<AtomWorldTask> = result
        .task
        .as_ref()
        .and_then(|t| serde_json::from_value(t.clone()).ok());
    let (cif, action) = match &task {
        Some(t) => (t.input_cif.as_str(), t.action_prompt.as_str()),
        None => split_model_prompt(&result.prompt)?,
    };
    let case = Case {
        v: CASE_VERSION,
        structure: CaseStructure::Cif {
            cif: cif.to_string(),
        },
        prompt: action.to_string(),
        semantics: Semantics::Reference,
        answer: result.response.clone().unwrap_or_default(),
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
    let models = LocalResource::new(|| {
        crate::ui::status::ServerArrivals::track();
        crate::api::models()
    });
    let suites = LocalResource::new(crate::api::suites);
    let suite = RwSignal::new(benchmarks::task::Registry::DEFAULT.to_string());
    // The chosen suite's descriptor (its baselines, whether it generates its tasks).
    let info = move || {
        suites
            .get()
            .and_then(Result::ok)
            .and_then(|l| l.into_iter().find(|s| s.name == suite.get()))
    };
    let earlier = LocalResource::new(|| crate::api::get::<RunList>("/api/runs"));
    let chosen = RwSignal::new(vec!["reference".to_string()]);
    // The chosen variants of the suite's set (none: its default set).
    let variants = RwSignal::new(Vec::<String>::new());
    let per_action = RwSignal::new(5usize);
    let seed = RwSignal::new(2026u64);
    let concurrency = RwSignal::new(4usize);
    let error = RwSignal::new(None::<String>);
    // The runs shown, in order; what the server says about each; their results.
    let shown = RwSignal::new(Vec::<String>::new());
    let data = RwSignal::new(BTreeMap::<String, RunView>::new());
    let results = RwSignal::new(BTreeMap::<String, Vec<ResultRow>>::new());
    // When the page first saw each run and how far it was then (for the ETA).
    let first_seen = StoredValue::new(HashMap::<String, (f64, usize)>::new());
    let filter_action = RwSignal::new(String::new());
    let filter_label = RwSignal::new(String::new());
    // Whether the Suite selector should follow the first shown run when it arrives (a run
    // opened from the address or the earlier-runs list belongs to the suite it was run on).
    let adopt_suite = StoredValue::new(false);

    // Follow one run until it is no longer running, then load its results.
    let follow = move |id: String| {
        spawn_local(async move {
            loop {
                if !shown.with_untracked(|s| s.contains(&id)) {
                    break;
                }
                match crate::api::get::<RunView>(&format!("/api/runs/{id}")).await {
                    Ok(v) => {
                        let done = !v.status.is_active();
                        let first = shown.with_untracked(|s| s.first() == Some(&id));
                        if first && adopt_suite.get_value() {
                            adopt_suite.set_value(false);
                            if suite.get_untracked() != v.spec.suite {
                                suite.set(v.spec.suite.clone());
                                chosen.set(vec![v.spec.model.clone()]);
                                variants.set(Vec::new());
                            }
                        }
                        let count = v.progress.as_ref().map_or(0, |p| p.done);
                        first_seen.update_value(|m| {
                            m.entry(id.clone()).or_insert((now_ms(), count));
                        });
                        data.update(|d| {
                            d.insert(id.clone(), v);
                        });
                        if done {
                            if let Ok(r) =
                                crate::api::get::<Results>(&format!("/api/runs/{id}/results")).await
                            {
                                results.update(|m| {
                                    m.insert(id.clone(), r.results);
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
                crate::ui::pause::pause(1000).await;
            }
        });
    };
    let show = move |ids: Vec<String>| {
        set_address(&ids);
        data.set(BTreeMap::new());
        results.set(BTreeMap::new());
        shown.set(ids.clone());
        adopt_suite.set_value(true);
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
        let name = suite.get_untracked();
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
        // One run per model and chosen variant (a prompt ablation side by side).
        let mut vs: Vec<Option<String>> = variants.get_untracked().into_iter().map(Some).collect();
        if vs.is_empty() {
            vs.push(None);
        }
        spawn_local(async move {
            let mut ids = Vec::new();
            for m in ms {
                for v in &vs {
                    match crate::api::start_run(&name, &m, (n, s, v.clone()), c).await {
                        Ok(id) => ids.push(id),
                        Err(e) => error.set(Some(format!("{m}: {e}"))),
                    }
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
            .map(|v| (v.spec.model.clone(), v))
            .collect::<Vec<_>>()
    };

    let progress = move || {
        shown_runs()
            .into_iter()
            .enumerate()
            .map(|(k, (model, v))| {
                let id = v.id.clone();
                let s = &v.summary.table;
                let status = v.status.name();
                let n = s.overall.n;
                let (done, total) = v
                    .progress
                    .as_ref()
                    .map_or((n, n), |p| (p.done, p.total));
                let eta = first_seen
                    .with_value(|m| m.get(&id).copied())
                    .filter(|_| v.status == RunStatus::Running)
                    .and_then(|(t0, d0)| {
                        let rate = (done.saturating_sub(d0)) as f64 / ((now_ms() - t0) / 1000.0);
                        (rate > 0.0).then(|| format!(" · ETA {}", duration_text((total - done) as f64 / rate)))
                    })
                    .unwrap_or_default();
                // Embeddings computed to prepare the tasks are part of the run's spend.
                let preparation = match v.summary.preparation_cost_usd {
                    p if p > 0.0 => format!(" + ${p:.4} embeddings"),
                    _ => String::new(),
                };
                let colour = charts::RUN_COLOURS[k % charts::RUN_COLOURS.len()];
                // The suite's own numbers (AtomWorld: how often it is stricter than chemistry).
                let headline = v.summary.headline.as_ref().filter(|h| !h.text.is_empty()).map(|h| view! {
                    <tables::Headline text=h.text.clone() run=id.clone() />
                });
                // A run that ended with work left (failed calls, a cap, a cancel) goes on where
                // it stopped.
                let resumable = !v.status.is_active() && v.status != RunStatus::Finished;
                let resume_id = id.clone();
                let resume = resumable.then(|| view! {
                    <button class="secondary resume-run" data-run=id.clone() on:click=move |_| {
                        let id = resume_id.clone();
                        spawn_local(async move {
                            match crate::api::resume_run(&id).await {
                                Ok(_) => follow(id),
                                Err(e) => error.set(Some(format!("resume {id}: {e}"))),
                            }
                        });
                    }>"Resume"</button>
                });
                // A batched run waits for its provider, maybe for hours: say so, and what the
                // provider said last.
                let batch = v.progress.as_ref().and_then(|p| p.waiting_for_batch.clone()).map(|b| view! {
                    <p class="notice run-batch" data-run=id.clone()>
                        {format!("Waiting for the provider's batch {b}: answers arrive within a day, then they are scored.")}
                    </p>
                });
                // A run of tasks the server does not hold is not a benchmark result.
                let unverified = v.summary.counts.as_ref().and_then(|c| c.unverified_text()).map(|why| view! {
                    <p class="notice run-unverified" data-run=id.clone()>{why}</p>
                });
                view! {
                    <div class="run-line" data-run=id.clone()>
                        <span class="swatch" style=format!("background: {colour}")></span>
                        <progress max=total.max(1) value=done></progress>
                        {format!(
                            " {model} · {id} · {status} · {done}/{total} tasks · success {:.3} · {} tokens · ${:.4}{preparation}{eta}",
                            s.overall.success_rate,
                            s.tokens,
                            s.cost_usd,
                        )}
                        {resume}
                    </div>
                    {batch}
                    {unverified}
                    {headline}
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
                (
                    model.clone(),
                    charts::histogram(r.get(&v.id).map(Vec::as_slice).unwrap_or(&[])),
                )
            })
            .collect();
        // Only verdicts that measure a distance (AtomWorld's) have a max_dist to chart.
        let distances = hist.iter().any(|(_, h)| h.iter().sum::<usize>() > 0);
        Some(view! {
            <h3>"Success rate per group"</h3>
            {charts::success_chart(&runs)}
            {distances.then(|| view! {
                <h3>"max_dist of the successes"</h3>
                {charts::max_dist_chart(&hist)}
            })}
        })
    };

    // The papers' tables, once every shown run has finished and its results are in.
    let paper_tables = move || {
        let ids = shown.get();
        let done = results.with(|r| ids.iter().all(|id| r.contains_key(id)));
        (!ids.is_empty() && done).then(|| view! { <tables::PaperTables ids /> })
    };
    // The distinct values `of` the shown results, sorted (the filters' choices).
    let seen = move |of: fn(&ResultRow) -> Option<String>| {
        results.with(|r| {
            r.values()
                .flatten()
                .filter_map(of)
                .collect::<std::collections::BTreeSet<String>>()
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
                    .map(|v| v.spec.model.clone())
                    .unwrap_or_default();
                list.into_iter().map(move |r| (model.clone(), r))
            })
            .filter(|(_, r)| fa.is_empty() || r.group == fa)
            .filter(|(_, r)| fl.is_empty() || r.label.as_deref().unwrap_or(PROVIDER_ERROR) == fl)
            .map(|(model, r)| {
                let label = r.label.clone().unwrap_or_else(|| PROVIDER_ERROR.to_string());
                let shown_label = label.clone();
                // The suite's own number and reason (rows stored before outcomes were kept: the
                // AtomWorld verdict's).
                let verdict = r.verdict.as_ref().and_then(|v| v.atomworld());
                let md = r
                    .outcome
                    .as_ref()
                    .and_then(|o| o.metric)
                    .or_else(|| verdict.and_then(|v| v.max_dist))
                    .map_or("—".into(), |d| format!("{d:.4}"));
                let detail = r
                    .outcome
                    .as_ref()
                    .and_then(|o| o.why.clone())
                    .or_else(|| verdict.map(|v| v.detail.clone()))
                    .or_else(|| r.error.clone())
                    .unwrap_or_default();
                let rounds = r.transcript.clone();
                let open_model = model.clone();
                let row = r.clone();
                view! {
                    <tr data-label=label>
                        <td>{model}</td>
                        <td>{r.task_id.clone()}</td>
                        <td>{r.group.clone()}</td>
                        <td>{shown_label}</td>
                        <td>{md}</td>
                        <td class="detail">{detail}{rounds.map(|t| view! { <Rounds transcript=t /> })}</td>
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
                    <span>"Suite"</span>
                    <select id="run-suite" prop:value=move || suite.get() on:change=move |ev| {
                        suite.set(event_target_value(&ev));
                        chosen.set(Vec::new());
                        variants.set(Vec::new());
                    }>
                        {move || suites.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|s| {
                            let name = s.name.clone();
                            let label = if s.generates { format!("{} (generated)", s.name) } else { format!("{} ({} tasks)", s.name, s.tasks) };
                            view! { <option value=s.name.clone() selected=move || suite.get() == name>{label}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <label class="field">
                    <span>"Models (one run each; ctrl-click for several)"</span>
                    <select id="run-model" multiple size="3" on:change=move |ev| chosen.set(selected_values(&ev))>
                        {move || match models.get() {
                            Some(Ok(list)) => list
                                .into_iter()
                                // The chosen suite's own baselines only: another suite's would
                                // be refused.
                                .filter(|m| !m.baseline || info().is_some_and(|s| s.baselines.contains(&m.name)))
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
                <Show when=move || info().is_none_or(|s| s.generates)>
                    <label class="field narrow"><span>"Per group"</span>
                        <input id="run-per-action" type="number" min="1" max="500" prop:value=move || per_action.get().to_string()
                            on:change=move |ev| if let Ok(v) = event_target_value(&ev).parse() { per_action.set(v) } />
                    </label>
                    <Show when=move || info().is_some_and(|s| !s.variants.is_empty())>
                        <label class="field">
                            <span>"Variants (one run each; none: the default set)"</span>
                            <select id="run-variant" multiple size="3" on:change=move |ev| variants.set(selected_values(&ev))>
                                {move || info().map(|s| s.variants).unwrap_or_default().into_iter().map(|v| {
                                    let label = format!("{} ({})", v.name, v.condition);
                                    view! { <option value=v.name.clone()>{label}</option> }
                                }).collect_view()}
                            </select>
                        </label>
                    </Show>
                    <label class="field narrow"><span>"Seed"</span>
                        <input id="run-seed" type="number" min="0" prop:value=move || seed.get().to_string()
                            on:change=move |ev| if let Ok(v) = event_target_value(&ev).parse() { seed.set(v) } />
                    </label>
                </Show>
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
                        {move || earlier.get().and_then(|r| r.ok()).map(|list| {
                            list.runs.into_iter().map(|r| {
                                let text = format!("{} · {} · {}", r.id, r.model, r.status.name());
                                view! { <option value=r.id>{text}</option> }
                            }).collect_view()
                        })}
                    </select>
                </label>
            </div>
            {move || matches!(models.get(), Some(Ok(l)) if l.iter().all(|m| m.baseline)).then(|| view! {
                <p class="notice" id="only-baselines">
                    "Only the built-in baselines can run here: no model is configured on this server. "
                    "Start it with --config FILE naming models and their providers (docs/guide/models.md), "
                    "or with OPENAI_BASE_URL and OPENAI_MODEL set."
                </p>
            })}
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
            <div id="run-progress" class="muted">{progress}</div>
            {charts}
            {paper_tables}
            <div class="row">
                <select id="filter-action" on:change=move |ev| filter_action.set(event_target_value(&ev))>
                    <option value="">"every group"</option>
                    {move || seen(|r| Some(r.group.clone())).into_iter().map(|g| view! { <option value=g.clone()>{g.clone()}</option> }).collect_view()}
                </select>
                <select id="filter-label" on:change=move |ev| filter_label.set(event_target_value(&ev))>
                    <option value="">"every verdict"</option>
                    {move || seen(|r| Some(r.label.clone().unwrap_or_else(|| PROVIDER_ERROR.to_string())))
                        .into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                </select>
            </div>
            <table id="results" class="results">
                <thead><tr><th>"model"</th><th>"task"</th><th>"group"</th><th>"verdict"</th><th>"metric"</th><th>"detail"</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// An agent's rounds (MatTools' self-reflection, AtomWorld's programs and tool calls): each
/// round's planning steps (the agentic agent's entities, sub-questions and reranking), its
/// search, what it retrieved, how its code ran (all properties computed, a structure
/// written, or why not), the critique that led to the next round, or the tools it called
/// and what they gave.
#[component]
fn Rounds(transcript: serde_json::Value) -> impl IntoView {
    let rounds = transcript.as_array().cloned().unwrap_or_default();
    let n = rounds.len();
    let text = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    view! {
        <details class="rounds">
            <summary>{format!("{n} agent round{}", if n == 1 { "" } else { "s" })}</summary>
            <ol>
                {rounds.into_iter().map(|r| {
                    let retrieved = r.get("retrieved").and_then(|x| x.as_array()).map_or(0, Vec::len);
                    let run = r.get("run").cloned().unwrap_or_default();
                    // What the run achieved, in the round's own terms.
                    let achieved = match (r.get("complete").and_then(|x| x.as_bool()), r.get("written")) {
                        (Some(true), _) => "every property computed".to_string(),
                        (Some(false), _) => "incomplete".to_string(),
                        (None, Some(w)) if w.is_string() => "wrote a structure".to_string(),
                        _ => text(&r, "error"),
                    };
                    let ran = if run.is_null() {
                        text(&r, "error")
                    } else {
                        let stderr = text(&run, "stderr");
                        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().to_string();
                        format!(
                            "exit {} · {achieved}{}",
                            run.get("exit_code").map_or("-".to_string(), |c| c.to_string()),
                            if last.is_empty() { String::new() } else { format!(" · {last}") }
                        )
                    };
                    let searched = match text(&r, "query") {
                        q if q.is_empty() => text(&r, "search"),
                        q => q.chars().take(120).collect(),
                    };
                    let critique = r.get("critique").map(|c| text(c, "feedback")).unwrap_or_default();
                    // The agentic agent's steps before its generation: what each concluded.
                    let steps: Vec<(String, String)> = r.get("steps").and_then(|s| s.as_array()).map(|steps| {
                        steps.iter().map(|s| {
                            let outcome: Vec<&str> = s.get("outcome").and_then(|o| o.as_array())
                                .map(|o| o.iter().filter_map(|x| x.as_str()).collect())
                                .unwrap_or_default();
                            (text(s, "name"), outcome.join(" · "))
                        }).collect()
                    }).unwrap_or_default();
                    // A turn of tool calls (the engine-tools agent): each call and what it gave.
                    if let Some(calls) = r.get("calls").and_then(|c| c.as_array()) {
                        let lines: Vec<String> = calls.iter().map(|c| {
                            let result: String = text(c, "result").chars().take(120).collect();
                            format!("{}({}) → {result}", text(c, "name"), text(c, "arguments"))
                        }).collect();
                        let reply = text(&r, "reply");
                        return view! {
                            <li class="round">
                                {(!reply.trim().is_empty()).then(|| view! { <div><strong>"said: "</strong>{reply.chars().take(200).collect::<String>()}</div> })}
                                {lines.into_iter().map(|l| view! { <div class="tool-call"><strong>"call: "</strong>{l}</div> }).collect_view()}
                            </li>
                        }.into_any();
                    }
                    view! {
                        <li class="round">
                            {steps.into_iter().map(|(name, outcome)| view! { <div class="step"><strong>{format!("{name}: ")}</strong>{outcome}</div> }).collect_view()}
                            <div><strong>"search: "</strong>{searched}{format!(" ({retrieved} entries)")}</div>
                            {(!ran.is_empty()).then(|| view! { <div><strong>"run: "</strong>{ran}</div> })}
                            {(!critique.is_empty()).then(|| view! { <div><strong>"critique: "</strong>{critique}</div> })}
                        </li>
                    }.into_any()
                }).collect_view()}
            </ol>
        </details>
    }
}

/// The values of the options chosen in the multiple select that sent `ev`.
fn selected_values(ev: &leptos::ev::Event) -> Vec<String> {
    let Some(select) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
    else {
        return Vec::new();
    };
    let options = select.selected_options();
    (0..options.length())
        .filter_map(|i| options.item(i))
        .filter_map(|o| o.dyn_into::<web_sys::HtmlOptionElement>().ok())
        .map(|o| o.value())
        .collect()
}
