//! CAL results over many items: slot accuracy pooled over every paired slot (micro) and the
//! mean of per-subfield slot accuracies (macro), both modes, each labelled (the reference
//! does not say which the paper used); item accuracy; and the answers the reference's
//! inference step would have dropped, with the accuracy both ways.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error_class::{error_class, CalErrorClass};
use super::score::CalVerdict;

/// A number in both modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Modes {
    /// Exact mode (rounding to the gold's decimals).
    pub exact: f64,
    /// 10 % threshold mode.
    pub threshold: f64,
}

/// A labelled figure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What it is, in words.
    pub label: String,
    /// Its value in both modes.
    pub value: Modes,
}

/// One subfield's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubfieldCal {
    /// Items.
    pub items: usize,
    /// Paired slots.
    pub slots: usize,
    /// Slots correct, exact mode.
    pub correct_exact: usize,
    /// Slots correct, threshold mode.
    pub correct_threshold: usize,
    /// Items fully correct, exact mode.
    pub items_exact: usize,
    /// Items fully correct, threshold mode.
    pub items_threshold: usize,
    /// Slot accuracy in both modes.
    pub slot_accuracy: Modes,
}

/// The CAL summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CalSummary {
    /// Per subfield.
    pub per_subfield: BTreeMap<String, SubfieldCal>,
    /// Items scored.
    pub items: usize,
    /// Answers the reference would have dropped (falsy `<answer>`).
    pub reference_drops: usize,
    /// Slot accuracy pooled over every paired slot (micro).
    pub pooled: Figure,
    /// Mean of the per-subfield slot accuracies (macro).
    pub macro_by_subfield: Figure,
    /// Fraction of items with every slot right and the right slot count.
    pub item_accuracy: Figure,
    /// Pooled slot accuracy leaving the dropped answers out (as the reference reports).
    pub pooled_without_drops: Figure,
    /// Pooled slot accuracy counting the dropped answers' slots as wrong.
    pub pooled_drops_as_wrong: Figure,
    /// Items left out of every figure because their images are unavailable.
    #[serde(default)]
    pub images_unavailable: usize,
    /// Wrong items per error class of our own taxonomy ([`CalErrorClass`]), by the class's
    /// name; every class is present.
    #[serde(default)]
    pub error_classes: BTreeMap<String, usize>,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl CalSummary {
    /// Summarise `(subfield, verdict)` rows.
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a str, &'a CalVerdict)>) -> Self {
        let mut per: BTreeMap<String, SubfieldCal> = BTreeMap::new();
        let (mut items, mut drops) = (0, 0);
        let (mut slots, mut ce, mut ct, mut ie, mut it) = (0, 0, 0, 0, 0);
        let (mut kept_slots, mut kept_ce, mut kept_ct) = (0, 0, 0);
        let (mut wrong_ce, mut wrong_ct, mut skipped) = (0, 0, 0);
        let mut classes: BTreeMap<String, usize> = CalErrorClass::ALL
            .iter()
            .map(|c| (c.name().to_string(), 0))
            .collect();
        for (subfield, v) in rows {
            if v.label == super::score::CalLabel::ImagesUnavailable {
                skipped += 1;
                continue;
            }
            if let Some(class) = error_class(v) {
                *classes.entry(class.name().to_string()).or_default() += 1;
            }
            let s = per.entry(subfield.to_string()).or_default();
            let (n, e, t) = (v.slots.len(), v.correct_exact(), v.correct_threshold());
            s.items += 1;
            s.slots += n;
            s.correct_exact += e;
            s.correct_threshold += t;
            s.items_exact += usize::from(v.item_exact == 1.0);
            s.items_threshold += usize::from(v.item_threshold == 1.0);
            items += 1;
            slots += n;
            ce += e;
            ct += t;
            ie += usize::from(v.item_exact == 1.0);
            it += usize::from(v.item_threshold == 1.0);
            if v.reference_drops {
                drops += 1;
            } else {
                kept_slots += n;
                kept_ce += e;
                kept_ct += t;
                wrong_ce += e;
                wrong_ct += t;
            }
        }
        for s in per.values_mut() {
            s.slot_accuracy = Modes {
                exact: ratio(s.correct_exact, s.slots),
                threshold: ratio(s.correct_threshold, s.slots),
            };
        }
        let k = per.len().max(1) as f64;
        let macro_modes = Modes {
            exact: per.values().map(|s| s.slot_accuracy.exact).sum::<f64>() / k,
            threshold: per.values().map(|s| s.slot_accuracy.threshold).sum::<f64>() / k,
        };
        let fig = |label: &str, exact: f64, threshold: f64| Figure {
            label: label.to_string(),
            value: Modes { exact, threshold },
        };
        CalSummary {
            items,
            reference_drops: drops,
            pooled: fig(
                "slot accuracy, pooled over all slots (micro)",
                ratio(ce, slots),
                ratio(ct, slots),
            ),
            macro_by_subfield: Figure {
                label: "slot accuracy, mean over subfields (macro)".into(),
                value: macro_modes,
            },
            item_accuracy: fig(
                "item accuracy (all slots right, right slot count)",
                ratio(ie, items),
                ratio(it, items),
            ),
            pooled_without_drops: fig(
                "slot accuracy, pooled, dropped answers left out (as the reference)",
                ratio(kept_ce, kept_slots),
                ratio(kept_ct, kept_slots),
            ),
            pooled_drops_as_wrong: fig(
                "slot accuracy, pooled, dropped answers counted wrong",
                ratio(wrong_ce, slots),
                ratio(wrong_ct, slots),
            ),
            per_subfield: per,
            images_unavailable: skipped,
            error_classes: classes,
        }
    }

    /// The summary as text: a Markdown table of the subfields, then the labelled figures.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| subfield | items | slots | exact | threshold |\n|---|---:|---:|---:|---:|\n",
        );
        for (name, s) in &self.per_subfield {
            out.push_str(&format!(
                "| {name} | {} | {} | {:.4} | {:.4} |\n",
                s.items, s.slots, s.slot_accuracy.exact, s.slot_accuracy.threshold
            ));
        }
        for f in [
            &self.pooled,
            &self.macro_by_subfield,
            &self.item_accuracy,
            &self.pooled_without_drops,
            &self.pooled_drops_as_wrong,
        ] {
            out.push_str(&format!(
                "{}: exact {:.4}, threshold {:.4}\n",
                f.label, f.value.exact, f.value.threshold
            ));
        }
        out.push_str(&format!(
            "answers the reference would drop (falsy <answer>): {} of {}\n",
            self.reference_drops, self.items
        ));
        let wrong: Vec<String> = CalErrorClass::ALL
            .iter()
            .filter_map(|c| {
                let n = self.error_classes.get(c.name()).copied().unwrap_or(0);
                (n > 0).then(|| format!("{} {n}", c.name()))
            })
            .collect();
        if !wrong.is_empty() {
            out.push_str(&format!(
                "wrong items by error class (our taxonomy): {}\n",
                wrong.join(", ")
            ));
        }
        if self.images_unavailable > 0 {
            out.push_str(&format!(
                "items skipped, images unavailable (left out of every figure): {}\n",
                self.images_unavailable
            ));
        }
        out
    }
}

