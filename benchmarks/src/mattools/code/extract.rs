//! Taking the code and the function's name out of a model's answer
//! (`<answer><code>```python …```</code><name>FN</name></answer>`).

use serde::{Deserialize, Serialize};

/// The parts of an answer the harness runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    /// The Python source (fences removed).
    pub code: String,
    /// The function to call.
    pub name: String,
}

/// Why an answer has no runnable parts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ExtractError {
    /// No `<code>…</code>` (and no fenced Python block).
    #[error("no <code>…</code> block in the answer")]
    NoCode,
    /// No `<name>…</name>`.
    #[error("no <name>…</name> in the answer")]
    NoName,
    /// The name is not a Python identifier.
    #[error("<name> {0:?} is not a Python identifier")]
    BadName(String),
}

/// The text between the last `<tag>` and the following `</tag>`, inside the last
/// `<answer>…</answer>` when there is one (models often think aloud before answering).
fn tagged<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let scope = match (text.rfind("<answer>"), text.rfind("</answer>")) {
        (Some(a), Some(b)) if a < b => &text[a + "<answer>".len()..b],
        (Some(a), None) => &text[a + "<answer>".len()..],
        _ => text,
    };
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = scope.rfind(&open)? + open.len();
    let rest = &scope[start..];
    Some(rest.find(&close).map_or(rest, |end| &rest[..end]))
}

/// Removes a Markdown fence (```python … ```) around code, if present.
fn unfence(code: &str) -> &str {
    let t = code.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    // The info string ("python", "py", nothing) runs to the end of the first line.
    let body = rest.split_once('\n').map_or("", |(_, b)| b);
    body.trim_end()
        .strip_suffix("```")
        .unwrap_or(body)
        .trim_matches('\n')
}

/// Extracts the code and the function name.
pub fn extract(response: &str) -> Result<Extracted, ExtractError> {
    let code = tagged(response, "code")
        .map(unfence)
        .filter(|c| !c.trim().is_empty())
        .ok_or(ExtractError::NoCode)?;
    let name = tagged(response, "name")
        .map(|n| n.trim().trim_matches('`').trim())
        .filter(|n| !n.is_empty())
        .ok_or(ExtractError::NoName)?;
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !ok {
        return Err(ExtractError::BadName(name.to_string()));
    }
    Ok(Extracted {
        code: code.to_string(),
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_layout_and_its_variants() {
        let r = "thinking <code>x</code>\n<answer><code>```python\ndef f():\n    return {}\n```</code>\n<name>f</name></answer>";
        let e = extract(r).unwrap();
        assert_eq!(e.code, "def f():\n    return {}");
        assert_eq!(e.name, "f");
        let e = extract("<answer><code>def g(): pass</code><name> `g` </name></answer>").unwrap();
        assert_eq!((e.code.as_str(), e.name.as_str()), ("def g(): pass", "g"));
        // Unclosed tags at the end are taken to the end.
        let e = extract("<answer><name>h</name><code>```py\nh = 1").unwrap();
        assert_eq!(e.code, "h = 1");
        assert_eq!(extract("no tags"), Err(ExtractError::NoCode));
        assert_eq!(extract("<code>x</code>"), Err(ExtractError::NoName));
        assert_eq!(
            extract("<code>x</code><name>f()</name>"),
            Err(ExtractError::BadName("f()".into()))
        );
        assert_eq!(
            extract("<code>```python\n```</code><name>f</name>"),
            Err(ExtractError::NoCode)
        );
    }
}
