//! The human-scoring page (`/human?run=<id>`): a person scores an AlchemyBench run's
//! predicted recipes 1–5 on the judge's eight criteria, next to the judge's scores; every
//! score is saved on the server at once; the page shows how the person agrees with the judge
//! (Pearson and Spearman with their p-values per criterion over what was scored) and exports
//! a CSV.

use std::collections::BTreeMap;

use benchmarks::alchemy::judge::KEYS;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wire::{CriterionAgreement, HumanScore, HumanScores, ResultRow, Results, RunList};

/// The run named in the address (`?run=<id>`), if any.
fn run_in_address() -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix("run=").map(str::to_string))
        .filter(|s| !s.is_empty())
}

/// Where this browser keeps the scorer's name.
const SCORER_KEY: &str = "atomworld.scorer";

/// The scorer's name remembered in this browser ("" if none).
fn remembered_scorer() -> String {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(SCORER_KEY).ok().flatten())
        .unwrap_or_default()
}

fn remember_scorer(name: &str) {
    if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = s.set_item(SCORER_KEY, name);
    }
}

/// The CSV export of `run`'s scores by `scorer` (the unnamed scorer's without a query).
fn csv_link(run: &str, scorer: &str) -> String {
    if scorer.is_empty() {
        format!("/api/runs/{run}/human-scores.csv")
    } else {
        format!(
            "/api/runs/{run}/human-scores.csv?scorer={}",
            crate::api::url_segment(scorer)
        )
    }
}

/// A criterion's short heading.
fn heading(key: &str) -> String {
    key.trim_end_matches("_score").replace('_', " ")
}