/// The paper's overall score: (CAL slot accuracy + QA macro-F1) / 2.
pub fn overall(cal_slot_accuracy: f64, qa_macro_f1: f64) -> f64 {
    (cal_slot_accuracy + qa_macro_f1) / 2.0
}

#[cfg(test)]
mod tests {
    use super::super::score::score_response;
    use super::*;

    #[test]
    fn micro_and_macro_differ() {
        let g1 = vec!["1".to_string(), "2".to_string(), "3".to_string()];
        let g2 = vec!["5".to_string()];
        let a = score_response(&g1, "[\"1\", \"2\", \"3\"]");
        let b = score_response(&g2, "[\"6\"]");
        let c = score_response(&g2, "<answer>0</answer>");
        let s = CalSummary::of([("A", &a), ("B", &b), ("B", &c)]);
        assert_eq!(s.pooled.value.exact, 3.0 / 5.0);
        assert_eq!(s.macro_by_subfield.value.exact, 0.5);
        assert_eq!(s.reference_drops, 1);
        assert_eq!(s.pooled_without_drops.value.exact, 3.0 / 4.0);
        assert_eq!(s.pooled_drops_as_wrong.value.exact, 3.0 / 5.0);
        assert!(s.table().contains("macro"));
        // b (6 for 5) is another value; c (0 for 5) as well.
        assert_eq!(s.error_classes["Wrong value"], 2);
        assert_eq!(s.error_classes["No answer"], 0);
        assert_eq!(s.error_classes.len(), CalErrorClass::ALL.len());
        assert!(s
            .table()
            .contains("wrong items by error class (our taxonomy): Wrong value 2\n"));
        assert_eq!(overall(0.3, 0.4), 0.35);
    }
}
