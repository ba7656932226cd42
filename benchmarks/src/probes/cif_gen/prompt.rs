//! The CIF-Gen prompt. **Ours**: modelled on the paper's description (formula, structure
//! type, conventional lattice constant, hints, P1 output) but not the reference's wording;
//! results are marked [`PromptOrigin::Ours`](crate::probes::PromptOrigin::Ours).

use super::prototype::{Params, Prototype};
use engine::python::py_repr;

/// The hint sentence of a structure type; `s` holds the element symbols by role.
pub fn hint(prototype: Prototype, s: &[&str], params: Params) -> String {
    let r = |i: usize| s.get(i).copied().unwrap_or("?");
    let u = params.u.map(py_repr).unwrap_or_default();
    match prototype {
        Prototype::SimpleCubic => format!("There is one {} atom per cell, at a cell corner.", r(0)),
        Prototype::Bcc => format!("{} atoms sit at the cell corners and at the body center.", r(0)),
        Prototype::Fcc => format!("{} atoms sit at the cell corners and at the face centers.", r(0)),
        Prototype::Hcp => format!(
            "The cell is hexagonal (a = b, gamma = 120 degrees) and holds two {} atoms in close-packed ABAB stacking along c.",
            r(0)
        ),
        Prototype::Diamond => format!(
            "Each {0} atom is bonded to four {0} atoms at the corners of a regular tetrahedron.",
            r(0)
        ),
        Prototype::RockSalt => format!(
            "Each {} atom is at the center of the octahedron formed by six {} atoms.",
            r(0),
            r(1)
        ),
        Prototype::CsCl => format!(
            "The {} atom is at the body center of a cube of {} atoms.",
            r(1),
            r(0)
        ),
        Prototype::ZincBlende => format!(
            "The {0} atoms form a face-centered cubic lattice and each {0} atom is at the center of a tetrahedron formed by four {1} atoms.",
            r(0),
            r(1)
        ),
        Prototype::Wurtzite => format!(
            "The cell is hexagonal (a = b, gamma = 120 degrees); each {0} atom is at the center of a tetrahedron formed by four {1} atoms, and the {0}-{1} bond parallel to c has length u*c with u = {u}.",
            r(0),
            r(1)
        ),
        Prototype::Fluorite => format!(
            "The {0} atoms form a face-centered cubic lattice and the {1} atoms fill all of its tetrahedral holes, so each {0} atom has eight {1} neighbours.",
            r(0),
            r(1)
        ),
        Prototype::Perovskite => format!(
            "The {1} atom is at the center of the octahedron formed by the six surrounding {2} atoms, and the {0} atom is at the cube corner.",
            r(0),
            r(1),
            r(2)
        ),
        Prototype::Rutile => format!(
            "The cell is tetragonal with {0} atoms at (0, 0, 0) and (1/2, 1/2, 1/2), each at the center of a distorted octahedron of {1} atoms; one {1} atom is at (u, u, 0) with u = {u}.",
            r(0),
            r(1)
        ),
        Prototype::Spinel => format!(
            "Space group Fd-3m (origin choice 2): {0} atoms on the tetrahedral 8a sites, {1} atoms on the octahedral 16d sites, {2} atoms on the 32e sites (u, u, u) with u = {u}. Write all 56 atoms of the conventional cell.",
            r(0),
            r(1),
            r(2)
        ),
    }
}

/// The whole user message.
pub fn model_prompt(
    formula: &str,
    prototype: Prototype,
    species: &[&str],
    params: Params,
) -> String {
    let name = prototype.name();
    let mut lines = vec![
        format!(
            "You are a materials science expert. Write a CIF file for {formula} with the {name} structure, using the conventional cell described below. Write it with P1 symmetry: give the space group as 'P 1', use the single symmetry operation x, y, z, and list every atom of the cell explicitly with fractional coordinates. Return the CIF content within <cif> and </cif> tags."
        ),
        "Requirements:".to_string(),
        format!("- Formula: {formula}"),
        format!("- Structure type: {name}"),
        format!("- Lattice constant a: {} Å", py_repr(params.a)),
    ];
    if let Some(c) = params.c.filter(|_| prototype.needs_c()) {
        lines.push(format!("- Lattice constant c: {} Å", py_repr(c)));
    }
    lines.push(format!("- Hint: {}", hint(prototype, species, params)));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::examples::EXAMPLES;
    use super::*;

    #[test]
    fn every_example_has_a_complete_prompt() {
        for e in &EXAMPLES {
            let p = model_prompt(e.formula, e.prototype, e.species, e.params);
            assert!(p.contains(&format!("- Formula: {}\n", e.formula)));
            assert!(!p.contains('?'), "{p}");
            assert_eq!(p.contains("Lattice constant c"), e.prototype.needs_c());
            if e.prototype.needs_u() {
                assert!(p.contains("u = 0."), "{p}");
            }
        }
        let e = &EXAMPLES[22];
        assert_eq!(
            model_prompt(e.formula, e.prototype, e.species, e.params).lines().last(),
            Some("- Hint: The Ti atom is at the center of the octahedron formed by the six surrounding O atoms, and the Sr atom is at the cube corner.")
        );
    }
}
