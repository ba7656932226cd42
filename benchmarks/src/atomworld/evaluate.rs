//! Scoring a model's answer (the AtomWorld reference evaluator): extract, parse, compare compositions,
//! match. The first failing check decides the label.

use std::collections::BTreeMap;

use engine::cif::{parse_cif_like_pymatgen_detailed, CifError, PymatgenCif};
use engine::element::Element;
use engine::interrupt::Interrupt;
use engine::matcher::{fit, get_rms_dist, rms_dist_if_fit, MatcherError, MatcherOptions};
use engine::ordered::ordered_distances;
use engine::structure::Structure;
use serde::{Deserialize, Serialize};

use super::same_crystal::{same_crystal, SameCrystal};

/// The verdict labels, in the order the checks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Label {
    /// The answer matches the target.
    Success,
    /// No `<cif>…</cif>` in the answer.
    OutputFormatError,
    /// The extracted text is not a CIF pymatgen would read.
    CifParsingError,
    /// The element counts differ from the target's.
    AtomCountMismatch,
    /// Same composition, but the structures do not match.
    StructureMismatch,
    /// Not one of the reference's labels: matching exceeded the caller's time budget, so the
    /// answer was not scored (counted against success, never as a model error).
    EvaluationTimeout,
}

impl Label {
    /// The reference's labels in the order of the checks (and of its tables).
    pub const ALL: [Label; 5] = [
        Label::Success,
        Label::OutputFormatError,
        Label::CifParsingError,
        Label::AtomCountMismatch,
        Label::StructureMismatch,
    ];

    /// The label's name as written in data files.
    pub fn name(self) -> &'static str {
        match self {
            Label::Success => "Success",
            Label::OutputFormatError => "OutputFormatError",
            Label::CifParsingError => "CifParsingError",
            Label::AtomCountMismatch => "AtomCountMismatch",
            Label::StructureMismatch => "StructureMismatch",
            Label::EvaluationTimeout => "EvaluationTimeout",
        }
    }
}

/// How the prediction is compared with the target once compositions agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// StructureMatcher(primitive_cell=False, stol=0.5): every AtomWorld action.
    #[default]
    Matcher,
    /// Site by site in parsed order (the move_all probe).
    Ordered,
}

/// One element's amount in the target and in the prediction (atoms, occupancies summed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountDiff {
    /// Element symbol.
    pub element: String,
    /// Amount in the target.
    pub target: f64,
    /// Amount in the prediction.
    pub predicted: f64,
}

/// Everything the UI needs to explain a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The label.
    pub label: Label,
    /// RMS displacement normalised by (V/n)^(1/3) (successes and ordered comparisons).
    pub rms: Option<f64>,
    /// Largest displacement normalised by (V/n)^(1/3). Not Ångström.
    pub max_dist: Option<f64>,
    /// Largest displacement in Å (after the matcher's volume scaling).
    pub max_dist_angstrom: Option<f64>,
    /// One sentence saying which check decided and why.
    pub detail: String,
    /// The text between the tags, if found.
    pub extracted_cif: Option<String>,
    /// The parse error (line and column within the extracted CIF).
    pub parse_error: Option<CifError>,
    /// Element counts that differ.
    pub count_diff: Vec<CountDiff>,
    /// For each target site (in pymatgen's parsed order), the prediction site it matched
    /// (for a mismatch explained by [`explain_mismatch`], in the closest match).
    pub mapping: Option<Vec<usize>>,
    /// With `mapping` from the matcher: each target site's vector to its partner (Å, target
    /// cell, common shift removed; `engine::matcher::RmsDist::displacements`), for drawing.
    /// Not serialised: a page recomputes it.
    #[serde(skip)]
    pub displacements: Option<Vec<[f64; 3]>>,
    /// For a mismatch with no fit, the smallest-RMS match, when [`explain_mismatch`] looked
    /// for it: how close the answer came. A diagnostic, never a score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closest: Option<ClosestMatch>,
    /// The second, labelled verdict ([`super::same_crystal`]): the same crystal in any cell?
    /// Present whenever both structures parse (and the time budget lasted); never the score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_crystal: Option<SameCrystal>,
}

