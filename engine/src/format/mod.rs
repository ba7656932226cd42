//! Structure file formats besides CIF: VASP POSCAR ([`poscar`]), extended XYZ ([`xyz`]) and
//! pymatgen's Structure JSON ([`pymatgen_json`]), plus one entry point that reads any of
//! them, CIF included ([`read_structure`]), for files a user pastes or drops.
//!
//! Every reader returns a [`FormatError`] that names the format and, where the error has a
//! place, its 1-based line and column; none panics on any input (the fuzz targets check).

pub(crate) mod lines;
pub mod poscar;
pub mod pymatgen_json;
pub mod xyz;

use serde::{Deserialize, Serialize};

use crate::cif::{read_cif, write_cif, Pos};
use crate::structure::Structure;

pub use poscar::{read_poscar, write_poscar};
pub use pymatgen_json::{read_pymatgen_json, write_pymatgen_json};
pub use xyz::{read_xyz, write_xyz};

pub use crate::structure::MAX_SITES;

/// A structure file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Crystallographic Information File.
    Cif,
    /// VASP POSCAR/CONTCAR.
    Poscar,
    /// Extended XYZ with a `Lattice=` cell.
    Xyz,
    /// pymatgen `Structure.as_dict()` JSON.
    PymatgenJson,
}

impl Format {
    /// Every format, in the order a user would look for them.
    pub const ALL: [Format; 4] = [
        Format::Cif,
        Format::Poscar,
        Format::Xyz,
        Format::PymatgenJson,
    ];

    /// A short human name ("CIF", "POSCAR", …).
    pub fn name(self) -> &'static str {
        match self {
            Format::Cif => "CIF",
            Format::Poscar => "POSCAR",
            Format::Xyz => "extended XYZ",
            Format::PymatgenJson => "pymatgen JSON",
        }
    }

    /// The usual file name for a download of this format (`POSCAR` has no extension).
    pub fn file_name(self, stem: &str) -> String {
        match self {
            Format::Cif => format!("{stem}.cif"),
            Format::Poscar => format!("{stem}.vasp"),
            Format::Xyz => format!("{stem}.xyz"),
            Format::PymatgenJson => format!("{stem}.json"),
        }
    }

    /// Guesses the format from a file name (if any) and the text itself: [`Format::sniff`],
    /// and anything it does not recognise is read as a POSCAR (whose reader then says what
    /// it misses).
    pub fn detect(file_name: Option<&str>, text: &str) -> Format {
        Format::sniff(file_name, text).unwrap_or(Format::Poscar)
    }

    /// The format a file name (if any) or the text itself shows, if either does.
    ///
    /// The extension decides when it is known (`.cif`, `.vasp`/`.poscar`, names starting
    /// with POSCAR or CONTCAR, `.xyz`/`.extxyz`, `.json`); otherwise the content does: a
    /// leading `{` is JSON, a `data_` block or `_cell_` tag is CIF, an atom count followed by
    /// a line with `Lattice=` is extended XYZ, and a second line of one or three numbers (the
    /// scale factor) is a POSCAR. `None` for text that looks like none of them (prose, say).
    pub fn sniff(file_name: Option<&str>, text: &str) -> Option<Format> {
        if let Some(name) = file_name {
            let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
            let lower = base.to_ascii_lowercase();
            if lower.ends_with(".cif") || lower.ends_with(".mcif") {
                return Some(Format::Cif);
            }
            if lower.ends_with(".vasp")
                || lower.ends_with(".poscar")
                || lower.starts_with("poscar")
                || lower.starts_with("contcar")
            {
                return Some(Format::Poscar);
            }
            if lower.ends_with(".xyz") || lower.ends_with(".extxyz") {
                return Some(Format::Xyz);
            }
            if lower.ends_with(".json") {
                return Some(Format::PymatgenJson);
            }
        }
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') {
            return Some(Format::PymatgenJson);
        }
        let has_cif_marks = text.lines().any(|l| {
            let l = l.trim_start();
            l.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data_"))
                || l.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("_cell_"))
                || l.get(..10)
                    .is_some_and(|p| p.eq_ignore_ascii_case("_atom_site"))
        });
        if has_cif_marks {
            return Some(Format::Cif);
        }
        let mut lines = trimmed.lines();
        let first_is_count = lines.next().is_some_and(|l| {
            l.split_whitespace().count() == 1 && l.trim().parse::<usize>().is_ok()
        });
        if first_is_count
            && lines
                .next()
                .is_some_and(|l| l.to_ascii_lowercase().contains("lattice="))
        {
            return Some(Format::Xyz);
        }
        let scale = trimmed.lines().nth(1).map(|l| {
            l.split_whitespace()
                .map(|w| w.parse::<f64>().is_ok())
                .collect::<Vec<_>>()
        });
        match scale {
            Some(words) if matches!(words.len(), 1 | 3) && words.iter().all(|&n| n) => {
                Some(Format::Poscar)
            }
            _ => None,
        }
    }
}

