//! The AtomWorld playground: pick a structure and an action, see the exact prompt a model
//! receives and the ground truth next to the input, with the touched sites highlighted.

use benchmarks::atomworld::evaluate::Comparison;
use benchmarks::atomworld::generator::pool::{pool, PoolEntry};
use benchmarks::atomworld::generator::rng::TaskRng;
use benchmarks::atomworld::generator::sample::sample;
use benchmarks::atomworld::prompt::model_prompt;
use benchmarks::atomworld::{
    apply, parse_prompt, readings_differ, render_prompt, target_of, ActionKind, Applied,
    PromptStyle, Semantics,
};
use engine::cif::{read_cif, write_cif};
use engine::format::Format;
use engine::Structure;
use leptos::prelude::*;
use wire::case::{Case, CaseStructure, CASE_VERSION};

mod answer_panel;
mod picker;
mod task_panel;

use answer_panel::AnswerPanel;
use picker::StructurePicker;
use task_panel::TaskPanel;

use super::canvas::StructureCanvas;
use super::edit_panel::EditRequest;
use super::room::RoomSend;
use super::structure_file::{read_any, ExportLinks};
use crate::matching::Worker;
use matcher_worker::{AnswerWork, Scoring, Symmetry, Work};
use viewer::Overlay;

/// Largest structure whose space group the page shows: the search (in the symmetry worker)
/// takes about 0.3 s natively at 3,000 sites and 4 s at 10,000, and the label would lag.
const MAX_SYMMETRY_SITES: usize = 2000;

/// Largest target matched automatically as the answer changes (see `requested_for`).
const MAX_AUTO_MATCH_SITES: usize = 128;

/// Largest target the answer overlay is drawn for (relating the two site orders is quadratic).
const MAX_OVERLAY_SITES: usize = 2000;

/// `s` with the magnetic moments of a pasted magnetic CIF, site by site. The CIF text the
/// model sees leaves moments out (as pymatgen's `CifWriter` does by default), so the
/// structure read back from it has none; the viewers still show them.
fn with_pasted_moments(mut s: Structure, source: &Source) -> Structure {
    if let Source::Pasted(p, ..) = source {
        if p.len() == s.len() && p.sites.iter().any(|x| x.magmom.is_some()) {
            for (site, pasted) in s.sites.iter_mut().zip(&p.sites) {
                site.magmom = pasted.magmom;
            }
        }
    }
    s
}

/// Where the input structure comes from.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    /// A pool entry, by index.
    Pool(usize),
    /// A structure file the user pasted or dropped, its format, and its file name (dropped
    /// files only).
    Pasted(Structure, Format, Option<String>),
    /// The result of hand edits in the input viewer.
    Edited(Structure),
}

/// A file name without its extension (`NaCl.cif` → `NaCl`; `POSCAR` stays).
fn file_stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    }
}

fn summary(e: &PoolEntry) -> String {
    format!(
        "{} — {} ({} sites)",
        e.display_name(),
        e.formula,
        e.structure.len()
    )
}

