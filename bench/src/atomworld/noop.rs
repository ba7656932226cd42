//! Would a model pass this task by returning the input unchanged? Such tasks measure nothing.

use engine::cif::write_cif;
use engine::Structure;

use super::evaluate::{evaluate, parse_target, Comparison, Label};

/// True when the evaluator scores the unchanged input as a success against `target`.
pub fn copy_would_pass(input: &Structure, target: &Structure) -> bool {
    let Ok(t) = parse_target(&write_cif(&target.wrapped())) else {
        return false;
    };
    let answer = format!("<cif>\n{}\n</cif>", write_cif(input));
    evaluate(&t, &answer, Comparison::Matcher).label == Label::Success
}
