//! StructProp: modify a CIF so that a property goes up or down (the AtomWorld paper).
//!
//! The reference scores answers with DFT, which a browser cannot run. Here the task is a
//! statement (structure, property, direction) with a qualitative check that the answer is a
//! readable CIF and differs from the input; a real score comes from a [`PropertyScorer`]
//! plugged in by whoever has one (a DFT service, a machine-learned potential, …).

use engine::cif::{parse_cif_like_pymatgen_detailed, read_cif, write_cif, CifError};
use engine::Structure;
use serde::{Deserialize, Serialize};

use crate::atomworld::evaluate::extract_cif;
use crate::atomworld::generator::pool::{pool, PoolEntry, POOL_ID};
use crate::atomworld::generator::rng::TaskRng;
use crate::probes::{PromptOrigin, PROBE_STREAM_BASE};

pub mod suite;
pub use suite::StructProp;

/// The StructProp probe's stream.
const STREAM: u32 = PROBE_STREAM_BASE + 0x300;

/// The properties the reference asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// Electronic band gap (eV).
    BandGap,
    /// Bulk modulus (GPa).
    BulkModulus,
}

impl Property {
    /// Both properties.
    pub const ALL: [Property; 2] = [Property::BandGap, Property::BulkModulus];

    /// The property's name in prompts.
    pub fn name(self) -> &'static str {
        match self {
            Property::BandGap => "band gap",
            Property::BulkModulus => "bulk modulus",
        }
    }
}

/// Which way the property should move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Raise it.
    Increase,
    /// Lower it.
    Decrease,
}

impl Direction {
    /// The verb in prompts.
    pub fn verb(self) -> &'static str {
        match self {
            Direction::Increase => "increase",
            Direction::Decrease => "decrease",
        }
    }
}

/// One StructProp task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StructPropTask {
    /// Stable identifier: `struct_prop-<number>`.
    pub id: String,
    /// Name of the pool mineral.
    pub structure_name: String,
    /// The input CIF.
    pub input_cif: String,
    /// The property.
    pub property: Property,
    /// The requested direction.
    pub direction: Direction,
    /// The whole message sent to the model.
    pub prompt: String,
    /// Where the prompt's wording comes from.
    pub prompt_origin: PromptOrigin,
}

/// The reference's parts before the CIF (AtomWorldBench, `src/prompts/property_action_prompt.py`,
/// the prompt of the paper's StructProp probe), in order; the third is two sentences the
/// reference writes as one part. Joined by single spaces as the reference joins them.
pub const SENTENCES: [&str; 10] = [
    "You are a material design expert.",
    "Your task is to modify a given CIF file to achieve a desired change in a specific material property.",
    "Please analyze the given CIF file and the target property. Identify the key structural features and elemental composition that influence the specified property.",
    "Propose a specific modification to the structure. This modification must be one or a combination of the following: \n",
    "1. Element Substitution;\n",
    "2. Lattice Parameter Adjustment;\n",
    "3. Atomic Coordinate Adjustment.\n",
    "Please ensure the output is a correct CIF file.",
    "Return the modified CIF content within <cif> and </cif> tags.\n",
    "Input CIF content:",
];

/// The whole user message, the reference's (the property's and direction's words are ours:
/// [`Property::name`], [`Direction::verb`]).
pub fn model_prompt(input_cif: &str, property: Property, direction: Direction) -> String {
    format!(
        "{}\n{input_cif}\n Your goal: modify the CIF file accordingly to {} the {}.",
        SENTENCES.join(" "),
        direction.verb(),
        property.name()
    )
}

/// Everything that determines a StructProp task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropTaskSpec {
    /// The seed.
    pub seed: u64,
    /// The structure pool's identifier.
    pub pool: String,
    /// Number of tasks.
    pub count: usize,
}

impl PropTaskSpec {
    /// `count` tasks over the shipped pool.
    pub fn new(seed: u64, count: usize) -> Self {
        Self {
            seed,
            pool: POOL_ID.into(),
            count,
        }
    }
}

/// Generate over the shipped pool: a mineral, a property and a direction, uniformly.
pub fn generate(spec: &PropTaskSpec) -> Vec<StructPropTask> {
    generate_from(spec, &pool())
}

/// [`generate`] over a given pool.
pub fn generate_from(spec: &PropTaskSpec, entries: &[PoolEntry]) -> Vec<StructPropTask> {
    if entries.is_empty() {
        return Vec::new();
    }
    (0..spec.count)
        .filter_map(|number| {
            let mut rng = TaskRng::new(spec.seed, STREAM, number as u32);
            let entry = &entries[rng.below(entries.len())];
            let property = Property::ALL[rng.below(Property::ALL.len())];
            let direction = [Direction::Increase, Direction::Decrease][rng.below(2)];
            let input_cif = write_cif(&read_cif(&entry.mineral_cif).ok()?);
            Some(StructPropTask {
                id: format!("struct_prop-{number:04}"),
                structure_name: entry.name.clone(),
                prompt: model_prompt(&input_cif, property, direction),
                prompt_origin: PromptOrigin::Reference,
                input_cif,
                property,
                direction,
            })
        })
        .collect()
}

