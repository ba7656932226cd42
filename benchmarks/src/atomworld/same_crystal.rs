//! The second, labelled verdict: is the answer the same crystal as the target when any
//! equivalent cell is allowed?
//!
//! The benchmark's matcher (`StructureMatcher(primitive_cell=False, stol=0.5)`) fails a
//! correct answer written in another cell: a primitive cell (also an atom-count error under
//! the reference's site-count check), another supercell of the same size, a symmetrised
//! setting. This check runs the matcher of the benchmark's own CIF-Gen probe,
//! `StructureMatcher(primitive_cell=True, attempt_supercell=True, stol=0.5)`: the same
//! tolerances, any cell. Where the benchmark says no and this says yes, the benchmark is
//! stricter than chemistry. It is shown beside the benchmark's verdict and counted in run
//! summaries; it never changes the score.

use engine::cif::PymatgenCif;
use engine::interrupt::Interrupt;
use engine::matcher::{rms_dist_if_fit, MatcherError, MatcherOptions};
use serde::{Deserialize, Serialize};

/// What the check runs, for labels next to its answer.
pub const SAME_CRYSTAL_MATCHER: &str =
    "StructureMatcher(primitive_cell=True, attempt_supercell=True, stol=0.5)";

/// Largest structure (sites, either side) the check runs on: primitive-cell reduction and
/// supercell attempts grow fast with size, and the benchmark's own verdict must not wait for
/// a second opinion. Larger pairs get no `same_crystal`.
pub const MAX_SAME_CRYSTAL_SITES: usize = 512;

/// The answer of [`same_crystal`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SameCrystal {
    /// Whether the matcher finds a fit in some cell.
    pub fit: bool,
    /// Normalised RMS displacement of the best match (with a fit).
    pub rms: Option<f64>,
    /// Normalised largest displacement of the best match (with a fit). Not Ångström.
    pub max_dist: Option<f64>,
}

/// The matcher options of the check, with the caller's time budget.
fn options(interrupt: &Interrupt) -> MatcherOptions {
    MatcherOptions {
        interrupt: interrupt.clone(),
        ..MatcherOptions::cif_gen()
    }
}

/// Whether `predicted` is `target`'s crystal in any cell (see the module docs). `None` when
/// either has more than [`MAX_SAME_CRYSTAL_SITES`] sites or the time budget ran out first.
pub fn same_crystal(
    target: &PymatgenCif,
    predicted: &PymatgenCif,
    interrupt: &Interrupt,
) -> Option<SameCrystal> {
    if target.structure.len().max(predicted.structure.len()) > MAX_SAME_CRYSTAL_SITES {
        return None;
    }
    let no = SameCrystal {
        fit: false,
        rms: None,
        max_dist: None,
    };
    // Two atoms on one spot: pymatgen's matcher refuses the structure; no crystal has that.
    if [target, predicted].iter().any(|p| overfull(p)) {
        return Some(no);
    }
    match rms_dist_if_fit(&target.structure, &predicted.structure, &options(interrupt)) {
        Ok(Some(m)) => Some(SameCrystal {
            fit: true,
            rms: Some(m.rms),
            max_dist: Some(m.max_dist),
        }),
        Ok(None) => Some(no),
        Err(MatcherError::Interrupted) => None,
        Err(_) => Some(no),
    }
}

/// A site whose occupancies add up to more than 1.
fn overfull(p: &PymatgenCif) -> bool {
    p.species()
        .any(|s| s.map(|x| x.amount).sum::<f64>() > 1.0 + 1e-8)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use engine::cif::parse_cif_like_pymatgen_detailed;

    fn cif(abc: [f64; 3], sites: &[(&str, [f64; 3])]) -> PymatgenCif {
        let mut t = format!(
            "data_x\n_cell_length_a {}\n_cell_length_b {}\n_cell_length_c {}\n\
             _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
             _symmetry_space_group_name_H-M 'P 1'\nloop_\n_atom_site_label\n\
             _atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
             _atom_site_fract_z\n",
            abc[0], abc[1], abc[2]
        );
        for (i, (e, [x, y, z])) in sites.iter().enumerate() {
            t += &format!("{e}{i} {e} {x} {y} {z}\n");
        }
        parse_cif_like_pymatgen_detailed(&t).unwrap()
    }

    #[test]
    fn another_supercell_of_the_same_size_is_the_same_crystal() {
        // A 2×1×1 supercell of an orthorhombic NaCl-like cell, and the 1×2×1 one.
        let target = cif(
            [6.0, 4.0, 5.0],
            &[
                ("Na", [0.0, 0.0, 0.0]),
                ("Cl", [0.25, 0.5, 0.5]),
                ("Na", [0.5, 0.0, 0.0]),
                ("Cl", [0.75, 0.5, 0.5]),
            ],
        );
        let answer = cif(
            [3.0, 8.0, 5.0],
            &[
                ("Na", [0.0, 0.0, 0.0]),
                ("Cl", [0.5, 0.25, 0.5]),
                ("Na", [0.0, 0.5, 0.0]),
                ("Cl", [0.5, 0.75, 0.5]),
            ],
        );
        let benchmark = rms_dist_if_fit(
            &target.structure,
            &answer.structure,
            &MatcherOptions::atomworld(),
        )
        .unwrap();
        assert!(benchmark.is_none(), "the benchmark's matcher finds no fit");
        let s = same_crystal(&target, &answer, &Interrupt::default()).unwrap();
        assert!(s.fit);
        assert!(s.max_dist.unwrap() < 1e-6, "{s:?}");
        // The primitive cell: fewer sites, the same crystal.
        let primitive = cif(
            [3.0, 4.0, 5.0],
            &[("Na", [0.0; 3]), ("Cl", [0.5, 0.5, 0.5])],
        );
        assert!(
            same_crystal(&target, &primitive, &Interrupt::default())
                .unwrap()
                .fit
        );
        // Another crystal (a cubic cell): no.
        let other = cif(
            [4.0, 4.0, 4.0],
            &[("Na", [0.0; 3]), ("Cl", [0.5, 0.5, 0.5])],
        );
        assert!(
            !same_crystal(&target, &other, &Interrupt::default())
                .unwrap()
                .fit
        );
    }
}
