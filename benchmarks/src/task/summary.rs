//! The results table of any suite, in the paper's layout: one line per group (AtomWorld: per
//! action) with the number of answers, the success rate, the mean headline number over
//! successes and a count per failure label, then the overall line.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Outcome;

/// The label counted for an answer that never came (the model call failed); not one of any
/// suite's labels.
pub const PROVIDER_ERROR: &str = "ProviderError";

/// One group's line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupSummary {
    /// Answers (task samples).
    pub n: usize,
    /// Successes / n.
    pub success_rate: f64,
    /// Mean of the suite's number over successes ([`Outcome::metric`]; AtomWorld: the
    /// normalised max_dist), if any.
    #[serde(alias = "mean_max_dist")]
    pub mean_metric: Option<f64>,
    /// Count per failure label (and [`PROVIDER_ERROR`]).
    pub errors: BTreeMap<String, usize>,
}

/// Totals over every group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Overall {
    /// Answers.
    pub n: usize,
    /// Successes / n.
    pub success_rate: f64,
}

/// A results table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Summary {
    /// Per group (AtomWorld: per action).
    #[serde(alias = "per_action")]
    pub per_group: BTreeMap<String, GroupSummary>,
    /// Overall.
    pub overall: Overall,
    /// Input + output tokens.
    pub tokens: u64,
    /// Total cost in USD.
    pub cost_usd: f64,
}

/// One answer as a table counts it.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// Its group.
    pub group: &'a str,
    /// Its outcome; `None` when the model call failed.
    pub outcome: Option<&'a Outcome>,
    /// Tokens spent.
    pub tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
}

/// What a suite calls the rows and the number of its results table ("action" and "max_dist"
/// for AtomWorld, as its paper prints them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableWords {
    /// The rows' heading.
    pub group: &'static str,
    /// The heading of the mean metric over the successes.
    pub metric: &'static str,
}

impl Default for TableWords {
    fn default() -> Self {
        TableWords {
            group: "group",
            metric: "metric",
        }
    }
}

impl Summary {
    /// The table of `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = Row<'a>>) -> Self {
        let mut groups: BTreeMap<String, (GroupSummary, Vec<f64>, usize)> = BTreeMap::new();
        let (mut tokens, mut cost, mut n, mut successes) = (0, 0.0, 0, 0);
        for r in rows {
            let g = groups.entry(r.group.to_string()).or_default();
            g.0.n += 1;
            n += 1;
            tokens += r.tokens;
            cost += r.cost_usd;
            match r.outcome {
                Some(o) if o.success => {
                    g.2 += 1;
                    successes += 1;
                    g.1.extend(o.metric);
                }
                Some(o) => *g.0.errors.entry(o.label.clone()).or_insert(0) += 1,
                None => *g.0.errors.entry(PROVIDER_ERROR.to_string()).or_insert(0) += 1,
            }
        }
        let per_group = groups
            .into_iter()
            .map(|(k, (mut s, metrics, ok))| {
                s.success_rate = rate(ok, s.n);
                s.mean_metric = (!metrics.is_empty())
                    .then(|| metrics.iter().sum::<f64>() / metrics.len() as f64);
                (k, s)
            })
            .collect();
        Summary {
            per_group,
            overall: Overall {
                n,
                success_rate: rate(successes, n),
            },
            tokens,
            cost_usd: cost,
        }
    }

    /// The table as text. `columns` are the suite's failure labels with their headings
    /// ([`Suite::columns`](super::Suite::columns)); a `Provider` column follows when any
    /// model call failed, and a column for any other label that occurs.
    pub fn table(&self, columns: &[(&str, &str)], words: TableWords) -> String {
        let mut cols: Vec<(String, String)> = columns
            .iter()
            .map(|(l, h)| (l.to_string(), h.to_string()))
            .collect();
        let mut extra: Vec<String> = self
            .per_group
            .values()
            .flat_map(|g| g.errors.keys())
            .filter(|l| !cols.iter().any(|(c, _)| c == *l))
            .cloned()
            .collect();
        extra.sort();
        extra.dedup();
        // Failed calls last, under a short heading; other labels under their own names.
        extra.sort_by_key(|l| l == PROVIDER_ERROR);
        for l in extra {
            let heading = if l == PROVIDER_ERROR {
                "Provider".to_string()
            } else {
                l.clone()
            };
            cols.push((l, heading));
        }
        let width = |h: &str| h.len().max(6);
        // Group names (actions, subfields, files) set the first column's width.
        let first = self
            .per_group
            .keys()
            .map(|name| name.chars().count())
            .max()
            .unwrap_or(0)
            .max(16);
        let metric_width = words.metric.chars().count().max(9);
        let mut s = format!(
            "{:<first$} {:>5} {:>8} {:>metric_width$}",
            words.group, "n", "success", words.metric
        );
        for (_, h) in &cols {
            s.push_str(&format!(" {h:>w$}", w = width(h)));
        }
        s.push('\n');
        for (name, g) in &self.per_group {
            s.push_str(&format!(
                "{:<first$} {:>5} {:>8.3} {:>metric_width$}",
                name,
                g.n,
                g.success_rate,
                g.mean_metric.map_or("-".into(), |d| format!("{d:.4}")),
            ));
            for (l, h) in &cols {
                let count = g.errors.get(l).copied().unwrap_or(0);
                s.push_str(&format!(" {count:>w$}", w = width(h)));
            }
            s.push('\n');
        }
        s.push_str(&format!(
            "{:<first$} {:>5} {:>8.3}   tokens {}  cost ${:.4}\n",
            "overall", self.overall.n, self.overall.success_rate, self.tokens, self.cost_usd
        ));
        s
    }
}

