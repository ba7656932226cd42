//! The CIF-Repair probe: a CIF damaged in one way (a line removed or data names replaced),
//! shown as a diff; the model repairs it; the repaired CIF is scored as an AtomWorld answer
//! against the original.

use benchmarks::probes::cif_repair::corruption::Corruption;
use benchmarks::probes::cif_repair::evaluate::PLACEHOLDER;
use benchmarks::probes::cif_repair::generator::{generate, RepairTaskSpec};
use engine::cif::read_cif;
use leptos::prelude::*;
use matcher_worker::{Outcome, Work};

use super::{answer_and_verdict, AnswerBox, PromptView, SeedRow};
use crate::ui::canvas::StructureCanvas;
use crate::ui::verdict::VerdictView;

/// The corruption in words.
fn describe(c: &Corruption) -> String {
    match c {
        Corruption::RemovedLine {
            tag,
            value: Some(v),
        } => {
            format!("the line {tag} (value {v}) was removed")
        }
        Corruption::RemovedLine { tag, value: None } => format!("the line {tag} was removed"),
        Corruption::Renamed { renames, .. } => format!(
            "data names replaced: {}",
            renames
                .iter()
                .map(|(a, b)| format!("{a} → {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The CIF-Repair probe.
#[component]
pub fn RepairProbe() -> impl IntoView {
    let seed = RwSignal::new(1u64);
    let task = Memo::new(move |_| {
        generate(&RepairTaskSpec::new(seed.get(), 1))
            .into_iter()
            .next()
    });
    let scored = answer_and_verdict(
        task,
        |t, answer| Work::Repair {
            original_cif: t.original_cif.clone(),
            removed_value: t.corruption.removed_value().map(str::to_string),
            answer,
        },
        Outcome::into_repair,
    );
    let (answer, verdict) = (scored.answer, scored.verdict);
    let prompt = Signal::derive(move || task.get().map(|t| t.prompt));
    let truth = Signal::derive(move || {
        task.get()
            .map(|t| benchmarks::atomworld::evaluate::cif_answer(&t.original_cif))
    });
    let original = Signal::derive(move || task.get().and_then(|t| read_cif(&t.original_cif).ok()));
    let diff = move || {
        task.get().map(|t| {
            let rows = t
                .changes
                .iter()
                .map(|c| {
                    let class = if c.after.is_some() { "after" } else { "after removed" };
                    let after = c.after.clone().unwrap_or_else(|| "(line removed)".into());
                    view! {
                        <tr>
                            <td class="line-no">{c.line}</td>
                            <td class="before"><code>{c.before.clone()}</code></td>
                            <td class=class>
                                <code>{after}</code>
                            </td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <p class="muted small" id="repair-kind">
                    {format!("{} — {}{}", t.structure_name, describe(&t.corruption),
                        if t.corrupted_still_parses { " (the damaged file still parses)" } else { " (the damaged file does not parse)" })}
                </p>
                <table class="diff" id="repair-diff">
                    <tr><th>"line"</th><th>"original"</th><th>"what the model sees"</th></tr>
                    {rows}
                </table>
            }
        })
    };
    view! {
        <SeedRow seed=seed>
            <p class="muted small field">"One mineral of the pool, written by the CIF writer, then damaged."</p>
        </SeedRow>
        {diff}
        <PromptView prompt=prompt />
        <div class="views">
            <div class="view">
                <h2>"The original structure"</h2>
                <StructureCanvas structure=original highlight=Signal::derive(Vec::new) id="viewer" />
            </div>
        </div>
        <AnswerBox prompt=prompt answer=answer truth=truth placeholder="The repaired CIF inside <cif> and </cif>." matcher=scored.matcher />
        <p class="muted small">{format!("Each {PLACEHOLDER} in the answer is replaced by the removed value before scoring.")}</p>
        {move || verdict.get().map(|v| match v {
            Ok(v) => view! {
                <VerdictView verdict=v.verdict />
                <p class="muted small" id="repair-placeholders">{format!(
                    "placeholders replaced: {}; left as written: {}", v.placeholders_replaced, v.placeholders_left
                )}</p>
            }.into_any(),
            Err(e) => view! { <p class="error">{format!("this task cannot be scored: {e}")}</p> }.into_any(),
        })}
    }
}
