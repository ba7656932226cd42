//! The `move_all` probe as a [`Suite`]: every atom shifted by one vector, the answer compared
//! site by site in order (the AtomWorld paper's order-sensitive metric, Table 9). Its tasks,
//! prompts and scoring are AtomWorld's; only its generator (move_all alone) and its table
//! are its own.

use std::collections::BTreeMap;

use engine::interrupt::Interrupt;

use crate::atomworld::action::ActionKind;
use crate::atomworld::evaluate::Verdict;
use crate::atomworld::generator::TaskSetSpec;
use crate::atomworld::suite::{AtomWorld, Reference};
use crate::atomworld::task::AtomWorldTask;
use crate::task::layout::{Layout, Rows};
use crate::task::source::Located;
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// The move_all probe.
#[derive(Clone, Copy, Debug, Default)]
pub struct MoveAll;

const LAYOUTS: [Layout; 1] = [Layout {
    title: "move_all, compared site by site in order",
    source: "AtomWorld, Table 9",
    row_heading: "action",
    rows: Rows::Each {
        at: "per_action",
        label: None,
    },
    values: &[
        ("success", "success_rate"),
        ("count wrong", "failure_shares.AtomCountMismatch"),
        ("mismatch", "failure_shares.StructureMismatch"),
        ("max_dist (median)", "max_dist.median"),
    ],
    mean_row: false,
}];

impl Suite for MoveAll {
    const NAME: &'static str = "move-all";
    type Task = AtomWorldTask;
    type State = Reference;
    type Verdict = Verdict;

    fn key(task: &AtomWorldTask) -> String {
        AtomWorld::key(task)
    }

    fn read_tasks(&self, name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        AtomWorld.read_tasks(name, text)
    }

    /// `per_group` move_all tasks over the shipped pool.
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = TaskSetSpec {
            counts: BTreeMap::from([(ActionKind::MoveAll, per_group)]),
            ..TaskSetSpec::per_action(seed, 0)
        };
        Some(Generator {
            at_most: per_group,
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<AtomWorldTask>, TaskError> {
        AtomWorld.generate(params)
    }

    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        AtomWorld.generated_lines(params)
    }

    fn generated_lines_from_pool(
        &self,
        params: &serde_json::Value,
        files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        AtomWorld.generated_lines_from_pool(params, files)
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        AtomWorld.columns()
    }

    fn table_words(&self) -> TableWords {
        AtomWorld.table_words()
    }

    /// The task as AtomWorld prepares it; any other action is refused (it belongs to the
    /// benchmark, not to this probe).
    fn prepare(&self, task: &AtomWorldTask) -> Result<Prepared<Reference>, TaskError> {
        let p = AtomWorld.prepare(task)?;
        if p.group != ActionKind::MoveAll.name() {
            return Err(TaskError(format!(
                "task {}: a {} task, not move_all (run it with the atomworld suite)",
                task.id, p.group
            )));
        }
        Ok(p)
    }

    fn score(
        &self,
        state: &Reference,
        response: &str,
        answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> Verdict {
        AtomWorld.score(state, response, answers, interrupt)
    }

    fn scoring_scale(&self, state: &Reference) -> u32 {
        AtomWorld.scoring_scale(state)
    }

    fn outcome(v: &Verdict) -> Outcome {
        AtomWorld::outcome(v)
    }

    fn view(v: &Verdict) -> VerdictView {
        AtomWorld::view(v)
    }

    fn eval_verdict(v: &Verdict) -> serde_json::Value {
        AtomWorld::eval_verdict(v)
    }

    fn headline(&self, rows: &[(&str, &Verdict)]) -> Option<Headline> {
        AtomWorld.headline(rows)
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    fn baselines(&self) -> &'static [&'static str] {
        AtomWorld.baselines()
    }

    fn baseline_answer(&self, name: &str, state: &Reference) -> Option<String> {
        AtomWorld.baseline_answer(name, state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    #[test]
    fn move_all_only_reference_passes_copy_fails() {
        let g = Suite::generator(&MoveAll, 4, 5).unwrap();
        let tasks = AnySuite::generate(&MoveAll, &g.params).unwrap();
        assert_eq!(tasks.len(), 5);
        let mut rows = Vec::new();
        for t in &tasks {
            let p = MoveAll.prepare_json(t).unwrap();
            assert_eq!(p.group, "move_all");
            for (name, pass) in [("reference", true), ("copy-input", false)] {
                let answer = AnySuite::baseline_answer(&MoveAll, name, &p).unwrap();
                let s = AnySuite::score(&MoveAll, &p, &answer, &[], &Interrupt::new()).unwrap();
                assert_eq!(s.outcome.success, pass, "{name} on {}: {s:?}", p.id);
                rows.push((p.group.clone(), s.verdict));
            }
        }
        let h = AnySuite::headline(&MoveAll, &rows).unwrap();
        assert_eq!(h.json["per_action"]["move_all"]["success_rate"], 0.5);
        // A benchmark action is not this probe's.
        let other = AnySuite::generate(
            &crate::atomworld::suite::AtomWorld,
            &Suite::generator(&crate::atomworld::suite::AtomWorld, 4, 1)
                .unwrap()
                .params,
        )
        .unwrap();
        let e = MoveAll.prepare_json(&other[0]).unwrap_err();
        assert!(e.0.contains("not move_all"), "{e}");
    }
}