/// A structure-file error: the format, what went wrong and where (1-based line and column)
/// when the error has a place.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{}{}", .format.name(), match .pos {
    Some(p) => format!(", line {}, column {}: {}", p.line, p.col, .message),
    None => format!(": {}", .message),
})]
pub struct FormatError {
    /// The format that was being read.
    pub format: Format,
    /// Human-readable description.
    pub message: String,
    /// Where in the text, if the error refers to a place.
    pub pos: Option<Pos>,
}

impl FormatError {
    /// An error at a position.
    pub fn at(format: Format, pos: Pos, message: impl Into<String>) -> Self {
        Self {
            format,
            message: message.into(),
            pos: Some(pos),
        }
    }
}

/// Reads a structure in the given format. CIF goes through [`read_cif`] (file order and
/// coordinates kept, as the AtomWorld actions need).
pub fn read_structure(format: Format, text: &str) -> Result<Structure, FormatError> {
    match format {
        Format::Cif => read_cif(text).map_err(|e| FormatError {
            format,
            message: e.message,
            pos: e.pos,
        }),
        Format::Poscar => read_poscar(text),
        Format::Xyz => read_xyz(text),
        Format::PymatgenJson => read_pymatgen_json(text),
    }
}

/// Writes a structure in the given format (CIF as pymatgen's `CifWriter`, POSCAR as
/// pymatgen's `Poscar`, XYZ as ASE's extxyz writer, JSON as `Structure.as_dict()`).
pub fn write_structure(format: Format, structure: &Structure) -> String {
    match format {
        Format::Cif => write_cif(structure),
        Format::Poscar => write_poscar(structure),
        Format::Xyz => write_xyz(structure),
        Format::PymatgenJson => write_pymatgen_json(structure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_by_name_then_content() {
        assert_eq!(
            Format::detect(Some("dir/POSCAR_relaxed"), ""),
            Format::Poscar
        );
        assert_eq!(Format::detect(Some("x.CIF"), ""), Format::Cif);
        assert_eq!(Format::detect(Some("a.extxyz"), ""), Format::Xyz);
        assert_eq!(
            Format::detect(None, "  {\"lattice\": 1}"),
            Format::PymatgenJson
        );
        assert_eq!(
            Format::detect(None, "# c\ndata_x\n_cell_length_a 1\n"),
            Format::Cif
        );
        assert_eq!(
            Format::detect(None, "2\nLattice=\"1 0 0 0 1 0 0 0 1\"\n"),
            Format::Xyz
        );
        assert_eq!(Format::detect(None, "Si\n1.0\n"), Format::Poscar);
        assert_eq!(Format::sniff(None, "Si\n 1.0\n"), Some(Format::Poscar));
        assert_eq!(Format::sniff(None, "Si\n1 1 1.5\n"), Some(Format::Poscar));
        // Prose is no format: the page says so instead of a POSCAR scale-factor error.
        assert_eq!(
            Format::sniff(None, "rock salt, please\nwith a vacancy\n"),
            None
        );
        assert_eq!(Format::sniff(None, "NaCl"), None);
        assert_eq!(Format::detect(None, "NaCl"), Format::Poscar);
    }

    #[test]
    fn every_format_round_trips_a_structure() {
        let cif = "data_x\n_cell_length_a 4\n_cell_length_b 5\n_cell_length_c 6\n_cell_angle_alpha 80\n_cell_angle_beta 95\n_cell_angle_gamma 100\nloop_\n_atom_site_type_symbol\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_occupancy\nNa Na0 0.1 0.2 0.3 1\nCl Cl1 0.6 0.7 0.8 1\n";
        let s = read_structure(Format::Cif, cif).unwrap();
        for f in Format::ALL {
            let text = write_structure(f, &s);
            assert_eq!(Format::detect(None, &text), f, "{text}");
            let back = read_structure(f, &text).unwrap();
            assert_eq!(back.len(), s.len());
            for (a, b) in back.sites.iter().zip(&s.sites) {
                assert_eq!(a.element, b.element);
                let d = s
                    .lattice
                    .to_cartesian(std::array::from_fn(|k| a.frac[k] - b.frac[k]));
                assert!(crate::numeric::norm(d) < 1e-7, "{f:?}: {d:?}");
            }
            let e = read_structure(f, "garbage ( here").unwrap_err();
            assert_eq!(e.format, f);
            assert!(e.to_string().starts_with(f.name()), "{e}");
        }
    }
}
