//! Strategies shared by the engine's property tests: random cells and random ordered
//! structures whose sites never coincide. (`kernel.rs` beside it, included by path, serves
//! the differential tests, which build for wasm32 too, where proptest is not available.)

#![allow(dead_code)] // each test file uses a subset

use engine::{Element, Lattice, Site, Structure};
use proptest::prelude::*;

/// A random cell: lengths 2–15 Å, angles 60–120° (combinations that form no cell are
/// filtered out).
pub fn lattice() -> impl Strategy<Value = Lattice> {
    (
        (2.0f64..15.0, 2.0f64..15.0, 2.0f64..15.0),
        (60.0f64..120.0, 60.0f64..120.0, 60.0f64..120.0),
    )
        .prop_filter_map("cell must exist", |((a, b, c), (al, be, ga))| {
            Lattice::from_parameters(a, b, c, al, be, ga).ok()
        })
}

/// Up to `max - 1` sites of random elements, no two within 1e-3 (fractional) of each other.
pub fn sites_up_to(max: usize) -> impl Strategy<Value = Vec<(u32, [f64; 3])>> {
    prop::collection::vec(
        (1u32..=118, [0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0]),
        1..max,
    )
    .prop_filter("sites must not coincide", |v| {
        v.iter().enumerate().all(|(i, (_, a))| {
            v[..i].iter().all(|(_, b)| {
                (0..3).any(|k| {
                    let d = a[k] - b[k];
                    (d - d.round()).abs() > 1e-3
                })
            })
        })
    })
}

/// A random ordered structure of 1 to `max - 1` sites.
pub fn structure_up_to(max: usize) -> impl Strategy<Value = Structure> {
    (lattice(), sites_up_to(max)).prop_map(|(lattice, sites)| {
        let sites = sites
            .into_iter()
            .enumerate()
            .filter_map(|(i, (z, frac))| {
                let element = Element::from_z(z)?;
                Some(Site {
                    element,
                    frac,
                    label: format!("{}{}", element.symbol(), i).into(),
                    occupancy: 1.0,
                    oxidation: None,
                    others: Vec::new(),
                    magmom: None,
                })
            })
            .collect();
        Structure::new(lattice, sites)
    })
}
