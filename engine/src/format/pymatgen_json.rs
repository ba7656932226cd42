//! pymatgen's Structure JSON (`Structure.as_dict()` / `Structure.from_dict`), both ways, so a
//! structure moves between the playground and a pymatgen notebook without loss.
//!
//! Written with `as_dict()`'s default verbosity (lattice parameters and volume, Cartesian
//! `xyz` beside fractional `abc`) and key order. Read as `from_dict` reads it: the lattice
//! `matrix` and each site's `abc`. A site with several species (a disordered site) or a dummy
//! species is refused: the engine's sites hold one element each.

use serde::{Deserialize, Serialize};

use super::{Format, FormatError};
use crate::cif::Pos;
use crate::element::Element;
use crate::lattice::Lattice;
use crate::numeric::{cross, dot};
use crate::species::Occupant;
use crate::structure::{Site, Structure};

#[derive(Serialize, Deserialize)]
struct PmgStructure {
    #[serde(rename = "@module", default = "module")]
    module: String,
    #[serde(rename = "@class", default = "class")]
    class: String,
    #[serde(default)]
    charge: Option<f64>,
    lattice: PmgLattice,
    #[serde(default = "empty_object")]
    properties: serde_json::Value,
    sites: Vec<PmgSite>,
}

#[derive(Serialize, Deserialize)]
struct PmgLattice {
    matrix: [[f64; 3]; 3],
    #[serde(default = "periodic")]
    pbc: [bool; 3],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    a: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    b: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    c: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gamma: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    volume: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct PmgSite {
    species: Vec<PmgSpecies>,
    abc: [f64; 3],
    #[serde(default = "empty_object")]
    properties: serde_json::Value,
    #[serde(default)]
    label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    xyz: Option<[f64; 3]>,
}

#[derive(Serialize, Deserialize)]
struct PmgSpecies {
    element: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oxidation_state: Option<f64>,
    #[serde(default = "one")]
    occu: f64,
}

fn module() -> String {
    "pymatgen.core.structure".into()
}
fn class() -> String {
    "Structure".into()
}
fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(Default::default())
}
fn periodic() -> [bool; 3] {
    [true; 3]
}
fn one() -> f64 {
    1.0
}

fn err(pos: Option<Pos>, message: impl Into<String>) -> FormatError {
    FormatError {
        format: Format::PymatgenJson,
        message: message.into(),
        pos,
    }
}

/// Reads pymatgen's `Structure.as_dict()` JSON. Errors in the JSON itself carry the line and
/// column serde_json reports.
pub fn read_pymatgen_json(text: &str) -> Result<Structure, FormatError> {
    let doc: PmgStructure = serde_json::from_str(text).map_err(|e| {
        let pos = (e.line() > 0).then(|| Pos {
            line: e.line(),
            col: e.column().max(1),
        });
        err(pos, format!("not a pymatgen Structure dict: {e}"))
    })?;
    if doc.class != "Structure" {
        return Err(err(
            None,
            format!("@class is {:?}; expected \"Structure\"", doc.class),
        ));
    }
    let m = doc.lattice.matrix;
    if !m.iter().flatten().all(|x| x.is_finite()) || dot(m[0], cross(m[1], m[2])).abs() < 1e-8 {
        return Err(err(None, "lattice.matrix is not a cell of positive volume"));
    }
    if doc.sites.len() > super::MAX_SITES {
        return Err(err(
            None,
            format!(
                "{} sites exceed the limit of {}",
                doc.sites.len(),
                super::MAX_SITES
            ),
        ));
    }
    let lattice = Lattice::from_matrix(m);
    let mut sites = Vec::with_capacity(doc.sites.len());
    for (i, site) in doc.sites.into_iter().enumerate() {
        let mut occupants = Vec::with_capacity(site.species.len());
        for species in &site.species {
            let element = Element::from_symbol(&species.element).ok_or_else(|| {
                err(
                    None,
                    format!("site {i}: {:?} is not an element", species.element),
                )
            })?;
            if !(species.occu.is_finite() && species.occu > 0.0) {
                return Err(err(
                    None,
                    format!("site {i}: the occupancy of {element} is not a positive number"),
                ));
            }
            occupants.push(Occupant {
                element,
                occupancy: species.occu,
                oxidation: species.oxidation_state,
            });
        }
        let Some((&first, others)) = occupants.split_first() else {
            return Err(err(None, format!("site {i} holds no species")));
        };
        if !site.abc.iter().all(|x| x.is_finite()) {
            return Err(err(None, format!("site {i}: coordinates are not finite")));
        }
        let element = first.element;
        sites.push(Site {
            element,
            frac: site.abc,
            label: site
                .label
                .map_or_else(|| element.symbol().into(), compact_str::CompactString::from),
            occupancy: first.occupancy,
            oxidation: first.oxidation,
            others: others.to_vec(),
            magmom: None,
        });
    }
    Ok(Structure::new(lattice, sites))
}

