//! A synthesis recipe as the Open Materials Guide carries it, and the JSONL importer.
//!
//! One recipe is one paper: its key contributions (X, the model's input), its recipe (Y, the
//! ground truth), bibliographic fields, the split it belongs to and, for retrieval, the
//! embedding of its contributions. The type is plain serde so that the server can fill it
//! from the upstream parquet files as well as from JSONL; the bibliographic fields are
//! forgiving (`null`, a number for an id or a year, authors as one string, a list of names
//! or a list of `{"name": …}` objects), the two texts are not.

use serde::{Deserialize, Deserializer, Serialize};

/// Why a JSONL file could not be imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A line is not a usable recipe.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A recipe's key contributions and recipe text, as a retrieved neighbour is shown to a
/// model (`# Reference i:`, then X, a blank line, then Y).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The neighbour's key contributions (X).
    pub contribution: String,
    /// The neighbour's recipe (Y).
    pub recipe: String,
}

/// One recipe of the Open Materials Guide (or one of ours in the same schema).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    /// The paper's identifier (upstream: a Semantic Scholar id; a number is read as text).
    #[serde(deserialize_with = "id_text")]
    pub id: String,
    /// X: Markdown "## Key Contributions" with the three bullets (novel materials, unique
    /// synthesis methods, specific applications).
    pub contribution: String,
    /// Y: Markdown sections "## Materials", "## Synthesis Equipment", "## Synthesis
    /// Procedure", "## Characterization Methods and Equipment", "## Product
    /// Characteristics".
    pub recipe: String,
    /// The paper's title.
    #[serde(default, deserialize_with = "or_default")]
    pub title: String,
    /// Year of publication, if known.
    #[serde(
        default,
        deserialize_with = "year",
        skip_serializing_if = "Option::is_none"
    )]
    pub year: Option<i32>,
    /// Where it was published.
    #[serde(default, deserialize_with = "or_default")]
    pub venue: String,
    /// Where it can be read.
    #[serde(default, deserialize_with = "or_default")]
    pub url: String,
    /// Author names, in order.
    #[serde(default, deserialize_with = "authors")]
    pub authors: Vec<String>,
    /// Embedding of `contribution` for retrieval (upstream: 3,072-d text-embedding-3-large).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contributions_embedding: Option<Vec<f32>>,
    /// `train`, `test_standard_impact`, `test_high_impact`, or `demo` for ours.
    #[serde(default, deserialize_with = "or_default")]
    pub split: String,
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

/// A year as a number, a string of digits, or `null` (an empty string is no year).
fn year<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Year {
        N(i32),
        F(f64),
        S(String),
    }
    match Option::<Year>::deserialize(d)? {
        None => Ok(None),
        Some(Year::N(y)) => Ok(Some(y)),
        Some(Year::F(f)) if f.fract() == 0.0 && f.abs() < 1e6 => Ok(Some(f as i32)),
        Some(Year::F(f)) => Err(serde::de::Error::custom(format!(
            "year {f} is not a whole number"
        ))),
        Some(Year::S(s)) if s.trim().is_empty() => Ok(None),
        Some(Year::S(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("year \"{s}\" is not a number"))),
    }
}

/// Authors as one string (one author), a list of names, or a list of `{"name": …}` objects.
fn authors<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Author {
        S(String),
        O(Named),
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Authors {
        One(String),
        Many(Vec<Author>),
    }
    Ok(match Option::<Authors>::deserialize(d)? {
        None => Vec::new(),
        Some(Authors::One(s)) => vec![s],
        Some(Authors::Many(v)) => v
            .into_iter()
            .map(|a| match a {
                Author::S(s) => s,
                Author::O(o) => o.name,
            })
            .collect(),
    })
}

impl Recipe {
    /// What makes a recipe unusable as a task: an empty id, contribution or recipe, or an
    /// embedding with a value that is not finite.
    pub fn check(&self) -> Result<(), String> {
        if self.id.trim().is_empty() {
            return Err("\"id\" is empty".into());
        }
        if self.contribution.trim().is_empty() {
            return Err(format!("recipe {}: \"contribution\" is empty", self.id));
        }
        if self.recipe.trim().is_empty() {
            return Err(format!("recipe {}: \"recipe\" is empty", self.id));
        }
        if let Some(e) = &self.contributions_embedding {
            if let Some(i) = e.iter().position(|x| !x.is_finite()) {
                return Err(format!(
                    "recipe {}: contributions_embedding[{i}] is not a finite number",
                    self.id
                ));
            }
        }
        Ok(())
    }

