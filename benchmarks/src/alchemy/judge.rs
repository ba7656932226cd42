//! The judge (LLM-as-a-judge): its two messages, the reading of its reply, the single
//! re-ask, and the verdict.
//!
//! The judge gets the reference's messages, verbatim: its published system prompt (an expert
//! materials scientist scoring an AI-generated recipe against the ground truth on seven
//! criteria and overall, 1-5 in 0.5 steps, reasoning first, then a fenced JSON object of
//! eight float keys) and its user template: a newline, "Please evaluate the following:",
//! "Target Material:" X, "AI-Generated Recipe:" the prediction, "Ground Truth Recipe:" Y,
//! blank-line separated.
//!
//! Reading a reply (ours; the reference does not parse): the content of the **last** fenced
//! block tagged `json` (any case), else the **last** top-level `{…}` of the reply that is a
//! JSON object. It must have all eight keys ([`KEYS`]), each a JSON number in [1, 5]. Extra
//! keys are ignored; a number off the 0.5 grid is accepted and listed in the verdict
//! (`off_grid`). A reply that cannot be read is asked again **once** (through
//! [`Suite::more_needs`](crate::task::Suite::more_needs): the same conversation, the failed
//! reply as the judge's turn, and [`correction`]); if the second reply cannot be read
//! either, or a judge call fails, the verdict is [`AlchemyLabel::JudgeFailed`] with the
//! reason and the raw reply: counted and shown, never dropped. A failed call is not asked
//! again here (the gateway retries calls); only unreadable text is.

use serde::{Deserialize, Serialize};

use crate::task::{Message, NeedAnswer, VerdictView, ViewTable};

/// The eight keys of a judge's JSON, in the order of the protocol: seven criteria, then the
/// overall score.
pub const KEYS: [&str; 8] = [
    "materials_appropriateness_score",
    "equipment_appropriateness_score",
    "procedure_completeness_score",
    "procedure_similarity_score",
    "procedure_feasibility_score",
    "characterization_appropriateness_score",
    "characterization_similarity_score",
    "overall_score",
];

/// The judge's system message: AlchemyBench's published judge prompt, verbatim
/// (`experiment/prompts/judge.txt` of HeegyuKim/AlchemyBench, MIT; `benchmarks/data/README.md`).
pub const JUDGE_SYSTEM: &str = include_str!("../../data/alchemy_judge_system.txt");

/// The judge's user message for target X, a prediction and the ground truth Y.
pub fn judge_user(contribution: &str, prediction: &str, ground_truth: &str) -> String {
    format!(
        "\nPlease evaluate the following:\n\nTarget Material:\n{contribution}\n\nAI-Generated Recipe:\n{prediction}\n\nGround Truth Recipe:\n{ground_truth}"
    )
}

/// The judge conversation: system, then user.
pub fn judge_messages(contribution: &str, prediction: &str, ground_truth: &str) -> Vec<Message> {
    vec![
        Message::system(JUDGE_SYSTEM),
        Message::user(judge_user(contribution, prediction, ground_truth)),
    ]
}

/// The request that follows an unreadable reply, naming what was wrong.
pub fn correction(error: &JudgeError) -> String {
    format!(
        "Your reply could not be read: {error}. Reply again, ending with one ```json fenced block that holds exactly the eight keys ({}), each a number from 1.0 to 5.0 in steps of 0.5.",
        KEYS.join(", ")
    )
}

/// The re-ask conversation: the first conversation, the unreadable reply as the judge's
/// turn, and [`correction`].
pub fn reask_messages(first: &[Message], reply: &str, error: &JudgeError) -> Vec<Message> {
    let mut m = first.to_vec();
    m.push(Message::assistant(reply));
    m.push(Message::user(correction(error)));
    m
}

/// Why a judge reply could not be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JudgeError {
    /// The judge call itself failed.
    #[error("the judge call failed: {message}")]
    Call {
        /// The gateway's error.
        message: String,
    },
    /// No answer was given for the judge need.
    #[error("no judge answer was given")]
    Missing,
    /// The last ```json block is not a JSON object.
    #[error("the last ```json block is not a JSON object ({message})")]
    BadFence {
        /// The JSON parser's complaint.
        message: String,
    },
    /// There is neither a ```json block nor a `{…}` JSON object in the reply.
    #[error("the reply has no JSON object")]
    NoJson,
    /// Keys of [`KEYS`] are missing.
    #[error("the JSON object lacks {}", .keys.join(", "))]
    MissingKeys {
        /// The missing keys, in [`KEYS`] order.
        keys: Vec<String>,
    },
    /// A key's value is not a number.
    #[error("\"{key}\" is not a number ({value})")]
    NotANumber {
        /// The key.
        key: String,
        /// Its value, as JSON.
        value: String,
    },
    /// A key's value is outside [1, 5].
    #[error("\"{key}\" = {value} is outside 1-5")]
    OutOfRange {
        /// The key.
        key: String,
        /// Its value.
        value: f64,
    },
}

