//! The AtomWorld paper's figures over a run's verdicts, per action: the success rate and the
//! share of each failure type (Fig. 2's bars and their stack) and the distribution of
//! max_dist over the successes (Fig. 15: quartiles and the largest, and a histogram over
//! decades, [`BINS`]: the paper draws its distributions as a picture, so the bins are ours),
//! as numbers in the suite's headline and as the report's [`LAYOUTS`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::evaluate::{Label, Verdict};
use crate::task::layout::{Layout, Rows};

/// One action's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionFigures {
    /// Answers scored.
    pub n: usize,
    /// Share of them that succeeded.
    pub success_rate: f64,
    /// Share of them with each failure label (every label of [`Label::ALL`] but Success,
    /// then `EvaluationTimeout`).
    pub failure_shares: BTreeMap<String, f64>,
    /// max_dist over the successes: quartiles (numpy's linear interpolation) and the
    /// largest; absent without a success.
    pub max_dist: Option<Spread>,
    /// The share of the successes in each of [`BINS`] (keyed `b0`, `b1`, …); empty without a
    /// success.
    #[serde(default)]
    pub max_dist_bins: BTreeMap<String, f64>,
}

/// The histogram's bins of max_dist (normalised as pymatgen reports it): their labels and
/// upper ends (exclusive; the last is open).
pub const BINS: [(&str, f64); 4] = [
    ("< 0.001", 1e-3),
    ("0.001-0.01", 1e-2),
    ("0.01-0.1", 1e-1),
    (">= 0.1", f64::INFINITY),
];

/// The share of `xs` in each of [`BINS`], keyed `b0`, `b1`, …; empty for no `xs`.
fn histogram(xs: &[f64]) -> BTreeMap<String, f64> {
    if xs.is_empty() {
        return BTreeMap::new();
    }
    let mut counts = [0usize; BINS.len()];
    for x in xs {
        let bin = BINS
            .iter()
            .position(|(_, upper)| *x < *upper)
            .unwrap_or(BINS.len() - 1);
        counts[bin] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("b{i}"), *c as f64 / xs.len() as f64))
        .collect()
}

/// Quartiles and the largest of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// 25th percentile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// 75th percentile.
    pub q3: f64,
    /// Largest.
    pub max: f64,
}

/// The failure labels a figure stacks, in the paper's order.
const FAILURES: [Label; 5] = [
    Label::OutputFormatError,
    Label::CifParsingError,
    Label::AtomCountMismatch,
    Label::StructureMismatch,
    Label::EvaluationTimeout,
];

/// Each action's figures over `(action, verdict)` rows.
pub fn per_action(rows: &[(&str, &Verdict)]) -> BTreeMap<String, ActionFigures> {
    let mut by: BTreeMap<String, Vec<&Verdict>> = BTreeMap::new();
    for (action, v) in rows {
        by.entry(action.to_string()).or_default().push(v);
    }
    by.into_iter()
        .map(|(action, vs)| {
            let n = vs.len();
            let share = |l: Label| vs.iter().filter(|v| v.label == l).count() as f64 / n as f64;
            let mut dists: Vec<f64> = vs
                .iter()
                .filter(|v| v.label == Label::Success)
                .filter_map(|v| v.max_dist)
                .collect();
            dists.sort_by(f64::total_cmp);
            let figures = ActionFigures {
                n,
                success_rate: share(Label::Success),
                failure_shares: FAILURES
                    .iter()
                    .map(|l| (l.name().to_string(), share(*l)))
                    .collect(),
                max_dist: spread(&dists),
                max_dist_bins: histogram(&dists),
            };
            (action, figures)
        })
        .collect()
}

/// Quartiles and the largest of sorted `xs` (none when empty).
pub(crate) fn spread(xs: &[f64]) -> Option<Spread> {
    Some(Spread {
        q1: percentile(xs, 25.0)?,
        median: percentile(xs, 50.0)?,
        q3: percentile(xs, 75.0)?,
        max: *xs.last()?,
    })
}

/// The `p`th percentile of sorted `xs` as numpy's default (`linear`) computes it.
fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    let last = xs.len().checked_sub(1)?;
    let at = p / 100.0 * last as f64;
    let (lo, frac) = (at.floor() as usize, at.fract());
    let hi = (lo + 1).min(last);
    Some(xs[lo] + (xs[hi] - xs[lo]) * frac)
}

