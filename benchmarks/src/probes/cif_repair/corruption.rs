//! The two kinds of corruption: removing an essential line, renaming tags misleadingly.
//!
//! Both work on the text line by line, so the task can show the corruption as a diff of
//! the original and corrupted CIF ([`LineChange`]). The input is expected in pymatgen's
//! `CifWriter` layout (one tag per line, `tag   value` or a loop header line).

use serde::{Deserialize, Serialize};

/// The tags whose line may be removed (the AtomWorld paper, the reference's list).
pub const ESSENTIAL_TAGS: [&str; 13] = [
    "_cell_length_a",
    "_cell_length_b",
    "_cell_length_c",
    "_cell_angle_alpha",
    "_cell_angle_beta",
    "_cell_angle_gamma",
    "_atom_site_type_symbol",
    "_atom_site_label",
    "_atom_site_symmetry_multiplicity",
    "_atom_site_fract_x",
    "_atom_site_fract_y",
    "_atom_site_fract_z",
    "_atom_site_occupancy",
];

/// The misleading renamings (the AtomWorld paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenameScheme {
    /// `_cell_length_a/b/c` → `_cell_length_x/y/z`.
    CellAxesToXyz,
    /// `_cell_length_a/b/c` → `_cell_length_u/v/w`.
    CellAxesToUvw,
    /// `_cell_length_a/b/c` → `_cell_length_i/j/k`.
    CellAxesToIjk,
    /// `_atom_site_fract_x/y/z` → `_atom_site_fract_a/b/c`.
    FractAxesToAbc,
    /// `_atom_site_fract_x/y/z` → `_atom_site_fract_u/v/w`.
    FractAxesToUvw,
    /// `_atom_site_fract_x/y/z` → `_atom_site_fract_i/j/k`.
    FractAxesToIjk,
    /// `_atom_site_*` → `_atom_*`.
    AtomSiteToAtom,
    /// `_cell_*` → `_lattice_*`.
    CellToLattice,
    /// `_cell_length_*` and `_cell_angle_*` → `_cell_*`.
    CellLengthAngleToCell,
}

impl RenameScheme {
    /// All schemes, in the generator's draw order.
    pub const ALL: [RenameScheme; 9] = [
        RenameScheme::CellAxesToXyz,
        RenameScheme::CellAxesToUvw,
        RenameScheme::CellAxesToIjk,
        RenameScheme::FractAxesToAbc,
        RenameScheme::FractAxesToUvw,
        RenameScheme::FractAxesToIjk,
        RenameScheme::AtomSiteToAtom,
        RenameScheme::CellToLattice,
        RenameScheme::CellLengthAngleToCell,
    ];

    /// What the scheme renames, as a table row names it.
    pub fn name(self) -> &'static str {
        match self {
            RenameScheme::CellAxesToXyz => "_cell_length_a/b/c → x/y/z",
            RenameScheme::CellAxesToUvw => "_cell_length_a/b/c → u/v/w",
            RenameScheme::CellAxesToIjk => "_cell_length_a/b/c → i/j/k",
            RenameScheme::FractAxesToAbc => "_atom_site_fract_x/y/z → a/b/c",
            RenameScheme::FractAxesToUvw => "_atom_site_fract_x/y/z → u/v/w",
            RenameScheme::FractAxesToIjk => "_atom_site_fract_x/y/z → i/j/k",
            RenameScheme::AtomSiteToAtom => "_atom_site_* → _atom_*",
            RenameScheme::CellToLattice => "_cell_* → _lattice_*",
            RenameScheme::CellLengthAngleToCell => "_cell_length_*, _cell_angle_* → _cell_*",
        }
    }

    /// The new name of `tag` under this scheme, or `None` when the scheme leaves it alone.
    pub fn rename(self, tag: &str) -> Option<String> {
        let axes = |prefix: &str, from: [&str; 3], to: [&str; 3]| {
            let rest = tag.strip_prefix(prefix)?;
            let k = from.iter().position(|x| *x == rest)?;
            Some(format!("{prefix}{}", to[k]))
        };
        const CELL: &str = "_cell_length_";
        const FRACT: &str = "_atom_site_fract_";
        match self {
            RenameScheme::CellAxesToXyz => axes(CELL, ["a", "b", "c"], ["x", "y", "z"]),
            RenameScheme::CellAxesToUvw => axes(CELL, ["a", "b", "c"], ["u", "v", "w"]),
            RenameScheme::CellAxesToIjk => axes(CELL, ["a", "b", "c"], ["i", "j", "k"]),
            RenameScheme::FractAxesToAbc => axes(FRACT, ["x", "y", "z"], ["a", "b", "c"]),
            RenameScheme::FractAxesToUvw => axes(FRACT, ["x", "y", "z"], ["u", "v", "w"]),
            RenameScheme::FractAxesToIjk => axes(FRACT, ["x", "y", "z"], ["i", "j", "k"]),
            RenameScheme::AtomSiteToAtom => tag
                .strip_prefix("_atom_site_")
                .map(|rest| format!("_atom_{rest}")),
            RenameScheme::CellToLattice => tag
                .strip_prefix("_cell_")
                .map(|rest| format!("_lattice_{rest}")),
            RenameScheme::CellLengthAngleToCell => tag
                .strip_prefix("_cell_length_")
                .or_else(|| tag.strip_prefix("_cell_angle_"))
                .map(|rest| format!("_cell_{rest}")),
        }
    }
}

