//! The papers' tables, each declared by its suite as a [`Layout`] over the numbers of the
//! suite's headline ([`super::Suite::headline`]): which rows (subfields, files, criteria,
//! error classes), which numbers per row, and where the paper prints it. One engine lays any
//! of them out for several runs (a column per model, mean ± sample standard deviation over
//! each run's repeats), so a suite's tables cost a declaration, not code. A layout may join
//! suites (OmniMatBench's overall score: CAL and QA of the same model).

use serde::{Deserialize, Serialize};

use super::report::{Cell, RunColumn};
use super::AnySuite;

/// A table of a paper as a suite declares it.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// What the table shows.
    pub title: &'static str,
    /// Where the paper prints it ("MatTools, Table 2"), or that it is ours.
    pub source: &'static str,
    /// The rows' heading ("subfield").
    pub row_heading: &'static str,
    /// The rows.
    pub rows: Rows,
    /// The numbers of a row: their heading and their path within the row (`""`: the row's
    /// own number).
    pub values: &'static [(&'static str, &'static str)],
    /// Whether a last row gives the mean of the rows above (the paper's averages).
    pub mean_row: bool,
}

/// Where a layout's rows are in the headline.
#[derive(Clone, Copy, Debug)]
pub enum Rows {
    /// Listed rows: each row's label and its path in the headline.
    Listed(&'static [(&'static str, &'static str)]),
    /// A row per entry of the map (or list) at this path; a list's entries are named by
    /// their `label` field.
    Each {
        /// The map's path.
        at: &'static str,
        /// The field naming a list's entries.
        label: Option<&'static str>,
    },
    /// A row per key found in any part, each number the mean of the parts' numbers for the
    /// same model (OmniMatBench's overall = (CAL + QA) / 2): each part is a suite, the path
    /// of its map and the number's path within an entry. A model lacking a part has no cell.
    MeanOf(&'static [(&'static str, &'static str, &'static str)]),
}

/// A laid-out table: rows, and per row one cell per (run, value) column.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaperTable {
    /// The suite that declares it.
    pub suite: String,
    /// What it shows.
    pub title: String,
    /// Where the paper prints it.
    pub source: String,
    /// The rows' heading.
    pub row_heading: String,
    /// The column headings: the run's heading, then the value's when a row has several.
    pub columns: Vec<String>,
    /// The numbers of a row (their headings), repeated for each run in `columns`.
    #[serde(default)]
    pub values: Vec<String>,
    /// Repeats behind each column.
    pub repeats: Vec<usize>,
    /// Each row's label and cells (`None`: the run has no such number).
    pub rows: Vec<PaperRow>,
}

/// One row of a [`PaperTable`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaperRow {
    /// The row's label.
    pub label: String,
    /// One cell per column.
    pub cells: Vec<Option<Cell>>,
}

/// The runs a report is asked for, of one suite.
pub struct SuiteRuns<'a> {
    /// The suite.
    pub suite: &'a dyn AnySuite,
    /// Its runs, each with its repeats.
    pub runs: &'a [RunColumn],
}

/// Each suite's headline numbers (JSON; null without a headline) per run and repeat, in the
/// order of `runs`: computed once for the papers' tables and the report's every number.
pub type Headlines = Vec<Vec<Vec<serde_json::Value>>>;

