//! Applying an action to a structure: the reference semantics and the physical reading.
//!
//! The reference semantics are those of the code that produced AtomWorld's ground truth (see
//! the AtomWorld reference code's actions): Cartesian positions as read from the CIF, no minimum image for
//! `move_towards` / `insert_between`, minimum-image selection but raw-position rotation for
//! `rotate_around`, and `delete_below` that never deletes the reference site.

use engine::numeric::{cos_deg, cross, dot, norm, sin_deg};
use engine::{Site, Structure};
use serde::{Deserialize, Serialize};

use super::action::Action;

/// Largest structure an action may produce (sites). Keeps a typo such as a 90×90×90 supercell
/// from freezing a browser tab.
pub const MAX_SITES: usize = 20_000;

/// Which reading of an action to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// What the AtomWorld reference code does: the benchmark's ground truth.
    #[default]
    Reference,
    /// The physically sensible reading: minimum image for `move_towards`, `insert_between`
    /// and `rotate_around`; `delete_below` deletes the reference site (and sites at its
    /// height) when the prompt says "Including itself".
    Physical,
}

/// Why an action cannot be applied to a structure.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum ActionError {
    /// A site index is not in the structure.
    #[error("{role} index {index} is out of range: the structure has {len} sites (0 to {max})", max = .len.saturating_sub(1))]
    IndexOutOfRange {
        /// Which parameter.
        role: String,
        /// The index given.
        index: usize,
        /// Number of sites.
        len: usize,
    },
    /// Two indices that must differ are equal.
    #[error("the two indices must differ (both are {0})")]
    SameSite(usize),
    /// Two sites sit at the same position, so the direction between them is undefined.
    #[error("sites {0} and {1} are at the same position: no direction between them")]
    CoincidentSites(usize, usize),
    /// The rotation axis is the zero vector.
    #[error("the rotation axis must not be zero")]
    ZeroAxis,
    /// A supercell size of zero.
    #[error("supercell sizes must be at least 1 (got {0}×{1}×{2})")]
    ZeroSupercell(u32, u32, u32),
    /// The result would be too large.
    #[error("the result would have {0} sites; the limit is {MAX_SITES}")]
    TooLarge(usize),
    /// A number is NaN or infinite, or a radius is negative.
    #[error("{0} must be a finite number")]
    NotFinite(String),
    /// The structure has no sites to act on.
    #[error("the structure has no sites")]
    EmptyStructure,
}

/// Which sites an action touched, for highlighting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    /// Indices in the input that were changed, moved or deleted.
    pub input: Vec<usize>,
    /// Indices in the output that are new, changed or moved.
    pub output: Vec<usize>,
}

/// The result of applying an action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    /// The resulting structure (fractional coordinates not wrapped).
    pub structure: Structure,
    /// The sites the action touched.
    pub touched: Touched,
}

fn check_index(s: &Structure, role: &str, index: usize) -> Result<(), ActionError> {
    if index < s.len() {
        Ok(())
    } else {
        Err(ActionError::IndexOutOfRange {
            role: role.into(),
            index,
            len: s.len(),
        })
    }
}

fn check_finite(what: &str, values: &[f64]) -> Result<(), ActionError> {
    if values.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(ActionError::NotFinite(what.into()))
    }
}

