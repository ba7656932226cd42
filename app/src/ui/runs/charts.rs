//! The runs page's charts as inline SVG: success rate per action (one bar per run in each
//! action's group) and the distribution of max_dist over successes.

use benchmarks::atomworld::evaluate::Label;
use benchmarks::atomworld::ActionKind;
use leptos::prelude::*;
use wire::{ResultRow, RunView};

/// Bar colours, one per run shown (cycled).
pub const RUN_COLOURS: [&str; 6] = [
    "#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#718096",
];

/// Success rate per action, one bar group per action, one bar per run.
pub fn success_chart(runs: &[(String, RunView)]) -> impl IntoView {
    let group = 58.0;
    let width = (group - 12.0) / runs.len().max(1) as f64;
    let bars = ActionKind::BENCHMARK
        .iter()
        .map(|k| k.name())
        .enumerate()
        .map(|(i, a)| {
            let x0 = 10.0 + i as f64 * group;
            let runs_bars = runs
                .iter()
                .enumerate()
                .map(|(k, (model, v))| {
                    let rate = v
                        .summary
                        .table
                        .per_group
                        .get(a)
                        .map_or(0.0, |g| g.success_rate);
                    // A 0 % bar is drawn as a 2-unit stub, so a run that failed everything is
                    // seen (its title and data say 0 %).
                    let h = (rate * 110.0).round().max(2.0);
                    let x = x0 + k as f64 * width;
                    view! {
                        <g class="bar" data-action=a data-model=model.clone() data-rate=format!("{rate:.3}")>
                            <rect x=x y=125.0 - h width=width - 1.0 height=h fill=RUN_COLOURS[k % RUN_COLOURS.len()]>
                                <title>{format!("{model}, {a}: {:.0}%", rate * 100.0)}</title>
                            </rect>
                        </g>
                    }
                })
                .collect_view();
            // One word a line (`insert` over `between`): whole names are wider than a group
            // and ran into their neighbours.
            let centre = x0 + (group - 12.0) / 2.0;
            let words = a
                .split('_')
                .enumerate()
                .map(|(line, word)| view! {
                    <tspan x=centre dy=if line == 0 { "0" } else { "9" }>{word.to_string()}</tspan>
                })
                .collect_view();
            view! {
                {runs_bars}
                <text class="action-label" data-action=a x=centre y="137" text-anchor="middle" font-size="8">{words}</text>
            }
        })
        .collect_view();
    view! {
        <svg id="success-chart" viewBox="0 0 600 152" class="chart" role="img" aria-label="success rate per action and run">
            <line x1="5" y1="125" x2="595" y2="125" stroke="#999"></line>
            <line x1="5" y1="15" x2="595" y2="15" stroke="#ddd" stroke-dasharray="3 3"></line>
            <text x="597" y="18" font-size="7" text-anchor="end">"100%"</text>
            {bars}
        </svg>
    }
}

/// Bins of the max_dist histogram (normalised units; the matcher accepts ≤ 0.5).
const BINS: usize = 10;
const BIN_WIDTH: f64 = 0.05;

/// How many successes of each run fall in each max_dist bin (the last bin also takes larger
/// values).
pub fn histogram(results: &[ResultRow]) -> [usize; BINS] {
    let mut counts = [0; BINS];
    for r in results {
        if let Some(d) = r
            .verdict
            .as_ref()
            .and_then(|v| v.atomworld())
            .filter(|v| v.label == Label::Success)
            .and_then(|v| v.max_dist)
        {
            counts[((d / BIN_WIDTH) as usize).min(BINS - 1)] += 1;
        }
    }
    counts
}

