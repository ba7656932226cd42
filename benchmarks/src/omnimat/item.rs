//! OmniMatBench items as the upstream files carry them, and the importers of those files
//! (`cal/*.jsonl`: one CAL item a line; `qa/*_QA_rubric.json`: a JSON list of QA items).
//!
//! Every field but the id and the answers is optional, so an `eval` line such as
//! `{"id", "final_answer_list", "prediction"}` is a CAL item too; unknown fields (the
//! upstream `Adaptation_Status`, `adaptation_principle`, `final_answer_raw_response`, an
//! eval line's `prediction` or `response`) are ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::task::Image;

/// Why a file could not be imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A JSONL line is not a CAL item.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file is not a JSON list of QA items.
    #[error("{0}")]
    File(String),
}

/// An id written as a string or a number.
fn id_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        S(String),
        N(serde_json::Number),
    }
    Ok(match Id::deserialize(d)? {
        Id::S(s) => s,
        Id::N(n) => n.to_string(),
    })
}

/// `null` read as the default.
fn or_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A calculation (CAL) item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalItem {
    /// The item's id within its subfield file ("001").
    #[serde(deserialize_with = "id_text")]
    pub id: String,
    /// The subfield ("Materials Physics"): upstream `type`.
    #[serde(rename = "type", default, deserialize_with = "or_default")]
    pub subfield: String,
    /// "Book", "Paper", … (upstream `source_type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// "Calculation".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// Where the item comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_name: Option<String>,
    /// Where in the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_location: Option<String>,
    /// Whether the item has images.
    #[serde(default, deserialize_with = "or_default")]
    pub multimodal: bool,
    /// Image stems, comma-separated: the images go after the question ([`super::images`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    /// The images of `image_url`'s stems, in order, as the server loaded them (not an
    /// upstream field; empty in files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Why the server could not load them (not an upstream field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images_unavailable: Option<String>,
    /// The question.
    #[serde(default, deserialize_with = "or_default")]
    pub question: String,
    /// The worked solution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Formula and format hints (not scored).
    #[serde(default, deserialize_with = "or_default")]
    pub key_points: Vec<serde_json::Value>,
    /// The slot shape: a JSON list of "" (flat or nested); derived from
    /// `final_answer_list` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer_format: Option<serde_json::Value>,
    /// The gold answers, same shape, strings.
    pub final_answer_list: serde_json::Value,
}

impl CalItem {
    /// The images to send after the question (none for a text-only item), or why they are
    /// unavailable.
    pub fn images(&self) -> Result<&[Image], String> {
        let stems = super::images::stems(self.image_url.as_deref());
        super::images::resolve(&stems, &self.images, self.images_unavailable.as_deref())
    }

    /// The slot shape the model must fill: `final_answer_format`, or the gold's shape with
    /// every leaf "".
    pub fn answer_format(&self) -> serde_json::Value {
        fn blank(v: &serde_json::Value) -> serde_json::Value {
            match v {
                serde_json::Value::Array(a) => {
                    serde_json::Value::Array(a.iter().map(blank).collect())
                }
                _ => serde_json::Value::String(String::new()),
            }
        }
        match &self.final_answer_format {
            Some(f) if !f.is_null() => f.clone(),
            _ => blank(&self.final_answer_list),
        }
    }
}

/// One rubric key point of a QA item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyPoint {
    /// "point_1".
    #[serde(default, deserialize_with = "or_default")]
    pub id: String,
    /// What the answer must cover.
    #[serde(default, deserialize_with = "or_default")]
    pub description: String,
}

/// A question-answer (QA) item, judged against its rubric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QaItem {
    /// The item's id within its subfield file.
    #[serde(deserialize_with = "id_text")]
    pub id: String,
    /// The subfield: upstream `type`.
    #[serde(rename = "type", default, deserialize_with = "or_default")]
    pub subfield: String,
    /// "Book", "Paper", ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// "QA".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// Where the item comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_name: Option<String>,
    /// Where in the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_location: Option<String>,
    /// Whether the item has images.
    #[serde(default, deserialize_with = "or_default")]
    pub multimodal: bool,
    /// Image stems, comma-separated: the images go after the question ([`super::images`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    /// The images of `image_url`'s stems, in order, as the server loaded them (not an
    /// upstream field; empty in files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Why the server could not load them (not an upstream field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images_unavailable: Option<String>,
    /// The question.
    #[serde(default, deserialize_with = "or_default")]
    pub question: String,
    /// The reference answer.
    #[serde(default, deserialize_with = "or_default")]
    pub answer: String,
    /// The rubric.
    #[serde(default, deserialize_with = "or_default")]
    pub key_points: Vec<KeyPoint>,
    /// Weight per key point id, summing to 1 (equal weights when empty).
    #[serde(default, deserialize_with = "or_default")]
    pub scoring_weights: BTreeMap<String, f64>,
}

impl QaItem {
    /// The images to send after the question (none for a text-only item), or why they are
    /// unavailable.
    pub fn images(&self) -> Result<&[Image], String> {
        let stems = super::images::stems(self.image_url.as_deref());
        super::images::resolve(&stems, &self.images, self.images_unavailable.as_deref())
    }
}

/// An item's key: `subfield/id` ("Materials Physics/001"), since ids restart in every
/// subfield file; the bare id for an item without a subfield (an `eval` line).
pub fn key(subfield: &str, id: &str) -> String {
    let subfield = subfield.trim();
    if subfield.is_empty() {
        id.to_string()
    } else {
        format!("{subfield}/{id}")
    }
}

/// Read an upstream CAL file (`*_Cal_with_final_answers.jsonl`): one item a non-blank line.
pub fn import_cal_jsonl(text: &str) -> Result<Vec<CalItem>, ImportError> {
    let not_json = |e: crate::task::TaskError| ImportError::File(e.0);
    crate::task::source::json_lines(text)
        .map_err(not_json)?
        .into_iter()
        .map(|(at, v)| {
            serde_json::from_value(v).map_err(|e| ImportError::Line {
                line: match at {
                    crate::task::source::Position::Line(n)
                    | crate::task::source::Position::Item(n) => n,
                },
                message: format!("not a CAL item: {e}"),
            })
        })
        .collect()
}

/// Read an upstream QA file (`*_QA_rubric.json`): a JSON list of items.
pub fn import_qa_json(text: &str) -> Result<Vec<QaItem>, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text)
        .map_err(|e| ImportError::File(format!("not a list of QA items: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eval_line_is_a_cal_item() {
        let item: CalItem = serde_json::from_str(
            r#"{"id": 7, "final_answer_list": [["1", "2"], ["3"]], "prediction": "x"}"#,
        )
        .unwrap();
        assert_eq!(item.id, "7");
        assert_eq!(item.answer_format(), serde_json::json!([["", ""], [""]]));
        assert!(item.subfield.is_empty());
    }

    #[test]
    fn bad_lines_name_their_number() {
        let e =
            import_cal_jsonl("\n{\"id\": \"1\", \"final_answer_list\": []}\n{oops}\n").unwrap_err();
        assert!(e.to_string().starts_with("line 3: not JSON"), "{e}");
        let e = import_cal_jsonl("\n\n{\"question\": \"no id\"}\n").unwrap_err();
        assert!(matches!(e, ImportError::Line { line: 3, .. }), "{e}");
        assert!(import_qa_json("{}").is_err());
    }
}