/// The [`Headlines`] of `runs`.
pub fn headlines(runs: &[SuiteRuns]) -> Headlines {
    runs.iter()
        .map(|s| {
            s.runs
                .iter()
                .map(|r| {
                    r.repeats
                        .iter()
                        .map(|rep| {
                            s.suite
                                .headline(&rep.verdicts)
                                .map_or(serde_json::Value::Null, |h| h.json)
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Every layout of every suite in `runs`, laid out over those runs (a joined layout over the
/// models that ran all its parts); `headlines` are theirs ([`headlines`]).
pub fn paper_tables(runs: &[SuiteRuns], headlines: &Headlines) -> Vec<PaperTable> {
    let mut out = Vec::new();
    for (s, heads) in runs.iter().zip(headlines) {
        for layout in s.suite.layouts() {
            let table = match layout.rows {
                Rows::MeanOf(parts) => joined(s.suite.name(), layout, parts, runs, headlines),
                _ => single(s.suite.name(), layout, s.runs, heads),
            };
            if table
                .rows
                .iter()
                .any(|r| r.cells.iter().any(Option::is_some))
            {
                out.push(table);
            }
        }
    }
    out
}

/// A layout over one suite's runs.
fn single(
    suite: &str,
    layout: &Layout,
    runs: &[RunColumn],
    heads: &[Vec<serde_json::Value>],
) -> PaperTable {
    let mut labels: Vec<String> = Vec::new();
    for rep in heads.iter().flatten() {
        for (label, _) in row_entries(&layout.rows, rep) {
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
    }
    let headings: Vec<(String, usize)> = runs
        .iter()
        .map(|r| (r.heading.clone(), r.repeats.len()))
        .collect();
    let cell = |run: usize, label: &str, path: &str| {
        let values: Vec<f64> = heads[run]
            .iter()
            .filter_map(|rep| {
                row_entries(&layout.rows, rep)
                    .into_iter()
                    .find(|(l, _)| l == label)
                    .and_then(|(_, v)| number(v, path))
            })
            .collect();
        Cell::of(&values)
    };
    table(suite, layout, &headings, &labels, cell)
}

/// A layout joining suites: a column per model that ran every part.
fn joined(
    suite: &str,
    layout: &Layout,
    parts: &[(&str, &str, &str)],
    runs: &[SuiteRuns],
    headlines: &[Vec<Vec<serde_json::Value>>],
) -> PaperTable {
    // Per part, the suite's index among `runs`.
    let found: Vec<Option<usize>> = parts
        .iter()
        .map(|(name, _, _)| runs.iter().position(|s| s.suite.name() == *name))
        .collect();
    let Some(found) = found.into_iter().collect::<Option<Vec<usize>>>() else {
        return PaperTable::default();
    };
    // Models that ran every part, in the first part's order; each part's first run of it.
    let models: Vec<(String, Vec<usize>)> = runs[found[0]]
        .runs
        .iter()
        .filter_map(|first| {
            let each = found
                .iter()
                .map(|&s| runs[s].runs.iter().position(|r| r.model == first.model))
                .collect::<Option<Vec<usize>>>()?;
            Some((first.model.clone(), each))
        })
        .collect();
    let mut labels: Vec<String> = Vec::new();
    for ((_, at, _), &s) in parts.iter().zip(&found) {
        for rep in headlines[s].iter().flatten() {
            for (label, _) in entries(at_path(rep, at), None) {
                if !labels.contains(&label) {
                    labels.push(label);
                }
            }
        }
    }
    let repeats_of = |m: &(String, Vec<usize>)| {
        m.1.iter()
            .zip(&found)
            .map(|(&r, &s)| runs[s].runs[r].repeats.len())
            .min()
            .unwrap_or(0)
    };
    let headings: Vec<(String, usize)> = models
        .iter()
        .map(|m| (m.0.clone(), repeats_of(m)))
        .collect();
    let cell = |col: usize, label: &str, _value: &str| {
        let (_, each) = &models[col];
        let values: Vec<f64> = (0..repeats_of(&models[col]))
            .filter_map(|k| {
                let parts_values: Option<Vec<f64>> = parts
                    .iter()
                    .zip(&found)
                    .zip(each)
                    .map(|(((_, at, value), &s), &r)| {
                        let rep = &headlines[s][r][k];
                        let entry = entries(at_path(rep, at), None)
                            .into_iter()
                            .find(|(l, _)| l == label)?
                            .1;
                        number(entry, value)
                    })
                    .collect();
                let p = parts_values?;
                Some(p.iter().sum::<f64>() / p.len() as f64)
            })
            .collect();
        Cell::of(&values)
    };
    table(suite, layout, &headings, &labels, cell)
}

/// The table of `labels` × (`headings` × the layout's values), with the mean row if asked.
fn table(
    suite: &str,
    layout: &Layout,
    headings: &[(String, usize)],
    labels: &[String],
    cell: impl Fn(usize, &str, &str) -> Option<Cell>,
) -> PaperTable {
    let several = layout.values.len() > 1;
    let mut columns = Vec::new();
    let mut repeats = Vec::new();
    for (heading, n) in headings {
        for (value, _) in layout.values {
            columns.push(if several {
                format!("{heading}: {value}")
            } else {
                heading.clone()
            });
            repeats.push(*n);
        }
    }
    let mut rows: Vec<PaperRow> = labels
        .iter()
        .map(|label| PaperRow {
            label: label.clone(),
            cells: (0..headings.len())
                .flat_map(|run| layout.values.iter().map(move |(_, path)| (run, *path)))
                .map(|(run, path)| cell(run, label, path))
                .collect(),
        })
        .collect();
    if layout.mean_row && !rows.is_empty() {
        // The mean of the rows that have a number; the label says when some have none.
        let mut fewest = rows.len();
        let cells = (0..columns.len())
            .map(|c| {
                let means: Vec<f64> = rows
                    .iter()
                    .filter_map(|r| r.cells[c].map(|x| x.mean))
                    .collect();
                fewest = fewest.min(means.len());
                (!means.is_empty())
                    .then(|| Cell::of(&[means.iter().sum::<f64>() / means.len() as f64]))?
            })
            .collect();
        let label = if fewest == rows.len() {
            "mean".to_string()
        } else {
            "mean of the rows with a number".to_string()
        };
        rows.push(PaperRow { label, cells });
    }
    PaperTable {
        suite: suite.to_string(),
        title: layout.title.to_string(),
        source: layout.source.to_string(),
        row_heading: layout.row_heading.to_string(),
        columns,
        values: layout.values.iter().map(|(v, _)| v.to_string()).collect(),
        repeats,
        rows,
    }
}

/// A headline's rows as (label, value) pairs.
fn row_entries<'a>(
    rows: &Rows,
    head: &'a serde_json::Value,
) -> Vec<(String, &'a serde_json::Value)> {
    match rows {
        Rows::Listed(list) => list
            .iter()
            .filter_map(|(label, path)| Some((label.to_string(), at_path(head, path)?)))
            .collect(),
        Rows::Each { at, label } => entries(at_path(head, at), *label),
        Rows::MeanOf(_) => Vec::new(),
    }
}

/// The entries of a map (by key) or a list (by `label` field, else position).
fn entries<'a>(
    value: Option<&'a serde_json::Value>,
    label: Option<&str>,
) -> Vec<(String, &'a serde_json::Value)> {
    match value {
        Some(serde_json::Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let name = label
                    .and_then(|l| v.get(l))
                    .and_then(|n| n.as_str())
                    .map_or_else(|| (i + 1).to_string(), str::to_string);
                (name, v)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The value at a dotted path (`""`: the value itself; list items by index).
fn at_path<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| match v {
        serde_json::Value::Object(map) => map.get(key),
        serde_json::Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    })
}

/// The number at `path` within `value`.
fn number(value: &serde_json::Value, path: &str) -> Option<f64> {
    at_path(value, path)?.as_f64()
}

impl PaperTable {
    /// As Markdown: a heading with the source, then the table.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "#### {} ({})\n\n| {} |",
            self.title, self.source, self.row_heading
        );
        for (c, r) in self.columns.iter().zip(&self.repeats) {
            let times = if *r == 1 {
                String::new()
            } else {
                format!(" ×{r}")
            };
            s.push_str(&format!(" {c}{times} |"));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(self.columns.len()));
        s.push('\n');
        for row in &self.rows {
            s.push_str(&format!("| {} |", row.label));
            for c in &row.cells {
                s.push_str(&format!(
                    " {} |",
                    c.map_or_else(|| "–".into(), |c| c.text())
                ));
            }
            s.push('\n');
        }
        s
    }

    /// As CSV lines `table,row,column,mean,std,n` (no header), one per cell.
    pub fn csv(&self) -> String {
        let field = super::report::csv_field;
        let mut s = String::new();
        for row in &self.rows {
            for (column, c) in self.columns.iter().zip(&row.cells) {
                let Some(c) = c else { continue };
                s.push_str(&format!(
                    "{},{},{},{},{},{}\n",
                    field(&format!("{} ({})", self.title, self.source)),
                    field(&row.label),
                    field(column),
                    c.mean,
                    c.std.map(|v| v.to_string()).unwrap_or_default(),
                    c.n
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_into_maps_and_lists() {
        let v = json!({"a": {"b c": [1, {"d": 2.5}]}});
        assert_eq!(number(&v, "a.b c.0"), Some(1.0));
        assert_eq!(number(&v, "a.b c.1.d"), Some(2.5));
        assert_eq!(at_path(&v, ""), Some(&v));
        assert!(at_path(&v, "a.x").is_none());
        let list = json!([{"key": "k1", "x": 1}, {"x": 2}]);
        let names: Vec<String> = entries(Some(&list), Some("key"))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["k1", "2"]);
    }
}
