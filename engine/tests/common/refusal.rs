//! Why a CIF file was refused, in one vocabulary for both readers: pymatgen's exceptions (and,
//! behind its generic "no structures", each data block's own exception, which it reports as a
//! warning) and our reader's messages. The CIF differential compares the two for every file
//! both refuse, so a file refused by both for different reasons is a disagreement.

use std::fmt;

/// The reason a file is refused.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// No line starts a data block (`data_`).
    NoDataBlock,
    /// Data blocks, but no atom site that names an element.
    NoElement,
    /// A loop whose values do not fill whole rows, or a loop without tags.
    LoopShape,
    /// A tag the structure needs is missing: the tag.
    Missing(String),
    /// Some of the cell's six parameters are missing.
    MissingCell,
    /// A value that should be a number is not: the value as written.
    NotANumber(String),
    /// A coordinate read as NaN (a lone `.` or `?` that survives as "unknown").
    NanCoordinate,
    /// The cell has no volume.
    NoVolume,
    /// The cell is thinner than pymatgen's minimum.
    ThinCell,
    /// A symmetry operation divides by zero.
    SymopDividesByZero,
    /// A row looked up past the end of a value: an empty symbol, or a row of a tag given
    /// once instead of in the loop (pymatgen indexes the string: "string index out of
    /// range").
    NoSuchRow,
    /// A kind of structure neither reader supports: which.
    NotSupported(&'static str),
}

