//! QA scoring: two judge calls per answer (reference judge: gemini-2.5-flash at
//! temperature 0).
//!
//! Before judging, every backslash is removed from the reference answer and the model's
//! answer (only the `<answer>` text is judged). The precision judge lists the answer's
//! information units as true positives (`tp_string`, one a line) and false positives
//! (`fp_string`); precision = #TP / (#TP + #FP), 0 if both are empty. The recall judge gives
//! per key point `met` (0/1) and `quality_score` (0, 0.1, 0.5 or 1.0) and `reasoning`;
//! recall = Σ quality_i · weight_i (the rubric's `scoring_weights` by point id; equal
//! weights when there are none). Item F1 = 2PR/(P+R), 0 if P+R = 0.
//!
//! A judge reply is read tolerantly: a ``` fence is stripped, else the outermost `{…}` is
//! taken; a reply that still is not JSON, or misses a required key, makes the verdict
//! [`QaLabel::JudgeFailed`] (F1 0, counted, never dropped). Retrying a malformed reply is
//! the runner's job. The judge prompts are our wording of the protocol (the spec fixes their
//! content, not their text); `benchmarks/tests/cases/omnimat_qa/` holds one transcript of each.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::domain::{self, DomainQa};
use super::item::{KeyPoint, QaItem};
use crate::task::{Message, NeedAnswer, VerdictView, ViewTable};
use engine::python::py_strip;

/// What scoring a QA answer needs of its item.
#[derive(Clone, Debug, PartialEq)]
pub struct QaReference {
    /// The item's id.
    pub id: String,
    /// The reference answer.
    pub answer: String,
    /// The rubric.
    pub key_points: Vec<KeyPoint>,
    /// Weight per key point, in rubric order (the rubric's weights, or equal ones).
    pub weights: Vec<f64>,
    /// Why the item's images are unavailable (it is then asked of no model).
    pub images_unavailable: Option<String>,
}

impl QaReference {
    /// The scoring state of `item`.
    pub fn of(item: &QaItem) -> Self {
        let n = item.key_points.len();
        let weights = if item.scoring_weights.is_empty() {
            vec![1.0 / n.max(1) as f64; n]
        } else {
            item.key_points
                .iter()
                .map(|k| item.scoring_weights.get(&k.id).copied().unwrap_or(0.0))
                .collect()
        };
        Self {
            id: item.id.clone(),
            answer: item.answer.clone(),
            key_points: item.key_points.clone(),
            weights,
            images_unavailable: item.images().err(),
        }
    }
}

