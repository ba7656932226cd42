//! Chemical formulas as pymatgen's `Composition` writes them (`formula`, `reduced_formula`
//! and the formula-unit factor), for CIF output that matches pymatgen's byte for byte.
//!
//! Elements are ordered by Pauling electronegativity (elements without one last), then by
//! symbol. Reduced formulas keep a trailing polyanion in brackets (`Ca3(PO4)2`) and a few
//! molecules whole (`O2`, `Li2O2`), as pymatgen does.

use crate::element::Element;
use crate::python::py_repr;

/// Amounts below this vanish (`Composition.amount_tolerance`).
const TOLERANCE: f64 = 1e-8;

/// Reduced formulas pymatgen does not reduce completely, and what it writes instead.
const SPECIAL_FORMULAS: [(&str, &str); 11] = [
    ("LiO", "Li2O2"),
    ("NaO", "Na2O2"),
    ("KO", "K2O2"),
    ("HO", "H2O2"),
    ("CsO", "Cs2O2"),
    ("RbO", "Rb2O2"),
    ("O", "O2"),
    ("N", "N2"),
    ("F", "F2"),
    ("Cl", "Cl2"),
    ("H", "H2"),
];

/// Element amounts summed in first-appearance order, amounts below 1e-8 dropped.
pub fn element_amounts(items: impl IntoIterator<Item = (Element, f64)>) -> Vec<(Element, f64)> {
    let mut out: Vec<(Element, f64)> = Vec::new();
    for (e, a) in items {
        match out.iter_mut().find(|(x, _)| *x == e) {
            Some((_, t)) => *t += a,
            None => out.push((e, a)),
        }
    }
    out.retain(|(_, a)| a.abs() >= TOLERANCE);
    out
}

fn electronegativity_key(e: Element) -> f64 {
    e.electronegativity().unwrap_or(f64::INFINITY)
}

/// Sort by (electronegativity, symbol), pymatgen's formula order.
fn sorted(amounts: &[(Element, f64)]) -> Vec<(Element, f64)> {
    let mut v = amounts.to_vec();
    v.sort_by(|a, b| {
        electronegativity_key(a.0)
            .total_cmp(&electronegativity_key(b.0))
            .then_with(|| a.0.symbol().cmp(b.0.symbol()))
    });
    v
}

/// `math.isclose(a, b, rel_tol, abs_tol)`.
fn isclose(a: f64, b: f64, rel_tol: f64, abs_tol: f64) -> bool {
    if a == b {
        return true;
    }
    if a.is_infinite() || b.is_infinite() {
        return false;
    }
    let diff = (b - a).abs();
    diff <= (rel_tol * b).abs() || diff <= (rel_tol * a).abs() || diff <= abs_tol
}

/// Python's `round(x)` to an integer (ties to even), as text.
fn round_int_text(x: f64) -> String {
    format!("{:.0}", x.round_ties_even())
}

/// pymatgen's `formula_double_format`: "" for 1 (when `ignore_ones`), integers without a
/// decimal point, anything else rounded to 8 decimals and written as Python writes floats.
pub fn amount_text(x: f64, ignore_ones: bool) -> String {
    if ignore_ones && isclose(x, 1.0, 1e-9, TOLERANCE) {
        return String::new();
    }
    if isclose(x, x.round_ties_even(), 0.0, TOLERANCE) {
        return round_int_text(x);
    }
    let rounded: f64 = format!("{x:.8}").parse().unwrap_or(x);
    py_repr(rounded)
}

/// `Composition.formula`: `Na4 Cl4`.
pub fn formula(amounts: &[(Element, f64)]) -> String {
    sorted(amounts)
        .iter()
        .map(|(e, a)| format!("{}{}", e.symbol(), amount_text(*a, false)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// pymatgen's `reduce_formula`: reduced formula and integer factor.
fn reduce_formula(amounts: &[(Element, f64)]) -> (String, f64) {
    let syms: Vec<(Element, f64)> = sorted(amounts)
        .into_iter()
        .filter(|(_, a)| a.abs() > TOLERANCE)
        .collect();
    let mut factor = 1.0;
    if amounts.iter().all(|(_, a)| a.trunc() == *a) {
        let g = amounts.iter().fold(0u64, |g, (_, a)| {
            gcd(g, a.abs().min(u64::MAX as f64) as u64)
        });
        factor = g as f64;
    }
    let mut poly = String::new();
    let n = syms.len();
    if n >= 3 {
        let (last, second) = (syms[n - 1].0, syms[n - 2].0);
        let diff = last.electronegativity().unwrap_or(f64::NAN)
            - second.electronegativity().unwrap_or(f64::NAN);
        if diff < 1.65 {
            let part = [
                (syms[n - 2].0, syms[n - 2].1 / factor),
                (syms[n - 1].0, syms[n - 1].1 / factor),
            ];
            let (pf, pfac) = reduce_formula(&part);
            if pfac != 1.0 {
                poly = format!("({pf}){}", round_int_text(pfac));
            }
        }
    }
    let keep = if poly.is_empty() { n } else { n - 2 };
    let mut out = String::new();
    for (e, a) in &syms[..keep] {
        out.push_str(e.symbol());
        out.push_str(&amount_text(a * 1.0 / factor, true));
    }
    out.push_str(&poly);
    (out, factor)
}

/// `Composition.get_reduced_formula_and_factor`: `("NaCl", 4.0)` for Na4Cl4.
pub fn reduced_formula_and_factor(amounts: &[(Element, f64)]) -> (String, f64) {
    let all_int = amounts
        .iter()
        .all(|(_, a)| (a - a.round_ties_even()).abs() < TOLERANCE);
    if !all_int {
        return (formula(amounts).replace(' ', ""), 1.0);
    }
    let ints: Vec<(Element, f64)> = amounts
        .iter()
        .map(|(e, a)| (*e, a.round_ties_even()))
        .collect();
    let (f, factor) = reduce_formula(&ints);
    match SPECIAL_FORMULAS.iter().find(|(k, _)| *k == f) {
        Some((_, v)) => (v.to_string(), factor / 2.0),
        None => (f, factor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amounts(items: &[(&str, f64)]) -> Vec<(Element, f64)> {
        items
            .iter()
            .map(|(s, a)| (Element::from_symbol(s).unwrap(), *a))
            .collect()
    }

    #[test]
    fn formulas_like_pymatgen() {
        let a = amounts(&[("Cl", 4.0), ("Na", 4.0)]);
        assert_eq!(formula(&a), "Na4 Cl4");
        assert_eq!(reduced_formula_and_factor(&a), ("NaCl".into(), 4.0));
        let a = amounts(&[("O", 16.0), ("P", 4.0), ("Fe", 4.0), ("Li", 4.0)]);
        assert_eq!(formula(&a), "Li4 Fe4 P4 O16");
        assert_eq!(reduced_formula_and_factor(&a).0, "LiFePO4");
        let a = amounts(&[("Ca", 6.0), ("P", 4.0), ("O", 16.0)]);
        assert_eq!(reduced_formula_and_factor(&a), ("Ca3(PO4)2".into(), 2.0));
        let a = amounts(&[("O", 4.0)]);
        assert_eq!(reduced_formula_and_factor(&a), ("O2".into(), 2.0));
        let a = amounts(&[("Fe", 0.5), ("O", 1.0)]);
        assert_eq!(formula(&a), "Fe0.5 O1");
        assert_eq!(reduced_formula_and_factor(&a), ("Fe0.5O1".into(), 1.0));
    }
}
