//! What occupies a site, compared the way pymatgen compares it.
//!
//! A [`Site`] holds one element, or several sharing the spot (a mixed site such as
//! Sn0.5In0.5: [`Site::others`]), each optionally with an oxidation state (pymatgen's
//! `Species`, e.g. Fe2+). pymatgen keeps a site's species as a `Composition`, and its
//! `StructureMatcher` (default `SpeciesComparator`) and `get_primitive_structure` decide
//! which sites may pair by comparing those, so the species list order of a mixed site does
//! not matter and occupancies and oxidation states do:
//! - [`same_species`]: the same species (element and oxidation state) with the same amounts
//!   within 1e-8; the matcher's site classes ([`Kinds`]);
//! - [`pairs_with`]: `Composition.__eq__` of struct1's site against struct2's, which is not
//!   symmetric once oxidation states appear: a plain `Fe` site of struct1 equals an `Fe2+`
//!   site of struct2 (`Composition[Fe]` sums every Fe species), the reverse does not hold;
//!   the matcher's mask between the classes ([`Relation`]);
//! - [`species_string`]: `Site.species_string` (`"Na"`, `"Fe2+"`, or `"In:0.5, Sn:0.5"`
//!   with species sorted by electronegativity), by which the primitive cell search groups
//!   sites.
//!
//! One deliberate difference: `Composition.__eq__` is not symmetric for a site of
//! occupancy 0 either (read as 1e-8: `{Na: 1e-8} == {O: 1}` holds, the reverse does not),
//! which can make pymatgen's matcher miss a structure matching itself; for sites without
//! oxidation states [`pairs_with`] is [`same_species`], which is symmetric. Not reproduced
//! either: pymatgen's mask groups runs of consecutive sites whose species compare equal
//! (`itertools.groupby`), so in a structure holding both a plain Fe site and, right after
//! it, an Fe2+ site, the second is compared as plain Fe; here every site is compared as
//! itself (the differential cases give every site of a structure the same kind).

pub mod composition;

use crate::element::Element;
use crate::structure::Site;
use composition::{species_lt, stable_sort_by_lt, Composition, Species};

pub use crate::structure::Occupant;
pub use composition::AMOUNT_TOLERANCE;

/// The species of `o`: element and oxidation state.
fn species_of(o: &Occupant) -> Species {
    Species {
        element: o.element,
        oxidation: o.oxidation,
    }
}

/// Whether any species of the site carries an oxidation state.
pub fn has_oxidation(site: &Site) -> bool {
    site.occupants().any(|o| o.oxidation.is_some())
}

/// The species of `occupants` with their summed amounts, one entry per species in order of
/// first appearance (amounts within the tolerance of zero kept).
pub fn species_amounts(occupants: impl IntoIterator<Item = Occupant>) -> Vec<(Species, f64)> {
    let mut out: Vec<(Species, f64)> = Vec::new();
    for o in occupants {
        let sp = species_of(&o);
        match out.iter_mut().find(|(s, _)| *s == sp) {
            Some((_, n)) => *n += o.occupancy,
            None => out.push((sp, o.occupancy)),
        }
    }
    out
}

/// The site's species with their amounts, one entry per species (amounts of a species listed
/// twice add up, as in a `Composition`), in the site's order.
fn amounts(site: &Site) -> Vec<(Species, f64)> {
    let mut out = species_amounts(site.occupants());
    // A `Composition` leaves out amounts within the tolerance of zero.
    out.retain(|(_, n)| n.abs() >= AMOUNT_TOLERANCE);
    out
}

