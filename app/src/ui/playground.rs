//! The AtomWorld playground: pick a structure and an action, see the exact prompt a model
//! receives and the ground truth next to the input, with the touched sites highlighted.

use bench::atomworld::evaluate::{evaluate, explain_mismatch, parse_target, Comparison};
use bench::atomworld::generator::pool::{pool, PoolEntry};
use bench::atomworld::generator::rng::TaskRng;
use bench::atomworld::generator::sample::sample;
use bench::atomworld::prompt::model_prompt;
use bench::atomworld::{
    apply, parse_prompt, readings_differ, render_prompt, target_of, ActionKind, Applied,
    PromptStyle, Semantics,
};
use bench::case::{Case, CaseStructure, CASE_VERSION};
use engine::cif::{read_cif, write_cif};
use engine::format::Format;
use engine::matcher::displacement::correspondence;
use engine::symmetry::{space_group, DEFAULT_SYMPREC};
use engine::Structure;
use leptos::prelude::*;

use super::action_form::ActionForm;
use super::ask::AskModel;
use super::canvas::StructureCanvas;
use super::edit_panel::EditRequest;
use super::structure_file::{dropped_file, read_any, ExportLinks};
use crate::viewer::Overlay;

/// The structure shown first: rock salt, the crystal everyone knows.
const DEFAULT_STRUCTURE: &str = "Halite";

/// Largest structure whose space group the page computes: the search runs on the main
/// thread and takes ~0.3 s natively at 3,000 sites, ~4 s at 10,000 (moyo, measured 2026-11).
const MAX_SYMMETRY_SITES: usize = 2000;

/// Largest target matched automatically as the answer changes (see `requested_for`).
const MAX_AUTO_MATCH_SITES: usize = 128;

/// Largest target the answer overlay is drawn for (relating the two site orders is quadratic).
const MAX_OVERLAY_SITES: usize = 2000;

/// Where the input structure comes from.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    /// A pool entry, by index.
    Pool(usize),
    /// A structure file the user pasted or dropped, and its format.
    Pasted(Structure, Format),
    /// The result of hand edits in the input viewer.
    Edited(Structure),
}

fn summary(e: &PoolEntry) -> String {
    format!("{} — {} ({} sites)", e.name, e.formula, e.structure.len())
}

