//! The PointWorld prompt: the reference's wrapper, the points as JSON, the action in words.
//!
//! The wrapper sentences are the paper's, byte for byte. The reference
//! (`final_prompt` in AtomWorldBench) joins its parts with newlines and labels the two
//! inputs "Initial points data:" and "Action prompt:"; we do the same. The points are
//! printed as Python's `json.dumps(points.tolist())` prints them (`[[1.5, -2.25, 3.0], …]`).
//! The action wordings are the paper's (with the final full stop of the paper's table 6);
//! vectors in them are printed as JSON lists too. Numbers carry at most two decimals.

use super::action::{Point, PointAction};
use engine::python::py_repr;

/// The reference's instruction sentences, in order (the AtomWorld paper).
pub const WRAPPER: [&str; 6] = [
    "You are a spatial reasoning expert.",
    "You will be given an initial set of points and an action prompt describing an operation on these points.",
    "The final modified points after applying the action must be returned inside <answer> and </answer> tags.",
    "The format inside the tags must exactly match the input points format.",
    "All indices are zero-based.",
    "Please ensure the answer inside <answer> and </answer> tags is parseable and strictly formatted.",
];

/// Points as Python's `json.dumps` prints a list of float lists.
pub fn points_json(points: &[Point]) -> String {
    let items: Vec<String> = points.iter().map(|p| vector_json(*p)).collect();
    format!("[{}]", items.join(", "))
}

/// One vector as a JSON list of Python floats, e.g. `[0.5, -1.25, 3.0]`.
pub fn vector_json(v: [f64; 3]) -> String {
    format!("[{}, {}, {}]", py_repr(v[0]), py_repr(v[1]), py_repr(v[2]))
}

/// The action in words (the paper's wordings).
pub fn action_prompt(action: &PointAction) -> String {
    match action {
        PointAction::Move {
            index,
            displacement,
        } => format!(
            "Move the point at index {index} by displacement {}.",
            vector_json(*displacement)
        ),
        PointAction::MoveTowards {
            index,
            towards,
            distance,
        } => format!(
            "Move the point at index {index} towards the point at index {towards} by {}.",
            py_repr(*distance)
        ),
        PointAction::InsertBetween { from, to, distance } => format!(
            "Insert a new point between points at indices {from} and {to}, {} units away from point {from}.",
            py_repr(*distance)
        ),
        PointAction::RotateAround {
            center,
            axis,
            angle,
        } => format!(
            "Rotate all points by {} degrees around the axis {}, with the point at index {center} as the center of rotation. The rotation follows the right-hand rule.",
            py_repr(*angle),
            axis.text()
        ),
    }
}

/// The whole user message sent to the model.
pub fn model_prompt(points: &[Point], action_prompt: &str) -> String {
    let mut parts: Vec<String> = WRAPPER.iter().map(|s| s.to_string()).collect();
    parts.push("Initial points data:".into());
    parts.push(points_json(points));
    parts.push("Action prompt:".into());
    parts.push(action_prompt.into());
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::action::Axis;
    use super::*;

    #[test]
    fn wrapper_is_the_spec_text() {
        let spec = "You are a spatial reasoning expert. You will be given an initial set of points and an action prompt describing an operation on these points. The final modified points after applying the action must be returned inside <answer> and </answer> tags. The format inside the tags must exactly match the input points format. All indices are zero-based. Please ensure the answer inside <answer> and </answer> tags is parseable and strictly formatted.";
        assert_eq!(WRAPPER.join(" "), spec);
    }

    #[test]
    fn whole_prompt_layout() {
        let pts = [[1.5, -2.0, 0.25], [-10.0, 3.12, 7.0]];
        let a = PointAction::MoveTowards {
            index: 1,
            towards: 0,
            distance: 2.5,
        };
        let p = model_prompt(&pts, &action_prompt(&a));
        assert!(p.starts_with("You are a spatial reasoning expert.\nYou will be given"));
        assert!(p.ends_with(
            "strictly formatted.\nInitial points data:\n[[1.5, -2.0, 0.25], [-10.0, 3.12, 7.0]]\nAction prompt:\nMove the point at index 1 towards the point at index 0 by 2.5."
        ));
    }

    #[test]
    fn action_wordings() {
        assert_eq!(
            action_prompt(&PointAction::Move {
                index: 0,
                displacement: [0.1, -2.0, 3.45]
            }),
            "Move the point at index 0 by displacement [0.1, -2.0, 3.45]."
        );
        assert_eq!(
            action_prompt(&PointAction::InsertBetween {
                from: 1,
                to: 0,
                distance: 0.75
            }),
            "Insert a new point between points at indices 1 and 0, 0.75 units away from point 1."
        );
        assert_eq!(
            action_prompt(&PointAction::RotateAround {
                center: 0,
                axis: Axis::MinusY,
                angle: 123.45
            }),
            "Rotate all points by 123.45 degrees around the axis [0, -1, 0], with the point at index 0 as the center of rotation. The rotation follows the right-hand rule."
        );
    }
}
