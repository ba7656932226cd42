//! Hand edits of the input structure: delete, change element, move and add sites. The
//! panel only asks; the playground applies the edit (with the benchmark's own actions) and
//! keeps the undo history.

use benchmarks::atomworld::action::Action;
use engine::Element;
use leptos::prelude::*;

/// What the user asked the structure's owner to do.
#[derive(Clone, Debug, PartialEq)]
pub enum EditRequest {
    /// Apply this action to the structure.
    Apply(Action),
    /// Undo the last edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
}

/// Three numbers separated by commas and/or spaces.
pub fn parse_vector(text: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() != 3 {
        return Err(format!("a vector needs three numbers, got {}", parts.len()));
    }
    let mut v = [0.0; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = p
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{p}' is not a number"))?;
    }
    Ok(v)
}

fn parse_element(text: &str) -> Result<Element, String> {
    Element::from_symbol(text.trim()).ok_or_else(|| format!("'{}' is not an element", text.trim()))
}

/// The edit controls under an editable viewer; `picked` is the site an edit applies to.
#[component]
pub fn EditPanel(
    /// The site edits apply to (the last picked one).
    #[prop(into)]
    picked: Signal<Option<usize>>,
    /// Where requests go.
    on_edit: Callback<EditRequest>,
    /// DOM id of the viewer it belongs to.
    id: &'static str,
) -> impl IntoView {
    let element = RwSignal::new("O".to_string());
    let vector = RwSignal::new("0, 0, 0.5".to_string());
    let error = RwSignal::new(None::<String>);
    let send = move |make: &dyn Fn(Option<usize>) -> Result<Action, String>| match make(
        picked.get_untracked(),
    ) {
        Ok(a) => {
            error.set(None);
            on_edit.run(EditRequest::Apply(a));
        }
        Err(e) => error.set(Some(e)),
    };
    let need = |i: Option<usize>| i.ok_or_else(|| "pick a site first (click it)".to_string());
    view! {
        <div class="edit-tools" data-for=id>
            <span class="muted small">"Edit by hand (click a site to pick it):"</span>
            <label class="edit-field">
                <span class="small">"element"</span>
                <input class="edit-element" size="3" title="the element the buttons use" prop:value=move || element.get()
                    on:input=move |e| element.set(event_target_value(&e)) />
            </label>
            <label class="edit-field">
                <span class="small">"vector x, y, z (Å)"</span>
                <input class="edit-vector" size="12" title="a displacement or position in Å (x, y, z)" prop:value=move || vector.get()
                    on:input=move |e| vector.set(event_target_value(&e)) />
            </label>
            <button class="secondary small" data-edit="change" title="give the picked site this element" on:click=move |_| send(&|i| {
                Ok(Action::Change { index: need(i)?, element: parse_element(&element.get_untracked())? })
            })>"element"</button>
            <button class="secondary small" data-edit="move" title="move the picked site by the vector (Å)" on:click=move |_| send(&|i| {
                Ok(Action::Move { index: need(i)?, displacement: parse_vector(&vector.get_untracked())? })
            })>"move by"</button>
            <button class="secondary small" data-edit="add" title="add an atom of this element at the Cartesian position (Å)" on:click=move |_| send(&|_| {
                Ok(Action::Add { element: parse_element(&element.get_untracked())?, position: parse_vector(&vector.get_untracked())? })
            })>"add at"</button>
            <button class="secondary small" data-edit="delete" title="delete the picked site (Delete)" on:click=move |_| send(&|i| {
                Ok(Action::Remove { index: need(i)? })
            })>"delete"</button>
            <button class="secondary small" data-edit="undo" title="undo (Ctrl+Z)" on:click=move |_| on_edit.run(EditRequest::Undo)>"undo"</button>
            <button class="secondary small" data-edit="redo" title="redo (Ctrl+Y)" on:click=move |_| on_edit.run(EditRequest::Redo)>"redo"</button>
            {move || error.get().map(|e| view! { <span class="error small edit-error">{e}</span> })}
        </div>
    }
}
