//! VASP POSCAR/CONTCAR: reading (VASP 4, 5 and 6 layouts) and writing exactly as pymatgen's
//! `Poscar(structure).get_str()` does.
//!
//! Reading follows pymatgen's `Poscar.from_str` where it is well defined: the structure ends
//! at the first blank line (velocities and predictor-corrector blocks follow it), text after
//! `#` is a comment, a negative scale is a target volume, POTCAR-style names (`Mg_pv/f474ac0d`)
//! give their element, element names may span several lines (VASP writes more than 20 groups
//! that way), and VASP 4 files may name the element after each coordinate. Two deliberate
//! differences, both where pymatgen would silently give a wrong structure: a file whose
//! elements cannot be determined is an error (pymatgen invents H, He, Li, …), and Cartesian
//! coordinates under a negative (volume) scale are scaled by the derived factor (pymatgen
//! multiplies them by the negative number). Selective-dynamics flags and velocities are read
//! past, not kept.

use super::lines::{self, number, split_lines, Line, Token};
use super::{Format, FormatError};
use crate::cif::formula::{element_amounts, formula};
use crate::cif::Pos;
use crate::element::Element;
use crate::lattice::{Lattice, Matrix3};
use crate::numeric::{cross, dot};
use crate::structure::{Site, Structure};

fn err(pos: Pos, message: impl Into<String>) -> FormatError {
    FormatError::at(Format::Poscar, pos, message)
}

/// Reads a POSCAR/CONTCAR. Site labels are the element symbols; occupancies are 1.
pub fn read_poscar(text: &str) -> Result<Structure, FormatError> {
    let all = split_lines(text);
    // pymatgen strips comments after '#' and ends the structure at the first blank line
    // (leading blank lines are skipped).
    let mut lines: Vec<Line<'_>> = Vec::new();
    for line in all {
        let cut = line.text.find('#').map_or(line.text, |i| &line.text[..i]);
        let tokens: Vec<Token<'_>> = lines::tokens(cut, line.number);
        if tokens.is_empty() && line.number > 1 {
            if lines.len() > 1 {
                break;
            }
            if lines.len() == 1 {
                // A blank line right after the comment: the scale line is missing.
                return Err(err(
                    line.start(),
                    "expected the scale factor, found a blank line",
                ));
            }
            continue;
        }
        lines.push(Line { tokens, ..line });
    }
    let mut cursor = Cursor {
        lines: &lines,
        at: 0,
    };
    let _comment = cursor.next("the comment line")?;

    let scale_line = cursor.next("the scale factor")?;
    let scales: Vec<f64> = scale_line
        .tokens
        .iter()
        .map(|t| {
            number(t)
                .ok_or_else(|| err(t.pos, format!("scale factor {:?} is not a number", t.text)))
        })
        .collect::<Result<_, _>>()?;
    if scales.len() != 1 && scales.len() != 3 {
        return Err(err(
            scale_line.start(),
            format!(
                "expected one scale factor (or three), found {}",
                scales.len()
            ),
        ));
    }

    let mut matrix: Matrix3 = [[0.0; 3]; 3];
    for (k, row) in matrix.iter_mut().enumerate() {
        let line = cursor.next("a lattice vector")?;
        *row = three_numbers(line, &format!("lattice vector {}", ["a", "b", "c"][k]))?;
    }
    let volume = dot(matrix[0], cross(matrix[1], matrix[2]));
    let factor: [f64; 3] = match scales[..] {
        [s] if s < 0.0 => {
            if volume == 0.0 {
                return Err(err(
                    scale_line.start(),
                    "the lattice vectors span no volume",
                ));
            }
            [libm::cbrt(-s / volume.abs()); 3]
        }
        [s] if s > 0.0 => [s; 3],
        [a, b, c] if a > 0.0 && b > 0.0 && c > 0.0 => [a, b, c],
        _ => {
            return Err(err(
                scale_line.start(),
                "scale factors must be positive (or one negative volume)",
            ))
        }
    };
    // One factor scales everything; three scale the x, y and z components (VASP's rule).
    for row in matrix.iter_mut() {
        *row = std::array::from_fn(|k| row[k] * factor[k]);
    }
    let lattice = Lattice::from_matrix(matrix);
    if dot(matrix[0], cross(matrix[1], matrix[2])).abs() < 1e-8 {
        return Err(err(
            lines[2].start(),
            "the lattice vectors are linearly dependent (zero volume)",
        ));
    }

    // Element names (VASP 5/6), possibly on several lines, then as many counts.
    let mut symbols: Vec<(Element, Pos)> = Vec::new();
    while let Some(line) = cursor.peek() {
        if line.tokens[0].text.parse::<i64>().is_ok() {
            break;
        }
        cursor.at += 1;
        for t in &line.tokens {
            symbols.push((element_of(t)?, t.pos));
        }
    }
    let mut counts: Vec<(usize, Pos)> = Vec::new();
    loop {
        let line = cursor.next("the number of atoms of each element")?;
        for t in &line.tokens {
            let n = t.text.parse::<usize>().map_err(|_| {
                err(
                    t.pos,
                    format!("atom count {:?} is not a non-negative integer", t.text),
                )
            })?;
            counts.push((n, t.pos));
        }
        if symbols.is_empty() || counts.len() >= symbols.len() {
            break;
        }
    }
    if !symbols.is_empty() && counts.len() != symbols.len() {
        return Err(err(
            counts[0].1,
            format!(
                "{} element names but {} atom counts",
                symbols.len(),
                counts.len()
            ),
        ));
    }
    let n_sites: usize = counts.iter().map(|c| c.0).sum();
    if n_sites > super::MAX_SITES {
        return Err(err(
            counts[0].1,
            format!("{n_sites} atoms exceed the limit of {}", super::MAX_SITES),
        ));
    }

    let mut mode = cursor.next("the coordinate mode (Direct or Cartesian)")?;
    let selective = mode.tokens[0].text.starts_with(['s', 'S']);
    if selective {
        mode = cursor.next("the coordinate mode (Direct or Cartesian)")?;
    }
    let cartesian = mode.tokens[0].text.starts_with(['c', 'C', 'k', 'K']);

    let mut coords = Vec::with_capacity(n_sites);
    let mut trailing_names = Vec::with_capacity(n_sites);
    for i in 0..n_sites {
        let line = cursor.next(&format!("the coordinates of atom {}", i + 1))?;
        let xyz = three_numbers(line, &format!("atom {}", i + 1))?;
        coords.push(xyz);
        let name_at = if selective { 6 } else { 3 };
        trailing_names.push(line.tokens.get(name_at).copied());
    }

    let elements: Vec<Element> = if !symbols.is_empty() {
        symbols
            .iter()
            .zip(&counts)
            .flat_map(|((e, _), (n, _))| std::iter::repeat_n(*e, *n))
            .collect()
    } else {
        // VASP 4: names after the coordinates, or nothing we can trust.
        let names: Option<Vec<Element>> = trailing_names
            .iter()
            .map(|t| t.and_then(|t| Element::from_symbol(t.text)))
            .collect();
        names.ok_or_else(|| {
            err(
                counts[0].1,
                "this POSCAR (VASP 4 layout) does not name its elements: add a line of element \
                 symbols above the atom counts",
            )
        })?
    };

    let sites = elements
        .into_iter()
        .zip(coords)
        .map(|(element, xyz)| {
            let frac = if cartesian {
                lattice.to_fractional(std::array::from_fn(|k| xyz[k] * factor[k]))
            } else {
                xyz
            };
            Site {
                element,
                frac,
                label: element.symbol().into(),
                occupancy: 1.0,
                oxidation: None,
                others: Vec::new(),
                magmom: None,
            }
        })
        .collect();
    Ok(Structure::new(lattice, sites))
}

