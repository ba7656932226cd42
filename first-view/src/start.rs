//! Draws the first structure into the first screen's figure (`#first-picture`, present only
//! on a plain visit to the playground), in place of its pre-drawn picture, and turns it as
//! the pointer drags. Without WebGL2 the picture stays.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use viewer::Viewer;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element, HtmlCanvasElement, PointerEvent};

/// Runs when the module is instantiated (the page's loader does so before it starts the app).
#[wasm_bindgen(start)]
pub fn start() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Some(figure) = document.get_element_by_id("first-picture") {
        if let Err(why) = draw(&document, &figure) {
            web_sys::console::warn_1(&format!("first view: {why}").into());
        }
    }
}

/// Replaces the figure's picture by a canvas of the same size with the structure drawn.
fn draw(document: &Document, figure: &Element) -> Result<(), String> {
    let picture = figure
        .query_selector("img")
        .ok()
        .flatten()
        .ok_or("the first screen has no picture to replace")?;
    let structure = crate::first::structure().ok_or("the first structure names no element")?;
    let canvas: HtmlCanvasElement = document
        .create_element("canvas")
        .map_err(|_| "cannot make a canvas")?
        .dyn_into()
        .map_err(|_| "not a canvas")?;
    canvas.set_class_name("first-view");
    // The picture's size in CSS pixels (the viewer sizes its drawing buffer to it, times the
    // device's pixel ratio).
    let size = |attribute: &str| picture.get_attribute(attribute).unwrap_or_default();
    let _ = canvas.set_attribute(
        "style",
        &format!("width: {}px; height: {}px", size("width"), size("height")),
    );
    canvas.set_title("Drag to turn the structure");
    // Read as the picture it replaces.
    let _ = canvas.set_attribute("role", "img");
    if let Some(alt) = picture.get_attribute("alt") {
        let _ = canvas.set_attribute("aria-label", &alt);
    }
    // In the picture's place before drawing, so the viewer reads the size it is shown at; the
    // browser paints only after this task, so the picture is never seen blank.
    picture
        .replace_with_with_node_1(&canvas)
        .map_err(|_| "cannot place the canvas")?;
    let mut viewer = match Viewer::new(canvas.clone()) {
        Ok(v) => v,
        Err(why) => {
            let _ = canvas.replace_with_with_node_1(&picture);
            return Err(why);
        }
    };
    viewer.set_structure(&structure, &[]);
    let _ = canvas.set_attribute("data-atoms", &viewer.atom_count().to_string());
    turn_on_drag(&canvas, viewer);
    Ok(())
}

/// Pointer drags turn the structure, as in the app's viewer. The handlers live as long as
/// the page (the app removes the first screen, canvas and all, when it starts).
fn turn_on_drag(canvas: &HtmlCanvasElement, viewer: Viewer) {
    let viewer = Rc::new(RefCell::new(viewer));
    let last: Rc<Cell<Option<(i32, i32)>>> = Rc::new(Cell::new(None));
    let on_down = {
        let (last, canvas) = (last.clone(), canvas.clone());
        Closure::<dyn FnMut(PointerEvent)>::new(move |e: PointerEvent| {
            let _ = canvas.set_pointer_capture(e.pointer_id());
            last.set(Some((e.client_x(), e.client_y())));
        })
    };
    let on_move = {
        let (last, viewer) = (last.clone(), viewer.clone());
        Closure::<dyn FnMut(PointerEvent)>::new(move |e: PointerEvent| {
            if let Some((x0, y0)) = last.get() {
                let (x, y) = (e.client_x(), e.client_y());
                let mut v = viewer.borrow_mut();
                v.set_moving(true);
                v.orbit((x - x0) as f32, (y - y0) as f32);
                last.set(Some((x, y)));
            }
        })
    };
    let on_up = Closure::<dyn FnMut(PointerEvent)>::new(move |_: PointerEvent| {
        last.set(None);
        viewer.borrow_mut().set_moving(false);
    });
    for (event, handler) in [
        ("pointerdown", &on_down),
        ("pointermove", &on_move),
        ("pointerup", &on_up),
        ("pointercancel", &on_up),
    ] {
        let _ = canvas.add_event_listener_with_callback(event, handler.as_ref().unchecked_ref());
    }
    on_down.forget();
    on_move.forget();
    on_up.forget();
}
