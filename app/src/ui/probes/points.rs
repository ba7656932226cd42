//! The pure-coordinate probe: points in space, an action in words, the moved points as JSON
//! inside `<answer>` tags; scored by the minimum-total-distance pairing against an explicit
//! threshold.

use benchmarks::probes::points::action::Point;
use benchmarks::probes::points::action::PointActionKind;
use benchmarks::probes::points::generator::{generate, PointTaskSpec, COORD_RANGE};
use benchmarks::probes::points::prompt::points_json;
use benchmarks::probes::points::score::{PointLabel, PASS_THRESHOLD};
use engine::{Element, Lattice, Site, Structure};
use leptos::prelude::*;
use matcher_worker::{Outcome, Work};

use super::{answer_and_verdict, AnswerBox, ProbeVerdict, PromptView, SeedRow};
use crate::ui::canvas::StructureCanvas;
use viewer::Overlay;

/// Points are drawn this many times larger than the atoms they stand in for.
const POINT_SCALE: f32 = 3.0;

/// Side of the box the points are drawn in (Å): the generator's coordinate range and a margin.
const BOX: f64 = 2.0 * COORD_RANGE + 4.0;

/// Points as atoms of `element` in a cube of side [`BOX`] centred on the origin (the drawn
/// cell), so the viewer can show them.
fn as_structure(points: &[Point], element: &str) -> Option<Structure> {
    let lattice = Lattice::from_parameters(BOX, BOX, BOX, 90.0, 90.0, 90.0).ok()?;
    let element = Element::from_symbol(element)?;
    let sites = points
        .iter()
        .enumerate()
        .map(|(i, p)| Site {
            element,
            frac: p.map(|x| x / BOX + 0.5),
            label: format!("P{i}").into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        })
        .collect();
    Some(Structure::new(lattice, sites))
}

/// The pure-coordinate probe.
#[component]
pub fn PointsProbe() -> impl IntoView {
    let seed = RwSignal::new(1u64);
    let kind = RwSignal::new(PointActionKind::Move);
    let task = Memo::new(move |_| {
        let mut spec = PointTaskSpec::per_action(seed.get(), 0);
        spec.counts.insert(kind.get(), 1);
        generate(&spec).into_iter().next()
    });
    let scored = answer_and_verdict(
        task,
        |t, answer| Work::Points {
            target: t.target.clone(),
            answer,
        },
        Outcome::into_points,
    );
    let (answer, verdict) = (scored.answer, scored.verdict);
    let prompt = Signal::derive(move || task.get().map(|t| t.prompt));
    let truth = Signal::derive(move || {
        task.get()
            .map(|t| format!("<answer>{}</answer>", points_json(&t.target)))
    });
    let input = Signal::derive(move || task.get().and_then(|t| as_structure(&t.points, "C")));
    let target = Signal::derive(move || task.get().and_then(|t| as_structure(&t.target, "O")));
    // The answer's points over the target, paired as the score pairs them.
    let overlay = Signal::derive(move || {
        let (t, v) = (task.get()?, verdict.get()?);
        let (mapping, predicted) = (v.mapping?, v.predicted?);
        let displacements = t
            .target
            .iter()
            .zip(&mapping)
            .map(|(p, &j)| std::array::from_fn(|k| predicted[j][k] - p[k]))
            .collect();
        Some(Overlay {
            displacements,
            pairing: "the score paired with it (least total distance)",
        })
    });
    view! {
        <SeedRow seed=seed>
            <label class="field">
                <span>"Action"</span>
                <select id="points-kind" on:change=move |e| {
                    let v = event_target_value(&e);
                    if let Some(k) = PointActionKind::ALL.into_iter().find(|k| k.name() == v) {
                        kind.set(k);
                    }
                }>
                    {PointActionKind::ALL.into_iter().map(|k| view! { <option value=k.name()>{k.name()}</option> }).collect_view()}
                </select>
            </label>
        </SeedRow>
        <p class="muted small" id="points-action">{move || task.get().map(|t| t.action_prompt).unwrap_or_default()}</p>
        <PromptView prompt=prompt />
        <div class="views">
            <div class="view">
                <h2>"Points " <span class="muted small">{format!("(drawn as C atoms in a {BOX} Å box centred on the origin)")}</span></h2>
                <StructureCanvas structure=input highlight=Signal::derive(Vec::new) id="viewer" atom_scale=POINT_SCALE />
            </div>
            <div class="view">
                <h2>"Target " <span class="muted small">"(drawn as O atoms)"</span></h2>
                <StructureCanvas structure=target highlight=Signal::derive(Vec::new) id="viewer-target" overlay=overlay atom_scale=POINT_SCALE />
            </div>
        </div>
        <AnswerBox prompt=prompt answer=answer truth=truth placeholder="The answer with the points as JSON inside <answer> and </answer>." matcher=scored.matcher />
        {move || verdict.get().map(|v| {
            let numbers = match (v.mean_distance, v.max_distance) {
                (Some(mean), Some(max)) => vec![
                    ("mean distance (Å)", "points-mean", format!("{mean:.4}")),
                    ("max distance (Å)", "points-max", format!("{max:.4}")),
                    ("pass threshold (Å)", "points-threshold", format!("{PASS_THRESHOLD}")),
                ],
                _ => Vec::new(),
            };
            view! {
                <ProbeVerdict label=format!("{:?}", v.label) success={v.label == PointLabel::Success} detail=v.detail numbers=numbers />
            }
        })}
    }
}
