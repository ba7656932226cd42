//! AtomWorld actions as typed values.
//!
//! Indices are 0-based site indices in the order of the input CIF's atom-site loop; vectors
//! and positions are Cartesian Å in the AtomWorld frame (a ∥ x, b in the xy-plane).

use engine::Element;
use serde::{Deserialize, Serialize};

use super::evaluate::Comparison;

/// One AtomWorld action with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Set the element of a site; position and index kept.
    Change {
        /// Site index.
        index: usize,
        /// New element.
        element: Element,
    },
    /// Delete a site; later sites shift down by one.
    Remove {
        /// Site index.
        index: usize,
    },
    /// Append a new site at a Cartesian position.
    Add {
        /// Element of the new site.
        element: Element,
        /// Cartesian position (Å).
        position: [f64; 3],
    },
    /// Displace one site by a Cartesian vector.
    Move {
        /// Site index.
        index: usize,
        /// Displacement (Å).
        displacement: [f64; 3],
    },
    /// Move one site along the line towards another by a distance (may overshoot).
    MoveTowards {
        /// The site that moves.
        index: usize,
        /// The site it moves towards.
        towards: usize,
        /// Distance (Å).
        distance: f64,
    },
    /// Append a new site on the line from `from` to `to`, `distance` Å from `from`.
    InsertBetween {
        /// Element of the new site.
        element: Element,
        /// First site (the distance is measured from it).
        from: usize,
        /// Second site.
        to: usize,
        /// Distance from `from` (Å).
        distance: f64,
    },
    /// "Swap the spatial positions" of two sites: the reference exchanges their elements.
    Swap {
        /// First site.
        first: usize,
        /// Second site.
        second: usize,
    },
    /// Delete every site whose Cartesian z is below the z of a reference site.
    DeleteBelow {
        /// The reference site.
        index: usize,
        /// The prompt's "Including itself …" (true) or "Excluding itself …" (false) wording.
        including_itself: bool,
    },
    /// Rotate the sites within a radius of a centre site about an axis through it.
    RotateAround {
        /// The centre site (not rotated).
        center: usize,
        /// Neighbour radius (Å, strict: distance < radius).
        radius: f64,
        /// Rotation angle in degrees, right-hand rule.
        angle: f64,
        /// Rotation axis (need not be normalised; must not be zero).
        axis: [f64; 3],
    },
    /// Repeat the cell n1×n2×n3 times.
    SuperCell {
        /// Repetitions along a, b, c.
        size: [u32; 3],
    },
    /// Probe: displace every site by one vector.
    MoveAll {
        /// Displacement (Å).
        displacement: [f64; 3],
    },
    /// Delete a site and every site within a radius of it (minimum image).
    DeleteAround {
        /// Centre site.
        index: usize,
        /// Radius (Å, strict).
        radius: f64,
    },
    /// Displace a list of sites by one vector.
    MoveSelected {
        /// Site indices.
        indices: Vec<usize>,
        /// Displacement (Å).
        displacement: [f64; 3],
    },
    /// Displace a site and every site within a radius of it by one vector.
    MoveAround {
        /// Centre site.
        index: usize,
        /// Radius (Å, strict).
        radius: f64,
        /// Displacement (Å).
        displacement: [f64; 3],
    },
}

/// The kind of an action, without parameters (for tables, filters and task-set counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// [`Action::Change`]
    Change,
    /// [`Action::Remove`]
    Remove,
    /// [`Action::Add`]
    Add,
    /// [`Action::Move`]
    Move,
    /// [`Action::MoveTowards`]
    MoveTowards,
    /// [`Action::InsertBetween`]
    InsertBetween,
    /// [`Action::Swap`]
    Swap,
    /// [`Action::DeleteBelow`]
    DeleteBelow,
    /// [`Action::RotateAround`]
    RotateAround,
    /// [`Action::SuperCell`]
    SuperCell,
    /// [`Action::MoveAll`]
    MoveAll,
    /// [`Action::DeleteAround`]
    DeleteAround,
    /// [`Action::MoveSelected`]
    MoveSelected,
    /// [`Action::MoveAround`]
    MoveAround,
}

impl ActionKind {
    /// The ten actions of the AtomWorld benchmark, in the paper's table order.
    pub const BENCHMARK: [ActionKind; 10] = [
        ActionKind::Change,
        ActionKind::Remove,
        ActionKind::Swap,
        ActionKind::Add,
        ActionKind::Move,
        ActionKind::MoveTowards,
        ActionKind::InsertBetween,
        ActionKind::DeleteBelow,
        ActionKind::RotateAround,
        ActionKind::SuperCell,
    ];

    /// The snake_case name used in data files and the UI (`move_towards`).
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Change => "change",
            ActionKind::Remove => "remove",
            ActionKind::Add => "add",
            ActionKind::Move => "move",
            ActionKind::MoveTowards => "move_towards",
            ActionKind::InsertBetween => "insert_between",
            ActionKind::Swap => "swap",
            ActionKind::DeleteBelow => "delete_below",
            ActionKind::RotateAround => "rotate_around",
            ActionKind::SuperCell => "super_cell",
            ActionKind::MoveAll => "move_all",
            ActionKind::DeleteAround => "delete_around",
            ActionKind::MoveSelected => "move_selected",
            ActionKind::MoveAround => "move_around",
        }
    }

    /// How an answer to this action is compared with the target: site by site in parsed
    /// order for the move_all probe (its "ordered" metric), by the reference's
    /// StructureMatcher for every other action.
    pub fn comparison(self) -> Comparison {
        match self {
            ActionKind::MoveAll => Comparison::Ordered,
            _ => Comparison::Matcher,
        }
    }
}

impl Action {
    /// The action's kind.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Change { .. } => ActionKind::Change,
            Action::Remove { .. } => ActionKind::Remove,
            Action::Add { .. } => ActionKind::Add,
            Action::Move { .. } => ActionKind::Move,
            Action::MoveTowards { .. } => ActionKind::MoveTowards,
            Action::InsertBetween { .. } => ActionKind::InsertBetween,
            Action::Swap { .. } => ActionKind::Swap,
            Action::DeleteBelow { .. } => ActionKind::DeleteBelow,
            Action::RotateAround { .. } => ActionKind::RotateAround,
            Action::SuperCell { .. } => ActionKind::SuperCell,
            Action::MoveAll { .. } => ActionKind::MoveAll,
            Action::DeleteAround { .. } => ActionKind::DeleteAround,
            Action::MoveSelected { .. } => ActionKind::MoveSelected,
            Action::MoveAround { .. } => ActionKind::MoveAround,
        }
    }
}
