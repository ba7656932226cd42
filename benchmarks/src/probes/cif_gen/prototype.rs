//! Structure prototypes: conventional cells built from their textbook descriptions.
//!
//! Each builder takes the species by role (cation first, as in the formula) and the
//! lattice parameters, and returns a P1 structure of the conventional cell in the
//! AtomWorld frame (a ∥ x), sites grouped by role, labelled `<Element><index>`.

use engine::{Element, Lattice, Site, Structure};
use serde::{Deserialize, Serialize};

/// The structure types of the CIF-Gen probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prototype {
    /// Simple cubic (α-Po), 1 atom.
    SimpleCubic,
    /// Body-centred cubic (W), 2 atoms.
    Bcc,
    /// Face-centred cubic (Cu), 4 atoms.
    Fcc,
    /// Hexagonal close-packed (Mg), 2 atoms; needs c.
    Hcp,
    /// Diamond (C, Si), 8 atoms.
    Diamond,
    /// Rock salt (NaCl), 8 atoms.
    RockSalt,
    /// Caesium chloride (B2), 2 atoms.
    CsCl,
    /// Zinc blende / sphalerite (ZnS), 8 atoms.
    ZincBlende,
    /// Wurtzite (ZnO), 4 atoms; needs c and u.
    Wurtzite,
    /// Fluorite (CaF₂), 12 atoms.
    Fluorite,
    /// Cubic perovskite (SrTiO₃), 5 atoms.
    Perovskite,
    /// Rutile (TiO₂), 6 atoms; needs c and the oxygen parameter u.
    Rutile,
    /// Normal spinel (MgAl₂O₄), 56 atoms; needs the oxygen parameter u (origin choice 2).
    Spinel,
}

impl Prototype {
    /// All prototypes.
    pub const ALL: [Prototype; 13] = [
        Prototype::SimpleCubic,
        Prototype::Bcc,
        Prototype::Fcc,
        Prototype::Hcp,
        Prototype::Diamond,
        Prototype::RockSalt,
        Prototype::CsCl,
        Prototype::ZincBlende,
        Prototype::Wurtzite,
        Prototype::Fluorite,
        Prototype::Perovskite,
        Prototype::Rutile,
        Prototype::Spinel,
    ];

    /// The structure type's name as written in prompts.
    pub fn name(self) -> &'static str {
        match self {
            Prototype::SimpleCubic => "simple cubic",
            Prototype::Bcc => "body-centered cubic (bcc)",
            Prototype::Fcc => "face-centered cubic (fcc)",
            Prototype::Hcp => "hexagonal close-packed (hcp)",
            Prototype::Diamond => "diamond",
            Prototype::RockSalt => "rock-salt",
            Prototype::CsCl => "cesium chloride (CsCl)",
            Prototype::ZincBlende => "zinc blende",
            Prototype::Wurtzite => "wurtzite",
            Prototype::Fluorite => "fluorite",
            Prototype::Perovskite => "cubic perovskite",
            Prototype::Rutile => "rutile",
            Prototype::Spinel => "normal spinel",
        }
    }

    /// Number of species roles (distinct elements) the prototype takes.
    pub fn roles(self) -> usize {
        match self {
            Prototype::SimpleCubic
            | Prototype::Bcc
            | Prototype::Fcc
            | Prototype::Hcp
            | Prototype::Diamond => 1,
            Prototype::Perovskite | Prototype::Spinel => 3,
            _ => 2,
        }
    }

    /// Sites in the conventional cell.
    pub fn site_count(self) -> usize {
        match self {
            Prototype::SimpleCubic => 1,
            Prototype::Bcc | Prototype::Hcp | Prototype::CsCl => 2,
            Prototype::Fcc | Prototype::Wurtzite => 4,
            Prototype::Perovskite => 5,
            Prototype::Rutile => 6,
            Prototype::Diamond | Prototype::RockSalt | Prototype::ZincBlende => 8,
            Prototype::Fluorite => 12,
            Prototype::Spinel => 56,
        }
    }

    /// True for the hexagonal and tetragonal types, which need c.
    pub fn needs_c(self) -> bool {
        matches!(
            self,
            Prototype::Hcp | Prototype::Wurtzite | Prototype::Rutile
        )
    }

    /// True for the types with a free internal coordinate u.
    pub fn needs_u(self) -> bool {
        matches!(
            self,
            Prototype::Wurtzite | Prototype::Rutile | Prototype::Spinel
        )
    }
}