/// Every goal (property and direction), in a fixed order.
pub fn every_goal() -> Vec<(Property, Direction)> {
    Property::ALL
        .iter()
        .flat_map(|p| [(*p, Direction::Increase), (*p, Direction::Decrease)])
        .collect()
}

/// The name a goal is tabled under: `increase band gap`.
pub fn goal_name(property: Property, direction: Direction) -> String {
    format!("{} {}", direction.verb(), property.name())
}

/// Everything that determines a StructProp set with every goal equally often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropSetSpec {
    /// The seed.
    pub seed: u64,
    /// The structure pool's identifier.
    pub pool: String,
    /// Tasks per goal, each on a structure drawn from the pool.
    pub per_goal: usize,
}

/// `spec.per_goal` tasks of each goal over the shipped pool; task `k` of a goal does not
/// depend on how many are asked for.
pub fn generate_each(spec: &PropSetSpec) -> Vec<StructPropTask> {
    let entries = pool();
    if entries.is_empty() {
        return Vec::new();
    }
    let mut tasks = Vec::new();
    for (g, (property, direction)) in every_goal().into_iter().enumerate() {
        for number in 0..spec.per_goal {
            let mut rng = TaskRng::new(spec.seed, STREAM + 1 + g as u32, number as u32);
            let entry = &entries[rng.below(entries.len())];
            let Ok(structure) = read_cif(&entry.mineral_cif) else {
                continue;
            };
            let input_cif = write_cif(&structure);
            tasks.push(StructPropTask {
                id: format!("struct_prop-{g:02}-{number:04}"),
                structure_name: entry.name.clone(),
                prompt: model_prompt(&input_cif, property, direction),
                prompt_origin: PromptOrigin::Reference,
                input_cif,
                property,
                direction,
            });
        }
    }
    tasks
}

/// A property value before and after the model's change, from a scorer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropertyScore {
    /// The input structure's value.
    pub before: f64,
    /// The answer's value.
    pub after: f64,
    /// Unit of both values.
    pub unit: String,
}

impl PropertyScore {
    /// True when the value moved in the requested direction.
    pub fn achieved(&self, direction: Direction) -> bool {
        match direction {
            Direction::Increase => self.after > self.before,
            Direction::Decrease => self.after < self.before,
        }
    }
}

/// Why a scorer could not score.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("scoring failed: {0}")]
pub struct ScoringError(pub String);

/// The open scoring hook: anything that can compute a property of a structure.
pub trait PropertyScorer {
    /// The value of `property` for `before` (the input) and `after` (the answer).
    fn score(
        &self,
        property: Property,
        before: &Structure,
        after: &Structure,
    ) -> Result<PropertyScore, ScoringError>;
}

/// The StructProp verdict labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PropLabel {
    /// Scored, and the property moved the requested way.
    Achieved,
    /// Scored, and it did not.
    NotAchieved,
    /// A readable, changed CIF, but no scorer was given (the qualitative outcome).
    Unscored,
    /// No `<cif>…</cif>` in the answer.
    OutputFormatError,
    /// The extracted text is not a CIF pymatgen would read.
    CifParsingError,
    /// The answer is the input structure unchanged.
    Unchanged,
    /// The scorer failed.
    ScoringFailed,
}

impl PropLabel {
    /// Every label.
    pub const ALL: [PropLabel; 7] = [
        PropLabel::Achieved,
        PropLabel::NotAchieved,
        PropLabel::Unscored,
        PropLabel::OutputFormatError,
        PropLabel::CifParsingError,
        PropLabel::Unchanged,
        PropLabel::ScoringFailed,
    ];

    /// The label's name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            PropLabel::Achieved => "Achieved",
            PropLabel::NotAchieved => "NotAchieved",
            PropLabel::Unscored => "Unscored",
            PropLabel::OutputFormatError => "OutputFormatError",
            PropLabel::CifParsingError => "CifParsingError",
            PropLabel::Unchanged => "Unchanged",
            PropLabel::ScoringFailed => "ScoringFailed",
        }
    }
}

/// A StructProp verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropVerdict {
    /// The label.
    pub label: PropLabel,
    /// The scorer's values, when scored.
    pub score: Option<PropertyScore>,
    /// One sentence explaining the label.
    pub detail: String,
    /// The parse error, if the answer did not parse.
    pub parse_error: Option<CifError>,
}

