//! From prompt text back to an [`Action`], accepting every historical wording (the reference's data sets):
//! numbers at any precision or in exponent notation, "Å" or "angstrom", the five supercell
//! separators, numpy-style or comma-separated vectors.

use std::sync::LazyLock;

use engine::numeric::norm;
use engine::{Element, Structure};
use regex_lite::{Captures, Regex};

use super::action::Action;

/// Why a prompt could not be turned into an action.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PromptParseError(pub String);

const NUM: &str = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)";
const UNIT: &str = r"(?:angstroms?|Å|Å|A)";
const ELEMENT: &str = r"([A-Za-z]{1,2})";

fn vec_pattern() -> String {
    format!(r"[\[(]\s*{NUM}[\s,]+{NUM}[\s,]+{NUM}\s*,?\s*[\])]")
}

fn rx(pattern: &str) -> Regex {
    let p = pattern
        .replace("{NUM}", NUM)
        .replace("{UNIT}", UNIT)
        .replace("{EL}", ELEMENT)
        .replace("{VEC}", &vec_pattern())
        .replace(' ', r"\s+");
    match Regex::new(&format!("(?i){p}")) {
        Ok(r) => r,
        // The patterns are constants of this file; a typo is a programming error caught by
        // the unit tests, never something user input can trigger.
        Err(e) => panic!("bad prompt pattern {pattern}: {e}"),
    }
}

struct Patterns {
    change: Regex,
    remove: Regex,
    add: Regex,
    move_all: Regex,
    move_around: Regex,
    move_around_upstream: Regex,
    move_selected: Regex,
    move_towards: Regex,
    move_by: Regex,
    insert_fraction: Regex,
    insert_distance: Regex,
    insert_newest: Regex,
    swap: Regex,
    delete_below: Regex,
    delete_below_old: Regex,
    delete_around: Regex,
    delete_around_upstream: Regex,
    rotate: Regex,
    supercell: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| Patterns {
    change: rx(r"Change the atom at index (\d+) (?:into|to) {EL}\b"),
    remove: rx(r"Remove the atom at index (\d+)"),
    add: rx(r"Add (?:one |an? )?{EL} atom at the Cartesian coordinates? {VEC}"),
    move_all: rx(r"Move (?:the )?all the atoms in the structure by {VEC}"),
    move_around: rx(
        r"Move the atom at index (\d+) and all atoms within {NUM} {UNIT} of it by {VEC}",
    ),
    move_around_upstream: rx(
        r"Move all surrounding atoms within {NUM} ?(?:{UNIT} )?(?:around|of) the cent(?:er|re) atom at index (\d+) by {VEC}",
    ),
    move_selected: rx(r"Move (?:the )?atoms at indices \[?((?:\d+[\s,]*(?:and\s+)?)+)\]? by {VEC}"),
    move_towards: rx(r"Move the atom at index (\d+) towards the atom at index (\d+) by {NUM}"),
    move_by: rx(r"Move the atom at index (\d+) by {VEC}"),
    insert_fraction: rx(
        r"Insert (?:an? )?{EL} (?:atom )?between atoms at indices (\d+) and (\d+) that (?:are|is) {NUM} of the way from (\d+) to (\d+)",
    ),
    insert_distance: rx(
        r"Insert (?:an? )?{EL} (?:atom )?between atoms at indices (\d+) and (\d+) that (?:are|is) {NUM} ?{UNIT} from (?:atom )?(\d+)",
    ),
    insert_newest: rx(
        r"Insert an? {EL} atom in the line between atoms at indices (\d+) and (\d+), and the inserted atom must be {NUM} ?{UNIT} from (?:the )?atom (?:at )?(?:index )?(\d+)",
    ),
    swap: rx(r"Swap (?:the spatial positions of )?atoms at indices (\d+) and (\d+)"),
    delete_below: rx(
        r"Delete all atoms whose z coordinate is lower than the atom at index (\d+)[^.]*\.\s*(Including|Excluding) itself",
    ),
    delete_below_old: rx(
        r"Delete all atoms below the atom at index (\d+)[^.]*\.(\s*Including itself)?",
    ),
    delete_around: rx(r"Delete the atom at index (\d+) and all atoms within {NUM} {UNIT} of it"),
    delete_around_upstream: rx(
        r"Delete all atoms within {NUM} ?(?:{UNIT} )?(?:around|of) the atom at index (\d+)",
    ),
    rotate: rx(
        r"Rotate all surrounding atoms within {NUM} ?{UNIT} of the cent(?:er|re) atom at index (\d+) by {NUM} ?degrees? around the axis {VEC}",
    ),
    supercell: rx(
        r"Create a supercell with the size (\d+)\s*(?:×|x|\*|X| by )\s*(\d+)\s*(?:×|x|\*|X| by )\s*(\d+)",
    ),
});

