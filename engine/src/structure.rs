//! A periodic structure: a lattice plus ordered sites in fractional coordinates.
//!
//! Site order is meaningful: AtomWorld prompts address atoms by their 0-based index in the
//! order the CIF lists them.

use serde::{Deserialize, Serialize};

use crate::element::Element;
use crate::lattice::Lattice;
use crate::numeric::norm;

/// One atom site: its element, fractional position and CIF label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// The element occupying the site.
    pub element: Element,
    /// Fractional coordinates (not wrapped unless a caller wraps them).
    pub frac: [f64; 3],
    /// The site's label as read or written (`Na0`, `O12`, …).
    pub label: String,
    /// Occupancy (1 for ordered structures).
    pub occupancy: f64,
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

    /// Distinct elements in order of first appearance.
    pub fn elements(&self) -> Vec<Element> {
        let mut out: Vec<Element> = Vec::new();
        for s in &self.sites {
            if !out.contains(&s.element) {
                out.push(s.element);
            }
        }
        out
    }

    /// Element counts (weighted by occupancy), in order of first appearance.
    pub fn composition(&self) -> Vec<(Element, f64)> {
        let mut out: Vec<(Element, f64)> = Vec::new();
        for s in &self.sites {
            match out.iter_mut().find(|(e, _)| *e == s.element) {
                Some((_, n)) => *n += s.occupancy,
                None => out.push((s.element, s.occupancy)),
            }
        }
        out
    }

    /// Minimum-image distance (Å) between sites `i` and `j`.
    ///
    /// Searches the 27 neighbouring images of the fractional difference wrapped to
    /// [-0.5, 0.5); exact for cells that are not extremely skewed (Niggli-reduced cells
    /// always qualify).
    pub fn distance(&self, i: usize, j: usize) -> f64 {
        let (a, b) = (self.sites[i].frac, self.sites[j].frac);
        let d: [f64; 3] = std::array::from_fn(|k| {
            let x = b[k] - a[k];
            x - x.round()
        });
        let mut best = f64::INFINITY;
        for n0 in -1..=1 {
            for n1 in -1..=1 {
                for n2 in -1..=1 {
                    let f = [d[0] + n0 as f64, d[1] + n1 as f64, d[2] + n2 as f64];
                    best = best.min(norm(self.lattice.to_cartesian(f)));
                }
            }
        }
        best
    }
}
