//! What occupies a site, compared the way pymatgen compares it.
//!
//! A [`Site`] holds one element, or several sharing the spot (a mixed site such as
//! Sn0.5In0.5: [`Site::others`]). pymatgen keeps a site's species as a `Composition`, and its
//! `StructureMatcher` (default `SpeciesComparator`) and `get_primitive_structure` decide
//! which sites may pair by comparing those, so the species list order of a mixed site does
//! not matter and occupancies do:
//! - [`same_species`]: `Composition.__eq__` (same elements, amounts within 1e-8), used by
//!   the matcher through [`Kinds`];
//! - [`species_string`]: `Site.species_string` (`"Na"`, or `"In:0.5, Sn:0.5"` with species
//!   sorted by electronegativity), by which the primitive cell search groups sites.
//!
//! Oxidation states are not carried by [`Site`] and so not compared here (the evaluator's
//! composition check compares them; see `cif::pymatgen::PymatgenCif::species`). One
//! deliberate difference: `Composition.__eq__` is not symmetric for a site of occupancy 0
//! (read as 1e-8: `{Na: 1e-8} == {O: 1}` holds, the reverse does not), which can make
//! pymatgen's matcher miss a structure matching itself; [`same_species`] is symmetric.

use crate::element::Element;
use crate::structure::Site;
use serde::{Deserialize, Serialize};

/// pymatgen's `Composition.amount_tolerance`.
pub const AMOUNT_TOLERANCE: f64 = 1e-8;

/// One element on a site and its occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Occupant {
    /// The element.
    pub element: Element,
    /// Its occupancy of the site.
    pub occupancy: f64,
}

/// The site's elements with their amounts, one entry per element (amounts of an element
/// listed twice add up, as in a `Composition`), in the site's order.
fn amounts(site: &Site) -> Vec<(Element, f64)> {
    let mut out: Vec<(Element, f64)> = Vec::with_capacity(1 + site.others.len());
    for o in site.occupants() {
        match out.iter_mut().find(|(e, _)| *e == o.element) {
            Some((_, n)) => *n += o.occupancy,
            None => out.push((o.element, o.occupancy)),
        }
    }
    // A `Composition` leaves out amounts within the tolerance of zero.
    out.retain(|(_, n)| n.abs() >= AMOUNT_TOLERANCE);
    out
}

/// Whether two sites hold the same species (pymatgen's `Composition.__eq__` on their
/// species): the same elements, each amount within [`AMOUNT_TOLERANCE`].
pub fn same_species(a: &Site, b: &Site) -> bool {
    if a.others.is_empty() && b.others.is_empty() {
        return a.element == b.element
            && (a.occupancy - b.occupancy).abs() <= AMOUNT_TOLERANCE
            && a.occupancy.abs() >= AMOUNT_TOLERANCE;
    }
    let (x, y) = (amounts(a), amounts(b));
    x.len() == y.len()
        && x.iter().all(|(e, n)| {
            y.iter()
                .find(|(f, _)| f == e)
                .is_some_and(|(_, m)| (n - m).abs() <= AMOUNT_TOLERANCE)
        })
}

