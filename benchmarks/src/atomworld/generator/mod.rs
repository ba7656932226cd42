//! The seeded task generator: one u64 seed and a pool give the same tasks on every target.
//!
//! Each task draws from its own ChaCha stream (seed, action, task number), picks a pool
//! structure and parameters (the reference code), renders the prompt, and parses it back, so the target
//! is always computed from the printed (rounded) values. Tasks whose target a model could
//! pass by returning the input unchanged are rejected and redrawn by default.

pub mod pool;
pub mod rng;
pub mod sample;
pub mod user_pool;

use std::collections::BTreeMap;

use engine::cif::{read_cif, write_cif};
use engine::Structure;
use serde::{Deserialize, Serialize};

use super::task::AtomWorldTask;

use self::pool::{pool, PoolEntry, POOL_ID};
use self::rng::TaskRng;
use super::action::{Action, ActionKind};
use super::apply::{apply, readings_differ, Semantics};
use super::parse::parse_prompt;
use super::wording::{render_prompt, PromptStyle, Separator, Wording};

/// Attempts per task (structures × parameters) before the task is reported as impossible.
pub const MAX_ATTEMPTS: usize = 200;

/// What to do with tasks whose input would already pass as the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoOpPolicy {
    /// Redraw them (and count them): the default.
    #[default]
    Reject,
    /// Keep them, as the reference generator did.
    Keep,
}

/// How a task set picks its "before" structures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructureDraw {
    /// Each task draws its own structure from the whole pool (the sets stored before the
    /// shared list; still what a stored spec without the field means).
    #[default]
    PerTask,
    /// As the AtomWorld paper builds AtomMotor-2K: task `k` of every action starts from the
    /// `k`-th structure of one seeded list of the pool's structures with 10–100 atoms and
    /// elements H to Os, so the actions are compared on the same structures. A structure the
    /// action cannot be drawn on is replaced by the next in the list (counted).
    Shared,
}

/// Everything that determines a task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSetSpec {
    /// The seed.
    pub seed: u64,
    /// The structure pool's identifier ([`POOL_ID`]).
    pub pool: String,
    /// Tasks per action.
    pub counts: BTreeMap<ActionKind, usize>,
    /// Prompt wording.
    pub wording: Wording,
    /// No-op handling.
    pub no_ops: NoOpPolicy,
    /// How the "before" structures are picked.
    #[serde(default)]
    pub structures: StructureDraw,
}

impl TaskSetSpec {
    /// The default set, "AtomMotor-style": 250 tasks for each of the ten actions, seed 2026.
    pub fn atommotor_default() -> Self {
        Self::per_action(2026, 250)
    }

    /// `n` tasks of each of the ten benchmark actions, on shared structures.
    pub fn per_action(seed: u64, n: usize) -> Self {
        Self {
            seed,
            pool: POOL_ID.into(),
            counts: ActionKind::BENCHMARK.iter().map(|k| (*k, n)).collect(),
            wording: Wording::Data2026,
            no_ops: NoOpPolicy::Reject,
            structures: StructureDraw::Shared,
        }
    }
}

/// One generated task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratedTask {
    /// Stable identifier: `<action>-<number>`.
    pub id: String,
    /// Name of the pool structure.
    pub structure_name: String,
    /// The input structure, as read back from `input_cif`.
    pub input: Structure,
    /// The input as the model sees it (pymatgen CifWriter style).
    pub input_cif: String,
    /// The ground truth (pymatgen CifWriter style, positions wrapped into the cell).
    pub target_cif: String,
    /// The action, as parsed back from the prompt.
    pub action: Action,
    /// The action prompt.
    pub prompt: String,
    /// True when the physical reading gives a different structure than the reference.
    pub readings_differ: bool,
}

impl GeneratedTask {
    /// The task as files and runs carry it.
    pub fn task(&self) -> AtomWorldTask {
        AtomWorldTask {
            id: self.id.clone(),
            input_cif: self.input_cif.clone(),
            action_prompt: self.prompt.clone(),
            target_cif: Some(self.target_cif.clone()),
        }
    }
}

impl GeneratedTask {
    /// The task `id` on `input` (its CIF text and that text read back: see [`as_model_sees`])
    /// with the action `drawn`, worded in `style`: the prompt is rendered and read back, and
    /// the target computed from what it says; with the target structure. `None` when the
    /// prompt cannot be rendered or read back or the action cannot be applied.
    pub fn build(
        id: String,
        structure_name: &str,
        (input_cif, input): (String, &Structure),
        drawn: &Action,
        style: PromptStyle,
    ) -> Option<(Self, Structure)> {
        let prompt = render_prompt(drawn, style, input).ok()?;
        let action = parse_prompt(&prompt, input).ok()?;
        let target = apply(input, &action, Semantics::Reference).ok()?.structure;
        let task = GeneratedTask {
            id,
            structure_name: structure_name.to_string(),
            target_cif: write_cif(&target.wrapped()),
            input_cif,
            input: input.clone(),
            readings_differ: readings_differ(input, &action).unwrap_or(false),
            action,
            prompt,
        };
        Some((task, target))
    }