fn check_radius(radius: f64) -> Result<(), ActionError> {
    if radius.is_finite() && radius >= 0.0 {
        Ok(())
    } else {
        Err(ActionError::NotFinite("radius (non-negative)".into()))
    }
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(a: [f64; 3], k: f64) -> [f64; 3] {
    [a[0] * k, a[1] * k, a[2] * k]
}

/// Rotate `v` by `angle` degrees about the unit axis `k` (right-hand rule, Rodrigues).
fn rotate(v: [f64; 3], k: [f64; 3], angle: f64) -> [f64; 3] {
    let (c, s) = (cos_deg(angle), sin_deg(angle));
    let kxv = cross(k, v);
    let kv = dot(k, v);
    std::array::from_fn(|i| v[i] * c + kxv[i] * s + k[i] * kv * (1.0 - c))
}

/// A new site at a Cartesian position, labelled `<Element><index>` like pymatgen's writer.
fn new_site(s: &Structure, element: engine::Element, position: [f64; 3]) -> Site {
    Site {
        element,
        frac: s.lattice.to_fractional(position),
        label: format!("{}{}", element.symbol(), s.len()).into(),
        occupancy: 1.0,
        oxidation: None,
        others: Vec::new(),
        magmom: None,
    }
}

fn set_position(s: &mut Structure, i: usize, position: [f64; 3]) {
    s.sites[i].frac = s.lattice.to_fractional(position);
}

/// The vector from site `i` to site `j`: raw in-cell positions for the reference, the
/// minimum image for the physical reading.
fn vector_between(s: &Structure, i: usize, j: usize, semantics: Semantics) -> [f64; 3] {
    match semantics {
        Semantics::Reference => sub(s.cartesian(j), s.cartesian(i)),
        Semantics::Physical => s.mic_vector(i, j),
    }
}

/// The point `distance` Å from site `i` along the line to site `j` (move_towards,
/// insert_between); the line uses raw positions or the minimum image per `semantics`.
fn point_towards(
    s: &Structure,
    i: usize,
    j: usize,
    distance: f64,
    semantics: Semantics,
) -> Result<[f64; 3], ActionError> {
    check_finite("distance", &[distance])?;
    if i == j {
        return Err(ActionError::SameSite(i));
    }
    let v = vector_between(s, i, j, semantics);
    let len = norm(v);
    if len == 0.0 {
        return Err(ActionError::CoincidentSites(i, j));
    }
    Ok(add(s.cartesian(i), scale(v, distance / len)))
}

/// The sites of `s` except those in `deleted`, in order.
fn without(s: &Structure, deleted: &[usize]) -> Vec<Site> {
    s.sites
        .iter()
        .enumerate()
        .filter(|(i, _)| !deleted.contains(i))
        .map(|(_, site)| site.clone())
        .collect()
}

/// Sites whose minimum-image distance to `center` is below `radius` (strict), centre excluded.
fn neighbours(s: &Structure, center: usize, radius: f64) -> Vec<usize> {
    (0..s.len())
        .filter(|&j| j != center && s.distance(center, j) < radius)
        .collect()
}

/// Apply `action` to `structure` under the given semantics.
pub fn apply(
    structure: &Structure,
    action: &Action,
    semantics: Semantics,
) -> Result<Applied, ActionError> {
    let mut out = structure.clone();
    let mut touched = Touched::default();
    let s = structure;
    match action {
        Action::Change { index, element } => {
            check_index(s, "site", *index)?;
            out.sites[*index].element = *element;
            // The new species is a plain element (no oxidation state of the old one).
            out.sites[*index].oxidation = None;
            touched.input.push(*index);
            touched.output.push(*index);
        }
        Action::Remove { index } => {
            check_index(s, "site", *index)?;
            out.sites.remove(*index);
            touched.input.push(*index);
        }
        Action::Add { element, position } => {
            check_finite("position", position)?;
            guard_size(s.len() + 1)?;
            out.sites.push(new_site(s, *element, *position));
            touched.output.push(s.len());
        }
        Action::Move {
            index,
            displacement,
        } => {
            check_index(s, "site", *index)?;
            check_finite("displacement", displacement)?;
            set_position(&mut out, *index, add(s.cartesian(*index), *displacement));
            touched.input.push(*index);
            touched.output.push(*index);
        }
        Action::MoveTowards {
            index,
            towards,
            distance,
        } => {
            check_index(s, "moving site", *index)?;
            check_index(s, "target site", *towards)?;
            let p = point_towards(s, *index, *towards, *distance, semantics)?;
            set_position(&mut out, *index, p);
            touched.input.push(*index);
            touched.output.push(*index);
        }
        Action::InsertBetween {
            element,
            from,
            to,
            distance,
        } => {
            check_index(s, "first site", *from)?;
            check_index(s, "second site", *to)?;
            guard_size(s.len() + 1)?;
            let p = point_towards(s, *from, *to, *distance, semantics)?;
            out.sites.push(new_site(s, *element, p));
            touched.output.push(s.len());
        }
        Action::Swap { first, second } => {
            check_index(s, "first site", *first)?;
            check_index(s, "second site", *second)?;
            if first == second {
                return Err(ActionError::SameSite(*first));
            }
            out.sites[*first].element = s.sites[*second].element;
            out.sites[*second].element = s.sites[*first].element;
            out.sites[*first].oxidation = s.sites[*second].oxidation;
            out.sites[*second].oxidation = s.sites[*first].oxidation;
            touched.input.extend([*first, *second]);
            touched.output.extend([*first, *second]);
        }
        Action::DeleteBelow {
            index,
            including_itself,
        } => {
            check_index(s, "reference site", *index)?;
            let z = |i: usize| s.cartesian(i)[2];
            let threshold = z(*index);
            let delete_at_level = semantics == Semantics::Physical && *including_itself;
            let deleted: Vec<usize> = (0..s.len())
                .filter(|&i| z(i) < threshold || (delete_at_level && z(i) == threshold))
                .collect();
            out.sites = without(s, &deleted);
            touched.input = deleted;
        }
        Action::RotateAround {
            center,
            radius,
            angle,
            axis,
        } => {
            check_index(s, "centre site", *center)?;
            check_radius(*radius)?;
            check_finite("angle", &[*angle])?;
            check_finite("axis", axis)?;
            let len = norm(*axis);
            if len == 0.0 {
                return Err(ActionError::ZeroAxis);
            }
            let k = scale(*axis, 1.0 / len);
            let origin = s.cartesian(*center);
            for j in neighbours(s, *center, *radius) {
                let v = vector_between(s, *center, j, semantics);
                set_position(&mut out, j, add(origin, rotate(v, k, *angle)));
                touched.input.push(j);
                touched.output.push(j);
            }
        }
        Action::SuperCell { size } => {
            let [a, b, c] = *size;
            if a == 0 || b == 0 || c == 0 {
                return Err(ActionError::ZeroSupercell(a, b, c));
            }
            let n = (a as usize)
                .saturating_mul(b as usize)
                .saturating_mul(c as usize)
                .saturating_mul(s.len());
            guard_size(n)?;
            out = s.supercell(*size);
            touched.output = (s.len()..out.len()).collect();
        }
        Action::MoveAll { displacement } => {
            check_finite("displacement", displacement)?;
            for i in 0..s.len() {
                set_position(&mut out, i, add(s.cartesian(i), *displacement));
            }
            touched.input = (0..s.len()).collect();
            touched.output = touched.input.clone();
        }
        Action::DeleteAround { index, radius } => {
            check_index(s, "centre site", *index)?;
            check_radius(*radius)?;
            let mut deleted = neighbours(s, *index, *radius);
            deleted.push(*index);
            deleted.sort_unstable();
            out.sites = without(s, &deleted);
            touched.input = deleted;
        }
        Action::MoveSelected {
            indices,
            displacement,
        } => {
            check_finite("displacement", displacement)?;
            for &i in indices {
                check_index(s, "selected site", i)?;
            }
            let mut unique = indices.clone();
            unique.sort_unstable();
            unique.dedup();
            // As the reference does: a site listed twice is moved twice.
            for &i in &unique {
                let times = indices.iter().filter(|&&j| j == i).count() as f64;
                let d = displacement.map(|x| x * times);
                set_position(&mut out, i, add(s.cartesian(i), d));
            }
            touched.input = unique.clone();
            touched.output = unique;
        }
        Action::MoveAround {
            index,
            radius,
            displacement,
        } => {
            check_index(s, "centre site", *index)?;
            check_radius(*radius)?;
            check_finite("displacement", displacement)?;
            let mut moved = neighbours(s, *index, *radius);
            moved.push(*index);
            moved.sort_unstable();
            for &i in &moved {
                set_position(&mut out, i, add(s.cartesian(i), *displacement));
            }
            touched.input = moved.clone();
            touched.output = moved;
        }
    }
    Ok(Applied {
        structure: out,
        touched,
    })
}

fn guard_size(n: usize) -> Result<(), ActionError> {
    if n > MAX_SITES {
        Err(ActionError::TooLarge(n))
    } else {
        Ok(())
    }
}

/// Largest per-site distance (Å, minimum image) below which two results count as the same.
const SAME_POSITION: f64 = 1e-6;

/// True when the reference and the physical reading of `action` give different structures
/// for `structure` (different sites, elements, or any position differing by more than
/// 1e-6 Å up to lattice translations). The UI flags such tasks.
pub fn readings_differ(structure: &Structure, action: &Action) -> Result<bool, ActionError> {
    let a = apply(structure, action, Semantics::Reference)?.structure;
    let b = apply(structure, action, Semantics::Physical)?.structure;
    Ok(!same_sites(&a, &b))
}

/// Same length, same element per site, and every site within 1e-6 Å of its counterpart up to
/// a lattice translation (the lattices must be equal).
pub fn same_sites(a: &Structure, b: &Structure) -> bool {
    if a.len() != b.len() || a.lattice != b.lattice {
        return false;
    }
    let mut pair = Structure::new(a.lattice.clone(), Vec::with_capacity(2));
    a.sites.iter().zip(&b.sites).all(|(x, y)| {
        if x.element != y.element {
            return false;
        }
        pair.sites.clear();
        pair.sites.push(x.clone());
        pair.sites.push(y.clone());
        pair.distance(0, 1) <= SAME_POSITION
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Element, Lattice};

    fn el(s: &str) -> Element {
        Element::from_symbol(s).unwrap()
    }

    /// Two sites near opposite faces of a 10 Å cube: close through the boundary (1 Å),
    /// far in raw positions (9 Å).
    fn across_boundary() -> Structure {
        let l = Lattice::from_parameters(10.0, 10.0, 10.0, 90.0, 90.0, 90.0).unwrap();
        let site = |sym: &str, frac| Site {
            element: el(sym),
            frac,
            label: sym.into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        Structure::new(
            l,
            vec![
                site("Na", [0.05, 0.5, 0.5]),
                site("Cl", [0.95, 0.5, 0.5]),
                site("K", [0.5, 0.5, 0.2]),
            ],
        )
    }

    #[test]
    fn move_towards_uses_raw_positions_in_the_reference() {
        let s = across_boundary();
        let a = Action::MoveTowards {
            index: 0,
            towards: 1,
            distance: 0.5,
        };
        let r = apply(&s, &a, Semantics::Reference).unwrap();
        assert!((r.structure.cartesian(0)[0] - 1.0).abs() < 1e-12);
        let p = apply(&s, &a, Semantics::Physical).unwrap();
        assert!((p.structure.cartesian(0)[0] - 0.0).abs() < 1e-12);
        assert!(readings_differ(&s, &a).unwrap());
        assert_eq!(r.touched.output, vec![0]);
    }

    #[test]
    fn delete_below_keeps_the_reference_site_in_the_reference() {
        let s = across_boundary();
        let a = Action::DeleteBelow {
            index: 0,
            including_itself: true,
        };
        let r = apply(&s, &a, Semantics::Reference).unwrap();
        assert_eq!(r.structure.len(), 2, "only K (z = 2 Å) is below");
        assert_eq!(r.touched.input, vec![2]);
        let p = apply(&s, &a, Semantics::Physical).unwrap();
        assert_eq!(
            p.structure.len(),
            0,
            "Na, Cl share the z of site 0 and go too"
        );
    }

    #[test]
    fn swap_exchanges_elements_and_rotation_selects_by_minimum_image() {
        let s = across_boundary();
        let r = apply(
            &s,
            &Action::Swap {
                first: 0,
                second: 2,
            },
            Semantics::Reference,
        )
        .unwrap();
        assert_eq!(r.structure.sites[0].element, el("K"));
        assert_eq!(r.structure.sites[2].element, el("Na"));
        assert_eq!(r.structure.sites[0].frac, s.sites[0].frac);
        let rot = Action::RotateAround {
            center: 0,
            radius: 1.5,
            angle: 180.0,
            axis: [0.0, 0.0, 1.0],
        };
        let r = apply(&s, &rot, Semantics::Reference).unwrap();
        // Cl is 1 Å away through the boundary, but its raw position (x = 9.5) is rotated.
        assert_eq!(r.touched.input, vec![1]);
        assert!((r.structure.cartesian(1)[0] - -8.5).abs() < 1e-9);
        let p = apply(&s, &rot, Semantics::Physical).unwrap();
        assert!((p.structure.cartesian(1)[0] - 1.5).abs() < 1e-9);
    }

    #[test]
    fn invalid_parameters_are_errors_not_panics() {
        let s = across_boundary();
        let bad = [
            Action::Remove { index: 3 },
            Action::Swap {
                first: 1,
                second: 1,
            },
            Action::RotateAround {
                center: 0,
                radius: 2.0,
                angle: 90.0,
                axis: [0.0; 3],
            },
            Action::SuperCell { size: [0, 1, 1] },
            Action::SuperCell {
                size: [100, 100, 100],
            },
            Action::Move {
                index: 0,
                displacement: [f64::NAN, 0.0, 0.0],
            },
            Action::DeleteAround {
                index: 0,
                radius: -1.0,
            },
        ];
        for a in bad {
            assert!(apply(&s, &a, Semantics::Reference).is_err(), "{a:?}");
        }
        let e = apply(&s, &Action::Remove { index: 3 }, Semantics::Reference).unwrap_err();
        assert_eq!(
            e.to_string(),
            "site index 3 is out of range: the structure has 3 sites (0 to 2)"
        );
    }
}
