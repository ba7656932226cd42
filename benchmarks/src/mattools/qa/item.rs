//! The QA items: the reference's file layout, the importer and the task.
//!
//! A QA file (the reference's `pymatgen_code_qa` and `pymatgen_doc_qa`, distributed apart from
//! this product) is a JSON list of `{source, questions: [{question_id, question, choices:
//! {A, B, C, D}, correct_answer}]}`: `source` is whatever the questions were written from (the
//! reference stores a document object there), `question_id` numbers the questions within their
//! source (the reference restarts it at 1 for every source). [`parse_qa_file`] flattens such a
//! file into [`QaTask`]s; [`parse_qa_bundle`] reads several files kept in one JSON object (our
//! shipped `benchmarks/data/mattools_qa.json`). A [`QaTask`] also reads from one JSON object a line
//! (JSONL), which is how `atomworld run` and `atomworld eval` take tasks.
//!
//! Task ids are `<file>/<source index>/<question_id>` (source index from 0, in file order), so
//! they stay unique although `question_id` restarts with every source; a file whose ids would
//! repeat is refused, since results are keyed by task id.

use std::collections::HashSet;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One of the four choices of a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Letter {
    /// Choice A.
    A,
    /// Choice B.
    B,
    /// Choice C.
    C,
    /// Choice D.
    D,
}

impl Letter {
    /// The four letters in order.
    pub const ALL: [Letter; 4] = [Letter::A, Letter::B, Letter::C, Letter::D];

    /// The letter as text (`"A"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Letter::A => "A",
            Letter::B => "B",
            Letter::C => "C",
            Letter::D => "D",
        }
    }

    /// The letter `text` is exactly (upper case, nothing around it), if any.
    pub fn exact(text: &str) -> Option<Letter> {
        Letter::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

impl std::fmt::Display for Letter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The four choices of a question, keyed `A` to `D` as in the files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaChoices {
    /// Choice A.
    #[serde(rename = "A")]
    pub a: String,
    /// Choice B.
    #[serde(rename = "B")]
    pub b: String,
    /// Choice C.
    #[serde(rename = "C")]
    pub c: String,
    /// Choice D.
    #[serde(rename = "D")]
    pub d: String,
}

impl QaChoices {
    /// The text of choice `letter`.
    pub fn get(&self, letter: Letter) -> &str {
        match letter {
            Letter::A => &self.a,
            Letter::B => &self.b,
            Letter::C => &self.c,
            Letter::D => &self.d,
        }
    }
}

/// One question as a QA file holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QaQuestion {
    /// The question's number within its source; the reference writes it as a string (`"1"`),
    /// an integer is read as its decimal text.
    #[serde(deserialize_with = "string_or_integer")]
    pub question_id: String,
    /// The question.
    pub question: String,
    /// The four choices.
    pub choices: QaChoices,
    /// The letter of the correct choice, as the file writes it (checked by the importer).
    pub correct_answer: String,
}

/// One entry of a QA file: a source and the questions written from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QaSource {
    /// What the questions were written from (a document object in the reference's files, a
    /// string or an object in ours).
    pub source: Value,
    /// Its questions.
    pub questions: Vec<QaQuestion>,
}

/// One question made ready to ask: the unit `atomworld run` and `eval` read (one JSON object
/// a line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaTask {
    /// `<file>/<source index>/<question_id>`.
    pub id: String,
    /// The data set (file) it comes from, e.g. `pymatgen_code_qa`: the group it is tabled
    /// under.
    pub file: String,
    /// A short name of its source ([`source_label`]); never shown to the model.
    #[serde(default)]
    pub source: String,
    /// The question.
    pub question: String,
    /// The four choices.
    pub choices: QaChoices,
    /// The correct choice.
    pub correct_answer: Letter,
}

