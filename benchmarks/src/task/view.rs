//! What a page shows of a verdict beyond its label, declared by the suite ([`Suite::view`])
//! and drawn by one generic view: short facts, tags, a comparison table whose rows are marked
//! right or wrong, and longer texts. The page reads no suite's verdict fields itself.
//!
//! [`Suite::view`]: super::Suite::view

use serde::{Deserialize, Serialize};

/// A verdict as a page shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VerdictView {
    /// Short facts beside the label ("2 of 3 properties").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<String>,
    /// Classifications of the failure, as the paper names them ("Logic Error").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What was expected beside what was given, row by row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<ViewTable>,
    /// Longer texts (a program's output, a judge's reasons), each under its title.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<ViewText>,
}

/// A comparison table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ViewTable {
    /// Column headings.
    pub columns: Vec<String>,
    /// The rows, each with as many cells as there are columns.
    pub rows: Vec<ViewRow>,
}

/// One row of a [`ViewTable`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ViewRow {
    /// The cells, as text.
    pub cells: Vec<String>,
    /// Whether the row is right (`None`: not judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
}

/// A longer text under a title.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ViewText {
    /// Its title ("Output").
    pub title: String,
    /// The text, shown as written (line breaks kept).
    pub body: String,
    /// Shown open rather than folded.
    #[serde(default)]
    pub open: bool,
}

impl VerdictView {
    /// Whether there is nothing to show beyond the label.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
            && self.tags.is_empty()
            && self.table.is_none()
            && self.texts.is_empty()
    }

    /// Adds a text under `title` unless it is empty.
    pub fn text(mut self, title: &str, body: &str, open: bool) -> Self {
        if !body.trim().is_empty() {
            self.texts.push(ViewText {
                title: title.to_string(),
                body: body.to_string(),
                open,
            });
        }
        self
    }
}

impl ViewTable {
    /// A table with these column headings and no rows yet.
    pub fn new(columns: &[&str]) -> Self {
        ViewTable {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(mut self, cells: Vec<String>, ok: Option<bool>) -> Self {
        self.rows.push(ViewRow { cells, ok });
        self
    }
}
