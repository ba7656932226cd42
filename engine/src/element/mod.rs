//! The periodic table: all 118 elements, H to Og.
//!
//! The AtomWorld generator samples elements uniformly over all 118 symbols, so every element,
//! super-heavy ones included, must be known here. Data are generated into `table.rs` by
//! `engine/tools/gen_elements.py` (sources cited there).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

mod table;

/// Static data of one element.
#[derive(Debug)]
pub(crate) struct ElementData {
    symbol: &'static str,
    name: &'static str,
    mass: f64,
    electronegativity: f64,
    covalent_radius: f64,
    jmol: [u8; 3],
    vesta: [u8; 3],
}

/// A chemical element, stored as its atomic number (1..=118). Serialises as its symbol.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Element(u8);

impl std::fmt::Debug for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.symbol())
    }
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.symbol())
    }
}

impl Element {
    /// Number of known elements.
    pub const COUNT: usize = 118;

    /// The element with atomic number `z`, if 1 ≤ z ≤ 118.
    pub fn from_z(z: u32) -> Option<Self> {
        (1..=118).contains(&z).then_some(Element(z as u8))
    }

    /// The element with this exact symbol (case-sensitive: `Co` is cobalt, `CO` is nothing).
    pub fn from_symbol(symbol: &str) -> Option<Self> {
        table::TABLE
            .iter()
            .position(|d| d.symbol == symbol)
            .map(|i| Element(i as u8 + 1))
    }

    /// All 118 elements in order of atomic number.
    pub fn all() -> impl Iterator<Item = Element> {
        (1..=118u8).map(Element)
    }

    fn data(self) -> &'static ElementData {
        &table::TABLE[self.0 as usize - 1]
    }

    /// Atomic number.
    pub fn z(self) -> u32 {
        self.0 as u32
    }

    /// Chemical symbol (`Fe`).
    pub fn symbol(self) -> &'static str {
        self.data().symbol
    }

    /// English name (`Iron`).
    pub fn name(self) -> &'static str {
        self.data().name
    }

    /// Standard atomic mass (u), as pymatgen gives it.
    pub fn mass(self) -> f64 {
        self.data().mass
    }

    /// Pauling electronegativity, `None` where pymatgen has none (noble gases, Z ≥ 104).
    pub fn electronegativity(self) -> Option<f64> {
        let x = self.data().electronegativity;
        (!x.is_nan()).then_some(x)
    }

    /// Covalent radius (Å), as ASE gives it (Cordero et al. 2008).
    pub fn covalent_radius(self) -> f64 {
        self.data().covalent_radius
    }

    /// Jmol colour as RGB bytes.
    pub fn jmol_color(self) -> [u8; 3] {
        self.data().jmol
    }

    /// VESTA colour as RGB bytes.
    pub fn vesta_color(self) -> [u8; 3] {
        self.data().vesta
    }
}

impl Serialize for Element {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.symbol())
    }
}

impl<'de> Deserialize<'de> for Element {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Element::from_symbol(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown element symbol '{s}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_ordered() {
        assert_eq!(Element::all().count(), 118);
        for (i, e) in Element::all().enumerate() {
            assert_eq!(e.z() as usize, i + 1);
            assert_eq!(Element::from_symbol(e.symbol()), Some(e));
        }
        assert_eq!(Element::from_z(26).unwrap().symbol(), "Fe");
        assert_eq!(Element::from_symbol("Og").unwrap().z(), 118);
        assert_eq!(Element::from_symbol("CO"), None);
    }

    #[test]
    fn known_values() {
        let fe = Element::from_symbol("Fe").unwrap();
        assert_eq!(fe.mass(), 55.845);
        assert_eq!(fe.electronegativity(), Some(1.83));
        assert_eq!(
            Element::from_symbol("He").unwrap().electronegativity(),
            None
        );
        assert_eq!(
            Element::from_symbol("Na").unwrap().jmol_color(),
            [171, 92, 242]
        );
    }

    #[test]
    fn serde_uses_symbols() {
        let cl = Element::from_symbol("Cl").unwrap();
        assert_eq!(serde_json::to_string(&cl).unwrap(), "\"Cl\"");
        let back: Element = serde_json::from_str("\"Cl\"").unwrap();
        assert_eq!(back, cl);
        assert!(serde_json::from_str::<Element>("\"Xx\"").is_err());
    }
}
