//! A structure drawn by the three-d viewer, with orbit (drag) and zoom (wheel) controls, an
//! element legend, bonds, Jmol/VESTA colours, keyboard shortcuts with a help overlay, and
//! picking: a click shows a site's index, element and coordinates, a second and third click
//! the distances and the angle. An editable canvas also offers hand edits with undo/redo.

use engine::Structure;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::edit_panel::{EditPanel, EditRequest};
use super::measure::picked_panel;
use super::shortcuts::{command, Command, HelpOverlay};
use viewer::{ColorScheme, Overlay, Style, Viewer, OVERLAY_FULL_SCALE, OVERLAY_ZERO};

/// Pointer travel (CSS pixels) below which a press and release count as a click, not a drag.
const CLICK_SLOP: i32 = 4;
/// Above this many sites the canvas does not publish its projected site positions.
const MAX_PUBLISHED_SITES: usize = 2000;
/// Largest number of cells drawn along each axis.
const MAX_CELLS: u32 = 3;
/// Above this many sites bonds start switched off.
const AUTO_BONDS_SITES: usize = 5000;
/// Sites a measurement can involve (two for a distance, three for an angle).
const MAX_PICKED: usize = 3;

/// Whether a key event goes to a place where text is typed (a text input, a text area, a
/// select's type-ahead or an editable element).
fn typing(e: &ev::KeyboardEvent) -> bool {
    const TEXT: &str = "textarea, select, [contenteditable]:not([contenteditable=false]), \
        input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit])\
        :not([type=reset]):not([type=range]):not([type=color]):not([type=file])";
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| el.closest(TEXT).ok().flatten().is_some())
}

