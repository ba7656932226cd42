//! The page's workers: what the page asks them and what they answer, and the work itself.
//!
//! Shared by the page (`app`) and the workers, two binaries of this crate: `matcher`
//! (`src/main.rs`) scores every answer the page scores, off the page's thread: AtomWorld
//! answers and the probes' (CIF-Repair, CIF-Gen, pure coordinates), with the same
//! `benchmarks` functions the server and the CLI run; `symmetry` (`src/symmetry.rs`) searches
//! the space group of a structure the pool's table does not have (pasted or edited). Each
//! speaks a [`Protocol`]. The page's own module therefore links neither the matcher nor the
//! symmetry search, which keeps a first visit small, and the scoring worker does not carry
//! the symmetry search's tables either.
//!
//! A crate of its own so that Trunk can build the workers with a profile of their own
//! (`wasm-worker`: optimised for speed, where the page is optimised for size) without
//! compiling the app's dependencies twice.

pub mod listen;

use benchmarks::atomworld::evaluate::{
    evaluate_with_same_crystal, explain_mismatch, Comparison, TaskError, Verdict,
};
use benchmarks::probes::cif_gen::evaluate::{
    evaluate_against as gen_against, gen_matcher_options, GenTaskError, GenVerdict,
};
use benchmarks::probes::cif_repair::evaluate::{evaluate_against as repair_against, RepairVerdict};
use benchmarks::probes::points::action::Point;
use benchmarks::probes::points::score::{evaluate as points_evaluate, PointVerdict};
use engine::cif::{parse_cif_like_pymatgen_detailed, CifError, PymatgenCif};
use engine::interrupt::Interrupt;
use engine::matcher::displacement::correspondence;
use engine::symmetry::{space_group, SpaceGroup, DEFAULT_SYMPREC};
use engine::Structure;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What a worker is asked and answers, and where its script is.
pub trait Protocol: 'static {
    /// What one request asks for.
    type Work: Clone + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// What the worker answers to it.
    type Outcome: Clone + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The worker's loader, as Trunk writes it (`data-type="worker"` with
    /// `data-loader-shim`, named after the binary).
    const LOADER: &'static str;
}

/// The scoring worker (`matcher`): answers scored.
pub struct Scoring;

impl Protocol for Scoring {
    type Work = Work;
    type Outcome = Outcome;
    const LOADER: &'static str = "/matcher_loader.js";
}

/// The symmetry worker (`symmetry`): a structure's space group at pymatgen's default
/// tolerances, or why the search found none.
pub struct Symmetry;

impl Protocol for Symmetry {
    type Work = Structure;
    type Outcome = Result<SpaceGroup, String>;
    const LOADER: &'static str = "/symmetry_loader.js";
}

/// One request. Sent as JSON (`serde_json` with `float_roundtrip`: every number arrives bit
/// for bit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job<W> {
    /// The request id: an answer carries it back, and the page drops answers to anything but
    /// its latest request.
    pub id: u64,
    /// What to do.
    pub work: W,
}

/// What the scoring worker scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Work {
    /// An AtomWorld answer against its target.
    Answer(AnswerWork),
    /// A CIF-Repair answer against the undamaged CIF.
    Repair {
        /// The CIF before the damage.
        original_cif: String,
        /// The value of the removed line, which the answer may leave as the placeholder.
        removed_value: Option<String>,
        /// The answer text.
        answer: String,
    },
    /// A CIF-Gen answer against the reference structure.
    Gen {
        /// The reference's CIF.
        reference_cif: String,
        /// The answer text.
        answer: String,
    },
    /// A pure-coordinates answer against the moved points.
    Points {
        /// The points after the action.
        target: Vec<Point>,
        /// The answer text.
        answer: String,
    },
}

/// An AtomWorld answer to score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerWork {
    /// The target's CIF, as the evaluator reads it.
    pub target_cif: String,
    /// The answer text (the CIF between the last `<cif>` and `</cif>` is scored).
    pub answer: String,
    /// How the answer is compared with the target.
    pub comparison: Comparison,
    /// The target in CIF row order, when the answer overlay is wanted: the worker then
    /// relates its rows to the sites as the evaluator parsed them.
    pub rows: Option<Structure>,
}

/// A worker's answer to a [`Job`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Done<O> {
    /// The job's id.
    pub id: u64,
    /// The result.
    pub outcome: O,
}

/// A scored [`Work`], variant for variant. An `Err` says why the task's own structure
/// cannot be read (then nothing can be scored against it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// An AtomWorld verdict.
    Answer(AnswerDone),
    /// A CIF-Repair verdict.
    Repair(Result<RepairVerdict, String>),
    /// A CIF-Gen verdict.
    Gen(Result<GenVerdict, String>),
    /// A pure-coordinates verdict.
    Points(PointVerdict),
}

