//! Scoring a PointWorld answer: Hungarian-matched distances and a pass threshold.

use engine::matcher::assignment::linear_sum_assignment;
use serde::{Deserialize, Serialize};

use super::action::Point;
use super::answer::{extract_answer, parse_points, AnswerError};

/// Largest matched distance (in the points' own units) that still passes.
///
/// The reference reports distances but no pass/fail line, so this one is ours. Inputs and
/// parameters are printed with two decimals and the targets are computed exactly from the
/// printed values, so an exact computation rounded to two decimals is off by at most
/// 0.005 per coordinate, ≈ 0.009 in distance. 0.05 leaves room for rounding intermediate
/// values (a unit vector or cos/sin to three decimals moves a point 20 units away by
/// ≈ 0.02), while any real mistake fails: the smallest move, rotation or insertion the
/// generator draws displaces a point by 0.5 or more (rotations that move a point less than
/// ten times this threshold are redrawn).
pub const PASS_THRESHOLD: f64 = 0.05;

/// The verdict labels, in the order the checks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PointLabel {
    /// Every matched distance is within [`PASS_THRESHOLD`].
    Success,
    /// No `<answer>` block, or its content is not JSON.
    UnreadableOutput,
    /// JSON, but not a list of as many 3-number points as the target has.
    InvalidShape,
    /// Readable and well-shaped, but some point is farther than [`PASS_THRESHOLD`].
    OutsideThreshold,
}

impl PointLabel {
    /// All labels, in the order of the checks.
    pub const ALL: [PointLabel; 4] = [
        PointLabel::Success,
        PointLabel::UnreadableOutput,
        PointLabel::InvalidShape,
        PointLabel::OutsideThreshold,
    ];

    /// The label's name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            PointLabel::Success => "Success",
            PointLabel::UnreadableOutput => "UnreadableOutput",
            PointLabel::InvalidShape => "InvalidShape",
            PointLabel::OutsideThreshold => "OutsideThreshold",
        }
    }
}

/// Everything the UI needs to explain a PointWorld verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointVerdict {
    /// The label.
    pub label: PointLabel,
    /// Mean of the matched distances (readable, well-shaped answers).
    pub mean_distance: Option<f64>,
    /// Largest matched distance (readable, well-shaped answers).
    pub max_distance: Option<f64>,
    /// The threshold applied ([`PASS_THRESHOLD`]), recorded with the verdict.
    pub threshold: f64,
    /// For each target point, the answer point matched to it.
    pub mapping: Option<Vec<usize>>,
    /// The points read from the answer.
    pub predicted: Option<Vec<Point>>,
    /// The text inside the answer block, if found.
    pub extracted: Option<String>,
    /// Why the answer could not be read, if it could not.
    pub error: Option<AnswerError>,
    /// One sentence saying which check decided and why.
    pub detail: String,
}

/// The minimum-total-distance pairing of `target` and `predicted` (same length): for each
/// target point, the predicted point paired with it, and the distances of the pairs.
pub fn matched_distances(target: &[Point], predicted: &[Point]) -> (Vec<usize>, Vec<f64>) {
    let n = target.len();
    let dist = |a: Point, b: Point| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    // Absurd coordinates may overflow to infinity: cap the costs so the assignment always
    // has a solution, and report the true distances.
    let cost: Vec<f64> = target
        .iter()
        .flat_map(|t| predicted.iter().map(move |p| (t, p)))
        .map(|(t, p)| {
            let d = dist(*t, *p);
            if d.is_finite() {
                d.min(1e300)
            } else {
                1e300
            }
        })
        .collect();
    let mapping = linear_sum_assignment(&cost, n, n).unwrap_or_else(|_| (0..n).collect());
    let distances = mapping
        .iter()
        .enumerate()
        .map(|(i, &j)| dist(target[i], predicted[j]))
        .collect();
    (mapping, distances)
}

/// Score a model's response against the target points.
pub fn evaluate(target: &[Point], response: &str) -> PointVerdict {
    let mut v = PointVerdict {
        label: PointLabel::UnreadableOutput,
        mean_distance: None,
        max_distance: None,
        threshold: PASS_THRESHOLD,
        mapping: None,
        predicted: None,
        extracted: None,
        error: None,
        detail: String::new(),
    };
    let Some(block) = extract_answer(response) else {
        v.error = Some(AnswerError::NoAnswerBlock);
        v.detail = "no <answer>…</answer> block in the answer".into();
        return v;
    };
    v.extracted = Some(block.to_string());
    let predicted = match parse_points(block, target.len()) {
        Ok(p) => p,
        Err(e) => {
            v.label = match e {
                AnswerError::Shape { .. } => PointLabel::InvalidShape,
                _ => PointLabel::UnreadableOutput,
            };
            v.detail = e.to_string();
            v.error = Some(e);
            return v;
        }
    };
    let (mapping, d) = matched_distances(target, &predicted);
    let max = d.iter().copied().fold(0.0, f64::max);
    let mean = if d.is_empty() {
        0.0
    } else {
        d.iter().sum::<f64>() / d.len() as f64
    };
    let pass = d.iter().all(|x| *x <= PASS_THRESHOLD);
    v.label = if pass {
        PointLabel::Success
    } else {
        PointLabel::OutsideThreshold
    };
    v.detail = format!(
        "matched distances: mean {mean:.4}, max {max:.4} ({} threshold {PASS_THRESHOLD})",
        if pass { "within the" } else { "beyond the" }
    );
    v.mean_distance = Some(mean);
    v.max_distance = Some(max);
    v.mapping = Some(mapping);
    v.predicted = Some(predicted);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: [Point; 2] = [[1.0, 2.0, 3.0], [-4.0, 0.5, 2.25]];

    #[test]
    fn order_does_not_matter_and_rounding_passes() {
        let v = evaluate(
            &TARGET,
            "Sure. <answer>[[-4.0, 0.5, 2.25], [1.004, 1.996, 3.0]]</answer>",
        );
        assert_eq!(v.label, PointLabel::Success);
        assert_eq!(v.mapping, Some(vec![1, 0]));
        let max = v.max_distance.unwrap();
        assert!((max - 0.004 * 2f64.sqrt()).abs() < 1e-12, "{max}");
        assert!((v.mean_distance.unwrap() - max / 2.0).abs() < 1e-12);
    }

    #[test]
    fn beyond_threshold_fails_with_distances() {
        let v = evaluate(&TARGET, "<answer>[[1, 2, 3.1], [-4, 0.5, 2.25]]</answer>");
        assert_eq!(v.label, PointLabel::OutsideThreshold);
        assert!((v.max_distance.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn unreadable_and_invalid_shapes() {
        assert_eq!(
            evaluate(&TARGET, "[[1,2,3]]").label,
            PointLabel::UnreadableOutput
        );
        assert_eq!(
            evaluate(&TARGET, "<answer>points: (1,2,3)</answer>").label,
            PointLabel::UnreadableOutput
        );
        let v = evaluate(&TARGET, "<answer>[[1,2,3]]</answer>");
        assert_eq!(v.label, PointLabel::InvalidShape);
        assert!(
            v.detail.contains("1 points given, 2 expected"),
            "{}",
            v.detail
        );
        let v = evaluate(&TARGET, "<answer>[[1e308,2,3],[-1e308,0,0]]</answer>");
        assert_eq!(v.label, PointLabel::OutsideThreshold);
    }
}
