//! The CIF-Gen prompt: the reference's frame (AtomWorldBench, `src/prompts/cif_gen_prompt.py`:
//! its sentences, the "Requirements" line, lattice constants in Angstrom, one line per hint)
//! around our structure types' hints. The reference words only two hints (an octahedron's
//! centre, atoms aligned along c) for its own structure set, which is not published; the
//! other hints are ours, so results are marked
//! [`PromptOrigin::Ours`](crate::probes::PromptOrigin::Ours).

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

/// The reference's sentences before the requirements, in order; the reference joins every
/// part of its prompt with single spaces.
pub const SENTENCES: [&str; 7] = [
    "You are a materials science expert.",
    "Please generate some simple and standard structures in the CIF format according to the requirements.",
    "You must strictly follow the CIF format specifications.",
    "Since the symmetry-related information can be complex, please write the CIF file with P1 symmetry.",
    "Please ensure the output is a correct CIF file.",
    "Return the fixed CIF content within <cif> and </cif> tags.\n",
    "Requirements:\n",
];

/// The hint line of a structure type: the reference's octahedron sentence where it applies,
/// else ours.
fn hint_line(prototype: Prototype, s: &[&str], params: Params) -> String {
    let centre = match prototype {
        Prototype::RockSalt => s.first(),
        Prototype::Perovskite => s.get(1),
        _ => None,
    };
    match centre {
        Some(c) => format!(
            "- The {c} atom is at the center of the octahedron formed by surrounding atoms."
        ),
        None => format!("- {}", hint(prototype, s, params)),
    }
}

/// The whole user message.
pub fn model_prompt(
    formula: &str,
    prototype: Prototype,
    species: &[&str],
    params: Params,
) -> String {
    let mut info = vec![format!(
        "- Lattice constant a: {} Angstrom",
        py_repr(params.a)
    )];
    if let Some(c) = params.c.filter(|_| prototype.needs_c()) {
        info.push(format!("- Lattice constant c: {} Angstrom", py_repr(c)));
    }
    info.push(hint_line(prototype, species, params));
    format!(
        "{} Please generate a CIF file for {formula} with a {} structure, according to the \
         following information about the convensional cell:\n {}",
        SENTENCES.join(" "),
        prototype.name(),
        info.join("\n ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::examples::EXAMPLES;
    use super::*;

    #[test]
    fn every_example_has_a_complete_prompt() {
        for e in &EXAMPLES {
            let p = model_prompt(e.formula, e.prototype, e.species, e.params);
            assert!(p.contains(&format!(
                "Please generate a CIF file for {} with a ",
                e.formula
            )));
            assert!(!p.contains('?'), "{p}");
            assert_eq!(p.contains("Lattice constant c"), e.prototype.needs_c());
            if e.prototype.needs_u() {
                assert!(p.contains("u = 0."), "{p}");
            }
        }
        let e = &EXAMPLES[22];
        let p = model_prompt(e.formula, e.prototype, e.species, e.params);
        let (frame, requirements) = p.split_once("Requirements:\n ").unwrap_or_default();
        assert_eq!(
            frame,
            "You are a materials science expert. Please generate some simple and standard \
             structures in the CIF format according to the requirements. You must strictly \
             follow the CIF format specifications. Since the symmetry-related information can \
             be complex, please write the CIF file with P1 symmetry. Please ensure the output is \
             a correct CIF file. Return the fixed CIF content within <cif> and </cif> tags.\n "
        );
        assert_eq!(
            requirements,
            format!(
                "Please generate a CIF file for SrTiO3 with a cubic perovskite structure, according to \
                 the following information about the convensional cell:\n - Lattice constant a: \
                 {} Angstrom\n - The Ti atom is at the center of the octahedron formed by \
                 surrounding atoms.",
                py_repr(e.params.a)
            )
        );
    }
}