/// Why a QA file cannot be imported, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QaError {
    /// The text is not JSON.
    #[error("{file}: not JSON (line {line}, column {column}): {message}")]
    Json {
        /// The data set name.
        file: String,
        /// Line of the error (from 1).
        line: usize,
        /// Column of the error (from 1).
        column: usize,
        /// What the JSON reader said.
        message: String,
    },
    /// The top level is not what the layout says.
    #[error("{file}: {message}")]
    Layout {
        /// The data set name (or `bundle`).
        file: String,
        /// What was expected and found.
        message: String,
    },
    /// The data set name cannot be used in task ids.
    #[error("data set name {name:?} is empty or contains '/'")]
    BadName {
        /// The name.
        name: String,
    },
    /// A source entry lacks its parts.
    #[error("{file}: source {source_index}: {message}")]
    Source {
        /// The data set name.
        file: String,
        /// Index of the source in the file (from 0).
        source_index: usize,
        /// What is wrong.
        message: String,
    },
    /// A question does not have the layout's fields.
    #[error(
        "{file}: source {source_index}, question {question_index} (question_id {question_id}): \
         {message}"
    )]
    Question {
        /// The data set name.
        file: String,
        /// Index of the source in the file (from 0).
        source_index: usize,
        /// Index of the question in its source (from 0).
        question_index: usize,
        /// Its `question_id` if it could be read, `?` otherwise.
        question_id: String,
        /// What is wrong.
        message: String,
    },
    /// `correct_answer` is not one of the four letters.
    #[error(
        "{file}: source {source_index}, question_id {question_id}: correct_answer {value:?} is \
         not one of A, B, C, D"
    )]
    BadAnswer {
        /// The data set name.
        file: String,
        /// Index of the source in the file (from 0).
        source_index: usize,
        /// The question's `question_id`.
        question_id: String,
        /// What the file says.
        value: String,
    },
    /// The correct choice has no text.
    #[error("{file}: source {source_index}, question_id {question_id}: the correct choice {letter} is empty")]
    EmptyChoice {
        /// The data set name.
        file: String,
        /// Index of the source in the file (from 0).
        source_index: usize,
        /// The question's `question_id`.
        question_id: String,
        /// The correct letter.
        letter: Letter,
    },
    /// Two questions of a source share a `question_id`.
    #[error("{file}: source {source_index}, question_id {question_id}: the id {id} is used twice")]
    Duplicate {
        /// The data set name.
        file: String,
        /// Index of the source in the file (from 0).
        source_index: usize,
        /// The repeated `question_id`.
        question_id: String,
        /// The task id that would repeat.
        id: String,
    },
}

/// The data set name of a file path: its last component without `.json` or `.jsonl`
/// (`data/pymatgen_code_qa.json` → `pymatgen_code_qa`).
pub fn dataset_name(path: &str) -> &str {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    base.strip_suffix(".jsonl")
        .or_else(|| base.strip_suffix(".json"))
        .unwrap_or(base)
}

