//! CIF-Gen as a [`Suite`]: every structure type equally often, each answer matched against
//! the structure we build for it, tabled per type as the paper's per-type grid (Fig. 3).

use engine::cif::{parse_cif_like_pymatgen_detailed, PymatgenCif};
use engine::interrupt::Interrupt;
use serde::Deserialize;

use super::evaluate::{evaluate_against, gen_matcher_options, GenLabel, GenVerdict};
use super::generator::{generate_each, CifGenTask, GenSetSpec};
use super::prototype::Prototype;
use crate::atomworld::evaluate::cif_answer;
use crate::probes::figures::{success_headline, Row};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// The CIF-Gen probe.
#[derive(Clone, Copy, Debug, Default)]
pub struct CifGen;

/// What scoring needs: the parsed reference structure and its CIF (for the baseline).
#[derive(Clone, Debug)]
pub struct GenState {
    reference: PymatgenCif,
    reference_cif: String,
}

/// The answer with the reference structure.
pub const REFERENCE: &str = "reference";
/// An answer with no CIF in it.
pub const EMPTY: &str = "empty";

const COLUMNS: [(&str, &str); 4] = [
    ("OutputFormatError", "Format"),
    ("CifParsingError", "Parse"),
    ("CompositionMismatch", "Composition"),
    ("StructureMismatch", "Match"),
];

const LAYOUTS: [Layout; 1] = [Layout {
    title: "CIF-Gen per structure type",
    source: "AtomWorld, Fig. 3 (the per-type grid) and Table 3 (CIF-Gen)",
    row_heading: "structure type",
    rows: Rows::Each {
        at: "per_group",
        label: None,
    },
    values: &[
        ("success", "success_rate"),
        ("composition wrong", "shares.CompositionMismatch"),
        ("no match", "shares.StructureMismatch"),
    ],
    mean_row: true,
}];

impl Suite for CifGen {
    const NAME: &'static str = "cif-gen";
    type Task = CifGenTask;
    type State = GenState;
    type Verdict = GenVerdict;

    fn key(task: &CifGenTask) -> String {
        task.id.clone()
    }

    /// `per_group` tasks of each of the 13 structure types.
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = GenSetSpec {
            seed,
            per_prototype: per_group,
        };
        Some(Generator {
            at_most: Prototype::ALL.len() * per_group,
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<CifGenTask>, TaskError> {
        let spec = GenSetSpec::deserialize(params)
            .map_err(|e| TaskError(format!("not a CIF-Gen task set: {e}")))?;
        Ok(generate_each(&spec))
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "structure type",
            metric: "max_dist",
        }
    }

    fn prepare(&self, task: &CifGenTask) -> Result<Prepared<GenState>, TaskError> {
        let reference = parse_cif_like_pymatgen_detailed(&task.reference_cif).map_err(|e| {
            TaskError(format!(
                "task {}: the reference does not parse: {e}",
                task.id
            ))
        })?;
        Ok(Prepared {
            messages: vec![Message::user(task.prompt.clone())],
            group: task.prototype.name().to_string(),
            state: GenState {
                reference,
                reference_cif: task.reference_cif.clone(),
            },
        })
    }

    fn score(
        &self,
        state: &GenState,
        response: &str,
        _answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> GenVerdict {
        evaluate_against(&state.reference, response, &gen_matcher_options())
    }

    fn outcome(v: &GenVerdict) -> Outcome {
        let success = v.label == GenLabel::Success;
        Outcome {
            label: v.label.name().to_string(),
            success,
            metric: v.max_dist.filter(|_| success),
            why: (!success).then(|| v.detail.clone()),
        }
    }

    fn view(v: &GenVerdict) -> VerdictView {
        let mut view = VerdictView::default();
        if !v.predicted_counts.is_empty() {
            let counts: Vec<String> = v
                .predicted_counts
                .iter()
                .map(|(el, n)| format!("{el} {n}"))
                .collect();
            view.facts
                .push(format!("sites in the answer: {}", counts.join(", ")));
        }
        view
    }

    fn headline(&self, rows: &[(&str, &GenVerdict)]) -> Option<Headline> {
        if rows.is_empty() {
            return None;
        }
        let figure_rows: Vec<Row> = rows
            .iter()
            .map(|(group, v)| Row {
                group,
                label: v.label.name(),
                success: v.label == GenLabel::Success,
                distance: v.max_dist.filter(|_| v.label == GenLabel::Success),
            })
            .collect();
        let labels: Vec<&str> = GenLabel::ALL.iter().map(|l| l.name()).collect();
        let (successes, json) = success_headline(&figure_rows, &labels);
        Some(Headline {
            text: format!(
                "Generated right: {successes} of {} (references built here; the prompt is the \
                 reference's frame around our hints)\n",
                rows.len()
            ),
            json,
        })
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE, EMPTY]
    }

    fn baseline_answer(&self, name: &str, state: &GenState) -> Option<String> {
        match name {
            REFERENCE => Some(cif_answer(&state.reference_cif)),
            EMPTY => Some(String::new()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    #[test]
    fn every_type_reference_passes_empty_fails() {
        let g = Suite::generator(&CifGen, 5, 2).unwrap();
        let tasks = AnySuite::generate(&CifGen, &g.params).unwrap();
        assert_eq!(tasks.len(), g.at_most);
        let mut rows = Vec::new();
        for t in &tasks {
            let p = CifGen.prepare_json(t).unwrap();
            for (name, pass) in [(REFERENCE, true), (EMPTY, false)] {
                let answer = AnySuite::baseline_answer(&CifGen, name, &p).unwrap();
                let s = AnySuite::score(&CifGen, &p, &answer, &[], &Interrupt::new()).unwrap();
                assert_eq!(s.outcome.success, pass, "{name} on {}: {s:?}", p.id);
                rows.push((p.group.clone(), s.verdict));
            }
        }
        let h = AnySuite::headline(&CifGen, &rows).unwrap();
        let per = h.json["per_group"].as_object().unwrap();
        assert_eq!(per.len(), Prototype::ALL.len());
        assert_eq!(per["rock-salt"]["success_rate"], 0.5);
        assert_eq!(per["rock-salt"]["shares"]["OutputFormatError"], 0.5);
    }
}
