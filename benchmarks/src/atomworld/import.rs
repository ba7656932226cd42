//! Importing AtomWorld tasks (and recorded model answers) from the upstream data layouts.
//!
//! Three layouts are recognised, by shape, so a user can hand over whatever file they have:
//! - **task triples** (the shared `upstream-tasks.jsonl`): one JSON object per line with
//!   `input_cif`, `action_prompt`, `target_cif` (plus `action`, `frame_index`, …);
//! - **task data** (the reference repository's `data/simple/<Action>.json`): a JSON list of
//!   `{"action_type", "problem_id", "mp_id", "action_prompt", "input", "output"}` (its loader
//!   renames `input`/`output` to `input_cif`/`output_cif`; both spellings are accepted);
//! - **evaluation results** (`results/AtomWorld/simple/<model>/<action>/<time>/
//!   evaluation_results.json`): `{"metrics": …, "results": [{"input_cif", "action_prompt",
//!   "target_cif", "generated_output", "correct", "wrong_type", "rmsd", "max_dist",
//!   "frame_index", …}]}`, whose model answers and recorded verdicts come along so they can be
//!   re-scored and compared. Its error labels are spelled as the reference spells them
//!   (`CIFParsingError` is our `CifParsingError`).
//!
//! Each imported task gets its prompt parsed against its input CIF; a prompt that does not
//! parse (or an input that does not read) is kept with the reason, not dropped, so an import
//! never loses a record silently.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::evaluate::Label;
use super::task::AtomWorldTask;
use super::{apply, parse_prompt, Action, Semantics};
use engine::cif::read_cif;

/// Which upstream layout a file was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// JSON lines of task triples.
    Triples,
    /// A JSON list of task records (`data/simple/*.json`).
    TaskData,
    /// `evaluation_results.json` with model answers and verdicts.
    EvaluationResults,
}

/// What the reference recorded about a model's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedVerdict {
    /// `correct` in the file.
    pub correct: bool,
    /// `wrong_type` mapped to our label (`None` for a success or an unknown spelling).
    pub label: Option<Label>,
    /// `wrong_type` as written.
    pub wrong_type: Option<String>,
    /// `rmsd` (normalised, as pymatgen reports it).
    pub rms: Option<f64>,
    /// `max_dist` (normalised).
    pub max_dist: Option<f64>,
}

/// One imported task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportedTask {
    /// The task: its id is where it came from (`<record number>` plus whatever id the
    /// record carries), input and target exactly as stored.
    #[serde(flatten)]
    pub task: AtomWorldTask,
    /// The parsed action (checked against the input: indices in range, …), or why not.
    pub action: Result<Action, String>,
    /// The model's raw answer (evaluation results only).
    pub response: Option<String>,
    /// The recorded verdict (evaluation results only).
    pub recorded: Option<RecordedVerdict>,
}

/// An import that could not start: the file is in none of the known layouts.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// Not JSON or JSON lines; where the first line fails.
    #[error("line {line}: not JSON ({message})")]
    NotJson {
        /// 1-based line of the first failure.
        line: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// JSON, but not one of the layouts.
    #[error("{0}")]
    UnknownLayout(String),
    /// A record lacks a field every layout needs.
    #[error("record {record}: missing {field:?}")]
    MissingField {
        /// 0-based record number.
        record: usize,
        /// The missing key.
        field: &'static str,
    },
}

/// The label our evaluator uses for the reference's spelling of an error type.
pub fn label_from_reference(wrong_type: &str) -> Option<Label> {
    Some(match wrong_type {
        "OutputFormatError" => Label::OutputFormatError,
        "CIFParsingError" | "CifParsingError" => Label::CifParsingError,
        "AtomCountMismatch" => Label::AtomCountMismatch,
        "StructureMismatch" => Label::StructureMismatch,
        _ => return None,
    })
}

fn text(record: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| record.get(*k).and_then(Value::as_str).map(str::to_string))
}

fn number(record: &Value, key: &str) -> Option<f64> {
    record.get(key).and_then(Value::as_f64)
}

/// Reads a file in any of the [`Layout`]s.
pub fn import(content: &str) -> Result<(Layout, Vec<ImportedTask>), ImportError> {
    // A byte-order mark, as some editors write, is not content.
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let trimmed = content.trim_start();
    let (layout, records): (Layout, Vec<Value>) = match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Array(items)) => (Layout::TaskData, items),
        Ok(Value::Object(mut map)) if map.contains_key("results") => match map.remove("results") {
            Some(Value::Array(items)) => (Layout::EvaluationResults, items),
            _ => {
                return Err(ImportError::UnknownLayout(
                    "\"results\" is not a list of records".into(),
                ))
            }
        },
        Ok(Value::Object(map)) if map.contains_key("input_cif") => {
            (Layout::Triples, vec![Value::Object(map)])
        }
        Ok(_) => {
            return Err(ImportError::UnknownLayout(
                "expected JSON lines of task triples, a list of task records, or an \
                 evaluation_results.json object with \"results\""
                    .into(),
            ))
        }
        // Not one JSON value: JSON lines.
        Err(_) => {
            let mut items = Vec::new();
            for (i, line) in content.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v = serde_json::from_str(line).map_err(|e| ImportError::NotJson {
                    line: i + 1,
                    message: e.to_string(),
                })?;
                items.push(v);
            }
            (Layout::Triples, items)
        }
    };
    let tasks = records
        .iter()
        .enumerate()
        .map(|(n, r)| task(layout, n, r))
        .collect::<Result<_, _>>()?;
    Ok((layout, tasks))
}

