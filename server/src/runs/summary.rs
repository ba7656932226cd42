//! The per-action summary of a run (the paper's table layout) and its JSON form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::store::ResultRow;

/// Label recorded for tasks whose model call failed (not one of the benchmark's labels).
pub const PROVIDER_ERROR: &str = "ProviderError";

/// One action's line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionSummary {
    /// Task samples.
    pub n: usize,
    /// Successes / n.
    pub success_rate: f64,
    /// Mean max_dist over successes (normalised), if any.
    pub mean_max_dist: Option<f64>,
    /// Count per failure label (and [`PROVIDER_ERROR`]).
    pub errors: BTreeMap<String, usize>,
}

/// Totals over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overall {
    /// Task samples.
    pub n: usize,
    /// Successes / n.
    pub success_rate: f64,
}

/// The summary written by `--summary-json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Run id.
    pub run_id: String,
    /// Model name.
    pub model: String,
    /// Per action.
    pub per_action: BTreeMap<String, ActionSummary>,
    /// Overall.
    pub overall: Overall,
    /// Input + output tokens.
    pub tokens: u64,
    /// Total cost in USD.
    pub cost_usd: f64,
}

/// Summarise stored results.
pub fn summarise(run_id: &str, model: &str, rows: &[ResultRow]) -> Summary {
    let mut per_action: BTreeMap<String, (ActionSummary, Vec<f64>, usize)> = BTreeMap::new();
    let (mut tokens, mut cost, mut successes) = (0, 0.0, 0);
    for r in rows {
        let e = per_action.entry(r.action.clone()).or_default();
        e.0.n += 1;
        tokens += r.input_tokens + r.output_tokens;
        cost += r.cost_usd;
        match r.label.as_deref() {
            Some("Success") => {
                e.2 += 1;
                successes += 1;
                if let Some(d) = r.verdict.as_ref().and_then(|v| v["max_dist"].as_f64()) {
                    e.1.push(d);
                }
            }
            Some(label) => *e.0.errors.entry(label.to_string()).or_insert(0) += 1,
            None => *e.0.errors.entry(PROVIDER_ERROR.to_string()).or_insert(0) += 1,
        }
    }
    let per_action = per_action
        .into_iter()
        .map(|(k, (mut s, dists, ok))| {
            s.success_rate = if s.n == 0 {
                0.0
            } else {
                ok as f64 / s.n as f64
            };
            s.mean_max_dist =
                (!dists.is_empty()).then(|| dists.iter().sum::<f64>() / dists.len() as f64);
            (k, s)
        })
        .collect();
    Summary {
        run_id: run_id.to_string(),
        model: model.to_string(),
        per_action,
        overall: Overall {
            n: rows.len(),
            success_rate: if rows.is_empty() {
                0.0
            } else {
                successes as f64 / rows.len() as f64
            },
        },
        tokens,
        cost_usd: cost,
    }
}

impl Summary {
    /// The table as text, in the paper's layout.
    pub fn table(&self) -> String {
        let labels = [
            "OutputFormatError",
            "CifParsingError",
            "AtomCountMismatch",
            "StructureMismatch",
            PROVIDER_ERROR,
        ];
        let mut s = format!(
            "{:<16} {:>5} {:>8} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
            "action", "n", "success", "max_dist", "Format", "Parse", "Count", "Match", "Provider"
        );
        for (name, a) in &self.per_action {
            s.push_str(&format!(
                "{:<16} {:>5} {:>8.3} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
                name,
                a.n,
                a.success_rate,
                a.mean_max_dist.map_or("-".into(), |d| format!("{d:.4}")),
                a.errors.get(labels[0]).copied().unwrap_or(0),
                a.errors.get(labels[1]).copied().unwrap_or(0),
                a.errors.get(labels[2]).copied().unwrap_or(0),
                a.errors.get(labels[3]).copied().unwrap_or(0),
                a.errors.get(labels[4]).copied().unwrap_or(0),
            ));
        }
        s.push_str(&format!(
            "{:<16} {:>5} {:>8.3}   tokens {}  cost ${:.4}\n",
            "overall", self.overall.n, self.overall.success_rate, self.tokens, self.cost_usd
        ));
        s
    }
}