/// The element of a name token: a symbol, or a POTCAR name such as `Fe_pv` or
/// `Mg_pv/f474ac0d`.
fn element_of(t: &Token<'_>) -> Result<Element, FormatError> {
    let name = t.text.split('/').next().unwrap_or("");
    let name = name.split('_').next().unwrap_or("");
    Element::from_symbol(name)
        .ok_or_else(|| err(t.pos, format!("{:?} is not an element symbol", t.text)))
}

fn three_numbers(line: &Line<'_>, what: &str) -> Result<[f64; 3], FormatError> {
    if line.tokens.len() < 3 {
        return Err(err(
            line.end(),
            format!(
                "{what}: expected three numbers, found {}",
                line.tokens.len()
            ),
        ));
    }
    let mut out = [0.0; 3];
    for (k, t) in line.tokens[..3].iter().enumerate() {
        out[k] =
            number(t).ok_or_else(|| err(t.pos, format!("{what}: {:?} is not a number", t.text)))?;
    }
    Ok(out)
}

/// Walks the structure's lines, reporting what was expected when they run out.
struct Cursor<'l, 'a> {
    lines: &'l [Line<'a>],
    at: usize,
}

impl<'l, 'a> Cursor<'l, 'a> {
    fn peek(&self) -> Option<&'l Line<'a>> {
        self.lines.get(self.at)
    }

    fn next(&mut self, what: &str) -> Result<&'l Line<'a>, FormatError> {
        match self.lines.get(self.at) {
            Some(line) => {
                self.at += 1;
                Ok(line)
            }
            None => {
                let pos = self.lines.last().map_or(Pos { line: 1, col: 1 }, |l| Pos {
                    line: l.number + 1,
                    col: 1,
                });
                Err(err(pos, format!("the file ends before {what}")))
            }
        }
    }
}