/// What was done to the CIF.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Corruption {
    /// The line of one essential tag was deleted.
    RemovedLine {
        /// The tag (one of [`ESSENTIAL_TAGS`]).
        tag: String,
        /// The value that stood on the line (`None` for a loop header: the values are
        /// still in the loop's rows, only the column's name is gone).
        value: Option<String>,
    },
    /// Tags were renamed.
    Renamed {
        /// The scheme.
        scheme: RenameScheme,
        /// Each renamed tag: (original, new).
        renames: Vec<(String, String)>,
    },
}

impl Corruption {
    /// The name the corruption is tabled under: `remove _cell_length_a`, `rename _cell_* →
    /// _lattice_*`.
    pub fn name(&self) -> String {
        match self {
            Corruption::RemovedLine { tag, .. } => format!("remove {tag}"),
            Corruption::Renamed { scheme, .. } => format!("rename {}", scheme.name()),
        }
    }

    /// The value a `[VALUE_TO_BE_INSERTED]` placeholder stands for, if the corruption
    /// removed one.
    pub fn removed_value(&self) -> Option<&str> {
        match self {
            Corruption::RemovedLine { value, .. } => value.as_deref(),
            Corruption::Renamed { .. } => None,
        }
    }
}

/// One changed line, for a diff view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineChange {
    /// 1-based line number in the original CIF.
    pub line: usize,
    /// The original line.
    pub before: String,
    /// The line in the corrupted CIF (`None` when it was removed).
    pub after: Option<String>,
}

/// A corrupted CIF with a record of the corruption.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Corrupted {
    /// The corrupted text.
    pub text: String,
    /// What was done.
    pub corruption: Corruption,
    /// The changed lines.
    pub changes: Vec<LineChange>,
}

/// The request for one corruption.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CorruptionRequest {
    /// Remove the line of `ESSENTIAL_TAGS[tag]`.
    RemoveLine {
        /// Index into [`ESSENTIAL_TAGS`].
        tag: usize,
    },
    /// Rename tags by a scheme.
    Rename {
        /// The scheme.
        scheme: RenameScheme,
    },
}

/// The first token of a line when it is a tag.
fn tag_of(line: &str) -> Option<&str> {
    let t = line.split_whitespace().next()?;
    t.starts_with('_').then_some(t)
}

