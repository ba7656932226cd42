//! Free-text prompts the parser rejects ("create a 2x2x1 supercell", "Remove atom 3"): the
//! closest accepted wording, filled with the user's own numbers and elements, for the page
//! to offer with one click. A suggestion is offered only when it parses and applies to the
//! structure (indices in range), so a click always gives a working task.

use engine::element::Element;
use engine::structure::Structure;

use super::action::Action;
use super::apply::apply;
use super::parse::parse_prompt;
use super::wording::{render_prompt, PromptStyle};
use super::Semantics;

/// The numbers in `text`, in order (integers and decimals, with a sign).
fn numbers(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let sign = (b[i] == b'-' || b[i] == b'+') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b[i].is_ascii_digit() || sign {
            let start = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            {
                i += 1;
            }
            if let Ok(v) = text[start..i].parse::<f64>() {
                out.push(v);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The element symbols named in `text` (capitalised words that are symbols), in order.
fn elements(text: &str) -> Vec<Element> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| (1..=2).contains(&w.len()) && w.starts_with(|c: char| c.is_ascii_uppercase()))
        .filter_map(Element::from_symbol)
        .collect()
}

fn index(v: f64) -> Option<usize> {
    (v >= 0.0 && v.fract() == 0.0 && v < 1e9).then_some(v as usize)
}

/// The action the words of `text` most likely mean, with its numbers.
fn guess(text: &str) -> Option<Action> {
    let t = text.to_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    // A word starting with `w` ("remove" is not "move"; "towards" is "toward").
    let has = |w: &str| {
        if w.contains(' ') || w.contains('-') {
            t.contains(w)
        } else {
            words.iter().any(|x| x.starts_with(w))
        }
    };
    let n = numbers(text);
    let els = elements(text);
    if has("supercell") || has("super cell") || has("super-cell") {
        let size: Vec<u32> = n
            .iter()
            .filter_map(|&v| index(v))
            .filter_map(|v| u32::try_from(v).ok())
            .take(3)
            .collect();
        return match size.as_slice() {
            [a, b, c] => Some(Action::SuperCell { size: [*a, *b, *c] }),
            [a] => Some(Action::SuperCell { size: [*a, *a, *a] }),
            _ => None,
        };
    }
    if has("swap") || has("exchange") {
        return match n.as_slice() {
            [a, b, ..] => Some(Action::Swap {
                first: index(*a)?,
                second: index(*b)?,
            }),
            _ => None,
        };
    }
    if has("rotate") {
        // index, radius, angle, then an axis of three numbers.
        return match n.as_slice() {
            [c, r, a, x, y, z, ..] => Some(Action::RotateAround {
                center: index(*c)?,
                radius: *r,
                angle: *a,
                axis: [*x, *y, *z],
            }),
            _ => None,
        };
    }
    if (has("delete") || has("remove")) && (has("below") || has("lower") || has("under")) {
        return Some(Action::DeleteBelow {
            index: index(*n.first()?)?,
            including_itself: !has("exclud"),
        });
    }
    if has("insert") {
        return match (els.first(), n.as_slice()) {
            (Some(e), [a, b, d, ..]) => Some(Action::InsertBetween {
                element: *e,
                from: index(*a)?,
                to: index(*b)?,
                distance: *d,
            }),
            _ => None,
        };
    }
    if has("toward") {
        return match n.as_slice() {
            [a, b, d, ..] => Some(Action::MoveTowards {
                index: index(*a)?,
                towards: index(*b)?,
                distance: *d,
            }),
            _ => None,
        };
    }
    if has("add") || has("place") || has("put") {
        return match (els.first(), n.as_slice()) {
            (Some(e), [.., x, y, z]) => Some(Action::Add {
                element: *e,
                position: [*x, *y, *z],
            }),
            _ => None,
        };
    }
    if has("move") || has("shift") || has("displace") || has("translate") {
        return match n.as_slice() {
            [i, x, y, z, ..] => Some(Action::Move {
                index: index(*i)?,
                displacement: [*x, *y, *z],
            }),
            _ => None,
        };
    }
    if has("change") || has("replace") || has("substitut") || has("turn") || has("convert") {
        return match (els.last(), n.first()) {
            (Some(e), Some(i)) => Some(Action::Change {
                index: index(*i)?,
                element: *e,
            }),
            _ => None,
        };
    }
    if has("remove") || has("delete") || has("drop") {
        return Some(Action::Remove {
            index: index(*n.first()?)?,
        });
    }
    None
}

/// The accepted wording closest to `text`, with its numbers, when `text` itself does not
/// parse and the suggestion does (against `structure`).
pub fn suggest(text: &str, structure: &Structure) -> Option<String> {
    if parse_prompt(text, structure).is_ok() {
        return None;
    }
    let action = guess(text)?;
    let prompt = render_prompt(&action, PromptStyle::default(), structure).ok()?;
    let parsed = parse_prompt(&prompt, structure).ok()?;
    apply(structure, &parsed, Semantics::Reference).ok()?;
    Some(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::cif::read_cif;

    fn nacl() -> Structure {
        read_cif(
            "data_x\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n\
            _cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
            _symmetry_space_group_name_H-M 'P 1'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n\
            _atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n\
            Na1 Na 0 0 0\nCl1 Cl 0.5 0.5 0.5\nNa2 Na 0.5 0.5 0\nCl2 Cl 0 0 0.5\n",
        )
        .unwrap()
    }

    #[test]
    fn free_text_gets_the_accepted_wording_with_its_numbers() {
        let s = nacl();
        let cases = [
            (
                "create a 2x2x1 supercell",
                "Create a supercell with the size 2",
            ),
            (
                "Remove atom 3",
                "Remove the atom at index 3 from the cif file.",
            ),
            (
                "swap 0 and 1",
                "Swap the spatial positions of atoms at indices 0 and 1",
            ),
            (
                "change atom 2 to K",
                "Change the atom at index 2 into K in the cif file.",
            ),
            ("move atom 1 by 0.5 0 -0.25", "Move the atom at index 1 by"),
            (
                "delete everything below atom 3",
                "Delete all atoms whose z coordinate is lower than the atom at index 3",
            ),
        ];
        for (text, start) in cases {
            let got = suggest(text, &s).unwrap_or_else(|| panic!("no suggestion for {text:?}"));
            assert!(got.starts_with(start), "{text:?} -> {got:?}");
            assert!(parse_prompt(&got, &s).is_ok());
        }
        // The numbers are the user's.
        let got = suggest("create a 2x2x1 supercell", &s).unwrap();
        assert!(got.contains('2') && got.contains('1'), "{got}");
        // An index out of range or words without an action: nothing to offer.
        assert_eq!(suggest("Remove atom 9", &s), None);
        assert_eq!(suggest("make it nicer", &s), None);
        // An accepted prompt needs no suggestion.
        assert_eq!(suggest("Remove the atom at index 3 from the cif file. The indices of atoms are started from 0.", &s), None);
    }
}
