//! Action prompts in the reference's words.
//!
//! The default wording is that of the 2026 data set (the reference code); older and newer variants
//! (the reference's data sets) are selectable so that imported data sets can be re-rendered as they were.

use engine::numeric::norm;
use engine::Structure;
use serde::{Deserialize, Serialize};

use super::action::Action;
use super::numbers::numpy_vector;
use engine::python::py_repr;

/// Which historical wording to render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wording {
    /// The 2026 data set (the paper's current numbers): the default.
    #[default]
    Data2026,
    /// The data set that printed scalars with four decimals ("1.8800 angstrom from 47").
    FourDecimal,
    /// The newest reference code and the paper's table ("Insert a Na atom in the line …").
    Newest,
    /// The oldest wording ("2.78 of the way from 32 to 66", short swap and delete_below).
    Oldest,
}

/// The separator between supercell sizes ("2×2×1", "2x2x1", "2*2*1", "2X2X1", "2 by 2 by 1").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Separator {
    /// `×`
    #[default]
    Times,
    /// `x`
    LowerX,
    /// `*`
    Star,
    /// `X`
    UpperX,
    /// ` by `
    By,
}

impl Separator {
    /// All five separators, in the order the generator samples from.
    pub const ALL: [Separator; 5] = [
        Separator::Times,
        Separator::LowerX,
        Separator::Star,
        Separator::UpperX,
        Separator::By,
    ];

    /// The text between two sizes.
    pub fn text(self) -> &'static str {
        match self {
            Separator::Times => "×",
            Separator::LowerX => "x",
            Separator::Star => "*",
            Separator::UpperX => "X",
            Separator::By => " by ",
        }
    }
}

/// How to render a prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptStyle {
    /// The wording variant.
    pub wording: Wording,
    /// The supercell separator.
    pub separator: Separator,
}

/// Why a prompt cannot be rendered.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The oldest insert_between wording gives a fraction of the way, which needs the two
    /// sites to exist and differ.
    #[error("cannot express the distance as a fraction: {0}")]
    NoFraction(String),
}

const INDICES_FROM_ZERO: &str = "The indices of atoms are started from 0.";

/// A scalar as this wording prints it.
fn scalar(x: f64, wording: Wording) -> String {
    match wording {
        Wording::FourDecimal => format!("{x:.4}"),
        _ => py_repr(x),
    }
}

/// Render the prompt for `action` on `structure` (the structure is only consulted by the
/// oldest insert_between wording, which states a fraction of the way).
pub fn render_prompt(
    action: &Action,
    style: PromptStyle,
    structure: &Structure,
) -> Result<String, RenderError> {
    let w = style.wording;
    Ok(match action {
        Action::Change { index, element } => format!(
            "Change the atom at index {index} into {element} in the cif file. {INDICES_FROM_ZERO}"
        ),
        Action::Remove { index } => {
            format!("Remove the atom at index {index} from the cif file. {INDICES_FROM_ZERO}")
        }
        Action::Add { element, position } => format!(
            "Add one {element} atom at the Cartesian coordinate {} to the cif file.",
            numpy_vector(position)
        ),
        Action::Move {
            index,
            displacement,
        } => format!(
            "Move the atom at index {index} by {} angstrom in the cif file.",
            numpy_vector(displacement)
        ),
        Action::MoveTowards {
            index,
            towards,
            distance,
        } => format!(
            "Move the atom at index {index} towards the atom at index {towards} by {} angstrom in the cif file.",
            scalar(*distance, w)
        ),
        Action::InsertBetween {
            element,
            from,
            to,
            distance,
        } => match w {
            Wording::Data2026 => format!(
                "Insert {element} between atoms at indices {from} and {to} that are {distance:.2} Å from {from} in the cif file."
            ),
            Wording::FourDecimal => format!(
                "Insert {element} between atoms at indices {from} and {to} that are {distance:.4} angstrom from {from} in the cif file."
            ),
            Wording::Newest => format!(
                "Insert a {element} atom in the line between atoms at indices {from} and {to}, and the inserted atom must be {} angstrom from atom at {from} in the cif file.",
                py_repr(*distance)
            ),
            Wording::Oldest => {
                if *from >= structure.len() || *to >= structure.len() {
                    return Err(RenderError::NoFraction("index out of range".into()));
                }
                let p = structure.cartesian(*from);
                let q = structure.cartesian(*to);
                let len = norm([q[0] - p[0], q[1] - p[1], q[2] - p[2]]);
                if len == 0.0 {
                    return Err(RenderError::NoFraction("the two sites coincide".into()));
                }
                format!(
                    "Insert {element} between atoms at indices {from} and {to} that are {:.2} of the way from {from} to {to} in the cif file.",
                    distance / len
                )
            }
        },
        Action::Swap { first, second } => match w {
            Wording::Oldest => format!("Swap atoms at indices {first} and {second} in the cif file."),
            _ => format!(
                "Swap the spatial positions of atoms at indices {first} and {second} in the cif file. {INDICES_FROM_ZERO}"
            ),
        },
        Action::DeleteBelow {
            index,
            including_itself,
        } => match w {
            Wording::Oldest => format!(
                "Delete all atoms below the atom at index {index} in the cif file.{}",
                if *including_itself { " Including itself." } else { "" }
            ),
            _ => format!(
                "Delete all atoms whose z coordinate is lower than the atom at index {index} in the cif file. {} itself and atoms with the same z coordinate.",
                if *including_itself { "Including" } else { "Excluding" }
            ),
        },
        Action::RotateAround {
            center,
            radius,
            angle,
            axis,
        } => format!(
            "Rotate all surrounding atoms within {} angstrom of the center atom at index {center} by {} degree around the axis {} in the cif file. The rotation should following the right-hand rule.",
            scalar(*radius, w),
            scalar(*angle, w),
            numpy_vector(axis)
        ),
        Action::SuperCell { size } => {
            let m = style.separator.text();
            format!(
                "Create a supercell with the size {}{m}{}{m}{}.",
                size[0], size[1], size[2]
            )
        }
        Action::MoveAll { displacement } => format!(
            "Move the all the atoms in the structure by {} angstrom in the cif file. Do not need to consider periodic boundary conditions. Please keep the cell and the order of atoms unchanged.",
            numpy_vector(displacement)
        ),
        Action::DeleteAround { index, radius } => format!(
            "Delete the atom at index {index} and all atoms within {} angstrom of it in the cif file. {INDICES_FROM_ZERO}",
            scalar(*radius, w)
        ),
        Action::MoveSelected {
            indices,
            displacement,
        } => format!(
            "Move the atoms at indices {} by {} angstrom in the cif file. {INDICES_FROM_ZERO}",
            indices
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            numpy_vector(displacement)
        ),
        Action::MoveAround {
            index,
            radius,
            displacement,
        } => format!(
            "Move the atom at index {index} and all atoms within {} angstrom of it by {} angstrom in the cif file. {INDICES_FROM_ZERO}",
            scalar(*radius, w),
            numpy_vector(displacement)
        ),
    })
}