/// The tasks of the QA file `text` (the reference's layout), named after data set `file`, in
/// file order.
pub fn parse_qa_file(file: &str, text: &str) -> Result<Vec<QaTask>, QaError> {
    let value: Value = serde_json::from_str(text).map_err(|e| QaError::Json {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    tasks_of(file, value)
}

/// Our own questions (`benchmarks/data/mattools_qa.json`, both files of the bundle), shipped with
/// the product for demos and tests.
pub const BUNDLE: &str = include_str!("../../../data/mattools_qa.json");

/// The tasks of a bundle: a JSON object whose keys are data set names and whose values are QA
/// files in the reference's layout (how `benchmarks/data/mattools_qa.json` keeps its two files), in
/// key order.
pub fn parse_qa_bundle(text: &str) -> Result<Vec<QaTask>, QaError> {
    let value: Value = serde_json::from_str(text).map_err(|e| QaError::Json {
        file: "bundle".to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Value::Object(files) = value else {
        return Err(QaError::Layout {
            file: "bundle".to_string(),
            message: format!(
                "expected an object of data set name → QA file, found {}",
                kind_of(&value)
            ),
        });
    };
    let mut tasks = Vec::new();
    for (name, file) in files {
        tasks.extend(tasks_of(&name, file)?);
    }
    Ok(tasks)
}

/// A short name of a source: the text itself for a string; `code_source_file/name` from a
/// reference-style document object (`{"metadata": {"code_source_file", "name"}}`, either part
/// alone if the other is missing); otherwise the compact JSON, cut at 120 characters.
pub fn source_label(source: &Value) -> String {
    if let Value::String(s) = source {
        return s.clone();
    }
    let meta = source.get("metadata").unwrap_or(source);
    let part = |key: &str| meta.get(key).and_then(Value::as_str);
    match (part("code_source_file"), part("name")) {
        (Some(f), Some(n)) => format!("{f}/{n}"),
        (Some(f), None) => f.to_string(),
        (None, Some(n)) => n.to_string(),
        (None, None) if source.is_null() => String::new(),
        (None, None) => source.to_string().chars().take(120).collect(),
    }
}

fn tasks_of(file: &str, value: Value) -> Result<Vec<QaTask>, QaError> {
    if file.is_empty() || file.contains('/') {
        return Err(QaError::BadName {
            name: file.to_string(),
        });
    }
    let Value::Array(sources) = value else {
        return Err(QaError::Layout {
            file: file.to_string(),
            message: format!(
                "expected a list of {{source, questions}} entries, found {}",
                kind_of(&value)
            ),
        });
    };
    let mut tasks = Vec::new();
    let mut ids = HashSet::new();
    for (source_index, entry) in sources.into_iter().enumerate() {
        let source_err = |message: String| QaError::Source {
            file: file.to_string(),
            source_index,
            message,
        };
        let Value::Object(mut entry) = entry else {
            return Err(source_err(format!(
                "expected an object {{source, questions}}, found {}",
                kind_of(&entry)
            )));
        };
        let source = entry.remove("source").unwrap_or(Value::Null);
        let label = source_label(&source);
        let questions = match entry.remove("questions") {
            Some(Value::Array(q)) => q,
            Some(other) => {
                return Err(source_err(format!(
                    "questions is {}, not a list",
                    kind_of(&other)
                )))
            }
            None => return Err(source_err("no questions field".to_string())),
        };
        for (question_index, q) in questions.into_iter().enumerate() {
            let loose_id = q.get("question_id").map_or_else(
                || "?".to_string(),
                |v| v.as_str().map_or_else(|| v.to_string(), str::to_string),
            );
            let q: QaQuestion = serde_json::from_value(q).map_err(|e| QaError::Question {
                file: file.to_string(),
                source_index,
                question_index,
                question_id: loose_id,
                message: e.to_string(),
            })?;
            let Some(correct) = Letter::exact(q.correct_answer.trim()) else {
                return Err(QaError::BadAnswer {
                    file: file.to_string(),
                    source_index,
                    question_id: q.question_id,
                    value: q.correct_answer,
                });
            };
            if q.choices.get(correct).trim().is_empty() {
                return Err(QaError::EmptyChoice {
                    file: file.to_string(),
                    source_index,
                    question_id: q.question_id,
                    letter: correct,
                });
            }
            let id = format!("{file}/{source_index}/{}", q.question_id);
            if !ids.insert(id.clone()) {
                return Err(QaError::Duplicate {
                    file: file.to_string(),
                    source_index,
                    question_id: q.question_id,
                    id,
                });
            }
            tasks.push(QaTask {
                id,
                file: file.to_string(),
                source: label.clone(),
                question: q.question,
                choices: q.choices,
                correct_answer: correct,
            });
        }
    }
    Ok(tasks)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Reads a `question_id` written as a string or an integer.
fn string_or_integer<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Integer(i64),
    }
    Ok(match Id::deserialize(d)? {
        Id::Text(s) => s,
        Id::Integer(n) => n.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(question_id: &str, correct: &str) -> String {
        format!(
            r#"[{{"source": {{"page_content": "x", "metadata": {{"code_source_file": "core/a.py", "name": "f"}}}},
                "questions": [{{"question_id": {question_id}, "question": "Q?",
                  "choices": {{"A": "a", "B": "b", "C": "c", "D": "d"}}, "correct_answer": {correct}}}]}}]"#
        )
    }

    #[test]
    fn flattens_sources_into_tasks() {
        let text = r#"[
          {"source": "s0", "questions": [
            {"question_id": "1", "question": "q1", "choices": {"A": "a", "B": "b", "C": "c", "D": "d"}, "correct_answer": "B"},
            {"question_id": "2", "question": "q2", "choices": {"A": "a", "B": "b", "C": "c", "D": "d"}, "correct_answer": " D "}]},
          {"source": {"metadata": {"code_source_file": "pymatgen/core/lattice.py", "name": "Lattice"}}, "questions": [
            {"question_id": "1", "question": "q3", "choices": {"A": "a", "B": "b", "C": "c", "D": "d"}, "correct_answer": "A"}]}
        ]"#;
        let tasks = parse_qa_file("pymatgen_code_qa", text).unwrap();
        let ids: Vec<_> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "pymatgen_code_qa/0/1",
                "pymatgen_code_qa/0/2",
                "pymatgen_code_qa/1/1"
            ]
        );
        assert_eq!(tasks[1].correct_answer, Letter::D);
        assert_eq!(tasks[2].source, "pymatgen/core/lattice.py/Lattice");
        assert_eq!(tasks[0].source, "s0");
        assert!(tasks.iter().all(|t| t.file == "pymatgen_code_qa"));
    }

    #[test]
    fn integer_question_ids_read_as_text() {
        let tasks = parse_qa_file("f", &one("7", "\"C\"")).unwrap();
        assert_eq!(tasks[0].id, "f/0/7");
        assert_eq!(tasks[0].source, "core/a.py/f");
    }

    #[test]
    fn errors_say_where() {
        let e = parse_qa_file("f", &one("\"3\"", "\"E\"")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f: source 0, question_id 3: correct_answer \"E\" is not one of A, B, C, D"
        );
        let e = parse_qa_file("f", &one("\"3\"", "\"b\"")).unwrap_err();
        assert!(matches!(e, QaError::BadAnswer { .. }), "{e}");
        let text = r#"[{"source": 1, "questions": []},
            {"source": 2, "questions": [{"question_id": "4", "question": "q", "choices": {"A": "a", "B": "b", "C": "c"}, "correct_answer": "A"}]}]"#;
        let e = parse_qa_file("f", text).unwrap_err();
        assert!(
            matches!(&e, QaError::Question { source_index: 1, question_index: 0, question_id, message, .. }
                if question_id == "4" && message.contains("`D`")),
            "{e}"
        );
        let e = parse_qa_file("f", r#"[{"source": 1}]"#).unwrap_err();
        assert_eq!(e.to_string(), "f: source 0: no questions field");
        let e = parse_qa_file("f", "[1,").unwrap_err();
        assert!(matches!(e, QaError::Json { line: 1, .. }), "{e}");
        let e = parse_qa_file("f", "{}").unwrap_err();
        assert!(matches!(e, QaError::Layout { .. }), "{e}");
        let e = parse_qa_file("a/b", "[]").unwrap_err();
        assert!(matches!(e, QaError::BadName { .. }), "{e}");
    }

    #[test]
    fn empty_correct_choice_and_duplicates_are_refused() {
        let text = r#"[{"source": "s", "questions": [
            {"question_id": "1", "question": "q", "choices": {"A": " ", "B": "b", "C": "c", "D": "d"}, "correct_answer": "A"}]}]"#;
        let e = parse_qa_file("f", text).unwrap_err();
        assert!(
            matches!(
                e,
                QaError::EmptyChoice {
                    letter: Letter::A,
                    ..
                }
            ),
            "{e}"
        );
        let q = r#"{"question_id": "1", "question": "q", "choices": {"A": "a", "B": "b", "C": "c", "D": "d"}, "correct_answer": "A"}"#;
        let text = format!(r#"[{{"source": "s", "questions": [{q}, {q}]}}]"#);
        let e = parse_qa_file("f", &text).unwrap_err();
        assert!(
            matches!(&e, QaError::Duplicate { id, .. } if id == "f/0/1"),
            "{e}"
        );
    }

    #[test]
    fn bundles_and_jsonl_lines() {
        let text = format!(
            r#"{{"code": {}, "doc": {}}}"#,
            one("1", "\"A\""),
            one("1", "\"B\"")
        );
        let tasks = parse_qa_bundle(&text).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(
            (tasks[0].id.as_str(), tasks[1].file.as_str()),
            ("code/0/1", "doc")
        );
        assert!(matches!(parse_qa_bundle("[]"), Err(QaError::Layout { .. })));
        let line = serde_json::to_string(&tasks[1]).unwrap();
        assert!(!line.contains('\n'));
        let back: QaTask = serde_json::from_str(&line).unwrap();
        assert_eq!(back, tasks[1]);
        let bad = line.replace("\"correct_answer\":\"B\"", "\"correct_answer\":\"E\"");
        assert!(serde_json::from_str::<QaTask>(&bad).is_err());
    }

    #[test]
    fn dataset_names_from_paths() {
        assert_eq!(
            dataset_name("x/y/pymatgen_code_qa.json"),
            "pymatgen_code_qa"
        );
        assert_eq!(dataset_name("doc.jsonl"), "doc");
        assert_eq!(dataset_name("C:\\d\\doc_qa"), "doc_qa");
    }

    #[test]
    fn letters() {
        assert_eq!(Letter::exact("C"), Some(Letter::C));
        assert_eq!(Letter::exact("c"), None);
        assert_eq!(Letter::exact(" C"), None);
        assert_eq!(Letter::D.to_string(), "D");
    }
}
