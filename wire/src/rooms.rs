//! Workshop rooms: a host opens a room, participants send their attempts at AtomWorld tasks,
//! the server scores each one itself and the host sees the tally live.

use serde::{Deserialize, Serialize};

/// `POST /api/rooms`: open a room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomCreate {
    /// A name shown to participants (at most 80 characters).
    pub name: String,
    /// Hours the room and its attempts are kept (1 to 168).
    pub ttl_hours: u32,
}

/// `POST /api/rooms` answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomCreated {
    /// The short code participants join with.
    pub code: String,
    /// The host's secret: the summary, the attempts and closing the room need it
    /// (`X-Room-Token`). Only the host's browser keeps it.
    pub host_token: String,
    /// When the room and its attempts are deleted (UTC, RFC 3339).
    pub expires_at: String,
}

/// What anyone with the code may know about a room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomInfo {
    /// The room's code.
    pub code: String,
    /// Its name.
    pub name: String,
    /// When it is deleted (UTC, RFC 3339).
    pub expires_at: String,
}

/// How an attempt's answer was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AttemptKind {
    /// A person edited the structure by hand in the viewer.
    HandEdit,
    /// A person pasted an answer (often a model's, from elsewhere).
    Pasted,
    /// A model configured on the server answered from the playground.
    Model,
}

impl AttemptKind {
    /// The kind as the wire writes it.
    pub fn name(self) -> &'static str {
        match self {
            AttemptKind::HandEdit => "hand_edit",
            AttemptKind::Pasted => "pasted",
            AttemptKind::Model => "model",
        }
    }

    /// The kind from its wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::HandEdit, Self::Pasted, Self::Model]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// `POST /api/rooms/{code}/attempts`: one attempt at an AtomWorld task. There is no verdict
/// here: the server scores the answer itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomAttempt {
    /// The participant's nickname (at most 40 characters).
    pub who: String,
    /// How the answer was made.
    pub kind: AttemptKind,
    /// The model that answered (needed for `model`, optional for `pasted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The task's input CIF.
    pub input_cif: String,
    /// The task's action sentence.
    pub prompt: String,
    /// The answer (its CIF between `<cif>` and `</cif>`).
    pub answer: String,
}

/// An attempt as the server scored it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptScored {
    /// The attempt's number in the room.
    pub id: i64,
    /// The task's action (`unparsed` when the sentence names none the benchmark knows).
    pub action: String,
    /// The benchmark's label (`Success`, `StructureMismatch`, …).
    pub label: String,
    /// The largest normalised site distance of the match, when there was one.
    pub max_dist: Option<f64>,
    /// The second opinion: the same crystal in another cell? (when both structures parse)
    pub same_crystal: Option<bool>,
}

/// One attempt in the host's list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptView {
    /// The attempt's number in the room.
    pub id: i64,
    /// The participant's nickname.
    pub who: String,
    /// How the answer was made.
    pub kind: AttemptKind,
    /// The model that answered, if one is named.
    pub model: Option<String>,
    /// The column it is counted in: `people` (hand edits), `pasted`, or a model's name.
    pub side: String,
    /// The task's action.
    pub action: String,
    /// The server's label.
    pub label: String,
    /// The largest normalised site distance of the match, when there was one.
    pub max_dist: Option<f64>,
    /// When it arrived (UTC, RFC 3339).
    pub created_at: String,
}

/// One attempt in full: what opens it as a case in the playground.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptDetail {
    /// The attempt as listed.
    pub attempt: AttemptView,
    /// The task's input CIF.
    pub input_cif: String,
    /// The task's action sentence.
    pub prompt: String,
    /// The answer sent.
    pub answer: String,
}

/// Attempts and successes of one column for one action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomCell {
    /// The column (`people`, `pasted` or a model's name).
    pub side: String,
    /// Attempts counted.
    pub attempts: u64,
    /// Those labelled `Success`.
    pub successes: u64,
}

/// One action's row of the tally: a cell per column, in the order of `RoomSummary::sides`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomActionRow {
    /// The action.
    pub action: String,
    /// Its cells.
    pub cells: Vec<RoomCell>,
}

/// How often a label was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LabelCount {
    /// The label.
    pub label: String,
    /// Attempts with it.
    pub count: u64,
}

/// `GET /api/rooms/{code}/summary`: the host's live view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoomSummary {
    /// The room.
    pub room: RoomInfo,
    /// Attempts in all.
    pub total: u64,
    /// Participants who sent at least one attempt.
    pub participants: u64,
    /// The columns: `people` first, then `pasted`, then the models by name.
    pub sides: Vec<String>,
    /// Per action, each column's attempts and successes.
    pub actions: Vec<RoomActionRow>,
    /// The failure labels, most common first.
    pub failures: Vec<LabelCount>,
    /// The latest attempts, newest first (at most 50).
    pub latest: Vec<AttemptView>,
}
