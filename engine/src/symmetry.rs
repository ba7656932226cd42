//! Space-group identification, for showing a structure's symmetry next to it.
//!
//! Uses the `moyo` crate (a pure-Rust successor of spglib). Symmetry is display-only: no
//! verdict depends on it (the matcher never asks for a space group), so the bit-identity
//! invariant of the engine does not extend to it, although the result is an integer that
//! does not change across targets for any structure away from a tolerance edge.

use nalgebra::{Matrix3, Vector3};

use crate::structure::Structure;

/// pymatgen's `SpacegroupAnalyzer` default distance tolerance (Å).
pub const DEFAULT_SYMPREC: f64 = 0.01;

/// pymatgen's `SpacegroupAnalyzer` default angle tolerance (degrees), which it passes to
/// spglib; spglib's own default (-1, distance only) finds fewer lattice symmetries.
pub const ANGLE_TOLERANCE_DEG: f64 = 5.0;

/// The space group of a structure.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpaceGroup {
    /// International Tables number, 1–230.
    pub number: i32,
    /// Hermann–Mauguin symbol as moyo writes it (`F m -3 m`).
    pub symbol: String,
    /// Hall setting number (1–530) of the detected setting.
    pub hall_number: i32,
    /// Pearson symbol of the standardised cell (`cF8`).
    pub pearson_symbol: String,
    /// Number of symmetry operations in the input cell.
    pub operations: usize,
}

/// Why no space group could be found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SymmetryError {
    /// The structure has no sites.
    #[error("a structure without sites has no space group")]
    Empty,
    /// The symmetry search failed at this tolerance (too close atoms, a degenerate cell).
    #[error("symmetry search failed at symprec {symprec} Å: {message}")]
    Search {
        /// The tolerance used.
        symprec: f64,
        /// moyo's explanation.
        message: String,
    },
}

/// Identifies the space group with distance tolerance `symprec` (Å) and an angle tolerance of
/// [`ANGLE_TOLERANCE_DEG`], in spglib's setting (smallest Hall number), as pymatgen's
/// `SpacegroupAnalyzer(structure, symprec).get_space_group_number()` does through spglib.
pub fn space_group(structure: &Structure, symprec: f64) -> Result<SpaceGroup, SymmetryError> {
    if structure.is_empty() {
        return Err(SymmetryError::Empty);
    }
    let m = structure.lattice.matrix();
    let basis = Matrix3::from_fn(|i, j| m[i][j]);
    let positions = structure
        .sites
        .iter()
        .map(|s| Vector3::new(s.frac[0], s.frac[1], s.frac[2]))
        .collect();
    let numbers = structure
        .sites
        .iter()
        .map(|s| s.element.z() as i32)
        .collect();
    let cell = moyo::base::Cell::new(moyo::base::Lattice::new(basis), positions, numbers);
    let data = moyo::MoyoDataset::new(
        &cell,
        symprec,
        moyo::base::AngleTolerance::Radian(crate::numeric::radians(ANGLE_TOLERANCE_DEG)),
        moyo::data::Setting::Spglib,
        false,
    )
    .map_err(|e| SymmetryError::Search {
        symprec,
        message: e.to_string(),
    })?;
    Ok(SpaceGroup {
        number: data.number,
        symbol: data.hm_symbol.clone(),
        hall_number: data.hall_number,
        pearson_symbol: data.pearson_symbol.clone(),
        operations: data.operations.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cif::read_cif;

    #[test]
    fn rocksalt_is_fm3m_and_a_distorted_copy_is_not() {
        let cif = "data_x\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa 0 0 0\nNa 0 .5 .5\nNa .5 0 .5\nNa .5 .5 0\nCl .5 .5 .5\nCl .5 0 0\nCl 0 .5 0\nCl 0 0 .5\n";
        let mut s = read_cif(cif).unwrap();
        let sg = space_group(&s, DEFAULT_SYMPREC).unwrap();
        assert_eq!((sg.number, sg.symbol.as_str()), (225, "F m -3 m"));
        assert_eq!(sg.pearson_symbol, "cF8");
        assert_eq!(sg.operations, 192);
        s.sites[0].frac[2] = 0.05;
        assert_ne!(space_group(&s, DEFAULT_SYMPREC).unwrap().number, 225);
        s.sites.clear();
        assert_eq!(space_group(&s, DEFAULT_SYMPREC), Err(SymmetryError::Empty));
    }
}
