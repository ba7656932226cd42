//! A tool-usage task: its question, its properties and its verification function.

use serde::{Deserialize, Serialize};

/// Why a task folder's files cannot be read as a task.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TaskFileError {
    /// `properties.json` is not the expected JSON.
    #[error("{task}: properties.json: {message}")]
    Properties {
        /// The task's name.
        task: String,
        /// What is wrong.
        message: String,
    },
    /// The verification source does not define the task's function.
    #[error("{task}: new_unit_test.py does not define `def {task}(properties)`")]
    NoVerification {
        /// The task's name.
        task: String,
    },
}

/// One property the model's function must return.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Property {
    /// The key in the returned dict.
    pub name: String,
    /// What it is.
    pub description: String,
    /// Its format as `properties.json` states it (`float`, `list`, `np.allclose`, …).
    pub format: String,
    /// The recorded value (descriptive; the verification function holds the checked one).
    pub value: serde_json::Value,
}

/// A MatTools tool-usage task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodeTask {
    /// The task's name: its folder's name and its verification function's name.
    pub name: String,
    /// The question as the reference gives it (`question.txt`).
    pub question: String,
    /// The properties to return, in `properties.json` order (their count is the task's
    /// number of subtasks).
    pub properties: Vec<Property>,
    /// The verification source (`new_unit_test.py`), defining `def <name>(properties)`.
    pub verification: String,
    /// Why the task cannot run with the data at hand (its data files are missing), if so.
    #[serde(default)]
    pub unavailable: Option<String>,
}

#[derive(Deserialize)]
struct PropertiesFile {
    properties: Ordered,
}

/// A JSON object's entries in file order (serde_json's `Map` sorts its keys unless the
/// workspace-wide `preserve_order` feature is on, which would reorder every other output).
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of properties")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry::<String, serde_json::Value>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V)
    }
}

impl CodeTask {
    /// Reads a task folder's three files and marks the task unavailable when it needs data
    /// that is not here (see [`unavailable_data`]; `missing`: the lines of
    /// `missing-files.txt`, `present`: the names at the top of the data folder, if known).
    pub fn from_files(
        name: &str,
        question: &str,
        properties_json: &str,
        verification: &str,
        missing: &[String],
        present: Option<&[String]>,
    ) -> Result<CodeTask, TaskFileError> {
        let file: PropertiesFile =
            serde_json::from_str(properties_json).map_err(|e| TaskFileError::Properties {
                task: name.to_string(),
                message: e.to_string(),
            })?;
        let mut properties = Vec::new();
        for (key, v) in file.properties.0 {
            let text = |field: &str| {
                v.get(field)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            properties.push(Property {
                description: text("description"),
                format: text("format"),
                value: v.get("value").cloned().unwrap_or(serde_json::Value::Null),
                name: key,
            });
        }
        if properties.is_empty() {
            return Err(TaskFileError::Properties {
                task: name.to_string(),
                message: "no properties".into(),
            });
        }
        if !verification.contains(&format!("def {name}(")) {
            return Err(TaskFileError::NoVerification {
                task: name.to_string(),
            });
        }
        Ok(CodeTask {
            name: name.to_string(),
            question: question.to_string(),
            properties,
            verification: verification.to_string(),
            unavailable: unavailable_data(question, missing, present),
        })
    }
}

/// The missing data a question refers to, if any:
/// - a `missing` path (`MISSING Mg_Ga/q=0/LOCPOT.gz`) whose first component (`Mg_Ga`) and
///   file name (`LOCPOT.gz`) both appear in the question;
/// - with `present` (the data folder's top-level names), a top-level name the question reads
///   (after `test_files/`, as `file_path / "NAME"` or `test_dir / "NAME"`, the questions'
///   spellings, or as the first part of a quoted path `"NAME/…"`) that is not there (the
///   `v_Ga` folder is left out of our copy).
pub fn unavailable_data(
    question: &str,
    missing: &[String],
    present: Option<&[String]>,
) -> Option<String> {
    let mut named: Vec<String> = Vec::new();
    let mut add = |n: String| {
        if !named.contains(&n) {
            named.push(n);
        }
    };
    for line in missing {
        let path = line.trim().trim_start_matches("MISSING").trim();
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
            continue;
        };
        if mentions(question, first) && (first == last || question.contains(last)) {
            add(path.to_string());
        }
    }
    if let Some(present) = present {
        for name in read_names(question) {
            if !present.iter().any(|p| p == &name) {
                add(name);
            }
        }
    }
    if named.is_empty() {
        None
    } else {
        Some(format!(
            "needs data that is not available: {}",
            named.join(", ")
        ))
    }
}

