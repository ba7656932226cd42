//! The seeded CIF-Repair generator: a mineral from the shipped pool, written in pymatgen's
//! `CifWriter` style, and one corruption drawn uniformly (first the kind, removal or
//! renaming, with equal odds; then the tag or the scheme).

use engine::cif::{parse_cif_like_pymatgen_detailed, read_cif, write_cif};
use serde::{Deserialize, Serialize};

use super::corruption::{
    corrupt, Corruption, CorruptionRequest, LineChange, RenameScheme, ESSENTIAL_TAGS,
};
use super::prompt::model_prompt;
use crate::atomworld::generator::pool::{pool, PoolEntry, POOL_ID};
use crate::atomworld::generator::rng::TaskRng;
use crate::probes::{PromptOrigin, PROBE_STREAM_BASE};

/// The CIF-Repair probe's stream.
const STREAM: u32 = PROBE_STREAM_BASE + 0x100;
/// Draws per task before giving up.
const MAX_ATTEMPTS: usize = 100;

/// Everything that determines a CIF-Repair task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairTaskSpec {
    /// The seed.
    pub seed: u64,
    /// The structure pool's identifier.
    pub pool: String,
    /// Number of tasks.
    pub count: usize,
}

impl RepairTaskSpec {
    /// `count` tasks over the shipped pool.
    pub fn new(seed: u64, count: usize) -> Self {
        Self {
            seed,
            pool: POOL_ID.into(),
            count,
        }
    }
}

/// One CIF-Repair task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CifRepairTask {
    /// Stable identifier: `cif_repair-<number>`.
    pub id: String,
    /// Name of the pool mineral.
    pub structure_name: String,
    /// The valid CIF (the ground truth).
    pub original_cif: String,
    /// The CIF the model sees.
    pub corrupted_cif: String,
    /// What was done to it.
    pub corruption: Corruption,
    /// The changed lines (a diff of the two CIFs).
    pub changes: Vec<LineChange>,
    /// Whether the pymatgen-parity reader still reads the corrupted text (the corruption
    /// then only changes what the file says, not whether it parses).
    pub corrupted_still_parses: bool,
    /// The whole message sent to the model.
    pub prompt: String,
    /// Where the prompt's wording comes from.
    pub prompt_origin: PromptOrigin,
}

/// Generate over the shipped pool (the minerals as they are, not repeated).
pub fn generate(spec: &RepairTaskSpec) -> Vec<CifRepairTask> {
    generate_from(spec, &pool())
}

/// [`generate`] over a given pool.
pub fn generate_from(spec: &RepairTaskSpec, entries: &[PoolEntry]) -> Vec<CifRepairTask> {
    let mut tasks = Vec::new();
    if entries.is_empty() {
        return tasks;
    }
    for number in 0..spec.count {
        let mut rng = TaskRng::new(spec.seed, STREAM, number as u32);
        for _ in 0..MAX_ATTEMPTS {
            let entry = &entries[rng.below(entries.len())];
            let request = if rng.below(2) == 0 {
                CorruptionRequest::RemoveLine {
                    tag: rng.below(ESSENTIAL_TAGS.len()),
                }
            } else {
                CorruptionRequest::Rename {
                    scheme: RenameScheme::ALL[rng.below(RenameScheme::ALL.len())],
                }
            };
            if let Some(t) = task_for(entry, request, format!("cif_repair-{number:04}")) {
                tasks.push(t);
                break;
            }
        }
    }
    tasks
}

/// Every corruption the paper lists, in a fixed order: the 13 essential lines removed,
/// then the 9 misleading renamings (the paper's 22 kinds of damage).
pub fn every_corruption() -> Vec<CorruptionRequest> {
    let removals = (0..ESSENTIAL_TAGS.len()).map(|tag| CorruptionRequest::RemoveLine { tag });
    let renames = RenameScheme::ALL
        .iter()
        .map(|&scheme| CorruptionRequest::Rename { scheme });
    removals.chain(renames).collect()
}

/// Everything that determines a CIF-Repair set with every corruption equally often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairSetSpec {
    /// The seed.
    pub seed: u64,
    /// The structure pool's identifier.
    pub pool: String,
    /// Tasks per corruption (each on a structure drawn from the pool).
    pub per_corruption: usize,
}

/// `spec.per_corruption` tasks of each of the 22 corruptions over the shipped pool; task
/// `k` of a corruption does not depend on how many are asked for.
pub fn generate_each(spec: &RepairSetSpec) -> Vec<CifRepairTask> {
    generate_each_from(spec, &pool())
}