/// Lattice and internal parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Conventional lattice constant a (Å).
    pub a: f64,
    /// Lattice constant c (Å) of the hexagonal and tetragonal types.
    pub c: Option<f64>,
    /// Internal parameter: wurtzite u (anion z offset, in units of c), rutile x of O at
    /// (x, x, 0), spinel x of O at (x, x, x) in origin choice 2 (ideal 1/4).
    pub u: Option<f64>,
}

/// Why a structure cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// Wrong number of species for the prototype.
    #[error("{prototype:?} takes {expected} species, {given} given")]
    Species {
        /// The prototype.
        prototype: Prototype,
        /// Species it takes.
        expected: usize,
        /// Species given.
        given: usize,
    },
    /// A required parameter is missing or not a positive finite number.
    #[error("{prototype:?}: parameter {name} is missing or invalid")]
    Parameter {
        /// The prototype.
        prototype: Prototype,
        /// The parameter.
        name: &'static str,
    },
}

/// The four face-centring translations.
const F: [[f64; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [0.0, 0.5, 0.5],
    [0.5, 0.0, 0.5],
    [0.5, 0.5, 0.0],
];

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    // Wrap into [0, 1) so every builder returns in-cell coordinates.
    std::array::from_fn(|k| (a[k] + b[k]).rem_euclid(1.0).rem_euclid(1.0))
}

/// `basis` repeated by the face-centring translations.
fn fcc(basis: [f64; 3]) -> Vec<[f64; 3]> {
    F.iter().map(|t| add(basis, *t)).collect()
}

/// Build the conventional cell of `prototype` for `species` (by role) and `params`.
pub fn build(
    prototype: Prototype,
    species: &[Element],
    params: Params,
) -> Result<Structure, BuildError> {
    if species.len() != prototype.roles() {
        return Err(BuildError::Species {
            prototype,
            expected: prototype.roles(),
            given: species.len(),
        });
    }
    let positive = |v: Option<f64>, name| match v {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(BuildError::Parameter { prototype, name }),
    };
    let a = positive(Some(params.a), "a")?;
    let c = if prototype.needs_c() {
        positive(params.c, "c")?
    } else {
        a
    };
    let u = if prototype.needs_u() {
        let u = positive(params.u, "u")?;
        if u >= 1.0 {
            return Err(BuildError::Parameter {
                prototype,
                name: "u",
            });
        }
        u
    } else {
        0.0
    };
    let hexagonal = matches!(prototype, Prototype::Hcp | Prototype::Wurtzite);
    let lattice = if hexagonal {
        Lattice::from_parameters(a, a, c, 90.0, 90.0, 120.0)
    } else {
        Lattice::from_parameters(a, a, c, 90.0, 90.0, 90.0)
    }
    .map_err(|_| BuildError::Parameter {
        prototype,
        name: "a",
    })?;

    let (t, t2, t3) = (1.0 / 3.0, 2.0 / 3.0, 0.25);
    let groups: Vec<Vec<[f64; 3]>> = match prototype {
        Prototype::SimpleCubic => vec![vec![[0.0; 3]]],
        Prototype::Bcc => vec![vec![[0.0; 3], [0.5; 3]]],
        Prototype::Fcc => vec![fcc([0.0; 3])],
        Prototype::Hcp => vec![vec![[t, t2, 0.25], [t2, t, 0.75]]],
        Prototype::Diamond => vec![[fcc([0.0; 3]), fcc([t3; 3])].concat()],
        Prototype::RockSalt => vec![fcc([0.0; 3]), fcc([0.5, 0.0, 0.0])],
        Prototype::CsCl => vec![vec![[0.0; 3]], vec![[0.5; 3]]],
        Prototype::ZincBlende => vec![fcc([0.0; 3]), fcc([t3; 3])],
        Prototype::Wurtzite => vec![
            vec![[t, t2, 0.0], [t2, t, 0.5]],
            vec![[t, t2, u], [t2, t, 0.5 + u]],
        ],
        Prototype::Fluorite => {
            let anions = [0.25, 0.75]
                .iter()
                .flat_map(|&x| [0.25, 0.75].map(|y| (x, y)))
                .flat_map(|(x, y)| [0.25, 0.75].map(|z| [x, y, z]))
                .collect();
            vec![fcc([0.0; 3]), anions]
        }
        Prototype::Perovskite => vec![
            vec![[0.0; 3]],
            vec![[0.5; 3]],
            vec![[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]],
        ],
        Prototype::Rutile => vec![
            vec![[0.0; 3], [0.5; 3]],
            vec![
                [u, u, 0.0],
                [1.0 - u, 1.0 - u, 0.0],
                [0.5 + u, 0.5 - u, 0.5],
                [0.5 - u, 0.5 + u, 0.5],
            ],
        ],
        Prototype::Spinel => spinel(u),
    };
    let mut sites = Vec::with_capacity(prototype.site_count());
    for (group, element) in groups.iter().zip(species) {
        for f in group {
            sites.push(Site {
                element: *element,
                frac: f.map(|x| x.rem_euclid(1.0).rem_euclid(1.0)),
                label: format!("{}{}", element.symbol(), sites.len()).into(),
                occupancy: 1.0,
                oxidation: None,
                others: Vec::new(),
                magmom: None,
            });
        }
    }
    Ok(Structure::new(lattice, sites))
}

