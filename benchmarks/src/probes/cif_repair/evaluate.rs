//! Scoring a repair: fill in the placeholder, then the AtomWorld evaluation (the reference evaluator: extract
//! the last `<cif>` block, parse like pymatgen, compare compositions, StructureMatcher with
//! `primitive_cell=False, stol=0.5`) against the uncorrupted CIF.

use serde::{Deserialize, Serialize};

use super::generator::CifRepairTask;
use crate::atomworld::evaluate::{evaluate_within, parse_target, Comparison, TaskError, Verdict};
use engine::cif::PymatgenCif;
use engine::interrupt::Interrupt;

/// What a model may write for a value it cannot recover.
pub const PLACEHOLDER: &str = "[VALUE_TO_BE_INSERTED]";

/// A repair verdict: the AtomWorld verdict plus what was filled in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairVerdict {
    /// The verdict of the (filled-in) answer against the original CIF.
    pub verdict: Verdict,
    /// How many placeholders were replaced by the removed value.
    pub placeholders_replaced: usize,
    /// Placeholders left as they are (the corruption removed no value to put there).
    pub placeholders_left: usize,
}

/// Score `response` for `task`. Every `[VALUE_TO_BE_INSERTED]` in the response is replaced
/// by the removed line's value (when the corruption removed one) before the answer is read.
pub fn evaluate(task: &CifRepairTask, response: &str) -> Result<RepairVerdict, TaskError> {
    let target = parse_target(&task.original_cif)?;
    Ok(evaluate_against(
        &target,
        task.corruption.removed_value(),
        response,
        &Interrupt::default(),
    ))
}

/// [`evaluate`] against the parsed original, with the value the corruption removed (if
/// any); a raised `interrupt` ends matching with `EvaluationTimeout`.
pub fn evaluate_against(
    original: &PymatgenCif,
    removed_value: Option<&str>,
    response: &str,
    interrupt: &Interrupt,
) -> RepairVerdict {
    let count = response.matches(PLACEHOLDER).count();
    let (text, replaced) = match removed_value {
        Some(value) if count > 0 => (response.replace(PLACEHOLDER, value), count),
        _ => (response.to_string(), 0),
    };
    RepairVerdict {
        verdict: evaluate_within(original, &text, Comparison::Matcher, interrupt),
        placeholders_replaced: replaced,
        placeholders_left: count - replaced,
    }
}