/// A judge's eight scores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeScores {
    /// Materials appropriateness.
    pub materials_appropriateness_score: f64,
    /// Equipment appropriateness.
    pub equipment_appropriateness_score: f64,
    /// Procedure completeness.
    pub procedure_completeness_score: f64,
    /// Procedure similarity (to the ground truth).
    pub procedure_similarity_score: f64,
    /// Procedure feasibility.
    pub procedure_feasibility_score: f64,
    /// Characterization appropriateness.
    pub characterization_appropriateness_score: f64,
    /// Characterization similarity (to the ground truth).
    pub characterization_similarity_score: f64,
    /// The judge's own overall score (not computed from the others).
    pub overall_score: f64,
}

impl JudgeScores {
    /// The eight values in [`KEYS`] order.
    pub fn values(&self) -> [f64; 8] {
        [
            self.materials_appropriateness_score,
            self.equipment_appropriateness_score,
            self.procedure_completeness_score,
            self.procedure_similarity_score,
            self.procedure_feasibility_score,
            self.characterization_appropriateness_score,
            self.characterization_similarity_score,
            self.overall_score,
        ]
    }

    fn from_values(v: [f64; 8]) -> Self {
        Self {
            materials_appropriateness_score: v[0],
            equipment_appropriateness_score: v[1],
            procedure_completeness_score: v[2],
            procedure_similarity_score: v[3],
            procedure_feasibility_score: v[4],
            characterization_appropriateness_score: v[5],
            characterization_similarity_score: v[6],
            overall_score: v[7],
        }
    }

    /// The mean of the seven criteria (everything but `overall_score`).
    pub fn mean7(&self) -> f64 {
        self.values()[..7].iter().sum::<f64>() / 7.0
    }
}

/// A reply read: the scores and the keys whose value is off the 0.5 grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The eight scores.
    pub scores: JudgeScores,
    /// Keys whose value is not a multiple of 0.5 (accepted, noted).
    pub off_grid: Vec<String>,
}

/// Every top-level JSON object in `text`, in order, by the end of each.
fn json_objects(text: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = text.get(from..).and_then(|t| t.find('{')) {
        let start = from + rel;
        let mut it = serde_json::Deserializer::from_str(&text[start..])
            .into_iter::<serde_json::Map<String, serde_json::Value>>();
        match it.next() {
            Some(Ok(o)) => {
                out.push(o);
                from = start + it.byte_offset();
            }
            _ => from = start + 1,
        }
    }
    out
}

/// The content of the last fenced block whose info string is `json` (any case). A block
/// opens on a line that starts (after spaces) with "```" and closes on a line that is only
/// backticks (three or more), or at a line ending in "```" (the content then stops before
/// them); a block left open runs to the end of the reply.
fn last_json_fence(text: &str) -> Option<&str> {
    const FENCE: &str = "```";
    let mut found = None;
    // The open block: whether it is tagged json, and where its content starts.
    let mut open: Option<(bool, usize)> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        match open {
            None => {
                if let Some(info) = t.strip_prefix(FENCE) {
                    let info = info.trim_start_matches('`').trim();
                    open = Some((info.eq_ignore_ascii_case("json"), pos + line.len()));
                }
            }
            Some((json, start)) => {
                if t.ends_with(FENCE) {
                    let end = if t.bytes().all(|b| b == b'`') {
                        pos
                    } else {
                        pos + line.trim_end().len() - FENCE.len()
                    };
                    if json {
                        found = text.get(start..end);
                    }
                    open = None;
                }
            }
        }
        pos += line.len();
    }
    if let Some((true, start)) = open {
        found = text.get(start..);
    }
    found
}

