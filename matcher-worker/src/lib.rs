//! The page's matching worker: what the page asks it and what it answers, and the work
//! itself.
//!
//! Shared by the page (`app`) and the worker (the `matcher` binary, `src/main.rs`): the worker
//! runs [`Job::run`], and so does the page when no worker can be started, so the verdict is
//! the same either way (the same `benchmarks` functions, on the same wasm engine).
//!
//! A crate of its own so that Trunk can build the worker with a profile of its own
//! (`wasm-worker`: optimised for speed, where the page is optimised for size) without
//! compiling the app's dependencies twice.

use benchmarks::atomworld::evaluate::{
    evaluate_with_same_crystal, explain_mismatch, parse_target, Comparison, Verdict,
};
use engine::cif::PymatgenCif;
use engine::interrupt::Interrupt;
use engine::matcher::displacement::correspondence;
use engine::Structure;
use serde::{Deserialize, Serialize};

/// One verdict to compute. Sent as JSON (`serde_json` with `float_roundtrip`: every number
/// arrives bit for bit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The request id: an answer carries it back, and the page drops answers to anything but
    /// its latest request.
    pub id: u64,
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

/// The worker's answer to a [`Job`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Done {
    /// The job's id.
    pub id: u64,
    /// The verdict; `None` when the target itself cannot be read.
    pub verdict: Option<Verdict>,
    /// The answer overlay: for each target row (in CIF order), the displacement of the
    /// answer's site the matcher paired with it; `None` without `rows`, without a pairing,
    /// or when the sites are ambiguous. (Sent apart from the verdict, whose serialised form
    /// leaves the displacements out.)
    pub overlay: Option<Vec<[f64; 3]>>,
}

/// What the worker posts: it is ready for jobs, or one is done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker has started and listens.
    Ready,
    /// A job's result.
    Done(Box<Done>),
}

/// The parsed target of the previous job, kept while the target stays the same (every
/// keystroke in the answer is a new job on the same target).
#[derive(Default)]
pub struct TargetCache(Option<(String, Option<PymatgenCif>)>);

impl Job {
    /// Compute the verdict exactly as the page always has: the target parsed as the evaluator
    /// reads it, `evaluate_with_same_crystal`, and for matcher actions the closest match of a
    /// mismatch (`explain_mismatch`).
    pub fn run(&self, cache: &mut TargetCache) -> Done {
        let fresh = !matches!(&cache.0, Some((cif, _)) if *cif == self.target_cif);
        if fresh {
            cache.0 = Some((self.target_cif.clone(), parse_target(&self.target_cif).ok()));
        }
        let target = cache.0.as_ref().and_then(|(_, t)| t.as_ref());
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
        Done {
            id: self.id,
            verdict,
            overlay,
        }
    }
}
