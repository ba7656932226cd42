//! A structure drawn by the three-d viewer, with orbit (drag) and zoom (wheel) controls, an
//! element legend, and picking: a click shows a site's index, element and coordinates, a
//! second click (or shift-click) adds another site and shows their distance.

use engine::Structure;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;

use crate::viewer::Viewer;

/// Pointer travel (CSS pixels) below which a press and release count as a click, not a drag.
const CLICK_SLOP: i32 = 4;
/// Above this many sites the canvas does not publish its projected site positions.
const MAX_PUBLISHED_SITES: usize = 2000;

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
) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    let viewer = StoredValue::new_local(None::<Viewer>);
    let (error, set_error) = signal(None::<String>);
    let drag = StoredValue::new_local(None::<(i32, i32)>);
    let press = StoredValue::new_local(None::<(i32, i32)>);
    // The picked sites (at most two), most recent last.
    let picked = RwSignal::new(Vec::<usize>::new());
    // Site index labels (prompts address atoms by index) and where the sites are drawn.
    let show_labels = RwSignal::new(false);
    let projected = RwSignal::new(Vec::<[f32; 2]>::new());

    // After each draw, publish where the sites are on screen (`data-sites`, JSON of
    // [x, y] CSS pixels) so that browser tests can click a given site.
    let publish = move || {
        let (Some(canvas), Some(points)) = (
            canvas_ref.get_untracked(),
            viewer.with_value(|v| v.as_ref().map(|v| v.projected_sites())),
        ) else {
            return;
        };
        let json = if points.len() <= MAX_PUBLISHED_SITES {
            serde_json::to_string(&points).unwrap_or_default()
        } else {
            String::new()
        };
        let _ = canvas.set_attribute("data-sites", &json);
        projected.set(points);
    };

    canvas_ref.on_load(move |canvas| match Viewer::new(canvas) {
        Ok(v) => viewer.set_value(Some(v)),
        Err(e) => set_error.set(Some(e)),
    });
    Effect::new(move |_| {
        let s = structure.get();
        let h = highlight.get();
        // Track the canvas too, so the first draw happens once it exists.
        let _ = canvas_ref.get();
        viewer.update_value(|v| {
            if let (Some(v), Some(s)) = (v.as_mut(), s.as_ref()) {
                v.set_structure(s, &h);
            }
        });
        picked.set(Vec::new());
        publish();
    });

    let on_up = move |e: ev::PointerEvent| {
        if drag.get_value().is_some() {
            publish();
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
        picked.update(|p| match hit {
            None => p.clear(),
            Some(i) => {
                if !(e.shift_key() || p.len() == 1) || p.contains(&i) {
                    p.clear();
                }
                p.push(i);
                if p.len() > 2 {
                    p.remove(0);
                }
            }
        });
    };

    let legend = move || {
        structure
            .get()
            .map(|s| s.elements())
            .unwrap_or_default()
            .into_iter()
            .map(|el| {
                let [r, g, b] = el.jmol_color();
                view! {
                    <li data-element=el.symbol()>
                        <span class="swatch" style=format!("background: rgb({r},{g},{b})")></span>
                        {el.symbol()}
                    </li>
                }
            })
            .collect_view()
    };

    let info = move || {
        let s = structure.get()?;
        let p = picked.get();
        if p.is_empty() {
            return None;
        }
        let rows = p
            .iter()
            .filter(|&&i| i < s.len())
            .map(|&i| {
                let site = &s.sites[i];
                let f = site.frac;
                let c = s.cartesian(i);
                view! {
                    <li data-site=i>
                        <b>{format!("#{i} {}", site.element)}</b>
                        {format!(
                            " frac ({:.4}, {:.4}, {:.4}) · Cartesian ({:.4}, {:.4}, {:.4}) Å",
                            f[0], f[1], f[2], c[0], c[1], c[2]
                        )}
                    </li>
                }
            })
            .collect_view();
        let distance = (p.len() == 2 && p.iter().all(|&i| i < s.len())).then(|| {
            let d = s.distance(p[0], p[1]);
            view! {
                <li class="distance">
                    {format!("distance #{} – #{}: ", p[0], p[1])}
                    <b class="value">{format!("{d:.4}")}</b>
                    " Å (nearest periodic image)"
                </li>
            }
        });
        Some(view! { <ul class="picked" data-for=id>{rows}{distance}</ul> })
    };

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
                node_ref=canvas_ref
                title="drag to rotate · wheel to zoom · click a site for its coordinates, click a second one for the distance"
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
                on:pointerleave=move |_: ev::PointerEvent| {
                    if drag.get_value().is_some() {
                        publish();
                    }
                    drag.set_value(None);
                    press.set_value(None);
                }
                on:wheel=move |e: ev::WheelEvent| {
                    e.prevent_default();
                    viewer.update_value(|v| {
                        if let Some(v) = v.as_mut() {
                            v.zoom(e.delta_y() as f32);
                        }
                    });
                    publish();
                }
            ></canvas>
            <div class="site-labels" data-for=id>{labels}</div>
            </div>
            <div class="view-tools" data-for=id>
                <button class="secondary small" data-view="reset" title="default view" on:click=move |_| {
                    viewer.update_value(|v| if let Some(v) = v.as_mut() { v.reset_view(); v.render(); });
                    publish();
                }>"reset"</button>
                {[("a", 0usize), ("b", 1), ("c", 2)].into_iter().map(|(name, k)| view! {
                    <button class="secondary small" data-view=name title=format!("look along {name}") on:click=move |_| {
                        viewer.update_value(|v| if let Some(v) = v.as_mut() { v.view_along(k); });
                        publish();
                    }>{name}</button>
                }).collect_view()}
                <a class="export" href="#" download=format!("{id}.png") data-format="PNG" title="save the picture" on:click=move |e: ev::MouseEvent| {
                    // The drawing buffer is preserved, so the canvas holds the last frame.
                    let url = canvas_ref.get_untracked().and_then(|c| c.to_data_url().ok());
                    let anchor = e.current_target().and_then(|t| {
                        wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlAnchorElement>(t).ok()
                    });
                    if let (Some(url), Some(a)) = (url, anchor) {
                        a.set_href(&url);
                    }
                }>"PNG"</a>
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
            {move || error.get().map(|e| view! { <p class="error viewer-error">{e}</p> })}
            <ul class="legend" data-for=id>{legend}</ul>
            {info}
        </div>
    }
}