    /// The recipe as a retrieved reference.
    pub fn as_reference(&self) -> Reference {
        Reference {
            contribution: self.contribution.clone(),
            recipe: self.recipe.clone(),
        }
    }
}

/// Read recipes from JSONL: one JSON object a non-blank line (a leading byte-order mark is
/// skipped). Every error names its 1-based line: a line that is not a recipe, an empty id,
/// contribution or recipe, a non-finite embedding value, an embedding whose length differs
/// from the first one's, or an id seen on an earlier line.
pub fn import_jsonl(text: &str) -> Result<Vec<Recipe>, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out: Vec<Recipe> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut dim: Option<(usize, usize)> = None;
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        if l.trim().is_empty() {
            continue;
        }
        let err = |message: String| ImportError::Line { line, message };
        let r: Recipe = serde_json::from_str(l).map_err(|e| err(format!("not a recipe: {e}")))?;
        r.check().map_err(err)?;
        if let Some(e) = &r.contributions_embedding {
            match dim {
                None => dim = Some((e.len(), line)),
                Some((d, first)) if d != e.len() => {
                    return Err(err(format!(
                        "recipe {}: contributions_embedding has {} values, line {first} had {d}",
                        r.id,
                        e.len()
                    )))
                }
                Some(_) => {}
            }
        }
        if let Some(first) = seen.insert(r.id.clone(), line) {
            return Err(err(format!(
                "recipe id {} was already used on line {first}",
                r.id
            )));
        }
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgiving_bibliography() {
        let r: Recipe = serde_json::from_str(
            r#"{"id": 12, "contribution": "X", "recipe": "Y", "title": null, "year": "2021",
                "authors": [{"name": "A. B."}, {"name": "C. D."}], "split": "train"}"#,
        )
        .unwrap();
        assert_eq!(r.id, "12");
        assert_eq!(r.year, Some(2021));
        assert_eq!(r.authors, ["A. B.", "C. D."]);
        assert!(r.title.is_empty() && r.contributions_embedding.is_none());
        let r: Recipe = serde_json::from_str(
            r#"{"id": "a", "contribution": "X", "recipe": "Y", "year": 2020.0, "authors": "Solo"}"#,
        )
        .unwrap();
        assert_eq!(
            (r.year, &r.authors[..]),
            (Some(2020), &["Solo".to_string()][..])
        );
        let back: Recipe = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn errors_name_the_line() {
        let ok =
            r#"{"id": "a", "contribution": "X", "recipe": "Y", "contributions_embedding": [1, 0]}"#;
        let cases = [
            (format!("{ok}\n\n{{oops"), 3, "not a recipe"),
            (format!("{ok}\n{ok}"), 2, "already used on line 1"),
            (
                format!("{ok}\n{{\"id\": \"b\", \"contribution\": \" \", \"recipe\": \"Y\"}}"),
                2,
                "\"contribution\" is empty",
            ),
            (
                format!("{ok}\n{{\"id\": \"b\", \"contribution\": \"X\", \"recipe\": \"Y\", \"contributions_embedding\": [1]}}"),
                2,
                "line 1 had 2",
            ),
            (
                "{\"id\": \"b\", \"contribution\": \"X\"}".to_string(),
                1,
                "missing field `recipe`",
            ),
            (
                "{\"id\": \"b\", \"contribution\": \"X\", \"recipe\": \"Y\", \"year\": \"soon\"}"
                    .to_string(),
                1,
                "year",
            ),
        ];
        for (text, want_line, want) in cases {
            match import_jsonl(&text) {
                Err(ImportError::Line { line, message }) => {
                    assert_eq!(line, want_line, "{message}");
                    assert!(message.contains(want), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(import_jsonl(&format!("\u{feff}{ok}\n")).unwrap().len(), 1);
    }
}
