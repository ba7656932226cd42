//! How a verdict is shown: the label, the check that decided, and the numbers with units.

use benchmarks::atomworld::evaluate::{Label, Verdict};
use benchmarks::atomworld::same_crystal::{SameCrystal, SAME_CRYSTAL_MATCHER};
use leptos::prelude::*;

fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("—".into(), |v| format!("{v:.digits$}"))
}

/// Why answers cannot be scored in this browser (nothing while they can): the scoring
/// worker's failure.
#[component]
pub fn ScoringFailure(failure: RwSignal<Option<String>>) -> impl IntoView {
    move || {
        failure.get().map(|why| {
            let text = format!(
                "Answers cannot be scored in this browser: {why}. The playground scores them in \
                 a Web Worker; reload the page, or use a current Chrome, Firefox or Safari."
            );
            view! { <p class="error" id="scoring-failed" role="alert">{text}</p> }
        })
    }
}

/// One verdict, explained.
#[component]
pub fn VerdictView(verdict: Verdict) -> impl IntoView {
    let class = if verdict.label == Label::Success {
        "verdict success"
    } else {
        "verdict failure"
    };
    let parse_line = verdict.parse_error.as_ref().and_then(|e| {
        let pos = e.pos?;
        let line = verdict
            .extracted_cif
            .as_ref()?
            .lines()
            .nth(pos.line.checked_sub(1)?)?;
        Some(format!("line {}, column {}: {}", pos.line, pos.col, line))
    });
    view! {
        <div class=class id="verdict" data-label=verdict.label.name()>
            <p class="label">{verdict.label.name()}</p>
            <p class="detail">{verdict.detail.clone()}</p>
            {parse_line.map(|l| view! { <pre class="parse-line" id="parse-line">{l}</pre> })}
            {(!verdict.count_diff.is_empty()).then(|| view! {
                <table class="counts">
                    <tr><th>"element"</th><th>"target"</th><th>"answer"</th></tr>
                    {verdict.count_diff.iter().map(|d| view! {
                        <tr><td>{d.element.clone()}</td><td>{d.target}</td><td>{d.predicted}</td></tr>
                    }).collect_view()}
                </table>
            })}
            {verdict.max_dist.map(|_| view! {
                <dl class="numbers">
                    <dt>"rms"</dt><dd id="rms">{num(verdict.rms, 4)}</dd>
                    <dt>"max_dist"</dt><dd id="max-dist">{num(verdict.max_dist, 4)}</dd>
                    <dt>"max_dist (Å)"</dt><dd id="max-dist-angstrom">{num(verdict.max_dist_angstrom, 3)}</dd>
                </dl>
                <p class="muted small">
                    "rms and max_dist are normalised by (V/n)^(1/3), as pymatgen reports them, not Ångström; "
                    "the matcher accepts max_dist ≤ 0.5."
                </p>
            })}
            {verdict.closest.clone().map(|c| view! {
                <div class="closest" id="closest">
                    <p class="small">
                        "No fit: in every candidate match some site stays farther than 0.5 \
                         (normalised) from its partner. The closest match (smallest RMS, which \
                         the overlay draws) is not a score:"
                    </p>
                    <dl class="numbers">
                        <dt>"rms"</dt><dd id="closest-rms">{num(Some(c.rms), 4)}</dd>
                        <dt>"max_dist"</dt><dd id="closest-max-dist">{num(Some(c.max_dist), 4)}</dd>
                        <dt>"max_dist (Å)"</dt><dd id="closest-max-dist-angstrom">{num(Some(c.max_dist_angstrom), 3)}</dd>
                    </dl>
                </div>
            })}
            {verdict.same_crystal.map(|s| same_crystal_view(s, verdict.label == Label::Success))}
        </div>
    }
}

/// The second, labelled verdict: the same crystal in any cell?
fn same_crystal_view(s: SameCrystal, success: bool) -> impl IntoView {
    let answer = if s.fit { "yes" } else { "no" };
    let note = match (success, s.fit) {
        (false, true) => {
            " The benchmark is stricter than chemistry here: the answer is the target's \
             crystal written in another cell (a primitive cell, another supercell or setting), \
             which the benchmark's matcher (primitive_cell=False) does not try."
        }
        (true, false) => {
            " The benchmark passes it, but in a primitive cell some site is farther than 0.5 \
             from its partner."
        }
        _ => "",
    };
    view! {
        <p class="same-crystal small" id="same-crystal" data-fit=answer>
            <strong>"Same crystal? " {answer}</strong>
            {s.max_dist.map(|m| format!(" (max_dist {m:.4})"))}
            {format!(" — a second opinion, not the score: {SAME_CRYSTAL_MATCHER}, any equivalent cell.")}
            {note}
        </p>
    }
}
