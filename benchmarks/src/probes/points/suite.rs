//! PointWorld as a [`Suite`]: the paper's pure-coordinate probe run over a model like any
//! benchmark, tabled as the AtomWorld paper's Table 4 (per action, the share of readable
//! answers and their Hungarian-matched largest distance).

use engine::interrupt::Interrupt;
use serde::Deserialize;

use super::action::Point;
use super::generator::{generate, PointTask, PointTaskSpec};
use super::prompt::{model_prompt, points_json};
use super::score::{evaluate, PointLabel, PointVerdict, PASS_THRESHOLD};
use crate::probes::figures::{per_group, Row};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// The PointWorld probe.
#[derive(Clone, Copy, Debug, Default)]
pub struct PointWorld;

/// What scoring needs: the input points (for the copy baseline) and the target.
#[derive(Clone, Debug)]
pub struct PointState {
    input: Vec<Point>,
    target: Vec<Point>,
}

/// The answer with the ground truth (bounds the table from above).
pub const REFERENCE: &str = "reference";
/// The answer with the input points unchanged (bounds the table from below).
pub const COPY_INPUT: &str = "copy-input";

const COLUMNS: [(&str, &str); 3] = [
    ("UnreadableOutput", "Unreadable"),
    ("InvalidShape", "Shape"),
    ("OutsideThreshold", "Beyond 0.05"),
];

/// Table 4 of the AtomWorld paper, and our pass rate beside it.
const LAYOUTS: [Layout; 1] = [Layout {
    title: "PointWorld per action: readable answers and their largest matched distance",
    source: "AtomWorld, Table 4 (readable ratio, max_dist); success within 0.05 is ours",
    row_heading: "action",
    rows: Rows::Each {
        at: "per_group",
        label: None,
    },
    values: &[
        ("readable", "measured_rate"),
        ("max_dist (mean)", "distance_mean"),
        ("max_dist (median)", "distance.median"),
        ("success ≤ 0.05", "success_rate"),
    ],
    mean_row: true,
}];

impl Suite for PointWorld {
    const NAME: &'static str = "pointworld";
    type Task = PointTask;
    type State = PointState;
    type Verdict = PointVerdict;

    fn key(task: &PointTask) -> String {
        task.id.clone()
    }

    /// `per_group` tasks of each of the four point actions.
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = PointTaskSpec::per_action(seed, per_group);
        Some(Generator {
            at_most: spec.counts.values().sum(),
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<PointTask>, TaskError> {
        let spec = PointTaskSpec::deserialize(params)
            .map_err(|e| TaskError(format!("not a PointWorld task set: {e}")))?;
        Ok(generate(&spec))
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "action",
            metric: "max distance",
        }
    }

    fn prepare(&self, task: &PointTask) -> Result<Prepared<PointState>, TaskError> {
        if task.target.is_empty() {
            return Err(TaskError(format!("task {}: no target points", task.id)));
        }
        Ok(Prepared {
            messages: vec![Message::user(model_prompt(
                &task.points,
                &task.action_prompt,
            ))],
            group: task.action.kind().name().to_string(),
            state: PointState {
                input: task.points.clone(),
                target: task.target.clone(),
            },
        })
    }

    fn score(
        &self,
        state: &PointState,
        response: &str,
        _answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> PointVerdict {
        evaluate(&state.target, response)
    }

    fn outcome(v: &PointVerdict) -> Outcome {
        let success = v.label == PointLabel::Success;
        Outcome {
            label: v.label.name().to_string(),
            success,
            metric: v.max_distance.filter(|_| success),
            why: (!success).then(|| v.detail.clone()),
        }
    }

    fn view(v: &PointVerdict) -> VerdictView {
        let mut view = VerdictView::default();
        if let (Some(mean), Some(max)) = (v.mean_distance, v.max_distance) {
            view.facts.push(format!(
                "matched distances: mean {mean:.4}, largest {max:.4} (pass ≤ {})",
                v.threshold
            ));
        }
        view.text(
            "Points read from the answer",
            v.extracted.as_deref().unwrap_or(""),
            false,
        )
    }

    fn headline(&self, rows: &[(&str, &PointVerdict)]) -> Option<Headline> {
        if rows.is_empty() {
            return None;
        }
        let figure_rows: Vec<Row> = rows
            .iter()
            .map(|(group, v)| Row {
                group,
                label: v.label.name(),
                success: v.label == PointLabel::Success,
                distance: v.max_distance,
            })
            .collect();
        let labels: Vec<&str> = PointLabel::ALL.iter().map(|l| l.name()).collect();
        let per_group = per_group(&figure_rows, &labels);
        let readable = figure_rows.iter().filter(|r| r.distance.is_some()).count();
        Some(Headline {
            text: format!(
                "Readable answers (points of the right shape): {readable} of {}; a success is \
                 every matched point within {PASS_THRESHOLD} (our threshold: the paper reports \
                 distances only)\n",
                rows.len()
            ),
            json: serde_json::json!({ "threshold": PASS_THRESHOLD, "per_group": per_group }),
        })
    }

    fn layouts(&self) -> &'static [Layout] {
        &LAYOUTS
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE, COPY_INPUT]
    }

    fn baseline_answer(&self, name: &str, state: &PointState) -> Option<String> {
        let points = match name {
            REFERENCE => &state.target,
            COPY_INPUT => &state.input,
            _ => return None,
        };
        Some(format!("<answer>{}</answer>", points_json(points)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    fn tasks() -> Vec<serde_json::Value> {
        let g = Suite::generator(&PointWorld, 7, 3).unwrap();
        AnySuite::generate(&PointWorld, &g.params).unwrap()
    }

    #[test]
    fn reference_passes_and_copy_fails_every_task() {
        let tasks = tasks();
        assert_eq!(tasks.len(), 12);
        let mut rows = Vec::new();
        for t in &tasks {
            let p = PointWorld.prepare_json(t).unwrap();
            for (name, pass) in [(REFERENCE, true), (COPY_INPUT, false)] {
                let answer = AnySuite::baseline_answer(&PointWorld, name, &p).unwrap();
                let s = AnySuite::score(&PointWorld, &p, &answer, &[], &Interrupt::new()).unwrap();
                assert_eq!(s.outcome.success, pass, "{name} on {}: {s:?}", p.id);
                rows.push((p.group.clone(), s.verdict));
            }
        }
        let h = AnySuite::headline(&PointWorld, &rows).unwrap();
        let moves = &h.json["per_group"]["move"];
        assert_eq!(moves["n"], 6);
        assert_eq!(moves["success_rate"], 0.5);
        // Insertions copied have the wrong shape: not readable as the target's points.
        let inserts = &h.json["per_group"]["insert_between"];
        assert_eq!(inserts["measured_rate"], 0.5);
        assert_eq!(inserts["shares"]["InvalidShape"], 0.5);
    }

    #[test]
    fn the_prompt_is_the_papers_wrapper_around_the_task() {
        let t = &tasks()[0];
        let p = PointWorld.prepare_json(t).unwrap();
        assert_eq!(p.messages.len(), 1);
        assert_eq!(p.messages[0].content, t["prompt"].as_str().unwrap());
    }
}
