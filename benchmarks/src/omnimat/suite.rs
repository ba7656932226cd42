//! OmniMatBench as two [`Suite`]s: `omnimat-cal` (deterministic slot scoring) and
//! `omnimat-qa` (two judge calls per answer). Both table under the item's subfield; an item
//! whose images are unavailable is asked of no model and tabled under "images unavailable"
//! (label `ImagesUnavailable`), left out of the headline figures, which count it.

use engine::interrupt::Interrupt;

use super::cal::{gold_slots, score_response, CalLabel, CalVerdict};
use super::images::IMAGES_UNAVAILABLE;
use super::item::{CalItem, QaItem};
use super::prompt::{answer_text, cal_messages, py_dumps, qa_messages, ANSWER_REMINDER};
use super::qa::{judge_messages, judges_to_reask, score_answers, QaLabel, QaReference, QaVerdict};
use crate::task::layout::{Layout, Rows};
use crate::task::source::{self, Located};
use crate::task::summary::TableWords;
use crate::task::PaperTemperatures;
use crate::task::{
    Headline, Message, Need, NeedAnswer, Outcome, Prepared, Role, Suite, TaskError, Unasked,
    VerdictView,
};

/// OmniMatBench's judge (Gemini 2.5 Flash) runs at 0; the answers' setting is not published.
const PAPER_TEMPERATURES: PaperTemperatures = PaperTemperatures {
    answer: None,
    judge: Some(0.0),
};

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
    /// Why the item's images are unavailable (it is then asked of no model).
    pub images_unavailable: Option<String>,
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

    fn key(task: &CalItem) -> String {
        super::item::key(&task.subfield, &task.id)
    }

    /// Upstream: `cal/NN_<Subfield>_Cal_with_final_answers.jsonl`, one item a line.
    fn read_tasks(&self, _name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        source::json_lines(text)
    }

    fn release_folder(&self) -> Option<&'static str> {
        Some("cal")
    }

    fn agents(&self) -> &'static [&'static str] {
        &[super::python_tool::AGENT]
    }

    fn has_images(&self) -> bool {
        true
    }

    fn paper_temperatures(&self) -> PaperTemperatures {
        PAPER_TEMPERATURES
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "subfield",
            metric: "metric",
        }
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
                images_unavailable: task.images().err(),
            },
        })
    }

    /// An item whose images are unavailable.
    fn unanswerable(&self, state: &CalReference) -> Option<Unasked<CalVerdict>> {
        let why = state.images_unavailable.as_deref()?;
        Some(Unasked {
            group: IMAGES_UNAVAILABLE.to_string(),
            why: why.to_string(),
            verdict: CalVerdict::images_unavailable(&state.gold, why),
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
            why: super::cal::score::why(v),
        }
    }

    fn view(v: &CalVerdict) -> VerdictView {
        super::cal::score::view(v)
    }

    fn layouts(&self) -> &'static [Layout] {
        &[
            Layout {
                title: "CAL slot accuracy per subfield",
                source: "OmniMatBench, Fig. 4 (strict: exact mode)",
                row_heading: "subfield",
                rows: Rows::Each {
                    at: "per_subfield",
                    label: None,
                },
                values: &[
                    ("exact", "slot_accuracy.exact"),
                    ("within 10 %", "slot_accuracy.threshold"),
                ],
                mean_row: true,
            },
            Layout {
                title: "Wrong CAL items by error class",
                source: "ours: a mechanical taxonomy read from the slots (the paper's appendix \
                     taxonomy is not published per item)",
                row_heading: "error class",
                rows: Rows::Listed(&[
                    (
                        "Within 10 %, not exact",
                        "error_classes.Within 10 %, not exact",
                    ),
                    ("Wrong sign", "error_classes.Wrong sign"),
                    (
                        "Off by a power of ten",
                        "error_classes.Off by a power of ten",
                    ),
                    ("Wrong text", "error_classes.Wrong text"),
                    ("Not a number", "error_classes.Not a number"),
                    ("Wrong value", "error_classes.Wrong value"),
                    (
                        "Wrong number of values",
                        "error_classes.Wrong number of values",
                    ),
                    ("No answer", "error_classes.No answer"),
                ]),
                values: &[("", "")],
                mean_row: false,
            },
        ]
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

    fn key(task: &QaItem) -> String {
        super::item::key(&task.subfield, &task.id)
    }

    /// Upstream: `qa/NN_<Subfield>_QA_rubric.json`, one JSON list of items; JSON lines of
    /// items are read too.
    fn read_tasks(&self, _name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        source::json_list_or_lines(text)
    }

    fn release_folder(&self) -> Option<&'static str> {
        Some("qa")
    }

    fn agents(&self) -> &'static [&'static str] {
        &[super::python_tool::AGENT]
    }

    fn has_images(&self) -> bool {
        true
    }

    fn paper_temperatures(&self) -> PaperTemperatures {
        PAPER_TEMPERATURES
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "subfield",
            metric: "F1",
        }
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

    /// An item whose images are unavailable.
    fn unanswerable(&self, state: &QaReference) -> Option<Unasked<QaVerdict>> {
        let why = state.images_unavailable.as_deref()?;
        Some(Unasked {
            group: IMAGES_UNAVAILABLE.to_string(),
            why: why.to_string(),
            verdict: QaVerdict::images_unavailable(why),
        })
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
            why: (!v.judge_errors.is_empty()).then(|| {
                format!(
                    "The judge could not score this answer: {}.",
                    v.judge_errors.join("; ")
                )
            }),
        }
    }

    fn view(v: &QaVerdict) -> VerdictView {
        v.view()
    }

    fn layouts(&self) -> &'static [Layout] {
        &[
            Layout {
                title: "QA precision, recall and macro-F1 per subfield",
                source: "OmniMatBench, Table 4 by subfield",
                row_heading: "subfield",
                rows: Rows::Each {
                    at: "per_subfield",
                    label: None,
                },
                values: &[
                    ("precision", "precision"),
                    ("recall", "recall"),
                    ("F1", "macro_f1"),
                ],
                mean_row: true,
            },
            Layout {
                title: "QA precision, recall and macro-F1 per domain",
                source: "OmniMatBench, Table 4 by domain: each domain the mean of its \
                         subfields; which subfield is in which domain is ours (the paper \
                         draws it only in its Figure 1)",
                row_heading: "domain",
                rows: Rows::Each {
                    at: "per_domain",
                    label: None,
                },
                values: &[
                    ("precision", "precision"),
                    ("recall", "recall"),
                    ("F1", "macro_f1"),
                ],
                mean_row: false,
            },
            Layout {
                title: "Overall score (CAL slot accuracy + QA macro-F1) / 2 per subfield",
                source: "OmniMatBench, Eq. 3 and Table 3 (CAL in exact mode)",
                row_heading: "subfield",
                rows: Rows::MeanOf(&[
                    (OmniMatCal::NAME, "per_subfield", "slot_accuracy.exact"),
                    (OmniMatQa::NAME, "per_subfield", "macro_f1"),
                ]),
                values: &[("overall", "")],
                mean_row: true,
            },
        ]
    }

    /// Macro-F1 over subfields and pooled F1, with the judge failures counted.
    fn headline(&self, rows: &[(&str, &QaVerdict)]) -> Option<Headline> {
        let s = super::qa::QaSummary::of(rows.iter().map(|(g, v)| (*g, *v)));
        let mut text = format!(
            "QA macro-F1 over subfields: {:.4}; pooled F1: {:.4}; judge failed on {} items (F1 0)\n\
             QA macro-F1 as the reference averages (judge failures left out): {:.4}\n",
            s.macro_f1, s.pooled_f1, s.judge_failed, s.macro_f1_reference
        );
        if s.images_unavailable > 0 {
            text.push_str(&format!(
                "items skipped, images unavailable (left out of every figure): {}\n",
                s.images_unavailable
            ));
        }
        Some(Headline {
            text,
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
    fn the_error_class_table_lists_every_class_in_order() {
        let layout = &OmniMatCal.layouts()[1];
        let Rows::Listed(rows) = layout.rows else {
            panic!("listed rows")
        };
        let names: Vec<&str> = super::super::cal::CalErrorClass::ALL
            .iter()
            .map(|c| c.name())
            .collect();
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), names);
        for (name, path) in rows {
            assert_eq!(*path, format!("error_classes.{name}"));
        }
    }

    #[test]
    fn a_reply_without_answer_gets_one_reminder() {
        let messages = vec![Message::system("s"), Message::user("q")];
        let again = reminder(&messages, "I think 42.").unwrap();
        assert_eq!(again[1].content, format!("q{ANSWER_REMINDER}"));
        assert_eq!(again[0].content, "s");
        assert!(reminder(&messages, "<answer>42</answer>").is_none());
    }

    #[test]
    fn images_follow_the_question_or_the_item_is_unanswerable() {
        let png = |n: u8| crate::task::Image::from_bytes("image/png", &[n]);
        let mut item: CalItem = serde_json::from_value(serde_json::json!({
            "id": "m1", "type": "Demo", "question": "q", "multimodal": true,
            "image_url": "m1_img2, m1_img1", "final_answer_list": ["1"]
        }))
        .unwrap();
        // No images loaded (no directory): asked of no model, tabled apart, not scored.
        let p = OmniMatCal.prepare(&item).unwrap();
        let u = OmniMatCal.unanswerable(&p.state).unwrap();
        let (group, v) = (u.group, u.verdict);
        assert_eq!(group, "images unavailable");
        assert!(u.why.contains("m1_img2, m1_img1"));
        assert_eq!(v.label, CalLabel::ImagesUnavailable);
        assert!(v.note.unwrap().contains("m1_img2, m1_img1"));
        let s = super::super::cal::CalSummary::of([(
            "images unavailable",
            &OmniMatCal.unanswerable(&p.state).unwrap().verdict,
        )]);
        assert_eq!((s.items, s.images_unavailable), (0, 1));
        assert!(s
            .table()
            .contains("images unavailable (left out of every figure): 1"));
        // The server's reason is kept.
        item.images_unavailable = Some("images unavailable (stem m1_img2 not found in /d)".into());
        let p = OmniMatCal.prepare(&item).unwrap();
        assert_eq!(
            OmniMatCal
                .unanswerable(&p.state)
                .unwrap()
                .verdict
                .note
                .as_deref(),
            Some("images unavailable (stem m1_img2 not found in /d)")
        );
        // Loaded: after the text and the format constraint, in the stems' order.
        item.images_unavailable = None;
        item.images = vec![png(2), png(1)];
        let p = OmniMatCal.prepare(&item).unwrap();
        assert!(OmniMatCal.unanswerable(&p.state).is_none());
        assert!(p.messages[0].images.is_empty());
        assert!(p.messages[1]
            .content
            .ends_with("output only the filled answer structure."));
        assert_eq!(p.messages[1].images, vec![png(2), png(1)]);
        // The same for QA; a text-only item is always asked.
        let qa: QaItem = serde_json::from_value(serde_json::json!({
            "id": "q1", "question": "q", "image_url": "a",
            "key_points": [{"id": "point_1", "description": "d"}]
        }))
        .unwrap();
        let p = OmniMatQa.prepare(&qa).unwrap();
        let v = OmniMatQa.unanswerable(&p.state).unwrap().verdict;
        assert_eq!(v.label, QaLabel::ImagesUnavailable);
        let s = super::super::qa::QaSummary::of([("x", &v)]);
        assert_eq!((s.per_subfield.len(), s.images_unavailable), (0, 1));
        let text_only = QaItem {
            image_url: None,
            ..qa
        };
        assert!(OmniMatQa
            .unanswerable(&OmniMatQa.prepare(&text_only).unwrap().state)
            .is_none());
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
