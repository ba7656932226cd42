//! AtomWorld Playground in the browser: Leptos (client-side rendering) and a three-d viewer.

mod api;
mod matching;
mod own_key;
mod share;
mod ui;

fn main() {
    console_error_panic_hook::set_once();
    remove_first_screen();
    leptos::mount::mount_to_body(ui::App);
}

/// Removes the first screen `index.html` shows while this module loads.
fn remove_first_screen() {
    if let Some(screen) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("first-screen"))
    {
        screen.remove();
    }
}
