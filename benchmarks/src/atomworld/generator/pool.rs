//! The structure pool tasks are drawn from: the project's mineral prototypes (see
//! `data/structures/NOTICE`), with the small ones repeated into the 10–100 atom range that
//! AtomWorld samples from.

use engine::cif::read_cif;
use engine::Structure;
use serde::Deserialize;

/// The shipped mineral pool (JSON lines; 180 prototypes).
pub const MINERALS_JSONL: &str = include_str!("../../../../data/structures/minerals.jsonl");

/// The space group of every pool entry as `engine::symmetry::space_group` finds it at
/// `DEFAULT_SYMPREC`, on the entry as the playground shows it (its CIF as written, read
/// back): one line per mineral, `prototype<TAB>number<TAB>Hermann–Mauguin symbol`. The page
/// shows a pool entry's space group from here, without linking the symmetry search; a test
/// holds every line to the search.
pub const SPACE_GROUPS_TSV: &str = include_str!("../../../../data/structures/space_groups.tsv");

/// Identifier of the pool below, recorded in every task set.
pub const POOL_ID: &str = "minerals-v1";

/// Smallest and largest number of sites of a pool structure.
pub const SITE_RANGE: (usize, usize) = (10, 100);

/// `Ok` when `id` names the built-in pool; else why a set drawn from it cannot be drawn
/// again here (a user's pool is read by `atomworld gen --pool`, whose file is then run).
pub fn require_builtin(id: &str) -> Result<(), String> {
    if id == POOL_ID {
        Ok(())
    } else {
        Err(format!(
            "pool {id} is not built in: generate its tasks with `atomworld gen --pool` and run \
             that file"
        ))
    }
}

/// Heaviest element of the paper's structures: osmium.
pub const MAX_Z: u32 = 76;

/// Thinnest cell a task may start from: lattice planes at least this far apart (Å). A
/// flatter cell is no crystal (pymatgen's "superflat" test file has planes 1e-8 Å apart).
pub const MIN_PLANE_DISTANCE: f64 = 1.0;

/// Whether `s` is a structure the AtomWorld paper draws: 10–100 atoms, elements H to Os (and
/// a cell that is a crystal's: see [`MIN_PLANE_DISTANCE`]).
pub fn in_paper_range(s: &Structure) -> bool {
    (SITE_RANGE.0..=SITE_RANGE.1).contains(&s.len())
        && s.lattice
            .plane_distances()
            .iter()
            .all(|h| *h >= MIN_PLANE_DISTANCE)
        && s.sites
            .iter()
            .all(|site| site.occupants().all(|o| o.element.z() <= MAX_Z))
}

/// One structure of the pool.
#[derive(Clone, Debug)]
pub struct PoolEntry {
    /// Display name: mineral name, with the repetition when repeated ("Halite 2×2×1").
    pub name: String,
    /// AFLOW prototype label of the mineral.
    pub prototype: String,
    /// Reduced formula.
    pub formula: String,
    /// How the mineral cell was repeated (1×1×1 when used as is).
    pub repeat: [u32; 3],
    /// The structure (supercell when repeated).
    pub structure: Structure,
    /// The mineral's own CIF text (pymatgen P1 style), before any repetition.
    pub mineral_cif: String,
}

impl PoolEntry {
    /// The name as people read it: the pool's LaTeX-style marks made Unicode
    /// ("Frank-Kasper $\\mu$ Phase" reads "Frank-Kasper μ Phase", "Hg_xSn" "HgₓSn",
    /// "Lazarevi\\'{c}ite" "Lazarević"). `name` stays as stored: links name entries by it.
    pub fn display_name(&self) -> String {
        readable_name(&self.name)
    }

    /// Its space group from [`SPACE_GROUPS_TSV`]: number and Hermann–Mauguin symbol.
    pub fn space_group(&self) -> Option<(u32, &'static str)> {
        SPACE_GROUPS_TSV.lines().find_map(|line| {
            let mut fields = line.split('\t');
            if fields.next()? != self.prototype {
                return None;
            }
            let number = fields.next()?.parse().ok()?;
            Some((number, fields.next()?))
        })
    }
}

