//! Fuzz target: `engine::cif::read_cif` must never panic, whatever the bytes (invalid UTF-8
//! is replaced, so every input reaches the reader), and a structure it returns must write
//! back out without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = engine::cif::read_cif(&text) {
        let _ = engine::cif::write_cif(&s);
    }
});
