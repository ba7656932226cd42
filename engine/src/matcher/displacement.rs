//! For pictures of a match: the matcher's per-site displacements
//! ([`super::RmsDist::displacements`]) index sites in pymatgen's parsed order, a picture shows
//! CIF rows; [`correspondence`] relates the two orders.

use crate::structure::Structure;

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
            oxidation: None,
            others: Vec::new(),
            magmom: None,
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
                    x - crate::numeric::floor(x)
                });
                s
            })
            .collect();
        let s2 = Structure::new(l, moved);
        // The matcher pairs the same sites, and its vectors, back in s1's cell, are the
        // displacements: site 2 moved, the others carry the removed mean.
        let m = get_rms_dist(&s1, &s2, &MatcherOptions::atomworld())
            .unwrap()
            .unwrap();
        assert_eq!(m.mapping, [1, 3, 2, 0]);
        let d = &m.displacements;
        assert_eq!(d.len(), 4);
        for (i, v) in d.iter().enumerate() {
            let expected_x = if i == 2 { 0.3 * 0.75 } else { -0.3 / 4.0 };
            assert!(
                (v[0] - expected_x).abs() < 1e-9 && v[1].abs() < 1e-9 && v[2].abs() < 1e-9,
                "{i}: {v:?}"
            );
        }
        let longest = d
            .iter()
            .map(|v| crate::numeric::norm(*v))
            .fold(0.0, f64::max);
        assert!(
            (longest - m.max_dist_angstrom).abs() < 1e-9,
            "{longest} vs {}",
            m.max_dist_angstrom
        );
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
    }
}