/// A 3D view of `structure` with halos around the sites in `highlight`.
#[component]
pub fn StructureCanvas(
    /// The structure to draw (nothing is drawn while `None`).
    #[prop(into)]
    structure: Signal<Option<Structure>>,
    /// Site indices to highlight.
    #[prop(into)]
    highlight: Signal<Vec<usize>>,
    /// DOM id of the canvas (tests and links address it).
    id: &'static str,
    /// Where hand edits go; without it the view is read-only.
    #[prop(optional)]
    on_edit: Option<Callback<EditRequest>>,
    /// A model's answer to draw over the structure.
    #[prop(optional, into)]
    overlay: Option<Signal<Option<Overlay>>>,
    /// Atom spheres relative to their usual size (points of the coordinate probe are drawn
    /// larger than atoms).
    #[prop(default = 1.0)]
    atom_scale: f32,
    /// Whether `?` pressed anywhere on the page (outside text fields) opens this viewer's
    /// keyboard help (one viewer per page should).
    #[prop(optional)]
    page_help: bool,
) -> impl IntoView {
    let overlay = overlay.unwrap_or_else(|| Signal::derive(|| None));
    let canvas_ref = NodeRef::<Canvas>::new();
    let viewer = StoredValue::new_local(None::<Viewer>);
    let (error, set_error) = signal(None::<String>);
    let drag = StoredValue::new_local(None::<(i32, i32)>);
    let press = StoredValue::new_local(None::<(i32, i32)>);
    // The picked sites (at most three), in the order picked.
    let picked = RwSignal::new(Vec::<usize>::new());
    // Site index labels (prompts address atoms by index) and where the sites are drawn.
    let show_labels = RwSignal::new(false);
    let projected = RwSignal::new(Vec::<[f32; 2]>::new());
    let style = RwSignal::new(Style {
        atom_scale,
        ..Style::default()
    });
    let help = RwSignal::new(false);
    // The help was opened from elsewhere on the page: it floats in the window's corner.
    let help_floating = RwSignal::new(false);
    // Bonds were switched off because the structure is large (shown next to the checkbox).
    let bonds_auto_off = RwSignal::new(false);

    // After each draw, publish where the sites are on screen (`data-sites`, JSON of
    // [x, y] CSS pixels), how many bonds, atoms and magnetic moment arrows are drawn
    // (`data-bonds`, `data-atoms`, `data-moments`), so that browser tests can click a given
    // site and check the picture.
    let publish = move || {
        let (Some(canvas), Some((points, bonds, atoms, moments))) = (
            canvas_ref.get_untracked(),
            viewer.with_value(|v| {
                v.as_ref().map(|v| {
                    (
                        v.projected_sites(),
                        v.bond_count(),
                        v.atom_count(),
                        v.moment_count(),
                    )
                })
            }),
        ) else {
            return;
        };
        let json = if points.len() <= MAX_PUBLISHED_SITES {
            serde_json::to_string(&points).unwrap_or_default()
        } else {
            String::new()
        };
        let _ = canvas.set_attribute("data-sites", &json);
        let _ = canvas.set_attribute("data-bonds", &bonds.to_string());
        let _ = canvas.set_attribute("data-atoms", &atoms.to_string());
        let _ = canvas.set_attribute("data-moments", &moments.to_string());
        projected.set(points);
    };
    let with_viewer = move |f: &dyn Fn(&mut Viewer)| {
        viewer.update_value(|v| {
            if let Some(v) = v.as_mut() {
                f(v);
            }
        });
        publish();
    };

    canvas_ref.on_load(move |canvas| match Viewer::new(canvas) {
        Ok(v) => viewer.set_value(Some(v)),
        Err(e) => set_error.set(Some(e)),
    });
    Effect::new(move |_| {
        let s = structure.get();
        let h = highlight.get();
        let o = overlay.get();
        // Above AUTO_BONDS_SITES bonds start switched off (they would cost more than the
        // atoms to draw, and hide them); the checkbox turns them on.
        let big = s.as_ref().is_some_and(|s| s.len() > AUTO_BONDS_SITES);
        if big && style.get_untracked().bonds {
            style.update(|st| st.bonds = false);
            bonds_auto_off.set(true);
        } else if !big {
            bonds_auto_off.set(false);
        }
        let st = style.get_untracked();
        // Track the canvas too, so the first draw happens once it exists.
        let _ = canvas_ref.get();
        viewer.update_value(|v| {
            if let (Some(v), Some(s)) = (v.as_mut(), s.as_ref()) {
                v.set_style(st);
                v.set_structure(s, &h);
                v.set_overlay(o.as_ref());
            }
        });
        if let Some(canvas) = canvas_ref.get_untracked() {
            // `worst` is null when every site is where the target has it.
            let text = o.as_ref().map_or_else(String::new, |o| {
                let worst = o.worst().map(|(i, _)| i);
                let largest = o.largest().map_or(0.0, |(_, d)| d);
                serde_json::json!({ "worst": worst, "worst_angstrom": largest }).to_string()
            });
            let _ = canvas.set_attribute("data-overlay", &text);
        }
        picked.set(Vec::new());
        publish();
    });
    Effect::new(move |_| {
        let st = style.get();
        with_viewer(&|v| v.set_style(st));
    });

    let run = move |c: Command| match c {
        Command::Reset => with_viewer(&|v| {
            v.reset_view();
            v.render();
        }),
        Command::Along(k) => with_viewer(&|v| v.view_along(k)),
        Command::Labels => show_labels.update(|x| *x = !*x),
        Command::Bonds => style.update(|s| s.bonds = !s.bonds),
        Command::Scheme => style.update(|s| s.scheme = s.scheme.toggled()),
        // Esc closes the help first, then forgets the picked sites.
        Command::ClearPicks => {
            if help.get_untracked() {
                help.set(false);
            } else {
                picked.set(Vec::new());
            }
        }
        Command::Help => {
            help_floating.set(false);
            help.update(|x| *x = !*x);
        }
        Command::Delete => {
            if let (Some(edit), Some(&index)) = (on_edit, picked.get_untracked().last()) {
                edit.run(EditRequest::Apply(
                    benchmarks::atomworld::action::Action::Remove { index },
                ));
            }
        }
        Command::Undo | Command::Redo => {
            if let Some(edit) = on_edit {
                edit.run(if c == Command::Undo {
                    EditRequest::Undo
                } else {
                    EditRequest::Redo
                });
            }
        }
    };

    // Keys pressed anywhere on the page: Esc closes this viewer's help; `?` opens it (with
    // `page_help`) unless someone is typing. A key the canvas handled itself is left alone.
    let page_keys = window_event_listener(ev::keydown, move |e: ev::KeyboardEvent| {
        if e.default_prevented() || e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        match e.key().as_str() {
            "Escape" if help.get_untracked() => help.set(false),
            "?" if page_help && !typing(&e) => {
                e.prevent_default();
                help_floating.set(true);
                help.update(|x| *x = !*x);
            }
            _ => {}
        }
    });
    on_cleanup(move || page_keys.remove());

    // Touch screens: whether swipes turn the structure rather than scroll the page.
    let engaged = RwSignal::new(false);
    // A drag ends without a click (the pointer left, or the browser took the touch over).
    let release = move || {
        if drag.get_value().is_some() {
            with_viewer(&|v| v.set_moving(false));
        }
        drag.set_value(None);
        press.set_value(None);
    };

    let on_up = move |e: ev::PointerEvent| {
        if drag.get_value().is_some() {
            // Ends the drag: redraws at full resolution, then publishes.
            with_viewer(&|v| v.set_moving(false));
        }
        drag.set_value(None);
        let Some((x0, y0)) = press.get_value() else {
            return;
        };
        press.set_value(None);
        if (e.client_x() - x0).abs() > CLICK_SLOP || (e.client_y() - y0).abs() > CLICK_SLOP {
            return;
        }
        let hit = viewer.with_value(|v| {
            v.as_ref()
                .and_then(|v| v.pick(e.offset_x() as f64, e.offset_y() as f64))
        });
        // Clicks collect up to three sites; the next plain click starts over. Shift-click
        // keeps collecting, dropping the oldest.
        picked.update(|p| match hit {
            None => p.clear(),
            Some(i) => {
                if p.contains(&i) || (p.len() >= MAX_PICKED && !e.shift_key()) {
                    p.clear();
                }
                p.push(i);
                if p.len() > MAX_PICKED {
                    p.remove(0);
                }
            }
        });
    };

    let legend = move || {
        let scheme = style.get().scheme;
        structure
            .get()
            .map(|s| s.elements())
            .unwrap_or_default()
            .into_iter()
            .map(|el| {
                let [r, g, b] = scheme.color(el);
                view! {
                    <li data-element=el.symbol()>
                        <span class="swatch" style=format!("background: rgb({r},{g},{b})")></span>
                        {el.symbol()}
                    </li>
                }
            })
            .collect_view()
    };

    let info = move || picked_panel(&structure.get()?, &picked.get(), id);

    // Index labels as HTML over the canvas, at the drawn site centres (up to
    // MAX_PUBLISHED_SITES sites; beyond that they would cover the picture).
    let labels = move || {
        if !show_labels.get() {
            return None;
        }
        let points = projected.get();
        (points.len() <= MAX_PUBLISHED_SITES).then(|| {
            points
                .into_iter()
                .enumerate()
                .map(|(i, [x, y])| {
                    view! {
                        <span class="site-label" data-site=i style=format!("left: {x:.1}px; top: {y:.1}px")>
                            {i}
                        </span>
                    }
                })
                .collect_view()
        })
    };

    view! {
        <div class="canvas-wrap">
            <div class="canvas-stack">
            <canvas
                id=id
                class="viewer"
                class:engaged=move || engaged.get()
                node_ref=canvas_ref
                tabindex="0"
                title="drag to rotate · wheel to zoom · click sites to measure · ? for shortcuts"
                on:pointerdown=move |e: ev::PointerEvent| {
                    drag.set_value(Some((e.client_x(), e.client_y())));
                    press.set_value(Some((e.client_x(), e.client_y())));
                }
                on:pointermove=move |e: ev::PointerEvent| {
                    if let Some((x0, y0)) = drag.get_value() {
                        let (x, y) = (e.client_x(), e.client_y());
                        if (x, y) == (x0, y0) {
                            return;
                        }
                        viewer.update_value(|v| {
                            if let Some(v) = v.as_mut() {
                                v.set_moving(true);
                                v.orbit((x - x0) as f32, (y - y0) as f32);
                            }
                        });
                        drag.set_value(Some((x, y)));
                        // Follow the drag only when labels are shown; otherwise publish once,
                        // when the pointer is released.
                        if show_labels.get_untracked() {
                            publish();
                        }
                    }
                }
                on:pointerup=on_up
                on:pointerleave=move |_: ev::PointerEvent| release()
                // The browser took the touch over (a vertical swipe scrolls the page).
                on:pointercancel=move |_: ev::PointerEvent| release()
                on:wheel=move |e: ev::WheelEvent| {
                    e.prevent_default();
                    with_viewer(&|v| v.zoom(e.delta_y() as f32));
                }
                on:keydown=move |e: ev::KeyboardEvent| {
                    if let Some(c) = command(&e.key(), e.ctrl_key() || e.meta_key(), e.shift_key()) {
                        e.prevent_default();
                        run(c);
                    }
                }
            ></canvas>
            <div class="site-labels" data-for=id>{labels}</div>
            <HelpOverlay open=help floating=help_floating />
            </div>
            <div class="view-tools" data-for=id>
                <button class="secondary small" data-view="reset" title="default view (r)" on:click=move |_| run(Command::Reset)>"reset"</button>
                {[("a", 0usize), ("b", 1), ("c", 2)].into_iter().map(|(name, k)| view! {
                    <button class="secondary small" data-view=name title=format!("look along {name} ({name})") on:click=move |_| run(Command::Along(k))>{name}</button>
                }).collect_view()}
                <a class="export" href="#" download=format!("{id}.png") data-format="PNG" title="save the picture" on:click=move |e: ev::MouseEvent| {
                    // The drawing buffer is preserved, so the canvas holds the last frame.
                    let url = canvas_ref.get_untracked().and_then(|c| c.to_data_url().ok());
                    let anchor = e.current_target().and_then(|t| {
                        t.dyn_into::<web_sys::HtmlAnchorElement>().ok()
                    });
                    if let (Some(url), Some(a)) = (url, anchor) {
                        a.set_href(&url);
                    }
                }>"PNG"</a>
                <select class="scheme-select" data-for=id title="element colours (v)"
                    prop:value=move || style.get().scheme.name()
                    on:change=move |e| {
                        let scheme = if event_target_value(&e) == ColorScheme::Vesta.name() { ColorScheme::Vesta } else { ColorScheme::Jmol };
                        style.update(|s| s.scheme = scheme);
                    }>
                    {[ColorScheme::Jmol, ColorScheme::Vesta].into_iter().map(|c| view! { <option value=c.name()>{c.name()}</option> }).collect_view()}
                </select>
                <select class="cells-select" data-for=id title="periodic images: cells drawn along a, b, c"
                    on:change=move |e| {
                        let k = event_target_value(&e).parse::<u32>().unwrap_or(1).clamp(1, MAX_CELLS);
                        style.update(|s| s.cells = [k; 3]);
                    }>
                    {(1..=MAX_CELLS).map(|k| view! { <option value=k.to_string()>{format!("{k}×{k}×{k}")}</option> }).collect_view()}
                </select>
                <button class="secondary small help-button" data-for=id title="keyboard shortcuts (?)" on:click=move |_| run(Command::Help)>"?"</button>
                // Touch screens: a swipe up or down on the picture scrolls the page (sideways
                // it turns the structure); this button gives every swipe to the picture until
                // pressed again.
                <button class="secondary small touch-only" data-view="engage" data-for=id
                    aria-pressed=move || engaged.get().to_string()
                    title="swipes turn the structure instead of scrolling the page"
                    on:click=move |_| engaged.update(|e| *e = !*e)>
                    {move || if engaged.get() { "release page scroll" } else { "turn freely" }}
                </button>
            </div>
            <label class="labels-toggle">
                <input
                    type="checkbox"
                    class="labels-toggle"
                    data-for=id
                    prop:checked=move || show_labels.get()
                    on:change=move |e| show_labels.set(event_target_checked(&e))
                />
                " site indices"
            </label>
            <label class="labels-toggle">
                <input
                    type="checkbox"
                    class="bonds-toggle"
                    data-for=id
                    prop:checked=move || style.get().bonds
                    on:change=move |e| style.update(|s| s.bonds = event_target_checked(&e))
                />
                " bonds"
                {move || bonds_auto_off.get().then(|| view! { <span class="muted small">{format!(" (off above {AUTO_BONDS_SITES} atoms)")}</span> })}
            </label>
            {move || error.get().map(|e| view! { <p class="error viewer-error">{e}</p> })}
            <ul class="legend" data-for=id>{legend}</ul>
            {move || overlay.get().map(|o| view! {
                <p class="overlay-legend small" data-for=id>
                    <span class="ramp"></span>
                    {format!(
                        "answer over target: an arrow from each target site to the answer's site {}, \
                         green 0 Å → red ≥ {OVERLAY_FULL_SCALE} Å. ",
                        o.pairing
                    )}
                    {match o.worst() {
                        Some((i, d)) => view! {
                            {format!("Largest: #{i}, ")}<b class="worst">{format!("{d:.3}")}</b>" Å (marked red)."
                        }.into_any(),
                        None => view! {
                            {format!("Every site is where the target has it (all under {OVERLAY_ZERO} Å): none is marked.")}
                        }.into_any(),
                    }}
                </p>
            })}
            {info}
            {on_edit.map(|edit| view! {
                <EditPanel picked=Signal::derive(move || picked.get().last().copied()) on_edit=edit id=id />
            })}
        </div>
    }
}
