//! Reading and writing CIF text.
//!
//! Two readers, for two purposes:
//! - [`read_cif`] (tokenizer [`lexer`] → data blocks [`block`] → [`reader`]) keeps the file's
//!   site order and coordinates, for the viewer and the AtomWorld actions;
//! - [`parse_cif_like_pymatgen`] ([`pymatgen`]) reproduces pymatgen's `CifParser` decisions
//!   (accepted files, merged sites, site order), for evaluation.
//!
//! [`write_cif`] ([`writer`]) writes pymatgen's `CifWriter` text. Every reader error carries
//! the line and column it refers to where there is one, and no input, however malformed,
//! makes a reader panic.

pub mod block;
pub mod formula;
pub mod lexer;
pub mod pyfloat;
pub mod pymatgen;
mod reader;
pub mod space_group;
pub mod symop;
pub mod writer;

pub use lexer::Pos;
pub use pymatgen::{
    parse_cif_like_pymatgen, parse_cif_like_pymatgen_detailed, PymatgenCif, SpeciesAmount,
};
pub use reader::{read_cif, undeclared_symmetry};
pub use writer::write_cif;

/// Two positions closer than this on every fractional axis (periodically) are one site
/// (pymatgen's `CifParser` `site_tolerance`, 1e-4).
///
/// Both readers use it when symmetry operations generate copies of a site: [`read_cif`]
/// drops a copy that lands on an earlier site of the same element, and
/// [`parse_cif_like_pymatgen`] merges sites as pymatgen does. One value, so both readers
/// agree on which generated positions coincide.
pub const SITE_TOLERANCE: f64 = 1e-4;

/// A CIF error: what went wrong and where (1-based line and column), when known.
#[derive(Clone, Debug, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{}", match .pos { Some(p) => format!("line {}, column {}: {}", p.line, p.col, .message), None => .message.clone() })]
pub struct CifError {
    /// Human-readable description.
    pub message: String,
    /// Where in the text, if the error refers to a place.
    pub pos: Option<Pos>,
}

impl CifError {
    /// An error at a position.
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            pos: Some(pos),
        }
    }

    /// An error about the file as a whole.
    pub fn general(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            pos: None,
        }
    }
}
