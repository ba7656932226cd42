//! The seeded PointWorld generator (the paper's distributions).
//!
//! Each task draws from its own ChaCha stream (seed, action, task number). Every printed
//! number is rounded to two decimals first and the target is computed from the rounded
//! values, so the prompt and the target always agree exactly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::action::{Axis, Point, PointAction, PointActionKind};
use super::apply::apply;
use super::prompt::{action_prompt, model_prompt};
use super::score::PASS_THRESHOLD;
use crate::atomworld::generator::rng::TaskRng;
use crate::probes::{round_dp, PromptOrigin, PROBE_STREAM_BASE};

/// Number of points in a task's input.
pub const POINT_COUNT: usize = 2;
/// Coordinates are uniform in [−COORD_RANGE, COORD_RANGE].
pub const COORD_RANGE: f64 = 10.0;
/// Smallest distance between two input points.
pub const MIN_SEPARATION: f64 = 0.5;
/// A rotation must move some point at least this far (ten pass thresholds), else it is
/// redrawn: a rotation about an axis through (nearly) both points would pass unchanged.
pub const MIN_ROTATION_EFFECT: f64 = 10.0 * PASS_THRESHOLD;
/// Draws per task before giving up (never reached in practice).
const MAX_ATTEMPTS: usize = 1000;
/// First stream of the PointWorld probe.
const STREAM: u32 = PROBE_STREAM_BASE;

/// Everything that determines a PointWorld task set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointTaskSpec {
    /// The seed.
    pub seed: u64,
    /// Tasks per action.
    pub counts: BTreeMap<PointActionKind, usize>,
}

impl PointTaskSpec {
    /// `n` tasks of each of the four actions.
    pub fn per_action(seed: u64, n: usize) -> Self {
        Self {
            seed,
            counts: PointActionKind::ALL.iter().map(|k| (*k, n)).collect(),
        }
    }
}

/// One PointWorld task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointTask {
    /// Stable identifier: `points-<action>-<number>`.
    pub id: String,
    /// The input points (two decimals).
    pub points: Vec<Point>,
    /// The action (parameters as printed).
    pub action: PointAction,
    /// The action in words.
    pub action_prompt: String,
    /// The whole message sent to the model.
    pub prompt: String,
    /// Where the prompt's wording comes from.
    pub prompt_origin: PromptOrigin,
    /// The ground truth, computed from the printed values (full precision).
    pub target: Vec<Point>,
}

/// Generate the task set; task `k` of an action does not depend on how many are asked for.
pub fn generate(spec: &PointTaskSpec) -> Vec<PointTask> {
    let mut tasks = Vec::new();
    for (&kind, &count) in &spec.counts {
        for number in 0..count {
            let mut rng = TaskRng::new(spec.seed, STREAM + kind as u32, number as u32);
            if let Some(t) = generate_one(kind, number, &mut rng) {
                tasks.push(t);
            }
        }
    }
    tasks
}

fn generate_one(kind: PointActionKind, number: usize, rng: &mut TaskRng) -> Option<PointTask> {
    for _ in 0..MAX_ATTEMPTS {
        let points = draw_points(rng);
        let action = draw_action(kind, &points, rng);
        let Ok(target) = apply(&points, &action) else {
            continue;
        };
        if kind == PointActionKind::RotateAround
            && largest_move(&points, &target) < MIN_ROTATION_EFFECT
        {
            continue;
        }
        let action_prompt = action_prompt(&action);
        return Some(PointTask {
            id: format!("points-{}-{number:04}", kind.name()),
            prompt: model_prompt(&points, &action_prompt),
            prompt_origin: PromptOrigin::Reference,
            points,
            action,
            action_prompt,
            target,
        });
    }
    None
}

fn distance(a: Point, b: Point) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn largest_move(before: &[Point], after: &[Point]) -> f64 {
    before
        .iter()
        .zip(after)
        .map(|(a, b)| distance(*a, *b))
        .fold(0.0, f64::max)
}