/// pymatgen's `Structure.as_dict()` (default verbosity) as pretty-printed JSON.
pub fn write_pymatgen_json(structure: &Structure) -> String {
    let l = &structure.lattice;
    let [a, b, c] = l.lengths();
    let [alpha, beta, gamma] = l.angles();
    let doc = PmgStructure {
        module: module(),
        class: class(),
        charge: Some(0.0),
        lattice: PmgLattice {
            matrix: *l.matrix(),
            pbc: periodic(),
            a: Some(a),
            b: Some(b),
            c: Some(c),
            alpha: Some(alpha),
            beta: Some(beta),
            gamma: Some(gamma),
            volume: Some(l.volume().abs()),
        },
        properties: empty_object(),
        sites: structure
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| PmgSite {
                species: s
                    .occupants()
                    .map(|o| PmgSpecies {
                        element: o.element.symbol().into(),
                        oxidation_state: o.oxidation,
                        occu: o.occupancy,
                    })
                    .collect(),
                abc: s.frac,
                properties: empty_object(),
                label: Some(s.label.to_string()),
                xyz: Some(structure.cartesian(i)),
            })
            .collect(),
    };
    // Serialising plain numbers, strings and arrays cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_pymatgen_output() {
        let text = r#"{"@module": "pymatgen.core.structure", "@class": "Structure", "charge": 0,
          "lattice": {"matrix": [[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]], "pbc": [true, true, true]},
          "properties": {}, "sites": [
            {"species": [{"element": "Fe", "oxidation_state": 2, "occu": 1}], "abc": [0.0, 0.0, 0.0], "properties": {}, "label": "Fe1"},
            {"species": [{"element": "O", "occu": 1}], "abc": [0.5, 0.5, 0.5], "properties": {"magmom": 0}}]}"#;
        let s = read_pymatgen_json(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.sites[0].label, "Fe1");
        assert_eq!(s.sites[1].label, "O");
        let back = read_pymatgen_json(&write_pymatgen_json(&s)).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn disordered_sites_and_bad_json_are_explained() {
        let e = read_pymatgen_json("{\n  \"lattice\": [1,\n").unwrap_err();
        assert!(e.pos.is_some(), "{e}");
        let text = r#"{"lattice": {"matrix": [[3,0,0],[0,3,0],[0,0,3]]}, "sites": [
            {"species": [{"element": "Fe", "occu": 0.5}, {"element": "Ni", "occu": 0.5}], "abc": [0,0,0]}]}"#;
        // A mixed site keeps both species, in order, and writes them back.
        let s = read_pymatgen_json(text).unwrap();
        assert_eq!(
            (s.sites[0].element.symbol(), s.sites[0].occupancy),
            ("Fe", 0.5)
        );
        assert_eq!(s.sites[0].others.len(), 1);
        assert_eq!(s.sites[0].others[0].element.symbol(), "Ni");
        assert_eq!(read_pymatgen_json(&write_pymatgen_json(&s)).unwrap(), s);
        let text = r#"{"lattice": {"matrix": [[3,0,0],[0,3,0],[0,0,3]]}, "sites": [
            {"species": [{"element": "Fe", "occu": 0.5}, {"element": "Xx", "occu": 0.5}], "abc": [0,0,0]}]}"#;
        let e = read_pymatgen_json(text).unwrap_err();
        assert!(
            e.to_string().contains("site 0: \"Xx\" is not an element"),
            "{e}"
        );
        let text = r#"{"lattice": {"matrix": [[3,0,0],[0,3,0],[0,0,0]]}, "sites": []}"#;
        assert!(read_pymatgen_json(text).is_err());
    }
}