fn err(msg: impl Into<String>) -> PromptParseError {
    PromptParseError(msg.into())
}

fn index(c: &Captures, i: usize) -> Result<usize, PromptParseError> {
    let t = c.get(i).map_or("", |m| m.as_str());
    t.parse()
        .map_err(|_| err(format!("'{t}' is not a valid site index")))
}

fn number(c: &Captures, i: usize) -> Result<f64, PromptParseError> {
    let t = c.get(i).map_or("", |m| m.as_str());
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(err(format!("'{t}' is not a finite number"))),
    }
}

fn vector(c: &Captures, first: usize) -> Result<[f64; 3], PromptParseError> {
    Ok([
        number(c, first)?,
        number(c, first + 1)?,
        number(c, first + 2)?,
    ])
}

fn element(c: &Captures, i: usize) -> Result<Element, PromptParseError> {
    let t = c.get(i).map_or("", |m| m.as_str());
    let mut title = String::new();
    for (k, ch) in t.chars().enumerate() {
        if k == 0 {
            title.extend(ch.to_uppercase());
        } else {
            title.extend(ch.to_lowercase());
        }
    }
    Element::from_symbol(t)
        .or_else(|| Element::from_symbol(&title))
        .ok_or_else(|| err(format!("'{t}' is not a chemical element symbol")))
}