/// The key points as the judges see them: "1. [point_1] description", one a line.
pub fn key_point_lines(points: &[KeyPoint]) -> String {
    points
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{}. [{}] {}", i + 1, k.id, k.description))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The precision judge's prompt: the reference's, verbatim (`build_prompt` of
/// `scripts/qa/eval_precision.py`, wanhaoliu/OmniMatBench, MIT), reference and model answers
/// without backslashes.
pub fn precision_prompt(reference: &QaReference, answer: &str) -> String {
    format!(
        "\nYou are a rigorous, fair, and professional benchmark evaluator.\n\n\
Your task is to calculate the Precision of the model answer:\n\
Precision = TP / (TP + FP)\n\n\
Definitions:\n\
- TP: a specific information unit in the model answer that directly matches a key scoring point.\n\
- FP: irrelevant, incorrect, redundant, or filler information in the model answer.\n\
- Missed key points are false negatives and do not affect Precision.\n\n\
Ground Truth Answer:\n{}\n\n\
Key Scoring Points:\n{}\n\n\
Model Answer:\n{}\n\n\
Return only one JSON object with exactly these keys:\n\
{{\n  \"tp_string\": \"one TP per line\",\n  \"fp_string\": \"one FP per line, include [FP-Type] when possible\"\n}}\n",
        reference.answer.replace('\\', ""),
        key_point_lines(&reference.key_points),
        answer.replace('\\', ""),
    )
}

/// The recall judge's prompt: the reference's, verbatim (`build_prompt` of
/// `scripts/qa/eval_recall.py`, wanhaoliu/OmniMatBench, MIT).
pub fn recall_prompt(reference: &QaReference, answer: &str) -> String {
    format!(
        "\nYou are a strict and meticulous grader specializing in materials science.\n\n\
Evaluate each Key Scoring Point sequentially.\n\n\
For each point:\n\
- met: 1 if the model answer clearly covers the point; otherwise 0.\n\
- quality_score: if met is 0, use 0.0. If met is 1, use 1.0 for excellent,\n  \
0.5 for acceptable but shallow/imprecise, and 0.1 for poor or partly wrong.\n\n\
Return only one JSON object with exactly these keys:\n\
{{\n  \"met\": [0 or 1 for each key point],\n  \"quality_score\": [float score for each key point],\n  \"reasoning\": \"brief critical explanation\"\n}}\n\n\
Key Scoring Points:\n{}\n\n\
Ground Truth Answer:\n{}\n\n\
Model Answer:\n{}\n",
        key_point_lines(&reference.key_points),
        reference.answer.replace('\\', ""),
        answer.replace('\\', ""),
    )
}

/// The two judge conversations for `answer` (the `<answer>` text): precision, then recall.
pub fn judge_messages(reference: &QaReference, answer: &str) -> [Vec<Message>; 2] {
    [
        vec![Message::user(precision_prompt(reference, answer))],
        vec![Message::user(recall_prompt(reference, answer))],
    ]
}

/// Why a judge reply could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    /// The judge call itself failed.
    #[error("judge call failed: {0}")]
    Call(String),
    /// No JSON object in the reply.
    #[error("judge reply is not a JSON object")]
    NotJson,
    /// A required key is missing.
    #[error("judge reply lacks \"{0}\"")]
    MissingKey(&'static str),
    /// No answer came for this judge.
    #[error("no judge answer was given")]
    Missing,
}

/// A JSON object out of a judge reply: the text with a ``` fence stripped, else the
/// outermost `{…}`.
pub fn extract_json(reply: &str) -> Result<serde_json::Map<String, serde_json::Value>, JudgeError> {
    let t = reply.trim();
    let unfenced = strip_fence(t);
    let as_object = |s: &str| match serde_json::from_str::<serde_json::Value>(s) {
        Ok(serde_json::Value::Object(o)) => Some(o),
        _ => None,
    };
    // As the reference: JSON that is not an object (a list holding the object) is not
    // searched for one; only text that is not JSON is.
    match serde_json::from_str::<serde_json::Value>(unfenced) {
        Ok(serde_json::Value::Object(o)) => return Ok(o),
        Ok(_) => return Err(JudgeError::NotJson),
        Err(_) => {}
    }
    let (Some(a), Some(b)) = (unfenced.find('{'), unfenced.rfind('}')) else {
        return Err(JudgeError::NotJson);
    };
    if a < b {
        if let Some(o) = as_object(&unfenced[a..=b]) {
            return Ok(o);
        }
    }
    Err(JudgeError::NotJson)
}

/// "```json … ```" → "…" (case-insensitive tag; a missing closing fence is tolerated).
fn strip_fence(t: &str) -> &str {
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = if rest.len() >= 4 && rest[..4].eq_ignore_ascii_case("json") {
        &rest[4..]
    } else {
        rest
    };
    let rest = rest.trim_start();
    let rest = rest.strip_suffix("```").unwrap_or(rest);
    rest.trim_end()
}

/// Non-empty trimmed lines of a judge field (a string, or a list of strings).
fn units(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| match x {
                serde_json::Value::String(s) => s.trim().to_string(),
                other => other.to_string(),
            })
            .filter(|s| !s.is_empty())
            .collect(),
        serde_json::Value::String(s) => s
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        serde_json::Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// The precision judge's reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrecisionJudgement {
    /// True-positive units.
    pub tp: Vec<String>,
    /// False-positive units.
    pub fp: Vec<String>,
    /// #TP / (#TP + #FP) rounded to 3 decimals as the reference stores it, 0 if both are
    /// empty.
    pub precision: f64,
}

/// Read a precision judge reply.
pub fn parse_precision(reply: &str) -> Result<PrecisionJudgement, JudgeError> {
    let o = extract_json(reply)?;
    let tp = units(
        o.get("tp_string")
            .ok_or(JudgeError::MissingKey("tp_string"))?,
    );
    let fp = units(
        o.get("fp_string")
            .ok_or(JudgeError::MissingKey("fp_string"))?,
    );
    let n = tp.len() + fp.len();
    // The reference stores the precision rounded to 3 decimals.
    let precision = if n == 0 {
        0.0
    } else {
        py_round(tp.len() as f64 / n as f64, 3)
    };
    Ok(PrecisionJudgement { tp, fp, precision })
}

