//! A paper table drawn as bars: per row, one bar per run for the table's first number (a rate
//! or a mean). The geometry is computed here once, so the Runs page (Leptos SVG) and
//! `atomworld report --format svg` (a standalone SVG file) draw the same picture.

use super::layout::PaperTable;

/// Bar colours, one per run (cycled).
pub const RUN_COLOURS: [&str; 6] = [
    "#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#718096",
];

/// Width of the drawing (its viewBox) and where the bars start (the labels end there).
pub const WIDTH: f64 = 600.0;
/// x of the bars' axis.
pub const AXIS_X: f64 = 200.0;
/// Length of a bar at the scale's top.
const BAR_SPAN: f64 = 330.0;
/// Height of one bar.
pub const BAR_H: f64 = 7.0;
/// Characters of a row label kept on the chart (its bars' titles have it whole).
const LABEL_CHARS: usize = 44;

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The run's heading.
    pub run: String,
    /// Which run (its colour: [`RUN_COLOURS`]).
    pub run_index: usize,
    /// The number drawn.
    pub value: f64,
    /// Top-left corner and length.
    pub x: f64,
    /// Top of the bar.
    pub y: f64,
    /// Length of the bar.
    pub width: f64,
}

/// One row: its label and bars.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartRow {
    /// The row's label, whole.
    pub label: String,
    /// The label as drawn (underscores as spaces, shortened).
    pub short: String,
    /// Baseline of the label.
    pub label_y: f64,
    /// One bar per run that has the number.
    pub bars: Vec<Bar>,
}

/// A table's bars, laid out.
#[derive(Clone, Debug, PartialEq)]
pub struct TableChart {
    /// What is drawn: the table's title and the number's heading.
    pub caption: String,
    /// Height of the drawing.
    pub height: f64,
    /// The rows, top to bottom.
    pub rows: Vec<ChartRow>,
}

impl TableChart {
    /// The bars of `table`: its first number per run and row, scaled to 1 when every value
    /// is at most 1 (rates), else to the largest.
    pub fn of(table: &PaperTable) -> TableChart {
        let per_run = table.values.len().max(1);
        let runs: Vec<&str> = table
            .columns
            .iter()
            .step_by(per_run)
            .map(|c| c.rsplit_once(": ").map_or(c.as_str(), |(run, _)| run))
            .collect();
        let values: Vec<(&str, Vec<Option<f64>>)> = table
            .rows
            .iter()
            .map(|r| {
                let firsts = r
                    .cells
                    .iter()
                    .step_by(per_run)
                    .map(|c| c.map(|c| c.mean))
                    .collect();
                (r.label.as_str(), firsts)
            })
            .collect();
        let largest = values
            .iter()
            .flat_map(|(_, v)| v.iter().flatten())
            .fold(0.0f64, |a, b| a.max(*b));
        let top = if largest <= 1.0 { 1.0 } else { largest };
        let row_h = 8.0 * runs.len().max(1) as f64 + 6.0;
        let rows = values
            .iter()
            .enumerate()
            .map(|(r, (label, vs))| {
                let y0 = 8.0 + r as f64 * row_h;
                let bars = vs
                    .iter()
                    .enumerate()
                    .filter_map(|(k, v)| v.map(|v| (k, v)))
                    .map(|(k, value)| Bar {
                        run: runs.get(k).copied().unwrap_or_default().to_string(),
                        run_index: k,
                        value,
                        x: AXIS_X,
                        y: y0 + k as f64 * 8.0,
                        width: (value / top).clamp(0.0, 1.0) * BAR_SPAN,
                    })
                    .collect();
                ChartRow {
                    label: label.to_string(),
                    short: label.replace('_', " ").chars().take(LABEL_CHARS).collect(),
                    label_y: y0 + 6.0,
                    bars,
                }
            })
            .collect();
        TableChart {
            caption: format!(
                "{}: {}",
                table.title,
                table.values.first().cloned().unwrap_or_default()
            ),
            height: 12.0 + row_h * values.len() as f64,
            rows,
        }
    }

    /// Height of [`TableChart::elements`]: the bars and the legend under them.
    pub fn drawn_height(&self) -> f64 {
        self.height + 14.0
    }