/// The smallest-RMS match of an answer that has no fit (`get_rms_dist` on the same pair):
/// every candidate leaves some site farther than stol from its partner, this one least so on
/// average.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosestMatch {
    /// Normalised RMS displacement.
    pub rms: f64,
    /// Normalised largest displacement (at least stol, since there is no fit).
    pub max_dist: f64,
    /// Largest displacement in Å.
    pub max_dist_angstrom: f64,
}

impl Verdict {
    fn fail(label: Label, detail: impl Into<String>) -> Self {
        Verdict {
            label,
            rms: None,
            max_dist: None,
            max_dist_angstrom: None,
            detail: detail.into(),
            extracted_cif: None,
            parse_error: None,
            count_diff: Vec::new(),
            mapping: None,
            displacements: None,
            closest: None,
            same_crystal: None,
        }
    }
}

/// Why a task itself (not the answer) cannot be scored.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum TaskError {
    /// The target CIF does not parse: the task is broken.
    #[error("the target CIF does not parse: {0}")]
    Target(CifError),
}

/// `cif` as an answer in the prompt's format: within `<cif>` and `</cif>` tags, each on its
/// own line ([`extract_cif`] reads it back).
pub fn cif_answer(cif: &str) -> String {
    format!("<cif>\n{cif}\n</cif>")
}

/// The text between the last `<cif>` and the last `</cif>` after it, trimmed (case-sensitive;
/// nothing else removed).
pub fn extract_cif(response: &str) -> Option<&str> {
    let start = response.rfind("<cif>")? + "<cif>".len();
    let rest = &response[start..];
    let end = rest.rfind("</cif>")?;
    Some(rest[..end].trim())
}

/// One species of a composition (element, oxidation state as bits: `Composition`'s key) and
/// its amount.
type SpeciesAmount = (Element, Option<u64>, f64);

/// pymatgen's composition of a parsed structure: the amount of each species (element and
/// oxidation state, as `Composition` keys them) summed over the sites.
fn composition(p: &PymatgenCif) -> Vec<SpeciesAmount> {
    // Room for a dozen species: one allocation for nearly every structure.
    let mut out: Vec<SpeciesAmount> = Vec::with_capacity(12);
    for species in p.species() {
        for s in species {
            let key = (s.element, s.oxidation.map(f64::to_bits));
            match out.iter_mut().find(|(e, o, _)| (*e, *o) == key) {
                Some(entry) => entry.2 += s.amount,
                None => out.push((key.0, key.1, s.amount)),
            }
        }
    }
    out
}

/// `Composition.__eq__`: every species' amount equal within `amount_tolerance`.
fn same_composition(a: &[SpeciesAmount], b: &[SpeciesAmount]) -> bool {
    let amount = |c: &[SpeciesAmount], e: Element, o: Option<u64>| {
        c.iter()
            .find(|(x, y, _)| *x == e && *y == o)
            .map_or(0.0, |(_, _, n)| *n)
    };
    a.iter()
        .chain(b)
        .all(|(e, o, _)| (amount(a, *e, *o) - amount(b, *e, *o)).abs() <= AMOUNT_TOLERANCE)
}

/// Amount of each element (oxidation states summed), by symbol, for showing what differs.
fn element_amounts(c: &[SpeciesAmount]) -> BTreeMap<&'static str, f64> {
    let mut out = BTreeMap::new();
    for (e, _, n) in c {
        *out.entry(e.symbol()).or_insert(0.0) += n;
    }
    out
}

/// pymatgen's `Composition.amount_tolerance`.
const AMOUNT_TOLERANCE: f64 = 1e-8;

/// The first site whose species amounts add up to more than 1 (beyond pymatgen's tolerance).
///
/// pymatgen's reader merges atoms that sit on one spot into one site and adds their
/// occupancies (`check_occu=False` keeps the result), so two O atoms stacked on one spot
/// become one site `{O: 2}`. `StructureMatcher` copies both structures first, and building a
/// site whose occupancies sum to more than 1 raises "Species occupancies sum to more than 1!":
/// the reference pipeline scores such an answer as a failed match, never as a success.
fn overfull_site(p: &PymatgenCif) -> Option<usize> {
    p.species()
        .position(|species| species.map(|s| s.amount).sum::<f64>() > 1.0 + AMOUNT_TOLERANCE)
}