/// One key point as the recall judge scored it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointScore {
    /// The key point's id.
    pub id: String,
    /// Its weight.
    pub weight: f64,
    /// The judge's `met`, if given.
    pub met: Option<f64>,
    /// The judge's `quality_score` (0 when missing or not a number).
    pub quality: f64,
}

/// The recall judge's reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecallJudgement {
    /// Per key point, in rubric order.
    pub points: Vec<PointScore>,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
    /// Σ quality · weight, rounded to 4 decimals as the reference stores it.
    pub recall: f64,
}

fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        serde_json::Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Per key point values of a judge field: a list in rubric order, or an object keyed by
/// point id.
fn per_point(v: &serde_json::Value, points: &[KeyPoint]) -> Vec<Option<f64>> {
    match v {
        serde_json::Value::Array(a) => (0..points.len())
            .map(|i| a.get(i).and_then(number))
            .collect(),
        serde_json::Value::Object(o) => points
            .iter()
            .map(|k| o.get(&k.id).and_then(number))
            .collect(),
        _ => vec![None; points.len()],
    }
}

/// Read a recall judge reply against `reference`'s rubric.
pub fn parse_recall(reply: &str, reference: &QaReference) -> Result<RecallJudgement, JudgeError> {
    let o = extract_json(reply)?;
    let met = o.get("met").ok_or(JudgeError::MissingKey("met"))?;
    let quality = o
        .get("quality_score")
        .ok_or(JudgeError::MissingKey("quality_score"))?;
    let met = per_point(met, &reference.key_points);
    let quality = per_point(quality, &reference.key_points);
    let points: Vec<PointScore> = reference
        .key_points
        .iter()
        .enumerate()
        .map(|(i, k)| PointScore {
            id: k.id.clone(),
            weight: reference.weights.get(i).copied().unwrap_or(0.0),
            met: met.get(i).copied().flatten(),
            quality: quality
                .get(i)
                .copied()
                .flatten()
                .filter(|q| q.is_finite())
                .unwrap_or(0.0),
        })
        .collect();
    // The reference sums in rubric order and stores the recall rounded to 4 decimals.
    let recall = py_round(points.iter().map(|p| p.quality * p.weight).sum(), 4);
    let reasoning = o.get("reasoning").map(|r| match r {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    Ok(RecallJudgement {
        points,
        reasoning,
        recall,
    })
}

/// Python's `round(x, digits)`: the double nearest the decimal correctly rounded (ties to
/// even) from `x`'s exact value, as Rust's formatting also rounds.
fn py_round(x: f64, digits: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.digits$}").parse().unwrap_or(x)
}

/// 2PR/(P+R), 0 if P+R = 0.
pub fn f1(precision: f64, recall: f64) -> f64 {
    if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    }
}

/// The verdict's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum QaLabel {
    /// Both judges answered usably.
    Scored,
    /// The reply has no (non-empty) `<answer>`: not judged, F1 0.
    NoAnswer,
    /// A judge failed or its reply was unusable: F1 0, counted.
    JudgeFailed,
    /// The item's images are unavailable: asked of no model, left out of every figure.
    ImagesUnavailable,
}

impl QaLabel {
    /// The label's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            QaLabel::Scored => "Scored",
            QaLabel::NoAnswer => "NoAnswer",
            QaLabel::JudgeFailed => "JudgeFailed",
            QaLabel::ImagesUnavailable => "ImagesUnavailable",
        }
    }
}

/// The verdict on one QA answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QaVerdict {
    /// The label.
    pub label: QaLabel,
    /// The item F1 (0 unless scored).
    pub f1: f64,
    /// Precision, when its judge answered usably.
    pub precision: Option<f64>,
    /// Recall, when its judge answered usably.
    pub recall: Option<f64>,
    /// The precision judge's reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_detail: Option<PrecisionJudgement>,
    /// The recall judge's reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall_detail: Option<RecallJudgement>,
    /// What went wrong with the judges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_errors: Vec<String>,
    /// The judged `<answer>` text.
    pub answer: String,
}

/// How many times a judge is asked in all when its reply cannot be read (missing keys,
/// no JSON): the first call and two re-asks (`shared/spec/omnimatbench.md`: "retry on
/// missing keys (bounded)"). A call that fails is not re-asked (the gateway retries calls).
pub const MAX_JUDGE_ATTEMPTS: usize = 3;