/// The playground page.
#[component]
pub fn Playground(
    /// The case to open (from a `#case=` link or the server's case store).
    shared: Option<Case>,
    /// Why a shared case could not be opened, if one was asked for.
    shared_error: Option<String>,
) -> impl IntoView {
    let entries = StoredValue::new(pool());
    let default = entries.with_value(|p| {
        p.iter()
            .position(|e| e.name.starts_with(DEFAULT_STRUCTURE))
            .unwrap_or(0)
    });
    // A shared case decides the initial state.
    let initial_source = match shared.as_ref().map(|c| &c.structure) {
        Some(CaseStructure::Pool { name }) => entries
            .with_value(|p| p.iter().position(|e| &e.name == name))
            .map(Source::Pool),
        Some(CaseStructure::Cif { cif }) => {
            read_cif(cif).ok().map(|s| Source::Pasted(s, Format::Cif))
        }
        None => None,
    };
    let source = RwSignal::new(initial_source.unwrap_or(Source::Pool(default)));
    let pending_prompt = StoredValue::new(shared.as_ref().map(|c| c.prompt.clone()));
    let share_error = RwSignal::new(shared_error);
    let search = RwSignal::new(String::new());
    let pasted = RwSignal::new(String::new());
    let paste_error = RwSignal::new(None::<String>);
    let kind = RwSignal::new(ActionKind::Move);
    let seed = RwSignal::new(shared.as_ref().and_then(|c| c.seed).unwrap_or(1));
    let prompt = RwSignal::new(String::new());
    let prompt_form_error = RwSignal::new(None::<String>);
    let semantics = RwSignal::new(shared.as_ref().map(|c| c.semantics).unwrap_or_default());

    // The model sees CIF text; act on what that text says (8 decimals).
    let cif_of = move |source: &Source| match source {
        Source::Pool(i) => entries.with_value(|p| p.get(*i).map(|e| write_cif(&e.structure))),
        Source::Pasted(s, _) | Source::Edited(s) => Some(write_cif(s)),
    };
    let input_cif = Memo::new(move |_| source.with(cif_of));
    let input = Memo::new(move |_| input_cif.get().and_then(|c| read_cif(&c).ok()));
    let input_name = Memo::new(move |_| match source.get() {
        Source::Pool(i) => entries.with_value(|p| p.get(i).map(summary).unwrap_or_default()),
        Source::Pasted(s, f) => format!("pasted {} ({} sites)", f.name(), s.len()),
        Source::Edited(s) => format!("edited by hand ({} sites)", s.len()),
    });

    // Hand edits in the input viewer, with undo and redo. The edit is one of the benchmark's
    // own actions; the task's prompt is kept (its indices may now name other atoms: that is
    // the user's experiment).
    let history = StoredValue::new((Vec::<Source>::new(), Vec::<Source>::new()));
    let edit_error = RwSignal::new(None::<String>);
    let replace_source = move |next: Source| {
        // The input changes only when the CIF does; only then would the prompt be redrawn.
        if cif_of(&next) != input_cif.get_untracked() {
            pending_prompt.set_value(Some(prompt.get_untracked()));
        }
        source.set(next);
    };
    let on_edit = Callback::new(move |request: EditRequest| {
        edit_error.set(None);
        match request {
            EditRequest::Apply(action) => {
                let Some(s) = input.get_untracked() else {
                    return;
                };
                match apply(&s, &action, Semantics::Reference) {
                    Ok(done) => {
                        history.update_value(|(undo, redo)| {
                            undo.push(source.get_untracked());
                            redo.clear();
                        });
                        replace_source(Source::Edited(done.structure));
                    }
                    Err(e) => edit_error.set(Some(format!("cannot edit: {e}"))),
                }
            }
            EditRequest::Undo | EditRequest::Redo => {
                let undoing = request == EditRequest::Undo;
                let current = source.get_untracked();
                let previous = history.try_update_value(|(undo, redo)| {
                    let (from, to) = if undoing { (undo, redo) } else { (redo, undo) };
                    let previous = from.pop()?;
                    to.push(current);
                    Some(previous)
                });
                match previous.flatten() {
                    Some(p) => replace_source(p),
                    None => edit_error.set(Some(format!(
                        "nothing to {}",
                        if undoing { "undo" } else { "redo" }
                    ))),
                }
            }
        }
    });

    // Draw a random action of the chosen kind with the shown seed.
    let randomise = move || {
        let Some(s) = input.get_untracked() else {
            return;
        };
        let k = kind.get_untracked();
        let mut rng = TaskRng::new(seed.get_untracked(), k as u32, 0);
        let text = sample(k, &s, &mut rng)
            .and_then(|a| render_prompt(&a, PromptStyle::default(), &s).ok())
            .unwrap_or_else(|| format!("(no {} task is possible for this structure)", k.name()));
        prompt.set(text);
    };
    // A first task on load, and a fresh one whenever the structure or the action changes.
    Effect::new(move |_| {
        input.track();
        kind.track();
        match pending_prompt.try_update_value(|p| p.take()).flatten() {
            Some(p) => prompt.set(p),
            None => randomise(),
        }
    });

    let parsed = Memo::new(move |_| {
        let s = input.get()?;
        Some(parse_prompt(&prompt.get(), &s).map_err(|e| e.to_string()))
    });
    // The target and its CIF, as the benchmark computes them (`target_of`), under the reading
    // chosen on the page.
    let applied = Memo::new(move |_| {
        let s = input.get()?;
        let action = parsed.get()?.ok()?;
        Some(target_of(&s, &action, semantics.get()).map_err(|e| e.to_string()))
    });
    let differ = Memo::new(move |_| {
        let s = input.get()?;
        let action = parsed.get()?.ok()?;
        readings_differ(&s, &action).ok()
    });
    let target =
        Signal::derive(move || applied.get().and_then(|r| r.ok()).map(|(a, _)| a.structure));
    let touched = move |f: fn(&Applied) -> Vec<usize>| {
        Signal::derive(move || {
            applied
                .get()
                .and_then(|r| r.ok())
                .map(|(a, _)| f(&a))
                .unwrap_or_default()
        })
    };
    let touched_in = touched(|a| a.touched.input.clone());
    let touched_out = touched(|a| a.touched.output.clone());
    let full_prompt =
        Memo::new(move |_| input_cif.get().map(|cif| model_prompt(&cif, &prompt.get())));
    let target_cif = Memo::new(move |_| applied.get().and_then(|r| r.ok()).map(|(_, cif)| cif));
    let answer = RwSignal::new(
        shared
            .as_ref()
            .map(|c| c.answer.clone())
            .unwrap_or_default(),
    );
    let answered_by = RwSignal::new(shared.as_ref().and_then(|c| c.model.clone()));
    let share_link = RwSignal::new(None::<String>);
    let current_case = move || {
        let structure = match source.get_untracked() {
            Source::Pool(i) => entries.with_value(|p| {
                p.get(i).map(|e| CaseStructure::Pool {
                    name: e.name.clone(),
                })
            }),
            Source::Pasted(..) | Source::Edited(_) => input_cif
                .get_untracked()
                .map(|cif| CaseStructure::Cif { cif }),
        };
        Some(Case {
            v: CASE_VERSION,
            structure: structure?,
            prompt: prompt.get_untracked(),
            semantics: semantics.get_untracked(),
            answer: answer.get_untracked(),
            model: answered_by.get_untracked(),
            seed: Some(seed.get_untracked()),
        })
    };
    let make_link = move |_| {
        if let Some(case) = current_case() {
            share_link.set(crate::share::publish(&case));
        }
    };
    // A short link: the case kept by the server (for large cases, or short URLs).
    let make_short_link = move |_| {
        let Some(case) = current_case() else { return };
        leptos::task::spawn_local(async move {
            match crate::api::put_case(&case).await {
                Ok(id) => {
                    share_error.set(None);
                    share_link.set(crate::share::short_link(&id));
                }
                Err(e) => share_error.set(Some(format!("no short link: {e}"))),
            }
        });
    };
    // Matching a large target against an answer that is not an exact copy runs on the page's
    // one thread and can take long (a 512-site supercell with one atom moved: 19 s natively,
    // measured 2026-11), so above MAX_AUTO_MATCH_SITES the page waits for a click and never
    // re-matches on every keystroke.
    let requested_for = RwSignal::new(None::<String>);
    let large_target = Memo::new(move |_| {
        target.with(|t| t.as_ref().map_or(0, |t| t.len())) > MAX_AUTO_MATCH_SITES
    });
    // The target as the evaluator reads it: parsed once per task, for the verdict and the overlay.
    let parsed_target = Memo::new(move |_| parse_target(&target_cif.get()?).ok());
    let verdict = Memo::new(move |_| {
        let text = answer.get();
        if text.trim().is_empty() {
            return None;
        }
        let comparison = parsed
            .get()
            .and_then(|r| r.ok())
            .map_or(Comparison::Matcher, |a| a.kind().comparison());
        if comparison == Comparison::Matcher
            && large_target.get()
            && requested_for.with(|r| r.as_deref() != Some(text.as_str()))
        {
            return None;
        }
        // A mismatch without a fit is explained by the closest (smallest-RMS) match: its
        // numbers in the verdict and its pairing in the overlay.
        parsed_target.with(|t| {
            t.as_ref().map(|t| {
                let mut v = evaluate(t, &text, comparison);
                if comparison == Comparison::Matcher {
                    explain_mismatch(t, &mut v);
                }
                v
            })
        })
    });

    let filtered = move || {
        let q = search.get().to_lowercase();
        entries.with_value(|p| {
            p.iter()
                .enumerate()
                .filter(|(_, e)| {
                    q.is_empty()
                        || e.name.to_lowercase().contains(&q)
                        || e.formula.to_lowercase().contains(&q)
                })
                .map(|(i, e)| (i, summary(e)))
                .collect::<Vec<_>>()
        })
    };

    let load = move |name: Option<&str>, text: &str| match read_any(name, text) {
        Ok((s, f)) => {
            paste_error.set(None);
            source.set(Source::Pasted(s, f));
        }
        Err(e) => paste_error.set(Some(e.to_string())),
    };
    let use_pasted = move |_| load(None, &pasted.get_untracked());
    let on_drop = move |e: leptos::ev::DragEvent| {
        e.prevent_default();
        leptos::task::spawn_local(async move {
            match dropped_file(&e).await {
                Some((name, text)) => {
                    pasted.set(text.clone());
                    load(Some(&name), &text);
                }
                None => {
                    paste_error.set(Some("the dropped item is not a readable text file".into()))
                }
            }
        });
    };
    // The answer over the target: the matcher's pairing as one vector per target site. The
    // matcher indexes sites in pymatgen's parsed order; the picture (and every prompt) in
    // CIF row order, so the vectors are carried over by position.
    let show_overlay = RwSignal::new(false);
    let overlay_data = Memo::new(move |_| {
        let comparison = parsed
            .get()
            .and_then(|r| r.ok())
            .map(|a| a.kind().comparison());
        if comparison == Some(Comparison::Ordered) {
            return None; // site-by-site metric: no matcher pairing to draw
        }
        let v = verdict.get()?;
        let by_parsed = v.displacements.as_ref()?;
        let rows = target.get()?;
        if rows.len() > MAX_OVERLAY_SITES {
            return None;
        }
        let t = parsed_target.get()?;
        // 1e-3: the parser snaps coordinates near 1/3 and 2/3 (by up to 1e-4); sites closer than
        // that would be ambiguous, and then no overlay is drawn.
        let order = correspondence(&t.structure, &rows, 1e-3)?;
        let displacements = order
            .into_iter()
            .map(|i| by_parsed.get(i).copied())
            .collect::<Option<Vec<_>>>()?;
        Some(Overlay {
            displacements,
            pairing: if v.closest.is_some() {
                "the closest match paired with it (no fit; common shift removed)"
            } else {
                "the matcher paired with it (common shift removed)"
            },
        })
    });
    let overlay = Signal::derive(move || show_overlay.get().then(|| overlay_data.get()).flatten());

    // Shown next to the input's name; display only (no verdict depends on it).
    let symmetry = Memo::new(move |_| {
        input.get().map(|s| {
            if s.len() > MAX_SYMMETRY_SITES {
                return format!("space group not computed above {MAX_SYMMETRY_SITES} sites");
            }
            match space_group(&s, DEFAULT_SYMPREC) {
                Ok(g) => format!("{} ({})", g.symbol, g.number),
                Err(_) => "space group unknown".to_string(),
            }
        })
    });

    let copy_prompt = move |_| {
        if let (Some(w), Some(text)) = (web_sys::window(), full_prompt.get_untracked()) {
            let _ = w.navigator().clipboard().write_text(&text);
        }
    };

    view! {
        <section class="playground">
            <div class="panel controls">
                <label class="field">
                    <span>"Structure"</span>
                    <input
                        id="structure-search"
                        type="search"
                        placeholder="search the mineral pool by name or formula"
                        prop:value=move || search.get()
                        on:input=move |ev| search.set(event_target_value(&ev))
                    />
                </label>
                <select
                    id="structure-select"
                    size="6"
                    on:change=move |ev| {
                        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                            source.set(Source::Pool(i));
                        }
                    }
                >
                    {move || {
                        let current = source.get();
                        filtered()
                            .into_iter()
                            .map(|(i, label)| {
                                let selected = current == Source::Pool(i);
                                view! { <option value=i.to_string() selected=selected>{label}</option> }
                            })
                            .collect_view()
                    }}
                </select>
                <details class="paste">
                    <summary>"…or paste or drop a file (CIF, POSCAR, extended XYZ, pymatgen JSON)"</summary>
                    <textarea
                        id="cif-paste"
                        rows="8"
                        placeholder="CIF, POSCAR, extended XYZ or pymatgen JSON text, or drop a file here"
                        on:dragover=move |e: leptos::ev::DragEvent| e.prevent_default()
                        on:drop=on_drop
                        prop:value=move || pasted.get()
                        on:input=move |ev| pasted.set(event_target_value(&ev))
                    ></textarea>
                    <button id="use-pasted" on:click=use_pasted>"Use this structure"</button>
                    {move || paste_error.get().map(|e| view! { <p class="error" id="paste-error">{e}</p> })}
                </details>

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
                                    randomise();
                                }
                            }
                        />
                    </label>
                    <button id="random" on:click=move |_| {
                        seed.update(|s| *s = s.wrapping_add(1));
                        randomise();
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
                    on_change=Callback::new(move |a: bench::atomworld::Action| {
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
            </div>

            <div class="views">
                <div class="view">
                    <h2>"Input " <span class="muted" id="input-name">{move || input_name.get()}</span>
                        " " <span class="muted small" id="space-group" title="space group (symprec 0.01 Å, angle tolerance 5°, as pymatgen's SpacegroupAnalyzer)">{move || symmetry.get()}</span></h2>
                    <StructureCanvas structure=input highlight=touched_in id="viewer" on_edit=on_edit />
                    {move || edit_error.get().map(|e| view! { <p class="error small" id="edit-error">{e}</p> })}
                    <ExportLinks structure=input stem="input" />
                </div>
                <div class="view">
                    <h2>"Target " <span class="muted">
                        {move || match (semantics.get(), target.get()) {
                            (_, None) => "(no valid action)".to_string(),
                            (Semantics::Reference, Some(t)) => format!("ground truth, {} sites", t.len()),
                            (Semantics::Physical, Some(t)) => format!("physical reading, {} sites", t.len()),
                        }}
                    </span></h2>
                    <StructureCanvas structure=target highlight=touched_out id="viewer-target" overlay=overlay />
                    <label class="labels-toggle" title="draw the answer's sites over the target, paired as the matcher paired them">
                        <input
                            type="checkbox"
                            id="overlay-toggle"
                            prop:checked=move || show_overlay.get()
                            disabled=move || overlay_data.get().is_none()
                            on:change=move |e| show_overlay.set(event_target_checked(&e))
                        />
                        " answer over target"
                        {move || overlay_data.get().is_none().then(|| view! { <span class="muted"> " (needs an answer the matcher pairs with the target)"</span> })}
                    </label>
                    <ExportLinks structure=target stem="target" />
                </div>
            </div>
            <div class="panel answer">
                <h2>"Answer"</h2>
                <div class="row buttons">
                    <AskModel prompt=Signal::derive(move || full_prompt.get()) answer=answer answered_by=answered_by />
                    <button id="paste-truth" on:click=move |_| {
                        answer.set(format!("<cif>\n{}\n</cif>", target_cif.get_untracked().unwrap_or_default()));
                    }>"Paste the ground truth"</button>
                    <button id="paste-input" on:click=move |_| {
                        answer.set(format!("<cif>\n{}\n</cif>", input_cif.get_untracked().unwrap_or_default()));
                    }>"Paste the input unchanged"</button>
                    <button class="secondary" on:click=move |_| answer.set(String::new())>"Clear"</button>
                </div>
                <textarea
                    id="answer"
                    rows="8"
                    placeholder="Paste a model's full answer here; the CIF between the last <cif> and </cif> is scored."
                    prop:value=move || answer.get()
                    on:input=move |ev| answer.set(event_target_value(&ev))
                ></textarea>
                {move || verdict.get().map(|v| view! { <super::verdict::VerdictView verdict=v /> })}
                {move || (verdict.get().is_none() && large_target.get() && !answer.with(|a| a.trim().is_empty())).then(|| {
                    let n = target.with(|t| t.as_ref().map_or(0, |t| t.len()));
                    view! {
                        <p class="notice" id="large-target">
                            {format!("The target has {n} sites: matching an answer against it can take a while, so it waits for you. ")}
                            <button id="evaluate-large" on:click=move |_| requested_for.set(Some(answer.get_untracked()))>"Evaluate"</button>
                        </p>
                    }
                })}
                <div class="row buttons">
                    <button id="share" class="secondary" on:click=make_link title="the whole case in the link: works on any host">"Share link"</button>
                    <button id="short-link" class="secondary" on:click=make_short_link title="the case kept by this server under a short id">"Short link"</button>
                    {move || share_link.get().map(|l| view! { <input id="share-link" readonly prop:value=l /> })}
                </div>
                {move || share_error.get().map(|e| view! { <p class="error" id="share-error">{e}</p> })}
            </div>
            <p class="muted frame-note">
                "Cartesian frame of every prompt: a along x, b in the xy-plane. Site indices start at 0. Highlighted: sites the action touched."
            </p>
        </section>
    }
}
