//! The crystal structure engine of AtomWorld Playground.
//!
//! Pure Rust with no I/O, no clocks and no async: values in, values out. It builds natively
//! and for `wasm32-unknown-unknown`, and both builds give bit-identical results, so a verdict
//! computed in the browser is the verdict the server computes.
//!
//! Modules follow the domain: [`element`] (the periodic table), [`lattice`] (cell geometry),
//! [`structure`] (sites in a cell), [`cif`] (reading and writing CIF text), [`matcher`]
//! (pymatgen's StructureMatcher), [`primitive`] (primitive cell reduction), [`reduction`]
//! (Niggli and LLL lattice reduction), [`lattice_mapping`] (bases of one lattice that match
//! another), [`linalg`] (3×3 linear algebra), [`numeric`] (portable, numpy-exact
//! arithmetic), [`format`] (POSCAR, extended XYZ, pymatgen JSON, and
//! format detection), [`symmetry`] (space groups, for display) and [`bonds`] (which atoms a
//! viewer connects).
//!
//! Layers, from the bottom: `numeric` ← `linalg` ← `lattice_mapping` ← `reduction` ←
//! `primitive` ← `matcher`; nothing lower uses anything higher.

pub mod bonds;
pub mod cif;
pub mod element;
pub mod format;
mod grouped;
pub mod interrupt;
pub mod lattice;
pub mod lattice_mapping;
pub mod linalg;
pub mod matcher;
pub mod numeric;
pub mod ordered;
pub mod primitive;
pub mod python;
pub mod reduction;
pub mod species;
pub mod structure;
pub mod symmetry;
#[cfg(test)]
mod test_rng;

pub use element::Element;
pub use lattice::Lattice;
pub use structure::{Site, Structure};
