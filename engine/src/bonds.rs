//! Bonds for display: which pairs of sites a viewer connects.
//!
//! The rule is Jmol's default (Jmol's `bondTolerance` 0.45 Å and `minBondDistance` 0.4 Å): two
//! atoms are bonded when `0.4 Å < d ≤ r₁ + r₂ + 0.45 Å`, with `r` the covalent radii of our
//! element table and `d` the distance between any periodic images. It is a picture aid, not
//! chemistry: nothing in the benchmark depends on it.
//!
//! Written here rather than taken from a crate because no Rust crate finds periodic
//! neighbours in arbitrary (skewed) cells; a cell list over the images that can reach the
//! unit cell keeps it linear in the number of sites, so 10,000 atoms take milliseconds.

use std::collections::HashMap;

use crate::numeric::norm;
use crate::structure::Structure;

/// Added to the sum of covalent radii (Å).
pub const BOND_TOLERANCE: f64 = 0.45;
/// Shorter distances are not bonds (coincident atoms) (Å).
pub const MIN_BOND_DISTANCE: f64 = 0.4;

/// A bond from site `from` to the periodic image `image` of site `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bond {
    /// The site the bond starts at (its stored position).
    pub from: usize,
    /// The site it ends at.
    pub to: usize,
    /// Lattice translation added to `to`'s stored fractional coordinates.
    pub image: [i32; 3],
    /// Cartesian vector from `from` to that image of `to` (Å).
    pub vector: [f64; 3],
}

impl Bond {
    /// Length in Å.
    pub fn length(&self) -> f64 {
        norm(self.vector)
    }
}