fn task(layout: Layout, n: usize, r: &Value) -> Result<ImportedTask, ImportError> {
    let missing = |field| ImportError::MissingField { record: n, field };
    let input_cif = text(r, &["input_cif", "input"]).ok_or(missing("input_cif"))?;
    let action_prompt = text(r, &["action_prompt"]).ok_or(missing("action_prompt"))?;
    let target_cif = text(r, &["target_cif", "output_cif", "output"]);
    let action = read_cif(&input_cif)
        .map_err(|e| format!("input_cif: {e}"))
        .and_then(|s| {
            let action = parse_prompt(&action_prompt, &s).map_err(|e| e.to_string())?;
            // Parameters that do not fit this structure (an index out of range, …) too.
            apply(&s, &action, Semantics::Reference).map_err(|e| e.to_string())?;
            Ok(action)
        });
    let mut id = n.to_string();
    for key in ["problem_id", "action", "action_type"] {
        if let Some(v) = text(r, &[key]) {
            id.push(':');
            id.push_str(&v);
        }
    }
    if let Some(f) = r.get("frame_index").and_then(Value::as_i64) {
        id.push_str(&format!(":frame{f}"));
    }
    let (response, recorded) = if layout == Layout::EvaluationResults {
        let wrong_type = text(r, &["wrong_type"]);
        let recorded = r
            .get("correct")
            .and_then(Value::as_bool)
            .map(|correct| RecordedVerdict {
                correct,
                label: if correct {
                    Some(Label::Success)
                } else {
                    wrong_type.as_deref().and_then(label_from_reference)
                },
                wrong_type,
                rms: number(r, "rmsd"),
                max_dist: number(r, "max_dist").or_else(|| number(r, "max_diff")),
            });
        let mut output = text(r, &["generated_output"]);
        // For AtomCountMismatch rows the reference stored the CIF it had extracted, not the
        // reply (the reference's data sets): put the tags back so the answer scores as the reference scored it.
        let count_mismatch = recorded
            .as_ref()
            .is_some_and(|v| v.label == Some(Label::AtomCountMismatch));
        if count_mismatch {
            if let Some(o) = output.as_mut().filter(|o| !o.contains("<cif>")) {
                *o = format!("<cif>\n{}\n</cif>", o.trim());
            }
        }
        (output, recorded)
    } else {
        (None, None)
    };
    Ok(ImportedTask {
        task: AtomWorldTask {
            id,
            input_cif,
            action_prompt,
            target_cif,
        },
        action,
        response,
        recorded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomworld::ActionKind;

    const CIF: &str = "data_x\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_occupancy\nNa Na0 0 0 0 1\nCl Cl1 0.5 0.5 0.5 1\n";

    #[test]
    fn the_three_layouts_are_recognised() {
        let triple = serde_json::json!({"action": "remove", "frame_index": 3, "input_cif": CIF,
            "action_prompt": "Remove the atom at index 1 from the cif file.", "target_cif": CIF});
        let lines = format!("{triple}\n\n{triple}\n");
        let (layout, tasks) = import(&lines).unwrap();
        assert_eq!((layout, tasks.len()), (Layout::Triples, 2));
        assert_eq!(tasks[0].task.id, "0:remove:frame3");
        assert_eq!(tasks[0].action.as_ref().unwrap().kind(), ActionKind::Remove);

        let data = serde_json::json!([{"action_type": "SwapAtomsAction", "problem_id": "p-1",
            "mp_id": "mp-22862", "action_prompt": "Swap atoms at indices 0 and 1 in the cif file.",
            "input": CIF, "output": CIF}]);
        let (layout, tasks) = import(&data.to_string()).unwrap();
        assert_eq!(layout, Layout::TaskData);
        assert_eq!(tasks[0].task.id, "0:p-1:SwapAtomsAction");
        assert_eq!(tasks[0].task.target_cif.as_deref(), Some(CIF));
        assert_eq!(tasks[0].action.as_ref().unwrap().kind(), ActionKind::Swap);

        let results = serde_json::json!({"metrics": {"summary": {}}, "results": [
            {"correct": false, "input_cif": CIF, "action_prompt": "Remove the atom at index 7 from the cif file.",
             "generated_cif": null, "target_cif": CIF, "rmsd": null, "max_dist": null,
             "generated_output": "no idea", "frame_index": null, "repeat_index": 0,
             "wrong_type": "CIFParsingError"},
            {"correct": true, "input_cif": CIF, "action_prompt": "Remove the atom at index 0 from the cif file.",
             "target_cif": CIF, "rmsd": 0.01, "max_dist": 0.02, "generated_output": "<cif>…</cif>",
             "wrong_type": null}]});
        let (layout, tasks) = import(&results.to_string()).unwrap();
        assert_eq!(layout, Layout::EvaluationResults);
        let bad = &tasks[0];
        assert!(
            bad.action.as_ref().unwrap_err().contains("index 7"),
            "{:?}",
            bad.action
        );
        let rec = bad.recorded.as_ref().unwrap();
        assert_eq!(
            (rec.correct, rec.label),
            (false, Some(Label::CifParsingError))
        );
        assert_eq!(bad.response.as_deref(), Some("no idea"));
        let good = tasks[1].recorded.as_ref().unwrap();
        assert_eq!(
            (good.label, good.rms, good.max_dist),
            (Some(Label::Success), Some(0.01), Some(0.02))
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(matches!(
            import("{\"input_cif\": \"x\"}\nnot json\n"),
            Err(ImportError::NotJson { line: 2, .. })
        ));
        assert!(matches!(import("42"), Err(ImportError::UnknownLayout(_))));
        assert_eq!(
            import("[{\"input\": \"x\"}]"),
            Err(ImportError::MissingField {
                record: 0,
                field: "action_prompt"
            })
        );
    }
}