/// Whether two sites hold the same species (element and oxidation state), each amount
/// within [`AMOUNT_TOLERANCE`]. Symmetric.
pub fn same_species(a: &Site, b: &Site) -> bool {
    if a.others.is_empty() && b.others.is_empty() {
        return a.element == b.element
            && a.oxidation == b.oxidation
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

/// Whether struct1's site `s1` may pair with struct2's site `s2` (pymatgen's
/// `SpeciesComparator.are_equal(s1.species, s2.species)`, i.e. `Composition.__eq__`): a
/// species of `s1` with an oxidation state needs exactly that species in `s2`, a plain
/// element of `s1` takes all of that element's species in `s2` together. Not symmetric when
/// oxidation states appear; [`same_species`] for sites without any.
pub fn pairs_with(s1: &Site, s2: &Site) -> bool {
    if !has_oxidation(s1) && !has_oxidation(s2) {
        return same_species(s1, s2);
    }
    composition_of(s1).equals(&composition_of(s2))
}

/// The site's species as a `Composition`.
fn composition_of(site: &Site) -> Composition {
    Composition::new(amounts(site))
}

/// The site's elements with their amounts in pymatgen's sorted order (`sorted(site.species)`:
/// electronegativity, then symbol), one entry per element: oxidation states are dropped and
/// the amounts of an element's species add up (what the CIF writer writes).
pub fn sorted_species(site: &Site) -> Vec<(Element, f64)> {
    let mut parts: Vec<(Element, f64)> = Vec::with_capacity(1 + site.others.len());
    for (sp, n) in amounts(site) {
        match parts.iter_mut().find(|(e, _)| *e == sp.element) {
            Some((_, m)) => *m += n,
            None => parts.push((sp.element, n)),
        }
    }
    parts.sort_by(|(a, _), (b, _)| element_order(*a, *b));
    parts
}

/// pymatgen's `Site.species_string`: the species of an ordered site (one species, occupancy
/// exactly 1: `"Na"`, `"Fe2+"`), else `"Sp:amount"` for each species sorted as pymatgen sorts
/// them (electronegativity, then symbol, then oxidation state), amounts formatted as Python's
/// `f"{x:.3}"`, joined by `", "`.
pub fn species_string(site: &Site) -> String {
    if site.others.is_empty() && site.occupancy == 1.0 {
        return species_name(&Species {
            element: site.element,
            oxidation: site.oxidation,
        });
    }
    let parts = stable_sort_by_lt(amounts(site), &|a, b| species_lt(&a.0, &b.0));
    parts
        .iter()
        .map(|(sp, n)| format!("{}:{}", species_name(sp), py_format_3(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// pymatgen's `str(Species)`: the symbol, then for an oxidation state its magnitude
/// (omitted when 1, an integer when within 1e-8 of one, else two decimals) and its sign
/// (`Fe2+`, `Na+`, `O2-`, `Fe0+`, `Fe2.50+`).
pub fn species_name(sp: &Species) -> String {
    let symbol = sp.element.symbol();
    let Some(ox) = sp.oxidation else {
        return symbol.to_string();
    };
    let magnitude = ox.abs();
    let digits = if (magnitude - 1.0).abs() <= 1e-8 {
        String::new()
    } else if (magnitude - magnitude.round()).abs() <= 1e-8 {
        format!("{}", magnitude.round())
    } else {
        format!("{magnitude:.2}")
    };
    let sign = if ox >= 0.0 { '+' } else { '-' };
    format!("{symbol}{digits}{sign}")
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
                    label: compact_str::CompactString::default(),
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

    /// Which classes pair with which ([`pairs_with`] between their sites), when that is more
    /// than "the same class": only when some site carries an oxidation state.
    pub fn relation(&self) -> Option<Relation> {
        if !self.representatives.iter().any(has_oxidation) {
            return None;
        }
        let n = self.representatives.len();
        let mut allowed = Vec::with_capacity(n * n);
        for a in &self.representatives {
            for b in &self.representatives {
                allowed.push(pairs_with(a, b));
            }
        }
        Some(Relation { n, allowed })
    }
}

/// Which classes of struct1's sites may pair with which classes of struct2's (see
/// [`Kinds::relation`]); without one, a class pairs with itself only.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    n: usize,
    /// Row-major: `allowed[k1 * n + k2]`.
    allowed: Vec<bool>,
}

impl Relation {
    /// Whether a struct1 site of class `k1` may pair with a struct2 site of class `k2`.
    pub fn allows(&self, k1: Kind, k2: Kind) -> bool {
        let (i, j) = (k1 as usize, k2 as usize);
        i < self.n && j < self.n && self.allowed[i * self.n + j]
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
                oxidation: None,
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

    /// A site of species given as (symbol, oxidation state, amount).
    fn ionic(parts: &[(&str, Option<f64>, f64)]) -> Site {
        let mut s = Site::new(el(parts[0].0), [0.0; 3], "X", parts[0].2);
        s.oxidation = parts[0].1;
        s.others = parts[1..]
            .iter()
            .map(|(e, o, n)| Occupant {
                element: el(e),
                occupancy: *n,
                oxidation: *o,
            })
            .collect();
        s
    }

    #[test]
    fn oxidation_states_are_compared_as_pymatgens_composition_compares_them() {
        let fe2 = ionic(&[("Fe", Some(2.0), 1.0)]);
        let fe3 = ionic(&[("Fe", Some(3.0), 1.0)]);
        let fe = ionic(&[("Fe", None, 1.0)]);
        assert!(same_species(&fe2, &fe2.clone()));
        assert!(!same_species(&fe2, &fe3));
        assert!(!same_species(&fe2, &fe) && !same_species(&fe, &fe2));
        assert!(pairs_with(&fe2, &fe2) && !pairs_with(&fe2, &fe3));
        // Composition({Fe: 1}) == Composition({Fe2+: 1}), not the reverse.
        assert!(pairs_with(&fe, &fe2));
        assert!(!pairs_with(&fe2, &fe));
        // A plain Fe sums every Fe species, but the number of species must agree.
        let both = ionic(&[("Fe", Some(2.0), 0.5), ("Fe", Some(3.0), 0.5)]);
        assert!(!pairs_with(&fe, &both));
        let half = ionic(&[("Fe", None, 0.5), ("O", None, 0.5)]);
        let half_ionic = ionic(&[("O", Some(-2.0), 0.5), ("Fe", Some(2.0), 0.5)]);
        assert!(pairs_with(&half, &half_ionic) && !pairs_with(&half_ionic, &half));
        // Without oxidation states, pairs_with is same_species.
        assert!(pairs_with(
            &site(&[("Sn", 0.5), ("In", 0.5)]),
            &site(&[("In", 0.5), ("Sn", 0.5)])
        ));
    }

    #[test]
    fn species_names_are_pymatgens() {
        let name = |o: Option<f64>| {
            species_name(&Species {
                element: el("Fe"),
                oxidation: o,
            })
        };
        // Each printed by pymatgen 2026.10.24: str(Species("Fe", o)).
        for (o, want) in [
            (None, "Fe"),
            (Some(2.0), "Fe2+"),
            (Some(1.0), "Fe+"),
            (Some(-1.0), "Fe-"),
            (Some(-2.0), "Fe2-"),
            (Some(0.0), "Fe0+"),
            (Some(2.5), "Fe2.50+"),
            (Some(2.0 + 1e-9), "Fe2+"),
        ] {
            assert_eq!(name(o), want, "{o:?}");
        }
        assert_eq!(species_string(&ionic(&[("Fe", Some(3.0), 1.0)])), "Fe3+");
        // Sorted by electronegativity, then symbol, then oxidation state.
        assert_eq!(
            species_string(&ionic(&[("Fe", Some(3.0), 0.5), ("Fe", Some(2.0), 0.5)])),
            "Fe2+:0.5, Fe3+:0.5"
        );
    }

    #[test]
    fn a_relation_only_when_oxidation_states_appear() {
        let plain = [site(&[("Fe", 1.0)]), site(&[("O", 1.0)])];
        assert_eq!(Kinds::of(plain.iter()).relation(), None);
        let fe = ionic(&[("Fe", None, 1.0)]);
        let fe2 = ionic(&[("Fe", Some(2.0), 1.0)]);
        let k = Kinds::of([&fe, &fe2]);
        let r = k.relation().unwrap();
        let (a, b) = (k.kind(&fe), k.kind(&fe2));
        assert!(r.allows(a, a) && r.allows(b, b) && r.allows(a, b) && !r.allows(b, a));
        assert!(!r.allows(a, Kind::MAX));
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
