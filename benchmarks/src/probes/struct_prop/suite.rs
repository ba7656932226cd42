//! StructProp as a [`Suite`]: the goals asked equally often, each answer checked for a
//! readable, changed CIF. No property scorer runs here (the paper scores with DFT), so a
//! readable changed answer stays "Unscored", and every table and verdict says so rather
//! than counting it as a failure of the model.

use engine::interrupt::Interrupt;
use serde::Deserialize;

use super::{
    evaluate, every_goal, generate_each, goal_name, PropLabel, PropSetSpec, PropVerdict,
    StructPropTask,
};
use crate::atomworld::evaluate::cif_answer;
use crate::atomworld::generator::pool::{require_builtin, POOL_ID};
use crate::probes::figures::{per_group, Row};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::{Generator, Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError};

/// The StructProp probe, without a property scorer.
#[derive(Clone, Copy, Debug, Default)]
pub struct StructProp;

/// The answer with the input unchanged.
pub const COPY_INPUT: &str = "copy-input";

/// Why a readable, changed answer has no score.
const UNSCORED: &str = "no property scorer is configured on this server (the paper computes \
                        the property with DFT): the answer is a readable, changed CIF, not scored";

const COLUMNS: [(&str, &str); 6] = [
    ("NotAchieved", "Missed"),
    ("Unscored", "Unscored"),
    ("OutputFormatError", "Format"),
    ("CifParsingError", "Parse"),
    ("Unchanged", "Unchanged"),
    ("ScoringFailed", "Scorer failed"),
];

const LAYOUTS: [Layout; 1] = [Layout {
    title: "StructProp per goal: answers a property scorer could score",
    source: "AtomWorld, Table 3 (StructProp; scored there with DFT, here not scored)",
    row_heading: "goal",
    rows: Rows::Each {
        at: "per_group",
        label: None,
    },
    values: &[
        ("readable and changed (unscored)", "shares.Unscored"),
        ("unchanged", "shares.Unchanged"),
        ("unreadable", "unreadable"),
    ],
    mean_row: true,
}];

impl Suite for StructProp {
    const NAME: &'static str = "struct-prop";
    type Task = StructPropTask;
    type State = StructPropTask;
    type Verdict = PropVerdict;

    fn key(task: &StructPropTask) -> String {
        task.id.clone()
    }

    /// `per_group` tasks of each of the four goals (two properties, two directions).
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = PropSetSpec {
            seed,
            pool: POOL_ID.into(),
            per_goal: per_group,
        };
        Some(Generator {
            at_most: every_goal().len() * per_group,
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<StructPropTask>, TaskError> {
        let spec = PropSetSpec::deserialize(params)
            .map_err(|e| TaskError(format!("not a StructProp task set: {e}")))?;
        require_builtin(&spec.pool).map_err(TaskError)?;
        Ok(generate_each(&spec))
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "goal",
            metric: "change",
        }
    }

    fn prepare(&self, task: &StructPropTask) -> Result<Prepared<StructPropTask>, TaskError> {
        Ok(Prepared {
            messages: vec![Message::user(super::model_prompt(
                &task.input_cif,
                task.property,
                task.direction,
            ))],
            group: goal_name(task.property, task.direction),
            state: task.clone(),
        })
    }

    fn score(
        &self,
        task: &StructPropTask,
        response: &str,
        _answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> PropVerdict {
        evaluate(task, response, None)
    }

    fn outcome(v: &PropVerdict) -> Outcome {
        let success = v.label == PropLabel::Achieved;
        Outcome {
            label: v.label.name().to_string(),
            success,
            metric: None,
            why: match v.label {
                PropLabel::Achieved => None,
                PropLabel::Unscored => Some(UNSCORED.to_string()),
                _ => Some(v.detail.clone()),
            },
        }
    }

    fn headline(&self, rows: &[(&str, &PropVerdict)]) -> Option<Headline> {
        if rows.is_empty() {
            return None;
        }
        let figure_rows: Vec<Row> = rows
            .iter()
            .map(|(group, v)| Row {
                group,
                label: v.label.name(),
                success: v.label == PropLabel::Achieved,
                distance: None,
            })
            .collect();
        let labels: Vec<&str> = PropLabel::ALL.iter().map(|l| l.name()).collect();
        let mut per_group = serde_json::to_value(per_group(&figure_rows, &labels))
            .unwrap_or(serde_json::Value::Null);
        // Unreadable: no CIF, or one that does not parse.
        if let Some(groups) = per_group.as_object_mut() {
            for g in groups.values_mut() {
                let share = |l: &str| g["shares"][l].as_f64().unwrap_or(0.0);
                let unreadable = share("OutputFormatError") + share("CifParsingError");
                g["unreadable"] = serde_json::json!(unreadable);
            }
        }
        let unscored = rows
            .iter()
            .filter(|(_, v)| v.label == PropLabel::Unscored)
            .count();
        Some(Headline {
            text: format!(
                "Unscored: {unscored} of {} answers are readable, changed CIFs; {UNSCORED}. \
                 The prompt is the reference's (AtomWorldBench property_action_prompt)\n",
                rows.len()
            ),
            json: serde_json::json!({ "scorer": null, "unscored": unscored, "per_group": per_group }),
        })
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[COPY_INPUT]
    }

    fn baseline_answer(&self, name: &str, task: &StructPropTask) -> Option<String> {
        (name == COPY_INPUT).then(|| cif_answer(&task.input_cif))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    #[test]
    fn goals_copy_is_unchanged_and_an_edit_is_unscored_not_failed() {
        let g = Suite::generator(&StructProp, 3, 2).unwrap();
        let tasks = AnySuite::generate(&StructProp, &g.params).unwrap();
        assert_eq!(tasks.len(), 8);
        let mut rows = Vec::new();
        for t in &tasks {
            let p = StructProp.prepare_json(t).unwrap();
            let copy = AnySuite::baseline_answer(&StructProp, COPY_INPUT, &p).unwrap();
            let s = AnySuite::score(&StructProp, &p, &copy, &[], &Interrupt::new()).unwrap();
            assert_eq!(s.outcome.label, "Unchanged");
            rows.push((p.group.clone(), s.verdict));
            // The same CIF with its first cell length changed.
            let input = t["input_cif"].as_str().unwrap();
            let edited = input
                .lines()
                .map(|l| match l.strip_prefix("_cell_length_a") {
                    Some(v) => format!("_cell_length_a {}", v.trim().parse::<f64>().unwrap() * 1.1),
                    None => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n");
            let s = AnySuite::score(
                &StructProp,
                &p,
                &format!("<cif>{edited}</cif>"),
                &[],
                &Interrupt::new(),
            )
            .unwrap();
            assert_eq!(s.outcome.label, "Unscored", "{s:?}");
            assert!(!s.outcome.success);
            assert!(s.outcome.why.unwrap().contains("no property scorer"));
            rows.push((p.group.clone(), s.verdict));
        }
        let h = AnySuite::headline(&StructProp, &rows).unwrap();
        assert_eq!(h.json["unscored"], 8);
        let goal = &h.json["per_group"]["increase band gap"];
        assert_eq!(goal["shares"]["Unscored"], 0.5);
        assert_eq!(goal["shares"]["Unchanged"], 0.5);
        assert_eq!(goal["unreadable"], 0.0);
    }
}
