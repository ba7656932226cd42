//! What a run of AlchemyBench reports: per split, the mean and standard deviation of each
//! criterion, the judge's `overall_score` and the mean of the seven criteria (two different
//! numbers, each labelled), and how many items the judge failed on; and, for comparing the
//! judge with a person's own scores, Pearson's and Spearman's correlation.
//!
//! Means and deviations are over the **scored** items; judge-failed items have no scores and
//! are counted beside them (`judge_failed`), never dropped silently. σ is the **sample**
//! standard deviation (divisor n − 1): the items are a sample of the recipes a model could be
//! asked, and it is what pandas' `std()` reports; with one scored item it is undefined
//! (`None`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::judge::{AlchemyLabel, AlchemyVerdict, KEYS};

/// What the judge's own overall score is called in tables.
pub const OVERALL_LABEL: &str = "overall (judge's overall_score)";

/// What the mean of the seven criteria is called in tables.
pub const MEAN7_LABEL: &str = "overall (mean of the 7 criteria)";

/// Mean, sample standard deviation, least and greatest of some numbers (the paper's Tables 5
/// and 10 give all four).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// How many numbers.
    pub n: usize,
    /// Their mean (`None` for none).
    pub mean: Option<f64>,
    /// Their sample standard deviation (`None` for fewer than two).
    pub sd: Option<f64>,
    /// The least (`None` for none).
    #[serde(default)]
    pub min: Option<f64>,
    /// The greatest (`None` for none).
    #[serde(default)]
    pub max: Option<f64>,
}

impl Stat {
    /// The statistics of `xs`.
    pub fn of(xs: &[f64]) -> Self {
        let n = xs.len();
        if n == 0 {
            return Self::default();
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (n > 1).then(|| {
            let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        Self {
            n,
            mean: Some(mean),
            sd,
            min: xs.iter().copied().reduce(f64::min),
            max: xs.iter().copied().reduce(f64::max),
        }
    }
}

/// One criterion's line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriterionStat {
    /// The judge's key (`materials_appropriateness_score`, …).
    pub key: String,
    /// Its statistics over the scored items.
    pub stat: Stat,
}

/// One split's summary (or all splits pooled).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    /// Items.
    pub items: usize,
    /// Items the judge scored.
    pub scored: usize,
    /// Items the judge failed on (no scores; not in the means).
    pub judge_failed: usize,
    /// Items whose judge was asked a second time (scored or not).
    pub reasked: usize,
    /// Scored items with at least one score off the 0.5 grid.
    pub off_grid: usize,
    /// The seven criteria, in the protocol's order.
    pub criteria: Vec<CriterionStat>,
    /// The judge's own `overall_score` ([`OVERALL_LABEL`]).
    pub overall: Stat,
    /// The mean of the seven criteria per item ([`MEAN7_LABEL`]).
    pub mean7: Stat,
}

impl SplitSummary {
    /// The summary of `verdicts`.
    pub fn of<'a>(verdicts: impl IntoIterator<Item = &'a AlchemyVerdict>) -> Self {
        let mut s = SplitSummary::default();
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); KEYS.len()];
        let mut mean7 = Vec::new();
        for v in verdicts {
            s.items += 1;
            s.reasked += usize::from(v.reasked);
            match (v.label, &v.scores) {
                (AlchemyLabel::Scored, Some(scores)) => {
                    s.scored += 1;
                    s.off_grid += usize::from(!v.off_grid.is_empty());
                    for (c, x) in columns.iter_mut().zip(scores.values()) {
                        c.push(x);
                    }
                    mean7.push(scores.mean7());
                }
                _ => s.judge_failed += 1,
            }
        }
        s.criteria = KEYS[..7]
            .iter()
            .zip(&columns)
            .map(|(k, c)| CriterionStat {
                key: k.to_string(),
                stat: Stat::of(c),
            })
            .collect();
        s.overall = Stat::of(&columns[7]);
        s.mean7 = Stat::of(&mean7);
        s
    }
}