/// The page.
#[component]
pub fn Human() -> impl IntoView {
    // Runs of the suites whose answers people score (AlchemyBench's).
    let runs = LocalResource::new(|| async {
        let scored: Vec<String> = crate::api::suites()
            .await?
            .into_iter()
            .filter(|s| s.human_scored)
            .map(|s| s.name)
            .collect();
        // Each such suite's newest runs, newest first.
        let mut runs = Vec::new();
        for suite in &scored {
            let url = format!(
                "/api/runs?suite={}&limit=500",
                crate::api::url_segment(suite)
            );
            runs.extend(crate::api::get::<RunList>(&url).await?.runs);
        }
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        Ok::<_, String>(runs)
    });
    let run = RwSignal::new(run_in_address().unwrap_or_default());
    let results = LocalResource::new(move || {
        let id = run.get();
        async move {
            if id.is_empty() {
                return Ok(Vec::new());
            }
            crate::api::get::<Results>(&format!("/api/runs/{id}/results"))
                .await
                .map(|r| r.results)
        }
    });
    let scores = RwSignal::new(None::<HumanScores>);
    let error = RwSignal::new(None::<String>);
    // Who scores: several people may score the same run, each under their name.
    let scorer = RwSignal::new(remembered_scorer());
    Effect::new(move |_| {
        let id = run.get();
        let who = scorer.get();
        scores.set(None);
        if id.is_empty() {
            return;
        }
        spawn_local(async move {
            let url = format!(
                "/api/runs/{id}/human-scores?scorer={}",
                crate::api::url_segment(&who)
            );
            match crate::api::get::<HumanScores>(&url).await {
                Ok(s) => scores.set(Some(s)),
                Err(e) => error.set(Some(e)),
            }
        });
    });
    // The person's score of (task, sample, criterion).
    let given = move || -> BTreeMap<(String, u32, String), f64> {
        scores
            .get()
            .map(|s| {
                s.scores
                    .into_iter()
                    .filter_map(|h| Some(((h.task_id, h.sample, h.criterion), h.score?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Each choice follows the saved scores by itself, so saving one score never redraws
    // the recipes (a keyboard user keeps their place).
    let given = Memo::new(move |_| given());
    let save = move |task_id: String, sample: u32, criterion: String, value: String| {
        let score = value.parse::<f64>().ok();
        let id = run.get_untracked();
        spawn_local(async move {
            let body = HumanScore {
                task_id,
                sample,
                criterion,
                score,
                scorer: scorer.get_untracked(),
            };
            match crate::api::put_human_score(&id, &body).await {
                Ok(s) => {
                    error.set(None);
                    scores.set(Some(s));
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };
    view! {
        <div class="panel human" id="human-page">
            <h2>"Score recipes yourself"</h2>
            <p class="muted">
                "Give each predicted synthesis recipe your own 1–5 score on the judge's "
                "criteria. Scores are saved as you choose them; the table below compares them "
                "with the judge's over the recipes you scored."
            </p>
            <label class="field wide">
                <span>"AlchemyBench run"</span>
                <select id="human-run" on:change=move |e| run.set(event_target_value(&e))>
                    <option value="" selected=move || run.get().is_empty()>"Choose a run…"</option>
                    {move || runs.get().and_then(|r| r.ok()).map(|list| list.into_iter().map(|r| {
                        let selected = r.id == run.get_untracked();
                        let label = format!("{} · {} · {:?}", r.id, r.model, r.status);
                        view! { <option value=r.id.clone() selected=selected>{label}</option> }
                    }).collect_view())}
                </select>
            </label>
            {move || runs.get().and_then(|r| r.ok()).filter(|l| l.is_empty()).map(|_| view! {
                <p class="notice" id="human-no-runs">
                    "No run of a suite that people score yet. Start one on "<a href="/runs">"Runs"</a>
                    " (choose the suite, then a model or its reference baseline) or with "
                    <code>"atomworld run --suite NAME"</code>"; it appears here to score."
                </p>
            })}
            <label class="field">
                <span>"Your name (each person's scores are kept apart)"</span>
                <input id="human-scorer" type="text" maxlength="40" placeholder="unnamed"
                    prop:value=move || scorer.get()
                    on:change=move |e| {
                        let name = event_target_value(&e).trim().to_string();
                        remember_scorer(&name);
                        scorer.set(name);
                    } />
            </label>
            {move || error.get().map(|e| view! { <p class="error" id="human-error">{e}</p> })}
            {move || {
                let id = run.get();
                (!id.is_empty()).then(|| view! {
                    <p><a id="human-csv" href=csv_link(&id, &scorer.get()) download="human-scores.csv">"Export CSV"</a></p>
                })
            }}
            <Agreement rows=Signal::derive(move || scores.get().map(|s| s.agreement).unwrap_or_default()) />
            <Consensus scores=Signal::derive(move || scores.get()) />
            <div class="human-recipes" id="human-table">
                {move || {
                    let model = runs.get().and_then(|r| r.ok()).and_then(|list| {
                        list.into_iter().find(|r| r.id == run.get()).map(|r| r.model)
                    }).unwrap_or_default();
                    results.get().and_then(|r| r.ok()).unwrap_or_default().into_iter().map(|r: ResultRow| {
                        view! { <RecipeCard row=r model=model.clone() given=given save=save /> }
                    }).collect_view()
                }}
            </div>
        </div>
    }
}

/// A task's text field (the recipe's target, reference recipe or title), "" if absent.
fn task_text(row: &ResultRow, field: &str) -> String {
    row.task
        .as_ref()
        .and_then(|t| t.get(field)?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// One recipe to score: what was asked (the target's key contributions), the model's
/// prediction and the reference recipe side by side, then the eight criteria, each with the
/// judge's score beside the person's choice.
#[component]
fn RecipeCard(
    row: ResultRow,
    model: String,
    given: Memo<BTreeMap<(String, u32, String), f64>>,
    save: impl Fn(String, u32, String, String) + Copy + 'static,
) -> impl IntoView {
    let judge = row
        .verdict
        .as_ref()
        .and_then(|v| serde_json::to_value(v).ok());
    let title = task_text(&row, "title");
    let heading_text = if title.is_empty() {
        row.task_id.clone()
    } else {
        format!("{} · {title}", row.task_id)
    };
    let prediction = match (&row.response, &row.error) {
        (Some(text), _) => text.clone(),
        (None, Some(e)) => format!("(no prediction: the call failed: {e})"),
        (None, None) => "(no prediction)".to_string(),
    };
    let criteria = KEYS
        .iter()
        .map(|k| {
            let judge_score = judge
                .as_ref()
                .and_then(|v| v.get("scores")?.get(*k)?.as_f64())
                .map_or("—".to_string(), |s| format!("{s}"));
            let place = (row.task_id.clone(), row.sample, k.to_string());
            // The saved score (None: not scored), followed by each option's selectedness.
            let mine = Memo::new(move |_| given.with(|g| g.get(&place).copied()));
            let (task_id, sample, key) = (row.task_id.clone(), row.sample, k.to_string());
            view! {
                <label class="criterion">
                    <span class="criterion-name">{heading(k)}</span>
                    <span class="judge" title="the judge's score">{judge_score}</span>
                    <select class="mine" data-task=row.task_id.clone() data-criterion=*k
                        on:change=move |e| save(task_id.clone(), sample, key.clone(), event_target_value(&e))>
                        <option value="" prop:selected=move || mine.get().is_none()>"—"</option>
                        {(2..=10).map(|h| {
                            let v = h as f64 / 2.0;
                            view! { <option value=v.to_string() prop:selected=move || mine.get() == Some(v)>{v.to_string()}</option> }
                        }).collect_view()}
                    </select>
                </label>
            }
        })
        .collect_view();
    view! {
        <section class="human-recipe" data-task=row.task_id.clone()>
            <h3>{heading_text}</h3>
            <div class="recipe-texts">
                <article class="recipe-target">
                    <h4>"Target (the key contributions the model was given)"</h4>
                    <pre tabindex="0">{task_text(&row, "contribution")}</pre>
                </article>
                <article class="recipe-prediction">
                    <h4>{if model.is_empty() { "Predicted recipe".to_string() } else { format!("Predicted recipe ({model})") }}</h4>
                    <pre tabindex="0">{prediction}</pre>
                </article>
                <article class="recipe-reference">
                    <h4>"Reference recipe (from the paper)"</h4>
                    <pre tabindex="0">{task_text(&row, "recipe")}</pre>
                </article>
            </div>
            <div class="recipe-scores">
                <span class="small muted">"Your score (1–5) on each criterion; the judge's beside it in grey."</span>
                {criteria}
            </div>
        </section>
    }
}

/// How the people who scored this run agree among themselves, once there are two.
#[component]
fn Consensus(scores: Signal<Option<HumanScores>>) -> impl IntoView {
    move || {
        let s = scores.get()?;
        (s.scorers.len() >= 2).then(|| {
            let who = s
                .scorers
                .iter()
                .map(|(n, c)| format!("{} ({c})", if n.is_empty() { "unnamed" } else { n }))
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <h3>"Agreement among the people"</h3>
                <p class="small muted">{format!("Scored by {who}. ICC(3,k) over the recipes every one of them scored, as AlchemyBench reports its experts' agreement.")}</p>
                <table class="agreement" id="human-consensus">
                    <thead><tr><th>"Criterion"</th><th>"people"</th><th>"recipes"</th><th>"ICC(3,k)"</th></tr></thead>
                    <tbody>
                        {s.consensus.into_iter().map(|c| view! {
                            <tr data-criterion=c.criterion.clone()>
                                <td>{heading(&c.criterion)}</td>
                                <td>{c.raters}</td>
                                <td>{c.items}</td>
                                <td class="icc">{c.icc3k.map_or("—".to_string(), |v| format!("{v:.3}"))}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }
        })
    }
}

/// The agreement per criterion.
#[component]
fn Agreement(rows: Signal<Vec<CriterionAgreement>>) -> impl IntoView {
    let num = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.3}"));
    // Two-sided p-values (Student's t, as scipy), in the papers' style.
    let p = |x: Option<f64>| {
        x.map_or("—".to_string(), |v| {
            if v < 0.001 {
                "< 0.001".to_string()
            } else {
                format!("{v:.3}")
            }
        })
    };
    view! {
        <table class="agreement" id="human-agreement">
            <thead><tr><th>"Criterion"</th><th>"scored"</th><th>"Pearson r"</th><th>"p"</th><th>"Spearman ρ"</th><th>"p"</th></tr></thead>
            <tbody>
                {move || rows.get().into_iter().map(|a| view! {
                    <tr data-criterion=a.criterion.clone()>
                        <td>{heading(&a.criterion)}</td>
                        <td class="n">{a.n}</td>
                        <td class="pearson">{num(a.pearson)}</td>
                        <td class="pearson-p">{p(a.pearson_p)}</td>
                        <td class="spearman">{num(a.spearman)}</td>
                        <td class="spearman-p">{p(a.spearman_p)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
