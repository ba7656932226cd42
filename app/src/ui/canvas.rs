//! A structure drawn by the three-d viewer, with orbit (drag) and zoom (wheel) controls and an
//! element legend.

use engine::Structure;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;

use crate::viewer::Viewer;

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
    });

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

    view! {
        <div class="canvas-wrap">
            <canvas
                id=id
                class="viewer"
                node_ref=canvas_ref
                on:pointerdown=move |e: ev::PointerEvent| drag.set_value(Some((e.client_x(), e.client_y())))
                on:pointermove=move |e: ev::PointerEvent| {
                    if let Some((x0, y0)) = drag.get_value() {
                        let (x, y) = (e.client_x(), e.client_y());
                        viewer.update_value(|v| {
                            if let Some(v) = v.as_mut() {
                                v.orbit((x - x0) as f32, (y - y0) as f32);
                            }
                        });
                        drag.set_value(Some((x, y)));
                    }
                }
                on:pointerup=move |_: ev::PointerEvent| drag.set_value(None)
                on:pointerleave=move |_: ev::PointerEvent| drag.set_value(None)
                on:wheel=move |e: ev::WheelEvent| {
                    e.prevent_default();
                    viewer.update_value(|v| {
                        if let Some(v) = v.as_mut() {
                            v.zoom(e.delta_y() as f32);
                        }
                    });
                }
            ></canvas>
            {move || error.get().map(|e| view! { <p class="error viewer-error">{e}</p> })}
            <ul class="legend" data-for=id>{legend}</ul>
        </div>
    }
}