/// The CIF text the model sees for a source (8 decimals).
fn cif_of_source(
    entries: &StoredValue<Vec<PoolEntry>>,
) -> impl Fn(&Source) -> Option<String> + Copy + 'static {
    let entries = *entries;
    move |source: &Source| match source {
        Source::Pool(i) => entries.with_value(|p| p.get(*i).map(|e| write_cif(&e.structure))),
        Source::Pasted(s, ..) | Source::Edited(s) => Some(write_cif(s)),
    }
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
            .position(|e| e.name == first_view::first::NAME)
            .unwrap_or(0)
    });
    // A shared case decides the initial state.
    let initial_source = match shared.as_ref().map(|c| &c.structure) {
        Some(CaseStructure::Pool { name }) => entries
            .with_value(|p| p.iter().position(|e| &e.name == name))
            .map(Source::Pool),
        Some(CaseStructure::Cif { cif }) => read_cif(cif)
            .ok()
            .map(|s| Source::Pasted(s, Format::Cif, None)),
        None => None,
    };
    let source = RwSignal::new(initial_source.unwrap_or(Source::Pool(default)));
    // A CIF that names a space group but lists no operations is shown as read (P1): say so.
    let symmetry_warning = RwSignal::new(match shared.as_ref().map(|c| &c.structure) {
        Some(CaseStructure::Cif { cif }) => engine::cif::undeclared_symmetry(cif),
        _ => None,
    });
    let pending_prompt = StoredValue::new(shared.as_ref().map(|c| c.prompt.clone()));
    let share_error = RwSignal::new(shared_error);
    let search = RwSignal::new(String::new());
    let pasted = RwSignal::new(String::new());
    let paste_error = RwSignal::new(None::<String>);
    // A shared case's prompt decides the Action selector too, so that Random draws another
    // task of the same action (not of whichever action the page happened to show).
    let shared_kind = shared.as_ref().and_then(|c| {
        let cif = source.with_untracked(cif_of_source(&entries))?;
        let structure = read_cif(&cif).ok()?;
        parse_prompt(&c.prompt, &structure).ok().map(|a| a.kind())
    });
    let kind = RwSignal::new(shared_kind.unwrap_or(ActionKind::Move));
    let seed = RwSignal::new(shared.as_ref().and_then(|c| c.seed).unwrap_or(1));
    let prompt = RwSignal::new(String::new());
    let semantics = RwSignal::new(shared.as_ref().map(|c| c.semantics).unwrap_or_default());

    // The model sees CIF text; act on what that text says (8 decimals).
    let cif_of = cif_of_source(&entries);
    let input_cif = Memo::new(move |_| source.with(cif_of));
    let input = Memo::new(move |_| {
        let s = input_cif.get().and_then(|c| read_cif(&c).ok())?;
        Some(source.with(|src| with_pasted_moments(s, src)))
    });
    let input_name = Memo::new(move |_| match source.get() {
        Source::Pool(i) => entries.with_value(|p| p.get(i).map(summary).unwrap_or_default()),
        Source::Pasted(s, f, None) => format!("pasted {} ({} sites)", f.name(), s.len()),
        Source::Pasted(s, f, Some(name)) => format!("{name} ({}, {} sites)", f.name(), s.len()),
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
    // An answer made by editing the input by hand (then sent to a room as a hand edit).
    let hand_edit = RwSignal::new(None::<String>);
    // Turn the hand-edited structure into the answer to the task it was edited from: the
    // answer is the edited structure's CIF and the input goes back to where the edits began
    // (undo brings the edited structure back).
    let use_edit_as_answer = move |_| {
        let current = source.get_untracked();
        if !matches!(current, Source::Edited(_)) {
            return;
        }
        let Some(edited) = input_cif.get_untracked() else {
            return;
        };
        let origin = history.with_value(|(undo, _)| {
            undo.iter()
                .rev()
                .find(|s| !matches!(s, Source::Edited(_)))
                .cloned()
        });
        let Some(origin) = origin else {
            return;
        };
        let text = format!("<cif>\n{edited}\n</cif>");
        history.update_value(|(undo, redo)| {
            undo.push(current);
            redo.clear();
        });
        replace_source(origin);
        answered_by.set(None);
        hand_edit.set(Some(text.clone()));
        answer.set(text);
    };
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
    // Matching a large target against an answer that is not an exact copy can take seconds
    // (a 512-site supercell with one atom moved). It runs in the matching worker, so the page
    // stays responsive, but above MAX_AUTO_MATCH_SITES it still waits for a click rather than
    // re-matching on every keystroke.
    let requested_for = RwSignal::new(None::<String>);
    let large_target = Memo::new(move |_| {
        target.with(|t| t.as_ref().map_or(0, |t| t.len())) > MAX_AUTO_MATCH_SITES
    });
    // What to score: the answer against the target as the evaluator reads it, with the
    // target's rows when the overlay can be drawn (not for site-by-site actions).
    let work = Memo::new(move |_| {
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
        let rows = (comparison != Comparison::Ordered)
            .then(|| target.get())
            .flatten()
            .filter(|rows| rows.len() <= MAX_OVERLAY_SITES);
        Some(Work::Answer(AnswerWork {
            target_cif: target_cif.get()?,
            answer: text,
            comparison,
            rows,
        }))
    });
    let matcher = Worker::<Scoring>::new();
    let outcome = matcher.follow(work);
    // A mismatch without a fit is explained by the closest (smallest-RMS) match: its numbers
    // in the verdict and its pairing in the overlay.
    let done = Memo::new(move |_| outcome.get()?.into_answer());
    let verdict = Memo::new(move |_| done.with(|d| d.as_ref()?.verdict.clone()));

    let filtered = move || {
        let q = search.get().to_lowercase();
        let mut rows = entries.with_value(|p| {
            p.iter()
                .enumerate()
                .filter(|(_, e)| {
                    q.is_empty()
                        || e.name.to_lowercase().contains(&q)
                        || e.display_name().to_lowercase().contains(&q)
                        || e.formula.to_lowercase().contains(&q)
                })
                .map(|(i, e)| (e.display_name().to_lowercase(), i, summary(e)))
                .collect::<Vec<_>>()
        });
        // By name, case-insensitively; the pool keeps its order (links name entries).
        rows.sort();
        rows.into_iter()
            .map(|(_, i, label)| (i, label))
            .collect::<Vec<_>>()
    };

    let load = move |name: Option<&str>, text: &str| match read_any(name, text) {
        Ok((s, f)) => {
            paste_error.set(None);
            symmetry_warning.set(if f == Format::Cif {
                engine::cif::undeclared_symmetry(text)
            } else {
                None
            });
            source.set(Source::Pasted(s, f, name.map(str::to_string)));
        }
        Err(e) => paste_error.set(Some(e)),
    };
    // Downloads of a dropped file's structures are named after the file (`NaCl.cif` gives
    // `NaCl.vasp`, `NaCl-target.cif`); anything else after what it is (`input`, `target`).
    let download_stem = move |role: &str| match source.get() {
        Source::Pasted(_, _, Some(name)) => {
            let stem = file_stem(&name);
            if role == "input" {
                stem.to_string()
            } else {
                format!("{stem}-{role}")
            }
        }
        _ => role.to_string(),
    };
    // The answer over the target: the matcher's pairing as one vector per target site, in
    // the target's row order (worked out by the matching worker).
    let show_overlay = RwSignal::new(false);
    let overlay_data = Memo::new(move |_| {
        done.with(|d| {
            let d = d.as_ref()?;
            let v = d.verdict.as_ref()?;
            Some(Overlay {
                displacements: d.overlay.clone()?,
                pairing: if v.closest.is_some() {
                    "the closest match paired with it (no fit; common shift removed)"
                } else {
                    "the matcher paired with it (common shift removed)"
                },
            })
        })
    });
    let overlay = Signal::derive(move || show_overlay.get().then(|| overlay_data.get()).flatten());

    // Shown next to the input's name; display only (no verdict depends on it). A symbol
    // (`F m -3 m (225)`) is one word to the reader: it wraps only as a whole. A pool entry's
    // comes from the pool's table; any other structure's from the symmetry search in a
    // worker of its own (so that it never stops a running match).
    let symmetry_search = Worker::<Symmetry>::new();
    let searched = symmetry_search.follow(Memo::new(move |_| {
        if matches!(source.get(), Source::Pool(_)) {
            return None;
        }
        input.get().filter(|s| s.len() <= MAX_SYMMETRY_SITES)
    }));
    let symmetry = Memo::new(move |_| {
        let sites = input.with(|s| s.as_ref().map(|s| s.len()))?;
        if sites > MAX_SYMMETRY_SITES {
            return Some((
                format!("space group not computed above {MAX_SYMMETRY_SITES} sites"),
                false,
            ));
        }
        let found = match source.get() {
            Source::Pool(i) => entries
                .with_value(|p| p.get(i).and_then(PoolEntry::space_group))
                .map(|(number, symbol)| (symbol.to_string(), number)),
            _ => match searched.get() {
                Some(g) => g
                    .ok()
                    .and_then(|g| Some((g.symbol, u32::try_from(g.number).ok()?))),
                // Still searching (or no worker: then the label says "unknown").
                None if symmetry_search.failure.with(Option::is_none) => return None,
                None => None,
            },
        };
        Some(match found {
            Some((symbol, number)) => (format!("{symbol} ({number})"), true),
            None => ("space group unknown".to_string(), false),
        })
    });

    view! {
        <section class="playground">
            <div class="panel controls">
                <StructurePicker
                    search=search
                    pool=Signal::derive(filtered)
                    selected=Signal::derive(move || match source.get() {
                        Source::Pool(i) => Some(i),
                        _ => None,
                    })
                    pick=Callback::new(move |i| {
                        symmetry_warning.set(None);
                        source.set(Source::Pool(i));
                    })
                    pasted=pasted
                    paste_error=paste_error
                    load=Callback::new(move |(name, text): (Option<String>, String)| load(name.as_deref(), &text))
                />
                <TaskPanel
                    kind=kind
                    seed=seed
                    randomise=Callback::new(move |()| randomise())
                    prompt=prompt
                    input=input
                    parsed=parsed
                    applied=applied
                    differ=differ
                    semantics=semantics
                    full_prompt=full_prompt
                />
            </div>

            <div class="views">
                <div class="view">
                    <h2>"Input " <span class="muted" id="input-name">{move || input_name.get()}</span>
                        " " <span class="muted small" id="space-group" style:white-space=move || if symmetry.with(|s| s.as_ref().is_some_and(|s| s.1)) { "nowrap" } else { "normal" } title="space group (symprec 0.01 Å, angle tolerance 5°, as pymatgen's SpacegroupAnalyzer)">{move || symmetry.get().map(|s| s.0)}</span></h2>
                    {move || symmetry_warning.get().map(|declared| view! {
                        <p class="notice warning" id="symmetry-warning">
                            {format!(
                                "This file names its space group as \u{201c}{declared}\u{201d} and lists no \
                                 symmetry operations. pymatgen's tables (which the benchmark's \
                                 evaluator uses) do not know that name \u{2014} Hall symbols and short \
                                 symbols such as P 21/c are not looked up \u{2014} so, like pymatgen, this \
                                 page reads only its {} listed sites, as if the group were P1: that \
                                 is not the whole crystal. Write the full symbol (P 1 21/c 1), add \
                                 _symmetry_Int_Tables_number, or list the operations \
                                 (_symmetry_equiv_pos_as_xyz).",
                                input.with(|s| s.as_ref().map_or(0, Structure::len))
                            )}
                        </p>
                    })}
                    <StructureCanvas structure=input highlight=touched_in id="viewer" on_edit=on_edit page_help=true />
                    {move || edit_error.get().map(|e| view! { <p class="error small" id="edit-error">{e}</p> })}
                    {move || matches!(source.get(), Source::Edited(_)).then(|| view! {
                        <p class="small">
                            <button class="secondary small" id="edit-as-answer" on:click=use_edit_as_answer
                                title="your edited structure becomes the answer to the task; the input goes back to before your edits">
                                "Use my edited structure as the answer"
                            </button>
                        </p>
                    })}
                    <ExportLinks structure=input role="input" stem=Signal::derive(move || download_stem("input")) />
                </div>
                // No valid action: no target, and not the previous one left on screen.
                <div class="view" class:no-target=move || target.get().is_none()>
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
                    <ExportLinks structure=target role="target" stem=Signal::derive(move || download_stem("target")) />
                </div>
            </div>
            <AnswerPanel
                answer=answer
                answered_by=answered_by
                full_prompt=full_prompt
                target_cif=target_cif
                input_cif=input_cif
                verdict=verdict
                matching=Signal::derive(move || matcher.busy.get())
                failure=matcher.failure
                warm=Callback::new(move |()| matcher.warm())
                slow_match=matcher.slow.into()
                large_target=large_target
                target_sites=Signal::derive(move || target.with(|t| t.as_ref().map_or(0, |t| t.len())))
                requested_for=requested_for
                make_link=Callback::new(move |()| make_link(()))
                make_short_link=Callback::new(move |()| make_short_link(()))
                share_link=share_link
                share_error=share_error
            >
                <RoomSend
                    input_cif=input_cif
                    prompt=prompt
                    answer=answer
                    answered_by=answered_by
                    hand_edit=hand_edit
                />
            </AnswerPanel>
            <p class="muted frame-note">
                "Cartesian frame of every prompt: a along x, b in the xy-plane. Site indices start at 0. Highlighted: sites the action touched."
            </p>
        </section>
    }
}