/// The JSON object a reply gives: the last ```json block, else the last `{…}`.
pub fn extract_object(
    reply: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, JudgeError> {
    if let Some(block) = last_json_fence(reply) {
        return match serde_json::from_str::<serde_json::Value>(block.trim()) {
            Ok(serde_json::Value::Object(o)) => Ok(o),
            Ok(other) => Err(JudgeError::BadFence {
                message: format!("it holds {}", kind_of(&other)),
            }),
            Err(e) => Err(JudgeError::BadFence {
                message: e.to_string(),
            }),
        };
    }
    json_objects(reply).pop().ok_or(JudgeError::NoJson)
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Reads a judge reply (see the module docs for the rules).
pub fn parse_reply(reply: &str) -> Result<Reading, JudgeError> {
    let o = extract_object(reply)?;
    let missing: Vec<String> = KEYS
        .iter()
        .filter(|k| !o.contains_key(**k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(JudgeError::MissingKeys { keys: missing });
    }
    let mut values = [0.0; 8];
    let mut off_grid = Vec::new();
    for (slot, key) in values.iter_mut().zip(KEYS) {
        let raw = o.get(key).unwrap_or(&serde_json::Value::Null);
        let Some(v) = raw.as_f64() else {
            return Err(JudgeError::NotANumber {
                key: key.into(),
                value: raw.to_string(),
            });
        };
        if !(1.0..=5.0).contains(&v) {
            return Err(JudgeError::OutOfRange {
                key: key.into(),
                value: v,
            });
        }
        if (v * 2.0).fract() != 0.0 {
            off_grid.push(key.to_string());
        }
        *slot = v;
    }
    Ok(Reading {
        scores: JudgeScores::from_values(values),
        off_grid,
    })
}

/// The verdict's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AlchemyLabel {
    /// The judge's reply was read: eight scores.
    Scored,
    /// The judge failed (a failed call, or a reply unreadable twice): counted, no scores.
    JudgeFailed,
}

impl AlchemyLabel {
    /// The label's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            AlchemyLabel::Scored => "Scored",
            AlchemyLabel::JudgeFailed => "JudgeFailed",
        }
    }
}

/// The verdict on one predicted recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlchemyVerdict {
    /// The label.
    pub label: AlchemyLabel,
    /// The eight scores, when the judge's reply was read.
    pub scores: Option<JudgeScores>,
    /// The judge's `overall_score`.
    pub overall: Option<f64>,
    /// The mean of the seven criteria.
    pub mean7: Option<f64>,
    /// Keys whose score is off the 0.5 grid (accepted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_grid: Vec<String>,
    /// Whether the judge was asked a second time (its first reply was unreadable).
    #[serde(default)]
    pub reasked: bool,
    /// Why the judge failed (the last failure when it was asked twice); for a scored
    /// re-ask, why the first reply was unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<JudgeError>,
    /// The judge's unreadable replies, in order (empty when scored at the first try).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_raw: Vec<String>,
}

impl AlchemyVerdict {
    /// What a page shows: the judge's eight scores by criterion, the mean of the seven, the
    /// scores off the 0.5 grid, and the replies it could not read.
    pub fn view(&self) -> VerdictView {
        let mut view = VerdictView::default();
        if let Some(mean7) = self.mean7 {
            view.facts
                .push(format!("mean of the seven criteria {mean7:.2}"));
        }
        if self.reasked {
            view.facts.push("the judge was asked twice".into());
        }
        if let Some(scores) = &self.scores {
            let table = KEYS.iter().zip(scores.values()).fold(
                ViewTable::new(&["Criterion", "Score (1-5)"]),
                |t, (key, value)| t.row(vec![criterion_name(key), format!("{value}")], None),
            );
            view.table = Some(table);
        }
        view.tags.extend(
            self.off_grid
                .iter()
                .map(|k| format!("{} off the 0.5 grid", criterion_name(k))),
        );
        view.text(
            "The judge's unreadable replies",
            &self.judge_raw.join("\n\n---\n\n"),
            false,
        )
    }
}

