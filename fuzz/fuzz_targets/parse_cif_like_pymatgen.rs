//! Fuzz target: `engine::cif::parse_cif_like_pymatgen` (the evaluator's reader) must never
//! panic, whatever the bytes, and a structure it returns must write back out without
//! panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = engine::cif::parse_cif_like_pymatgen(&text) {
        let _ = engine::cif::write_cif(&s);
    }
});
