//! An AtomWorld task as files and the API carry it, and how it is made ready: the input
//! parsed, the action read from the prompt, the target given or computed with the reference
//! semantics. The one place a target is resolved.

use engine::cif::{read_cif, write_cif};
use engine::Structure;
use serde::{Deserialize, Serialize};

use super::evaluate::Comparison;
use super::{apply, parse_prompt, Action, ActionError, ActionKind, Applied, Semantics};
use crate::task::TaskError;

/// One task: input, action sentence and (optionally) the ground truth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtomWorldTask {
    /// Identifier, unique within its set (empty when a file gives none).
    #[serde(default)]
    pub id: String,
    /// The input CIF.
    pub input_cif: String,
    /// The action sentence.
    pub action_prompt: String,
    /// The ground-truth CIF; `None`: computed from input and prompt.
    #[serde(default)]
    pub target_cif: Option<String>,
}

/// A task made ready.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The parsed input.
    pub input: Structure,
    /// The action, when the prompt reads as one.
    pub action: Option<Action>,
    /// The target CIF (given, or computed and written as pymatgen writes it).
    pub target_cif: String,
}

impl Resolved {
    /// The action's kind, when the prompt reads as one.
    pub fn kind(&self) -> Option<ActionKind> {
        self.action.as_ref().map(Action::kind)
    }

    /// How answers are compared with the target ([`ActionKind::comparison`]; the matcher
    /// when the prompt does not read as an action).
    pub fn comparison(&self) -> Comparison {
        self.kind()
            .map_or(Comparison::Matcher, ActionKind::comparison)
    }

    /// The group the task is tabled under: its action, or `unparsed`.
    pub fn group(&self) -> &'static str {
        self.kind().map_or(UNPARSED, ActionKind::name)
    }
}

/// The group of tasks whose prompt does not read as an action (scored against their given
/// target by the matcher).
pub const UNPARSED: &str = "unparsed";

/// Parse the input, read the prompt, and take or compute the target. A prompt that does not
/// read as an action is fine when the task gives its target; without one, it is an error.
pub fn resolve(
    input_cif: &str,
    action_prompt: &str,
    target_cif: Option<&str>,
) -> Result<Resolved, TaskError> {
    let input = read_cif(input_cif).map_err(|e| TaskError(format!("input_cif: {e}")))?;
    let parsed = parse_prompt(action_prompt, &input);
    let target_cif = match (target_cif, &parsed) {
        (Some(t), _) => t.to_string(),
        (None, Ok(action)) => {
            target_of(&input, action, Semantics::Reference)
                .map_err(|e| TaskError(format!("target from prompt: {e}")))?
                .1
        }
        (None, Err(e)) => return Err(TaskError(e.to_string())),
    };
    Ok(Resolved {
        input,
        action: parsed.ok(),
        target_cif,
    })
}

/// `action` applied to `input` under `semantics`, and the target CIF as the benchmark writes
/// it (positions wrapped into the cell, pymatgen's `CifWriter` text). The reference
/// semantics give the ground truth; the page also shows the physical reading.
pub fn target_of(
    input: &Structure,
    action: &Action,
    semantics: Semantics,
) -> Result<(Applied, String), ActionError> {
    let done = apply(input, action, semantics)?;
    let cif = write_cif(&done.structure.wrapped());
    Ok((done, cif))
}

impl AtomWorldTask {
    /// [`resolve`] this task.
    pub fn resolve(&self) -> Result<Resolved, TaskError> {
        resolve(
            &self.input_cif,
            &self.action_prompt,
            self.target_cif.as_deref(),
        )
    }
}
