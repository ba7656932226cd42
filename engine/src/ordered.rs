//! The order-sensitive comparison of AtomWorld's move_all probe (the paper's Table 9 metric): the prediction
//! must keep the cell and the order of the sites, so sites are compared one to one, without
//! any search for a best mapping.

use serde::{Deserialize, Serialize};

use crate::numeric::norm;
use crate::structure::Structure;

/// Relative and absolute tolerances of the lattice comparison (numpy's `allclose` defaults).
const LATTICE_RTOL: f64 = 1e-5;
const LATTICE_ATOL: f64 = 1e-8;

/// The largest normalised displacement that still passes.
pub const MAX_NORMALISED: f64 = 0.5;

/// Result of a site-by-site comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderedDistances {
    /// Root mean square displacement normalised by (V/n)^(1/3) of the target.
    pub rms: f64,
    /// Largest displacement normalised by (V/n)^(1/3) of the target.
    pub max_dist: f64,
    /// Largest displacement in Å.
    pub max_dist_angstrom: f64,
    /// True when `max_dist` ≤ [`MAX_NORMALISED`].
    pub pass: bool,
}

/// Why two structures cannot be compared site by site.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum OrderedMismatch {
    /// Different numbers of sites.
    #[error("the prediction has {predicted} sites, the target {target}")]
    Length {
        /// Sites in the target.
        target: usize,
        /// Sites in the prediction.
        predicted: usize,
    },
    /// Site `index` holds a different element.
    #[error("site {index} is {predicted} in the prediction but {target} in the target")]
    Species {
        /// Site index.
        index: usize,
        /// Element in the target.
        target: String,
        /// Element in the prediction.
        predicted: String,
    },
    /// The cells differ beyond numpy's `allclose` tolerances.
    #[error("the prediction's cell differs from the target's")]
    Lattice,
    /// The target has no sites or no volume.
    #[error("the target has no sites or a zero-volume cell")]
    Degenerate,
}

/// Compare `predicted` with `target` site by site: fractional differences wrapped to the
/// nearest image (d − round(d)), converted to Cartesian with the target lattice, normalised by
/// (V/n)^(1/3).
pub fn ordered_distances(
    target: &Structure,
    predicted: &Structure,
) -> Result<OrderedDistances, OrderedMismatch> {
    if target.len() != predicted.len() {
        return Err(OrderedMismatch::Length {
            target: target.len(),
            predicted: predicted.len(),
        });
    }
    for (index, (t, p)) in target.sites.iter().zip(&predicted.sites).enumerate() {
        if t.element != p.element {
            return Err(OrderedMismatch::Species {
                index,
                target: t.element.symbol().into(),
                predicted: p.element.symbol().into(),
            });
        }
    }
    let (mt, mp) = (target.lattice.matrix(), predicted.lattice.matrix());
    let close = (0..3).all(|i| {
        (0..3).all(|k| (mp[i][k] - mt[i][k]).abs() <= LATTICE_ATOL + LATTICE_RTOL * mt[i][k].abs())
    });
    if !close {
        return Err(OrderedMismatch::Lattice);
    }
    let volume = target.lattice.volume().abs();
    if target.is_empty() || volume == 0.0 || !volume.is_finite() {
        return Err(OrderedMismatch::Degenerate);
    }
    let scale = libm::cbrt(volume / target.len() as f64);
    let mut sum_sq = 0.0;
    let mut max: f64 = 0.0;
    for (t, p) in target.sites.iter().zip(&predicted.sites) {
        let d: [f64; 3] = std::array::from_fn(|k| {
            let x = p.frac[k] - t.frac[k];
            x - x.round()
        });
        let len = norm(target.lattice.to_cartesian(d));
        sum_sq += len * len;
        max = max.max(len);
    }
    let rms = (sum_sq / target.len() as f64).sqrt() / scale;
    let max_dist = max / scale;
    Ok(OrderedDistances {
        rms,
        max_dist,
        max_dist_angstrom: max,
        pass: max_dist <= MAX_NORMALISED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::lattice::Lattice;
    use crate::structure::Site;

    fn cube(fracs: &[[f64; 3]]) -> Structure {
        let l = Lattice::from_parameters(2.0, 2.0, 2.0, 90.0, 90.0, 90.0).unwrap();
        Structure::new(
            l,
            fracs
                .iter()
                .map(|&frac| Site {
                    element: Element::from_symbol("Fe").unwrap(),
                    frac,
                    label: "Fe".into(),
                    occupancy: 1.0,
                    oxidation: None,
                    others: Vec::new(),
                    magmom: None,
                })
                .collect(),
        )
    }

    #[test]
    fn wrapped_differences_and_normalisation() {
        let t = cube(&[[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]);
        let p = cube(&[[0.95, 0.0, 0.0], [0.5, 0.5, 0.5]]);
        let d = ordered_distances(&t, &p).unwrap();
        // 0.05 × 2 Å = 0.1 Å; (V/n)^(1/3) = (8/2)^(1/3).
        let scale = libm::cbrt(4.0);
        assert!((d.max_dist_angstrom - 0.1).abs() < 1e-12);
        assert!((d.max_dist - 0.1 / scale).abs() < 1e-12);
        assert!((d.rms - (0.01f64 / 2.0).sqrt() / scale).abs() < 1e-12);
        assert!(d.pass);
    }

    #[test]
    fn order_and_cell_matter() {
        let t = cube(&[[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]);
        assert!(matches!(
            ordered_distances(&t, &cube(&[[0.0; 3]])),
            Err(OrderedMismatch::Length { .. })
        ));
        let mut other = t.clone();
        other.lattice = Lattice::from_parameters(2.1, 2.0, 2.0, 90.0, 90.0, 90.0).unwrap();
        assert_eq!(ordered_distances(&t, &other), Err(OrderedMismatch::Lattice));
        let far = cube(&[[0.0, 0.0, 0.0], [0.0, 0.5, 0.5]]);
        assert!(!ordered_distances(&t, &far).unwrap().pass);
    }
}
