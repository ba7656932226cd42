//! A periodic structure: a lattice plus ordered sites in fractional coordinates.
//!
//! Site order is meaningful: AtomWorld prompts address atoms by their 0-based index in the
//! order the CIF lists them.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::element::Element;
use crate::lattice::{translations_within, Lattice};
use crate::numeric::{acos_deg, norm};

/// One element on a site, its occupancy and its oxidation state (compared as pymatgen
/// compares species: [`crate::species`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Occupant {
    /// The element.
    pub element: Element,
    /// Its occupancy of the site.
    pub occupancy: f64,
    /// Its oxidation state (pymatgen's `Species`); `None` for a plain element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oxidation: Option<f64>,
}

/// Largest number of sites any reader builds: every format's declared count, and for CIF the
/// atom-site rows times the symmetry operations, is checked against it before anything is
/// expanded or allocated. The viewer is made for up to 10,000 atoms; this leaves room.
pub const MAX_SITES: usize = 100_000;

/// One atom site: its element (or elements, when shared), fractional position and label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// The element occupying the site (the first listed, when several share it).
    pub element: Element,
    /// Fractional coordinates (not wrapped unless a caller wraps them).
    pub frac: [f64; 3],
    /// The site's label as read or written (`Na0`, `O12`, …).
    pub label: CompactString,
    /// Occupancy of `element` (1 for ordered structures).
    pub occupancy: f64,
    /// Oxidation state of `element` (pymatgen's `Species`, e.g. Fe2+), as the pymatgen CIF
    /// reader (`_atom_type_oxidation_number`) and the Structure JSON reader give it; `None`
    /// for a plain element. The matcher compares it ([`crate::species`]); writers drop it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oxidation: Option<f64>,
    /// The other elements sharing the site, after `element`, in the reader's order (a mixed
    /// site such as Sn0.5In0.5); empty when one element holds it. Only the pymatgen CIF and
    /// Structure JSON readers fill it: the matcher and the primitive cell search compare
    /// sites by all of their species ([`crate::species`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Occupant>,
    /// The magnetic moment (Cartesian, μB) read from a magnetic CIF (pymatgen's `magmom`
    /// site property); `None` for other files. Not compared by the matcher, as in pymatgen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub magmom: Option<[f64; 3]>,
}

impl Site {
    /// A site held by one element.
    pub fn new(
        element: Element,
        frac: [f64; 3],
        label: impl Into<CompactString>,
        occupancy: f64,
    ) -> Self {
        Self {
            element,
            frac,
            label: label.into(),
            occupancy,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        }
    }

    /// Every element on the site with its occupancy: `element` first, then `others`.
    pub fn occupants(&self) -> impl Iterator<Item = Occupant> + '_ {
        std::iter::once(Occupant {
            element: self.element,
            occupancy: self.occupancy,
            oxidation: self.oxidation,
        })
        .chain(self.others.iter().copied())
    }
}

/// A periodic neighbour of a site (see [`Structure::neighbours`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    /// Index of the neighbouring site.
    pub index: usize,
    /// Lattice translation added to that site's stored fractional coordinates.
    pub image: [i32; 3],
    /// Distance (Å).
    pub distance: f64,
}

/// A crystal structure: lattice and ordered sites.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Structure {
    /// The periodic lattice.
    pub lattice: Lattice,
    /// Sites in order; a site's index is its position in this vector.
    pub sites: Vec<Site>,
}

impl Structure {
    /// A structure from a lattice and sites.
    pub fn new(lattice: Lattice, sites: Vec<Site>) -> Self {
        Self { lattice, sites }
    }

    /// Number of sites.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// True when the structure has no sites.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// Cartesian position (Å) of site `i` in the AtomWorld frame.
    pub fn cartesian(&self, i: usize) -> [f64; 3] {
        self.lattice.to_cartesian(self.sites[i].frac)
    }

    /// Cartesian positions of all sites.
    pub fn cartesian_positions(&self) -> Vec<[f64; 3]> {
        self.sites
            .iter()
            .map(|s| self.lattice.to_cartesian(s.frac))
            .collect()
    }

    /// Distinct elements in order of first appearance (mixed sites included).
    pub fn elements(&self) -> Vec<Element> {
        let mut out: Vec<Element> = Vec::new();
        for o in self.sites.iter().flat_map(Site::occupants) {
            if !out.contains(&o.element) {
                out.push(o.element);
            }
        }
        out
    }

    /// Element amounts (weighted by occupancy, mixed sites included), in order of first
    /// appearance.
    pub fn composition(&self) -> Vec<(Element, f64)> {
        let mut out: Vec<(Element, f64)> = Vec::new();
        for o in self.sites.iter().flat_map(Site::occupants) {
            match out.iter_mut().find(|(e, _)| *e == o.element) {
                Some((_, n)) => *n += o.occupancy,
                None => out.push((o.element, o.occupancy)),
            }
        }
        out
    }

