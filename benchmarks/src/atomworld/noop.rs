//! Would a model pass this task by returning the input unchanged? Such tasks measure nothing.

use engine::cif::write_cif;
use engine::Structure;

use super::evaluate::{parse_target, would_succeed};
use super::ActionKind;

/// True when the evaluator scores the unchanged input as a success against `target`, by the
/// comparison rule of `kind` ([`ActionKind::comparison`]).
pub fn copy_would_pass(input: &Structure, target: &Structure, kind: ActionKind) -> bool {
    let Ok(t) = parse_target(&write_cif(&target.wrapped())) else {
        return false;
    };
    let answer = super::evaluate::cif_answer(&write_cif(input));
    would_succeed(&t, &answer, kind.comparison())
}