/// LaTeX-style marks in a mineral name as Unicode: `$…$` math with Greek letters, `_x` and
/// `_(…)` subscripts (where every character has a subscript form), and `\'{c}`-style
/// accents.
pub fn readable_name(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {}
            '\\' => {
                let mut word = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphabetic() || (word.is_empty() && "'`^\"~".contains(n)) {
                        word.push(n);
                        chars.next();
                        if !n.is_ascii_alphabetic() {
                            break;
                        }
                    } else {
                        break;
                    }
                }
                if let Some(accent) = word.chars().next().and_then(combining_accent) {
                    // `\'{c}` or `\'c`: the letter, then the combining accent.
                    let braced = chars.peek() == Some(&'{');
                    if braced {
                        chars.next();
                    }
                    if let Some(letter) = chars.next() {
                        out.push(letter);
                        out.push(accent);
                    }
                    if braced && chars.peek() == Some(&'}') {
                        chars.next();
                    }
                } else {
                    match greek(&word) {
                        Some(g) => out.push(g),
                        None => out.push_str(&word),
                    }
                }
            }
            '_' => {
                let group: String = if chars.peek() == Some(&'(') || chars.peek() == Some(&'{') {
                    // `_(1-x)` groups like `_{1-x}`: the subscript has no brackets.
                    let close = if chars.next() == Some('(') { ')' } else { '}' };
                    chars.by_ref().take_while(|&n| n != close).collect()
                } else {
                    let mut g = String::new();
                    while let Some(&n) = chars.peek() {
                        if n.is_ascii_digit()
                            || n == '.'
                            || (g.is_empty() && n.is_ascii_lowercase())
                        {
                            g.push(n);
                            chars.next();
                            if n.is_ascii_lowercase() {
                                break;
                            }
                        } else {
                            break;
                        }
                    }
                    g
                };
                match group.chars().map(subscript).collect::<Option<String>>() {
                    Some(sub) => out.push_str(&sub),
                    None => out.push_str(&group),
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The subscript form of a character, if Unicode has one ('.' stays itself).
fn subscript(c: char) -> Option<char> {
    Some(match c {
        '0'..='9' => char::from_u32(0x2080 + c.to_digit(10)?)?,
        '+' => '₊',
        '-' => '₋',
        '.' => '.',
        'x' => 'ₓ',
        'y' => 'ᵧ',
        'n' => 'ₙ',
        'm' => 'ₘ',
        _ => return None,
    })
}

/// The combining mark of a LaTeX accent command.
fn combining_accent(c: char) -> Option<char> {
    Some(match c {
        '\'' => '\u{0301}',
        '`' => '\u{0300}',
        '^' => '\u{0302}',
        '"' => '\u{0308}',
        '~' => '\u{0303}',
        _ => return None,
    })
}

/// A Greek letter by its LaTeX name.
fn greek(name: &str) -> Option<char> {
    const LOWER: [&str; 24] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi",
        "chi", "psi", "omega",
    ];
    let i = LOWER.iter().position(|g| *g == name)?;
    // α..ρ are U+03B1..U+03C1; ς (U+03C2) sits between ρ and σ.
    let skip = if i >= 17 { 1 } else { 0 };
    char::from_u32(0x03B1 + i as u32 + skip)
}

#[derive(Deserialize)]
struct Line {
    prototype: String,
    mineral: String,
    formula: String,
    cif: String,
}

/// The repetition that brings `n` sites into [`SITE_RANGE`]: fewest copies, then the most
/// nearly isotropic cell, then the lexicographically smallest size. `None` if none does.
pub fn repeat_for(structure: &Structure) -> Option<[u32; 3]> {
    repeat_into(structure, SITE_RANGE)
}

/// The repetition (up to 4 along each axis) that brings `structure` to `lo..=hi` sites, chosen
/// as [`repeat_for`] chooses.
pub fn repeat_into(structure: &Structure, (lo, hi): (usize, usize)) -> Option<[u32; 3]> {
    let n = structure.len();
    let lengths = structure.lattice.lengths();
    let mut best: Option<(u32, f64, [u32; 3])> = None;
    for a in 1..=4u32 {
        for b in 1..=4u32 {
            for c in 1..=4u32 {
                let copies = a * b * c;
                let total = n * copies as usize;
                if total < lo || total > hi {
                    continue;
                }
                let l = [
                    lengths[0] * a as f64,
                    lengths[1] * b as f64,
                    lengths[2] * c as f64,
                ];
                let aniso = l.iter().cloned().fold(f64::MIN, f64::max)
                    / l.iter().cloned().fold(f64::MAX, f64::min);
                let key = (copies, aniso, [a, b, c]);
                let better = match &best {
                    None => true,
                    Some(b) => (key.0, key.1) < (b.0, b.1),
                };
                if better {
                    best = Some(key);
                }
            }
        }
    }
    best.map(|b| b.2)
}

/// The pool, in file order; minerals that cannot be brought into range are left out.
pub fn pool() -> Vec<PoolEntry> {
    let mut out = Vec::new();
    for line in MINERALS_JSONL.lines() {
        // The pool is shipped with the program: a bad line is a build-time data error, and
        // tests check that every line loads. Skip it here rather than fail the user.
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            continue;
        };
        let Ok(s) = read_cif(&l.cif) else { continue };
        let Some(repeat) = repeat_for(&s) else {
            continue;
        };
        let (name, structure) = if repeat == [1, 1, 1] {
            (l.mineral.clone(), s)
        } else {
            (
                format!("{} {}×{}×{}", l.mineral, repeat[0], repeat[1], repeat[2]),
                s.supercell(repeat),
            )
        };
        out.push(PoolEntry {
            name,
            prototype: l.prototype,
            formula: l.formula,
            repeat,
            structure,
            mineral_cif: l.cif,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is what the symmetry search finds, entry by entry (a supercell included),
    /// and has a line for every mineral and no other.
    #[test]
    fn the_space_group_table_is_the_searchs() {
        use engine::cif::write_cif;
        use engine::symmetry::{space_group, DEFAULT_SYMPREC};
        let entries = pool();
        let mut found = Vec::new();
        for e in &entries {
            let shown = read_cif(&write_cif(&e.structure)).expect("a pool CIF reads back");
            let g = space_group(&shown, DEFAULT_SYMPREC).expect("a pool entry has a space group");
            found.push(format!("{}\t{}\t{}", e.prototype, g.number, g.symbol));
        }
        let expected = found.join("\n") + "\n";
        assert!(
            SPACE_GROUPS_TSV == expected,
            "data/structures/space_groups.tsv differs from the search; it should read:\n{expected}"
        );
        for (e, line) in entries.iter().zip(&found) {
            let (number, symbol) = e.space_group().expect("every entry is in the table");
            assert_eq!(format!("{}\t{number}\t{symbol}", e.prototype), *line);
        }
    }

    #[test]
    fn names_read_as_people_write_them() {
        assert_eq!(
            readable_name("Frank-Kasper $\\mu$ Phase"),
            "Frank-Kasper μ Phase"
        );
        assert_eq!(readable_name("Hg_xSn"), "HgₓSn");
        assert_eq!(readable_name("Pb(Zr_(1-x)Ti_x)O3"), "Pb(Zr₁₋ₓTiₓ)O3");
        assert_eq!(readable_name("Lazarevi\\'{c}ite"), "Lazarevic\u{301}ite");
        assert_eq!(
            readable_name("Pb (Zr_0.50 Ti_0.48) O_3"),
            "Pb (Zr₀.₅₀ Ti₀.₄₈) O₃"
        );
        assert_eq!(readable_name("$\\sigma$ phase"), "σ phase");
        assert_eq!(readable_name("$\\omega$"), "ω");
        assert_eq!(readable_name("Halite 2×2×1"), "Halite 2×2×1");
        // No name of the pool keeps a LaTeX mark.
        for e in pool() {
            let shown = e.display_name();
            assert!(
                !shown.contains(['$', '\\', '_', '{', '}']),
                "{} reads {shown}",
                e.name
            );
        }
    }

    #[test]
    fn every_mineral_loads_and_the_pool_is_in_range() {
        let lines = MINERALS_JSONL.lines().count();
        assert_eq!(lines, 180);
        for line in MINERALS_JSONL.lines() {
            let l: Line = serde_json::from_str(line).unwrap();
            read_cif(&l.cif).unwrap();
        }
        let p = pool();
        // Only the one mineral above 100 sites is left out.
        assert_eq!(p.len(), 179);
        for e in &p {
            let n = e.structure.len();
            assert!((10..=100).contains(&n), "{}: {n}", e.name);
        }
    }
}
