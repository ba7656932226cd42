//! Extended XYZ (the format of ASE and many MD codes): reading the first frame and writing
//! what ASE's `ase.io.write(f, atoms, format="extxyz")` writes for bare atoms.
//!
//! A crystal needs a cell, so the comment line must carry `Lattice="ax ay az bx by bz cx cy
//! cz"`; a plain XYZ file (a molecule) is refused with a message that says so. Columns follow
//! the `Properties=` key (default `species:S:1:pos:R:3`); other columns are read past.

use super::lines::{number, split_lines, Line};
use super::{Format, FormatError};
use crate::cif::Pos;
use crate::element::Element;
use crate::lattice::Lattice;
use crate::numeric::{cross, dot};
use crate::python::py_repr;
use crate::structure::{Site, Structure};

fn err(pos: Pos, message: impl Into<String>) -> FormatError {
    FormatError::at(Format::Xyz, pos, message)
}

/// One key=value pair of the comment line, with where its value starts.
struct KeyValue<'a> {
    key: &'a str,
    value: &'a str,
    pos: Pos,
}

/// Splits an extended-XYZ comment line into key=value pairs (values may be quoted with `"`
/// or wrapped in `{}`; a bare key means true).
fn key_values<'a>(line: &Line<'a>) -> Result<Vec<KeyValue<'a>>, FormatError> {
    let text = line.text;
    let col = |byte: usize| text[..byte].chars().count() + 1;
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let key_start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'=' {
            i += 1;
        }
        let key = &text[key_start..i];
        if i >= bytes.len() || bytes[i] != b'=' {
            out.push(KeyValue {
                key,
                value: "T",
                pos: Pos {
                    line: line.number,
                    col: col(key_start),
                },
            });
            continue;
        }
        i += 1; // '='
        let (value, start, next) = match bytes.get(i) {
            Some(&q @ (b'"' | b'{')) => {
                let close = if q == b'"' { b'"' } else { b'}' };
                let from = i + 1;
                let Some(len) = bytes[from..].iter().position(|&b| b == close) else {
                    return Err(err(
                        Pos {
                            line: line.number,
                            col: col(i),
                        },
                        format!(
                            "the value of {key} opens with {} but never closes",
                            q as char
                        ),
                    ));
                };
                (&text[from..from + len], from, from + len + 1)
            }
            _ => {
                let from = i;
                let len = bytes[from..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace())
                    .unwrap_or(bytes.len() - from);
                (&text[from..from + len], from, from + len)
            }
        };
        out.push(KeyValue {
            key,
            value,
            pos: Pos {
                line: line.number,
                col: col(start),
            },
        });
        i = next;
    }
    Ok(out)
}

