//! Where the sites are named (the AtomWorld paper's Table 8): on each of the same structures,
//! an H atom inserted between the first two sites (0 and 1) and, as a second task, between the
//! last two (N−2 and N−1), each at its own seeded share of their distance. The structures are
//! AtomMotor-2K's shared list (10–100 atoms, H to Os).

use super::{insert_h, layout, task_on, Drawn, Study, StudySpec};
use crate::atomworld::action::Action;
use crate::atomworld::generator::pool::PoolEntry;
use crate::atomworld::generator::rng::TaskRng;
use crate::atomworld::generator::{as_model_sees, shared_list};
use crate::atomworld::task::Resolved;
use crate::task::layout::Layout;

/// The action-position study.
#[derive(Clone, Copy, Debug, Default)]
pub struct Position;

/// The group of the tasks on sites 0 and 1.
pub const FIRST: &str = "first two (0, 1)";
/// The group of the tasks on sites N−2 and N−1.
pub const LAST: &str = "last two (N-2, N-1)";

/// The study's draws.
const STREAM: u32 = 0x5354_0003;

impl Study for Position {
    const NAME: &'static str = "atomworld-position";
    const LAYOUT: Layout = layout(
        "insert_between by the position of its sites",
        "AtomWorld, Table 8",
        "sites",
    );

    fn at_most(per_group: usize) -> usize {
        per_group * 2
    }

    fn draw(spec: &StudySpec, entries: &[PoolEntry]) -> Drawn {
        let list = shared_list(spec.seed, entries);
        let mut drawn = Drawn::default();
        for (k, entry) in list.iter().take(spec.per_group).enumerate() {
            let Some((_, seen)) = as_model_sees(&entry.structure) else {
                continue;
            };
            let n = seen.len();
            for (half, (tag, from, to)) in [("first", 0, 1), ("last", n - 2, n - 1)]
                .into_iter()
                .enumerate()
            {
                let mut rng = TaskRng::new(spec.seed, STREAM, (2 * k + half) as u32);
                let task = insert_h(&seen, from, to, &mut rng)
                    .and_then(|a| task_on(format!("{tag}-{k:03}"), &entry.name, &seen, &a));
                match task {
                    Some(t) => drawn.tasks.push(t),
                    None => drawn
                        .notes
                        .push(format!("{}: no {tag} insertion could be drawn", entry.name)),
                }
            }
        }
        if list.len() < spec.per_group {
            drawn.notes.push(format!(
                "{} of {} structures asked (the pool has no more of 10-100 atoms, H to Os)",
                list.len(),
                spec.per_group
            ));
        }
        drawn
    }

    /// First or last by the action's sites; any other insertion is none of the study's.
    fn group(task: &Resolved) -> Result<String, String> {
        let n = task.input.len();
        match task.action {
            Some(Action::InsertBetween { from: 0, to: 1, .. }) => Ok(FIRST.into()),
            Some(Action::InsertBetween { from, to, .. })
                if n >= 2 && (from, to) == (n - 2, n - 1) =>
            {
                Ok(LAST.into())
            }
            _ => Err("not an insertion between the first two or the last two sites".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomworld::studies::tests::groups_of;
    use crate::atomworld::studies::Sensitivity;
    use crate::task::AnySuite;

    /// Each structure gives a first and a last task on the same input; any other task is
    /// refused with the reason.
    #[test]
    fn first_and_last_on_the_same_structures() {
        let suite = Sensitivity::<Position>::default();
        let groups = groups_of(&suite, 5, 4);
        assert_eq!(groups.get(FIRST), Some(&4));
        assert_eq!(groups.get(LAST), Some(&4));
        let g = suite.generator(5, 4).unwrap();
        let tasks = suite.generate(&g.params).unwrap();
        for pair in tasks.chunks(2) {
            assert_eq!(pair[0]["input_cif"], pair[1]["input_cif"]);
            assert!(pair[0]["id"].as_str().unwrap().starts_with("first-"));
            assert!(pair[1]["id"].as_str().unwrap().starts_with("last-"));
        }
        let atomworld = crate::atomworld::suite::AtomWorld;
        let other = atomworld
            .generate(
                &crate::task::Suite::generator(&atomworld, 5, 1)
                    .unwrap()
                    .params,
            )
            .unwrap();
        let e = suite.prepare_json(&other[0]).unwrap_err();
        assert!(e.0.contains("not an insertion between"), "{e}");
    }
}
