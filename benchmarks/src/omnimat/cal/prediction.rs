//! Cutting a prediction into slots, as the reference's scorer does.
//!
//! A list is flattened row-major (each leaf as Python's `str()`, trimmed). A text tries, in
//! order:
//! 1. the first `\boxed{…}` whose content is non-empty and brace-free, found anywhere (even
//!    inside `<think>` or JSON text): one slot. `\boxed{1.5 \times 10^{4}}` is skipped
//!    (braces inside), so the text goes on to the next steps;
//! 2. the whole text as JSON (Python's `json.loads`, see [`pyjson`](super::pyjson));
//! 3. the first `<answer>…</answer>` (only when closed): its content as JSON, else the
//!    content as one slot (a json fence inside is not removed; `<answer></answer>` is one
//!    empty slot);
//! 4. the whole text as one slot.
//!
//! "", white space or null give zero slots.

use serde::{Deserialize, Serialize};

use super::pyjson::{loads, PyValue};
use engine::python::py_strip;

/// Which step of [`parse_prediction`] produced the slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The prediction was empty: no slots.
    Empty,
    /// A list given as such.
    List,
    /// The first brace-free `\boxed{}`.
    Boxed,
    /// The whole text parsed as JSON.
    Json,
    /// `<answer>` content parsed as JSON.
    AnswerJson,
    /// `<answer>` content taken as one slot.
    AnswerText,
    /// The whole text as one slot.
    WholeText,
}

impl Route {
    /// Where the slots were found, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Route::Empty => "an empty answer",
            Route::List => "a list",
            Route::Boxed => "the first \\boxed{}",
            Route::Json => "the whole answer as JSON",
            Route::AnswerJson => "<answer> as JSON",
            Route::AnswerText => "<answer> as one slot",
            Route::WholeText => "the whole answer as one slot",
        }
    }
}

/// A prediction cut into slots.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The slots, in order.
    pub slots: Vec<String>,
    /// How they were found.
    pub route: Route,
    /// Whether a JSON number was rewritten by Python's float (e.g. `1E5` → "100000.0").
    pub float_rewritten: bool,
    /// Whether a `\boxed{}` with braces inside was skipped.
    pub boxed_skipped: bool,
}

/// Flatten a Python value to slots (row-major; leaves as `str()`, trimmed).
pub fn flatten(v: &PyValue, out: &mut Vec<String>) {
    match v {
        PyValue::List(items) => items.iter().for_each(|x| flatten(x, out)),
        leaf => out.push(py_strip(&leaf.py_str()).to_string()),
    }
}

fn has_float(v: &PyValue) -> bool {
    match v {
        PyValue::Float(_) => true,
        PyValue::List(items) => items.iter().any(has_float),
        PyValue::Object(items) => items.iter().any(|(_, x)| has_float(x)),
        _ => false,
    }
}

/// The content of the first `\boxed{…}` with non-empty brace-free content, and whether an
/// earlier `\boxed{` was skipped.
fn first_boxed(text: &str) -> (Option<&str>, bool) {
    let mut skipped = false;
    let mut from = 0;
    while let Some(pos) = text[from..].find("\\boxed{") {
        let start = from + pos + "\\boxed{".len();
        let body = &text[start..];
        if let Some(end) = body.find(['{', '}']) {
            if end > 0 && body[end..].starts_with('}') {
                return (Some(&body[..end]), skipped);
            }
        }
        skipped = true;
        from = from + pos + 1;
    }
    (None, skipped)
}

/// The content of the first `<answer>` block when it is closed.
pub fn answer_block(text: &str) -> Option<&str> {
    let start = text.find("<answer>")? + "<answer>".len();
    let end = text[start..].find("</answer>")?;
    Some(&text[start..start + end])
}

/// The reference's `parse_prediction_string`.
pub fn parse_prediction(text: &str) -> Parsed {
    let text = py_strip(text);
    let mut parsed = Parsed {
        slots: Vec::new(),
        route: Route::Empty,
        float_rewritten: false,
        boxed_skipped: false,
    };
    if text.is_empty() {
        return parsed;
    }
    let (boxed, skipped) = first_boxed(text);
    parsed.boxed_skipped = skipped;
    if let Some(b) = boxed {
        parsed.slots.push(py_strip(b).to_string());
        parsed.route = Route::Boxed;
        return parsed;
    }
    if let Some(v) = loads(text) {
        flatten(&v, &mut parsed.slots);
        parsed.float_rewritten = has_float(&v);
        parsed.route = Route::Json;
        return parsed;
    }
    if let Some(inner) = answer_block(text) {
        let inner = py_strip(inner);
        if let Some(v) = loads(inner) {
            flatten(&v, &mut parsed.slots);
            parsed.float_rewritten = has_float(&v);
            parsed.route = Route::AnswerJson;
        } else {
            parsed.slots.push(inner.to_string());
            parsed.route = Route::AnswerText;
        }
        return parsed;
    }
    parsed.slots.push(text.to_string());
    parsed.route = Route::WholeText;
    parsed
}

