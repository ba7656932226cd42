//! The action's parameters as a form: one field per parameter of the parsed action, checked
//! as you type; a valid edit rewrites the prompt in the reference wording (so the prompt stays
//! the single source of truth, and the form and the text never disagree).

use benchmarks::atomworld::action::Action;
use leptos::prelude::*;
use serde_json::Value;

/// The value a field's text stands for, shaped like the parameter's current value: numbers,
/// lists of numbers ("x, y, z" or "x y z"), element symbols and other words.
fn parse_field(current: &Value, text: &str) -> Result<Value, String> {
    let text = text.trim();
    match current {
        Value::Number(n) if n.is_u64() => text
            .parse::<u64>()
            .map(Value::from)
            .map_err(|_| format!("'{text}' is not a whole number ≥ 0")),
        Value::Number(_) => text
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::from)
            .ok_or_else(|| format!("'{text}' is not a number")),
        Value::Array(items) => {
            let parts: Vec<&str> = text
                .trim_matches(|c| c == '[' || c == ']')
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|p| !p.is_empty())
                .collect();
            if parts.len() != items.len() {
                return Err(format!(
                    "needs {} numbers, got {}",
                    items.len(),
                    parts.len()
                ));
            }
            parts
                .iter()
                .zip(items)
                .map(|(p, like)| parse_field(like, p))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        _ => Ok(Value::String(text.to_string())),
    }
}

/// How a parameter's value is shown in its field.
fn show_field(v: &Value) -> String {
    match v {
        Value::Array(items) => items.iter().map(show_field).collect::<Vec<_>>().join(", "),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Fields for the parameters of `action`; `on_change` gets each valid edited action.
#[component]
pub fn ActionForm(
    /// The action the prompt currently says (nothing to edit while `None`).
    #[prop(into)]
    action: Signal<Option<Action>>,
    /// Receives the edited action.
    on_change: Callback<Action>,
) -> impl IntoView {
    let error = RwSignal::new(None::<(String, String)>);
    let fields = move || {
        let a = action.get()?;
        let json = serde_json::to_value(&a).ok()?;
        let map = json.as_object()?.clone();
        let rows = map
            .iter()
            .filter(|(k, _)| k.as_str() != "action")
            .map(|(key, value)| {
                let key = key.clone();
                let current = value.clone();
                let base = map.clone();
                // The whole action with this field's text in place of its value.
                let build = {
                    let key = key.clone();
                    move |text: &str| {
                        parse_field(&current, text).and_then(|v| {
                            let mut m = base.clone();
                            m.insert(key.clone(), v);
                            serde_json::from_value::<Action>(Value::Object(m))
                                .map_err(|e| e.to_string())
                        })
                    }
                };
                let check = {
                    let (key, build) = (key.clone(), build.clone());
                    move |text: String| match build(&text) {
                        Ok(_) => error.set(None),
                        Err(e) => error.set(Some((key.clone(), e))),
                    }
                };
                let commit = {
                    let key = key.clone();
                    move |text: String| match build(&text) {
                        Ok(a) => {
                            error.set(None);
                            on_change.run(a);
                        }
                        Err(e) => error.set(Some((key.clone(), e))),
                    }
                };
                let invalid = {
                    let key = key.clone();
                    move || error.with(|e| e.as_ref().is_some_and(|(k, _)| *k == key))
                };
                let label = key.replace('_', " ");
                match value {
                    Value::Bool(b) => {
                        let b = *b;
                        let commit = commit.clone();
                        view! {
                            <label class="param" data-param=key.clone()>
                                <input type="checkbox" prop:checked=b
                                    on:change=move |e| commit(event_target_checked(&e).to_string()) />
                                " " {label}
                            </label>
                        }
                        .into_any()
                    }
                    other => view! {
                        <label class="param" data-param=key.clone() class:invalid=invalid>
                            <span>{label}</span>
                            <input type="text" prop:value=show_field(other)
                                style=format!("width: {}ch", show_field(other).chars().count().clamp(4, 40) + 3)
                                on:input=move |e| check(event_target_value(&e))
                                on:change=move |e| commit(event_target_value(&e)) />
                        </label>
                    }
                    .into_any(),
                }
            })
            .collect_view();
        Some(view! {
            <div class="action-form" id="action-form">{rows}</div>
        })
    };
    view! {
        {fields}
        {move || error.get().map(|(k, e)| view! { <p class="error small" id="action-form-error">{format!("{}: {e}", k.replace('_', " "))}</p> })}
    }
}
