//! Reading a suite's tasks from the files of an upstream release: where each task stands in
//! its file, so that a bad or repeated task is reported with its place.

use std::fmt;

use super::TaskError;

/// Where a task stands in the file it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Line `n` (from 1) of a JSON-lines file.
    Line(usize),
    /// Item `n` (from 1) of a JSON list (or of the file's records).
    Item(usize),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(n) => write!(f, "line {n}"),
            Position::Item(n) => write!(f, "item {n}"),
        }
    }
}

/// A task as read from a file, with its place.
pub type Located = (Position, serde_json::Value);

/// The non-blank lines of a JSON-lines file, each a JSON value (a byte-order mark is not
/// content). A line that is not JSON is an error naming it.
pub fn json_lines(text: &str) -> Result<Vec<Located>, TaskError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map(|v| (Position::Line(i + 1), v))
                .map_err(|e| TaskError(format!("line {}: not JSON: {e}", i + 1)))
        })
        .collect()
}

/// The items of a file holding one JSON list.
pub fn json_list(text: &str) -> Result<Vec<Located>, TaskError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Array(items)) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Position::Item(i + 1), v))
            .collect()),
        Ok(_) => Err(TaskError("expected a JSON list of tasks".into())),
        Err(e) => Err(TaskError(format!(
            "not JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))),
    }
}

/// A JSON list when the text starts with `[`, else JSON lines.
pub fn json_list_or_lines(text: &str) -> Result<Vec<Located>, TaskError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('[') {
        json_list(text)
    } else {
        json_lines(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_lines_or_items() {
        let read = json_lines("\u{feff}{\"a\": 1}\n\n  \n{\"a\": 2}\n").unwrap();
        assert_eq!(read[1].0, Position::Line(4));
        assert_eq!(read[1].0.to_string(), "line 4");
        let e = json_lines("{}\n{oops}\n").unwrap_err();
        assert!(e.0.starts_with("line 2: not JSON"), "{e}");
        let read = json_list_or_lines(" [{\"a\": 1}, {\"a\": 2}]").unwrap();
        assert_eq!(read[1].0, Position::Item(2));
        assert!(json_list("{}").unwrap_err().0.contains("JSON list"));
    }
}