/// A prediction given as JSON (an `eval` line's `prediction`): a list is flattened as such
/// (never searched for `\boxed{}`), null gives no slots, anything else is read as its text.
pub fn parse_prediction_value(value: &serde_json::Value) -> Parsed {
    match value {
        serde_json::Value::String(s) => parse_prediction(s),
        serde_json::Value::Null => parse_prediction(""),
        serde_json::Value::Array(_) => parse_prediction(&prediction_text(value)),
        other => parse_prediction(&from_serde(other).py_str()),
    }
}

/// A prediction given as JSON turned into the response text the suite scores the same way:
/// a string as is, null as "", a list as JSON whose backslashes are written `\u005c`, so the
/// text holds no literal `\boxed{` and parses as the same list (the reference flattens a
/// given list without searching it), anything else as Python's `str()` of it.
pub fn prediction_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        serde_json::Value::Array(_) => {
            let json = serde_json::to_string(value).unwrap_or_default();
            escape_backslashes(&json)
        }
        other => from_serde(other).py_str(),
    }
}

/// Rewrite every `\\` escape of serialised JSON as `\u005c` (same value, no backslash pair).
pub fn escape_backslashes(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut chars = json.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\\') => out.push_str("\\u005c"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn from_serde(v: &serde_json::Value) -> PyValue {
    use serde_json::Value as V;
    match v {
        V::Null => PyValue::Null,
        V::Bool(b) => PyValue::Bool(*b),
        V::Number(n) => {
            if let Some(i) = n.as_i64() {
                PyValue::Int(i.to_string())
            } else if let Some(u) = n.as_u64() {
                PyValue::Int(u.to_string())
            } else {
                PyValue::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        V::String(s) => PyValue::Str(s.clone()),
        V::Array(a) => PyValue::List(a.iter().map(from_serde).collect()),
        V::Object(o) => {
            PyValue::Object(o.iter().map(|(k, x)| (k.clone(), from_serde(x))).collect())
        }
    }
}

/// Flatten a gold `final_answer_list` (any JSON) to slots, as the reference does.
pub fn gold_slots(list: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    flatten(&from_serde(list), &mut out);
    out
}

/// Whether the reference's inference step would have filed this answer as an error (and
/// left it out of every denominator): the value it cuts out of `<answer>` (to the closing
/// tag or the end; parsed as JSON when it is JSON) is falsy, e.g. `<answer>0</answer>` or
/// `[]`. A response without `<answer>` is taken as the already-cut answer (an `eval` line's
/// prediction).
pub fn reference_drops(text: &str) -> bool {
    let cut = match text.find("<answer>") {
        Some(p) => {
            let rest = &text[p + "<answer>".len()..];
            match rest.find("</answer>") {
                Some(e) => &rest[..e],
                None => rest,
            }
        }
        None => text,
    };
    let cut = py_strip(cut);
    match loads(cut) {
        Some(v) => !v.truthy(),
        None => cut.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(t: &str) -> Vec<String> {
        parse_prediction(t).slots
    }

    #[test]
    fn order_of_steps() {
        assert_eq!(
            slots("<think>\\boxed{3}</think><answer>[\"5\"]</answer>"),
            ["3"]
        );
        assert_eq!(
            slots("\\boxed{1.5 \\times 10^{4}}"),
            ["\\boxed{1.5 \\times 10^{4}}"]
        );
        assert_eq!(slots("[[\"1\", \"2\"], [\"3\"]]"), ["1", "2", "3"]);
        assert_eq!(slots("<answer>[2.5, 3]</answer>"), ["2.5", "3"]);
        assert_eq!(slots("<answer> 42 kJ </answer>"), ["42 kJ"]);
        assert_eq!(slots("<answer></answer>"), [""]);
        assert_eq!(slots("<answer>[1]"), ["<answer>[1]"]);
        assert!(slots("  \n").is_empty());
        assert!(slots("[]").is_empty());
        assert_eq!(slots("null"), ["None"]);
        assert_eq!(slots("\\boxed{}\\boxed{7}"), ["7"]);
    }

    #[test]
    fn lists_keep_their_boxed_text() {
        let v = serde_json::json!(["\\boxed{5}", "3"]);
        assert_eq!(parse_prediction_value(&v).slots, ["\\boxed{5}", "3"]);
        assert_eq!(
            parse_prediction(&prediction_text(&v)).slots,
            ["\\boxed{5}", "3"]
        );
    }

    #[test]
    fn falsy_answers() {
        assert!(reference_drops("<answer>0</answer>"));
        assert!(reference_drops("<answer>[]</answer>"));
        assert!(reference_drops("[]"));
        assert!(reference_drops(""));
        assert!(!reference_drops("<answer>[\"0\"]</answer>"));
        assert!(!reference_drops("<answer>0.5</answer>"));
    }
}