/// Reads the first frame of an extended XYZ file as a periodic structure. Labels are the
/// element symbols.
pub fn read_xyz(text: &str) -> Result<Structure, FormatError> {
    let lines = split_lines(text);
    let first = lines
        .iter()
        .find(|l| !l.tokens.is_empty())
        .ok_or_else(|| err(Pos { line: 1, col: 1 }, "the file is empty"))?;
    let count_token = first.tokens[0];
    let n: usize = count_token.text.parse().map_err(|_| {
        err(
            count_token.pos,
            format!("expected the number of atoms, found {:?}", count_token.text),
        )
    })?;
    if n > super::MAX_SITES {
        return Err(err(
            count_token.pos,
            format!("{n} atoms exceed the limit of {}", super::MAX_SITES),
        ));
    }
    let comment = lines.get(first.number).ok_or_else(|| {
        err(
            Pos {
                line: first.number + 1,
                col: 1,
            },
            "the file ends before the comment line",
        )
    })?;
    let pairs = key_values(comment)?;
    let find = |k: &str| pairs.iter().find(|p| p.key.eq_ignore_ascii_case(k));

    let lattice_kv = find("Lattice").ok_or_else(|| {
        err(
            comment.start(),
            "no Lattice=\"...\" on the comment line: plain XYZ describes a molecule, and a crystal \
             needs its cell (write extended XYZ, e.g. with ASE)",
        )
    })?;
    let cell: Vec<f64> = lattice_kv
        .value
        .split_whitespace()
        .map(|t| t.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect::<Option<_>>()
        .filter(|v: &Vec<f64>| v.len() == 9)
        .ok_or_else(|| {
            err(
                lattice_kv.pos,
                "Lattice must hold nine numbers (a, b, c vectors)",
            )
        })?;
    let matrix = [
        [cell[0], cell[1], cell[2]],
        [cell[3], cell[4], cell[5]],
        [cell[6], cell[7], cell[8]],
    ];
    if dot(matrix[0], cross(matrix[1], matrix[2])).abs() < 1e-8 {
        return Err(err(
            lattice_kv.pos,
            "the lattice vectors are linearly dependent (zero volume)",
        ));
    }
    let lattice = Lattice::from_matrix(matrix);

    // Column layout from Properties=name:type:count:…
    let (mut species_col, mut pos_col, mut width) = (None, None, 0usize);
    let properties = find("Properties").map_or("species:S:1:pos:R:3", |p| p.value);
    let fields: Vec<&str> = properties.split(':').collect();
    if !fields.len().is_multiple_of(3) {
        let pos = find("Properties").map_or(comment.start(), |p| p.pos);
        return Err(err(pos, "Properties must be name:type:count triples"));
    }
    for triple in fields.chunks(3) {
        let count: usize = triple[2].parse().map_err(|_| {
            err(
                find("Properties").map_or(comment.start(), |p| p.pos),
                format!("Properties: column count {:?} is not a number", triple[2]),
            )
        })?;
        match triple[0].to_ascii_lowercase().as_str() {
            "species" => species_col = Some(width),
            "pos" if count == 3 => pos_col = Some(width),
            _ => {}
        }
        width += count;
    }
    let (Some(species_col), Some(pos_col)) = (species_col, pos_col) else {
        return Err(err(
            comment.start(),
            "Properties names no species column or no 3-column pos",
        ));
    };

    let mut sites = Vec::with_capacity(n);
    for i in 0..n {
        let line = lines
            .get(first.number + 1 + i)
            .filter(|l| !l.tokens.is_empty())
            .ok_or_else(|| {
                err(
                    Pos {
                        line: first.number + 2 + i,
                        col: 1,
                    },
                    format!("expected atom {} of {n}", i + 1),
                )
            })?;
        if line.tokens.len() < width {
            return Err(err(
                line.end(),
                format!("expected {width} columns, found {}", line.tokens.len()),
            ));
        }
        let sym = line.tokens[species_col];
        let element = Element::from_symbol(sym.text)
            .or_else(|| sym.text.parse().ok().and_then(Element::from_z))
            .ok_or_else(|| err(sym.pos, format!("{:?} is not an element", sym.text)))?;
        let mut cart = [0.0; 3];
        for (k, c) in cart.iter_mut().enumerate() {
            let t = &line.tokens[pos_col + k];
            *c = number(t).ok_or_else(|| err(t.pos, format!("{:?} is not a number", t.text)))?;
        }
        sites.push(Site {
            element,
            frac: lattice.to_fractional(cart),
            label: element.symbol().into(),
            occupancy: 1.0,
            oxidation: None,
            others: Vec::new(),
            magmom: None,
        });
    }
    Ok(Structure::new(lattice, sites))
}

/// The extended XYZ text ASE writes for these atoms (periodic in all three directions).
pub fn write_xyz(structure: &Structure) -> String {
    let m = structure.lattice.matrix();
    let cell: Vec<String> = m.iter().flatten().map(|&x| py_repr(x)).collect();
    let mut out = format!(
        "{}\nLattice=\"{}\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n",
        structure.len(),
        cell.join(" ")
    );
    for (i, s) in structure.sites.iter().enumerate() {
        let p = structure.cartesian(i);
        out.push_str(&format!(
            "{:<2} {:16.8} {:16.8} {:16.8}\n",
            s.element.symbol(),
            p[0],
            p[1],
            p[2]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NACL: &str = "2\nLattice=\"5.64 0.0 0.0 0.0 5.64 0.0 0.0 0.0 5.64\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\nNa       0.00000000       0.00000000       0.00000000\nCl       2.82000000       2.82000000       2.82000000\n";

    #[test]
    fn writes_what_ase_writes_and_reads_it_back() {
        let s = read_xyz(NACL).unwrap();
        assert_eq!(s.len(), 2);
        assert!((s.sites[1].frac[2] - 0.5).abs() < 1e-15);
        assert_eq!(write_xyz(&s), NACL);
    }

    #[test]
    fn other_columns_and_orders_are_read_past() {
        let t = "1\nenergy=-3.2 Properties=id:I:1:pos:R:3:Z:I:1 Lattice=\"2 0 0 0 2 0 0 0 2\"\n7 1.0 1.0 1.0 26\n";
        let e = read_xyz(t).unwrap_err();
        assert!(e.to_string().contains("no species column"), "{e}");
        let t = "1\nProperties=id:I:1:pos:R:3:species:S:1 Lattice=\"2 0 0 0 2 0 0 0 2\"\n7 1.0 1.0 1.0 Fe\n";
        let s = read_xyz(t).unwrap();
        assert_eq!(s.sites[0].element.symbol(), "Fe");
        assert_eq!(s.sites[0].frac, [0.5, 0.5, 0.5]);
    }

    #[test]
    fn plain_xyz_and_broken_lines_get_clear_errors() {
        let e = read_xyz("1\nwater\nO 0 0 0\n").unwrap_err();
        assert!(
            e.to_string().contains("plain XYZ describes a molecule"),
            "{e}"
        );
        let e = read_xyz("2\nLattice=\"2 0 0 0 2 0 0 0 2\"\nFe 0 0 0\nFe 1 x 1\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 4, col: 6 }), "{e}");
        let e = read_xyz("3\nLattice=\"2 0 0 0 2 0 0 0 2\"\nFe 0 0 0\n").unwrap_err();
        assert!(e.to_string().contains("expected atom 2 of 3"), "{e}");
        let e = read_xyz("1\nLattice=\"2 0 0 0 2 0 0 0\nFe 0 0 0\n").unwrap_err();
        assert!(e.to_string().contains("never closes"), "{e}");
        assert!(read_xyz("many\n").is_err());
    }
}
