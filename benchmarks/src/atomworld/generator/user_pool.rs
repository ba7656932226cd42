//! A structure pool of the user's (`atomworld gen --pool PATH`): CIF files, pymatgen
//! `Structure.as_dict()` JSON (one per line, or a list), a Materials Project export (entries
//! with a `structure`), or an OPTIMADE response (`data[].attributes` with `lattice_vectors`,
//! `cartesian_site_positions` and `species_at_sites`). Every structure is read, or the file
//! and entry that could not be are listed with the reason (a pool folder often holds a file
//! this reader cannot use; it is named, never dropped in silence). Structures are used as
//! given (no repetition into range: the paper's filter, 10–100 atoms and elements H–Os, is the
//! generator's).

use engine::cif::formula::reduced_formula_and_factor;
use engine::cif::{read_cif, write_cif};
use engine::format::read_pymatgen_json;
use engine::{Element, Lattice, Site, Structure};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::pool::PoolEntry;

/// Why a pool could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// A file of a kind the pool does not read.
    #[error("{0}: not a pool file (.cif, .json or .jsonl)")]
    Kind(String),
    /// Nothing was read.
    #[error("the pool holds no structure{}", first_skipped(.0))]
    Empty(Vec<Skipped>),
}

/// An entry left out of a pool: where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The file, and the line or entry within it.
    pub place: String,
    /// What is wrong.
    pub why: String,
}

fn first_skipped(skipped: &[Skipped]) -> String {
    match skipped.first() {
        Some(s) => format!(
            " ({} entries unreadable; first {}: {})",
            skipped.len(),
            s.place,
            s.why
        ),
        None => String::new(),
    }
}

/// A user's pool: its identifier (a digest of its files, so the same files give the same
/// id) and its structures in file order.
#[derive(Clone, Debug)]
pub struct UserPool {
    /// `user-<12 hex digits>`.
    pub id: String,
    /// The structures.
    pub entries: Vec<PoolEntry>,
    /// The entries that could not be read.
    pub skipped: Vec<Skipped>,
}

/// The pool of `files` (name, text), read in name order.
pub fn read_pool(files: &[(String, String)]) -> Result<UserPool, PoolError> {
    let mut files: Vec<&(String, String)> = files.iter().collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut digest = Sha256::new();
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    let mut keep = |place: String, read: Result<(String, Structure), String>| match read {
        Ok((label, s)) => entries.push(entry(label, s)),
        Err(why) => skipped.push(Skipped { place, why }),
    };
    for (name, text) in files {
        digest.update(name.as_bytes());
        digest.update([0]);
        digest.update(text.as_bytes());
        digest.update([0]);
        let stem = name.rsplit('/').next().unwrap_or(name);
        let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s).to_string();
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".cif") {
            let read = read_cif(text).map_err(|e| e.to_string());
            keep(name.clone(), read.map(|s| (stem, s)));
        } else if lower.ends_with(".jsonl") {
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let read = serde_json::from_str::<Value>(line)
                    .map_err(|e| e.to_string())
                    .and_then(|v| from_value(&v))
                    .map(|(label, s)| (label.unwrap_or_else(|| format!("{stem}:{}", i + 1)), s));
                keep(format!("{name}:{}", i + 1), read);
            }
        } else if lower.ends_with(".json") {
            match serde_json::from_str::<Value>(text) {
                Err(e) => keep(name.clone(), Err(e.to_string())),
                Ok(v) => {
                    for (i, item) in json_items(&v).into_iter().enumerate() {
                        let read = from_value(item).map(|(label, s)| {
                            (label.unwrap_or_else(|| format!("{stem}#{}", i + 1)), s)
                        });
                        keep(format!("{name} entry {}", i + 1), read);
                    }
                }
            }
        } else {
            return Err(PoolError::Kind(name.clone()));
        }
    }
    if entries.is_empty() {
        return Err(PoolError::Empty(skipped));
    }
    let hex = hex::encode(digest.finalize());
    Ok(UserPool {
        id: format!("user-{}", &hex[..12]),
        entries,
        skipped,
    })
}

fn entry(name: String, structure: Structure) -> PoolEntry {
    let (formula, _) = reduced_formula_and_factor(&structure.composition());
    PoolEntry {
        name,
        prototype: String::new(),
        formula,
        repeat: [1, 1, 1],
        mineral_cif: write_cif(&structure),
        structure,
    }
}

/// The entries of a JSON file: a list's items, an OPTIMADE or export response's `data`, or
/// the one structure it is.
fn json_items(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(items) => items.iter().collect(),
        Value::Object(o) => match o.get("data") {
            Some(Value::Array(items)) => items.iter().collect(),
            _ => vec![v],
        },
        _ => vec![v],
    }
}

