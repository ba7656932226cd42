//! Our own agent for AtomWorld, **not the paper's**: the engine's operations offered to the
//! model as tools through the providers' function calling. The model reads the structure,
//! measures distances and neighbours, applies actions it writes as JSON (the benchmark's
//! action kinds and parameters, the reference semantics), and finishes by writing the
//! structure as a CIF, which is scored as any AtomWorld answer. Every call and its result is
//! kept in the transcript. The tools do the geometry; the model must still read the sentence
//! right: which action, which sites, which numbers, which frame.
//!
//! This module holds the pure parts (the tools' descriptions and what a call does to the
//! working structure); the server's `suites::atomworld` makes the model calls.

use engine::cif::write_cif;
use engine::numeric::norm;
use engine::Structure;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::action::Action;
use super::apply::{apply, Semantics};
use crate::task::{Message, Role, ToolCall, ToolSpec};

/// The agent's name (`atomworld run --agent engine-tools`).
pub const AGENT: &str = "engine-tools";

/// Model turns one answer may take.
pub const MAX_TURNS: usize = 12;

/// The most characters of a tool's result shown to the model.
const MAX_RESULT_CHARS: usize = 12_000;

/// What the model is told after the benchmark's own prompt.
pub const TOOL_NOTE: &str = "You can use tools on the input structure (the working \
structure): read_structure, distance, neighbours, apply_action (changes the working structure) \
and write_cif (gives the working structure as your answer and ends the task). Cartesian \
coordinates are in angstrom, in the frame where lattice vector a lies along +x and b in the \
xy-plane; indices start at 0. When the working structure is the answer, call write_cif.";

/// The names of the tools.
pub mod names {
    /// The working structure, site by site.
    pub const READ: &str = "read_structure";
    /// A distance.
    pub const DISTANCE: &str = "distance";
    /// Neighbours of a site.
    pub const NEIGHBOURS: &str = "neighbours";
    /// One action on the working structure.
    pub const APPLY: &str = "apply_action";
    /// The answer.
    pub const WRITE: &str = "write_cif";
}

/// The tools, as the model is offered them.
pub fn specs() -> Vec<ToolSpec> {
    let none = json!({"type": "object", "properties": {}});
    let index = json!({"type": "integer", "minimum": 0});
    vec![
        ToolSpec {
            name: names::READ.into(),
            description: "The working structure: its cell (a, b, c in angstrom, alpha, beta, \
                gamma in degrees, and the lattice vectors in the actions' Cartesian frame) and \
                every site: index, element, Cartesian and fractional coordinates."
                .into(),
            parameters: none.clone(),
        },
        ToolSpec {
            name: names::DISTANCE.into(),
            description: "The distance in angstrom between sites i and j: between their \
                coordinates as given, and the shortest over periodic images."
                .into(),
            parameters: json!({"type": "object", "properties": {"i": index, "j": index},
                               "required": ["i", "j"]}),
        },
        ToolSpec {
            name: names::NEIGHBOURS.into(),
            description: "The sites within `radius` angstrom of site `index` (shortest over \
                periodic images), each with its distance."
                .into(),
            parameters: json!({"type": "object", "properties": {"index": index,
                "radius": {"type": "number", "exclusiveMinimum": 0}},
                "required": ["index", "radius"]}),
        },
        ToolSpec {
            name: names::APPLY.into(),
            description: "Apply one action to the working structure. `action` is an object \
                with its kind in \"action\" and its parameters: change {index, element}, \
                remove {index}, add {element, position [x, y, z] Cartesian}, move {index, \
                displacement [dx, dy, dz]}, move_towards {index, towards, distance}, \
                insert_between {element, from, to, distance (from `from`)}, swap {first, \
                second}, delete_below {index, including_itself}, rotate_around {center, \
                radius, angle (degrees, right-hand rule), axis [x, y, z]}, super_cell {size \
                [n1, n2, n3]}, move_all {displacement}, delete_around {index, radius}, \
                move_selected {indices, displacement}, move_around {index, radius, \
                displacement}. Example: {\"action\": \"change\", \"index\": 0, \"element\": \
                \"K\"}."
                .into(),
            parameters: json!({"type": "object", "properties": {"action": {"type": "object"}},
                               "required": ["action"]}),
        },
        ToolSpec {
            name: names::WRITE.into(),
            description: "Give the working structure as the answer (a CIF) and end the task."
                .into(),
            parameters: none,
        },
    ]
}

/// The task's messages with [`TOOL_NOTE`] as a system message first.
pub fn with_note(messages: &[Message]) -> Vec<Message> {
    let mut out = vec![Message::system(TOOL_NOTE)];
    out.extend(messages.iter().filter(|m| m.role != Role::System).cloned());
    out
}

/// What one call did: its result for the model, and the answer when it finished the task.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The result the model reads.
    pub result: String,
    /// The CIF written, when the call was `write_cif`.
    pub answer: Option<String>,
}