/// The distribution of max_dist over the successes of each run.
pub fn max_dist_chart(runs: &[(String, [usize; BINS])]) -> impl IntoView {
    let peak = runs
        .iter()
        .flat_map(|(_, h)| h.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let group = 58.0;
    let width = (group - 12.0) / runs.len().max(1) as f64;
    let bars = (0..BINS)
        .map(|b| {
            let x0 = 10.0 + b as f64 * group;
            let run_bars = runs
                .iter()
                .enumerate()
                .map(|(k, (model, h))| {
                    let n = h[b];
                    let height = (n as f64 / peak as f64 * 110.0).round();
                    view! {
                        <rect class="bin" data-model=model.clone() data-bin=b data-count=n
                            x=x0 + k as f64 * width y=125.0 - height width=width - 1.0 height=height
                            fill=RUN_COLOURS[k % RUN_COLOURS.len()]>
                            <title>{format!("{model}: {n} successes with max_dist in [{:.2}, {:.2})", b as f64 * BIN_WIDTH, (b + 1) as f64 * BIN_WIDTH)}</title>
                        </rect>
                    }
                })
                .collect_view();
            let label = if b == BINS - 1 {
                format!("≥{:.2}", b as f64 * BIN_WIDTH)
            } else {
                format!("{:.2}", b as f64 * BIN_WIDTH)
            };
            view! {
                {run_bars}
                <text x=x0 y="140" font-size="8">{label}</text>
            }
        })
        .collect_view();
    view! {
        <svg id="max-dist-chart" viewBox="0 0 600 160" class="chart" role="img" aria-label="max_dist of successes">
            <line x1="5" y1="125" x2="595" y2="125" stroke="#999"></line>
            // Under the bin labels, never beside them.
            <text x="597" y="155" font-size="7" text-anchor="end">"max_dist (normalised)"</text>
            {bars}
        </svg>
    }
}

/// One labelled figure per run, for a suite's headline chart.
struct Figures {
    /// What is charted, for the heading.
    title: &'static str,
    /// The chart's kind (`data-kind`, for tests and styling).
    kind: &'static str,
    /// The scale's top (1 for rates, 5 for the judge's 1–5 scores).
    top: f64,
    /// Per label, each run's value (`None`: that run has none).
    rows: Vec<(String, Vec<Option<f64>>)>,
}

/// The suites' own figures from each run's headline: OmniMatBench's slot accuracy per
/// subfield (exact mode) and AlchemyBench's mean judge score per criterion (all splits).
fn headline_figures(runs: &[(String, RunView)]) -> Vec<Figures> {
    use std::collections::BTreeMap;
    let mut subfields: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
    let mut criteria: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    for (k, (_, v)) in runs.iter().enumerate() {
        let Some(h) = &v.summary.headline else {
            continue;
        };
        if let Ok(s) =
            serde_json::from_value::<benchmarks::omnimat::cal::CalSummary>(h.json.clone())
        {
            for (name, sub) in s.per_subfield {
                subfields
                    .entry(name)
                    .or_insert_with(|| vec![None; runs.len()])[k] = Some(sub.slot_accuracy.exact);
            }
        } else if let Ok(s) =
            serde_json::from_value::<benchmarks::alchemy::summary::AlchemySummary>(h.json.clone())
        {
            for c in s.all.criteria {
                let row = match criteria.iter().position(|(key, _)| *key == c.key) {
                    Some(i) => i,
                    None => {
                        criteria.push((c.key.clone(), vec![None; runs.len()]));
                        criteria.len() - 1
                    }
                };
                criteria[row].1[k] = c.stat.mean;
            }
        }
    }
    let mut out = Vec::new();
    if !subfields.is_empty() {
        out.push(Figures {
            title: "Slot accuracy per subfield (exact mode)",
            kind: "subfields",
            top: 1.0,
            rows: subfields.into_iter().collect(),
        });
    }
    if !criteria.is_empty() {
        out.push(Figures {
            title: "Judge's mean score per criterion (1–5, all splits)",
            kind: "criteria",
            top: 5.0,
            rows: criteria,
        });
    }
    out
}

/// The suites' headline charts (horizontal bars, one per run in each row), when the runs
/// shown have any.
pub fn headline_charts(runs: &[(String, RunView)]) -> impl IntoView {
    headline_figures(runs)
        .into_iter()
        .map(|f| {
            let per_row = runs.len().max(1) as f64;
            let row_h = 8.0 * per_row + 6.0;
            let height = 12.0 + row_h * f.rows.len() as f64;
            let rows = f
                .rows
                .iter()
                .enumerate()
                .map(|(r, (label, values))| {
                    let y0 = 8.0 + r as f64 * row_h;
                    let bars = values
                        .iter()
                        .enumerate()
                        .filter_map(|(k, v)| v.map(|v| (k, v)))
                        .map(|(k, v)| {
                            let w = (v / f.top).clamp(0.0, 1.0) * 330.0;
                            let y = y0 + k as f64 * 8.0;
                            let model = runs.get(k).map(|(m, _)| m.clone()).unwrap_or_default();
                            view! {
                                <g class="bar" data-label=label.clone() data-model=model.clone() data-value=format!("{v:.3}")>
                                    <rect x="200" y=y width=w height="7" fill=RUN_COLOURS[k % RUN_COLOURS.len()]>
                                        <title>{format!("{model}, {label}: {v:.3}")}</title>
                                    </rect>
                                    <text x=204.0 + w y=y + 6.0 font-size="7">{format!("{v:.2}")}</text>
                                </g>
                            }
                        })
                        .collect_view();
                    // Long names are shortened on the chart; the bar's title has them whole.
                    let short: String = label.replace('_', " ").chars().take(44).collect();
                    view! {
                        <text x="195" y=y0 + 6.0 font-size="7" text-anchor="end">{short}</text>
                        {bars}
                    }
                })
                .collect_view();
            view! {
                <h3>{f.title}</h3>
                <svg class="chart headline-chart" data-kind=f.kind viewBox=format!("0 0 600 {height}") role="img" aria-label=f.title>
                    <line x1="200" y1="2" x2="200" y2=height - 2.0 stroke="#999"></line>
                    {rows}
                </svg>
            }
        })
        .collect_view()
}