/// The summary of a run: per split, and all splits pooled.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AlchemySummary {
    /// Per split (the task's group).
    pub per_split: BTreeMap<String, SplitSummary>,
    /// Every item.
    pub all: SplitSummary,
}

impl AlchemySummary {
    /// Summarises `(split, verdict)` rows.
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a str, &'a AlchemyVerdict)>) -> Self {
        let mut groups: BTreeMap<String, Vec<&AlchemyVerdict>> = BTreeMap::new();
        let mut all = Vec::new();
        for (split, v) in rows {
            groups.entry(split.to_string()).or_default().push(v);
            all.push(v);
        }
        Self {
            per_split: groups
                .into_iter()
                .map(|(k, vs)| (k, SplitSummary::of(vs)))
                .collect(),
            all: SplitSummary::of(all),
        }
    }

    /// The summary as a Markdown table: one column per split (then "all"), one row per
    /// criterion, the two labelled overall rows, then the counts. Cells are "mean ± σ [min–max]" to
    /// three decimals ("–" where undefined).
    pub fn to_markdown(&self) -> String {
        let cols: Vec<(&str, &SplitSummary)> = self
            .per_split
            .iter()
            .map(|(k, s)| (k.as_str(), s))
            .chain(std::iter::once(("all", &self.all)))
            .collect();
        let range = |s: &Stat| match (s.min, s.max) {
            (Some(lo), Some(hi)) => format!(" [{lo}–{hi}]"),
            _ => String::new(),
        };
        let cell = |s: &Stat| match (s.mean, s.sd) {
            (Some(m), Some(sd)) => format!("{m:.3} ± {sd:.3}{}", range(s)),
            (Some(m), None) => format!("{m:.3}{}", range(s)),
            _ => "–".to_string(),
        };
        let mut out = String::from("| criterion |");
        for (name, _) in &cols {
            out.push_str(&format!(" {name} |"));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(cols.len()));
        out.push('\n');
        let mut row = |label: &str, f: &dyn Fn(&SplitSummary) -> String| {
            out.push_str(&format!("| {label} |"));
            for (_, s) in &cols {
                out.push_str(&format!(" {} |", f(s)));
            }
            out.push('\n');
        };
        for (i, key) in KEYS[..7].iter().enumerate() {
            row(key, &|s| {
                s.criteria.get(i).map_or("–".into(), |c| cell(&c.stat))
            });
        }
        row(OVERALL_LABEL, &|s| cell(&s.overall));
        row(MEAN7_LABEL, &|s| cell(&s.mean7));
        row("items", &|s| s.items.to_string());
        row("scored", &|s| s.scored.to_string());
        row("judge failed", &|s| s.judge_failed.to_string());
        row("judge asked twice", &|s| s.reasked.to_string());
        out
    }
}

/// Pearson's correlation of paired numbers; `None` when the lengths differ, there are fewer
/// than two pairs, a value is not finite, or either side has no spread.
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n != ys.len() || n < 2 || xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return None;
    }
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        let (dx, dy) = (x - mx, y - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// 1-based ranks, tied values sharing the mean of the ranks they span.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) hold ranks i+1..=j+1: their mean.
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean;
        }
        i = j + 1;
    }
    r
}

/// Spearman's correlation: Pearson's on the ranks (ties get their average rank); `None` as
/// for [`pearson`].
pub fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return None;
    }
    pearson(&ranks(xs), &ranks(ys))
}

/// The two-sided p-value of a correlation `r` over `n` pairs under the null hypothesis of
/// no correlation: Student's t with n − 2 degrees of freedom, t = r·√((n−2)/(1−r²)), as
/// scipy's `pearsonr` and `spearmanr` compute it (the papers' tables come from scipy).
/// `None` below three pairs.
pub fn p_value(r: f64, n: usize) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if n < 3 || !r.is_finite() {
        return None;
    }
    let df = (n - 2) as f64;
    if r.abs() >= 1.0 {
        return Some(0.0);
    }
    let t = r * (df / (1.0 - r * r)).sqrt();
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * dist.sf(t.abs())).min(1.0))
}