impl Refusal {
    /// The reason's class, without its value.
    pub fn class(&self) -> &'static str {
        match self {
            Refusal::NoDataBlock => "no data block",
            Refusal::NoElement => "no element",
            Refusal::LoopShape => "loop shape",
            Refusal::Missing(_) => "missing tag",
            Refusal::MissingCell => "missing cell parameter",
            Refusal::NotANumber(_) => "not a number",
            Refusal::NanCoordinate => "NaN coordinate",
            Refusal::NoVolume => "no volume",
            Refusal::ThinCell => "thin cell",
            Refusal::SymopDividesByZero => "symmetry operation divides by zero",
            Refusal::NoSuchRow => "no such row",
            Refusal::NotSupported(_) => "not supported",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Missing(tag) => write!(f, "missing {tag}"),
            Refusal::NotANumber(v) => write!(f, "not a number ({v:?})"),
            Refusal::NotSupported(what) => write!(f, "not supported ({what})"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The class of pymatgen's refusal: its exception (`Type: message`), the exceptions of the
/// blocks it could not read, and how many data blocks it found. `None`: a reason not listed.
pub fn of_pymatgen(error: &str, causes: &[String], blocks: Option<usize>) -> Option<Refusal> {
    let (kind, message) = error.split_once(": ").unwrap_or((error, ""));
    match kind {
        "ValueError" if message.starts_with("Invalid CIF file with no structures") => {
            match causes.first() {
                Some(cause) => of_pymatgen_block(cause),
                None if blocks == Some(0) => Some(Refusal::NoDataBlock),
                None => Some(Refusal::NoElement),
            }
        }
        "ValueError" if message.starts_with("len(items)=") || message.starts_with("zip()") => {
            Some(Refusal::LoopShape)
        }
        // The rows of a loop: values modulo tags (no row) or divided by tags (no tag).
        "ZeroDivisionError" if message.starts_with("integer") => Some(Refusal::LoopShape),
        "ZeroDivisionError" if message == "float division by zero" => {
            Some(Refusal::SymopDividesByZero)
        }
        "KeyError" => Some(Refusal::Missing(unquote(message)?)),
        "TypeError" if message.starts_with("Lattice.") && message.contains("missing") => {
            Some(Refusal::MissingCell)
        }
        "IndexError" if message == "string index out of range" => Some(Refusal::NoSuchRow),
        "NotImplementedError" if message.starts_with("Disordered magnetic") => {
            Some(Refusal::NotSupported("disordered magnetic structure"))
        }
        "NotImplementedError" if message.starts_with("Incommensurate") => {
            Some(Refusal::NotSupported("incommensurate structure"))
        }
        _ => None,
    }
}

/// The class of one data block's exception (its message only: pymatgen's warning drops the
/// type).
fn of_pymatgen_block(cause: &str) -> Option<Refusal> {
    if let Some(value) = cause.strip_prefix("could not convert string to float: ") {
        return Some(Refusal::NotANumber(unquote(value)?));
    }
    if cause.starts_with("cannot reshape array of size") {
        // The cell's parameters, fewer than six, reshaped into a matrix.
        return Some(Refusal::MissingCell);
    }
    if cause.starts_with("thickness=") {
        return Some(Refusal::ThinCell);
    }
    match cause {
        "Singular matrix" => Some(Refusal::NoVolume),
        "cannot convert float NaN to integer" => Some(Refusal::NanCoordinate),
        // A KeyError's message is the missing key, quoted.
        _ => Some(Refusal::Missing(unquote(cause)?)).filter(
            |r| matches!(r, Refusal::Missing(tag) if tag.starts_with('_') && !tag.contains(' ')),
        ),
    }
}

/// The class of our reader's refusal, from its message. `None`: a message not listed.
pub fn of_ours(message: &str) -> Option<Refusal> {
    let m = message
        .strip_prefix("no structure in the CIF: ")
        .unwrap_or(message);
    if m.starts_with("no line starts with data_") {
        return Some(Refusal::NoDataBlock);
    }
    if m.starts_with("no atom site names an element") {
        return Some(Refusal::NoElement);
    }
    if m.starts_with("loop has ") || m.starts_with("loop with ") || m.starts_with("loop_ without") {
        return Some(Refusal::LoopShape);
    }
    if m.starts_with("missing cell parameters") || m.starts_with("cubic cell without") {
        return Some(Refusal::MissingCell);
    }
    if m.starts_with("_atom_site_type_symbol without _atom_site_label") {
        return Some(Refusal::Missing("_atom_site_label".into()));
    }
    if let Some(tag) = m.strip_prefix("missing ") {
        return Some(Refusal::Missing(tag.split_whitespace().next()?.to_string()));
    }
    if let Some(rest) = m.strip_suffix("' is not a number") {
        let (_, value) = rest.split_once(": '")?;
        return Some(Refusal::NotANumber(value.to_string()));
    }
    if m.ends_with("has a coordinate that is not a number") {
        return Some(Refusal::NanCoordinate);
    }
    if m.ends_with("has no volume") {
        return Some(Refusal::NoVolume);
    }
    if m.starts_with("cell thickness") {
        return Some(Refusal::ThinCell);
    }
    if m.starts_with("symmetry operation") && m.ends_with("divides by zero") {
        return Some(Refusal::SymopDividesByZero);
    }
    if m.contains("has a label but no _atom_site_type_symbol")
        || m.starts_with("empty atom type symbol or label")
        || (m.contains(" has no row ") && m.ends_with("(pymatgen: IndexError)"))
    {
        return Some(Refusal::NoSuchRow);
    }
    if m.starts_with("not supported: a disordered magnetic structure") {
        return Some(Refusal::NotSupported("disordered magnetic structure"));
    }
    if m.starts_with("not supported: an incommensurate") {
        return Some(Refusal::NotSupported("incommensurate structure"));
    }
    None
}

/// A Python `repr` of a string without its quotes (`'a'` or `"a'b"`).
fn unquote(repr: &str) -> Option<String> {
    let first = repr.chars().next()?;
    if (first == '\'' || first == '"') && repr.len() >= 2 && repr.ends_with(first) {
        Some(repr[1..repr.len() - 1].to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_refusal_in_both_vocabularies() {
        let pairs: [(&str, &[&str], &str); 6] = [
            (
                "ValueError: len(items)=96 is not a multiple of n=13",
                &[],
                "loop has 13 tags but 96 values, not a whole number of rows",
            ),
            (
                "ValueError: Invalid CIF file with no structures!",
                &["could not convert string to float: \"0.1'2\""],
                "no structure in the CIF: _atom_site_fract_x: '0.1'2' is not a number",
            ),
            (
                "ValueError: Invalid CIF file with no structures!",
                &["'_atom_site_fract_y'"],
                "no structure in the CIF: missing _atom_site_fract_y",
            ),
            (
                "KeyError: '_atom_site_label'",
                &[],
                "_atom_site_type_symbol without _atom_site_label (pymatgen: KeyError)",
            ),
            (
                "ValueError: Invalid CIF file with no structures!",
                &["Singular matrix"],
                "no structure in the CIF: cell a=1 b=1 c=1 alpha=90 beta=90 gamma=0 has no volume",
            ),
            (
                "ZeroDivisionError: float division by zero",
                &[],
                "symmetry operation 'x, y, z+1/0' divides by zero",
            ),
        ];
        for (error, causes, ours) in pairs {
            let causes: Vec<String> = causes.iter().map(|c| c.to_string()).collect();
            let theirs = of_pymatgen(error, &causes, Some(1));
            assert!(theirs.is_some(), "{error} {causes:?}");
            assert_eq!(theirs, of_ours(ours), "{error} {causes:?} / {ours}");
        }
    }

    #[test]
    fn different_values_are_different_refusals() {
        let causes = vec!["could not convert string to float: '?'".to_string()];
        let theirs = of_pymatgen(
            "ValueError: Invalid CIF file with no structures!",
            &causes,
            Some(1),
        );
        assert_ne!(theirs, of_ours("_cell_length_a: 'abc' is not a number"));
        assert_eq!(
            of_pymatgen("RuntimeError: something new", &[], Some(1)),
            None
        );
        assert_eq!(of_ours("something new"), None);
    }
}