/// The judges' replies in order of asking, sorted into the precision judge's and the recall
/// judge's attempts: the first two answers are one of each; after that, each stage re-asks
/// (precision first) every judge whose last reply could not be read, while it has attempts
/// left. The same replay decides what to ask next ([`judges_to_reask`]).
pub fn attempts<'a>(
    reference: &QaReference,
    answers: &'a [NeedAnswer],
) -> (Vec<&'a NeedAnswer>, Vec<&'a NeedAnswer>) {
    let mut p: Vec<&NeedAnswer> = answers.first().into_iter().collect();
    let mut r: Vec<&NeedAnswer> = answers.get(1).into_iter().collect();
    let mut next = 2;
    loop {
        let (ask_p, ask_r) = reask(reference, &p, &r);
        if !(ask_p || ask_r) {
            break;
        }
        if ask_p {
            let Some(a) = answers.get(next) else { break };
            p.push(a);
            next += 1;
        }
        if ask_r {
            let Some(a) = answers.get(next) else { break };
            r.push(a);
            next += 1;
        }
    }
    (p, r)
}

/// Whether the precision and the recall judge are to be asked again.
fn reask(reference: &QaReference, p: &[&NeedAnswer], r: &[&NeedAnswer]) -> (bool, bool) {
    let unreadable = |last: Option<&&NeedAnswer>, parse: &dyn Fn(&str) -> bool| match last {
        Some(NeedAnswer::Judge { text }) => !parse(text),
        _ => false,
    };
    let ask_p = p.len() < MAX_JUDGE_ATTEMPTS
        && !p.is_empty()
        && unreadable(p.last(), &|t| parse_precision(t).is_ok());
    let ask_r = r.len() < MAX_JUDGE_ATTEMPTS
        && !r.is_empty()
        && unreadable(r.last(), &|t| parse_recall(t, reference).is_ok());
    (ask_p, ask_r)
}

/// Which judges to ask again after `answers` (precision, recall): `(false, false)` once
/// every reply is read or attempts are used up.
pub fn judges_to_reask(reference: &QaReference, answers: &[NeedAnswer]) -> (bool, bool) {
    if answers.len() < 2 {
        return (false, false);
    }
    let (p, r) = attempts(reference, answers);
    // Only when every answer so far is accounted for (a stage was fully met).
    let used = p.len() + r.len();
    if used != answers.len() {
        return (false, false);
    }
    reask(reference, &p, &r)
}

impl QaVerdict {
    /// What a page shows: precision, recall and F1, each key point's weight and the quality
    /// the recall judge gave it, the units the precision judge counted, and its reasoning.
    pub fn view(&self) -> VerdictView {
        let mut view = VerdictView::default();
        let num = |x: Option<f64>| x.map_or_else(|| "—".to_string(), |x| format!("{x:.4}"));
        if self.label == QaLabel::Scored {
            view.facts.push(format!(
                "precision {} · recall {} · F1 {:.4}",
                num(self.precision),
                num(self.recall),
                self.f1
            ));
        }
        if let Some(r) = &self.recall_detail {
            let table = r.points.iter().fold(
                ViewTable::new(&["Key point", "Weight", "Met", "Quality"]),
                |t, p| {
                    t.row(
                        vec![
                            p.id.clone(),
                            format!("{}", p.weight),
                            p.met.map_or_else(|| "—".into(), |m| format!("{m}")),
                            format!("{}", p.quality),
                        ],
                        None,
                    )
                },
            );
            view.table = Some(table);
        }
        let units = self.precision_detail.as_ref().map(|p| {
            format!(
                "Supported ({}):\n{}\n\nNot supported ({}):\n{}",
                p.tp.len(),
                p.tp.join("\n"),
                p.fp.len(),
                p.fp.join("\n")
            )
        });
        let reasoning = self
            .recall_detail
            .as_ref()
            .and_then(|r| r.reasoning.clone());
        view.text(
            "Units the precision judge counted",
            units.as_deref().unwrap_or_default(),
            false,
        )
        .text(
            "The recall judge's reasoning",
            reasoning.as_deref().unwrap_or_default(),
            false,
        )
    }

    /// The verdict on an item whose images are unavailable (`why`): no answer was asked for.
    pub fn images_unavailable(why: &str) -> Self {
        QaVerdict {
            label: QaLabel::ImagesUnavailable,
            f1: 0.0,
            precision: None,
            recall: None,
            precision_detail: None,
            recall_detail: None,
            judge_errors: vec![why.to_string()],
            answer: String::new(),
        }
    }
}

