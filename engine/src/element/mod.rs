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

/// Where a one- or two-letter symbol (`X` or `Xy`) sits in [`symbol_index`]; `None` for
/// any other shape, which no element has.
fn symbol_slot(b: &[u8]) -> Option<usize> {
    let first = usize::from(b.first()?.checked_sub(b'A')?);
    let second = match b.get(1) {
        None => 0,
        Some(c) => usize::from(c.checked_sub(b'a')?) + 1,
    };
    (first < 26 && second < 27 && b.len() <= 2).then_some(first * 27 + second)
}

/// Atomic number by symbol slot (0: no element). Why by hand: symbols are looked up for
/// every site of every CIF read; a scan of the table cost a tenth of reading a small CIF.
fn symbol_index() -> &'static [u8; 26 * 27] {
    static INDEX: std::sync::OnceLock<[u8; 26 * 27]> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = [0u8; 26 * 27];
        for (i, d) in table::TABLE.iter().enumerate() {
            if let Some(slot) = symbol_slot(d.symbol.as_bytes()) {
                index[slot] = i as u8 + 1;
            }
        }
        index
    })
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
        let slot = symbol_slot(symbol.as_bytes())?;
        let z = symbol_index()[slot];
        (z != 0).then_some(Element(z))
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
    fn symbols_are_found_exactly_as_a_scan_of_the_table_finds_them() {
        let scan = |s: &str| {
            table::TABLE
                .iter()
                .position(|d| d.symbol == s)
                .map(|i| Element(i as u8 + 1))
        };
        let mut tried = vec![
            String::new(),
            "Fee".into(),
            "fe".into(),
            "FE".into(),
            "Å".into(),
        ];
        for a in (b'@'..=b'[').chain(b'a'..=b'{') {
            tried.push((a as char).to_string());
            for b in (b'@'..=b'[').chain(b'`'..=b'{') {
                tried.push(format!("{}{}", a as char, b as char));
            }
        }
        for d in table::TABLE.iter() {
            tried.push(d.symbol.to_string());
        }
        let mut found = 0;
        for s in &tried {
            assert_eq!(Element::from_symbol(s), scan(s), "{s:?}");
            found += usize::from(scan(s).is_some());
        }
        assert!(found >= 2 * 118, "{found}");
    }

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