fn rate(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables stored under the older AtomWorld words still read.
    #[test]
    fn older_field_names_read() {
        let old = r#"{"per_action": {"move": {"n": 2, "success_rate": 0.5,
            "mean_max_dist": 0.1, "errors": {}}}, "overall": {"n": 2, "success_rate": 0.5},
            "tokens": 0, "cost_usd": 0.0}"#;
        let s: Summary = serde_json::from_str(old).unwrap();
        assert_eq!(s.per_group["move"].mean_metric, Some(0.1));
        let new = serde_json::to_value(&s).unwrap();
        assert!(new["per_group"]["move"]["mean_metric"].is_number(), "{new}");
    }

    fn o(label: &str, success: bool, metric: Option<f64>) -> Outcome {
        Outcome {
            label: label.into(),
            success,
            metric,
            why: None,
        }
    }

    #[test]
    fn counts_rates_means_and_columns() {
        let (a, b, c) = (
            o("Success", true, Some(0.1)),
            o("Success", true, Some(0.3)),
            o("StructureMismatch", false, None),
        );
        let rows = [
            Row {
                group: "move",
                outcome: Some(&a),
                tokens: 10,
                cost_usd: 0.5,
            },
            Row {
                group: "move",
                outcome: Some(&b),
                tokens: 10,
                cost_usd: 0.5,
            },
            Row {
                group: "move",
                outcome: Some(&c),
                tokens: 10,
                cost_usd: 0.5,
            },
            Row {
                group: "swap",
                outcome: None,
                tokens: 0,
                cost_usd: 0.0,
            },
        ];
        let s = Summary::of(rows);
        assert_eq!(s.overall.n, 4);
        assert_eq!(s.overall.success_rate, 0.5);
        let m = &s.per_group["move"];
        assert!((m.mean_metric.unwrap() - 0.2).abs() < 1e-15);
        assert_eq!(m.errors["StructureMismatch"], 1);
        assert_eq!(s.per_group["swap"].errors[PROVIDER_ERROR], 1);
        let words = TableWords {
            group: "action",
            metric: "max_dist",
        };
        let t = s.table(&[("StructureMismatch", "Match")], words);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "action               n  success  max_dist  Match Provider"
        );
        assert_eq!(
            lines[1],
            "move                 3    0.667    0.2000      1        0"
        );
        assert_eq!(
            lines[2],
            "swap                 1    0.000         -      0        1"
        );
        assert!(lines[3].starts_with("overall              4    0.500   tokens 30"));
    }
}
