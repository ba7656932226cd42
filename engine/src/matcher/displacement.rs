//! Per-site displacements of a match, for pictures: where each site of one structure went
//! in the other, once the common shift is taken out.

use crate::structure::Structure;

/// For each site `i` of `s1`, the Cartesian vector (Å, in `s1`'s frame) from it to site
/// `mapping[i]` of `s2`, minimum image, after subtracting the mean of all those vectors
/// (a rigid translation is not a displacement, as in the matcher).
///
/// Both structures are read in `s1`'s lattice (the prediction and target of an AtomWorld task
/// share their cell), so for equal lattices the longest vector is the matcher's
/// `max_dist_angstrom`. `None` when the mapping does not fit the structures.
pub fn site_displacements(
    s1: &Structure,
    s2: &Structure,
    mapping: &[usize],
) -> Option<Vec<[f64; 3]>> {
    if s1.is_empty() || mapping.len() != s1.len() || mapping.iter().any(|&j| j >= s2.len()) {
        return None;
    }
    let diff = |i: usize| -> [f64; 3] {
        let (a, b) = (s1.sites[i].frac, s2.sites[mapping[i]].frac);
        std::array::from_fn(|k| b[k] - a[k])
    };
    // Relative to the first pair's shift, each pair's nearest image; then remove the mean.
    let anchor = diff(0);
    let vectors: Vec<[f64; 3]> = (0..s1.len())
        .map(|i| {
            let d = diff(i);
            s1.lattice
                .shortest_vector(std::array::from_fn(|k| d[k] - anchor[k]))
        })
        .collect();
    let n = vectors.len() as f64;
    let mean: [f64; 3] = std::array::from_fn(|k| vectors.iter().map(|v| v[k]).sum::<f64>() / n);
    Some(
        vectors
            .into_iter()
            .map(|v| std::array::from_fn(|k| v[k] - mean[k]))
            .collect(),
    )
}

/// For each site of `b`, the index of the site of `a` at the same place: same element and
/// fractional coordinates equal modulo 1 within `tol` on each axis. `None` when the site
/// counts differ or some site has no partner or more than one.
///
/// It relates the two orders one structure can come in: the rows of a CIF (what prompts
/// index) and the sites as pymatgen's parser orders them (what the matcher's mapping
/// indexes). Quadratic in the site count.
pub fn correspondence(a: &Structure, b: &Structure, tol: f64) -> Option<Vec<usize>> {
    if a.len() != b.len() {
        return None;
    }
    let close = |x: [f64; 3], y: [f64; 3]| {
        (0..3).all(|k| {
            let d = x[k] - y[k];
            (d - d.round()).abs() <= tol
        })
    };
    let mut taken = vec![false; a.len()];
    let mut out = Vec::with_capacity(b.len());
    for sb in &b.sites {
        let mut found = None;
        for (i, sa) in a.sites.iter().enumerate() {
            if sa.element == sb.element && close(sa.frac, sb.frac) {
                if found.is_some() {
                    return None; // ambiguous
                }
                found = Some(i);
            }
        }
        let i = found?;
        if std::mem::replace(&mut taken[i], true) {
            return None;
        }
        out.push(i);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;
    use crate::matcher::{get_rms_dist, MatcherOptions};
    use crate::structure::Site;
    use crate::Element;

    #[test]
    fn one_moved_site_in_a_shifted_copy() {
        let l = Lattice::from_parameters(5.0, 6.0, 7.0, 80.0, 95.0, 100.0).unwrap();
        let el = |s: &str| Element::from_symbol(s).unwrap();
        let sites: Vec<Site> = [
            ("Na", [0.1, 0.2, 0.3]),
            ("Cl", [0.6, 0.7, 0.8]),
            ("O", [0.3, 0.9, 0.05]),
            ("O", [0.85, 0.4, 0.55]),
        ]
        .into_iter()
        .map(|(e, frac)| Site {
            element: el(e),
            frac,
            label: e.into(),
            occupancy: 1.0,
        })
        .collect();
        let s1 = Structure::new(l.clone(), sites);
        // Shift everything (crossing the cell boundary), move site 2 by 0.3 Å along x, and
        // list the sites in another order.
        let push = l.to_fractional([0.3, 0.0, 0.0]);
        let shift = [0.37, -0.2, 0.55];
        let order = [3usize, 0, 2, 1];
        let moved: Vec<Site> = order
            .iter()
            .map(|&i| {
                let mut s = s1.sites[i].clone();
                s.frac = std::array::from_fn(|k| {
                    let x = s.frac[k] + shift[k] + if i == 2 { push[k] } else { 0.0 };
                    x - x.floor()
                });
                s
            })
            .collect();
        let s2 = Structure::new(l, moved);
        let mapping = [1, 3, 2, 0];
        let d = site_displacements(&s1, &s2, &mapping).unwrap();
        for (i, v) in d.iter().enumerate() {
            let expected_x = if i == 2 { 0.3 * 0.75 } else { -0.3 / 4.0 };
            assert!(
                (v[0] - expected_x).abs() < 1e-9 && v[1].abs() < 1e-9 && v[2].abs() < 1e-9,
                "{i}: {v:?}"
            );
        }
        // The longest is the matcher's max_dist in Å, and the matcher pairs the same sites.
        let m = get_rms_dist(&s1, &s2, &MatcherOptions::atomworld())
            .unwrap()
            .unwrap();
        assert_eq!(m.mapping, mapping);
        let longest = d
            .iter()
            .map(|v| crate::numeric::norm(*v))
            .fold(0.0, f64::max);
        assert!(
            (longest - m.max_dist_angstrom).abs() < 1e-9,
            "{longest} vs {}",
            m.max_dist_angstrom
        );
        assert_eq!(site_displacements(&s1, &s2, &[0, 1]), None);
        // The shifted copy is not the same sites; the reordered unshifted one is.
        assert_eq!(correspondence(&s1, &s2, 1e-6), None);
        let mut reordered = s1.clone();
        reordered.sites = order
            .iter()
            .map(|&i| {
                let mut s = s1.sites[i].clone();
                s.frac[0] += 1.0; // another image of the same site
                s
            })
            .collect();
        assert_eq!(correspondence(&s1, &reordered, 1e-6), Some(order.to_vec()));
        assert_eq!(site_displacements(&s1, &s2, &[0, 1, 2, 9]), None);
    }
}