/// Parse a target CIF once, to score many answers against it.
pub fn parse_target(target_cif: &str) -> Result<PymatgenCif, TaskError> {
    parse_cif_like_pymatgen_detailed(target_cif).map_err(TaskError::Target)
}

/// Score `response` against a parsed target.
pub fn evaluate(target: &PymatgenCif, response: &str, comparison: Comparison) -> Verdict {
    evaluate_within(target, response, comparison, &Interrupt::default())
}

/// Target sites one scoring budget covers; a larger target gets a budget per this many
/// sites ([`scoring_scale`]). Every structure of the paper's range (at most 100 atoms) and
/// of the built-in pool takes one.
pub const SITES_PER_BUDGET: usize = 2_000;

/// How many scoring budgets matching an answer against a target of `target_sites` may take:
/// one per [`SITES_PER_BUDGET`] sites begun, so the budget grows with the task (matching is
/// at least linear in the sites), never with the answer.
pub fn scoring_scale(target_sites: usize) -> u32 {
    u32::try_from(target_sites.div_ceil(SITES_PER_BUDGET).max(1)).unwrap_or(u32::MAX)
}

/// [`evaluate`], giving up with [`Label::EvaluationTimeout`] once `interrupt` is raised
/// during matching (a server's time budget).
pub fn evaluate_within(
    target: &PymatgenCif,
    response: &str,
    comparison: Comparison,
    interrupt: &Interrupt,
) -> Verdict {
    evaluate_parsed(target, response, comparison, interrupt).0
}

/// [`evaluate_within`], also giving back the parsed answer (when it parsed), so that the
/// second verdict does not parse it again.
fn evaluate_parsed(
    target: &PymatgenCif,
    response: &str,
    comparison: Comparison,
    interrupt: &Interrupt,
) -> (Verdict, Option<PymatgenCif>) {
    let Some(text) = extract_cif(response) else {
        let v = Verdict::fail(
            Label::OutputFormatError,
            "no <cif>…</cif> block in the answer",
        );
        return (v, None);
    };
    let (mut v, predicted) = match parse_cif_like_pymatgen_detailed(text) {
        Err(e) => {
            let mut v = Verdict::fail(
                Label::CifParsingError,
                format!("the CIF does not parse: {e}"),
            );
            v.parse_error = Some(e);
            (v, None)
        }
        Ok(predicted) => (
            compare(target, &predicted, comparison, interrupt),
            Some(predicted),
        ),
    };
    v.extracted_cif = Some(text.to_string());
    (v, predicted)
}

/// [`evaluate_within`] with the second, labelled verdict ([`super::same_crystal`]) filled in
/// whenever both structures parse: what runs, `atomworld eval`, the API and the page report.
/// The benchmark's own verdict is unchanged; the second costs another match with primitive
/// cells and supercells (several times the first), so the evaluator's benchmark times
/// [`evaluate`] alone.
pub fn evaluate_with_same_crystal(
    target: &PymatgenCif,
    response: &str,
    comparison: Comparison,
    interrupt: &Interrupt,
) -> Verdict {
    let (mut v, predicted) = evaluate_parsed(target, response, comparison, interrupt);
    if let (Some(predicted), false) = (predicted, v.label == Label::EvaluationTimeout) {
        v.same_crystal = same_crystal(target, &predicted, interrupt);
    }
    v
}

