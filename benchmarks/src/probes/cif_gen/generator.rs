//! The seeded CIF-Gen generator: each task picks one of the [`EXAMPLES`] uniformly.

use engine::cif::write_cif;
use engine::Element;
use serde::{Deserialize, Serialize};

use super::examples::{Example, EXAMPLES};
use super::prompt::model_prompt;
use super::prototype::{build, BuildError, Params, Prototype};
use crate::atomworld::generator::rng::TaskRng;
use crate::probes::{PromptOrigin, PROBE_STREAM_BASE};

/// The CIF-Gen probe's stream.
const STREAM: u32 = PROBE_STREAM_BASE + 0x200;

/// Everything that determines a CIF-Gen task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenTaskSpec {
    /// The seed.
    pub seed: u64,
    /// Number of tasks.
    pub count: usize,
}

/// One CIF-Gen task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CifGenTask {
    /// Stable identifier: `cif_gen-<number>`.
    pub id: String,
    /// The formula.
    pub formula: String,
    /// The structure type.
    pub prototype: Prototype,
    /// Element symbols by role.
    pub species: Vec<String>,
    /// Lattice and internal parameters.
    pub params: Params,
    /// Where the parameters come from.
    pub source: String,
    /// The reference structure (conventional cell, P1), in pymatgen's `CifWriter` style.
    pub reference_cif: String,
    /// The whole message sent to the model.
    pub prompt: String,
    /// Where the prompt's wording comes from.
    pub prompt_origin: PromptOrigin,
}

/// Why an example cannot become a task.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExampleError {
    /// A symbol is not an element.
    #[error("unknown element symbol {0:?}")]
    Element(String),
    /// The structure cannot be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// The task of one example.
pub fn task_for(example: &Example, id: String) -> Result<CifGenTask, ExampleError> {
    let species = example
        .species
        .iter()
        .map(|s| Element::from_symbol(s).ok_or_else(|| ExampleError::Element(s.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let structure = build(example.prototype, &species, example.params)?;
    Ok(CifGenTask {
        id,
        formula: example.formula.into(),
        prototype: example.prototype,
        species: example.species.iter().map(|s| s.to_string()).collect(),
        params: Params {
            c: example.params.c.filter(|_| example.prototype.needs_c()),
            ..example.params
        },
        source: example.source.into(),
        reference_cif: write_cif(&structure),
        prompt: model_prompt(
            example.formula,
            example.prototype,
            example.species,
            example.params,
        ),
        prompt_origin: PromptOrigin::Ours,
    })
}

/// Generate `spec.count` tasks.
pub fn generate(spec: &GenTaskSpec) -> Vec<CifGenTask> {
    (0..spec.count)
        .filter_map(|number| {
            let mut rng = TaskRng::new(spec.seed, STREAM, number as u32);
            let example = &EXAMPLES[rng.below(EXAMPLES.len())];
            task_for(example, format!("cif_gen-{number:04}")).ok()
        })
        .collect()
}

/// Everything that determines a CIF-Gen set with every structure type equally often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenSetSpec {
    /// The seed.
    pub seed: u64,
    /// Tasks per structure type, each one of that type's examples drawn uniformly.
    pub per_prototype: usize,
}

/// `spec.per_prototype` tasks of each structure type; task `k` of a type does not depend on
/// how many are asked for.
pub fn generate_each(spec: &GenSetSpec) -> Vec<CifGenTask> {
    let mut tasks = Vec::new();
    for (p, prototype) in Prototype::ALL.iter().enumerate() {
        let examples: Vec<&Example> = EXAMPLES
            .iter()
            .filter(|e| e.prototype == *prototype)
            .collect();
        if examples.is_empty() {
            continue;
        }
        for number in 0..spec.per_prototype {
            let mut rng = TaskRng::new(spec.seed, STREAM + 1 + p as u32, number as u32);
            let example = examples[rng.below(examples.len())];
            let id = format!("cif_gen-{p:02}-{number:04}");
            tasks.extend(task_for(example, id).ok());
        }
    }
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_builds_and_generation_is_deterministic() {
        for (i, e) in EXAMPLES.iter().enumerate() {
            let t = task_for(e, format!("{i}")).unwrap();
            assert!(t
                .reference_cif
                .contains("_symmetry_space_group_name_H-M   'P 1'"));
        }
        let spec = GenTaskSpec { seed: 3, count: 60 };
        let a = generate(&spec);
        assert_eq!(a.len(), 60);
        assert_eq!(a, generate(&spec));
        let kinds: std::collections::BTreeSet<Prototype> = a.iter().map(|t| t.prototype).collect();
        assert!(kinds.len() >= 10, "{kinds:?}");
    }
}
