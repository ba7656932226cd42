//! The CIF-Gen probe: a formula and structure type in words; the model writes a CIF; it is
//! scored against our reference structure with primitive cells and supercells allowed.

use benchmarks::probes::cif_gen::evaluate::GenLabel;
use benchmarks::probes::cif_gen::generator::{generate, GenTaskSpec};
use engine::cif::read_cif;
use leptos::prelude::*;
use matcher_worker::{Outcome, Work};

use super::{answer_and_verdict, AnswerBox, ProbeVerdict, PromptView, SeedRow};
use crate::ui::canvas::StructureCanvas;

/// The CIF-Gen probe.
#[component]
pub fn GenProbe() -> impl IntoView {
    let seed = RwSignal::new(1u64);
    let task = Memo::new(move |_| {
        generate(&GenTaskSpec {
            seed: seed.get(),
            count: 1,
        })
        .into_iter()
        .next()
    });
    let scored = answer_and_verdict(
        task,
        |t, answer| Work::Gen {
            reference_cif: t.reference_cif.clone(),
            answer,
        },
        Outcome::into_gen,
    );
    let (answer, verdict) = (scored.answer, scored.verdict);
    let prompt = Signal::derive(move || task.get().map(|t| t.prompt));
    let truth = Signal::derive(move || {
        task.get()
            .map(|t| benchmarks::atomworld::evaluate::cif_answer(&t.reference_cif))
    });
    let reference =
        Signal::derive(move || task.get().and_then(|t| read_cif(&t.reference_cif).ok()));
    let num = |x: Option<f64>, d: usize| x.map_or("—".to_string(), |v| format!("{v:.d$}"));
    view! {
        <SeedRow seed=seed>
            <p class="muted small field" id="gen-task">{move || task.get().map(|t| format!(
                "{} in the {} structure ({})", t.formula, t.prototype.name(), t.source
            ))}</p>
        </SeedRow>
        <PromptView prompt=prompt />
        <div class="views">
            <div class="view">
                <h2>"Our reference structure " <span class="muted small">"(conventional cell)"</span></h2>
                <StructureCanvas structure=reference highlight=Signal::derive(Vec::new) id="viewer" />
            </div>
        </div>
        <AnswerBox prompt=prompt answer=answer truth=truth placeholder="The generated CIF inside <cif> and </cif>." matcher=scored.matcher />
        {move || verdict.get().map(|v| match v {
            Ok(v) => {
                let numbers = if v.max_dist.is_some() {
                    vec![
                        ("rms", "rms", num(v.rms, 4)),
                        ("max_dist", "max-dist", num(v.max_dist, 4)),
                        ("max_dist (Å)", "max-dist-angstrom", num(v.max_dist_angstrom, 3)),
                    ]
                } else {
                    Vec::new()
                };
                view! {
                    <ProbeVerdict label=format!("{:?}", v.label) success={v.label == GenLabel::Success} detail=v.detail numbers=numbers />
                }.into_any()
            }
            Err(e) => view! { <p class="error">{format!("this task cannot be scored: {e}")}</p> }.into_any(),
        })}
    }
}
