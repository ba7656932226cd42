//! The CIF-Gen examples: a formula per structure type with its conventional lattice
//! parameters (room temperature, Å, rounded to three decimals).
//!
//! Sources (facts only, one per row in the comments):
//! - [K] C. Kittel, *Introduction to Solid State Physics*, 8th ed. (Wiley, 2005), ch. 1,
//!   table "Crystal structures of the elements";
//! - [W1] R. W. G. Wyckoff, *Crystal Structures*, vol. 1, 2nd ed. (Interscience, 1963):
//!   elements, rock salt, CsCl, zinc blende, wurtzite, fluorite, rutile;
//! - [W2] same, vol. 2 (1964): perovskites;
//! - [W3] same, vol. 3 (1965): spinels.
//!
//! Wurtzite rows use the ideal internal parameter u = 3/8 (a choice, not a measurement; the
//! measured values of ZnO and GaN, ≈ 0.38, differ by far less than the matcher's
//! tolerance). The spinel u is given in origin choice 2 (Wyckoff's origin-choice-1 value
//! minus 1/8).

use serde::Serialize;

use super::prototype::{Params, Prototype};

/// One CIF-Gen example.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Example {
    /// The formula as shown to the model.
    pub formula: &'static str,
    /// The structure type.
    pub prototype: Prototype,
    /// Element symbols by role (cation first, as in the formula).
    pub species: &'static [&'static str],
    /// Lattice and internal parameters.
    pub params: Params,
    /// Where the numbers come from (see the module docs).
    pub source: &'static str,
}

const fn cubic(
    formula: &'static str,
    prototype: Prototype,
    species: &'static [&'static str],
    a: f64,
    source: &'static str,
) -> Example {
    Example {
        formula,
        prototype,
        species,
        params: Params {
            a,
            c: None,
            u: None,
        },
        source,
    }
}

const fn with_c_u(
    formula: &'static str,
    prototype: Prototype,
    species: &'static [&'static str],
    a: f64,
    c: Option<f64>,
    u: Option<f64>,
    source: &'static str,
) -> Example {
    Example {
        formula,
        prototype,
        species,
        params: Params { a, c, u },
        source,
    }
}