/// For a verdict that is a mismatch because the matcher found no fit (compositions equal):
/// looks for the smallest-RMS match anyway and records it in `closest` and its site pairing
/// in `mapping`, so a page can show how close the answer came and which site is off. Costs one
/// more full search, so the benchmark's scoring (runs, `atomworld eval`) never calls it.
pub fn explain_mismatch(target: &PymatgenCif, v: &mut Verdict) {
    if v.label != Label::StructureMismatch || v.closest.is_some() {
        return;
    }
    let Some(p) = v
        .extracted_cif
        .as_deref()
        .and_then(|text| parse_cif_like_pymatgen_detailed(text).ok())
    else {
        return;
    };
    if precheck(target, &p, Comparison::Matcher).is_some() {
        return;
    }
    let opts = MatcherOptions::atomworld();
    let t = target.pymatgen_structure();
    if let Ok(Some(m)) = get_rms_dist(&t, &p.pymatgen_structure(), &opts) {
        v.closest = Some(ClosestMatch {
            rms: m.rms,
            max_dist: m.max_dist,
            max_dist_angstrom: m.max_dist_angstrom,
        });
        v.mapping = Some(m.mapping);
        v.displacements = Some(to_target_frame(target, &t, &m.displacements));
    }
}

/// The matcher's displacement vectors, measured in pymatgen's frame (`in_pymatgen`, the
/// target's [`PymatgenCif::pymatgen_structure`]), in the target's own (AtomWorld) frame.
fn to_target_frame(target: &PymatgenCif, in_pymatgen: &Structure, d: &[[f64; 3]]) -> Vec<[f64; 3]> {
    d.iter()
        .map(|&v| {
            target
                .structure
                .lattice
                .to_cartesian(in_pymatgen.lattice.to_fractional(v))
        })
        .collect()
}

/// Whether `response` would score [`Label::Success`] against `target`: the same steps as
/// [`evaluate`], but a match only needs `fit`, not the smallest-RMS search that reports the
/// numbers (so a no-op check costs one early-stopping search, not an exhaustive one).
pub fn would_succeed(target: &PymatgenCif, response: &str, comparison: Comparison) -> bool {
    let Some(predicted) =
        extract_cif(response).and_then(|t| parse_cif_like_pymatgen_detailed(t).ok())
    else {
        return false;
    };
    if precheck(target, &predicted, comparison).is_some() {
        return false;
    }
    match comparison {
        Comparison::Matcher => matches!(
            fit(
                &target.pymatgen_structure(),
                &predicted.pymatgen_structure(),
                &MatcherOptions::atomworld()
            ),
            Ok(true)
        ),
        Comparison::Ordered => {
            ordered_distances(&target.structure, &predicted.structure).is_ok_and(|d| d.pass)
        }
    }
}

