//! The runs page's charts as inline SVG: success rate per group (one bar per run in each
//! group: AtomWorld's actions, OmniMatBench's subfields, …), the distribution of max_dist over
//! successes, and a paper table's first number as bars.

use benchmarks::atomworld::evaluate::Label;
use benchmarks::task::chart::{TableChart, AXIS_X, BAR_H, WIDTH};
use benchmarks::task::layout::PaperTable;
use leptos::prelude::*;
use wire::{ResultRow, RunView};

/// Bar colours, one per run shown (cycled): the report's.
pub use benchmarks::task::chart::RUN_COLOURS;

/// Screen pixels per SVG unit at the charts' widest: the success chart is as wide as its
/// groups need, so its labels stay at the page's size for two groups as for ten.
const PX_PER_UNIT: f64 = 760.0 / 600.0;

/// Success rate per group, one bar group per group the runs have, one bar per run.
pub fn success_chart(runs: &[(String, RunView)]) -> impl IntoView {
    let group = 58.0;
    let width = (group - 12.0) / runs.len().max(1) as f64;
    let groups: std::collections::BTreeSet<String> = runs
        .iter()
        .flat_map(|(_, v)| v.summary.table.per_group.keys().cloned())
        .collect();
    let span = 20.0 + groups.len().max(1) as f64 * group;
    let bars = groups
        .into_iter()
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
                        .get(&a)
                        .map_or(0.0, |g| g.success_rate);
                    // A 0 % bar is drawn as a 2-unit stub, so a run that failed everything is
                    // seen (its title and data say 0 %).
                    let h = (rate * 110.0).round().max(2.0);
                    let x = x0 + k as f64 * width;
                    view! {
                        <g class="bar" data-action=a.clone() data-model=model.clone() data-rate=format!("{rate:.3}")>
                            <rect x=x y=125.0 - h width=width - 1.0 height=h fill=RUN_COLOURS[k % RUN_COLOURS.len()]>
                                <title>{format!("{model}, {a}: {:.0}%", rate * 100.0)}</title>
                            </rect>
                        </g>
                    }
                })
                .collect_view();
            // A few short lines (`insert` over `between`): whole names are wider than a group
            // and ran into their neighbours; the bar's title has the name whole.
            let centre = x0 + (group - 12.0) / 2.0;
            let words = label_lines(&a)
                .into_iter()
                .enumerate()
                .map(|(line, word)| view! {
                    <tspan x=centre dy=if line == 0 { "0" } else { "9" }>{word}</tspan>
                })
                .collect_view();
            view! {
                {runs_bars}
                <text class="action-label" data-action=a x=centre y="137" text-anchor="middle" font-size="8">{words}</text>
            }
        })
        .collect_view();
    view! {
        <svg id="success-chart" viewBox=format!("0 0 {span} 166") class="chart" style:max-width=format!("{:.0}px", span * PX_PER_UNIT)
            role="img" aria-label="success rate per group and run">
            <line x1="5" y1="125" x2=span - 5.0 y2="125" stroke="#999"></line>
            <line x1="5" y1="15" x2=span - 5.0 y2="15" stroke="#ddd" stroke-dasharray="3 3"></line>
            <text x=span - 3.0 y="18" font-size="7" text-anchor="end">"100%"</text>
            {bars}
        </svg>
    }
}

/// A group's name in at most three lines of about ten characters (words split at spaces and
/// underscores; what does not fit ends in "…").
fn label_lines(name: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in name.split(['_', ' ']).filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= 10 => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    if lines.len() > 3 {
        lines.truncate(3);
        lines[2].push('…');
    }
    lines
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

/// A paper table as bars: per row, one bar per run for the table's first number, laid out by
/// [`TableChart`] (the same drawing `atomworld report --format svg` writes).
pub fn table_chart(table: &PaperTable) -> impl IntoView {
    let chart = TableChart::of(table);
    let height = chart.height;
    let rows = chart
        .rows
        .into_iter()
        .map(|row| {
            let bars = row
                .bars
                .into_iter()
                .map(|b| {
                    view! {
                        <g class="bar" data-label=row.label.clone() data-run=b.run.clone() data-value=format!("{:.3}", b.value)>
                            <rect x=b.x y=b.y width=b.width height=BAR_H fill=RUN_COLOURS[b.run_index % RUN_COLOURS.len()]>
                                <title>{format!("{}, {}: {:.3}", b.run, row.label, b.value)}</title>
                            </rect>
                            <text x=b.x + b.width + 4.0 y=b.y + 6.0 font-size="7">{format!("{:.2}", b.value)}</text>
                        </g>
                    }
                })
                .collect_view();
            view! {
                <text x=AXIS_X - 5.0 y=row.label_y font-size="7" text-anchor="end">{row.short}</text>
                {bars}
            }
        })
        .collect_view();
    view! {
        <svg class="chart table-chart" viewBox=format!("0 0 {WIDTH} {height}") role="img" aria-label=chart.caption>
            <line x1=AXIS_X y1="2" x2=AXIS_X y2=height - 2.0 stroke="#999"></line>
            {rows}
        </svg>
    }
}