/// ICC(3,k) of Shrout and Fleiss (1979): the consistency of the mean of k fixed raters,
/// (BMS − EMS) / BMS from the two-way ANOVA of `scores` (one row per item, one column per
/// rater, every item scored by every rater). What AlchemyBench reports for its experts'
/// agreement. `None` below two items or two raters, for ragged rows, or when the items do not
/// differ (BMS = 0).
pub fn icc3k(scores: &[Vec<f64>]) -> Option<f64> {
    let n = scores.len();
    let k = scores.first()?.len();
    if n < 2
        || k < 2
        || scores
            .iter()
            .any(|r| r.len() != k || r.iter().any(|v| !v.is_finite()))
    {
        return None;
    }
    let grand = scores.iter().flatten().sum::<f64>() / (n * k) as f64;
    let rows: f64 = scores
        .iter()
        .map(|r| (r.iter().sum::<f64>() / k as f64 - grand).powi(2))
        .sum::<f64>()
        * k as f64;
    let cols: f64 = (0..k)
        .map(|j| (scores.iter().map(|r| r[j]).sum::<f64>() / n as f64 - grand).powi(2))
        .sum::<f64>()
        * n as f64;
    let total: f64 = scores.iter().flatten().map(|v| (v - grand).powi(2)).sum();
    let bms = rows / (n - 1) as f64;
    let ems = (total - rows - cols) / ((n - 1) * (k - 1)) as f64;
    (bms > 0.0).then(|| (bms - ems) / bms)
}

/// How a person's scores agree with the judge's on the items they scored.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Pairs compared.
    pub n: usize,
    /// Pearson's r.
    pub pearson: Option<f64>,
    /// Its two-sided p-value ([`p_value`]).
    pub pearson_p: Option<f64>,
    /// Spearman's ρ.
    pub spearman: Option<f64>,
    /// Its two-sided p-value ([`p_value`]).
    pub spearman_p: Option<f64>,
}

