//! The 14 Bravais lattices (the AtomWorld paper's Fig. 14): `per_group` structures of each
//! lattice, each as its conventional cell of 12–28 atoms, asked to insert an H atom between
//! sites 3 and 5 (the paper's data). A conventional cell of fewer than 12 atoms is repeated
//! into the range (fewest copies, the most nearly isotropic cell), which keeps its lattice; a
//! lattice with fewer structures than asked is reported, not filled with others.

use std::collections::BTreeMap;

use engine::symmetry::{conventional, BRAVAIS_LATTICES, DEFAULT_SYMPREC};

use super::{insert_h, layout, shuffled, task_on, Drawn, Study, StudySpec};
use crate::atomworld::generator::pool::{repeat_into, PoolEntry};
use crate::atomworld::generator::rng::TaskRng;
use crate::atomworld::task::Resolved;
use crate::task::layout::Layout;

/// The Bravais-lattice study.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bravais;

/// Atoms of the conventional cells asked (the paper's range).
pub const CELL_RANGE: (usize, usize) = (12, 28);

/// The sites the action joins.
const SITES: (usize, usize) = (3, 5);

/// The study's draws.
const STREAM: u32 = 0x5354_0002;

impl Study for Bravais {
    const NAME: &'static str = "atomworld-bravais";
    const LAYOUT: Layout = layout(
        "insert_between by Bravais lattice",
        "AtomWorld, Fig. 14",
        "Bravais lattice",
    );

    fn at_most(per_group: usize) -> usize {
        per_group * BRAVAIS_LATTICES.len()
    }

    fn draw(spec: &StudySpec, entries: &[PoolEntry]) -> Drawn {
        let mut by_lattice: BTreeMap<&str, Vec<(&PoolEntry, engine::Structure)>> =
            BRAVAIS_LATTICES.iter().map(|&l| (l, Vec::new())).collect();
        for entry in entries {
            let Ok(c) = conventional(&entry.structure, DEFAULT_SYMPREC) else {
                continue;
            };
            let Some(copies) = repeat_into(&c.structure, CELL_RANGE) else {
                continue;
            };
            if let Some(list) = by_lattice.get_mut(c.bravais.as_str()) {
                list.push((entry, c.structure.supercell(copies)));
            }
        }
        let mut drawn = Drawn::default();
        let mut short = Vec::new();
        for (n, (lattice, cells)) in by_lattice.iter().enumerate() {
            let list = shuffled(spec.seed, STREAM + n as u32 + 1, cells);
            let mut made = 0;
            for (entry, cell) in list {
                if made == spec.per_group {
                    break;
                }
                let mut rng = TaskRng::new(spec.seed, STREAM, drawn.tasks.len() as u32);
                let Some(action) = insert_h(cell, SITES.0, SITES.1, &mut rng) else {
                    continue;
                };
                let id = format!("{lattice}-{made:02}");
                if let Some(t) = task_on(id, &entry.name, cell, &action) {
                    drawn.tasks.push(t);
                    made += 1;
                }
            }
            if made < spec.per_group {
                short.push(format!("{lattice} {made}"));
            }
        }
        if !short.is_empty() {
            drawn.notes.push(format!(
                "lattices with fewer than {} structures of {}-{} atoms in the pool: {}",
                spec.per_group,
                CELL_RANGE.0,
                CELL_RANGE.1,
                short.join(", ")
            ));
        }
        drawn
    }

    /// The input's Bravais lattice by the engine's symmetry finder.
    fn group(task: &Resolved) -> Result<String, String> {
        conventional(&task.input, DEFAULT_SYMPREC)
            .map(|c| c.bravais)
            .map_err(|e| format!("no Bravais lattice: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomworld::studies::tests::groups_of;
    use crate::atomworld::studies::Sensitivity;
    use crate::task::AnySuite;

    /// Every task's lattice, read back by the symmetry finder, is the one it was drawn for;
    /// cells have 12–28 atoms; the pool's shortfalls are said.
    #[test]
    fn lattices_as_drawn_and_shortfalls_said() {
        let suite = Sensitivity::<Bravais>::default();
        let groups = groups_of(&suite, 3, 3);
        assert!(groups.len() >= 12, "{groups:?}");
        assert!(groups.values().all(|&n| (1..=3).contains(&n)), "{groups:?}");
        let g = suite.generator(3, 3).unwrap();
        let (lines, text) = suite.generated_lines(&g.params).unwrap();
        for line in &lines {
            let id = line["id"].as_str().unwrap();
            let task = crate::atomworld::task::resolve(
                line["input_cif"].as_str().unwrap(),
                line["action_prompt"].as_str().unwrap(),
                None,
            )
            .unwrap();
            let n = task.input.len();
            assert!((12..=28).contains(&n), "{id}: {n} atoms");
            assert_eq!(Bravais::group(&task).unwrap(), id[..2], "{id}");
        }
        let short: Vec<&String> = groups
            .iter()
            .filter(|(_, &n)| n < 3)
            .map(|(l, _)| l)
            .collect();
        for l in short {
            assert!(text.contains(&format!("{l} {}", groups[l])), "{text}");
        }
    }
}