/// The verdict from the judges' answers (in order of asking, re-asks included); the last
/// attempt of each judge decides.
pub fn score_answers(
    reference: &QaReference,
    answer: Option<&str>,
    answers: &[NeedAnswer],
) -> QaVerdict {
    let Some(answer) = answer.map(py_strip).filter(|a| !a.is_empty()) else {
        return QaVerdict {
            label: QaLabel::NoAnswer,
            f1: 0.0,
            precision: None,
            recall: None,
            precision_detail: None,
            recall_detail: None,
            judge_errors: Vec::new(),
            answer: String::new(),
        };
    };
    let (p_attempts, r_attempts) = attempts(reference, answers);
    let text = |a: Option<&&NeedAnswer>| -> Result<String, JudgeError> {
        match a {
            None => Err(JudgeError::Missing),
            Some(NeedAnswer::Judge { text }) => Ok(text.clone()),
            Some(NeedAnswer::Failed { error }) => Err(JudgeError::Call(error.clone())),
            Some(_) => Err(JudgeError::Call("the answer is not a judge's".into())),
        }
    };
    let p = text(p_attempts.last()).and_then(|t| parse_precision(&t));
    let r = text(r_attempts.last()).and_then(|t| parse_recall(&t, reference));
    let mut errors = Vec::new();
    if let Err(e) = &p {
        errors.push(format!(
            "precision (after {} attempts): {e}",
            p_attempts.len()
        ));
    }
    if let Err(e) = &r {
        errors.push(format!("recall (after {} attempts): {e}", r_attempts.len()));
    }
    let p = p.ok();
    let r = r.ok();
    let (label, f) = match (&p, &r) {
        (Some(p), Some(r)) => (QaLabel::Scored, f1(p.precision, r.recall)),
        _ => (QaLabel::JudgeFailed, 0.0),
    };
    QaVerdict {
        label,
        f1: f,
        precision: p.as_ref().map(|p| p.precision),
        recall: r.as_ref().map(|r| r.recall),
        precision_detail: p,
        recall_detail: r,
        judge_errors: errors,
        answer: answer.to_string(),
    }
}

/// One subfield's QA line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubfieldQa {
    /// Items.
    pub items: usize,
    /// Items both judges scored.
    pub scored: usize,
    /// Items a judge failed on (F1 0).
    pub judge_failed: usize,
    /// Items without an answer (F1 0).
    pub no_answer: usize,
    /// Mean item F1 (failures and missing answers count 0): the subfield's macro-F1.
    pub macro_f1: f64,
    /// Mean item F1 as the reference averages (`calc_f1.py`: items a judge failed on have no
    /// F1 and are left out), 0 with none.
    #[serde(default)]
    pub macro_f1_reference: f64,
    /// Mean item precision (failures and missing answers count 0, as for F1; an item counts
    /// only when both judges scored it).
    #[serde(default)]
    pub precision: f64,
    /// Mean item recall (failures and missing answers count 0, as for F1).
    #[serde(default)]
    pub recall: f64,
}

/// The QA summary: per subfield macro-F1 and the headline, their unweighted mean.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QaSummary {
    /// Per subfield.
    pub per_subfield: BTreeMap<String, SubfieldQa>,
    /// Per domain (the subfields' unweighted mean; the grouping is ours, see
    /// [`super::domain`]).
    #[serde(default)]
    pub per_domain: BTreeMap<String, DomainQa>,
    /// Mean of the subfields' macro-F1 (the QA headline).
    pub macro_f1: f64,
    /// Mean of the subfields' macro-F1 as the reference averages (judge failures left out
    /// of each subfield's mean).
    #[serde(default)]
    pub macro_f1_reference: f64,
    /// Mean item F1 over all items, pooled (for comparison; not the headline).
    pub pooled_f1: f64,
    /// Items a judge failed on, over all subfields.
    pub judge_failed: usize,
    /// Items left out of every figure because their images are unavailable.
    #[serde(default)]
    pub images_unavailable: usize,
}

