//! The item: slots paired by index up to max(len gold, len prediction) (a missing slot is
//! "", so extra predicted slots count wrong unless empty), and the item scores.

use serde::{Deserialize, Serialize};

use super::prediction::{parse_prediction, reference_drops, Parsed, Route};
use super::slot::{score_slot, Quirk, SlotVerdict};
use crate::task::{VerdictView, ViewTable};

/// The verdict's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CalLabel {
    /// Every slot matches in exact mode and the slot counts agree.
    Correct,
    /// The prediction has no slots.
    NoAnswer,
    /// The slot counts differ.
    WrongCount,
    /// Same slot count, some slot wrong in exact mode.
    WrongSlots,
    /// The item's images are unavailable: asked of no model, left out of every figure.
    ImagesUnavailable,
}

impl CalLabel {
    /// The label's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            CalLabel::Correct => "Correct",
            CalLabel::NoAnswer => "NoAnswer",
            CalLabel::WrongCount => "WrongCount",
            CalLabel::WrongSlots => "WrongSlots",
            CalLabel::ImagesUnavailable => "ImagesUnavailable",
        }
    }
}

/// The verdict on one CAL answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalVerdict {
    /// The label (exact mode).
    pub label: CalLabel,
    /// The gold slots, flattened.
    pub gold: Vec<String>,
    /// The predicted slots as parsed.
    pub predicted: Vec<String>,
    /// How the prediction was cut into slots.
    pub route: Route,
    /// Per paired slot: both modes and quirks.
    pub slots: Vec<SlotVerdict>,
    /// 1 when the counts agree and every slot matches in exact mode, else 0.
    pub item_exact: f64,
    /// The same in threshold mode.
    pub item_threshold: f64,
    /// Whether the reference's inference step would have dropped this answer as an error
    /// (falsy `<answer>` content such as `0` or `[]`) and left it out of every denominator.
    pub reference_drops: bool,
    /// Why the reference's behaviour decided a slot, in sentences (none when nothing
    /// notable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl CalVerdict {
    /// The verdict on an item whose images are unavailable (`why`): no answer was asked for,
    /// no slot is paired.
    pub fn images_unavailable(gold: &[String], why: &str) -> Self {
        CalVerdict {
            label: CalLabel::ImagesUnavailable,
            gold: gold.to_vec(),
            predicted: Vec::new(),
            route: super::prediction::Route::Empty,
            slots: Vec::new(),
            item_exact: 0.0,
            item_threshold: 0.0,
            reference_drops: false,
            note: Some(why.to_string()),
        }
    }

    /// Slots matched in exact mode.
    pub fn correct_exact(&self) -> usize {
        self.slots.iter().filter(|s| s.exact).count()
    }

    /// Slots matched in threshold mode.
    pub fn correct_threshold(&self) -> usize {
        self.slots.iter().filter(|s| s.threshold).count()
    }
}

/// Score `response` (text, as a model or an `eval` line gives it) against `gold` slots.
pub fn score_response(gold: &[String], response: &str) -> CalVerdict {
    score_parsed(gold, parse_prediction(response), reference_drops(response))
}

/// Score an already parsed prediction.
pub fn score_parsed(gold: &[String], parsed: Parsed, drops: bool) -> CalVerdict {
    let pred = &parsed.slots;
    let n = gold.len().max(pred.len());
    let slots: Vec<SlotVerdict> = (0..n)
        .map(|i| {
            let g = gold.get(i).map(String::as_str).unwrap_or("");
            let p = pred.get(i).map(String::as_str).unwrap_or("");
            score_slot(g, p, i >= gold.len())
        })
        .collect();
    let same_len = !gold.is_empty() && gold.len() == pred.len();
    let item_exact = f64::from(u8::from(same_len && slots.iter().all(|s| s.exact)));
    let item_threshold = f64::from(u8::from(same_len && slots.iter().all(|s| s.threshold)));
    let label = if pred.is_empty() {
        CalLabel::NoAnswer
    } else if gold.len() != pred.len() {
        CalLabel::WrongCount
    } else if item_exact == 1.0 {
        CalLabel::Correct
    } else {
        CalLabel::WrongSlots
    };
    let note = note_of(&slots, &parsed, drops);
    CalVerdict {
        label,
        gold: gold.to_vec(),
        predicted: parsed.slots.clone(),
        route: parsed.route,
        slots,
        item_exact,
        item_threshold,
        reference_drops: drops,
        note,
    }
}