    /// The task as `gen` writes it: with its structure's name, its action's parameters and
    /// whether its readings differ (what the Python reference's driver reads).
    pub fn line(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "action": self.action.kind().name(),
            "structure": self.structure_name,
            "input_cif": self.input_cif,
            "action_prompt": self.prompt,
            "target_cif": self.target_cif,
            "parameters": self.action,
            "readings_differ": self.readings_differ,
        })
    }
}

/// The CIF text a model is shown for `structure` and that text read back: tasks act on what
/// the model sees (8 decimals), not on the unrounded structure behind it. `None` when the
/// text does not read back.
pub fn as_model_sees(structure: &Structure) -> Option<(String, Structure)> {
    let cif = write_cif(structure);
    let input = read_cif(&cif).ok()?;
    Some((cif, input))
}

/// Counts of what the generator drew and threw away.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationReport {
    /// Tasks rejected because copying the input would pass them.
    pub no_ops_rejected: BTreeMap<ActionKind, usize>,
    /// No-op tasks kept (with [`NoOpPolicy::Keep`]).
    pub no_ops_kept: BTreeMap<ActionKind, usize>,
    /// Draws skipped because the structure allowed no such action (swap, delete_below).
    pub skipped: BTreeMap<ActionKind, usize>,
    /// Tasks that could not be generated within [`MAX_ATTEMPTS`].
    pub failed: BTreeMap<ActionKind, usize>,
    /// With shared structures: the list's length (structures of 10–100 atoms, H to Os).
    #[serde(default)]
    pub shared_structures: usize,
    /// With shared structures: tasks that start from another structure than their number's,
    /// because the action could not be drawn on it.
    #[serde(default)]
    pub substituted: BTreeMap<ActionKind, usize>,
}

/// Parameter draws on one structure of the shared list before the next one is taken.
const DRAWS_PER_STRUCTURE: usize = 10;

/// Stream of the shared list's shuffle (beyond every action's stream number).
const SHARED_LIST_STREAM: u32 = 0x5348_4152;

/// The shared list of `entries`: those within the paper's range, in a seeded order.
pub fn shared_list(seed: u64, entries: &[PoolEntry]) -> Vec<&PoolEntry> {
    let mut list: Vec<&PoolEntry> = entries
        .iter()
        .filter(|e| pool::in_paper_range(&e.structure))
        .collect();
    let mut rng = TaskRng::new(seed, SHARED_LIST_STREAM, 0);
    for i in (1..list.len()).rev() {
        list.swap(i, rng.below(i + 1));
    }
    list
}

/// Whether returning the input unchanged would be judged a success: `(input, target, kind)`
/// (the evaluator, by the action's comparison rule: `noop::copy_would_pass`).
pub type CopyPasses = dyn Fn(&Structure, &Structure, ActionKind) -> bool;

/// Generate the task set `spec` over the shipped pool, leaving out (or counting) the tasks
/// that `copy_passes` says the unchanged input would pass.
pub fn generate(
    spec: &TaskSetSpec,
    copy_passes: &CopyPasses,
) -> (Vec<GeneratedTask>, GenerationReport) {
    let entries = pool();
    generate_from(spec, &entries, copy_passes)
}