/// The failures decided before any matching: element counts, and (for the matcher) sites
/// holding more than one atom.
fn precheck(
    target: &PymatgenCif,
    predicted: &PymatgenCif,
    comparison: Comparison,
) -> Option<Verdict> {
    // The reference: `len(target) == len(prediction)` and equal compositions. Atoms of
    // different elements stacked on one spot merge into one site: the composition stays, the
    // site count drops.
    let (ct, cp) = (composition(target), composition(predicted));
    let (nt, np) = (target.structure.len(), predicted.structure.len());
    if nt != np || !same_composition(&ct, &cp) {
        let (at, ap) = (element_amounts(&ct), element_amounts(&cp));
        let elements: std::collections::BTreeSet<&str> =
            at.keys().chain(ap.keys()).copied().collect();
        let count_diff: Vec<CountDiff> = elements
            .into_iter()
            .filter_map(|e| {
                let (t, p) = (
                    at.get(e).copied().unwrap_or(0.0),
                    ap.get(e).copied().unwrap_or(0.0),
                );
                ((t - p).abs() > AMOUNT_TOLERANCE).then(|| CountDiff {
                    element: e.to_string(),
                    target: t,
                    predicted: p,
                })
            })
            .collect();
        let detail = if count_diff.is_empty() {
            format!(
                "same composition, but {nt} sites in the target and {np} in the answer (atoms \
                 of different elements on one spot merge into one mixed site)"
            )
        } else {
            let text = count_diff
                .iter()
                .map(|d| {
                    format!(
                        "{}: {} in the target, {} predicted",
                        d.element, d.target, d.predicted
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            format!("element counts differ ({text})")
        };
        let mut v = Verdict::fail(Label::AtomCountMismatch, detail);
        v.count_diff = count_diff;
        return Some(v);
    }
    if comparison == Comparison::Matcher {
        for (which, p) in [("target", target), ("prediction", predicted)] {
            if let Some(i) = overfull_site(p) {
                return Some(Verdict::fail(
                    Label::StructureMismatch,
                    format!(
                        "the {which}'s site {i} holds more than one atom (atoms stacked on \
                         one spot merge into one site of occupancy > 1), which \
                         StructureMatcher cannot match"
                    ),
                ));
            }
        }
    }
    None
}

fn compare(
    target: &PymatgenCif,
    predicted: &PymatgenCif,
    comparison: Comparison,
    interrupt: &Interrupt,
) -> Verdict {
    if let Some(v) = precheck(target, predicted, comparison) {
        return v;
    }
    match comparison {
        Comparison::Matcher => {
            // As the reference: `fit` decides (every site within stol for some candidate);
            // only then does `get_rms_dist` report the smallest-RMS match. The smallest RMS
            // alone can be below stol while no candidate has all sites within it.
            let opts = MatcherOptions {
                interrupt: interrupt.clone(),
                ..MatcherOptions::atomworld()
            };
            // In pymatgen's frame, as the reference matches: the matcher's candidate order,
            // and so which of two equally good matches it reports, depends on the frame.
            let (t, p) = (target.pymatgen_structure(), predicted.pymatgen_structure());
            match rms_dist_if_fit(&t, &p, &opts) {
                Ok(Some(m)) => Verdict {
                    label: Label::Success,
                    rms: Some(m.rms),
                    max_dist: Some(m.max_dist),
                    max_dist_angstrom: Some(m.max_dist_angstrom),
                    detail: format!(
                        "matches the target: rms {:.4}, max_dist {:.4} (normalised by (V/n)^(1/3)), {:.3} Å",
                        m.rms, m.max_dist, m.max_dist_angstrom
                    ),
                    extracted_cif: None,
                    parse_error: None,
                    count_diff: Vec::new(),
                    mapping: Some(m.mapping),
                    displacements: Some(to_target_frame(target, &t, &m.displacements)),
                    closest: None,
                    same_crystal: None,
                },
                Ok(None) => Verdict::fail(
                    Label::StructureMismatch,
                    "same composition, but StructureMatcher(stol=0.5) finds no fit: no match \
                     puts every site within 0.5 (normalised) of its partner",
                ),
                Err(MatcherError::Interrupted) => Verdict::fail(
                    Label::EvaluationTimeout,
                    format!(
                        "not scored: matching {} against {} sites exceeded the time budget",
                        predicted.structure.len(),
                        target.structure.len()
                    ),
                ),
                Err(e) => Verdict::fail(
                    Label::StructureMismatch,
                    format!("the structures cannot be matched: {e}"),
                ),
            }
        }
        Comparison::Ordered => match ordered_distances(&target.structure, &predicted.structure) {
            Ok(d) => {
                let label = if d.pass {
                    Label::Success
                } else {
                    Label::StructureMismatch
                };
                Verdict {
                    label,
                    rms: Some(d.rms),
                    max_dist: Some(d.max_dist),
                    max_dist_angstrom: Some(d.max_dist_angstrom),
                    detail: format!(
                        "site by site: rms {:.4}, max_dist {:.4} (normalised; pass ≤ 0.5), {:.3} Å",
                        d.rms, d.max_dist, d.max_dist_angstrom
                    ),
                    extracted_cif: None,
                    parse_error: None,
                    count_diff: Vec::new(),
                    mapping: Some((0..target.structure.len()).collect()),
                    displacements: None,
                    closest: None,
                    same_crystal: None,
                }
            }
            Err(e) => Verdict::fail(Label::StructureMismatch, e.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_takes_the_last_block() {
        assert_eq!(
            extract_cif("a <cif> x </cif> b <cif>\n y \n</cif>"),
            Some("y")
        );
        assert_eq!(extract_cif("<cif> x </cif> <cif> unterminated"), None);
        assert_eq!(extract_cif("<CIF>x</CIF>"), None);
        assert_eq!(extract_cif("<cif>a</cif>b</cif>"), Some("a</cif>b"));
        assert_eq!(extract_cif("no tags"), None);
    }

    /// A CIF of a 4 Å cubic cell with the given `(element, x, y, z)` rows.
    fn cubic_cif(rows: &[(&str, f64, f64, f64)]) -> String {
        let mut s = String::from(
            "data_test\n_symmetry_space_group_name_H-M   'P 1'\n_cell_length_a   4.0\n\
             _cell_length_b   4.0\n_cell_length_c   4.0\n_cell_angle_alpha   90.0\n\
             _cell_angle_beta   90.0\n_cell_angle_gamma   90.0\nloop_\n\
             _symmetry_equiv_pos_site_id\n_symmetry_equiv_pos_as_xyz\n  1  'x, y, z'\n\
             loop_\n_atom_site_type_symbol\n_atom_site_label\n\
             _atom_site_symmetry_multiplicity\n_atom_site_fract_x\n_atom_site_fract_y\n\
             _atom_site_fract_z\n_atom_site_occupancy\n",
        );
        for (i, (el, x, y, z)) in rows.iter().enumerate() {
            s.push_str(&format!("  {el}  {el}{i}  1  {x}  {y}  {z}  1.0\n"));
        }
        s
    }

    #[test]
    fn an_extra_atom_stacked_on_another_is_not_a_success() {
        // pymatgen merges the two O rows into one site {O: 2}: as many sites as the target,
        // but one more O, so the reference's composition test fails.
        let target =
            parse_target(&cubic_cif(&[("Na", 0.0, 0.0, 0.0), ("O", 0.5, 0.5, 0.5)])).unwrap();
        let good = cubic_cif(&[("Na", 0.0, 0.0, 0.0), ("O", 0.5, 0.5, 0.5)]);
        let v = evaluate(&target, &format!("<cif>{good}</cif>"), Comparison::Matcher);
        assert_eq!(v.label, Label::Success, "{}", v.detail);
        let stacked = cubic_cif(&[
            ("Na", 0.0, 0.0, 0.0),
            ("O", 0.5, 0.5, 0.5),
            ("O", 0.5, 0.5, 0.5),
        ]);
        let v = evaluate(
            &target,
            &format!("<cif>{stacked}</cif>"),
            Comparison::Matcher,
        );
        assert_eq!(v.label, Label::AtomCountMismatch, "{}", v.detail);
        assert_eq!(v.count_diff[0].element, "O");
        assert_eq!(
            (v.count_diff[0].target, v.count_diff[0].predicted),
            (1.0, 2.0)
        );
        // Atoms of two elements on one spot: one mixed site, the same composition, one site
        // fewer: the reference's site-count test fails.
        let nacl =
            parse_target(&cubic_cif(&[("Na", 0.0, 0.0, 0.0), ("Cl", 0.5, 0.5, 0.5)])).unwrap();
        let mixed = cubic_cif(&[("Na", 0.0, 0.0, 0.0), ("Cl", 0.0, 0.0, 0.0)]);
        let v = evaluate(&nacl, &format!("<cif>{mixed}</cif>"), Comparison::Matcher);
        assert_eq!(v.label, Label::AtomCountMismatch, "{}", v.detail);
        assert!(
            v.detail.contains("2 sites in the target and 1"),
            "{}",
            v.detail
        );
        assert!(v.count_diff.is_empty());
        // A target with two atoms on one spot: the same answer passes the counts, but
        // StructureMatcher cannot take an overfull site, so nothing matches it.
        let overfull = parse_target(&stacked).unwrap();
        let v = evaluate(
            &overfull,
            &format!("<cif>{stacked}</cif>"),
            Comparison::Matcher,
        );
        assert_eq!(v.label, Label::StructureMismatch, "{}", v.detail);
    }

    /// A 10 Å cubic cell declaring Fe2+, Fe3+ and O2- (`_atom_type_oxidation_number`) with
    /// one site per row `(type symbol, x, y, z)`.
    fn ionic_cif(rows: &[(&str, f64, f64, f64)]) -> String {
        let mut s = cubic_cif(&[]).replace("4.0\n", "10.0\n");
        let types = "loop_\n_atom_type_symbol\n_atom_type_oxidation_number\n  Fe2+  2.0\n  \
                     Fe3+  3.0\n  O2-  -2.0\n";
        let at = s.find("loop_\n_atom_site_type_symbol").unwrap_or(s.len());
        s.insert_str(at, types);
        for (i, (sp, x, y, z)) in rows.iter().enumerate() {
            let element = sp.trim_end_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
            s.push_str(&format!("  {sp}  {element}{i}  1  {x}  {y}  {z}  1.0\n"));
        }
        s
    }

    #[test]
    fn oxidation_states_are_compared_site_by_site() {
        // pymatgen 2026.10.24 on these files: the target fits itself; with the Fe2+ and
        // Fe3+ sites exchanged (same composition) it does not fit; against plain elements
        // the compositions differ.
        let target = parse_target(&ionic_cif(&[
            ("Fe2+", 0.0, 0.0, 0.0),
            ("Fe3+", 0.5, 0.5, 0.5),
            ("O2-", 0.2, 0.0, 0.0),
        ]))
        .unwrap();
        let same = ionic_cif(&[
            ("O2-", 0.2, 0.0, 0.0),
            ("Fe3+", 0.5, 0.5, 0.5),
            ("Fe2+", 0.0, 0.0, 0.0),
        ]);
        let v = evaluate(&target, &format!("<cif>{same}</cif>"), Comparison::Matcher);
        assert_eq!(v.label, Label::Success, "{}", v.detail);
        let swapped = ionic_cif(&[
            ("Fe3+", 0.0, 0.0, 0.0),
            ("Fe2+", 0.5, 0.5, 0.5),
            ("O2-", 0.2, 0.0, 0.0),
        ]);
        let v = evaluate(
            &target,
            &format!("<cif>{swapped}</cif>"),
            Comparison::Matcher,
        );
        assert_eq!(v.label, Label::StructureMismatch, "{}", v.detail);
        let plain = cubic_cif(&[
            ("Fe", 0.0, 0.0, 0.0),
            ("Fe", 0.5, 0.5, 0.5),
            ("O", 0.2, 0.0, 0.0),
        ])
        .replace("4.0\n", "10.0\n");
        let v = evaluate(&target, &format!("<cif>{plain}</cif>"), Comparison::Matcher);
        assert_eq!(v.label, Label::AtomCountMismatch, "{}", v.detail);
    }

    /// A 4 Å cubic cell with a Sn/In site (occupancies `sn`, `1 - sn`, the rows in the
    /// order given by `in_first`) at the origin and O at the centre.
    fn mixed_site_cif(sn: f64, in_first: bool) -> String {
        let head = cubic_cif(&[]);
        let (a, b) = (
            format!("  Sn  M1  1  0  0  0  {sn}\n"),
            format!("  In  M1  1  0  0  0  {}\n", 1.0 - sn),
        );
        let rows = if in_first { b + &a } else { a + &b };
        format!("{head}{rows}  O  O1  1  0.5  0.5  0.5  1.0\n")
    }

    #[test]
    fn a_mixed_site_matches_whatever_order_its_species_are_listed_in() {
        // pymatgen compares whole site compositions: Sn0.5In0.5 is In0.5Sn0.5, not only the
        // first-listed element.
        let target = parse_target(&mixed_site_cif(0.5, false)).unwrap();
        let answer = format!("<cif>{}</cif>", mixed_site_cif(0.5, true));
        let v = evaluate(&target, &answer, Comparison::Matcher);
        assert_eq!(v.label, Label::Success, "{}", v.detail);
        assert_eq!(v.rms, Some(0.0));
        // Other occupancies are another composition.
        let other = format!("<cif>{}</cif>", mixed_site_cif(0.75, true));
        let v = evaluate(&target, &other, Comparison::Matcher);
        assert_eq!(v.label, Label::AtomCountMismatch, "{}", v.detail);
    }
}