/// [`generate_each`] over a given pool.
pub fn generate_each_from(spec: &RepairSetSpec, entries: &[PoolEntry]) -> Vec<CifRepairTask> {
    let mut tasks = Vec::new();
    if entries.is_empty() {
        return tasks;
    }
    for (c, request) in every_corruption().into_iter().enumerate() {
        for number in 0..spec.per_corruption {
            let mut rng = TaskRng::new(spec.seed, STREAM + 1 + c as u32, number as u32);
            let id = format!("cif_repair-{c:02}-{number:04}");
            let made = (0..MAX_ATTEMPTS)
                .find_map(|_| task_for(&entries[rng.below(entries.len())], request, id.clone()));
            tasks.extend(made);
        }
    }
    tasks
}

/// The task of corrupting `entry` by `request`, or `None` when that corruption does not
/// apply to it.
fn task_for(entry: &PoolEntry, request: CorruptionRequest, id: String) -> Option<CifRepairTask> {
    let structure = read_cif(&entry.mineral_cif).ok()?;
    let original_cif = write_cif(&structure);
    let c = corrupt(&original_cif, request)?;
    Some(CifRepairTask {
        id,
        structure_name: entry.name.clone(),
        corrupted_still_parses: parse_cif_like_pymatgen_detailed(&c.text).is_ok(),
        prompt: model_prompt(&c.text),
        prompt_origin: PromptOrigin::Reference,
        original_cif,
        corrupted_cif: c.text,
        corruption: c.corruption,
        changes: c.changes,
    })
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::{evaluate, PLACEHOLDER};
    use super::*;
    use crate::atomworld::evaluate::Label;

    #[test]
    fn deterministic_and_every_corruption_occurs() {
        let spec = RepairTaskSpec::new(5, 120);
        let a = generate(&spec);
        assert_eq!(a, generate(&spec));
        assert_eq!(a.len(), 120);
        let removed = a
            .iter()
            .filter(|t| matches!(t.corruption, Corruption::RemovedLine { .. }))
            .count();
        assert!((40..80).contains(&removed), "{removed}");
        for t in &a {
            assert_ne!(t.original_cif, t.corrupted_cif);
            assert!(t.prompt.contains(&t.corrupted_cif));
            assert!(!t.changes.is_empty());
        }
    }

    /// Every corruption of a real CIF breaks pymatgen-style parsing, so copying the input
    /// never passes; the original, and the original with the removed value replaced by the
    /// placeholder, pass.
    #[test]
    fn corruptions_break_parsing_and_repairs_pass() {
        let entries = pool();
        let entry = entries
            .iter()
            .find(|e| e.name == "Halite")
            .or(entries.first())
            .unwrap();
        let original = write_cif(&read_cif(&entry.mineral_cif).unwrap());
        let mut requests: Vec<CorruptionRequest> = (0..ESSENTIAL_TAGS.len())
            .map(|tag| CorruptionRequest::RemoveLine { tag })
            .collect();
        requests.extend(
            RenameScheme::ALL
                .iter()
                .map(|&scheme| CorruptionRequest::Rename { scheme }),
        );
        for request in requests {
            let c = corrupt(&original, request).unwrap();
            let task = CifRepairTask {
                id: "t".into(),
                structure_name: entry.name.clone(),
                original_cif: original.clone(),
                corrupted_still_parses: parse_cif_like_pymatgen_detailed(&c.text).is_ok(),
                prompt: model_prompt(&c.text),
                prompt_origin: PromptOrigin::Reference,
                corrupted_cif: c.text.clone(),
                corruption: c.corruption.clone(),
                changes: c.changes.clone(),
            };
            let copy = evaluate(&task, &format!("<cif>{}</cif>", c.text)).unwrap();
            assert_ne!(
                copy.verdict.label,
                Label::Success,
                "{request:?} passes as is"
            );
            let fixed = evaluate(&task, &format!("<cif>\n{original}</cif>")).unwrap();
            assert_eq!(fixed.verdict.label, Label::Success, "{request:?}");
            if let Some(value) = c.corruption.removed_value() {
                let with_placeholder = original.replacen(value, PLACEHOLDER, 1);
                let v = evaluate(&task, &format!("<cif>{with_placeholder}</cif>")).unwrap();
                assert_eq!(v.placeholders_replaced, 1);
                assert_eq!(v.verdict.label, Label::Success, "{request:?}");
            }
        }
    }

    #[test]
    fn a_placeholder_without_a_removed_value_is_left_alone() {
        let t = generate(&RepairTaskSpec::new(1, 40))
            .into_iter()
            .find(|t| t.corruption.removed_value().is_none())
            .unwrap();
        let answer = t.original_cif.replacen("P 1", PLACEHOLDER, 1);
        let v = evaluate(&t, &format!("<cif>{answer}</cif>")).unwrap();
        assert_eq!((v.placeholders_replaced, v.placeholders_left), (0, 1));
    }
}
