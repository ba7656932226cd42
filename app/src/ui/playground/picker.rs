//! Choosing the input: the mineral pool (searchable), or a pasted or dropped file.

use leptos::prelude::*;

/// The structure chooser. `pool` lists (index, label) of the entries matching the search;
/// `selected` is the chosen entry, if the input is one; `pick` chooses an entry, `load`
/// reads a pasted or dropped text (with its file name, if any).
#[component]
pub fn StructurePicker(
    /// The search text.
    search: RwSignal<String>,
    /// (index, label) of the pool entries matching the search.
    pool: Signal<Vec<(usize, String)>>,
    /// The chosen pool entry, when the input is one.
    selected: Signal<Option<usize>>,
    /// Choose pool entry `i`.
    pick: Callback<usize>,
    /// The pasted text.
    pasted: RwSignal<String>,
    /// Why the pasted or dropped text could not be read.
    paste_error: RwSignal<Option<String>>,
    /// Read a text (with its file name, for a dropped file).
    load: Callback<(Option<String>, String)>,
) -> impl IntoView {
    let use_pasted = move |_| load.run((None, pasted.get_untracked()));
    let on_drop = move |e: leptos::ev::DragEvent| {
        e.prevent_default();
        leptos::task::spawn_local(async move {
            match super::super::structure_file::dropped_file(&e).await {
                Some((name, text)) => {
                    pasted.set(text.clone());
                    load.run((Some(name), text));
                }
                None => {
                    paste_error.set(Some("the dropped item is not a readable text file".into()))
                }
            }
        });
    };
    view! {
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
            // No vertical padding: the list is exactly six rows high, so the row it scrolls to
            // (the chosen mineral) never leaves the top row cut in half.
            <select
                id="structure-select"
                size="6"
                style="padding-top: 0; padding-bottom: 0"
                on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                        pick.run(i);
                    }
                }
            >
                {move || {
                    let current = selected.get();
                    pool.get()
                        .into_iter()
                        .map(|(i, label)| {
                            // A property, not the attribute: after a click the browser no
                            // longer follows the attribute, so a paste would leave the old
                            // row chosen and clicking it again would not load it.
                            let selected = current == Some(i);
                            view! { <option value=i.to_string() prop:selected=selected>{label}</option> }
                        })
                        .collect_view()
                }}
            </select>
            {move || pool.with(Vec::is_empty).then(|| view! {
                <p class="muted small" id="structure-no-match">
                    {format!("No structure of the pool has “{}” in its name or formula. ", search.get().trim())}
                    "Try part of a name (halite) or a formula (NaCl), or paste your own file below."
                </p>
            })}
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

    }
}
