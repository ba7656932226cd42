//! The probes' numbers per group (action, corruption, structure type, goal) over a run's
//! verdicts: how many answers, the share that succeeded, the share of each label, and the
//! spread of the probe's distance where it measures one. Each probe's headline is these
//! figures under `per_group`, so its report tables are layouts over them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::atomworld::figures::{spread, Spread};

/// One scored answer as the figures need it.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// Its group.
    pub group: &'a str,
    /// Its label, by name.
    pub label: &'a str,
    /// Whether it counts as a success.
    pub success: bool,
    /// The probe's distance for it, when one was measured.
    pub distance: Option<f64>,
}

/// One group's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupFigures {
    /// Answers scored.
    pub n: usize,
    /// Share of them that succeeded.
    pub success_rate: f64,
    /// Share of them with each of the probe's labels (every label, zero included).
    pub shares: BTreeMap<String, f64>,
    /// Answers with a distance.
    pub measured: usize,
    /// Share of the answers with a distance.
    pub measured_rate: f64,
    /// Mean distance over those answers.
    pub distance_mean: Option<f64>,
    /// Quartiles and the largest of those distances.
    pub distance: Option<Spread>,
}

/// Each group's figures over `rows`; `labels` are the probe's labels, every one given a
/// share.
pub fn per_group(rows: &[Row], labels: &[&str]) -> BTreeMap<String, GroupFigures> {
    let mut by: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by.entry(r.group).or_default().push(r);
    }
    by.into_iter()
        .map(|(group, rs)| (group.to_string(), figures(&rs, labels)))
        .collect()
}

/// How many of `rows` succeeded, and the headline numbers of a probe tabled by its success:
/// `{"success_rate", "per_group"}`.
pub fn success_headline(rows: &[Row], labels: &[&str]) -> (usize, serde_json::Value) {
    let successes = rows.iter().filter(|r| r.success).count();
    let json = serde_json::json!({
        "success_rate": successes as f64 / rows.len().max(1) as f64,
        "per_group": per_group(rows, labels),
    });
    (successes, json)
}

fn figures(rows: &[&Row], labels: &[&str]) -> GroupFigures {
    let n = rows.len();
    let share = |count: usize| count as f64 / n as f64;
    let mut distances: Vec<f64> = rows.iter().filter_map(|r| r.distance).collect();
    distances.sort_by(f64::total_cmp);
    GroupFigures {
        n,
        success_rate: share(rows.iter().filter(|r| r.success).count()),
        shares: labels
            .iter()
            .map(|l| {
                (
                    l.to_string(),
                    share(rows.iter().filter(|r| r.label == *l).count()),
                )
            })
            .collect(),
        measured: distances.len(),
        measured_rate: share(distances.len()),
        distance_mean: (!distances.is_empty())
            .then(|| distances.iter().sum::<f64>() / distances.len() as f64),
        distance: spread(&distances),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_rates_and_distances_per_group() {
        let row = |group, label, success, distance| Row {
            group,
            label,
            success,
            distance,
        };
        let rows = [
            row("move", "Success", true, Some(0.01)),
            row("move", "Far", false, Some(0.5)),
            row("move", "Unreadable", false, None),
            row("move", "Success", true, Some(0.03)),
            row("rotate", "Unreadable", false, None),
        ];
        let f = per_group(&rows, &["Success", "Far", "Unreadable"]);
        let m = &f["move"];
        assert_eq!((m.n, m.measured), (4, 3));
        assert_eq!(m.success_rate, 0.5);
        assert_eq!(m.measured_rate, 0.75);
        assert_eq!(m.shares["Far"], 0.25);
        assert!((m.distance_mean.unwrap() - 0.18).abs() < 1e-15);
        assert_eq!(m.distance.unwrap().median, 0.03);
        let r = &f["rotate"];
        assert_eq!((r.success_rate, r.shares["Unreadable"]), (0.0, 1.0));
        assert_eq!((r.distance_mean, r.distance), (None, None));
    }
}