/// The top-level data names a question reads.
fn read_names(question: &str) -> Vec<String> {
    let mut out = Vec::new();
    let first = |s: &str| -> Option<String> {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_.=+-".contains(c)))
            .unwrap_or(s.len());
        let name = s[..end].trim_end_matches('.');
        (!name.is_empty()).then(|| name.to_string())
    };
    for (i, _) in question.match_indices("test_files/") {
        out.extend(first(&question[i + "test_files/".len()..]));
    }
    // A quoted relative path (`"v_Ga/ccd_0_-1"`, `f"v_Ga/ccd_{q1}_{q2}"`): its first part.
    for (i, _) in question.match_indices('"') {
        let rest = &question[i + 1..];
        if let Some(slash) = rest.find('/') {
            let head = &rest[..slash];
            let plain = !head.is_empty()
                && head
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.=+-".contains(c))
                && head.chars().any(|c| c.is_ascii_alphabetic() || c == '_');
            // The questions' own prefix of the data path is where the data is linked.
            if plain && head != "tool_source_code" {
                out.push(head.to_string());
            }
        }
    }
    for var in ["file_path", "test_dir"] {
        for (i, _) in question.match_indices(var) {
            let rest = question[i + var.len()..].trim_start();
            if let Some(q) = rest.strip_prefix('/').map(str::trim_start) {
                if let Some(q) = q.strip_prefix('"') {
                    out.extend(first(q));
                }
            }
        }
    }
    out
}

/// Whether `word` occurs in `text` not as part of a longer name.
fn mentions(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(|c| is_name(c) && c != '.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_task_and_marks_missing_data() {
        let props = r#"{"JSON_File_Name": "t", "properties": {
            "b": {"description": "B", "format": "int", "value": 2},
            "a": {"description": "A", "format": "list", "value": ["x"]}}}"#;
        let t = CodeTask::from_files(
            "test_x",
            "Read `Mg_Ga/bulk` and GaN.vasp",
            props,
            "def test_x(properties):\n    return 'ok'\n",
            &[
                "MISSING Mg_Ga/q=0/LOCPOT.gz".into(),
                "MISSING CHGCAR.x".into(),
            ],
            None,
        )
        .unwrap();
        let names: Vec<_> = t.properties.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["b", "a"], "properties.json order");
        // Mg_Ga is named but not its LOCPOT.gz: available.
        assert_eq!(t.unavailable, None);
        let missing = ["MISSING Mg_Ga/q=0/LOCPOT.gz".to_string()];
        let q = "fold = test_dir / \"Mg_Ga\"; read fold / \"LOCPOT.gz\"";
        assert_eq!(
            unavailable_data(q, &missing, None).as_deref(),
            Some("needs data that is not available: Mg_Ga/q=0/LOCPOT.gz")
        );
        let present = ["GaN.vasp".to_string(), "Mg_Ga".to_string()];
        let q = "at `tool_source_code/pymatgen-analysis-defects/tests/test_files/v_Ga/ccd_0_-1`, \
                 file_path / \"GaN.vasp\", test_dir / \"Mg_Ga\"";
        assert_eq!(
            unavailable_data(q, &[], Some(&present)).as_deref(),
            Some("needs data that is not available: v_Ga")
        );
        let err = CodeTask::from_files("test_y", "", props, "def other(p): pass", &[], None);
        assert!(matches!(err, Err(TaskFileError::NoVerification { .. })));
    }
}
