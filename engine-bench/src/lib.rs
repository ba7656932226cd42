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

/// The wasm entry point node calls: [`evaluate_pair_json`] on two JavaScript strings (a
/// value that is not a string is read as empty text, which does not parse).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn evaluate(target: &wasm_bindgen::JsValue, prediction: &wasm_bindgen::JsValue) -> String {
    let text = |v| js_text::string_of(v).unwrap_or_default();
    evaluate_pair_json(&text(target), &text(prediction))
}

/// JavaScript strings into Rust through the JavaScript engine's own UTF-8 encoder.
///
/// Why: a `&str` argument makes wasm-bindgen's glue copy the string into wasm memory one
/// character at a time in a JavaScript loop, which took about 4% of a benchmark pass (two
/// CIFs of a few kilobytes per pair). `TextEncoder.encodeInto` writes the bytes straight
/// into the string's buffer in native code.
#[cfg(target_arch = "wasm32")]
mod js_text {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    #[wasm_bindgen]
    extern "C" {
        type TextEncoder;
        #[wasm_bindgen(constructor)]
        fn new() -> TextEncoder;
        #[wasm_bindgen(method, js_name = encodeInto)]
        fn encode_into(
            this: &TextEncoder,
            source: &js_sys::JsString,
            destination: &js_sys::Uint8Array,
        ) -> Written;
        /// `encodeInto`'s answer.
        type Written;
        #[wasm_bindgen(method, getter)]
        fn written(this: &Written) -> u32;
    }

    thread_local! {
        static ENCODER: TextEncoder = TextEncoder::new();
    }

    /// The string `value` holds, as UTF-8 (`TextEncoder` writes lone surrogates as U+FFFD,
    /// as wasm-bindgen's glue does); `None` when it holds no string.
    pub(super) fn string_of(value: &JsValue) -> Option<String> {
        let text = value.dyn_ref::<js_sys::JsString>()?;
        // At most three bytes per UTF-16 unit.
        let mut bytes: Vec<u8> = Vec::with_capacity(3 * text.length() as usize);
        let written = ENCODER.with(|e| {
            // SAFETY: the view covers the vector's allocation and is dropped before the vector
            // is used again; between its making and the encoder's write no Rust code runs, so
            // nothing can grow the memory (which would detach the view) or touch the bytes.
            let view =
                unsafe { js_sys::Uint8Array::view_mut_raw(bytes.as_mut_ptr(), bytes.capacity()) };
            e.encode_into(text, &view).written() as usize
        });
        // SAFETY: the encoder wrote `written` bytes (at most the view's length) from the start.
        unsafe { bytes.set_len(written.min(bytes.capacity())) };
        String::from_utf8(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const NACL: &str =
        "data_NaCl\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n\
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

/// The wasm boundary, under wasm-bindgen-test (node).
#[cfg(all(test, target_arch = "wasm32"))]
mod wasm_tests {
    use super::js_text::string_of;
    use wasm_bindgen::JsValue;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn javascript_strings_arrive_as_their_utf8() {
        for text in ["", "data_x\n", "é 漢 🦀 data_x\n", &"x".repeat(70_000)] {
            assert_eq!(string_of(&JsValue::from_str(text)).as_deref(), Some(text));
        }
        // A lone surrogate reads as U+FFFD, as wasm-bindgen's own glue reads it.
        let lone = js_sys::JsString::from_char_code1(0xd800);
        assert_eq!(string_of(&lone.into()).as_deref(), Some("\u{fffd}"));
        assert_eq!(string_of(&JsValue::from_f64(42.0)), None);
    }

    #[wasm_bindgen_test]
    fn the_entry_point_scores_javascript_strings() {
        let nacl = JsValue::from_str(super::tests::NACL);
        let json = super::evaluate(&nacl, &nacl);
        assert!(json.contains("\"verdict\":\"Success\""), "{json}");
        let json = super::evaluate(&JsValue::from_f64(1.0), &nacl);
        assert_eq!(json, "{\"verdict\":\"CifParsingError\"}");
    }
}