fn note_of(slots: &[SlotVerdict], parsed: &Parsed, drops: bool) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    if parsed.route == Route::Boxed {
        lines.push("the first brace-free \\boxed{} in the text was taken as the only slot (it wins over JSON and <answer>)".into());
    } else if parsed.boxed_skipped {
        lines.push("a \\boxed{} with braces inside was skipped".into());
    }
    if parsed.float_rewritten {
        lines.push("JSON numbers were read as Python floats and printed back (e.g. 1E5 → \"100000.0\", 1e400 → \"inf\")".into());
    }
    if drops {
        lines.push("the reference's inference step files a falsy answer (such as 0 or []) as an error and leaves it out of every denominator".into());
    }
    let mut seen: Vec<Quirk> = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        for q in &s.quirks {
            if !seen.contains(q) {
                seen.push(*q);
                lines.push(format!("slot {}: {}", i + 1, q.describe()));
            }
        }
    }
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// What a page shows of a CAL verdict: each slot's gold and prediction, matched in exact mode
/// (and whether within 10 %), how the prediction was cut into slots, and the reference's
/// behaviour where it decided a slot.
pub fn view(v: &CalVerdict) -> VerdictView {
    let mut view = VerdictView::default();
    if !v.slots.is_empty() {
        let table = v.slots.iter().enumerate().fold(
            ViewTable::new(&["Slot", "Reference", "Answer", "Within 10 %"]),
            |t, (i, s)| {
                t.row(
                    vec![
                        (i + 1).to_string(),
                        s.gold.clone(),
                        s.predicted.clone(),
                        if s.threshold { "yes" } else { "no" }.into(),
                    ],
                    Some(s.exact),
                )
            },
        );
        view.table = Some(table);
        view.facts
            .push(format!("slots read from {}", v.route.describe()));
    }
    if let Some(class) = super::error_class::error_class(v) {
        view.facts
            .push(format!("error class (our taxonomy): {}", class.name()));
    }
    view.text(
        "How the reference decided",
        v.note.as_deref().unwrap_or_default(),
        true,
    )
}

/// What a wrong verdict's slots say, in a sentence: how many slots each side has, or which
/// slots differ (gold against predicted).
pub fn why(v: &CalVerdict) -> Option<String> {
    match v.label {
        CalLabel::WrongCount => Some(format!(
            "The answer has {} slot{} where the reference has {}.",
            v.predicted.len(),
            if v.predicted.len() == 1 { "" } else { "s" },
            v.gold.len()
        )),
        CalLabel::WrongSlots => {
            let wrong: Vec<String> = v
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.exact)
                .map(|(i, s)| format!("slot {}: {} expected, {} given", i + 1, s.gold, s.predicted))
                .collect();
            Some(format!(
                "{} of {} slots differ: {}.",
                wrong.len(),
                v.slots.len(),
                wrong.join("; ")
            ))
        }
        CalLabel::NoAnswer => Some("The answer has no slots (no <answer> content).".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_page_shows_each_slot_beside_the_reference() {
        let v = score_response(&gold(&["1.5", "2"]), "<answer>[\"1.6\"]</answer>");
        let view = view(&v);
        let table = view.table.expect("a slot table");
        assert_eq!(
            table.columns,
            ["Slot", "Reference", "Answer", "Within 10 %"]
        );
        assert_eq!(table.rows[0].cells, ["1", "1.5", "1.6", "yes"]);
        assert_eq!(table.rows[0].ok, Some(false));
        assert_eq!(table.rows[1].cells, ["2", "2", "", "no"]);
        assert_eq!(
            view.facts,
            [
                "slots read from <answer> as JSON",
                "error class (our taxonomy): Wrong number of values"
            ]
        );
    }

    #[test]
    fn pairs_and_counts() {
        let g = gold(&["1", "2"]);
        let v = score_response(&g, "<answer>[\"1\", \"2\"]</answer>");
        assert_eq!((v.label, v.item_exact), (CalLabel::Correct, 1.0));
        let v = score_response(&g, "<answer>[\"1\"]</answer>");
        assert_eq!((v.label, v.slots.len()), (CalLabel::WrongCount, 2));
        assert_eq!(v.correct_exact(), 1);
        let v = score_response(&g, "<answer>[\"1\", \"2\", \"\"]</answer>");
        assert_eq!(
            (v.label, v.correct_exact(), v.item_exact),
            (CalLabel::WrongCount, 3, 0.0)
        );
        assert!(v.note.is_some());
        let v = score_response(&g, "");
        assert_eq!((v.label, v.correct_exact()), (CalLabel::NoAnswer, 0));
        let v = score_response(&[], "[]");
        assert_eq!(v.item_exact, 0.0);
    }
}
