//! CIF-Repair as a [`Suite`]: every one of the paper's 22 corruptions equally often, each
//! answer scored by the AtomWorld evaluator against the undamaged CIF (the placeholder filled
//! in first), tabled per corruption with the overall rate of the paper's Table 3.

use engine::cif::PymatgenCif;
use engine::interrupt::Interrupt;
use serde::Deserialize;

use super::evaluate::{evaluate_against, RepairVerdict};
use super::generator::{generate_each, CifRepairTask, RepairSetSpec};
use crate::atomworld::evaluate::{cif_answer, parse_target, Label};
use crate::atomworld::generator::pool::{require_builtin, POOL_ID};
use crate::probes::figures::{success_headline, Row};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// The CIF-Repair probe.
#[derive(Clone, Copy, Debug, Default)]
pub struct CifRepair;

/// What scoring a repair needs.
#[derive(Clone, Debug)]
pub struct RepairState {
    original: PymatgenCif,
    removed_value: Option<String>,
    original_cif: String,
    corrupted_cif: String,
}

/// The answer with the undamaged CIF.
pub const REFERENCE: &str = "reference";
/// The answer with the damaged CIF as given.
pub const COPY_INPUT: &str = "copy-input";

/// The paper's kinds of damage: 13 lines removed, 9 renamings.
const CORRUPTIONS: usize = 22;

const COLUMNS: [(&str, &str); 5] = [
    ("OutputFormatError", "Format"),
    ("CifParsingError", "Parse"),
    ("AtomCountMismatch", "Count"),
    ("StructureMismatch", "Match"),
    ("EvaluationTimeout", "Timeout"),
];

const LAYOUTS: [Layout; 1] = [Layout {
    title: "CIF-Repair success rate per corruption",
    source: "AtomWorld, Table 3 (CIF-Repair; the split by corruption is ours)",
    row_heading: "corruption",
    rows: Rows::Each {
        at: "per_group",
        label: None,
    },
    values: &[("success", "success_rate")],
    mean_row: true,
}];

impl Suite for CifRepair {
    const NAME: &'static str = "cif-repair";
    type Task = CifRepairTask;
    type State = RepairState;
    type Verdict = RepairVerdict;

    fn key(task: &CifRepairTask) -> String {
        task.id.clone()
    }

    /// `per_group` tasks of each of the 22 corruptions, each on a mineral of the pool.
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = RepairSetSpec {
            seed,
            pool: POOL_ID.into(),
            per_corruption: per_group,
        };
        Some(Generator {
            at_most: CORRUPTIONS * per_group,
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<CifRepairTask>, TaskError> {
        let spec = RepairSetSpec::deserialize(params)
            .map_err(|e| TaskError(format!("not a CIF-Repair task set: {e}")))?;
        require_builtin(&spec.pool).map_err(TaskError)?;
        Ok(generate_each(&spec))
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "corruption",
            metric: "max_dist",
        }
    }

    fn prepare(&self, task: &CifRepairTask) -> Result<Prepared<RepairState>, TaskError> {
        let original = parse_target(&task.original_cif)
            .map_err(|e| TaskError(format!("task {}: {e}", task.id)))?;
        Ok(Prepared {
            messages: vec![Message::user(super::prompt::model_prompt(
                &task.corrupted_cif,
            ))],
            group: task.corruption.name(),
            state: RepairState {
                original,
                removed_value: task.corruption.removed_value().map(str::to_string),
                original_cif: task.original_cif.clone(),
                corrupted_cif: task.corrupted_cif.clone(),
            },
        })
    }

    fn score(
        &self,
        state: &RepairState,
        response: &str,
        _answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> RepairVerdict {
        evaluate_against(
            &state.original,
            state.removed_value.as_deref(),
            response,
            interrupt,
        )
    }

    fn outcome(v: &RepairVerdict) -> Outcome {
        let success = v.verdict.label == Label::Success;
        Outcome {
            label: v.verdict.label.name().to_string(),
            success,
            metric: v.verdict.max_dist.filter(|_| success),
            why: (!success).then(|| v.verdict.detail.clone()),
        }
    }

    fn view(v: &RepairVerdict) -> VerdictView {
        let mut view = VerdictView::default();
        if v.placeholders_replaced > 0 {
            view.facts.push(format!(
                "{} placeholder(s) filled with the removed value",
                v.placeholders_replaced
            ));
        }
        if v.placeholders_left > 0 {
            view.facts.push(format!(
                "{} placeholder(s) left: nothing was removed to put there",
                v.placeholders_left
            ));
        }
        view
    }

    fn headline(&self, rows: &[(&str, &RepairVerdict)]) -> Option<Headline> {
        if rows.is_empty() {
            return None;
        }
        let figure_rows: Vec<Row> = rows
            .iter()
            .map(|(group, v)| Row {
                group,
                label: v.verdict.label.name(),
                success: v.verdict.label == Label::Success,
                distance: v
                    .verdict
                    .max_dist
                    .filter(|_| v.verdict.label == Label::Success),
            })
            .collect();
        let labels: Vec<&str> = Label::ALL
            .iter()
            .chain([&Label::EvaluationTimeout])
            .map(|l| l.name())
            .collect();
        let (successes, json) = success_headline(&figure_rows, &labels);
        Some(Headline {
            text: format!(
                "Repaired: {successes} of {} (the reference's prompt, AtomWorldBench \
                 cif_repair_prompt)\n",
                rows.len()
            ),
            json,
        })
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE, COPY_INPUT]
    }

    fn baseline_answer(&self, name: &str, state: &RepairState) -> Option<String> {
        let cif = match name {
            REFERENCE => &state.original_cif,
            COPY_INPUT => &state.corrupted_cif,
            _ => return None,
        };
        Some(cif_answer(cif))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    #[test]
    fn every_corruption_once_reference_passes_copy_fails() {
        let g = Suite::generator(&CifRepair, 11, 1).unwrap();
        let tasks = AnySuite::generate(&CifRepair, &g.params).unwrap();
        assert_eq!(tasks.len(), CORRUPTIONS);
        let mut rows = Vec::new();
        let mut groups = std::collections::BTreeSet::new();
        for t in &tasks {
            let p = CifRepair.prepare_json(t).unwrap();
            groups.insert(p.group.clone());
            for (name, pass) in [(REFERENCE, true), (COPY_INPUT, false)] {
                let answer = AnySuite::baseline_answer(&CifRepair, name, &p).unwrap();
                let s = AnySuite::score(&CifRepair, &p, &answer, &[], &Interrupt::new()).unwrap();
                assert_eq!(s.outcome.success, pass, "{name} on {}: {s:?}", p.group);
                rows.push((p.group.clone(), s.verdict));
            }
        }
        assert_eq!(groups.len(), CORRUPTIONS);
        assert!(groups.contains("remove _cell_length_a"), "{groups:?}");
        assert!(groups.contains("rename _cell_* → _lattice_*"), "{groups:?}");
        let h = AnySuite::headline(&CifRepair, &rows).unwrap();
        assert_eq!(h.json["success_rate"], 0.5);
        assert_eq!(
            h.json["per_group"]["remove _atom_site_label"]["success_rate"],
            0.5
        );
        // Seeded: the same parameters draw the same tasks.
        assert_eq!(tasks, AnySuite::generate(&CifRepair, &g.params).unwrap());
    }
}
