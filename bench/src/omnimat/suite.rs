//! OmniMatBench as two [`Suite`]s: `omnimat-cal` (deterministic slot scoring) and
//! `omnimat-qa` (two judge calls per answer). Both table under the item's subfield.

use engine::interrupt::Interrupt;

use super::cal::{gold_slots, score_response, CalLabel, CalVerdict};
use super::item::{CalItem, QaItem};
use super::prompt::{answer_text, cal_messages, py_dumps, qa_messages, ANSWER_REMINDER};
use super::qa::{judge_messages, judges_to_reask, score_answers, QaLabel, QaReference, QaVerdict};
use crate::task::{Headline, Message, Need, NeedAnswer, Outcome, Prepared, Role, Suite, TaskError};

/// The baseline that answers with the gold (CAL) or the reference answer (QA).
pub const REFERENCE: &str = "reference";

/// The group of an item without a subfield (an `eval` line with only id and answers).
const NO_SUBFIELD: &str = "(no subfield)";

fn group_of(subfield: &str) -> String {
    if subfield.trim().is_empty() {
        NO_SUBFIELD.into()
    } else {
        subfield.to_string()
    }
}

/// OmniMatBench's calculation items.
#[derive(Clone, Copy, Debug, Default)]
pub struct OmniMatCal;

/// What scoring a CAL answer needs: the gold slots (and, for the baseline, the gold list).
#[derive(Clone, Debug)]
pub struct CalReference {
    /// The gold, flattened row-major.
    pub gold: Vec<String>,
    /// The gold list as the item gives it.
    pub gold_list: serde_json::Value,
}

const CAL_COLUMNS: [(&str, &str); 3] = [
    ("WrongSlots", "Slots"),
    ("WrongCount", "Count"),
    ("NoAnswer", "Empty"),
];

impl Suite for OmniMatCal {
    const NAME: &'static str = "omnimat-cal";
    type Task = CalItem;
    type State = CalReference;
    type Verdict = CalVerdict;

    fn id(task: &CalItem) -> &str {
        &task.id
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &CAL_COLUMNS
    }

    /// One reminder when the reply has no `<answer>` (the reference retries once).
    fn retry_messages(&self, messages: &[Message], response: &str) -> Option<Vec<Message>> {
        reminder(messages, response)
    }

    fn prepare(&self, task: &CalItem) -> Result<Prepared<CalReference>, TaskError> {
        let gold = gold_slots(&task.final_answer_list);
        if gold.is_empty() {
            return Err(TaskError(format!(
                "CAL item {} has no gold answers (final_answer_list is empty)",
                task.id
            )));
        }
        Ok(Prepared {
            messages: cal_messages(task),
            group: group_of(&task.subfield),
            state: CalReference {
                gold,
                gold_list: task.final_answer_list.clone(),
            },
        })
    }

    fn score(
        &self,
        state: &CalReference,
        response: &str,
        _answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> CalVerdict {
        score_response(&state.gold, response)
    }

    fn outcome(v: &CalVerdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == CalLabel::Correct,
            metric: None,
        }
    }

    /// Slot accuracy pooled and per subfield (macro), both modes, labelled.
    fn headline(&self, rows: &[(&str, &CalVerdict)]) -> Option<Headline> {
        let s = super::cal::CalSummary::of(rows.iter().map(|(g, v)| (*g, *v)));
        Some(Headline {
            text: s.table(),
            json: serde_json::to_value(&s).unwrap_or_default(),
        })
    }

    /// `{"slots": [bool…] (exact mode), "item_exact", "item_threshold"}`.
    fn eval_verdict(v: &CalVerdict) -> serde_json::Value {
        serde_json::json!({
            "slots": v.slots.iter().map(|s| s.exact).collect::<Vec<bool>>(),
            "item_exact": v.item_exact,
            "item_threshold": v.item_threshold,
        })
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE]
    }

    /// `reference`: `<answer>` + the gold list as JSON (backslashes written `\u005c`, so no
    /// `\boxed{}` in a gold can take over the parse).
    fn baseline_answer(&self, name: &str, state: &CalReference) -> Option<String> {
        (name == REFERENCE).then(|| {
            format!(
                "<answer>{}</answer>",
                super::cal::prediction::escape_backslashes(&py_dumps(&state.gold_list))
            )
        })
    }
}

/// OmniMatBench's question-answer items.
#[derive(Clone, Copy, Debug, Default)]
pub struct OmniMatQa;

const QA_COLUMNS: [(&str, &str); 2] = [("NoAnswer", "Empty"), ("JudgeFailed", "Judge")];

impl Suite for OmniMatQa {
    const NAME: &'static str = "omnimat-qa";
    type Task = QaItem;
    type State = QaReference;
    type Verdict = QaVerdict;

    fn id(task: &QaItem) -> &str {
        &task.id
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &QA_COLUMNS
    }