/// pymatgen's `Site.species_string`: the symbol of an ordered site (one element, occupancy
/// exactly 1), else `"El:amount"` for each element sorted as pymatgen sorts elements
/// (electronegativity, then symbol), amounts formatted as Python's `f"{x:.3}"`, joined by
/// `", "`.
pub fn species_string(site: &Site) -> String {
    if site.others.is_empty() && site.occupancy == 1.0 {
        return site.element.symbol().to_string();
    }
    sorted_species(site)
        .iter()
        .map(|(e, n)| format!("{}:{}", e.symbol(), py_format_3(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The site's elements with their amounts in pymatgen's sorted order (`sorted(site.species)`:
/// electronegativity, then symbol), one entry per element.
pub fn sorted_species(site: &Site) -> Vec<(Element, f64)> {
    let mut parts = amounts(site);
    parts.sort_by(|(a, _), (b, _)| element_order(*a, *b));
    parts
}

/// pymatgen's `Element.__lt__` order: Pauling electronegativity (none counts as infinite),
/// then symbol.
fn element_order(a: Element, b: Element) -> std::cmp::Ordering {
    let x = |e: Element| e.electronegativity().unwrap_or(f64::INFINITY);
    x(a).total_cmp(&x(b))
        .then_with(|| a.symbol().cmp(b.symbol()))
}

/// Python's `format(x, ".3")`: three significant digits, scientific notation when the
/// decimal exponent is below −4 or at least 2, trailing zeros dropped but at least one digit
/// after the point in fixed notation (`0.5`, `1.0`, `0.123`, `1e+02`, `1.5e-08`).
///
/// Written here because no crate formats floats the way Python's format mini-language does.
pub fn py_format_3(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Correctly rounded to three significant digits: "d.dde±x".
    let sci = format!("{x:.2e}");
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return sci;
    };
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let sign = if negative { "-" } else { "" };
    if !(-4..2).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    // Fixed notation: the point after digit `exp + 1` (leading zeros for negative `exp`).
    let (int, frac) = if exp >= 0 {
        let k = (exp + 1) as usize;
        let padded = format!("{digits:0<k$}");
        let (i, f) = padded.split_at(k);
        (i.to_string(), f.to_string())
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        ("0".to_string(), format!("{zeros}{digits}"))
    };
    let frac = if frac.is_empty() {
        "0".to_string()
    } else {
        frac
    };
    format!("{sign}{int}.{frac}")
}

/// Species classes of the sites of two structures, for the matcher: sites of one class hold
/// the same species ([`same_species`]), numbered in order of first appearance over both
/// structures, so a class number means the same in both.
#[derive(Debug, Clone, Default)]
pub struct Kinds {
    /// One site of each class.
    representatives: Vec<Site>,
}

/// A species class (see [`Kinds`]).
pub type Kind = u32;

impl Kinds {
    /// The classes of every site of `a` and `b`.
    pub fn of<'a>(sites: impl IntoIterator<Item = &'a Site>) -> Self {
        let mut k = Self::default();
        for s in sites {
            if k.find(s).is_none() {
                k.representatives.push(Site {
                    label: String::new(),
                    ..s.clone()
                });
            }
        }
        k
    }

    fn find(&self, s: &Site) -> Option<Kind> {
        self.representatives
            .iter()
            .position(|r| same_species(r, s))
            .map(|i| i as Kind)
    }

    /// The class of `site`. A site of neither structure the table was built from (which the
    /// matcher never asks for) gets a class of its own, `u32::MAX`.
    pub fn kind(&self, site: &Site) -> Kind {
        self.find(site).unwrap_or(Kind::MAX)
    }

    /// The classes of `sites`, in order.
    pub fn kinds(&self, sites: &[Site]) -> Vec<Kind> {
        sites.iter().map(|s| self.kind(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn el(s: &str) -> Element {
        Element::from_symbol(s).unwrap()
    }

    fn site(parts: &[(&str, f64)]) -> Site {
        let mut s = Site::new(el(parts[0].0), [0.0; 3], "X", parts[0].1);
        s.others = parts[1..]
            .iter()
            .map(|(e, n)| Occupant {
                element: el(e),
                occupancy: *n,
            })
            .collect();
        s
    }

    #[test]
    fn the_order_of_a_mixed_sites_species_does_not_matter_but_amounts_do() {
        let a = site(&[("Sn", 0.5), ("In", 0.5)]);
        let b = site(&[("In", 0.5), ("Sn", 0.5)]);
        assert!(same_species(&a, &b));
        assert!(!same_species(&a, &site(&[("Sn", 0.6), ("In", 0.4)])));
        assert!(!same_species(&a, &site(&[("Sn", 1.0)])));
        assert!(!same_species(&site(&[("Na", 1.0)]), &site(&[("Na", 0.5)])));
        assert!(same_species(
            &site(&[("Na", 0.5)]),
            &site(&[("Na", 0.5 + 1e-9)])
        ));
        // An element listed twice adds up, as in a Composition.
        assert!(same_species(
            &site(&[("Fe", 0.25), ("Fe", 0.25), ("O", 0.5)]),
            &site(&[("O", 0.5), ("Fe", 0.5)])
        ));
    }

    #[test]
    fn species_strings_are_pymatgens() {
        assert_eq!(species_string(&site(&[("Na", 1.0)])), "Na");
        assert_eq!(species_string(&site(&[("Na", 2.0)])), "Na:2.0");
        // In (1.78) sorts before Sn (1.96) by electronegativity.
        assert_eq!(
            species_string(&site(&[("Sn", 0.5), ("In", 0.5)])),
            "In:0.5, Sn:0.5"
        );
        assert_eq!(
            species_string(&site(&[("O", 1.0 / 3.0), ("Ca", 2.0 / 3.0)])),
            "Ca:0.667, O:0.333"
        );
    }

    #[test]
    fn three_significant_digits_as_python_prints_them() {
        // Each pair printed by Python 3.11: f"{x:.3}".
        for (x, want) in [
            (0.5, "0.5"),
            (1.0, "1.0"),
            (2.0, "2.0"),
            (0.25, "0.25"),
            (0.125, "0.125"),
            (0.1234, "0.123"),
            (0.3333333, "0.333"),
            (10.0, "10.0"),
            (99.95, "1e+02"),
            (100.0, "1e+02"),
            (0.00012345, "0.000123"),
            (1e-5, "1e-05"),
            (0.9995, "1.0"),
            (0.99949, "0.999"),
            (1.5e-8, "1.5e-08"),
            (0.0, "0.0"),
            (-0.5, "-0.5"),
            (1234.0, "1.23e+03"),
        ] {
            assert_eq!(py_format_3(x), want, "{x}");
        }
    }

    #[test]
    fn kinds_number_classes_across_both_structures() {
        let a = [site(&[("Sn", 0.5), ("In", 0.5)]), site(&[("O", 1.0)])];
        let b = [site(&[("O", 1.0)]), site(&[("In", 0.5), ("Sn", 0.5)])];
        let k = Kinds::of(a.iter().chain(&b));
        assert_eq!(k.kinds(&a), [0, 1]);
        assert_eq!(k.kinds(&b), [1, 0]);
    }
}