/// The examples, grouped by structure type.
pub const EXAMPLES: [Example; 27] = [
    // α-Po, a = 3.34 Å [K].
    cubic("Po", Prototype::SimpleCubic, &["Po"], 3.34, "Kittel 2005"),
    // Fe 2.87 Å, W 3.16 Å, Cr 2.88 Å [K].
    cubic("Fe", Prototype::Bcc, &["Fe"], 2.87, "Kittel 2005"),
    cubic("W", Prototype::Bcc, &["W"], 3.16, "Kittel 2005"),
    cubic("Cr", Prototype::Bcc, &["Cr"], 2.88, "Kittel 2005"),
    // Cu 3.61 Å, Al 4.05 Å, Au 4.08 Å [K].
    cubic("Cu", Prototype::Fcc, &["Cu"], 3.61, "Kittel 2005"),
    cubic("Al", Prototype::Fcc, &["Al"], 4.05, "Kittel 2005"),
    cubic("Au", Prototype::Fcc, &["Au"], 4.08, "Kittel 2005"),
    // Mg a = 3.21, c = 5.21 Å; Zn a = 2.66, c = 4.95 Å [K].
    with_c_u(
        "Mg",
        Prototype::Hcp,
        &["Mg"],
        3.21,
        Some(5.21),
        None,
        "Kittel 2005",
    ),
    with_c_u(
        "Zn",
        Prototype::Hcp,
        &["Zn"],
        2.66,
        Some(4.95),
        None,
        "Kittel 2005",
    ),
    // C 3.567 Å, Si 5.430 Å, Ge 5.658 Å [K].
    cubic("C", Prototype::Diamond, &["C"], 3.567, "Kittel 2005"),
    cubic("Si", Prototype::Diamond, &["Si"], 5.430, "Kittel 2005"),
    cubic("Ge", Prototype::Diamond, &["Ge"], 5.658, "Kittel 2005"),
    // NaCl 5.640 Å, MgO 4.211 Å, LiF 4.026 Å [W1].
    cubic(
        "NaCl",
        Prototype::RockSalt,
        &["Na", "Cl"],
        5.640,
        "Wyckoff vol. 1 (1963)",
    ),
    cubic(
        "MgO",
        Prototype::RockSalt,
        &["Mg", "O"],
        4.211,
        "Wyckoff vol. 1 (1963)",
    ),
    cubic(
        "LiF",
        Prototype::RockSalt,
        &["Li", "F"],
        4.026,
        "Wyckoff vol. 1 (1963)",
    ),
    // CsCl 4.123 Å [W1].
    cubic(
        "CsCl",
        Prototype::CsCl,
        &["Cs", "Cl"],
        4.123,
        "Wyckoff vol. 1 (1963)",
    ),
    // ZnS (sphalerite) 5.409 Å, GaAs 5.653 Å [W1].
    cubic(
        "ZnS",
        Prototype::ZincBlende,
        &["Zn", "S"],
        5.409,
        "Wyckoff vol. 1 (1963)",
    ),
    cubic(
        "GaAs",
        Prototype::ZincBlende,
        &["Ga", "As"],
        5.653,
        "Wyckoff vol. 1 (1963)",
    ),
    // ZnO a = 3.250, c = 5.207 Å; GaN a = 3.189, c = 5.185 Å [W1]; u ideal (see above).
    with_c_u(
        "ZnO",
        Prototype::Wurtzite,
        &["Zn", "O"],
        3.250,
        Some(5.207),
        Some(0.375),
        "Wyckoff vol. 1 (1963); u ideal",
    ),
    with_c_u(
        "GaN",
        Prototype::Wurtzite,
        &["Ga", "N"],
        3.189,
        Some(5.185),
        Some(0.375),
        "Wyckoff vol. 1 (1963); u ideal",
    ),
    // CaF2 5.463 Å, UO2 5.470 Å [W1].
    cubic(
        "CaF2",
        Prototype::Fluorite,
        &["Ca", "F"],
        5.463,
        "Wyckoff vol. 1 (1963)",
    ),
    cubic(
        "UO2",
        Prototype::Fluorite,
        &["U", "O"],
        5.470,
        "Wyckoff vol. 1 (1963)",
    ),
    // SrTiO3 3.905 Å, KTaO3 3.989 Å [W2].
    cubic(
        "SrTiO3",
        Prototype::Perovskite,
        &["Sr", "Ti", "O"],
        3.905,
        "Wyckoff vol. 2 (1964)",
    ),
    cubic(
        "KTaO3",
        Prototype::Perovskite,
        &["K", "Ta", "O"],
        3.989,
        "Wyckoff vol. 2 (1964)",
    ),
    // TiO2 a = 4.594, c = 2.959 Å, u = 0.305; SnO2 a = 4.737, c = 3.186 Å, u = 0.307 [W1].
    with_c_u(
        "TiO2",
        Prototype::Rutile,
        &["Ti", "O"],
        4.594,
        Some(2.959),
        Some(0.305),
        "Wyckoff vol. 1 (1963)",
    ),
    with_c_u(
        "SnO2",
        Prototype::Rutile,
        &["Sn", "O"],
        4.737,
        Some(3.186),
        Some(0.307),
        "Wyckoff vol. 1 (1963)",
    ),
    // MgAl2O4 a = 8.083 Å, u = 0.387 in origin choice 1, 0.262 in origin choice 2 [W3].
    with_c_u(
        "MgAl2O4",
        Prototype::Spinel,
        &["Mg", "Al", "O"],
        8.083,
        None,
        Some(0.262),
        "Wyckoff vol. 3 (1965)",
    ),
];