    /// As a standalone SVG document.
    pub fn svg(&self, source: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {h}\" \
             font-family=\"sans-serif\" role=\"img\" aria-label=\"{caption}\">\n\
             <title>{caption} ({source})</title>\n{body}</svg>\n",
            h = self.drawn_height(),
            caption = xml(&self.caption),
            source = xml(source),
            body = self.elements(),
        )
    }

    /// The chart's SVG elements (axis, labels, bars, legend), from y = 0.
    pub fn elements(&self) -> String {
        let mut s = format!(
            "<line x1=\"{AXIS_X}\" y1=\"2\" x2=\"{AXIS_X}\" y2=\"{}\" stroke=\"#999\"/>\n",
            self.height - 2.0
        );
        for row in &self.rows {
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" font-size=\"7\" text-anchor=\"end\">{}</text>\n",
                AXIS_X - 5.0,
                row.label_y,
                xml(&row.short)
            ));
            for b in &row.bars {
                s.push_str(&format!(
                    "<rect x=\"{}\" y=\"{}\" width=\"{:.2}\" height=\"{BAR_H}\" fill=\"{}\">\
                     <title>{}, {}: {:.3}</title></rect>\
                     <text x=\"{:.2}\" y=\"{}\" font-size=\"7\">{:.2}</text>\n",
                    b.x,
                    b.y,
                    b.width,
                    RUN_COLOURS[b.run_index % RUN_COLOURS.len()],
                    xml(&b.run),
                    xml(&row.label),
                    b.value,
                    b.x + b.width + 4.0,
                    b.y + 6.0,
                    b.value
                ));
            }
        }
        // The legend: one swatch per run, under the bars.
        let runs: Vec<(usize, &str)> = {
            let mut seen: Vec<(usize, &str)> = Vec::new();
            for b in self.rows.iter().flat_map(|r| &r.bars) {
                if !seen.iter().any(|(k, _)| *k == b.run_index) {
                    seen.push((b.run_index, &b.run));
                }
            }
            seen.sort_by_key(|(k, _)| *k);
            seen
        };
        let mut x = AXIS_X;
        for (k, run) in runs {
            s.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"7\" height=\"7\" fill=\"{}\"/>\
                 <text x=\"{tx}\" y=\"{ty}\" font-size=\"7\">{}</text>\n",
                RUN_COLOURS[k % RUN_COLOURS.len()],
                xml(run),
                y = self.height + 2.0,
                tx = x + 10.0,
                ty = self.height + 8.0,
            ));
            x += 20.0 + 4.0 * run.chars().count() as f64;
        }
        s
    }
}

/// Several tables' charts in one SVG document, each under its caption and source (what
/// `atomworld report --format svg` writes).
pub fn svg_document(tables: &[PaperTable]) -> String {
    const CAPTION_H: f64 = 16.0;
    let mut body = String::new();
    let mut y = 4.0;
    for t in tables {
        let chart = TableChart::of(t);
        body.push_str(&format!(
            "<text x=\"4\" y=\"{}\" font-size=\"9\" font-weight=\"bold\">{} ({})</text>\n\
             <g transform=\"translate(0 {})\">\n{}</g>\n",
            y + 10.0,
            xml(&chart.caption),
            xml(&t.source),
            y + CAPTION_H,
            chart.elements()
        ));
        y += CAPTION_H + chart.drawn_height() + 8.0;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {y}\" \
         font-family=\"sans-serif\" role=\"img\" aria-label=\"the papers' tables\">\n{body}</svg>\n"
    )
}

/// `text` safe inside XML text and attribute values.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::layout::PaperRow;
    use crate::task::report::Cell;

    fn cell(mean: f64) -> Option<Cell> {
        Some(Cell {
            mean,
            std: None,
            n: 1,
        })
    }

    #[test]
    fn bars_scale_to_one_for_rates_and_to_the_largest_otherwise() {
        let mut table = PaperTable {
            title: "Success <rate>".into(),
            source: "Table 1".into(),
            row_heading: "action".into(),
            columns: vec!["gpt-a".into(), "gpt-b".into()],
            values: Vec::new(),
            repeats: vec![1, 1],
            rows: vec![
                PaperRow {
                    label: "move_towards".into(),
                    cells: vec![cell(0.5), None],
                },
                PaperRow {
                    label: "swap".into(),
                    cells: vec![cell(1.0), cell(0.25)],
                },
            ],
            ..Default::default()
        };
        let chart = TableChart::of(&table);
        assert_eq!(chart.rows[0].short, "move towards");
        assert_eq!(
            chart.rows[0].bars.len(),
            1,
            "no bar where the run has no number"
        );
        assert_eq!(chart.rows[1].bars[0].width, BAR_SPAN);
        assert_eq!(chart.rows[1].bars[1].width, BAR_SPAN / 4.0);
        assert_eq!(chart.rows[1].bars[1].run, "gpt-b");
        // Means of 1-5 scores: the largest is the top.
        table.rows[1].cells[0] = cell(4.0);
        let chart = TableChart::of(&table);
        assert_eq!(chart.rows[1].bars[0].width, BAR_SPAN);
        assert_eq!(chart.rows[0].bars[0].width, BAR_SPAN / 8.0);
        let svg = chart.svg(&table.source);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("<title>Success &lt;rate&gt;: "), "{svg}");
        assert_eq!(
            svg.matches("<rect").count(),
            3 + 2,
            "three bars, two legend swatches"
        );
        assert!(svg.contains(">4.00</text>"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Two tables in one document, the second below the first.
        let both = svg_document(&[table.clone(), table]);
        assert_eq!(both.matches("<g transform=").count(), 2);
        assert_eq!(both.matches("(Table 1)</text>").count(), 2);
    }
}