/// The paper's AtomWorld figures as report tables.
pub const LAYOUTS: [Layout; 4] = [
    Layout {
        title: "Success rate per action",
        source: "AtomWorld, Fig. 2",
        row_heading: "action",
        rows: Rows::Each {
            at: "per_action",
            label: None,
        },
        values: &[("success", "success_rate")],
        mean_row: true,
    },
    Layout {
        title: "Answers by failure type per action (shares)",
        source: "AtomWorld, Fig. 2 (the stacked failures)",
        row_heading: "action",
        rows: Rows::Each {
            at: "per_action",
            label: None,
        },
        values: &[
            ("OutputFormatError", "failure_shares.OutputFormatError"),
            ("CifParsingError", "failure_shares.CifParsingError"),
            ("AtomCountMismatch", "failure_shares.AtomCountMismatch"),
            ("StructureMismatch", "failure_shares.StructureMismatch"),
            ("EvaluationTimeout", "failure_shares.EvaluationTimeout"),
        ],
        mean_row: false,
    },
    Layout {
        title: "max_dist of the successes per action",
        source: "AtomWorld, Fig. 15 (quartiles and the largest)",
        row_heading: "action",
        rows: Rows::Each {
            at: "per_action",
            label: None,
        },
        values: &[
            ("q1", "max_dist.q1"),
            ("median", "max_dist.median"),
            ("q3", "max_dist.q3"),
            ("max", "max_dist.max"),
        ],
        mean_row: false,
    },
    Layout {
        title: "max_dist of the successes per action (shares per bin)",
        source: "AtomWorld, Fig. 15 as a histogram (the bins are ours)",
        row_heading: "action",
        rows: Rows::Each {
            at: "per_action",
            label: None,
        },
        values: &[
            (BINS[0].0, "max_dist_bins.b0"),
            (BINS[1].0, "max_dist_bins.b1"),
            (BINS[2].0, "max_dist_bins.b2"),
            (BINS[3].0, "max_dist_bins.b3"),
        ],
        mean_row: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_as_numpy() {
        // numpy.percentile([1, 2, 4, 8], [25, 50, 75]) = [1.75, 3.0, 5.0].
        let xs = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(percentile(&xs, 25.0), Some(1.75));
        assert_eq!(percentile(&xs, 50.0), Some(3.0));
        assert_eq!(percentile(&xs, 75.0), Some(5.0));
        assert_eq!(percentile(&[0.5], 75.0), Some(0.5));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn shares_add_up_per_action() {
        let verdict = |label: Label, d: Option<f64>| -> Verdict {
            serde_json::from_value(serde_json::json!({
                "label": label, "rms": null, "max_dist": d, "max_dist_angstrom": null,
                "detail": "", "extracted_cif": null, "parse_error": null, "count_diff": [],
                "mapping": null, "displacements": null, "closest": null, "same_crystal": null
            }))
            .unwrap()
        };
        let (a, b, c) = (
            verdict(Label::Success, Some(0.1)),
            verdict(Label::Success, Some(0.3)),
            verdict(Label::AtomCountMismatch, None),
        );
        let rows = [("move", &a), ("move", &b), ("move", &c), ("swap", &c)];
        let figures = per_action(&rows);
        let m = &figures["move"];
        assert_eq!(m.n, 3);
        assert!((m.success_rate - 2.0 / 3.0).abs() < 1e-15);
        assert!((m.failure_shares["AtomCountMismatch"] - 1.0 / 3.0).abs() < 1e-15);
        let total = m.success_rate + m.failure_shares.values().sum::<f64>();
        assert!((total - 1.0).abs() < 1e-12);
        assert_eq!(m.max_dist.unwrap().median, 0.2);
        assert_eq!(figures["swap"].max_dist, None);
        // Both successes (0.1 and 0.3) fall in the last bin; no success, no histogram.
        let bins: Vec<f64> = m.max_dist_bins.values().copied().collect();
        assert_eq!(bins, [0.0, 0.0, 0.0, 1.0]);
        assert!(figures["swap"].max_dist_bins.is_empty());
    }

    #[test]
    fn the_histogram_bins_by_decade_and_sums_to_one() {
        let h = histogram(&[0.0, 0.0005, 0.001, 0.05, 0.0999, 0.2, 0.5, 0.009]);
        assert_eq!(h["b0"], 2.0 / 8.0); // 0 and 0.0005
        assert_eq!(h["b1"], 2.0 / 8.0); // 0.001 (an edge goes up) and 0.009
        assert_eq!(h["b2"], 2.0 / 8.0); // 0.05 and 0.0999
        assert_eq!(h["b3"], 2.0 / 8.0); // 0.2 and 0.5
        assert!(histogram(&[]).is_empty());
    }
}
