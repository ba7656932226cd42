//! Reading a model's answer: the first `<answer>…</answer>` block, a JSON list of points.

use serde::{Deserialize, Serialize};

use super::action::Point;

/// Why an answer could not be turned into points.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerError {
    /// No `<answer>` tag, or no `</answer>` after it.
    #[error("no <answer>…</answer> block in the answer")]
    NoAnswerBlock,
    /// The block is not JSON.
    #[error("the answer is not JSON: {message}")]
    NotJson {
        /// The JSON parser's message (with line and column within the block).
        message: String,
    },
    /// JSON, but not a list of points of the expected length.
    #[error("wrong shape: {message}")]
    Shape {
        /// What differs from a list of `expected` 3-number lists.
        message: String,
    },
}

/// The text inside the first `<answer>…</answer>` block (tags case-insensitive), trimmed.
pub fn extract_answer(response: &str) -> Option<&str> {
    // ASCII lowercasing keeps every byte offset, so positions found in the copy are valid
    // in the original.
    let lower = response.to_ascii_lowercase();
    let start = lower.find("<answer>")? + "<answer>".len();
    let end = start + lower[start..].find("</answer>")?;
    Some(response[start..end].trim())
}

/// Parse a block as a JSON list of `expected` points (each a list of three numbers).
pub fn parse_points(block: &str, expected: usize) -> Result<Vec<Point>, AnswerError> {
    let value: serde_json::Value =
        serde_json::from_str(block).map_err(|e| AnswerError::NotJson {
            message: e.to_string(),
        })?;
    let shape = |message: String| AnswerError::Shape { message };
    let items = value
        .as_array()
        .ok_or_else(|| shape("the top level is not a list".into()))?;
    if items.len() != expected {
        return Err(shape(format!(
            "{} points given, {expected} expected",
            items.len()
        )));
    }
    let mut points = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let coords = item
            .as_array()
            .ok_or_else(|| shape(format!("point {i} is not a list")))?;
        if coords.len() != 3 {
            return Err(shape(format!(
                "point {i} has {} coordinates, 3 expected",
                coords.len()
            )));
        }
        let mut p = [0.0; 3];
        for (k, c) in coords.iter().enumerate() {
            p[k] = c
                .as_f64()
                .ok_or_else(|| shape(format!("coordinate {k} of point {i} is not a number")))?;
        }
        points.push(p);
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_block_case_insensitive() {
        assert_eq!(
            extract_answer("x <ANSWER> [1] </Answer> <answer>[2]</answer>"),
            Some("[1]")
        );
        assert_eq!(extract_answer("<answer>[1]"), None);
        assert_eq!(extract_answer("[1]</answer>"), None);
        assert_eq!(extract_answer("ÄÖ <answer>é</answer>"), Some("é"));
    }

    #[test]
    fn points_and_shapes() {
        assert_eq!(
            parse_points("[[1, 2.5, -3e0], [0, 0, 0]]", 2),
            Ok(vec![[1.0, 2.5, -3.0], [0.0; 3]])
        );
        assert!(matches!(
            parse_points("[[1, 2, 3]", 1),
            Err(AnswerError::NotJson { .. })
        ));
        assert!(matches!(
            parse_points("[[1, 2, 3]]", 2),
            Err(AnswerError::Shape { .. })
        ));
        assert!(matches!(
            parse_points("[[1, 2]]", 1),
            Err(AnswerError::Shape { .. })
        ));
        assert!(matches!(
            parse_points("[[1, 2, \"3\"]]", 1),
            Err(AnswerError::Shape { .. })
        ));
        assert!(matches!(
            parse_points("{\"a\": 1}", 1),
            Err(AnswerError::Shape { .. })
        ));
    }
}