impl Outcome {
    /// The AtomWorld verdict, if this is one.
    pub fn into_answer(self) -> Option<AnswerDone> {
        match self {
            Outcome::Answer(d) => Some(d),
            _ => None,
        }
    }

    /// The CIF-Repair verdict, if this is one.
    pub fn into_repair(self) -> Option<Result<RepairVerdict, String>> {
        match self {
            Outcome::Repair(v) => Some(v),
            _ => None,
        }
    }

    /// The CIF-Gen verdict, if this is one.
    pub fn into_gen(self) -> Option<Result<GenVerdict, String>> {
        match self {
            Outcome::Gen(v) => Some(v),
            _ => None,
        }
    }

    /// The pure-coordinates verdict, if this is one.
    pub fn into_points(self) -> Option<PointVerdict> {
        match self {
            Outcome::Points(v) => Some(v),
            _ => None,
        }
    }
}

/// An AtomWorld verdict and its overlay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerDone {
    /// The verdict; `None` when the target itself cannot be read.
    pub verdict: Option<Verdict>,
    /// The answer overlay: for each target row (in CIF order), the displacement of the
    /// answer's site the matcher paired with it; `None` without `rows`, without a pairing,
    /// or when the sites are ambiguous. (Sent apart from the verdict, whose serialised form
    /// leaves the displacements out.)
    pub overlay: Option<Vec<[f64; 3]>>,
}

/// What a worker posts: it is ready for jobs, or one is done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker<O> {
    /// The worker has started and listens.
    Ready,
    /// A job's result.
    Done(Box<Done<O>>),
}

/// The structure the previous job was scored against, parsed as the evaluator reads it and
/// kept while it stays the same (every keystroke in an answer is a new job on the same
/// target).
#[derive(Default)]
pub struct TargetCache(Option<(String, Result<PymatgenCif, CifError>)>);

impl TargetCache {
    /// `cif` parsed as the evaluator reads it (from the cache when it is the previous one).
    fn get(&mut self, cif: &str) -> &Result<PymatgenCif, CifError> {
        if !matches!(&self.0, Some((text, _)) if text == cif) {
            self.0 = None;
        }
        let (_, parsed) = self
            .0
            .get_or_insert_with(|| (cif.to_string(), parse_cif_like_pymatgen_detailed(cif)));
        parsed
    }
}

/// Score `work` as the benchmarks' scorers do (its structure parsed as the evaluator reads
/// it, once per structure).
pub fn score(work: &Work, cache: &mut TargetCache) -> Outcome {
    match work {
        Work::Answer(work) => Outcome::Answer(work.run(cache)),
        Work::Repair {
            original_cif,
            removed_value,
            answer,
        } => Outcome::Repair(match cache.get(original_cif) {
            Ok(original) => Ok(repair_against(
                original,
                removed_value.as_deref(),
                answer,
                &Interrupt::default(),
            )),
            Err(e) => Err(TaskError::Target(e.clone()).to_string()),
        }),
        Work::Gen {
            reference_cif,
            answer,
        } => Outcome::Gen(match cache.get(reference_cif) {
            Ok(reference) => Ok(gen_against(reference, answer, &gen_matcher_options())),
            Err(e) => Err(GenTaskError::Reference(e.clone()).to_string()),
        }),
        Work::Points { target, answer } => Outcome::Points(points_evaluate(target, answer)),
    }
}

/// The space group of `structure` at pymatgen's default tolerances (the symmetry worker's
/// work), or why the search found none.
pub fn search_space_group(structure: &Structure) -> Result<SpaceGroup, String> {
    space_group(structure, DEFAULT_SYMPREC).map_err(|e| e.to_string())
}

impl AnswerWork {
    /// The verdict as `evaluate_with_same_crystal` gives it, and for matcher actions the
    /// closest match of a mismatch (`explain_mismatch`).
    fn run(&self, cache: &mut TargetCache) -> AnswerDone {
        let target = cache.get(&self.target_cif).as_ref().ok();
        let verdict = target.map(|t| {
            let mut v =
                evaluate_with_same_crystal(t, &self.answer, self.comparison, &Interrupt::default());
            if self.comparison == Comparison::Matcher {
                explain_mismatch(t, &mut v);
            }
            v
        });
        // The matcher indexes sites in pymatgen's parsed order, the picture (and every
        // prompt) in CIF row order: the vectors are carried over by position. 1e-3: the
        // parser snaps coordinates near 1/3 and 2/3 (by up to 1e-4); sites closer than that
        // would be ambiguous, and then no overlay is drawn.
        let overlay = (|| {
            let by_parsed = verdict.as_ref()?.displacements.as_ref()?;
            let order = correspondence(&target?.structure, self.rows.as_ref()?, 1e-3)?;
            order
                .into_iter()
                .map(|i| by_parsed.get(i).copied())
                .collect::<Option<Vec<_>>>()
        })();
        AnswerDone { verdict, overlay }
    }
}

#[cfg(test)]
mod tests;
