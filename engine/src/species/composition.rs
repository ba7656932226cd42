//! Compositions as pymatgen's `Composition` compares, adds and orders them.
//!
//! The matcher compares site species with [`Composition::equals`] (see the parent module).
//! pymatgen's CIF reader sorts the parsed sites by composition and groups equal ones, so the order of the
//! parsed structure depends on its composition order: amounts compared with a tolerance of
//! 1e-8, element by element in order of electronegativity, the site with less of the first
//! differing element first.

use crate::element::Element;

/// Amounts this small vanish from a composition (`Composition.amount_tolerance`).
pub const AMOUNT_TOLERANCE: f64 = 1e-8;

/// A species key: an element, optionally with an oxidation state (pymatgen's `Species`).
/// An element, optionally with an oxidation state (pymatgen's `Element` or `Species`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Species {
    /// The element.
    pub element: Element,
    /// Oxidation state (a CIF's `_atom_type_oxidation_number`, a Structure JSON's
    /// `oxidation_state`); `None` for a plain element.
    pub oxidation: Option<f64>,
}

/// Pauling electronegativity with "none" sorting last, as pymatgen sorts.
pub fn sort_electronegativity(e: Element) -> f64 {
    e.electronegativity().unwrap_or(f64::INFINITY)
}

/// pymatgen's species order: electronegativity, then symbol, then oxidation state.
pub fn species_lt(a: &Species, b: &Species) -> bool {
    let (xa, xb) = (
        sort_electronegativity(a.element),
        sort_electronegativity(b.element),
    );
    if xa != xb {
        return xa < xb;
    }
    if a.element != b.element {
        return a.element.symbol() < b.element.symbol();
    }
    match (a.oxidation, b.oxidation) {
        (Some(oa), ob) if oa != 0.0 => oa < ob.unwrap_or(0.0),
        _ => false,
    }
}

/// The species and amounts of a composition; one is kept inline (every site of an ordered
/// structure), more go to the heap.
pub type SpeciesAmounts = smallvec::SmallVec<[(Species, f64); 1]>;

/// A composition: species and amounts in insertion order, no amount below the tolerance.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Composition(pub SpeciesAmounts);

impl Composition {
    /// `Composition({sp: amount, ...})`: amounts below the tolerance are dropped.
    pub fn new(items: impl IntoIterator<Item = (Species, f64)>) -> Self {
        let items = items.into_iter();
        let mut out = SpeciesAmounts::with_capacity(items.size_hint().0);
        for (sp, amt) in items {
            match out.iter_mut().find(|(s, _)| *s == sp) {
                Some((_, a)) => *a = amt,
                None => out.push((sp, amt)),
            }
        }
        out.retain(|(_, a)| a.abs() >= AMOUNT_TOLERANCE);
        Composition(out)
    }

    /// `comp[sp]`: exact species, or all species of the element when `sp` has no oxidation
    /// state.
    pub fn amount(&self, sp: &Species) -> f64 {
        self.0
            .iter()
            .filter(|(s, _)| match sp.oxidation {
                Some(_) => s == sp,
                None => s.element == sp.element,
            })
            .map(|(_, a)| a)
            .sum()
    }

    /// `self + other`.
    pub fn add(&self, other: &Composition) -> Composition {
        let mut map = self.0.clone();
        for (sp, amt) in &other.0 {
            match map.iter_mut().find(|(s, _)| s == sp) {
                Some((_, a)) => *a += amt,
                None => map.push((*sp, *amt)),
            }
        }
        Composition::new(map)
    }