    /// Minimum-image distance (Å) between sites `i` and `j`.
    pub fn distance(&self, i: usize, j: usize) -> f64 {
        norm(self.mic_vector(i, j))
    }

    /// The angle (degrees) at site `j` between the minimum-image vectors to sites `i` and
    /// `k`; `None` when one of them coincides with `j` (the angle is undefined).
    pub fn angle(&self, i: usize, j: usize, k: usize) -> Option<f64> {
        let (u, v) = (self.mic_vector(j, i), self.mic_vector(j, k));
        let (nu, nv) = (norm(u), norm(v));
        if nu < 1e-12 || nv < 1e-12 {
            return None;
        }
        let cos = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) / (nu * nv);
        Some(acos_deg(cos))
    }

    /// The shortest Cartesian vector (Å) from site `i` to any periodic image of site `j`.
    ///
    /// First searches the 27 neighbouring images of the fractional difference wrapped to
    /// [-0.5, 0.5] (enough for any reasonably shaped cell, and the choice among equally
    /// short images); then, for skewed cells where a shorter image can lie further out,
    /// every translation that could beat it (bounded by the distances between lattice
    /// planes), so the result is exact for any cell, as ASE's `find_mic` is.
    pub fn mic_vector(&self, i: usize, j: usize) -> [f64; 3] {
        let (a, b) = (self.sites[i].frac, self.sites[j].frac);
        self.lattice
            .shortest_vector(std::array::from_fn(|k| b[k] - a[k]))
    }

    /// Distances (Å) between neighbouring lattice planes parallel to (b, c), (c, a), (a, b).
    pub(crate) fn plane_distances(&self) -> [f64; 3] {
        self.lattice.plane_distances()
    }

    /// Every periodic image of every site within `radius` Å of site `i`, the site itself
    /// excluded (its own images included), sorted by distance, then index, then image; as
    /// pymatgen's `Structure.get_neighbors(site, r)` finds them (distance ≤ r).
    ///
    /// The image search covers exactly the translations whose points can lie within the
    /// sphere (from the distances between lattice planes), so it is exact for any cell shape.
    pub fn neighbours(&self, i: usize, radius: f64) -> Vec<Neighbour> {
        let mut out = Vec::new();
        let Some(centre) = self.sites.get(i) else {
            return out;
        };
        if !(radius.is_finite() && radius > 0.0) {
            return out;
        }
        let reach = self.plane_distances().map(|h| radius / h);
        for (j, site) in self.sites.iter().enumerate() {
            let d: [f64; 3] = std::array::from_fn(|k| site.frac[k] - centre.frac[k]);
            for n in translations_within(d, reach) {
                let f = [d[0] + n[0] as f64, d[1] + n[1] as f64, d[2] + n[2] as f64];
                let dist = norm(self.lattice.to_cartesian(f));
                if dist <= radius && !(j == i && n == [0, 0, 0]) {
                    out.push(Neighbour {
                        index: j,
                        image: n.map(|x| x as i32),
                        distance: dist,
                    });
                }
            }
        }
        out.sort_by(|a, b| {
            a.distance
                .total_cmp(&b.distance)
                .then(a.index.cmp(&b.index))
                .then(a.image.cmp(&b.image))
        });
        out
    }

    /// A copy with every fractional coordinate wrapped into [0, 1) (as ASE does when writing:
    /// `x % 1.0` applied twice, so that tiny negatives do not become 1.0).
    pub fn wrapped(&self) -> Structure {
        let mut out = self.clone();
        for site in &mut out.sites {
            site.frac = site.frac.map(|x| x.rem_euclid(1.0).rem_euclid(1.0));
        }
        out
    }

    /// The n1×n2×n3 supercell in ASE's repeat order: all original sites for image (0,0,0),
    /// then (0,0,1), (0,0,2), … with the c index fastest. Cell vectors are multiplied;
    /// positions are the original (unwrapped) positions plus the image translation.
    pub fn supercell(&self, n: [u32; 3]) -> Structure {
        let m = self.lattice.matrix();
        let lattice = Lattice::from_matrix(std::array::from_fn(|i| m[i].map(|x| x * n[i] as f64)));
        let mut sites = Vec::with_capacity(self.len() * (n[0] * n[1] * n[2]) as usize);
        for i0 in 0..n[0] {
            for i1 in 0..n[1] {
                for i2 in 0..n[2] {
                    let shift = [i0 as f64, i1 as f64, i2 as f64];
                    for s in &self.sites {
                        let frac = std::array::from_fn(|k| (s.frac[k] + shift[k]) / n[k] as f64);
                        sites.push(Site { frac, ..s.clone() });
                    }
                }
            }
        }
        Structure::new(lattice, sites)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;

    fn nacl_pair() -> Structure {
        let l = Lattice::from_parameters(4.0, 5.0, 6.0, 90.0, 90.0, 90.0).unwrap();
        let site = |sym: &str, frac| Site {
            element: Element::from_symbol(sym).unwrap(),
            frac,
            label: sym.into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        Structure::new(
            l,
            vec![site("Na", [0.05, 0.0, 0.0]), site("Cl", [0.95, 0.5, 0.0])],
        )
    }

    #[test]
    fn minimum_image_crosses_the_boundary() {
        let s = nacl_pair();
        let v = s.mic_vector(0, 1);
        assert!((v[0] - -0.4).abs() < 1e-12, "{v:?}");
        assert!((v[1].abs() - 2.5).abs() < 1e-12);
        assert!((s.distance(0, 1) - (0.16f64 + 6.25).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn angles_use_the_nearest_images() {
        // Na at the origin of a 4×5×6 box; Cl across the a boundary and at +b/2.
        let s = nacl_pair();
        let mut three = s.clone();
        three.sites.push(Site {
            frac: [0.05, 0.3, 0.0],
            ..s.sites[0].clone()
        });
        // From site 2 (x = 0.2, y = 1.5): site 0 straight down in y, site 1 at (−0.4, +1).
        let a = three.angle(0, 2, 1).unwrap();
        assert!(
            (a - (180.0 - libm::atan(0.4f64 / 1.0).to_degrees())).abs() < 1e-9,
            "{a}"
        );
        assert_eq!(three.angle(0, 0, 1), None);
    }

    #[test]
    fn minimum_image_is_exact_in_a_skewed_cell() {
        // b = 5a + (0, 3, 0): the nearest image of site 1 lies five a-steps away, outside
        // the 27 images of the wrapped difference.
        let l = Lattice::from_matrix([[2.0, 0.0, 0.0], [10.0, 3.0, 0.0], [0.0, 0.0, 4.0]]);
        let site = |frac| Site {
            element: Element::from_symbol("C").unwrap(),
            frac,
            label: "C".into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        let s = Structure::new(l, vec![site([0.0, 0.0, 0.0]), site([0.0, 0.4, 0.0])]);
        // Cartesian (4.0, 1.2, 0) minus two a-vectors is (0, 1.2, 0).
        assert!(
            (s.distance(0, 1) - 1.2).abs() < 1e-12,
            "{}",
            s.distance(0, 1)
        );
    }

    #[test]
    fn supercell_order_is_image_major_with_c_fastest() {
        let s = nacl_pair().supercell([2, 1, 3]);
        assert_eq!(s.len(), 12);
        assert_eq!(s.lattice.lengths(), [8.0, 5.0, 18.0]);
        // Image (0,0,1) comes right after image (0,0,0).
        let p = s.cartesian(2);
        assert!(
            (p[0] - 0.2).abs() < 1e-12 && (p[2] - 6.0).abs() < 1e-12,
            "{p:?}"
        );
        // Image (1,0,0) starts at index 2 * 3 = 6.
        let q = s.cartesian(6);
        assert!((q[0] - 4.2).abs() < 1e-12 && q[2].abs() < 1e-12, "{q:?}");
    }

    #[test]
    fn neighbours_count_shells_and_images_of_itself() {
        // Simple cubic: 6 first neighbours at a, 12 at a√2, 8 at a√3, all images of site 0.
        let l = Lattice::from_parameters(3.0, 3.0, 3.0, 90.0, 90.0, 90.0).unwrap();
        let site = Site {
            element: Element::from_symbol("Po").unwrap(),
            frac: [0.2, 0.9, 1.4],
            label: "Po".into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        };
        let s = Structure::new(l, vec![site]);
        let n = s.neighbours(0, 3.0 * 3f64.sqrt() + 1e-9);
        assert_eq!(n.len(), 26);
        assert!(n[..6].iter().all(|x| (x.distance - 3.0).abs() < 1e-12));
        assert!(n[6..18]
            .iter()
            .all(|x| (x.distance - 3.0 * 2f64.sqrt()).abs() < 1e-12));
        assert!(n.iter().all(|x| x.index == 0 && x.image != [0, 0, 0]));
        // A very skewed cell of the same lattice finds the same shells.
        let skew = Structure::new(
            Lattice::from_matrix([[3.0, 0.0, 0.0], [15.0, 3.0, 0.0], [-9.0, 6.0, 3.0]]),
            s.sites.clone(),
        );
        let m = skew.neighbours(0, 3.0 * 3f64.sqrt() + 1e-9);
        assert_eq!(m.len(), 26);
        assert!(s.neighbours(0, 2.9).is_empty());
        assert!(s.neighbours(5, 10.0).is_empty());
    }

    #[test]
    fn wrapping_never_gives_one() {
        let mut s = nacl_pair();
        s.sites[0].frac = [-1e-18, 1.0, -0.25];
        let w = s.wrapped();
        for x in w.sites[0].frac {
            assert!((0.0..1.0).contains(&x), "{x}");
        }
        assert_eq!(w.sites[0].frac[2], 0.75);
    }
}
