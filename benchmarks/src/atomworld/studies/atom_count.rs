//! Number of atoms (the AtomWorld paper's Fig. 13): one structure of 12 sites in supercells of
//! 1, 2, 4, 8, 12 and 18 copies (12 to 216 atoms), asked the same `insert_between` at every
//! size. Supercells list the original cell's sites first, so sites 3 and 5 and the prompt are
//! the same at every size. The paper asks one structure ten times: `--per-group 1 --samples
//! 10`.

use engine::Structure;

use super::{insert_h, layout, shuffled, task_on, Drawn, Study, StudySpec};
use crate::atomworld::action::Action;
use crate::atomworld::generator::pool::PoolEntry;
use crate::atomworld::generator::rng::TaskRng;
use crate::atomworld::task::Resolved;
use crate::task::layout::Layout;

/// The number-of-atoms study.
#[derive(Clone, Copy, Debug, Default)]
pub struct AtomCount;

/// Sites of the structures the study starts from (the paper's BiOF cell, mp-762304).
pub const CELL_SITES: usize = 12;

/// The supercells, image-major as the benchmark builds them: 12, 24, 48, 96, 144 and 216
/// atoms from a 12-site cell.
pub const COPIES: [[u32; 3]; 6] = [
    [1, 1, 1],
    [2, 1, 1],
    [2, 2, 1],
    [2, 2, 2],
    [3, 2, 2],
    [3, 3, 2],
];

/// The sites the action joins (the paper's data: "between atoms at indices 3 and 5").
const SITES: (usize, usize) = (3, 5);

/// The study's draws: the structure order and each structure's action.
const STREAM: u32 = 0x5354_0001;

/// A group's name: the atom count, zero-padded so that the table's rows sort by size.
pub fn group_name(atoms: usize) -> String {
    format!("{atoms:03} atoms")
}

impl Study for AtomCount {
    const NAME: &'static str = "atomworld-atoms";
    const LAYOUT: Layout = layout(
        "insert_between by number of atoms",
        "AtomWorld, Fig. 13",
        "atoms",
    );

    fn at_most(per_group: usize) -> usize {
        per_group * COPIES.len()
    }

    /// `per_group` structures of [`CELL_SITES`] sites in a seeded order, each with one
    /// action asked at every size.
    fn draw(spec: &StudySpec, entries: &[PoolEntry]) -> Drawn {
        let cells = entries.iter().filter(|e| e.structure.len() == CELL_SITES);
        let list = shuffled(spec.seed, STREAM, cells);
        let mut drawn = Drawn::default();
        for (k, entry) in list.iter().take(spec.per_group).enumerate() {
            let mut rng = TaskRng::new(spec.seed, STREAM, k as u32 + 1);
            let Some((action, base)) = cell_action(&entry.structure, &mut rng) else {
                drawn
                    .notes
                    .push(format!("{}: no insertion could be drawn", entry.name));
                continue;
            };
            for copies in COPIES {
                let supercell = base.supercell(copies);
                let id = format!("atoms-{k:02}-{:03}", supercell.len());
                match task_on(id, &entry.name, &supercell, &action) {
                    Some(t) => drawn.tasks.push(t),
                    None => drawn.notes.push(format!(
                        "{} {}×{}×{}: the action does not apply",
                        entry.name, copies[0], copies[1], copies[2]
                    )),
                }
            }
        }
        if list.len() < spec.per_group {
            drawn.notes.push(format!(
                "{} of {} structures asked (the pool has no more of {CELL_SITES} sites)",
                list.len(),
                spec.per_group
            ));
        }
        drawn
    }

    fn group(task: &Resolved) -> Result<String, String> {
        Ok(group_name(task.input.len()))
    }
}

/// The action on `cell` as the model sees it (drawn there, so that its distance is what the
/// printed cell gives), and that cell.
fn cell_action(cell: &Structure, rng: &mut TaskRng) -> Option<(Action, Structure)> {
    let (_, seen) = crate::atomworld::generator::as_model_sees(cell)?;
    let action = insert_h(&seen, SITES.0, SITES.1, rng)?;
    Some((action, seen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomworld::studies::tests::groups_of;
    use crate::atomworld::studies::Sensitivity;
    use crate::task::AnySuite;

    /// Six sizes of each structure, the same prompt at every size, the reference passing and
    /// the unchanged input failing at each.
    #[test]
    fn six_sizes_one_prompt() {
        let suite = Sensitivity::<AtomCount>::default();
        let groups = groups_of(&suite, 7, 2);
        let sizes: Vec<&str> = groups.keys().map(String::as_str).collect();
        assert_eq!(
            sizes,
            [
                "012 atoms",
                "024 atoms",
                "048 atoms",
                "096 atoms",
                "144 atoms",
                "216 atoms"
            ]
        );
        assert!(groups.values().all(|&n| n == 2), "{groups:?}");
        let g = suite.generator(7, 2).unwrap();
        let tasks = suite.generate(&g.params).unwrap();
        for structure in tasks.chunks(COPIES.len()) {
            let prompt = &structure[0]["action_prompt"];
            assert!(structure.iter().all(|t| &t["action_prompt"] == prompt));
            assert!(
                prompt
                    .as_str()
                    .unwrap()
                    .starts_with("Insert a H atom in the line between atoms at indices 3 and 5"),
                "{prompt}"
            );
        }
    }
}
