//! The viewer's keyboard shortcuts and the help overlay that lists them.

use leptos::prelude::*;

/// A viewer command reachable from the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Default view.
    Reset,
    /// Look along lattice vector 0, 1 or 2.
    Along(usize),
    /// Site index labels on/off.
    Labels,
    /// Bonds on/off.
    Bonds,
    /// Jmol ↔ VESTA colours.
    Scheme,
    /// Forget the picked sites.
    ClearPicks,
    /// Help overlay on/off.
    Help,
    /// Delete the picked site (editable views).
    Delete,
    /// Undo the last edit (editable views).
    Undo,
    /// Redo the last undone edit (editable views).
    Redo,
}

/// Every shortcut as (keys shown, what it does), in the order the help lists them.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("drag", "rotate"),
    ("wheel", "zoom"),
    ("click", "pick a site (index, element, coordinates)"),
    ("click 2nd, 3rd", "distance, then angle at the middle site"),
    ("r", "reset the view"),
    ("a / b / c", "look along a, b or c"),
    ("i", "site indices on/off"),
    ("o", "bonds on/off"),
    ("v", "Jmol / VESTA colours"),
    ("Esc", "close this help, else clear the picked sites"),
    ("Delete", "delete the picked site (input only)"),
    ("Ctrl+Z / Ctrl+Y", "undo / redo an edit (input only)"),
    ("?", "this help"),
];

/// The command of a key press, if any (`key` as `KeyboardEvent.key` names it).
pub fn command(key: &str, ctrl: bool, shift: bool) -> Option<Command> {
    if ctrl {
        return match key.to_ascii_lowercase().as_str() {
            "z" if shift => Some(Command::Redo),
            "z" => Some(Command::Undo),
            "y" => Some(Command::Redo),
            _ => None,
        };
    }
    Some(match key {
        "r" | "R" => Command::Reset,
        "a" | "A" => Command::Along(0),
        "b" | "B" => Command::Along(1),
        "c" | "C" => Command::Along(2),
        "i" | "I" => Command::Labels,
        "o" | "O" => Command::Bonds,
        "v" | "V" => Command::Scheme,
        "Escape" => Command::ClearPicks,
        "?" | "h" | "H" => Command::Help,
        "Delete" | "Backspace" => Command::Delete,
        _ => return None,
    })
}

/// The help overlay over a viewer, listing [`SHORTCUTS`].
#[component]
pub fn HelpOverlay(
    /// Whether it is shown.
    open: RwSignal<bool>,
    /// Opened from elsewhere on the page: shown in the window's corner, with a word on how
    /// the keys reach a viewer.
    #[prop(optional, into)]
    floating: Option<Signal<bool>>,
) -> impl IntoView {
    let floating = move || floating.is_some_and(|f| f.get());
    // Floating: in the window's top right corner, whatever is scrolled into view.
    let place = move || {
        if floating() {
            "position: fixed; top: 0.8rem; right: 0.8rem; z-index: 20; box-sizing: border-box; \
             max-width: min(24rem, calc(100vw - 1.6rem)); max-height: calc(100vh - 1.6rem); overflow: auto;"
        } else {
            ""
        }
    };
    view! {
        <Show when=move || open.get()>
            <div class="help-overlay" class:floating=floating style=place role="dialog" aria-label="viewer shortcuts">
                <button class="secondary small close" title="close (Esc)" on:click=move |_| open.set(false)>"×"</button>
                {move || floating().then(|| view! {
                    <p class="small help-note" style="margin: 0 1.6rem 0.4rem 0">"Click a viewer first: these keys act on the viewer that has the focus. Esc closes this help."</p>
                })}
                <table>
                    {SHORTCUTS
                        .iter()
                        .map(|(k, what)| view! { <tr><td><kbd>{*k}</kbd></td><td>{*what}</td></tr> })
                        .collect_view()}
                </table>
            </div>
        </Show>
    }
}