/// `call` on the working structure `work` (changed by `apply_action` when it succeeds).
pub fn call(work: &mut Structure, call: &ToolCall) -> Outcome {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
    let site = |key: &str| -> Result<usize, String> {
        let i = args[key]
            .as_u64()
            .ok_or_else(|| format!("`{key}` must be a site index"))? as usize;
        if i < work.len() {
            Ok(i)
        } else {
            Err(format!(
                "site {i} does not exist (the structure has {} sites)",
                work.len()
            ))
        }
    };
    let result = match call.name.as_str() {
        names::READ => Ok(describe(work)),
        names::DISTANCE => site("i").and_then(|i| {
            let j = site("j")?;
            let (p, q) = (work.cartesian(i), work.cartesian(j));
            let raw = norm([q[0] - p[0], q[1] - p[1], q[2] - p[2]]);
            Ok(format!(
                "raw {raw:.6} A, shortest over periodic images {:.6} A",
                work.distance(i, j)
            ))
        }),
        names::NEIGHBOURS => site("index").and_then(|i| {
            let r = args["radius"]
                .as_f64()
                .filter(|r| *r > 0.0)
                .ok_or("`radius` must be a positive number")?;
            let list: Vec<Value> = work
                .neighbours(i, r)
                .iter()
                .map(|n| json!({"index": n.index, "image": n.image, "distance": n.distance}))
                .collect();
            Ok(Value::Array(list).to_string())
        }),
        names::APPLY => serde_json::from_value::<Action>(args["action"].clone())
            .map_err(|e| format!("not an action: {e}"))
            .and_then(|action| {
                apply(work, &action, Semantics::Reference).map_err(|e| e.to_string())
            })
            .map(|done| {
                *work = done.structure;
                format!("done: the working structure has {} sites", work.len())
            }),
        names::WRITE => {
            let cif = write_cif(&work.wrapped());
            return Outcome {
                result: "written".into(),
                answer: Some(cif),
            };
        }
        other => Err(format!("no tool named {other}")),
    };
    let mut text = result.unwrap_or_else(|e| format!("error: {e}"));
    if let Some((cut, _)) = text.char_indices().nth(MAX_RESULT_CHARS) {
        text.truncate(cut);
        text.push_str(" [cut]");
    }
    Outcome {
        result: text,
        answer: None,
    }
}

/// The structure as `read_structure` gives it.
fn describe(s: &Structure) -> String {
    let sites: Vec<Value> = s
        .sites
        .iter()
        .enumerate()
        .map(|(i, site)| {
            json!({"index": i, "element": site.element.symbol(),
                   "cartesian": s.cartesian(i), "fractional": site.frac})
        })
        .collect();
    json!({
        "lengths": s.lattice.lengths(),
        "angles": s.lattice.angles(),
        "lattice_vectors": s.lattice.matrix(),
        "sites": sites,
    })
    .to_string()
}

/// One model turn, as stored with the result: the reply and each call with its result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The turn's number (from 1).
    pub number: usize,
    /// The model's text.
    pub reply: String,
    /// The calls it made, in order.
    pub calls: Vec<Used>,
}

/// One call and its result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Used {
    /// The tool.
    pub name: String,
    /// Its arguments (JSON text).
    pub arguments: String,
    /// What it gave back.
    pub result: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::cif::read_cif;

    fn nacl() -> Structure {
        read_cif("data_x\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa 0 0 0\nCl .5 .5 .5\n").unwrap()
    }

    fn tool(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Each tool on a two-site cell: the numbers, an action applied, errors said, the CIF.
    #[test]
    fn each_tool_on_a_small_cell() {
        let mut s = nacl();
        let read: Value =
            serde_json::from_str(&call(&mut s, &tool(names::READ, "{}")).result).unwrap();
        assert_eq!(read["sites"][1]["element"], "Cl");
        assert_eq!(read["sites"][1]["cartesian"][0], 2.82);
        let d = call(&mut s, &tool(names::DISTANCE, r#"{"i":0,"j":1}"#)).result;
        let body = 2.82 * 3f64.sqrt();
        assert!(
            d.starts_with(&format!(
                "raw {body:.6} A, shortest over periodic images {body:.6} A"
            )),
            "{d}"
        );
        let n = call(
            &mut s,
            &tool(names::NEIGHBOURS, r#"{"index":0,"radius":3.0}"#),
        )
        .result;
        assert_eq!(
            serde_json::from_str::<Value>(&n)
                .unwrap()
                .as_array()
                .unwrap()
                .len(),
            0,
            "{n}"
        );
        let bad = call(&mut s, &tool(names::DISTANCE, r#"{"i":0,"j":7}"#)).result;
        assert_eq!(
            bad,
            "error: site 7 does not exist (the structure has 2 sites)"
        );
        let applied = call(
            &mut s,
            &tool(
                names::APPLY,
                r#"{"action":{"action":"change","index":0,"element":"K"}}"#,
            ),
        );
        assert_eq!(applied.result, "done: the working structure has 2 sites");
        assert_eq!(s.sites[0].element.symbol(), "K");
        let wrong = call(
            &mut s,
            &tool(names::APPLY, r#"{"action":{"action":"fly"}}"#),
        )
        .result;
        assert!(wrong.starts_with("error: not an action"), "{wrong}");
        let done = call(&mut s, &tool(names::WRITE, "{}"));
        let written = done.answer.unwrap();
        assert!(written.contains("\n  K  Na  1  0.00000000"), "{written}");
        assert_eq!(
            call(&mut s, &tool("teleport", "{}")).result,
            "error: no tool named teleport"
        );
    }
}
