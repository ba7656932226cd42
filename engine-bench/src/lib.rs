//! The AtomWorld evaluation path as one function, for the speed benchmark.
//!
//! [`evaluate_pair`] runs the product's evaluator (`benchmarks::atomworld::evaluate`, the code
//! runs, `atomworld eval` and the page use) on a (target, prediction) pair of CIF texts: the
//! pymatgen-compatible reader, the composition and overfull-site checks, then
//! `StructureMatcher(primitive_cell=False, stol=0.5)`'s `fit` and, on a fit, `get_rms_dist`.
//! `engine-bench/pymatgen_bench.py` does the same with pymatgen, the native binary
//! `bench-matcher` and the wasm module (`evaluate`, loaded by `engine-bench/node/bench.mjs`)
//! call this function, and `scripts/bench-matcher.sh` times all of them on the same pairs and
//! checks that their verdicts agree.

use benchmarks::atomworld::evaluate::{self as evaluator, parse_target, Comparison, Label};
use serde::Serialize;

/// The verdict on one pair, with the labels of the AtomWorld evaluator.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict")]
pub enum Verdict {
    /// The target or the prediction does not parse.
    CifParsingError,
    /// The element counts differ.
    AtomCountMismatch,
    /// The matcher finds no fit (or fails).
    StructureMismatch,
    /// A fit, with `get_rms_dist`'s normalised RMS and largest distance.
    Success {
        /// Normalised root-mean-square displacement.
        rms: f64,
        /// Normalised largest displacement.
        max_dist: f64,
    },
}

/// Evaluates one (target, prediction) pair of CIF texts end to end, with the product's
/// evaluator (the prediction is scored as an answer holding it between `<cif>` tags).
pub fn evaluate_pair(target: &str, prediction: &str) -> Verdict {
    let Ok(t) = parse_target(target) else {
        return Verdict::CifParsingError;
    };
    let v = evaluator::evaluate(
        &t,
        &format!("<cif>\n{prediction}\n</cif>"),
        Comparison::Matcher,
    );
    match v.label {
        Label::Success => Verdict::Success {
            rms: v.rms.unwrap_or(f64::NAN),
            max_dist: v.max_dist.unwrap_or(f64::NAN),
        },
        Label::OutputFormatError | Label::CifParsingError => Verdict::CifParsingError,
        Label::AtomCountMismatch => Verdict::AtomCountMismatch,
        Label::StructureMismatch | Label::EvaluationTimeout => Verdict::StructureMismatch,
    }
}

/// [`evaluate_pair`]'s verdict as a JSON object (`{"verdict": …, "rms": …, "max_dist": …}`).
pub fn evaluate_pair_json(target: &str, prediction: &str) -> String {
    serde_json::to_string(&evaluate_pair(target, prediction))
        .unwrap_or_else(|e| format!("{{\"verdict\":\"SerializeError\",\"error\":\"{e}\"}}"))
}

/// The wasm entry point node calls: [`evaluate_pair_json`].
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn evaluate(target: &str, prediction: &str) -> String {
    evaluate_pair_json(target, prediction)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NACL: &str = "data_NaCl\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n\
        _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
        _symmetry_space_group_name_H-M 'P 1'\nloop_\n_atom_site_type_symbol\n_atom_site_label\n\
        _atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_occupancy\n\
        Na Na0 0 0 0 1\nCl Cl1 0.5 0.5 0.5 1\n";

    #[test]
    fn verdicts_follow_the_evaluator_order() {
        assert!(matches!(
            evaluate_pair(NACL, NACL),
            Verdict::Success { rms, .. } if rms < 1e-9
        ));
        assert_eq!(evaluate_pair(NACL, "nonsense"), Verdict::CifParsingError);
        let kcl = NACL.replace("Na Na0", "K K0");
        assert_eq!(evaluate_pair(NACL, &kcl), Verdict::AtomCountMismatch);
        // A cell stretched along c beyond ltol, even after volume scaling: no lattice mapping.
        let stretched = NACL.replace("_cell_length_c 5.64", "_cell_length_c 12.0");
        assert_eq!(evaluate_pair(NACL, &stretched), Verdict::StructureMismatch);
        assert!(evaluate_pair_json(NACL, NACL).starts_with("{\"verdict\":\"Success\""));
    }
}
