//! The AtomWorld paper's sensitivity studies as suites. Each asks one action, the paper's
//! `insert_between` of an H atom (the data of its analyses: `src/data/analysis_data/
//! insert_between_atoms_action_*.csv` of AtomWorldBench, in the newest wording), on structures
//! that differ in one respect, and tables the answers by it:
//!
//! - [`atom_count`]: one structure in supercells of 1 to 18 copies (12 to 216 atoms for a
//!   12-atom cell, Fig. 13), the same prompt at every size;
//! - [`bravais`]: the 14 Bravais lattices, conventional cells of 12–28 atoms, sites 3 and 5
//!   (Fig. 14);
//! - [`position`]: the first two sites against the last two of the same structures
//!   (Table 8).
//!
//! Their tasks, prompts and scoring are AtomWorld's; a study's generator and the group of a
//! task are its own. The group is read from the task itself (its size, its lattice by the
//! engine's symmetry finder, its indices), so a file of tasks is tabled as honestly as a
//! generated set.

pub mod atom_count;
pub mod bravais;
pub mod position;

use std::marker::PhantomData;

use engine::interrupt::Interrupt;
use engine::Structure;
use serde::{Deserialize, Serialize};

use super::action::Action;
use super::evaluate::Verdict;
use super::generator::pool::{pool, require_builtin, PoolEntry, POOL_ID};
use super::generator::rng::TaskRng;
use super::generator::sample::round;
use super::generator::user_pool::read_pool;
use super::generator::{as_model_sees, GeneratedTask};
use super::suite::{AtomWorld, Reference};
use super::task::{AtomWorldTask, Resolved};
use super::wording::{PromptStyle, Wording};
use crate::task::layout::{Layout, Rows};
use crate::task::source::Located;
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// What determines a study's task set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudySpec {
    /// The seed.
    pub seed: u64,
    /// Tasks per group (structures per size, per lattice, per position).
    pub per_group: usize,
    /// The structure pool's identifier.
    pub pool: String,
}

/// A study's drawn tasks and what it could not draw, in words.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// The tasks.
    pub tasks: Vec<GeneratedTask>,
    /// Shortfalls and choices a reader of the table must know ("aP: 1 of 10 …").
    pub notes: Vec<String>,
}

/// One sensitivity study: its name, its table, how it draws tasks and how it groups them.
pub trait Study: Send + Sync + 'static {
    /// The suite's name.
    const NAME: &'static str;
    /// Its table, rows by [`Study::group`].
    const LAYOUT: Layout;
    /// The most tasks a set of `per_group` per group has.
    fn at_most(per_group: usize) -> usize;
    /// The tasks of `spec` over the pool `entries`.
    fn draw(spec: &StudySpec, entries: &[PoolEntry]) -> Drawn;
    /// The group a task belongs to, read from the task; an error when it is none of the
    /// study's.
    fn group(task: &Resolved) -> Result<String, String>;
}

/// The numbers of a study's rows: how many answers, the success rate, the failure types that matter for an
/// insertion and the closeness of the successes.
pub const VALUES: &[(&str, &str)] = &[
    ("answers", "n"),
    ("success", "success_rate"),
    ("format", "failure_shares.OutputFormatError"),
    ("count wrong", "failure_shares.AtomCountMismatch"),
    ("mismatch", "failure_shares.StructureMismatch"),
    ("max_dist (median)", "max_dist.median"),
];

/// A study's table: a row per group of the headline's `per_action` map.
pub const fn layout(
    title: &'static str,
    source: &'static str,
    row_heading: &'static str,
) -> Layout {
    Layout {
        title,
        source,
        row_heading,
        rows: Rows::Each {
            at: "per_action",
            label: None,
        },
        values: VALUES,
        mean_row: false,
    }
}

/// The studies' action: an H atom inserted between sites `from` and `to` at a seeded share
/// (0.1 to 0.9, as the benchmark draws it) of their distance, printed to 0.01 Å. `None` when
/// that rounds to nothing.
pub fn insert_h(input: &Structure, from: usize, to: usize, rng: &mut TaskRng) -> Option<Action> {
    let (p, q) = (input.cartesian(from), input.cartesian(to));
    let len = engine::numeric::norm([q[0] - p[0], q[1] - p[1], q[2] - p[2]]);
    let distance = round(rng.uniform(0.1, 0.9) * len, 2);
    let element = engine::Element::from_symbol("H")?;
    (distance > 0.0).then_some(Action::InsertBetween {
        element,
        from,
        to,
        distance,
    })
}

/// The task `id` on `structure` as the model sees it, with `action` in the newest wording (the
/// paper's analysis data).
pub fn task_on(
    id: String,
    name: &str,
    structure: &Structure,
    action: &Action,
) -> Option<GeneratedTask> {
    let (cif, input) = as_model_sees(structure)?;
    let style = PromptStyle {
        wording: Wording::Newest,
        ..PromptStyle::default()
    };
    GeneratedTask::build(id, name, (cif, &input), action, style).map(|(t, _)| t)
}