/// One entry: a pymatgen structure dict, an object holding one under `structure`, or an
/// OPTIMADE structure; with its name where the entry gives one.
fn from_value(v: &Value) -> Result<(Option<String>, Structure), String> {
    let name = ["material_id", "id", "name", "task_id"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    if let Some(s) = v.get("structure") {
        return Ok((
            name,
            read_pymatgen_json(&s.to_string()).map_err(|e| e.to_string())?,
        ));
    }
    if let Some(a) = v.get("attributes") {
        return Ok((name, optimade(a)?));
    }
    if v.get("lattice").is_some() && v.get("sites").is_some() {
        return Ok((
            name,
            read_pymatgen_json(&v.to_string()).map_err(|e| e.to_string())?,
        ));
    }
    Err(
        "neither a pymatgen structure, an entry with a `structure`, nor an OPTIMADE structure"
            .into(),
    )
}

/// An OPTIMADE structure's attributes as a structure (ordered sites only: a species of
/// several symbols, or a vacancy, is refused by name).
fn optimade(a: &Value) -> Result<Structure, String> {
    let vectors: [[f64; 3]; 3] = serde_json::from_value(a["lattice_vectors"].clone())
        .map_err(|e| format!("lattice_vectors: {e}"))?;
    let positions: Vec<[f64; 3]> = serde_json::from_value(a["cartesian_site_positions"].clone())
        .map_err(|e| format!("cartesian_site_positions: {e}"))?;
    let names: Vec<String> = serde_json::from_value(a["species_at_sites"].clone())
        .map_err(|e| format!("species_at_sites: {e}"))?;
    if names.len() != positions.len() {
        return Err(format!(
            "{} species for {} positions",
            names.len(),
            positions.len()
        ));
    }
    let symbol_of = |n: &str| -> Result<String, String> {
        let Some(species) = a.get("species").and_then(Value::as_array) else {
            return Ok(n.to_string());
        };
        let s = species
            .iter()
            .find(|s| s["name"] == n)
            .ok_or_else(|| format!("species {n:?} is not listed"))?;
        match s["chemical_symbols"].as_array().map(Vec::as_slice) {
            Some([one]) => Ok(one.as_str().unwrap_or_default().to_string()),
            _ => Err(format!(
                "species {n:?} is not one element (mixed or vacancy)"
            )),
        }
    };
    let lattice = Lattice::from_matrix(vectors);
    let mut sites = Vec::with_capacity(names.len());
    for (i, (n, p)) in names.iter().zip(&positions).enumerate() {
        let symbol = symbol_of(n)?;
        let element =
            Element::from_symbol(&symbol).ok_or_else(|| format!("{symbol:?} is not an element"))?;
        sites.push(Site::new(
            element,
            lattice.to_fractional(*p),
            format!("{symbol}{i}"),
            1.0,
        ));
    }
    Ok(Structure::new(lattice, sites))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NACL: &str = "data_NaCl\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n\
_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n\
_symmetry_space_group_name_H-M 'P 1'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n\
_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa1 Na 0 0 0\nCl1 Cl 0.5 0.5 0.5\n";

    #[test]
    fn cif_pymatgen_lines_and_optimade_read_alike() {
        let s = read_cif(NACL).unwrap();
        let dict = engine::format::write_pymatgen_json(&s);
        let optimade = serde_json::json!({"data": [{"id": "opt-1", "attributes": {
            "lattice_vectors": [[5.64, 0, 0], [0, 5.64, 0], [0, 0, 5.64]],
            "cartesian_site_positions": [[0, 0, 0], [2.82, 2.82, 2.82]],
            "species_at_sites": ["Na", "Cl"],
            "species": [{"name": "Na", "chemical_symbols": ["Na"]},
                        {"name": "Cl", "chemical_symbols": ["Cl"]}]}}]});
        let mp_line = format!(
            "{{\"material_id\": \"mp-22862\", \"structure\": {}}}",
            dict.replace('\n', "")
        );
        let files = vec![
            (
                "pool/b.jsonl".to_string(),
                format!("{}\n\n{mp_line}\n", dict.replace('\n', "")),
            ),
            ("pool/a.cif".to_string(), NACL.to_string()),
            ("pool/c.json".to_string(), optimade.to_string()),
        ];
        let p = read_pool(&files).unwrap();
        let names: Vec<&str> = p.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b:1", "mp-22862", "opt-1"]);
        for e in &p.entries {
            assert_eq!(e.structure.len(), 2, "{}", e.name);
            assert_eq!(e.formula, "NaCl");
            let x = e.structure.sites[1].frac;
            assert!((x[0] - 0.5).abs() < 1e-9, "{}: {x:?}", e.name);
        }
        // The same files in another order: the same pool.
        let mut again = files.clone();
        again.reverse();
        assert_eq!(read_pool(&again).unwrap().id, p.id);
        assert!(p.id.starts_with("user-") && p.id.len() == 17);
    }

    #[test]
    fn a_bad_entry_is_named_not_dropped() {
        let files = vec![
            (
                "x.jsonl".to_string(),
                "{\"lattice\": 1, \"sites\": []}\n".to_string(),
            ),
            ("y.cif".to_string(), NACL.to_string()),
        ];
        let p = read_pool(&files).unwrap();
        assert_eq!(p.entries.len(), 1);
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].place, "x.jsonl:1");
        let e = read_pool(&files[..1]).unwrap_err();
        assert!(e.to_string().contains("first x.jsonl:1: "), "{e}");
        let files = vec![("x.txt".to_string(), String::new())];
        assert_eq!(
            read_pool(&files).unwrap_err(),
            PoolError::Kind("x.txt".into())
        );
        let mixed = serde_json::json!({"attributes": {
            "lattice_vectors": [[3, 0, 0], [0, 3, 0], [0, 0, 3]],
            "cartesian_site_positions": [[0, 0, 0]], "species_at_sites": ["X"],
            "species": [{"name": "X", "chemical_symbols": ["Fe", "Ni"]}]}});
        let e = read_pool(&[("m.json".into(), mixed.to_string())]).unwrap_err();
        assert!(e.to_string().contains("mixed or vacancy"), "{e}");
        assert_eq!(read_pool(&[]).unwrap_err(), PoolError::Empty(Vec::new()));
    }
}