    /// Composition equality (same length, amounts within the tolerance).
    pub fn equals(&self, other: &Composition) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .all(|(sp, a)| (a - other.amount(sp)).abs() <= AMOUNT_TOLERANCE)
    }

    /// `self >= other` in pymatgen's sort order.
    fn ge(&self, other: &Composition) -> bool {
        // Two sites of one and the same species (most comparisons): the loop below over
        // that single key, without collecting and sorting the species.
        if let ([(a, x)], [(b, y)]) = (&self.0[..], &other.0[..]) {
            if a == b {
                return ge_by_amounts([(*x, *y)]);
            }
            // Two keys: the merge sort below puts the second first only when it is less.
            let keys = if species_lt(b, a) { [b, a] } else { [a, b] };
            return ge_by_amounts(keys.map(|sp| (self.amount(sp), other.amount(sp))));
        }
        self.ge_by_sorted_keys(other)
    }

    /// [`Composition::ge`] the general way: every species of both, sorted, compared in turn.
    fn ge_by_sorted_keys(&self, other: &Composition) -> bool {
        let mut keys: Vec<Species> = Vec::new();
        for (sp, _) in self.0.iter().chain(other.0.iter()) {
            if !keys.contains(sp) {
                keys.push(*sp);
            }
        }
        let keys = stable_sort_by_lt(keys, &species_lt);
        ge_by_amounts(keys.iter().map(|sp| (self.amount(sp), other.amount(sp))))
    }

    /// `self < other` (`not self >= other`, as `functools.total_ordering` derives it).
    pub fn lt(&self, other: &Composition) -> bool {
        !self.ge(other)
    }
}

/// `self >= other` from both amounts of each species key in sort order: the first key whose
/// amounts differ by the tolerance decides.
fn ge_by_amounts(amounts: impl IntoIterator<Item = (f64, f64)>) -> bool {
    for (a, b) in amounts {
        if b - a >= AMOUNT_TOLERANCE {
            return false;
        }
        if a - b >= AMOUNT_TOLERANCE {
            return true;
        }
    }
    true
}

/// The indices `0..n` ordered by [`Composition::lt`] on `comp(i)` exactly as
/// [`stable_sort_by_lt`] orders them (pymatgen sorts a CIF's atom-site rows this way).
pub fn order_by_composition<'c>(n: usize, comp: impl Fn(usize) -> &'c Composition) -> Vec<usize> {
    if let Some(order) = order_by_single_element(n, &comp) {
        return order;
    }
    stable_sort_by_lt((0..n).collect(), &|&a: &usize, &b: &usize| {
        comp(a).lt(comp(b))
    })
}

/// [`order_by_composition`] for the usual rows: when every composition is one element
/// without an oxidation state, all with the same amount of at least the tolerance (a
/// negative one turns the order round), `a < b` holds exactly when `b`'s element sorts
/// before `a`'s in species order (see [`Composition::ge`]). That is a strict weak order, so
/// every stable sort gives the merge sort's result, and the element order is compared once
/// per pair instead of through amounts. `None` for any other rows.
fn order_by_single_element<'c>(
    n: usize,
    comp: &impl Fn(usize) -> &'c Composition,
) -> Option<Vec<usize>> {
    let mut elements = Vec::with_capacity(n);
    let mut amount = None;
    for i in 0..n {
        let [(sp, x)] = comp(i).0[..] else {
            return None;
        };
        let same_amount = *amount.get_or_insert(x.to_bits()) == x.to_bits();
        let counted = x >= AMOUNT_TOLERANCE;
        if sp.oxidation.is_some() || !same_amount || !counted {
            return None;
        }
        elements.push(sp);
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&elements[b], &elements[a]);
        if species_lt(x, y) {
            std::cmp::Ordering::Less
        } else if species_lt(y, x) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    Some(order)
}

/// Stable merge sort with a `less than` predicate (Python's `sorted` result for any
/// consistent order; never panics, whatever the predicate does).
pub fn stable_sort_by_lt<T: Clone>(mut items: Vec<T>, lt: &impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut scratch = Vec::with_capacity(items.len());
    merge_sort(&mut items, &mut scratch, lt);
    items
}

