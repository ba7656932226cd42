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
    let data = dataset(structure, symprec)?;
    Ok(SpaceGroup {
        number: data.number,
        symbol: data.hm_symbol.clone(),
        hall_number: data.hall_number,
        pearson_symbol: data.pearson_symbol.clone(),
        operations: data.operations.len(),
    })
}

/// moyo's analysis of `structure` (each site as its main element) at `symprec`.
fn dataset(structure: &Structure, symprec: f64) -> Result<moyo::MoyoDataset, SymmetryError> {
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
    moyo::MoyoDataset::new(
        &cell,
        symprec,
        moyo::base::AngleTolerance::Radian(crate::numeric::radians(ANGLE_TOLERANCE_DEG)),
        moyo::data::Setting::Spglib,
        false,
    )
    .map_err(|e| SymmetryError::Search {
        symprec,
        message: e.to_string(),
    })
}

/// A structure's conventional standard cell and its Bravais lattice.
#[derive(Clone, Debug, PartialEq)]
pub struct Conventional {
    /// The conventional cell (moyo's standardised cell, spglib's setting; sites labelled
    /// element and number, `Fe0`, `Fe1`, …).
    pub structure: Structure,
    /// The Bravais lattice's Pearson letters, as the IUCr writes them since 2014: `aP`,
    /// `mP`, `mS`, `oP`, `oS`, `oI`, `oF`, `tP`, `tI`, `hR`, `hP`, `cP`, `cI`, `cF` (moyo
    /// writes base-centred monoclinic `mC`).
    pub bravais: String,
    /// International Tables number of the space group.
    pub number: i32,
}

/// The 14 Bravais lattices in the order of the crystal families (triclinic to cubic), as
/// [`Conventional::bravais`] names them.
pub const BRAVAIS_LATTICES: [&str; 14] = [
    "aP", "mP", "mS", "oP", "oS", "oI", "oF", "tP", "tI", "hR", "hP", "cP", "cI", "cF",
];

/// Why a structure has no conventional cell here.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConventionalError {
    /// The symmetry search failed.
    #[error(transparent)]
    Symmetry(#[from] SymmetryError),
    /// A site holds more than one species or is partly occupied: its symmetry is the
    /// average structure's, not a cell of whole atoms.
    #[error("site {0} is mixed or partly occupied")]
    Disordered(usize),
}

/// The conventional standard cell of an ordered `structure` (as spglib's
/// `standardize_cell(to_primitive=False)` builds it), found at `symprec` Å.
pub fn conventional(
    structure: &Structure,
    symprec: f64,
) -> Result<Conventional, ConventionalError> {
    if let Some(i) = structure
        .sites
        .iter()
        .position(|s| !s.others.is_empty() || s.occupancy != 1.0)
    {
        return Err(ConventionalError::Disordered(i));
    }
    let data = dataset(structure, symprec)?;
    let cell = &data.std_cell;
    let basis = &cell.lattice.basis;
    let lattice = crate::lattice::Lattice::from_matrix(std::array::from_fn(|i| {
        std::array::from_fn(|j| basis[(j, i)])
    }));
    let mut sites = Vec::with_capacity(cell.numbers.len());
    for (k, (p, &z)) in cell.positions.iter().zip(&cell.numbers).enumerate() {
        let element = u32::try_from(z)
            .ok()
            .and_then(crate::element::Element::from_z)
            .ok_or_else(|| SymmetryError::Search {
                symprec,
                message: format!("standard cell site {k} has atomic number {z}"),
            })?;
        let label = format!("{}{k}", element.symbol());
        sites.push(crate::structure::Site::new(
            element,
            [p.x, p.y, p.z],
            label,
            1.0,
        ));
    }
    let letters: String = data.pearson_symbol.chars().take(2).collect();
    Ok(Conventional {
        structure: Structure::new(lattice, sites),
        bravais: if letters == "mC" {
            "mS".into()
        } else {
            letters
        },
        number: data.number,
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

    /// Rock salt's primitive cell (2 atoms) has the cubic F conventional cell of 8 atoms with
    /// the primitive cell's volume four times; a mixed site has none.
    #[test]
    fn rocksalt_primitive_cell_gives_its_conventional_cell() {
        let cif = "data_x\n_cell_length_a 3.9881\n_cell_length_b 3.9881\n_cell_length_c 3.9881\n_cell_angle_alpha 60\n_cell_angle_beta 60\n_cell_angle_gamma 60\nloop_\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa 0 0 0\nCl .5 .5 .5\n";
        let s = read_cif(cif).unwrap();
        let c = conventional(&s, DEFAULT_SYMPREC).unwrap();
        assert_eq!((c.bravais.as_str(), c.number), ("cF", 225));
        assert_eq!(c.structure.len(), 8);
        let ratio = c.structure.lattice.volume() / s.lattice.volume();
        assert!((ratio - 4.0).abs() < 1e-9, "{ratio}");
        let a = c.structure.lattice.lengths();
        assert!(
            a.iter().all(|x| (x - 3.9881 * 2f64.sqrt()).abs() < 1e-6),
            "{a:?}"
        );
        assert_eq!(
            space_group(&c.structure, DEFAULT_SYMPREC).unwrap().number,
            225
        );
        let mut mixed = s.clone();
        mixed.sites[1].occupancy = 0.5;
        assert_eq!(
            conventional(&mixed, DEFAULT_SYMPREC),
            Err(ConventionalError::Disordered(1))
        );
    }
}
