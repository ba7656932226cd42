//! Reports over several runs: one column per run (a model), one row per number, each the
//! mean ± sample standard deviation over the run's repeats (its samples: repeat k is every
//! task's sample k). The numbers are the results table's success rate and every number of
//! the suite's headline ([`super::Suite::headline`]), found by their path in its JSON, so a
//! suite's report grows with its headline and needs no code of its own.

use serde::{Deserialize, Serialize};

/// One repeat of a run: its answers' groups and verdicts (as JSON), and how many succeeded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Repeat {
    /// Each scored answer: its group and the suite's verdict as JSON.
    pub verdicts: Vec<(String, serde_json::Value)>,
    /// Answers asked, scored or not (a failed call is an answer that is no success; a task
    /// no one could be asked is not an answer).
    pub answers: usize,
    /// Answers that count as a success.
    pub successes: usize,
}

/// A run as a report reads it: its column's heading and its repeats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunColumn {
    /// The column's heading (the model, and the run's id).
    pub heading: String,
    /// The model (or baseline) that answered: what joins a model's runs of several suites.
    pub model: String,
    /// Its repeats, in order.
    pub repeats: Vec<Repeat>,
}

/// One number of one run over its repeats.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Cell {
    /// The mean over the repeats.
    pub mean: f64,
    /// The sample standard deviation (n − 1), when there are several repeats.
    pub std: Option<f64>,
    /// How many repeats had the number.
    pub n: usize,
}

impl Cell {
    /// The cell of `values` (none: no cell).
    pub fn of(values: &[f64]) -> Option<Cell> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let std = (n > 1).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        Some(Cell { mean, std, n })
    }

    /// `0.4567` or `0.4567 ± 0.0123`; whole numbers (counts) without decimals when constant.
    pub fn text(&self) -> String {
        let whole = self.mean.fract() == 0.0 && self.std.is_none_or(|s| s == 0.0);
        match (whole, self.std) {
            (true, _) => format!("{}", self.mean),
            (false, None) => format!("{:.4}", self.mean),
            (false, Some(s)) => format!("{:.4} ± {:.4}", self.mean, s),
        }
    }
}

/// A report's table: rows of numbers, one column per run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The suite.
    pub suite: String,
    /// The columns' headings.
    pub columns: Vec<String>,
    /// Repeats per column.
    pub repeats: Vec<usize>,
    /// The rows: a number's path in the headline (`success_rate` for the table's), and one
    /// cell per column (`None` where that run has no such number).
    pub rows: Vec<(String, Vec<Option<Cell>>)>,
}

/// A report over runs of one or several suites: the papers' tables ([`super::layout`]) and,
/// per suite, every headline number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Report {
    /// The papers' tables, in the order of the suites' runs.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub paper: Vec<super::layout::PaperTable>,
    /// Per suite, every number of its headline.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub numbers: Vec<Table>,
}

/// The formats a report is written in (`svg`: the papers' tables as bar charts).
pub const FORMATS: [&str; 4] = ["md", "csv", "json", "svg"];

impl Report {
    /// The report of each suite's runs.
    pub fn of(runs: &[super::layout::SuiteRuns]) -> Report {
        let heads = super::layout::headlines(runs);
        Report {
            paper: super::layout::paper_tables(runs, &heads),
            numbers: runs
                .iter()
                .zip(&heads)
                .map(|(s, h)| report(s.suite.name(), s.runs, h))
                .collect(),
        }
    }

    /// As Markdown: the papers' tables, then every number.
    pub fn markdown(&self) -> String {
        let paper = self.paper.iter().map(|t| t.markdown());
        let numbers = self.numbers.iter().map(Table::markdown);
        paper.chain(numbers).collect::<Vec<_>>().join("\n")
    }

    /// As CSV, one line per cell: `table,row,column,mean,std,n` (the numbers' tables are
    /// named `<suite>: every number`, their rows by the number's path).
    pub fn csv(&self) -> String {
        let mut s = String::from("table,row,column,mean,std,n\n");
        for t in &self.paper {
            s.push_str(&t.csv());
        }
        for t in &self.numbers {
            s.push_str(&t.csv());
        }
        s
    }

    /// In `format` (one of [`FORMATS`]).
    pub fn render(&self, format: &str) -> Result<String, String> {
        match format {
            "md" => Ok(self.markdown()),
            "csv" => Ok(self.csv()),
            "svg" => Ok(super::chart::svg_document(&self.paper)),
            "json" => serde_json::to_string_pretty(self)
                .map(|s| s + "\n")
                .map_err(|e| e.to_string()),
            other => Err(format!("no format {other} (one of {})", FORMATS.join(", "))),
        }
    }
}