/// Parse an action prompt. The structure is needed only for the oldest insert_between
/// wording, which gives a fraction of the way instead of a distance.
pub fn parse_prompt(text: &str, structure: &Structure) -> Result<Action, PromptParseError> {
    let p = &*PATTERNS;
    let text = text.trim();
    if let Some(c) = p.change.captures(text) {
        return Ok(Action::Change {
            index: index(&c, 1)?,
            element: element(&c, 2)?,
        });
    }
    if let Some(c) = p.remove.captures(text) {
        return Ok(Action::Remove {
            index: index(&c, 1)?,
        });
    }
    if let Some(c) = p.add.captures(text) {
        return Ok(Action::Add {
            element: element(&c, 1)?,
            position: vector(&c, 2)?,
        });
    }
    if let Some(c) = p.move_all.captures(text) {
        return Ok(Action::MoveAll {
            displacement: vector(&c, 1)?,
        });
    }
    if let Some(c) = p.move_around.captures(text) {
        return Ok(Action::MoveAround {
            index: index(&c, 1)?,
            radius: number(&c, 2)?,
            displacement: vector(&c, 3)?,
        });
    }
    // The reference's own wordings (AtomWorldBench's actions): the radius before the centre.
    if let Some(c) = p.move_around_upstream.captures(text) {
        return Ok(Action::MoveAround {
            index: index(&c, 2)?,
            radius: number(&c, 1)?,
            displacement: vector(&c, 3)?,
        });
    }
    if let Some(c) = p.move_selected.captures(text) {
        let list = c.get(1).map_or("", |m| m.as_str());
        let indices = list
            .split(|ch: char| !ch.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| err(format!("'{s}' is not a valid site index")))
            })
            .collect::<Result<Vec<usize>, _>>()?;
        return Ok(Action::MoveSelected {
            indices,
            displacement: vector(&c, 2)?,
        });
    }
    if let Some(c) = p.move_towards.captures(text) {
        return Ok(Action::MoveTowards {
            index: index(&c, 1)?,
            towards: index(&c, 2)?,
            distance: number(&c, 3)?,
        });
    }
    if let Some(c) = p.move_by.captures(text) {
        return Ok(Action::Move {
            index: index(&c, 1)?,
            displacement: vector(&c, 2)?,
        });
    }
    if let Some(c) = p.insert_fraction.captures(text) {
        let (el, i, j, fraction) = (
            element(&c, 1)?,
            index(&c, 2)?,
            index(&c, 3)?,
            number(&c, 4)?,
        );
        let (from, to) = oriented(i, j, index(&c, 5)?)?;
        if from >= structure.len() || to >= structure.len() {
            return Err(err(format!(
                "indices {from} and {to}: the structure has {} sites",
                structure.len()
            )));
        }
        let (a, b) = (structure.cartesian(from), structure.cartesian(to));
        let len = norm([b[0] - a[0], b[1] - a[1], b[2] - a[2]]);
        return Ok(Action::InsertBetween {
            element: el,
            from,
            to,
            distance: fraction * len,
        });
    }
    for rx in [&p.insert_distance, &p.insert_newest] {
        if let Some(c) = rx.captures(text) {
            let (el, i, j, distance) = (
                element(&c, 1)?,
                index(&c, 2)?,
                index(&c, 3)?,
                number(&c, 4)?,
            );
            let (from, to) = oriented(i, j, index(&c, 5)?)?;
            return Ok(Action::InsertBetween {
                element: el,
                from,
                to,
                distance,
            });
        }
    }
    if let Some(c) = p.swap.captures(text) {
        return Ok(Action::Swap {
            first: index(&c, 1)?,
            second: index(&c, 2)?,
        });
    }
    if let Some(c) = p.delete_below.captures(text) {
        let word = c.get(2).map_or("", |m| m.as_str());
        return Ok(Action::DeleteBelow {
            index: index(&c, 1)?,
            including_itself: word.eq_ignore_ascii_case("including"),
        });
    }
    if let Some(c) = p.delete_below_old.captures(text) {
        return Ok(Action::DeleteBelow {
            index: index(&c, 1)?,
            including_itself: c.get(2).is_some(),
        });
    }
    if let Some(c) = p.delete_around.captures(text) {
        return Ok(Action::DeleteAround {
            index: index(&c, 1)?,
            radius: number(&c, 2)?,
        });
    }
    if let Some(c) = p.delete_around_upstream.captures(text) {
        return Ok(Action::DeleteAround {
            index: index(&c, 2)?,
            radius: number(&c, 1)?,
        });
    }
    if let Some(c) = p.rotate.captures(text) {
        return Ok(Action::RotateAround {
            radius: number(&c, 1)?,
            center: index(&c, 2)?,
            angle: number(&c, 3)?,
            axis: vector(&c, 4)?,
        });
    }
    if let Some(c) = p.supercell.captures(text) {
        let n = |i| {
            let t = c.get(i).map_or("", |m| m.as_str());
            t.parse::<u32>()
                .map_err(|_| err(format!("'{t}' is not a valid supercell size")))
        };
        return Ok(Action::SuperCell {
            size: [n(1)?, n(2)?, n(3)?],
        });
    }
    Err(err(
        "not recognised as an AtomWorld action (change, remove, add, move, move_towards, insert_between, swap, delete_below, rotate_around, super_cell, move_all, delete_around, move_selected, move_around)",
    ))
}

/// Order an insert_between pair so that the distance is measured from the first site.
fn oriented(i: usize, j: usize, from: usize) -> Result<(usize, usize), PromptParseError> {
    if from == i {
        Ok((i, j))
    } else if from == j {
        Ok((j, i))
    } else {
        Err(err(format!(
            "the distance is measured from atom {from}, which is neither {i} nor {j}"
        )))
    }
}