/// [`generate`] over a given pool.
pub fn generate_from(
    spec: &TaskSetSpec,
    entries: &[PoolEntry],
    copy_passes: &CopyPasses,
) -> (Vec<GeneratedTask>, GenerationReport) {
    let mut tasks = Vec::new();
    let mut report = GenerationReport::default();
    if entries.is_empty() {
        return (tasks, report);
    }
    let shared = match spec.structures {
        StructureDraw::Shared => {
            let list = shared_list(spec.seed, entries);
            report.shared_structures = list.len();
            if list.is_empty() {
                for (&kind, &count) in &spec.counts {
                    *report.failed.entry(kind).or_default() += count;
                }
                return (tasks, report);
            }
            Some(list)
        }
        StructureDraw::PerTask => None,
    };
    for (&kind, &count) in &spec.counts {
        for number in 0..count {
            let mut rng = TaskRng::new(spec.seed, kind as u32, number as u32);
            let mut made = None;
            for attempt in 0..MAX_ATTEMPTS {
                let entry = match &shared {
                    Some(list) => list[(number + attempt / DRAWS_PER_STRUCTURE) % list.len()],
                    None => &entries[rng.below(entries.len())],
                };
                let Some((input_cif, input)) = as_model_sees(&entry.structure) else {
                    continue;
                };
                let s = &input;
                let Some(drawn) = sample::sample(kind, s, &mut rng) else {
                    *report.skipped.entry(kind).or_default() += 1;
                    continue;
                };
                let style = PromptStyle {
                    wording: spec.wording,
                    separator: Separator::ALL[rng.below(Separator::ALL.len())],
                };
                let id = format!("{}-{number:04}", kind.name());
                let Some((task, target)) =
                    GeneratedTask::build(id, &entry.name, (input_cif, s), &drawn, style)
                else {
                    continue;
                };
                if copy_passes(s, &target, kind) {
                    if spec.no_ops == NoOpPolicy::Reject {
                        *report.no_ops_rejected.entry(kind).or_default() += 1;
                        continue;
                    }
                    *report.no_ops_kept.entry(kind).or_default() += 1;
                }
                if shared.is_some() && attempt >= DRAWS_PER_STRUCTURE {
                    *report.substituted.entry(kind).or_default() += 1;
                }
                made = Some(task);
                break;
            }
            match made {
                Some(t) => tasks.push(t),
                None => *report.failed.entry(kind).or_default() += 1,
            }
        }
    }
    (tasks, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &Structure, _: &Structure, _: ActionKind) -> bool {
        false
    }

    #[test]
    fn same_seed_same_tasks_and_targets_follow_the_prompts() {
        let spec = TaskSetSpec::per_action(11, 3);
        let (a, ra) = generate(&spec, &never);
        let (b, _) = generate(&spec, &never);
        assert_eq!(a, b);
        assert_eq!(a.len(), 30);
        assert!(ra.failed.is_empty());
        for t in &a {
            assert_eq!(parse_prompt(&t.prompt, &t.input).unwrap(), t.action);
        }
        let (c, _) = generate(&TaskSetSpec::per_action(12, 3), &never);
        assert_ne!(a, c);
    }

    /// AtomMotor-2K as the paper builds it: task k of every action starts from the same
    /// structure (but where the action cannot be drawn on it, counted), each of 10–100 atoms
    /// with elements up to Os.
    #[test]
    fn the_ten_actions_share_their_structures() {
        let spec = TaskSetSpec::per_action(21, 12);
        let (tasks, report) = generate(&spec, &crate::atomworld::noop::copy_would_pass);
        assert_eq!(tasks.len(), 120);
        assert!(report.shared_structures > 100, "{report:?}");
        let entries = pool();
        let list = shared_list(21, &entries);
        let mut moved = 0;
        for t in &tasks {
            assert!(pool::in_paper_range(&t.input), "{}", t.id);
            let number: usize = t.id.rsplit('-').next().unwrap().parse().unwrap();
            if t.structure_name != list[number].name {
                moved += 1;
            }
        }
        let substituted: usize = report.substituted.values().sum();
        assert_eq!(moved, substituted, "{report:?}");
        assert!(substituted <= 12, "{report:?}");
        // Heavier elements than Os are never drawn.
        assert!(list.iter().all(|e| e
            .structure
            .sites
            .iter()
            .all(|s| s.element.z() <= pool::MAX_Z)));
        assert!(list.len() < entries.len());
    }

    #[test]
    fn adding_tasks_keeps_earlier_ones() {
        let (small, _) = generate(&TaskSetSpec::per_action(5, 2), &never);
        let (large, _) = generate(&TaskSetSpec::per_action(5, 4), &never);
        for t in &small {
            assert!(large.contains(t), "{} changed", t.id);
        }
    }

    #[test]
    fn no_ops_are_rejected_and_counted() {
        // Treat a change to the same element as the only no-op.
        let same = |a: &Structure, b: &Structure, _: ActionKind| a == b;
        let mut spec = TaskSetSpec::per_action(3, 0);
        spec.counts.insert(ActionKind::Change, 300);
        let (tasks, report) = generate(&spec, &same);
        assert_eq!(tasks.len(), 300);
        for t in &tasks {
            let target = apply(&t.input, &t.action, Semantics::Reference).unwrap();
            assert_ne!(target.structure, t.input);
        }
        let rejected = report.no_ops_rejected.get(&ActionKind::Change).copied();
        assert!(
            rejected.unwrap_or(0) > 0,
            "300 draws over 118 elements hit the same element"
        );
    }
}