/// Every bond of `s`, each listed once (from the lower index; a site bonded to its own image
/// once per pair of opposite translations), ordered by `from`, then `to`, then `image`.
pub fn bonds(s: &Structure) -> Vec<Bond> {
    let radii: Vec<f64> = s
        .sites
        .iter()
        .map(|x| x.element.covalent_radius())
        .collect();
    let Some(max_r) = radii.iter().copied().reduce(f64::max) else {
        return Vec::new();
    };
    let cutoff = 2.0 * max_r + BOND_TOLERANCE;
    let reach = s.plane_distances().map(|h| cutoff / h);
    if reach.iter().any(|r| !r.is_finite() || *r > 50.0) {
        // A degenerate or absurdly thin cell: no sensible picture of bonds.
        return Vec::new();
    }
    // Every image whose fractional coordinates lie within `reach` of the unit cell, in a
    // Cartesian grid of bins `cutoff` wide: any partner within the cutoff of a site in the
    // cell is among them.
    let mut images: Vec<(usize, [i32; 3], [f64; 3])> = Vec::new();
    let mut bins: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    let bin_of = |p: [f64; 3]| p.map(|x| (x / cutoff).floor() as i64);
    for (j, site) in s.sites.iter().enumerate() {
        let f = site.frac.map(|x| x - x.floor());
        let shift: [i32; 3] = std::array::from_fn(|k| (f[k] - site.frac[k]).round() as i32);
        let lo: [i32; 3] = std::array::from_fn(|k| (-reach[k] - f[k]).ceil() as i32);
        let hi: [i32; 3] = std::array::from_fn(|k| (1.0 + reach[k] - f[k]).floor() as i32);
        for a in lo[0]..=hi[0] {
            for b in lo[1]..=hi[1] {
                for c in lo[2]..=hi[2] {
                    let n = [a, b, c];
                    let p = s
                        .lattice
                        .to_cartesian(std::array::from_fn(|k| f[k] + n[k] as f64));
                    bins.entry(bin_of(p)).or_default().push(images.len());
                    images.push((j, std::array::from_fn(|k| n[k] + shift[k]), p));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, site) in s.sites.iter().enumerate() {
        // Search around the wrapped position; report images relative to the stored one.
        let f = site.frac.map(|x| x - x.floor());
        let back: [i32; 3] = std::array::from_fn(|k| (f[k] - site.frac[k]).round() as i32);
        let p = s.lattice.to_cartesian(f);
        let b = bin_of(p);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(members) = bins.get(&[b[0] + dx, b[1] + dy, b[2] + dz]) else {
                        continue;
                    };
                    for &m in members {
                        let (j, wrapped_image, q) = images[m];
                        let image: [i32; 3] = std::array::from_fn(|k| wrapped_image[k] - back[k]);
                        if (j, image) <= (i, [0, 0, 0]) {
                            continue; // listed from the other end (or the site itself)
                        }
                        let v = [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
                        let d = norm(v);
                        if d > MIN_BOND_DISTANCE && d <= radii[i] + radii[j] + BOND_TOLERANCE {
                            out.push(Bond {
                                from: i,
                                to: j,
                                image,
                                vector: v,
                            });
                        }
                    }
                }
            }
        }
    }
    out.sort_by_key(|b| (b.from, b.to, b.image));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;
    use crate::structure::Site;
    use crate::Element;

    fn el(symbol: &str) -> Element {
        Element::from_symbol(symbol).unwrap()
    }

    fn site(el: Element, frac: [f64; 3]) -> Site {
        Site {
            element: el,
            frac,
            label: el.symbol().into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        }
    }

    /// The same bonds from the brute-force neighbour search.
    fn by_neighbours(s: &Structure) -> Vec<(usize, usize, [i32; 3])> {
        let mut out = Vec::new();
        for (i, a) in s.sites.iter().enumerate() {
            for n in s.neighbours(i, 2.0 * 2.5 + BOND_TOLERANCE) {
                let limit = a.element.covalent_radius()
                    + s.sites[n.index].element.covalent_radius()
                    + BOND_TOLERANCE;
                // The stored-coordinate image, as `bonds` reports it.
                if (n.index, n.image) > (i, [0, 0, 0])
                    && n.distance > MIN_BOND_DISTANCE
                    && n.distance <= limit
                {
                    out.push((i, n.index, n.image));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn rock_salt_has_six_bonds_per_atom() {
        let l = Lattice::from_parameters(5.64, 5.64, 5.64, 90.0, 90.0, 90.0).unwrap();
        let mut sites = Vec::new();
        for t in [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [0.5, 0.5, 0.0],
        ] {
            sites.push(site(el("Na"), t));
            sites.push(site(el("Cl"), t.map(|x: f64| (x + 0.5) % 1.0)));
        }
        let s = Structure::new(l, sites);
        let b = bonds(&s);
        // 8 atoms × 6 neighbours / 2 ends; all 2.82 Å, all Na–Cl.
        assert_eq!(b.len(), 24);
        assert!(b.iter().all(|x| (x.length() - 2.82).abs() < 1e-9));
        assert!(b
            .iter()
            .all(|x| s.sites[x.from].element != s.sites[x.to].element));
    }

    #[test]
    fn agrees_with_the_neighbour_search_in_skewed_cells() {
        // A triclinic cell with unwrapped coordinates, a one-atom cell bonded to its own
        // images, and a coincident pair (not a bond).
        let l = Lattice::from_parameters(3.1, 4.0, 2.6, 71.0, 103.0, 118.0).unwrap();
        let s = Structure::new(
            l,
            vec![
                site(el("C"), [0.1, 0.2, 0.3]),
                site(el("O"), [1.45, -0.3, 0.9]),
                site(el("Si"), [0.7, 0.75, -0.2]),
                site(el("H"), [0.1, 0.2, 0.31]),
                site(el("Fe"), [0.33, 0.5, 0.5]),
            ],
        );
        let got: Vec<_> = bonds(&s).iter().map(|b| (b.from, b.to, b.image)).collect();
        assert_eq!(got, by_neighbours(&s));
        assert!(!got.is_empty());
        let one = Structure::new(
            Lattice::from_parameters(2.5, 2.5, 2.5, 60.0, 60.0, 60.0).unwrap(),
            vec![site(el("Cu"), [0.0, 0.0, 0.0])],
        );
        let got: Vec<_> = bonds(&one)
            .iter()
            .map(|b| (b.from, b.to, b.image))
            .collect();
        assert_eq!(got, by_neighbours(&one));
        assert_eq!(got.len(), 6, "fcc: 12 neighbours, each pair once");
    }
}