/// `entries` in a seeded order (stream `stream`).
pub fn shuffled<'a, T>(
    seed: u64,
    stream: u32,
    entries: impl IntoIterator<Item = &'a T>,
) -> Vec<&'a T> {
    let mut list: Vec<&T> = entries.into_iter().collect();
    let mut rng = TaskRng::new(seed, stream, 0);
    for i in (1..list.len()).rev() {
        list.swap(i, rng.below(i + 1));
    }
    list
}

/// A study as a [`Suite`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sensitivity<S>(PhantomData<S>);

impl<S: Study> Sensitivity<S> {
    /// The spec `params` describe.
    fn spec(params: &serde_json::Value) -> Result<StudySpec, TaskError> {
        StudySpec::deserialize(params)
            .map_err(|e| TaskError(format!("not a {} task set: {e}", S::NAME)))
    }

    /// The lines `gen` writes and a line on how they were drawn.
    fn lines(spec: &StudySpec, drawn: &Drawn) -> (Vec<serde_json::Value>, String) {
        let lines = drawn.tasks.iter().map(GeneratedTask::line).collect();
        let mut text = format!(
            "{} tasks (seed {}, pool {}, {} per group)",
            drawn.tasks.len(),
            spec.seed,
            spec.pool,
            spec.per_group
        );
        for note in &drawn.notes {
            text.push_str("; ");
            text.push_str(note);
        }
        (lines, text)
    }
}

impl<S: Study> Suite for Sensitivity<S> {
    const NAME: &'static str = S::NAME;
    type Task = AtomWorldTask;
    type State = Reference;
    type Verdict = Verdict;

    fn key(task: &AtomWorldTask) -> String {
        AtomWorld::key(task)
    }

    fn read_tasks(&self, name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        AtomWorld.read_tasks(name, text)
    }

    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = StudySpec {
            seed,
            per_group,
            pool: POOL_ID.into(),
        };
        Some(Generator {
            at_most: S::at_most(per_group),
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<AtomWorldTask>, TaskError> {
        let spec = Self::spec(params)?;
        require_builtin(&spec.pool).map_err(TaskError)?;
        Ok(S::draw(&spec, &pool())
            .tasks
            .iter()
            .map(GeneratedTask::task)
            .collect())
    }

    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        let spec = Self::spec(params)?;
        require_builtin(&spec.pool).map_err(TaskError)?;
        Ok(Self::lines(&spec, &S::draw(&spec, &pool())))
    }

    /// The study drawn from a pool of the user's (as `gen --pool` reads it for AtomWorld).
    fn generated_lines_from_pool(
        &self,
        params: &serde_json::Value,
        files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        let pool = read_pool(files).map_err(|e| TaskError(e.to_string()))?;
        let spec = StudySpec {
            pool: pool.id.clone(),
            ..Self::spec(params)?
        };
        let (lines, mut text) = Self::lines(&spec, &S::draw(&spec, &pool.entries));
        text.push_str(&format!(
            "; {} structures read from the pool",
            pool.entries.len()
        ));
        for s in &pool.skipped {
            text.push_str(&format!("\n  unreadable, left out: {}: {}", s.place, s.why));
        }
        Ok((lines, text))
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        AtomWorld.columns()
    }

    fn table_words(&self) -> TableWords {
        AtomWorld.table_words()
    }

    /// The task as AtomWorld prepares it, tabled under its group of this study; a task of
    /// no group of the study is refused, naming why.
    fn prepare(&self, task: &AtomWorldTask) -> Result<Prepared<Reference>, TaskError> {
        let resolved = task.resolve()?;
        let group =
            S::group(&resolved).map_err(|why| TaskError(format!("task {}: {why}", task.id)))?;
        let mut p = AtomWorld::prepare_resolved(task, resolved)?;
        p.group = group;
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
        std::slice::from_ref(&S::LAYOUT)
    }

    fn baselines(&self) -> &'static [&'static str] {
        AtomWorld.baselines()
    }

    fn baseline_answer(&self, name: &str, state: &Reference) -> Option<String> {
        AtomWorld.baseline_answer(name, state)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::task::AnySuite;

    /// Every task of a generated set of `suite` is prepared into a group, the reference
    /// answers pass and the unchanged input fails; the groups and their sizes.
    pub(crate) fn groups_of(
        suite: &dyn AnySuite,
        seed: u64,
        per_group: usize,
    ) -> std::collections::BTreeMap<String, usize> {
        let g = suite.generator(seed, per_group).unwrap();
        let tasks = suite.generate(&g.params).unwrap();
        assert!(tasks.len() <= g.at_most, "{} > {}", tasks.len(), g.at_most);
        let mut groups = std::collections::BTreeMap::new();
        for t in &tasks {
            let p = suite.prepare_json(t).unwrap();
            for (name, pass) in [("reference", true), ("copy-input", false)] {
                let answer = suite.baseline_answer(name, &p).unwrap();
                let s = suite.score(&p, &answer, &[], &Interrupt::new()).unwrap();
                assert_eq!(s.outcome.success, pass, "{name} on {}: {s:?}", p.id);
            }
            *groups.entry(p.group).or_insert(0) += 1;
        }
        groups
    }
}
