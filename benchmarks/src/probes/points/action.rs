//! PointWorld actions as typed values.

use serde::{Deserialize, Serialize};

/// A point in 3-D space (unitless coordinates).
pub type Point = [f64; 3];

/// A rotation axis: one of the six signed coordinate axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// +x.
    PlusX,
    /// −x.
    MinusX,
    /// +y.
    PlusY,
    /// −y.
    MinusY,
    /// +z.
    PlusZ,
    /// −z.
    MinusZ,
}

impl Axis {
    /// The six axes, in the generator's draw order.
    pub const ALL: [Axis; 6] = [
        Axis::PlusX,
        Axis::MinusX,
        Axis::PlusY,
        Axis::MinusY,
        Axis::PlusZ,
        Axis::MinusZ,
    ];

    /// The unit vector.
    pub fn vector(self) -> [f64; 3] {
        match self {
            Axis::PlusX => [1.0, 0.0, 0.0],
            Axis::MinusX => [-1.0, 0.0, 0.0],
            Axis::PlusY => [0.0, 1.0, 0.0],
            Axis::MinusY => [0.0, -1.0, 0.0],
            Axis::PlusZ => [0.0, 0.0, 1.0],
            Axis::MinusZ => [0.0, 0.0, -1.0],
        }
    }

    /// The axis as printed in prompts: an integer list, e.g. `[0, -1, 0]`.
    pub fn text(self) -> &'static str {
        match self {
            Axis::PlusX => "[1, 0, 0]",
            Axis::MinusX => "[-1, 0, 0]",
            Axis::PlusY => "[0, 1, 0]",
            Axis::MinusY => "[0, -1, 0]",
            Axis::PlusZ => "[0, 0, 1]",
            Axis::MinusZ => "[0, 0, -1]",
        }
    }
}

/// The four PointWorld actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointActionKind {
    /// Displace one point.
    Move,
    /// Move one point towards another.
    MoveTowards,
    /// Append a point on the segment between two points.
    InsertBetween,
    /// Rotate every point about an axis through one of them.
    RotateAround,
}

impl PointActionKind {
    /// All four, in a fixed order (also their stream numbers).
    pub const ALL: [PointActionKind; 4] = [
        PointActionKind::Move,
        PointActionKind::MoveTowards,
        PointActionKind::InsertBetween,
        PointActionKind::RotateAround,
    ];

    /// The name used in task identifiers and data files.
    pub fn name(self) -> &'static str {
        match self {
            PointActionKind::Move => "move",
            PointActionKind::MoveTowards => "move_towards",
            PointActionKind::InsertBetween => "insert_between",
            PointActionKind::RotateAround => "rotate_around",
        }
    }
}

/// One PointWorld action with its parameters (as printed in the prompt).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PointAction {
    /// `p[index] += displacement`.
    Move {
        /// The point that moves.
        index: usize,
        /// The displacement vector.
        displacement: [f64; 3],
    },
    /// `p[index] += distance · unit(p[towards] − p[index])` (may overshoot).
    MoveTowards {
        /// The point that moves.
        index: usize,
        /// The point it moves towards.
        towards: usize,
        /// Distance moved.
        distance: f64,
    },
    /// Append `p[from] + distance · unit(p[to] − p[from])`.
    InsertBetween {
        /// The point the distance is measured from.
        from: usize,
        /// The other end of the segment.
        to: usize,
        /// Distance of the new point from `from`.
        distance: f64,
    },
    /// Rotate every point by `angle` degrees (right-hand rule) about the axis through
    /// `p[center]`; the centre stays where it is.
    RotateAround {
        /// The point the axis passes through.
        center: usize,
        /// The axis direction.
        axis: Axis,
        /// Angle in degrees.
        angle: f64,
    },
}

impl PointAction {
    /// The action's kind.
    pub fn kind(&self) -> PointActionKind {
        match self {
            PointAction::Move { .. } => PointActionKind::Move,
            PointAction::MoveTowards { .. } => PointActionKind::MoveTowards,
            PointAction::InsertBetween { .. } => PointActionKind::InsertBetween,
            PointAction::RotateAround { .. } => PointActionKind::RotateAround,
        }
    }
}
