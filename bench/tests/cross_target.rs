//! Bench tests that run natively and in wasm32 alike.

use bench::atomworld::prompt::model_prompt;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn model_prompt_is_the_same_on_every_target() {
    let p = model_prompt(
        "data_NaCl\n",
        "Remove the atom at index 3 from the cif file.",
    );
    // Length computed independently from spec §3 with Python's " ".join(parts).
    assert_eq!(p.len(), 550);
    assert!(p.ends_with("Action prompt: Remove the atom at index 3 from the cif file. "));
}