/// The agreement over `(judge, person)` score pairs (for one criterion or the overall
/// score); pairs the person left empty are simply not given.
pub fn agreement(pairs: &[(f64, f64)]) -> Agreement {
    let (judge, person): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let n = pairs.len();
    let (r, rho) = (pearson(&judge, &person), spearman(&judge, &person));
    Agreement {
        n,
        pearson: r,
        pearson_p: r.and_then(|r| p_value(r, n)),
        spearman: rho,
        spearman_p: rho.and_then(|r| p_value(r, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) {
        let a = a.unwrap();
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn sample_sd_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squares 32, sample variance 32/7.
        let s = Stat::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        close(s.mean, 5.0);
        close(s.sd, (32.0f64 / 7.0).sqrt());
        assert_eq!((s.min, s.max), (Some(2.0), Some(9.0)));
        assert_eq!(Stat::of(&[3.0]).sd, None);
        assert_eq!(Stat::of(&[]).mean, None);
    }

    /// p-values as scipy 1.15.2 gives them (`scipy.stats.pearsonr(x, y).pvalue`,
    /// `spearmanr`), on the pairs below.
    #[test]
    fn p_values_agree_with_scipy() {
        let a = agreement(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
                .into_iter()
                .zip([2.0, 1.0, 4.0, 3.0, 6.0, 5.0])
                .collect::<Vec<_>>(),
        );
        let near = |x: Option<f64>, y: f64| {
            let x = x.unwrap();
            assert!((x - y).abs() <= 1e-12 * y.max(1e-300) + 1e-15, "{x} vs {y}");
        };
        near(a.pearson_p, 0.04156268221574357);
        near(a.spearman_p, 0.04156268221574334);
        let xs = [1.5, 2.0, 2.0, 3.5, 4.0, 5.0, 4.5];
        let ys = [1.0, 2.5, 2.0, 3.0, 4.5, 5.0, 3.0];
        let a = agreement(&xs.into_iter().zip(ys).collect::<Vec<_>>());
        near(a.pearson, 0.8722783759886469);
        near(a.pearson_p, 0.010440791696539003);
        near(a.spearman, 0.9272727272727274);
        near(a.spearman_p, 0.0026336810953398473);
        assert_eq!(p_value(0.5, 2), None);
        assert_eq!(p_value(1.0, 5), Some(0.0));
    }

    /// Shrout and Fleiss (1979), Table 2: six targets, four judges; their Table 4 gives
    /// ICC(3,4) = 0.91 (to two decimals). By hand: BMS = 11.24, EMS = 1.02.
    #[test]
    fn icc3k_of_shrout_and_fleiss() {
        let data = [
            [9.0, 2.0, 5.0, 8.0],
            [6.0, 1.0, 3.0, 2.0],
            [8.0, 4.0, 6.0, 8.0],
            [7.0, 1.0, 2.0, 6.0],
            [10.0, 5.0, 6.0, 9.0],
            [6.0, 2.0, 4.0, 7.0],
        ];
        let rows: Vec<Vec<f64>> = data.iter().map(|r| r.to_vec()).collect();
        let icc = icc3k(&rows).unwrap();
        assert!(
            (icc - (11.241_666_666_666_667 - 1.019_444_444_444_444_4) / 11.241_666_666_666_667)
                .abs()
                < 1e-12,
            "{icc}"
        );
        assert_eq!((icc * 100.0).round() / 100.0, 0.91);
        assert_eq!(icc3k(&rows[..1]), None);
        assert_eq!(icc3k(&[vec![3.0, 3.0], vec![3.0, 3.0]]), None);
        assert_eq!(icc3k(&[vec![3.0, 3.0], vec![3.0]]), None);
    }

    #[test]
    fn pearson_by_hand() {
        // x = 1..5, y = 2, 4, 5, 4, 5: dx = -2..2, dy = -2, 0, 1, 0, 1;
        // Σdxdy = 4 + 0 + 0 + 0 + 2 = 6, Σdx² = 10, Σdy² = 6 → r = 6/√60.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 4.0, 5.0, 4.0, 5.0];
        close(pearson(&x, &y), 6.0 / 60f64.sqrt());
        close(pearson(&x, &[10.0, 8.0, 6.0, 4.0, 2.0]), -1.0);
        assert_eq!(pearson(&x, &[3.0; 5]), None);
        assert_eq!(pearson(&x, &y[..4]), None);
        assert_eq!(pearson(&[1.0], &[2.0]), None);
        assert_eq!(pearson(&[1.0, f64::NAN], &[2.0, 3.0]), None);
    }

    #[test]
    fn spearman_with_ties_by_hand() {
        // y = 2, 4, 5, 4, 5 ranks as 1, 2.5, 4.5, 2.5, 4.5; x ranks 1..5.
        assert_eq!(ranks(&[2.0, 4.0, 5.0, 4.0, 5.0]), [1.0, 2.5, 4.5, 2.5, 4.5]);
        // Rank means 3 and 3; dx = -2..2; dy = -2, -0.5, 1.5, -0.5, 1.5: Σdxdy = 4 + 0.5 + 0
        // - 0.5 + 3 = 7; Σdx² = 10; Σdy² = 4 + 0.25 + 2.25 + 0.25 + 2.25 = 9 → ρ = 7/√90.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 4.0, 5.0, 4.0, 5.0];
        close(spearman(&x, &y), 7.0 / 90f64.sqrt());
        // Monotone but not linear: ρ = 1, r < 1.
        let cubes = [1.0, 8.0, 27.0, 64.0, 125.0];
        close(spearman(&x, &cubes), 1.0);
        assert!(pearson(&x, &cubes).unwrap() < 0.99);
        let a = agreement(&[(1.0, 2.0), (2.0, 4.0), (3.0, 5.0), (4.0, 4.0), (5.0, 5.0)]);
        assert_eq!(a.n, 5);
        close(a.pearson, 6.0 / 60f64.sqrt());
    }
}