/// The POSCAR text pymatgen's `Poscar(structure).get_str()` writes: the formula as comment,
/// scale 1.0, the lattice (negated if left-handed, as VASP needs), element groups in site
/// order, direct coordinates with 16 decimals and each site's symbol. A mixed site is written
/// as its first element (POSCAR has no place for more; pymatgen refuses such structures).
pub fn write_poscar(structure: &Structure) -> String {
    let m = structure.lattice.matrix();
    let left_handed = structure.lattice.volume() < 0.0;
    let f = |x: f64| format!("{x:21.16}");
    let mut out = String::new();
    let amounts = element_amounts(structure.sites.iter().map(|s| (s.element, s.occupancy)));
    out.push_str(&formula(&amounts));
    out.push_str("\n1.0\n");
    for row in m {
        let row = if left_handed { row.map(|x| -x) } else { *row };
        out.push_str(&row.map(f).join(" "));
        out.push('\n');
    }
    let mut groups: Vec<(Element, usize)> = Vec::new();
    for s in &structure.sites {
        match groups.last_mut() {
            Some((e, n)) if *e == s.element => *n += 1,
            _ => groups.push((s.element, 1)),
        }
    }
    let names: Vec<&str> = groups.iter().map(|g| g.0.symbol()).collect();
    let counts: Vec<String> = groups.iter().map(|g| g.1.to_string()).collect();
    out.push_str(&names.join(" "));
    out.push('\n');
    out.push_str(&counts.join(" "));
    out.push_str("\ndirect\n");
    for s in &structure.sites {
        out.push_str(&s.frac.map(f).join(" "));
        out.push(' ');
        out.push_str(s.element.symbol());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VASP5: &str = "NaCl test\n 1.0\n 5.64 0 0\n 0 5.64 0\n 0 0 5.64\n Na Cl\n 1 1\nDirect\n 0 0 0\n 0.5 0.5 0.5\n";

    #[test]
    fn reads_vasp5_and_round_trips_through_the_writer() {
        let s = read_poscar(VASP5).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.sites[1].element.symbol(), "Cl");
        assert_eq!(s.sites[1].frac, [0.5, 0.5, 0.5]);
        let text = write_poscar(&s);
        assert!(
            text.starts_with("Na1 Cl1\n1.0\n   5.6399999999999997    0.0000000000000000"),
            "{text}"
        );
        let back = read_poscar(&text).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn comments_after_a_hash_are_cut_even_inside_a_token() {
        let text = "x # title\n1.0#scale\n3 0 0 # a\n0 3 0\n0 0 3\nSi#el\n1\nDirect\n0 0 0\n";
        let s = read_poscar(text).unwrap();
        assert_eq!(s.sites[0].element.symbol(), "Si");
        assert!((s.lattice.volume() - 27.0).abs() < 1e-12);
    }

    #[test]
    fn negative_scale_is_a_volume_and_cartesian_coordinates_follow_it() {
        let text = "x\n-8\n1 0 0\n0 1 0\n0 0 1\nSi\n1\nCartesian\n0.5 0.5 0.5\n";
        let s = read_poscar(text).unwrap();
        assert!((s.lattice.volume() - 8.0).abs() < 1e-12);
        for x in s.sites[0].frac {
            assert!((x - 0.5).abs() < 1e-15);
        }
    }

    #[test]
    fn vasp4_names_after_coordinates_and_potcar_names() {
        let v4 = "x\n1\n3 0 0\n0 3 0\n0 0 3\n1 1\nSelective dynamics\nd\n0 0 0 T T F Fe\n.5 .5 .5 F F F O\n";
        let s = read_poscar(v4).unwrap();
        assert_eq!(s.sites[0].element.symbol(), "Fe");
        assert_eq!(s.sites[1].element.symbol(), "O");
        let v6 = "MgSi\n1\n3 0 0\n0 3 0\n0 0 3\nMg_pv/f474ac0d  Si/79d9987ad87\n1 1\nDirect\n0 0 0\n.5 .5 .5\n\n0 0 0\n0 0 0\n";
        let s = read_poscar(v6).unwrap();
        assert_eq!(s.sites[0].element.symbol(), "Mg");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = read_poscar("x\n1\n3 0 0\n0 3 zero\n0 0 3\nSi\n1\nD\n0 0 0\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 4, col: 5 }), "{e}");
        assert!(e.to_string().contains("lattice vector b"), "{e}");
        let e = read_poscar("x\n1\n3 0 0\n0 3 0\n0 0 3\n2\nD\n0 0 0 Si\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("ends before the coordinates of atom 2"),
            "{e}"
        );
        let e = read_poscar("x\n1\n3 0 0\n0 3 0\n0 0 3\n1\nD\n0 0 0\n").unwrap_err();
        assert!(e.to_string().contains("does not name its elements"), "{e}");
        let e = read_poscar("x\n1\n3 0 0\n0 3 0\n0 0 3\nXx\n1\nD\n0 0 0\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 6, col: 1 }));
        assert!(read_poscar("").is_err());
        assert!(read_poscar("x\n1\n1 0 0\n2 0 0\n0 0 1\nSi\n1\nD\n0 0 0\n").is_err());
    }
}