/// Apply a corruption to CIF text. `None` when it changes nothing (the tag to remove or
/// rename is absent).
pub fn corrupt(cif: &str, request: CorruptionRequest) -> Option<Corrupted> {
    let lines: Vec<&str> = cif.split('\n').collect();
    let mut changes = Vec::new();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let corruption = match request {
        CorruptionRequest::RemoveLine { tag } => {
            let tag = *ESSENTIAL_TAGS.get(tag)?;
            let mut value = None;
            for (i, line) in lines.iter().enumerate() {
                if changes.is_empty() && tag_of(line) == Some(tag) {
                    let rest = line.trim_start()[tag.len()..].trim();
                    value = (!rest.is_empty()).then(|| rest.to_string());
                    changes.push(LineChange {
                        line: i + 1,
                        before: line.to_string(),
                        after: None,
                    });
                } else {
                    out.push(line.to_string());
                }
            }
            Corruption::RemovedLine {
                tag: tag.to_string(),
                value,
            }
        }
        CorruptionRequest::Rename { scheme } => {
            let mut renames = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                match tag_of(line).and_then(|t| Some((t, scheme.rename(t)?))) {
                    Some((old, new)) => {
                        let after = line.replacen(old, &new, 1);
                        changes.push(LineChange {
                            line: i + 1,
                            before: line.to_string(),
                            after: Some(after.clone()),
                        });
                        renames.push((old.to_string(), new));
                        out.push(after);
                    }
                    None => out.push(line.to_string()),
                }
            }
            Corruption::Renamed { scheme, renames }
        }
    };
    if changes.is_empty() {
        return None;
    }
    Some(Corrupted {
        text: out.join("\n"),
        corruption,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CIF: &str = "data_X\n_cell_length_a   4.00000000\n_cell_angle_alpha   90.00000000\n_cell_volume   64.0\nloop_\n _atom_site_type_symbol\n _atom_site_fract_x\n  Na  0.0\n";

    #[test]
    fn removing_a_value_line_records_the_value() {
        let c = corrupt(CIF, CorruptionRequest::RemoveLine { tag: 0 }).unwrap();
        assert_eq!(c.corruption.removed_value(), Some("4.00000000"));
        assert!(!c.text.contains("_cell_length_a"));
        assert_eq!(c.text.lines().count(), CIF.lines().count() - 1);
        assert_eq!(
            c.changes,
            vec![LineChange {
                line: 2,
                before: "_cell_length_a   4.00000000".into(),
                after: None
            }]
        );
    }

    #[test]
    fn removing_a_loop_header_has_no_value() {
        let c = corrupt(CIF, CorruptionRequest::RemoveLine { tag: 9 }).unwrap();
        assert_eq!(c.corruption.removed_value(), None);
        assert_eq!(c.changes[0].line, 7);
        assert!(corrupt(CIF, CorruptionRequest::RemoveLine { tag: 12 }).is_none());
    }

    #[test]
    fn renames() {
        let r = |s: RenameScheme, t: &str| s.rename(t);
        assert_eq!(
            r(RenameScheme::CellAxesToUvw, "_cell_length_b").as_deref(),
            Some("_cell_length_v")
        );
        assert_eq!(r(RenameScheme::CellAxesToUvw, "_cell_angle_beta"), None);
        assert_eq!(
            r(RenameScheme::FractAxesToAbc, "_atom_site_fract_z").as_deref(),
            Some("_atom_site_fract_c")
        );
        assert_eq!(
            r(RenameScheme::AtomSiteToAtom, "_atom_site_label").as_deref(),
            Some("_atom_label")
        );
        assert_eq!(
            r(RenameScheme::CellToLattice, "_cell_volume").as_deref(),
            Some("_lattice_volume")
        );
        assert_eq!(
            r(RenameScheme::CellLengthAngleToCell, "_cell_angle_gamma").as_deref(),
            Some("_cell_gamma")
        );
        assert_eq!(r(RenameScheme::CellLengthAngleToCell, "_cell_volume"), None);
        let c = corrupt(
            CIF,
            CorruptionRequest::Rename {
                scheme: RenameScheme::CellToLattice,
            },
        )
        .unwrap();
        assert_eq!(c.changes.len(), 3);
        assert!(c
            .text
            .contains("_lattice_length_a   4.00000000\n_lattice_angle_alpha"));
        assert_eq!(c.text.lines().count(), CIF.lines().count());
        assert!(corrupt(
            CIF,
            CorruptionRequest::Rename {
                scheme: RenameScheme::CellAxesToIjk
            }
        )
        .unwrap()
        .text
        .contains("_cell_length_i   4.00000000"));
    }
}
