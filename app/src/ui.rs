//! The page: header, viewer, element legend and the server status line.

use std::cell::RefCell;
use std::rc::Rc;

use engine::cif::read_cif;
use engine::Structure;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::samples::ROCKSALT_CIF;
use crate::viewer::Viewer;

/// The root component.
#[component]
pub fn App() -> impl IntoView {
    let parsed = read_cif(ROCKSALT_CIF);
    view! {
        <header class="top">
            <h1>"AtomWorld Playground"</h1>
            <span class="tagline">"How do language models handle crystal structures?"</span>
        </header>
        <main>
            {match parsed {
                Ok(structure) => view! { <StructureView structure=structure /> }.into_any(),
                Err(e) => view! { <p class="error">{format!("bundled structure: {e}")}</p> }.into_any(),
            }}
        </main>
        <ServerStatus />
    }
}

/// A structure drawn in 3D with its element legend.
#[component]
fn StructureView(structure: Structure) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    let viewer: Rc<RefCell<Option<Viewer>>> = Rc::new(RefCell::new(None));
    let (error, set_error) = signal(None::<String>);
    let formula: String = structure
        .composition()
        .iter()
        .map(|(e, n)| format!("{}{}", e.symbol(), n))
        .collect();
    let legend = structure.elements();
    let n_sites = structure.len();

    {
        let viewer = viewer.clone();
        let structure = structure.clone();
        canvas_ref.on_load(move |canvas| match Viewer::new(canvas, &structure) {
            Ok(mut v) => {
                v.render();
                *viewer.borrow_mut() = Some(v);
            }
            Err(e) => set_error.set(Some(e)),
        });
    }

    let dragging = Rc::new(RefCell::new(None::<(i32, i32)>));
    let on_down = {
        let dragging = dragging.clone();
        move |e: ev::PointerEvent| {
            *dragging.borrow_mut() = Some((e.client_x(), e.client_y()));
        }
    };
    let on_move = {
        let dragging = dragging.clone();
        let viewer = viewer.clone();
        move |e: ev::PointerEvent| {
            let mut d = dragging.borrow_mut();
            if let Some((x0, y0)) = *d {
                let (x, y) = (e.client_x(), e.client_y());
                if let Some(v) = viewer.borrow_mut().as_mut() {
                    v.orbit((x - x0) as f32, (y - y0) as f32);
                }
                *d = Some((x, y));
            }
        }
    };
    let on_up = {
        let dragging = dragging.clone();
        move |_: ev::PointerEvent| *dragging.borrow_mut() = None
    };
    let on_wheel = {
        let viewer = viewer.clone();
        move |e: ev::WheelEvent| {
            e.prevent_default();
            if let Some(v) = viewer.borrow_mut().as_mut() {
                v.zoom(e.delta_y() as f32);
            }
        }
    };

    view! {
        <section class="structure">
            <div class="structure-head">
                <h2 class="formula">{formula}</h2>
                <span class="muted">{format!("{n_sites} sites, P1 cell, Cartesian frame: a ∥ x, b in the xy-plane")}</span>
            </div>
            <canvas
                id="viewer"
                node_ref=canvas_ref
                on:pointerdown=on_down
                on:pointermove=on_move
                on:pointerup=on_up.clone()
                on:pointerleave=on_up
                on:wheel=on_wheel
            ></canvas>
            {move || error.get().map(|e| view! { <p class="error" id="viewer-error">{e}</p> })}
            <ul class="legend" id="legend">
                {legend
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
                    .collect_view()}
            </ul>
        </section>
    }
}

/// The status line: what the server says about itself, or that there is none.
#[component]
fn ServerStatus() -> impl IntoView {
    let (status, set_status) = signal(None::<Result<crate::api::Health, String>>);
    spawn_local(async move {
        set_status.set(Some(crate::api::health().await));
    });
    view! {
        <footer class="status" id="server-status">
            {move || match status.get() {
                None => "Server: checking…".to_string(),
                Some(Ok(h)) => format!("Server: {} · version {} · build {}", h.status, h.version, h.commit),
                Some(Err(e)) => format!("Server: not available ({e}). Everything that needs no model still works."),
            }}
        </footer>
    }
}
