//! The entry call's result line: how a launcher hands an entry function's return value back.
//!
//! Every backend's launcher prints the entry's result as JSON after a `\x1e` marker at the end
//! of stdout; [`split_entry_result`] takes that line off again.

/// Decodes stdout and, with an entry, takes the launcher's `\x1e`-marked JSON line off its
/// end: the marker becomes a line break (or goes when a line break precedes it).
pub(crate) fn split_entry_result(
    stdout: Vec<u8>,
    has_entry: bool,
) -> (String, Option<serde_json::Value>) {
    let text = String::from_utf8_lossy(&stdout).into_owned();
    if !has_entry {
        return (text, None);
    }
    let Some(pos) = text.rfind('\x1e') else {
        return (text, None);
    };
    let tail = &text[pos + 1..];
    let Some(json) = tail.strip_suffix('\n') else {
        return (text, None);
    };
    if json.contains('\n') {
        return (text, None);
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return (text, None);
    };
    let head = &text[..pos];
    let sep = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    (format!("{head}{sep}{tail}"), Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_line_is_split_off() {
        let (out, v) = split_entry_result(b"hello\n\x1e{\"a\": 1}\n".to_vec(), true);
        assert_eq!(out, "hello\n{\"a\": 1}\n");
        assert_eq!(v, Some(serde_json::json!({"a": 1})));
        let (out, v) = split_entry_result(b"no newline\x1e[1, 2]\n".to_vec(), true);
        assert_eq!(out, "no newline\n[1, 2]\n");
        assert_eq!(v, Some(serde_json::json!([1, 2])));
        let (out, v) = split_entry_result(b"\x1eNaN\n".to_vec(), true);
        assert_eq!(out, "\x1eNaN\n");
        assert_eq!(v, None);
        let (out, v) = split_entry_result(b"x\x1e1\n".to_vec(), false);
        assert_eq!(out, "x\x1e1\n");
        assert_eq!(v, None);
    }
}
