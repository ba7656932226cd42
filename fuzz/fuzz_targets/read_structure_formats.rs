//! Fuzz target: the POSCAR, extended XYZ and pymatgen JSON readers must never panic, whatever
//! the bytes. The first byte picks the reader (so one corpus covers all three); a structure a
//! reader returns must write back out in every format without panicking.
#![no_main]

use engine::format::{read_structure, write_structure, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = [Format::Poscar, Format::Xyz, Format::PymatgenJson][pick as usize % 3];
    let text = String::from_utf8_lossy(rest);
    let _ = Format::detect(None, &text);
    if let Ok(s) = read_structure(format, &text) {
        for f in Format::ALL {
            let _ = write_structure(f, &s);
        }
    }
});