/// Two points, uniform in the cube with two decimals, at least [`MIN_SEPARATION`] apart.
fn draw_points(rng: &mut TaskRng) -> Vec<Point> {
    loop {
        let pts: Vec<Point> = (0..POINT_COUNT)
            .map(|_| std::array::from_fn(|_| round_dp(rng.uniform(-COORD_RANGE, COORD_RANGE), 2)))
            .collect();
        if distance(pts[0], pts[1]) >= MIN_SEPARATION {
            return pts;
        }
    }
}

fn draw_action(kind: PointActionKind, points: &[Point], rng: &mut TaskRng) -> PointAction {
    let n = points.len();
    match kind {
        PointActionKind::Move => {
            let index = rng.below(n);
            let length = rng.uniform(0.5, 5.0);
            // A direction uniform on the sphere: a normalised Gaussian vector.
            let dir = loop {
                let g: [f64; 3] = std::array::from_fn(|_| rng.normal(1.0));
                let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                if len > 1e-9 {
                    break g.map(|x| x / len);
                }
            };
            PointAction::Move {
                index,
                displacement: dir.map(|x| round_dp(x * length, 2)),
            }
        }
        PointActionKind::MoveTowards => {
            let (index, towards) = rng.distinct_pair(n);
            PointAction::MoveTowards {
                index,
                towards,
                distance: round_dp(rng.uniform(0.5, 5.0), 2),
            }
        }
        PointActionKind::InsertBetween => {
            let (from, to) = rng.distinct_pair(n);
            let d = distance(points[from], points[to]);
            PointAction::InsertBetween {
                from,
                to,
                distance: round_dp(rng.uniform(0.1, d - 0.1), 2),
            }
        }
        PointActionKind::RotateAround => PointAction::RotateAround {
            center: rng.below(n),
            axis: Axis::ALL[rng.below(Axis::ALL.len())],
            angle: round_dp(rng.uniform(15.0, 180.0), 2),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::score::{evaluate, PointLabel};
    use super::*;
    use crate::probes::points::prompt::points_json;

    #[test]
    fn deterministic_and_in_range() {
        let spec = PointTaskSpec::per_action(7, 50);
        let a = generate(&spec);
        assert_eq!(a, generate(&spec));
        assert_eq!(a.len(), 200);
        assert_ne!(a, generate(&PointTaskSpec::per_action(8, 50)));
        for t in &a {
            assert_eq!(t.points.len(), 2);
            for p in &t.points {
                for x in p {
                    assert!((-10.0..=10.0).contains(x));
                    assert_eq!(round_dp(*x, 2), *x);
                }
            }
            assert!(distance(t.points[0], t.points[1]) >= MIN_SEPARATION);
            assert_eq!(apply(&t.points, &t.action).unwrap(), t.target);
            match t.action {
                PointAction::Move { displacement, .. } => {
                    let l = distance(displacement, [0.0; 3]);
                    assert!((0.49..=5.01).contains(&l), "{l}");
                }
                PointAction::MoveTowards { distance: d, .. } => {
                    assert!((0.5..=5.0).contains(&d))
                }
                PointAction::InsertBetween {
                    from,
                    to,
                    distance: d,
                } => {
                    assert!(d >= 0.1 && d <= distance(t.points[from], t.points[to]) - 0.09);
                }
                PointAction::RotateAround { angle, .. } => {
                    assert!((15.0..=180.0).contains(&angle))
                }
            }
        }
    }

    #[test]
    fn adding_tasks_keeps_earlier_ones() {
        let small = generate(&PointTaskSpec::per_action(3, 2));
        let large = generate(&PointTaskSpec::per_action(3, 5));
        for t in &small {
            assert!(large.contains(t), "{}", t.id);
        }
    }

    #[test]
    fn the_target_passes_and_the_input_fails() {
        for t in generate(&PointTaskSpec::per_action(11, 25)) {
            let perfect = format!("<answer>{}</answer>", points_json(&t.target));
            // Shortest round-trip digits, read back exactly (serde_json's float_roundtrip).
            let v = evaluate(&t.target, &perfect);
            assert!(v.max_distance.is_some_and(|d| d == 0.0), "{v:?}");
            let copied = format!("<answer>{}</answer>", points_json(&t.points));
            let v = evaluate(&t.target, &copied);
            assert_ne!(v.label, PointLabel::Success, "{}", t.id);
        }
    }
}