/// Every number of `runs` of suite `suite`: the success rate and each number of the
/// headlines `heads` (per run and repeat, as [`super::layout::headlines`] gives them).
fn report(suite: &str, runs: &[RunColumn], heads: &[Vec<serde_json::Value>]) -> Table {
    let mut rows: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
    for (col, run) in runs.iter().enumerate() {
        for (repeat, head) in run.repeats.iter().zip(&heads[col]) {
            let mut numbers = vec![(
                "success_rate".to_string(),
                ratio(repeat.successes, repeat.answers),
            )];
            flatten("", head, &mut numbers);
            for (path, value) in numbers {
                let at = match rows.iter().position(|(p, _)| *p == path) {
                    Some(i) => i,
                    None => {
                        rows.push((path, vec![Vec::new(); runs.len()]));
                        rows.len() - 1
                    }
                };
                rows[at].1[col].push(value);
            }
        }
    }
    Table {
        suite: suite.to_string(),
        columns: runs.iter().map(|r| r.heading.clone()).collect(),
        repeats: runs.iter().map(|r| r.repeats.len()).collect(),
        rows: rows
            .into_iter()
            .map(|(p, cols)| (p, cols.iter().map(|v| Cell::of(v)).collect()))
            .collect(),
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Every number in `json` with its path (`a.b.c`; list items by index), in document order.
fn flatten(path: &str, json: &serde_json::Value, out: &mut Vec<(String, f64)>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match json {
        serde_json::Value::Number(n) => {
            if let Some(v) = n.as_f64() {
                out.push((path.to_string(), v));
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&join(k), v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&join(&i.to_string()), v, out);
            }
        }
        _ => {}
    }
}

impl Table {
    /// As a Markdown table.
    pub fn markdown(&self) -> String {
        let mut s = format!("### {}\n\n| number |", self.suite);
        for (c, r) in self.columns.iter().zip(&self.repeats) {
            s.push_str(&format!(
                " {c} ({r} repeat{}) |",
                if *r == 1 { "" } else { "s" }
            ));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(self.columns.len()));
        s.push('\n');
        for (path, cells) in &self.rows {
            s.push_str(&format!("| {path} |"));
            for c in cells {
                s.push_str(&format!(
                    " {} |",
                    c.map_or_else(|| "–".into(), |c| c.text())
                ));
            }
            s.push('\n');
        }
        s
    }

    /// As CSV lines `table,row,column,mean,std,n` (no header), one per cell: the table is
    /// `<suite>: every number`, the row the number's path.
    pub fn csv(&self) -> String {
        let mut s = String::new();
        for (path, cells) in &self.rows {
            for (column, c) in self.columns.iter().zip(cells) {
                let Some(c) = c else { continue };
                s.push_str(&format!(
                    "{},{},{},{},{},{}\n",
                    csv_field(&format!("{}: every number", self.suite)),
                    csv_field(path),
                    csv_field(column),
                    c.mean,
                    c.std.map(|v| v.to_string()).unwrap_or_default(),
                    c.n
                ));
            }
        }
        s
    }
}

/// What a spreadsheet may read as the start of a formula (or a DDE command), after any
/// leading white space it skips: ASCII and full-width forms.
const FORMULA_STARTS: [char; 10] = [
    '=', '+', '-', '@', '|', '%', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}', '\u{ff20}',
];

/// One CSV cell: quoted when it holds a comma, quote or line break, and a text that a
/// spreadsheet would take for a formula (one of [`FORMULA_STARTS`] after any leading white
/// space, or a leading tab or carriage return) prefixed with `'` so it stays text.
pub fn csv_field(text: &str) -> String {
    let formula = text.trim_start().starts_with(FORMULA_STARTS) || text.starts_with(['\t', '\r']);
    let text = if formula {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_mean_and_sample_std() {
        let c = Cell::of(&[0.5, 0.7, 0.9]).unwrap();
        assert!((c.mean - 0.7).abs() < 1e-12);
        assert!((c.std.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(c.text(), "0.7000 ± 0.2000");
        assert_eq!(Cell::of(&[0.25]).unwrap().text(), "0.2500");
        assert_eq!(Cell::of(&[3.0, 3.0]).unwrap().text(), "3");
        assert!(Cell::of(&[]).is_none());
    }

    #[test]
    fn numbers_are_found_by_their_path() {
        let mut out = Vec::new();
        let json = serde_json::json!({"a": 1, "b": {"c": 0.5, "d": "x", "e": [2, 3]}, "f": true});
        flatten("", &json, &mut out);
        let paths: Vec<&str> = out.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["a", "b.c", "b.e.0", "b.e.1"]);
        assert_eq!(csv_field("=1+1, x"), "\"'=1+1, x\"");
        for risky in [" =1+1", "\u{ff1d}1+1", "|cmd", "\u{a0}@SUM(A1)", "%0A"] {
            assert!(csv_field(risky).starts_with('\''), "{risky:?}");
        }
        assert_eq!(csv_field("Na Cl"), "Na Cl");
    }
}