impl QaSummary {
    /// Summarise `(subfield, verdict)` rows.
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a str, &'a QaVerdict)>) -> Self {
        let mut sums: BTreeMap<String, (SubfieldQa, f64)> = BTreeMap::new();
        let mut pr: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        let (mut total, mut n, mut failed, mut skipped) = (0.0, 0usize, 0usize, 0usize);
        for (subfield, v) in rows {
            if v.label == QaLabel::ImagesUnavailable {
                skipped += 1;
                continue;
            }
            let (s, sum) = sums.entry(subfield.to_string()).or_default();
            s.items += 1;
            match v.label {
                QaLabel::Scored => s.scored += 1,
                QaLabel::JudgeFailed => {
                    s.judge_failed += 1;
                    failed += 1;
                }
                QaLabel::NoAnswer => s.no_answer += 1,
                QaLabel::ImagesUnavailable => {}
            }
            *sum += v.f1;
            let p = pr.entry(subfield.to_string()).or_default();
            if v.label == QaLabel::Scored {
                p.0 += v.precision.unwrap_or(0.0);
                p.1 += v.recall.unwrap_or(0.0);
            }
            total += v.f1;
            n += 1;
        }
        let per_subfield: BTreeMap<String, SubfieldQa> = sums
            .into_iter()
            .map(|(k, (mut s, sum))| {
                s.macro_f1 = sum / s.items.max(1) as f64;
                let (p, r) = pr.get(&k).copied().unwrap_or_default();
                s.precision = p / s.items.max(1) as f64;
                s.recall = r / s.items.max(1) as f64;
                // Judge failures have F1 0 here and no F1 in the reference's table.
                let judged = s.items - s.judge_failed;
                s.macro_f1_reference = if judged == 0 {
                    0.0
                } else {
                    sum / judged as f64
                };
                (k, s)
            })
            .collect();
        let mean = |f: fn(&SubfieldQa) -> f64| {
            per_subfield.values().map(f).sum::<f64>() / per_subfield.len().max(1) as f64
        };
        let (macro_f1, macro_f1_reference) = (mean(|s| s.macro_f1), mean(|s| s.macro_f1_reference));
        let per_domain = domain::group(
            per_subfield
                .iter()
                .map(|(k, s)| (k.as_str(), s.items, [s.precision, s.recall, s.macro_f1])),
        );
        QaSummary {
            per_subfield,
            per_domain,
            macro_f1,
            macro_f1_reference,
            pooled_f1: if n == 0 { 0.0 } else { total / n as f64 },
            judge_failed: failed,
            images_unavailable: skipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> QaReference {
        QaReference::of(&QaItem {
            id: "1".into(),
            subfield: "S".into(),
            source_type: None,
            task_type: None,
            source_name: None,
            source_location: None,
            multimodal: false,
            image_url: None,
            images: Vec::new(),
            images_unavailable: None,
            question: "Q".into(),
            answer: "A".into(),
            key_points: vec![
                KeyPoint {
                    id: "point_1".into(),
                    description: "one".into(),
                },
                KeyPoint {
                    id: "point_2".into(),
                    description: "two".into(),
                },
            ],
            scoring_weights: BTreeMap::new(),
        })
    }

    #[test]
    fn extraction_is_tolerant() {
        assert!(extract_json("```json\n{\"a\": 1}\n```").is_ok());
        assert!(extract_json("```JSON {\"a\": 1}").is_ok());
        assert!(extract_json("Here you go: {\"a\": {\"b\": 2}} thanks").is_ok());
        assert_eq!(extract_json("no json"), Err(JudgeError::NotJson));
        assert_eq!(extract_json("[1, 2]"), Err(JudgeError::NotJson));
    }

    #[test]
    fn f1_of_two_judges() {
        let r = reference();
        let answers = [
            NeedAnswer::Judge {
                text: "{\"tp_string\": \"a\\nb\\n\\n\", \"fp_string\": \"c\\n\"}".into(),
            },
            NeedAnswer::Judge {
                text: "{\"met\": [1, 1], \"quality_score\": [1.0, 0.5], \"reasoning\": \"ok\"}"
                    .into(),
            },
        ];
        let v = score_answers(&r, Some("x"), &answers);
        assert_eq!(v.label, QaLabel::Scored);
        // Precision 2/3 stored as the reference stores it, 0.667.
        let (p, rc) = (0.667, 0.75);
        assert!((v.f1 - 2.0 * p * rc / (p + rc)).abs() < 1e-12);
        assert_eq!(
            py_round(0.0625, 3),
            0.062,
            "ties to even, as Python's round"
        );
        let v = score_answers(&r, Some("x"), &answers[..1]);
        assert_eq!(v.label, QaLabel::JudgeFailed);
        let v = score_answers(&r, Some("  "), &answers);
        assert_eq!(v.label, QaLabel::NoAnswer);
        assert_eq!(f1(0.0, 0.0), 0.0);
    }
}