    /// One reminder when the reply has no `<answer>` (the reference retries once).
    fn retry_messages(&self, messages: &[Message], response: &str) -> Option<Vec<Message>> {
        reminder(messages, response)
    }

    fn prepare(&self, task: &QaItem) -> Result<Prepared<QaReference>, TaskError> {
        if task.key_points.is_empty() {
            return Err(TaskError(format!("QA item {} has no key points", task.id)));
        }
        Ok(Prepared {
            messages: qa_messages(task),
            group: group_of(&task.subfield),
            state: QaReference::of(task),
        })
    }

    /// The precision judge, then the recall judge, on the `<answer>` text; nothing when the
    /// reply has no non-empty `<answer>`.
    fn needs(&self, state: &QaReference, response: &str) -> Vec<Need> {
        match answer_text(response).filter(|a| !a.is_empty()) {
            Some(answer) => judge_messages(state, answer)
                .into_iter()
                .map(|messages| Need::Judge { messages })
                .collect(),
            None => Vec::new(),
        }
    }

    /// A judge whose reply cannot be read is asked again, the same question, at most
    /// [`MAX_JUDGE_ATTEMPTS`](super::qa::MAX_JUDGE_ATTEMPTS) times in all.
    fn more_needs(
        &self,
        state: &QaReference,
        response: &str,
        answered: &[NeedAnswer],
    ) -> Vec<Need> {
        let Some(answer) = answer_text(response).filter(|a| !a.is_empty()) else {
            return Vec::new();
        };
        let (ask_p, ask_r) = judges_to_reask(state, answered);
        let [p, r] = judge_messages(state, answer);
        [(ask_p, p), (ask_r, r)]
            .into_iter()
            .filter(|(ask, _)| *ask)
            .map(|(_, messages)| Need::Judge { messages })
            .collect()
    }

    fn score(
        &self,
        state: &QaReference,
        response: &str,
        answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> QaVerdict {
        score_answers(state, answer_text(response), answers)
    }

    /// A scored answer is a success with its F1 as the metric; `NoAnswer` and
    /// `JudgeFailed` are failures (F1 0 in the QA summary).
    fn outcome(v: &QaVerdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == QaLabel::Scored,
            metric: (v.label == QaLabel::Scored).then_some(v.f1),
        }
    }

    /// Macro-F1 over subfields and pooled F1, with the judge failures counted.
    fn headline(&self, rows: &[(&str, &QaVerdict)]) -> Option<Headline> {
        let s = super::qa::QaSummary::of(rows.iter().map(|(g, v)| (*g, *v)));
        Some(Headline {
            text: format!(
                "QA macro-F1 over subfields: {:.4}; pooled F1: {:.4}; judge failed on {} items (F1 0)\n",
                s.macro_f1, s.pooled_f1, s.judge_failed
            ),
            json: serde_json::to_value(&s).unwrap_or_default(),
        })
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE]
    }

    fn baseline_answer(&self, name: &str, state: &QaReference) -> Option<String> {
        (name == REFERENCE).then(|| format!("<answer>{}</answer>", state.answer))
    }
}

/// The messages again with [`ANSWER_REMINDER`] after the user's text, when `response` has no
/// `<answer>`.
fn reminder(messages: &[Message], response: &str) -> Option<Vec<Message>> {
    if answer_text(response).is_some() {
        return None;
    }
    let mut again = messages.to_vec();
    let last = again.iter_mut().rev().find(|m| m.role == Role::User)?;
    last.content.push_str(ANSWER_REMINDER);
    Some(again)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_without_answer_gets_one_reminder() {
        let messages = vec![Message::system("s"), Message::user("q")];
        let again = reminder(&messages, "I think 42.").unwrap();
        assert_eq!(again[1].content, format!("q{ANSWER_REMINDER}"));
        assert_eq!(again[0].content, "s");
        assert!(reminder(&messages, "<answer>42</answer>").is_none());
    }

    #[test]
    fn cal_reference_baseline_scores_one() {
        let item: CalItem = serde_json::from_value(serde_json::json!({
            "id": "1", "type": "Demo", "question": "q",
            "final_answer_list": [["\\boxed{2}", "1.5 \\times 10^{4}"], ["3"]]
        }))
        .unwrap();
        let p = OmniMatCal.prepare(&item).unwrap();
        let answer = OmniMatCal.baseline_answer(REFERENCE, &p.state).unwrap();
        let v = OmniMatCal.score(&p.state, &answer, &[], &Interrupt::default());
        assert_eq!((v.item_exact, v.item_threshold), (1.0, 1.0));
        assert_eq!(p.group, "Demo");
        let e = OmniMatCal::eval_verdict(&v);
        assert_eq!(e["slots"], serde_json::json!([true, true, true]));
    }
}