/// A judge key as a heading: `procedure_completeness_score` → "Procedure completeness".
fn criterion_name(key: &str) -> String {
    let words = key.trim_end_matches("_score").replace('_', " ");
    let mut chars = words.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A judge answer's text, or why there is none.
fn reply_of(answer: Option<&NeedAnswer>) -> Result<&str, JudgeError> {
    match answer {
        Some(NeedAnswer::Judge { text }) => Ok(text),
        Some(NeedAnswer::Failed { error }) => Err(JudgeError::Call {
            message: error.clone(),
        }),
        Some(NeedAnswer::Ran { .. }) => Err(JudgeError::Call {
            message: "the answer is a program run, not a judge's reply".into(),
        }),
        None => Err(JudgeError::Missing),
    }
}

/// The re-ask after the first stage, if its reply was text that could not be read.
pub fn reask(first: &[Message], answered: &[NeedAnswer]) -> Option<Vec<Message>> {
    if answered.len() != 1 {
        return None;
    }
    let reply = reply_of(answered.first()).ok()?;
    let error = parse_reply(reply).err()?;
    Some(reask_messages(first, reply, &error))
}

/// The verdict from the judge answers: the first reply, and the re-ask's if there was one.
pub fn verdict(answers: &[NeedAnswer]) -> AlchemyVerdict {
    let scored = |r: Reading, reasked: bool, first: Option<(JudgeError, String)>| {
        let (judge_error, judge_raw) = match first {
            Some((e, raw)) => (Some(e), vec![raw]),
            None => (None, Vec::new()),
        };
        AlchemyVerdict {
            label: AlchemyLabel::Scored,
            overall: Some(r.scores.overall_score),
            mean7: Some(r.scores.mean7()),
            scores: Some(r.scores),
            off_grid: r.off_grid,
            reasked,
            judge_error,
            judge_raw,
        }
    };
    let failed = |e: JudgeError, raw: Vec<String>, reasked: bool| AlchemyVerdict {
        label: AlchemyLabel::JudgeFailed,
        scores: None,
        overall: None,
        mean7: None,
        off_grid: Vec::new(),
        reasked,
        judge_error: Some(e),
        judge_raw: raw,
    };
    let first = match reply_of(answers.first()) {
        Ok(t) => t,
        Err(e) => return failed(e, Vec::new(), false),
    };
    let first_error = match parse_reply(first) {
        Ok(r) => return scored(r, false, None),
        Err(e) => e,
    };
    match reply_of(answers.get(1)) {
        // The re-ask was never made (scored without it): the first failure stands.
        Err(JudgeError::Missing) => failed(first_error, vec![first.to_string()], false),
        Err(e) => failed(e, vec![first.to_string()], true),
        Ok(second) => match parse_reply(second) {
            Ok(r) => scored(r, true, Some((first_error, first.to_string()))),
            Err(e) => failed(e, vec![first.to_string(), second.to_string()], true),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"materials_appropriateness_score": 4, "equipment_appropriateness_score": 3.5, "procedure_completeness_score": 4.0, "procedure_similarity_score": 3, "procedure_feasibility_score": 4.5, "characterization_appropriateness_score": 2, "characterization_similarity_score": 2.5, "overall_score": 3.5}"#;

    #[test]
    fn the_page_shows_each_criterion_by_name() {
        let r = parse_reply(GOOD).unwrap();
        let v = AlchemyVerdict {
            label: AlchemyLabel::Scored,
            overall: Some(r.scores.overall_score),
            mean7: Some(r.scores.mean7()),
            scores: Some(r.scores),
            off_grid: vec!["overall_score".into()],
            reasked: false,
            judge_error: None,
            judge_raw: Vec::new(),
        };
        let view = v.view();
        let table = view.table.expect("a criteria table");
        assert_eq!(table.rows.len(), 8);
        assert_eq!(table.rows[0].cells, ["Materials appropriateness", "4"]);
        assert_eq!(table.rows[7].cells, ["Overall", "3.5"]);
        assert_eq!(view.facts, ["mean of the seven criteria 3.36"]);
        assert_eq!(view.tags, ["Overall off the 0.5 grid"]);
        assert!(view.texts.is_empty());
    }

    #[test]
    fn last_fence_wins_over_later_braces() {
        let reply = format!(
            "Reasoning {{not json}}.\n```json\n{{\"a\": 1}}\n```\nthen\n```JSON\n{GOOD}\n```\nAnd {{\"x\": 2}}"
        );
        let r = parse_reply(&reply).unwrap();
        assert_eq!(r.scores.overall_score, 3.5);
        assert!((r.scores.mean7() - 23.5 / 7.0).abs() < 1e-12);
        assert!(r.off_grid.is_empty());
    }

    #[test]
    fn last_object_without_fence() {
        let reply = format!("First {{\"overall_score\": 1}} then {GOOD} done {{oops");
        assert_eq!(
            parse_reply(&reply)
                .unwrap()
                .scores
                .procedure_similarity_score,
            3.0
        );
        // An unterminated ```json block still counts.
        assert!(parse_reply(&format!("```json\n{GOOD}")).is_ok());
        // A fence with another tag is not a json fence; its braces still are found.
        assert!(parse_reply(&format!("```python\n{GOOD}\n```")).is_ok());
    }

    #[test]
    fn nested_objects_are_one_object() {
        let nested = GOOD.replacen('{', "{\"detail\": {\"overall_score\": 9},", 1);
        assert_eq!(parse_reply(&nested).unwrap().scores.overall_score, 3.5);
    }

    #[test]
    fn fence_scanning_handles_odd_input() {
        assert_eq!(last_json_fence("```"), None);
        assert_eq!(last_json_fence("```json"), Some(""));
        assert_eq!(
            last_json_fence("see ```json\nX\n```"),
            None,
            "not at a line start"
        );
        assert_eq!(last_json_fence("é\n  ```Json\né\n```\né"), Some("é\n"));
        assert_eq!(
            last_json_fence("```json\n{\"a\": 1}```\nok"),
            Some("{\"a\": 1}")
        );
        assert_eq!(last_json_fence("```json {\"a\": 1}```"), None);
        assert_eq!(last_json_fence("```jsonl\nX\n```"), None);
        assert_eq!(
            last_json_fence("```json\nA\n```\n```text\n```json\n```\n```json\nB"),
            Some("B"),
            "a fence line with a tag inside another block is its content"
        );
    }
}