/// Normal spinel AB₂O₄ in Fd-3m, origin choice 2: A on 8a (1/8, 1/8, 1/8), B on 16d
/// (1/2, 1/2, 1/2), O on 32e (u, u, u).
///
/// Built from the ideal arrangement (u = 1/4), in which the O atoms form a cubic close
/// packing with cell a/2 shifted by (1/4, 1/4, 1/4), A fills one eighth of its tetrahedral
/// holes and B half of its octahedral holes. A real u moves each O along the ⟨111⟩ line
/// through its single A neighbour: `O = O_ideal + 8 (u − 1/4) (O_ideal − A)` (for the O at
/// (1/4, 1/4, 1/4) with A at (1/8, 1/8, 1/8) this is (u, u, u)).
fn spinel(u: f64) -> Vec<Vec<[f64; 3]>> {
    let e = 0.125;
    let a_sites: Vec<[f64; 3]> = [[e, e, e], [7.0 * e, 3.0 * e, 3.0 * e]]
        .iter()
        .flat_map(|b| fcc(*b))
        .collect();
    let b_sites: Vec<[f64; 3]> = [
        [0.5, 0.5, 0.5],
        [0.25, 0.75, 0.0],
        [0.75, 0.0, 0.25],
        [0.0, 0.25, 0.75],
    ]
    .iter()
    .flat_map(|b| fcc(*b))
    .collect();
    let mut o_sites = Vec::with_capacity(32);
    for half in [
        [0.0; 3],
        [0.5, 0.0, 0.0],
        [0.0, 0.5, 0.0],
        [0.0, 0.0, 0.5],
        [0.5, 0.5, 0.0],
        [0.5, 0.0, 0.5],
        [0.0, 0.5, 0.5],
        [0.5; 3],
    ] {
        for f in F {
            // The O fcc sublattice has cell a/2: its centring translations are F / 2.
            let ideal = add([0.25; 3], add(half, f.map(|x| x / 2.0)));
            // The nearest A (periodic): the one tetrahedral neighbour, at a·√3/8.
            let mut best = (f64::INFINITY, [0.0; 3]);
            for a in &a_sites {
                let d: [f64; 3] = std::array::from_fn(|k| {
                    let x = ideal[k] - a[k];
                    x - x.round()
                });
                let len = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if len < best.0 {
                    best = (len, d);
                }
            }
            let shift = 8.0 * (u - 0.25);
            o_sites.push(add(ideal, best.1.map(|x| x * shift)));
        }
    }
    vec![a_sites, b_sites, o_sites]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(s: &str) -> Element {
        Element::from_symbol(s).unwrap()
    }

    fn cubic(a: f64) -> Params {
        Params {
            a,
            c: None,
            u: None,
        }
    }

    /// Distances from site `i` to every other site and periodic image, sorted, with the
    /// neighbour's element.
    fn shell(s: &Structure, i: usize) -> Vec<(f64, Element)> {
        let p = s.sites[i].frac;
        let mut out = Vec::new();
        for (j, site) in s.sites.iter().enumerate() {
            for n0 in -2..=2 {
                for n1 in -2..=2 {
                    for n2 in -2..=2 {
                        if j == i && (n0, n1, n2) == (0, 0, 0) {
                            continue;
                        }
                        let f = [
                            site.frac[0] - p[0] + n0 as f64,
                            site.frac[1] - p[1] + n1 as f64,
                            site.frac[2] - p[2] + n2 as f64,
                        ];
                        let v = s.lattice.to_cartesian(f);
                        out.push((
                            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt(),
                            site.element,
                        ));
                    }
                }
            }
        }
        out.sort_by(|x, y| x.0.total_cmp(&y.0));
        out
    }

    /// The first-shell distance of site `i` and how many neighbours share it.
    fn first_shell(s: &Structure, i: usize) -> (f64, usize, Vec<Element>) {
        let sh = shell(s, i);
        let d = sh[0].0;
        let within: Vec<Element> = sh.iter().filter(|x| x.0 < d + 1e-6).map(|x| x.1).collect();
        (d, within.len(), within)
    }

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() < 1e-9
    }

    #[test]
    fn counts_match_the_declared_site_counts() {
        for p in Prototype::ALL {
            let species: Vec<Element> = ["Mg", "Al", "O"][..p.roles()]
                .iter()
                .map(|s| el(s))
                .collect();
            let s = build(
                p,
                &species,
                Params {
                    a: 5.0,
                    c: Some(4.0),
                    u: Some(0.3),
                },
            )
            .unwrap();
            assert_eq!(s.len(), p.site_count(), "{p:?}");
            // No two sites coincide.
            for i in 0..s.len() {
                assert!(first_shell(&s, i).0 > 0.5, "{p:?} site {i}");
                assert!(s.sites[i].frac.iter().all(|x| (0.0..1.0).contains(x)));
            }
        }
        assert_eq!(
            build(Prototype::RockSalt, &[el("Na")], cubic(5.0)),
            Err(BuildError::Species {
                prototype: Prototype::RockSalt,
                expected: 2,
                given: 1
            })
        );
        assert!(matches!(
            build(Prototype::Hcp, &[el("Mg")], cubic(3.0)),
            Err(BuildError::Parameter { name: "c", .. })
        ));
        assert!(build(Prototype::Fcc, &[el("Cu")], cubic(f64::NAN)).is_err());
    }

    #[test]
    fn cubic_elements_have_their_textbook_neighbours() {
        let a = 4.0;
        let sc = build(Prototype::SimpleCubic, &[el("Po")], cubic(a)).unwrap();
        let (d, n, _) = first_shell(&sc, 0);
        assert!(close(d, a) && n == 6);
        let bcc = build(Prototype::Bcc, &[el("W")], cubic(a)).unwrap();
        let (d, n, _) = first_shell(&bcc, 0);
        assert!(close(d, a * 3f64.sqrt() / 2.0) && n == 8);
        let fcc = build(Prototype::Fcc, &[el("Cu")], cubic(a)).unwrap();
        for i in 0..4 {
            let (d, n, _) = first_shell(&fcc, i);
            assert!(close(d, a / 2f64.sqrt()) && n == 12, "{d} {n}");
        }
        let dia = build(Prototype::Diamond, &[el("Si")], cubic(a)).unwrap();
        for i in 0..8 {
            let (d, n, _) = first_shell(&dia, i);
            assert!(close(d, a * 3f64.sqrt() / 4.0) && n == 4);
        }
    }

    #[test]
    fn hcp_and_wurtzite_with_ideal_ratios() {
        let a = 3.0;
        let c = a * (8.0f64 / 3.0).sqrt();
        let hcp = build(
            Prototype::Hcp,
            &[el("Mg")],
            Params {
                a,
                c: Some(c),
                u: None,
            },
        )
        .unwrap();
        for i in 0..2 {
            let (d, n, _) = first_shell(&hcp, i);
            assert!(close(d, a) && n == 12, "{d} {n}");
        }
        let w = build(
            Prototype::Wurtzite,
            &[el("Zn"), el("O")],
            Params {
                a,
                c: Some(c),
                u: Some(0.375),
            },
        )
        .unwrap();
        for i in 0..4 {
            let (d, n, els) = first_shell(&w, i);
            // Ideal wurtzite: four equal bonds of length u·c = 3c/8, all to the other element.
            assert!(close(d, 0.375 * c) && n == 4, "{i}: {d} {n}");
            assert!(els.iter().all(|e| *e != w.sites[i].element));
        }
        // A non-ideal u splits the shell: one bond along c of length u·c.
        let w = build(
            Prototype::Wurtzite,
            &[el("Zn"), el("O")],
            Params {
                a: 3.25,
                c: Some(5.207),
                u: Some(0.382),
            },
        )
        .unwrap();
        let sh = shell(&w, 0);
        assert!(sh.iter().take(4).any(|x| close(x.0, 0.382 * 5.207)));
    }

    #[test]
    fn binary_cubic_compounds() {
        let a = 5.64;
        let rs = build(Prototype::RockSalt, &[el("Na"), el("Cl")], cubic(a)).unwrap();
        for i in 0..8 {
            let (d, n, els) = first_shell(&rs, i);
            assert!(close(d, a / 2.0) && n == 6);
            assert!(els.iter().all(|e| *e != rs.sites[i].element));
        }
        let cs = build(Prototype::CsCl, &[el("Cs"), el("Cl")], cubic(a)).unwrap();
        let (d, n, _) = first_shell(&cs, 0);
        assert!(close(d, a * 3f64.sqrt() / 2.0) && n == 8);
        let zb = build(Prototype::ZincBlende, &[el("Zn"), el("S")], cubic(a)).unwrap();
        for i in 0..8 {
            let (d, n, els) = first_shell(&zb, i);
            assert!(close(d, a * 3f64.sqrt() / 4.0) && n == 4);
            assert!(els.iter().all(|e| *e != zb.sites[i].element));
        }
        let fl = build(Prototype::Fluorite, &[el("Ca"), el("F")], cubic(a)).unwrap();
        assert_eq!(fl.sites.iter().filter(|s| s.element == el("F")).count(), 8);
        let (d, n, els) = first_shell(&fl, 0);
        assert!(close(d, a * 3f64.sqrt() / 4.0) && n == 8 && els.iter().all(|e| *e == el("F")));
        let (d, n, els) = first_shell(&fl, 4);
        assert!(close(d, a * 3f64.sqrt() / 4.0) && n == 4 && els.iter().all(|e| *e == el("Ca")));
    }

    #[test]
    fn perovskite_and_rutile_octahedra() {
        let a = 3.905;
        let p = build(
            Prototype::Perovskite,
            &[el("Sr"), el("Ti"), el("O")],
            cubic(a),
        )
        .unwrap();
        let (d, n, els) = first_shell(&p, 1);
        assert!(close(d, a / 2.0) && n == 6 && els.iter().all(|e| *e == el("O")));
        // Sr: twelve O at a/√2.
        let (d, n, _) = first_shell(&p, 0);
        assert!(close(d, a / 2f64.sqrt()) && n == 12);

        let (a, c, u) = (4.594, 2.959, 0.305);
        let r = build(
            Prototype::Rutile,
            &[el("Ti"), el("O")],
            Params {
                a,
                c: Some(c),
                u: Some(u),
            },
        )
        .unwrap();
        let apical = u * a * 2f64.sqrt();
        let equatorial = (2.0 * ((0.5 - u) * a).powi(2) + (c / 2.0).powi(2)).sqrt();
        for i in 0..2 {
            let sh = shell(&r, i);
            let six: Vec<f64> = sh.iter().take(6).map(|x| x.0).collect();
            assert!(sh.iter().take(6).all(|x| x.1 == el("O")));
            assert_eq!(
                six.iter().filter(|d| close(**d, equatorial)).count(),
                4,
                "{six:?}"
            );
            assert_eq!(
                six.iter().filter(|d| close(**d, apical)).count(),
                2,
                "{six:?}"
            );
            assert!(sh[6].0 > apical + 0.5);
        }
        // The textbook TiO2 bond lengths: 1.95 Å (×4) and 1.98 Å (×2).
        assert!((equatorial - 1.95).abs() < 0.01 && (apical - 1.98).abs() < 0.01);
    }

    #[test]
    fn spinel_has_56_atoms_with_tetrahedral_and_octahedral_cations() {
        let a = 8.083;
        for u in [0.25, 0.262] {
            let s = build(
                Prototype::Spinel,
                &[el("Mg"), el("Al"), el("O")],
                Params {
                    a,
                    c: None,
                    u: Some(u),
                },
            )
            .unwrap();
            assert_eq!(s.len(), 56);
            let count = |e| s.sites.iter().filter(|x| x.element == e).count();
            assert_eq!(
                (count(el("Mg")), count(el("Al")), count(el("O"))),
                (8, 16, 32)
            );
            // A–O = a√3 (u − 1/8) (origin choice 2), four of them; B–O six equal.
            let a_o = a * 3f64.sqrt() * (u - 0.125);
            for i in 0..8 {
                let sh = shell(&s, i);
                assert!(
                    sh.iter().take(4).all(|x| close(x.0, a_o) && x.1 == el("O")),
                    "{u}: {:?}",
                    &sh[..5]
                );
                assert!(sh[4].0 > a_o + 0.1);
            }
            for i in 8..24 {
                let sh = shell(&s, i);
                let d = sh[0].0;
                assert!(sh.iter().take(6).all(|x| close(x.0, d) && x.1 == el("O")));
                assert!(sh[6].0 > d + 0.1);
                if u == 0.25 {
                    assert!(close(d, a / 4.0));
                }
            }
            // Every O: one A and three B neighbours.
            for i in 24..56 {
                let sh = shell(&s, i);
                let cations: Vec<Element> = sh
                    .iter()
                    .filter(|x| x.1 != el("O"))
                    .take(4)
                    .map(|x| x.1)
                    .collect();
                assert_eq!(cations.iter().filter(|e| **e == el("Mg")).count(), 1);
            }
        }
    }
}
