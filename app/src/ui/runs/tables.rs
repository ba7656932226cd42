//! The papers' tables of the shown runs (`GET /api/report`), as `atomworld report` prints
//! them: each with its source in the paper, a chart of its first number per run, a column
//! per model (mean ± std over repeats), and links to the same report as CSV, Markdown,
//! JSON and SVG (the charts).

use benchmarks::task::layout::PaperTable;
use benchmarks::task::report::Report;
use leptos::prelude::*;

/// The report's address for `ids` in `format`.
fn report_url(ids: &[String], format: &str) -> String {
    let runs: Vec<String> = ids.iter().map(|id| crate::api::url_segment(id)).collect();
    format!("/api/report?runs={}&format={format}", runs.join(","))
}

/// The papers' tables of the finished runs `ids`.
#[component]
pub fn PaperTables(ids: Vec<String>) -> impl IntoView {
    let url = report_url(&ids, "json");
    let report = LocalResource::new(move || {
        let url = url.clone();
        async move { crate::api::get::<Report>(&url).await }
    });
    let links = ["csv", "md", "json", "svg"].map(|f| {
        let href = report_url(&ids, f);
        let name = match f {
            "csv" => "CSV",
            "md" => "Markdown",
            "svg" => "SVG (charts)",
            _ => "JSON",
        };
        view! { <a class="export" data-format=f href=href download>{name}</a> }
    });
    view! {
        <section id="paper-tables">
            <h3>"The papers' tables"</h3>
            <p class="exports">"Download: " {links.into_iter().collect_view()}</p>
            {move || match report.get() {
                None => view! { <p class="muted">"tabling…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
                Some(Ok(r)) if r.paper.is_empty() => view! {
                    <p class="muted">"These runs' suites declare no paper tables; every number is in the downloads."</p>
                }.into_any(),
                Some(Ok(r)) => r.paper.into_iter().map(|t| view! { <OneTable table=t /> }).collect_view().into_any(),
            }}
        </section>
    }
}

/// One paper table.
#[component]
fn OneTable(table: PaperTable) -> impl IntoView {
    let repeats = table.repeats.clone();
    view! {
        <figure class="paper-table">
            <figcaption><strong>{table.title.clone()}</strong>" "<span class="small muted">{format!("({})", table.source)}</span></figcaption>
            {super::charts::table_chart(&table)}
            <div class="scroll-x">
                <table class="results">
                    <thead><tr>
                        <th>{table.row_heading.clone()}</th>
                        {table.columns.iter().zip(repeats).map(|(c, n)| {
                            let times = if n > 1 { format!(" ×{n}") } else { String::new() };
                            view! { <th>{format!("{c}{times}")}</th> }
                        }).collect_view()}
                    </tr></thead>
                    <tbody>
                        {table.rows.into_iter().map(|row| view! {
                            <tr>
                                <td>{row.label}</td>
                                {row.cells.into_iter().map(|c| view! {
                                    <td class="num">{c.map_or_else(|| "–".to_string(), |c| c.text())}</td>
                                }).collect_view()}
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </figure>
    }
}

/// A run's headline: the table the suite wrote, with the lines after it, else its text as
/// written.
#[component]
pub fn Headline(text: String, run: String) -> impl IntoView {
    match benchmarks::task::pipe_table(&text) {
        Some(((header, rows), rest)) => {
            let rest = (!rest.is_empty())
                .then(|| view! { <pre class="run-headline-notes small">{rest}</pre> });
            view! {
                <div class="table-scroll">
                    <table class="run-headline small headline-table" data-run=run>
                        <thead><tr>{header.into_iter().map(|h| view! { <th>{h}</th> }).collect_view()}</tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| view! {
                                <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
                {rest}
            }
            .into_any()
        }
        None => view! { <pre class="run-headline small" data-run=run>{text}</pre> }.into_any(),
    }
}
