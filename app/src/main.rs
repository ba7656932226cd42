//! AtomWorld Playground in the browser: Leptos (client-side rendering) and a three-d viewer.

mod api;
mod matching;
mod own_key;
mod share;
mod ui;
mod viewer;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(ui::App);
}