/// Check an answer, and score it when a scorer is given.
pub fn evaluate(
    task: &StructPropTask,
    response: &str,
    scorer: Option<&dyn PropertyScorer>,
) -> PropVerdict {
    let verdict = |label, detail: String| PropVerdict {
        label,
        score: None,
        detail,
        parse_error: None,
    };
    let Some(text) = extract_cif(response) else {
        return verdict(
            PropLabel::OutputFormatError,
            "no <cif>…</cif> block in the answer".into(),
        );
    };
    let after = match parse_cif_like_pymatgen_detailed(text) {
        Ok(p) => p.structure,
        Err(e) => {
            let mut v = verdict(
                PropLabel::CifParsingError,
                format!("the CIF does not parse: {e}"),
            );
            v.parse_error = Some(e);
            return v;
        }
    };
    let before = match parse_cif_like_pymatgen_detailed(&task.input_cif) {
        Ok(p) => p.structure,
        Err(e) => {
            return verdict(
                PropLabel::ScoringFailed,
                format!("the task's input does not parse: {e}"),
            )
        }
    };
    if before == after {
        return verdict(
            PropLabel::Unchanged,
            "the answer is the input structure unchanged".into(),
        );
    }
    let Some(scorer) = scorer else {
        return verdict(
            PropLabel::Unscored,
            format!(
                "a readable, modified CIF; the {} was not computed (no scorer)",
                task.property.name()
            ),
        );
    };
    match scorer.score(task.property, &before, &after) {
        Ok(s) => {
            let achieved = s.achieved(task.direction);
            PropVerdict {
                label: if achieved {
                    PropLabel::Achieved
                } else {
                    PropLabel::NotAchieved
                },
                detail: format!(
                    "{}: {} → {} {} (asked to {})",
                    task.property.name(),
                    s.before,
                    s.after,
                    s.unit,
                    task.direction.verb()
                ),
                score: Some(s),
                parse_error: None,
            }
        }
        Err(e) => verdict(PropLabel::ScoringFailed, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in scorer: the "property" is the cell volume.
    struct Volume;

    impl PropertyScorer for Volume {
        fn score(
            &self,
            _: Property,
            before: &Structure,
            after: &Structure,
        ) -> Result<PropertyScore, ScoringError> {
            Ok(PropertyScore {
                before: before.lattice.volume(),
                after: after.lattice.volume(),
                unit: "Å³".into(),
            })
        }
    }

    #[test]
    fn generation_and_the_scoring_hook() {
        let spec = PropTaskSpec::new(9, 20);
        let tasks = generate(&spec);
        assert_eq!(tasks.len(), 20);
        assert_eq!(tasks, generate(&spec));
        let t = &tasks[0];
        assert!(t.prompt.ends_with(&format!(
            "Your goal: modify the CIF file accordingly to {} the {}.",
            t.direction.verb(),
            t.property.name()
        )));
        assert_eq!(
            model_prompt("data_X\n", Property::BandGap, Direction::Decrease),
            "You are a material design expert. Your task is to modify a given CIF file to \
             achieve a desired change in a specific material property. Please analyze the given \
             CIF file and the target property. Identify the key structural features and \
             elemental composition that influence the specified property. Propose a specific \
             modification to the structure. This modification must be one or a combination of \
             the following: \n 1. Element Substitution;\n 2. Lattice Parameter Adjustment;\n 3. \
             Atomic Coordinate Adjustment.\n Please ensure the output is a correct CIF file. \
             Return the modified CIF content within <cif> and </cif> tags.\n Input CIF \
             content:\ndata_X\n\n Your goal: modify the CIF file accordingly to decrease the \
             band gap."
        );

        let same = format!("<cif>{}</cif>", t.input_cif);
        assert_eq!(evaluate(t, &same, None).label, PropLabel::Unchanged);
        assert_eq!(
            evaluate(t, "nothing", None).label,
            PropLabel::OutputFormatError
        );
        assert_eq!(
            evaluate(t, "<cif>data_x</cif>", None).label,
            PropLabel::CifParsingError
        );

        let mut s = read_cif(&t.input_cif).unwrap();
        let m = *s.lattice.matrix();
        s.lattice = engine::Lattice::from_matrix(m.map(|r| r.map(|x| x * 1.05)));
        let bigger = format!("<cif>{}</cif>", write_cif(&s));
        assert_eq!(evaluate(t, &bigger, None).label, PropLabel::Unscored);
        let v = evaluate(t, &bigger, Some(&Volume));
        let expected = if t.direction == Direction::Increase {
            PropLabel::Achieved
        } else {
            PropLabel::NotAchieved
        };
        assert_eq!(v.label, expected);
        assert!(v.score.is_some());
    }
}