/// Top-down merge sort of `v` (first half `len / 2`), each merge taking the right element
/// only when it is less than the left one; `scratch` is a buffer. Written for a predicate
/// that need not be a strict weak order (pymatgen's species order is not): the result is
/// then this algorithm's, so it is kept exactly.
fn merge_sort<T: Clone>(v: &mut [T], scratch: &mut Vec<T>, lt: &impl Fn(&T, &T) -> bool) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], scratch, lt);
    merge_sort(&mut v[mid..], scratch, lt);
    scratch.clear();
    scratch.extend_from_slice(v);
    let (left, right) = scratch.split_at(mid);
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        let take_right = j < right.len() && (i == left.len() || lt(&right[j], &left[i]));
        if take_right {
            *slot = right[j].clone();
            j += 1;
        } else {
            *slot = left[i].clone();
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(s: &str) -> Species {
        Species {
            element: Element::from_symbol(s).unwrap(),
            oxidation: None,
        }
    }

    #[test]
    fn anion_sites_sort_before_cation_sites() {
        let na = Composition::new([(el("Na"), 1.0)]);
        let cl = Composition::new([(el("Cl"), 1.0)]);
        assert!(cl.lt(&na));
        assert!(!na.lt(&cl));
        let sorted = stable_sort_by_lt(vec![na.clone(), cl.clone(), na.clone()], &|a, b| a.lt(b));
        assert_eq!(sorted, vec![cl, na.clone(), na]);
    }

    #[test]
    fn single_species_shortcuts_agree_with_the_general_order() {
        let ox = |s: &str, o: Option<f64>| Species {
            element: Element::from_symbol(s).unwrap(),
            oxidation: o,
        };
        let species = [
            ox("Fe", None),
            ox("Fe", Some(2.0)),
            ox("Fe", Some(3.0)),
            ox("O", None),
            ox("O", Some(-2.0)),
            ox("Na", None),
            ox("Cl", Some(0.0)),
            ox("Xe", None),
        ];
        for a in species {
            for b in species {
                for (x, y) in [(1.0, 1.0), (0.5, 1.0), (1.0, 0.5), (1.0, 1.0 + 1e-9)] {
                    let (p, q) = (Composition::new([(a, x)]), Composition::new([(b, y)]));
                    assert_eq!(p.ge(&q), p.ge_by_sorted_keys(&q), "{a:?} {x} vs {b:?} {y}");
                }
            }
        }
    }

    /// Rows of one element each with one amount (the shortcut), and rows it must leave to
    /// the merge sort (mixed amounts, oxidation states, two species), both orderings agree.
    #[test]
    fn the_single_element_order_is_the_merge_sort_order() {
        let symbols = ["Na", "Cl", "O", "Fe", "Xe", "H", "Ar", "Kr", "C", "Si"];
        let mut seed = 7u64;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for case in 0..400 {
            let n = next(30);
            let comps: Vec<Composition> = (0..n)
                .map(|_| {
                    let sp = el(symbols[next(symbols.len())]);
                    let amount = match case % 5 {
                        0 | 1 => 1.0,
                        2 => [1.0, 0.5, 1.0 + 1e-9][next(3)],
                        3 => 0.25,
                        // One amount for every row, but negative: the order turns round.
                        _ => -0.25,
                    };
                    let sp = match (case % 6, next(4)) {
                        (5, 0) => Species {
                            oxidation: Some(2.0),
                            ..sp
                        },
                        _ => sp,
                    };
                    match (case % 7, next(5)) {
                        (6, 0) => Composition::new([(sp, amount), (el("H"), 1.0)]),
                        _ => Composition::new([(sp, amount)]),
                    }
                })
                .collect();
            let merge = stable_sort_by_lt((0..n).collect(), &|&a: &usize, &b: &usize| {
                comps[a].lt(&comps[b])
            });
            assert_eq!(order_by_composition(n, |i| &comps[i]), merge, "case {case}");
        }
        let ones: Vec<Composition> = ["Na", "Cl", "Na"]
            .map(|s| Composition::new([(el(s), 1.0)]))
            .into();
        assert_eq!(
            order_by_single_element(3, &|i| &ones[i]),
            Some(vec![1, 0, 2])
        );
        let mixed = [ones[0].clone(), Composition::new([(el("Cl"), 0.5)])];
        assert_eq!(order_by_single_element(2, &|i| &mixed[i]), None);
    }

    #[test]
    fn addition_and_tolerance() {
        let a = Composition::new([(el("Fe"), 0.5)]);
        let b = a.add(&Composition::new([(el("Fe"), 0.5), (el("O"), 1e-9)]));
        assert_eq!(b.0.as_slice(), [(el("Fe"), 1.0)]);
        assert!(b.equals(&Composition::new([(el("Fe"), 1.0 + 1e-9)])));
    }
}
