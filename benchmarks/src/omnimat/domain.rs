//! The four domains OmniMatBench's paper groups its 19 subfields into (its Table 4 reports QA
//! precision, recall and F1 per domain).
//!
//! The paper's abstract names the domains: fundamental materials knowledge, structural and
//! engineering materials, materials processing and manufacturing, functional and applied
//! materials; its tables abbreviate them FMS, SEM, MPM and FAM. Which subfield belongs to
//! which is drawn only in its Figure 1 (a picture: neither the paper's text nor the public
//! repository lists it), so the assignment below is **ours**, made from the subfields' names,
//! and every table built on it says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One of the four domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Domain {
    /// Fundamental materials knowledge.
    Fms,
    /// Structural and engineering materials.
    Sem,
    /// Materials processing and manufacturing.
    Mpm,
    /// Functional and applied materials.
    Fam,
}

impl Domain {
    /// All four, in the paper's order.
    pub const ALL: [Domain; 4] = [Domain::Fms, Domain::Sem, Domain::Mpm, Domain::Fam];

    /// The row label: the paper's abbreviation and the abstract's words.
    pub fn label(self) -> &'static str {
        match self {
            Domain::Fms => "FMS · fundamental materials knowledge",
            Domain::Sem => "SEM · structural and engineering materials",
            Domain::Mpm => "MPM · materials processing and manufacturing",
            Domain::Fam => "FAM · functional and applied materials",
        }
    }

    /// The domain of a released subfield (upstream `type`), `None` for any other name.
    pub fn of(subfield: &str) -> Option<Domain> {
        let d = match subfield.trim() {
            "Materials Science and Engineering"
            | "Soft Matter Science and Engineering"
            | "Materials Physics"
            | "Materials Chemistry"
            | "Materials Design Science and Engineering" => Domain::Fms,
            "Metallic Materials"
            | "Inorganic Non-metallic Materials"
            | "Polymer Materials"
            | "Composite Materials"
            | "Gem Materials and Gemology" => Domain::Sem,
            "Metallurgical Engineering"
            | "Welding Technology and Engineering"
            | "Powder Materials"
            | "Composite Materials Molding" => Domain::Mpm,
            "Functional Materials"
            | "Electronic Information Materials"
            | "New Energy Materials and Devices"
            | "Nanomaterials and Technology"
            | "Intelligent Materials and Structures" => Domain::Fam,
            _ => return None,
        };
        Some(d)
    }
}

/// The row of subfields no domain claims (a renamed or private subfield).
pub const UNASSIGNED: &str = "(subfields outside the 19)";

/// One domain's QA line: the unweighted mean of its subfields' lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DomainQa {
    /// The subfields averaged.
    pub subfields: usize,
    /// Items over those subfields.
    pub items: usize,
    /// Mean of the subfields' precision.
    pub precision: f64,
    /// Mean of the subfields' recall.
    pub recall: f64,
    /// Mean of the subfields' macro-F1.
    pub macro_f1: f64,
}

/// Groups per-subfield lines `(items, precision, recall, macro_f1)` into domains, keyed by
/// [`Domain::label`] (or [`UNASSIGNED`]); domains without subfields are left out.
pub fn group<'a>(
    per_subfield: impl IntoIterator<Item = (&'a str, usize, [f64; 3])>,
) -> BTreeMap<String, DomainQa> {
    let mut out: BTreeMap<String, DomainQa> = BTreeMap::new();
    for (subfield, items, [p, r, f1]) in per_subfield {
        let key = Domain::of(subfield).map_or(UNASSIGNED, Domain::label);
        let d = out.entry(key.to_string()).or_default();
        d.subfields += 1;
        d.items += items;
        d.precision += p;
        d.recall += r;
        d.macro_f1 += f1;
    }
    for d in out.values_mut() {
        let n = d.subfields as f64;
        d.precision /= n;
        d.recall /= n;
        d.macro_f1 /= n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 19 subfield names of the public release (`type` of every file).
    const RELEASED: [&str; 19] = [
        "Materials Science and Engineering",
        "Soft Matter Science and Engineering",
        "Materials Physics",
        "Materials Chemistry",
        "Materials Design Science and Engineering",
        "Metallurgical Engineering",
        "Welding Technology and Engineering",
        "Intelligent Materials and Structures",
        "New Energy Materials and Devices",
        "Metallic Materials",
        "Inorganic Non-metallic Materials",
        "Polymer Materials",
        "Composite Materials",
        "Powder Materials",
        "Gem Materials and Gemology",
        "Functional Materials",
        "Electronic Information Materials",
        "Nanomaterials and Technology",
        "Composite Materials Molding",
    ];

    #[test]
    fn every_released_subfield_has_one_domain_and_every_domain_has_subfields() {
        let mut count: BTreeMap<Domain, usize> = BTreeMap::new();
        for s in RELEASED {
            let d = Domain::of(s).unwrap_or_else(|| panic!("{s} has no domain"));
            *count.entry(d).or_default() += 1;
        }
        assert_eq!(count.values().sum::<usize>(), 19);
        for d in Domain::ALL {
            assert!(count.get(&d).copied().unwrap_or(0) >= 4, "{d:?}: {count:?}");
        }
        assert_eq!(Domain::of("Quantum Gravity Materials"), None);
    }

    #[test]
    fn a_domain_is_the_mean_of_its_subfields_not_of_its_items() {
        let g = group([
            ("Materials Physics", 10, [1.0, 0.5, 0.6]),
            ("Materials Chemistry", 30, [0.0, 0.25, 0.2]),
            ("Polymer Materials", 5, [0.5, 0.5, 0.5]),
            ("Unknown Field", 2, [0.1, 0.1, 0.1]),
        ]);
        let fms = &g[Domain::Fms.label()];
        assert_eq!((fms.subfields, fms.items), (2, 40));
        assert_eq!((fms.precision, fms.recall), (0.5, 0.375));
        assert!((fms.macro_f1 - 0.4).abs() < 1e-15);
        assert_eq!(g[Domain::Sem.label()].macro_f1, 0.5);
        assert_eq!(g[UNASSIGNED].items, 2);
        assert!(!g.contains_key(Domain::Fam.label()));
    }
}
