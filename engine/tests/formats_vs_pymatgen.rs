//! Differential test of the POSCAR, extended XYZ and pymatgen JSON readers and writers, of
//! `Structure::neighbours` and of `symmetry::space_group` against pymatgen, ASE and spglib.
//!
//! The cases come from `engine/tests/pymatgen/formats_oracle.py` (run by
//! `scripts/pymatgen-oracles.sh`); this test reads the JSON file named by
//! `ATOMWORLD_FORMATS_CASES` and is skipped, with a notice, when the variable is unset
//! (strictly required when `ATOMWORLD_REQUIRE_SHARED=1`, as in CI).
//!
//! Each case holds a structure as exact floats. Acceptance:
//! - `write_poscar` is byte-identical to pymatgen's `str(Poscar(structure))`;
//! - `write_xyz` is identical to ASE's extxyz writer token by token, except that a printed
//!   coordinate may differ by one unit of its 8th decimal (ASE computes Cartesian positions
//!   with a BLAS matrix product whose summation order differs from ours, so `-0.00000000`
//!   may be ours `0.00000000`);
//! - `write_pymatgen_json` equals `structure.as_dict()` value by value (numbers within 1e-9
//!   relative; lattice parameters are derived quantities);
//! - reading pymatgen's POSCAR, ASE's XYZ and pymatgen's JSON gives back the structure
//!   (Cartesian positions within 1e-8 Å, XYZ within 1e-7 Å as it carries 8 decimals);
//! - `neighbours(0, 4 Å)` lists the same (index, image) pairs with distances within 1e-9 Å;
//! - the space-group number equals spglib's wherever spglib finds one (symprec 0.01 Å).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

#[path = "common/kernel.rs"]
mod kernel;

use engine::format::{
    read_poscar, read_pymatgen_json, read_xyz, write_poscar, write_pymatgen_json, write_xyz,
};
use engine::lattice::Lattice;
use engine::structure::{Site, Structure};
use engine::symmetry::{space_group, DEFAULT_SYMPREC};
use engine::Element;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Oracle {
    radius: f64,
    cases: Vec<Case>,
    lll: Vec<LllCase>,
    inverses: Vec<InverseCase>,
    dots: Vec<DotCase>,
}

/// numpy's dot product of two vectors, as IEEE bit patterns.
#[derive(Deserialize)]
struct DotCase {
    x: Vec<u64>,
    y: Vec<u64>,
    dot: u64,
}

/// numpy's inverse of one matrix (`None`: numpy raised), as IEEE bit patterns.
#[derive(Deserialize)]
struct InverseCase {
    matrix: [u64; 9],
    inv: Option<[u64; 9]>,
}

/// pymatgen's LLL reduction and angles of one lattice, as IEEE bit patterns (row-major).
#[derive(Deserialize)]
struct LllCase {
    matrix: [u64; 9],
    lll: [u64; 9],
    mapping: [[i64; 3]; 3],
    angles: [u64; 3],
    inv: [u64; 9],
}

#[derive(Deserialize)]
struct Case {
    id: String,
    matrix: [[f64; 3]; 3],
    species: Vec<Vec<(String, f64)>>,
    frac: Vec<[f64; 3]>,
    labels: Vec<String>,
    json: Value,
    poscar: Option<String>,
    xyz: Option<String>,
    neighbours: Option<Vec<(usize, [i32; 3], f64)>>,
    space_group: Option<i32>,
}

impl Case {
    fn structure(&self) -> Structure {
        let sites = self
            .species
            .iter()
            .zip(&self.frac)
            .zip(&self.labels)
            .map(|((sp, frac), label)| Site {
                element: Element::from_symbol(&sp[0].0).expect("oracle element"),
                frac: *frac,
                label: label.as_str().into(),
                occupancy: sp[0].1,
                oxidation: None,
                others: Vec::new(),
                magmom: None,
            })
            .collect();
        Structure::new(Lattice::from_matrix(self.matrix), sites)
    }
}

/// Largest Cartesian distance (Å) between corresponding sites, or an explanation.
fn same_structure(a: &Structure, b: &Structure, tol: f64) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} sites vs {}", a.len(), b.len()));
    }
    for (x, y) in a
        .lattice
        .matrix()
        .iter()
        .flatten()
        .zip(b.lattice.matrix().iter().flatten())
    {
        if (x - y).abs() > tol {
            return Err(format!(
                "lattice {:?} vs {:?}",
                a.lattice.matrix(),
                b.lattice.matrix()
            ));
        }
    }
    for (i, (s, t)) in a.sites.iter().zip(&b.sites).enumerate() {
        if s.element != t.element || (s.occupancy - t.occupancy).abs() > 1e-12 {
            return Err(format!("site {i}: {:?} vs {:?}", s.element, t.element));
        }
        let (p, q) = (a.cartesian(i), b.cartesian(i));
        let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
        if d > tol {
            return Err(format!("site {i} is {d:e} Å away"));
        }
    }
    Ok(())
}

/// Compares two JSON values, numbers within `rel` relative; returns the first difference.
fn json_diff(path: &str, a: &Value, b: &Value, rel: f64) -> Option<String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64()?, y.as_f64()?);
            ((x - y).abs() > rel * x.abs().max(y.abs()).max(1.0))
                .then(|| format!("{path}: {x} vs {y}"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items vs {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| json_diff(&format!("{path}[{i}]"), p, q, rel))
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys_x: Vec<_> = x.keys().collect();
            let keys_y: Vec<_> = y.keys().collect();
            if keys_x != keys_y {
                return Some(format!("{path}: keys {keys_x:?} vs {keys_y:?}"));
            }
            x.iter()
                .find_map(|(k, v)| json_diff(&format!("{path}.{k}"), v, &y[k], rel))
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

fn check(case: &Case, radius: f64) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |what: &str, why: String| failures.push(format!("{} {what}: {why}", case.id));
    let s = case.structure();

    if let Some(expected) = &case.poscar {
        let ours = write_poscar(&s);
        if &ours != expected {
            fail("POSCAR writer", first_line_diff(expected, &ours));
        }
        match read_poscar(expected) {
            // POSCAR drops labels; pymatgen negates a left-handed lattice and keeps the
            // fractional coordinates (an inversion of the structure, which VASP needs).
            Ok(back) => {
                let mut flipped = s.clone();
                if s.lattice.volume() < 0.0 {
                    flipped.lattice =
                        Lattice::from_matrix(s.lattice.matrix().map(|r| r.map(|x| -x)));
                }
                if let Err(e) = same_structure(&back, &flipped, 1e-8) {
                    fail("POSCAR reader", e);
                }
            }
            Err(e) => fail("POSCAR reader", e.to_string()),
        }
    }
    if let Some(expected) = &case.xyz {
        let ours = write_xyz(&s);
        if let Some(d) = xyz_diff(expected, &ours) {
            fail("XYZ writer", d);
        }
        match read_xyz(expected) {
            Ok(back) => {
                if let Err(e) = same_structure(&back, &s, 1e-7) {
                    fail("XYZ reader", e);
                }
            }
            Err(e) => fail("XYZ reader", e.to_string()),
        }
    }
    let ours: Value = match serde_json::from_str(&write_pymatgen_json(&s)) {
        Ok(v) => v,
        Err(e) => {
            fail("JSON writer", e.to_string());
            Value::Null
        }
    };
    if let Some(d) = json_diff("", &case.json, &ours, 1e-9) {
        fail("JSON writer", d);
    }
    match read_pymatgen_json(&case.json.to_string()) {
        Ok(back) => {
            if let Err(e) = same_structure(&back, &s, 1e-12) {
                fail("JSON reader", e);
            }
        }
        Err(e) => fail("JSON reader", e.to_string()),
    }
    if let Some(expected) = &case.neighbours {
        let mut theirs: Vec<(usize, [i32; 3], f64)> = expected.clone();
        theirs.sort_by_key(|a| (a.0, a.1));
        let mut ours: Vec<(usize, [i32; 3], f64)> = s
            .neighbours(0, radius)
            .into_iter()
            .map(|n| (n.index, n.image, n.distance))
            .collect();
        ours.sort_by_key(|a| (a.0, a.1));
        // A neighbour within 1e-9 Å of the radius may fall either side.
        let edge = |n: &(usize, [i32; 3], f64)| (n.2 - radius).abs() < 1e-9;
        theirs.retain(|n| !edge(n));
        ours.retain(|n| !edge(n));
        let keys = |v: &[(usize, [i32; 3], f64)]| v.iter().map(|n| (n.0, n.1)).collect::<Vec<_>>();
        if keys(&theirs) != keys(&ours) {
            fail(
                "neighbours",
                format!("pymatgen {} neighbours, ours {}", theirs.len(), ours.len()),
            );
        } else if let Some((a, b)) = theirs
            .iter()
            .zip(&ours)
            .find(|(a, b)| (a.2 - b.2).abs() > 1e-9)
        {
            fail(
                "neighbours",
                format!("distance to {:?}: {} vs {}", (a.0, a.1), a.2, b.2),
            );
        }
    }
    if let Some(number) = case.space_group {
        match space_group(&s, DEFAULT_SYMPREC) {
            Ok(sg) if sg.number == number => {}
            Ok(sg) => fail(
                "space group",
                format!("spglib {number}, ours {}", sg.number),
            ),
            Err(e) => fail("space group", format!("spglib {number}, ours failed: {e}")),
        }
    }
    failures
}

/// The first token where two XYZ texts differ by more than one unit in the 8th decimal.
fn xyz_diff(expected: &str, ours: &str) -> Option<String> {
    let (e, o): (Vec<_>, Vec<_>) = (expected.lines().collect(), ours.lines().collect());
    if e.len() != o.len() || expected.ends_with('\n') != ours.ends_with('\n') {
        return Some(first_line_diff(expected, ours));
    }
    for (i, (a, b)) in e.iter().zip(&o).enumerate() {
        let (ta, tb): (Vec<_>, Vec<_>) = (
            a.split_whitespace().collect(),
            b.split_whitespace().collect(),
        );
        let same = ta.len() == tb.len()
            && ta.iter().zip(&tb).all(|(x, y)| {
                x == y
                    || matches!((x.parse::<f64>(), y.parse::<f64>()),
                        (Ok(p), Ok(q)) if (p - q).abs() <= 1.0000001e-8)
            });
        if !same {
            return Some(format!("line {}: expected {a:?}, ours {b:?}", i + 1));
        }
    }
    None
}

fn first_line_diff(expected: &str, ours: &str) -> String {
    let (e, o): (Vec<_>, Vec<_>) = (expected.lines().collect(), ours.lines().collect());
    for i in 0..e.len().max(o.len()) {
        if e.get(i) != o.get(i) {
            return format!(
                "line {}: expected {:?}, ours {:?}",
                i + 1,
                e.get(i),
                o.get(i)
            );
        }
    }
    "trailing newline differs".into()
}

/// A row-major 3×3 matrix from its IEEE bit patterns.
fn from_bits(b: &[u64; 9]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| f64::from_bits(b[3 * i + j])))
}

/// Prints a test's summary and its first 20 failures, then fails if there are any.
fn report(summary: String, failures: &[String]) {
    println!("{summary}");
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{} disagreements (the first 20 listed above)",
        failures.len()
    );
}

/// The oracle file, or `None` (with a note) where the test environment does not name one.
fn oracle() -> Option<Oracle> {
    let Some(path) = std::env::var_os("ATOMWORLD_FORMATS_CASES") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true")
                && std::env::var_os("ATOMWORLD_REQUIRE_SHARED").is_none(),
            "ATOMWORLD_FORMATS_CASES is unset (scripts/pymatgen-oracles.sh makes it)"
        );
        eprintln!("skipped: ATOMWORLD_FORMATS_CASES is unset (scripts/test.sh sets it)");
        return None;
    };
    let text = std::fs::read_to_string(&path).expect("oracle file");
    Some(serde_json::from_str(&text).expect("oracle JSON"))
}

/// LLL reduction (basis and integer mapping) bit for bit as pymatgen's, and lattice angles
/// within 4 ulps of pymatgen's (see below), on every case's lattice and on rhombohedral and hexagonal cells whose size reduction
/// meets u = 1/2 exactly: the last bit of numpy's arithmetic decides those ties.
#[test]
fn lll_reduction_and_angles_are_pymatgens_to_the_bit() {
    use engine::linalg::angles;
    use engine::reduction::{lll_reduce_matrix, LLL_DELTA};
    let Some(oracle) = oracle() else { return };
    let mut failures = Vec::new();
    let foreign = kernel::foreign();
    let (mut swapped, mut lll_same, mut angles_same, mut equivalent) = (0, 0, 0, 0);
    // Under another kernel a tie (u = 1/2) may be settled the other way: the reduction must
    // still be one of the same lattice with the same vector lengths.
    let lengths = |b: &[[f64; 3]; 3]| {
        let mut l = b.map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt());
        l.sort_by(f64::total_cmp);
        l
    };
    for (n, case) in oracle.lll.iter().enumerate() {
        let m = from_bits(&case.matrix);
        let want = from_bits(&case.lll);
        match lll_reduce_matrix(&m, LLL_DELTA) {
            Ok(r)
                if r.matrix.map(|row| row.map(f64::to_bits))
                    == want.map(|row| row.map(f64::to_bits))
                    && r.mapping == case.mapping =>
            {
                swapped += (r.mapping != [[1, 0, 0], [0, 1, 0], [0, 0, 1]]) as usize;
                lll_same += 1;
            }
            Ok(r)
                if foreign.is_some()
                    && lengths(&r.matrix)
                        .iter()
                        .zip(lengths(&want))
                        .all(|(a, b)| (a - b).abs() <= 1e-9 * b.abs().max(1.0)) =>
            {
                equivalent += 1;
            }
            Ok(r) => failures.push(format!(
                "lattice {n} {m:?}: LLL {:?} / {:?} vs pymatgen {want:?} / {:?}",
                r.matrix, r.mapping, case.mapping
            )),
            Err(e) => failures.push(format!("lattice {n} {m:?}: {e}")),
        }
        // numpy's arccos on AVX-512 machines is Intel's SVML, which differs from libm's in
        // the last bit now and then (a few ulps once scaled to degrees): bit-identical
        // angles are counted, and the rest must be within 4 ulps.
        let ours = angles(&m);
        let theirs = case.angles.map(f64::from_bits);
        if ours.map(f64::to_bits) == case.angles {
            angles_same += 1;
        } else if foreign.is_some() && (0..3).all(|k| (ours[k] - theirs[k]).abs() <= 1e-9) {
            // Another kernel's arithmetic: equal to a billionth of a degree.
        } else if (0..3).any(|k| (ours[k].to_bits() as i64 - case.angles[k] as i64).abs() > 4) {
            failures.push(format!(
                "lattice {n} {m:?}: angles {ours:?} vs pymatgen {theirs:?}"
            ));
        }
    }
    report(
        format!(
            "LLL vs pymatgen: {} lattices ({swapped} with a non-identity mapping), {lll_same} \
             bit-identical reductions, {angles_same} bit-identical angle triples{}",
            oracle.lll.len(),
            foreign.as_ref().map_or(String::new(), |k| format!(
                "; numpy ran OpenBLAS's {k} kernels (OPENBLAS_CORETYPE), not the SkylakeX ones \
                 ours reproduces: {equivalent} reductions settle a tie otherwise, with the same \
                 lengths"
            )),
        ),
        &failures,
    );
}

/// `linalg::inverse_numpy` bit for bit as `np.linalg.inv`: on the oracle's lattices (where
/// pymatgen's `inv_matrix` is used) and on its seeded matrices, singular ones included.
#[test]
fn inverse_is_numpys_to_the_bit() {
    use engine::linalg::inverse_numpy;
    let Some(oracle) = oracle() else { return };
    let flat =
        |m: [[f64; 3]; 3]| -> [u64; 9] { std::array::from_fn(|k| m[k / 3][k % 3].to_bits()) };
    let cases = oracle
        .lll
        .iter()
        .map(|c| (c.matrix, Some(c.inv)))
        .chain(oracle.inverses.iter().map(|c| (c.matrix, c.inv)));
    let (mut total, mut singular, mut close) = (0, 0, 0);
    let foreign = kernel::foreign();
    // Under another kernel: every element within the forward error of an LU solve,
    // 64·ε·κ·max|A⁻¹| with κ ≈ 3·max|A|·max|A⁻¹| (a wrong inverse is off by far more); a
    // numerically singular matrix (κ above 1e15) may be found singular by one kernel only.
    let max_abs = |b: &[u64; 9]| {
        b.iter()
            .map(|x| f64::from_bits(*x).abs())
            .fold(0.0, f64::max)
    };
    let near = |m: &[u64; 9], g: &Option<[u64; 9]>, w: &Option<[u64; 9]>| match (g, w) {
        (Some(g), Some(w)) => {
            let kappa = 3.0 * max_abs(m) * max_abs(w);
            let bound = 64.0 * f64::EPSILON * kappa * max_abs(w);
            g.iter()
                .zip(w)
                .all(|(a, b)| (f64::from_bits(*a) - f64::from_bits(*b)).abs() <= bound)
        }
        (Some(inv), None) | (None, Some(inv)) => 3.0 * max_abs(m) * max_abs(inv) > 1e15,
        (None, None) => true,
    };
    let mut failures = Vec::new();
    for (n, (m, want)) in cases.enumerate() {
        total += 1;
        singular += want.is_none() as usize;
        let got = inverse_numpy(&from_bits(&m)).map(flat);
        let within = foreign.is_some() && near(&m, &got, &want);
        close += usize::from(within && got != want);
        if got != want && !within {
            failures.push(format!(
                "matrix {n} {:?}: {:?} vs numpy {:?}",
                from_bits(&m),
                got.map(|g| from_bits(&g)),
                want.map(|w| from_bits(&w))
            ));
        }
    }
    report(
        format!(
            "inverse vs numpy: {total} matrices ({singular} singular), {} bit-identical{}",
            total - failures.len() - close,
            foreign.as_ref().map_or(String::new(), |k| format!(
                "; numpy ran OpenBLAS's {k} kernels (OPENBLAS_CORETYPE), not the SkylakeX ones \
                 ours reproduces: {close} within the forward error of an LU solve"
            )),
        ),
        &failures,
    );
}

/// `numeric::dot_numpy` bit for bit as `np.dot` of two vectors, below and above the lengths
/// where OpenBLAS's kernel changes its summation order.
#[test]
fn dot_product_is_numpys_to_the_bit() {
    let Some(oracle) = oracle() else { return };
    let floats = |v: &[u64]| v.iter().map(|b| f64::from_bits(*b)).collect::<Vec<_>>();
    let foreign = kernel::foreign();
    let mut bounded = 0;
    let wrong: Vec<String> = oracle
        .dots
        .iter()
        .filter_map(|c| {
            let (x, y) = (floats(&c.x), floats(&c.y));
            let got = engine::numeric::dot_numpy(&x, &y);
            // Under another kernel (another summation order): within the rounding bound of
            // any order, n·ε·Σ|x·y|.
            let bound = x.len() as f64
                * f64::EPSILON
                * x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum::<f64>();
            let within = foreign.is_some() && (got - f64::from_bits(c.dot)).abs() <= bound;
            bounded += usize::from(within && got.to_bits() != c.dot);
            (got.to_bits() != c.dot && !within).then(|| {
                format!(
                    "{} terms: {got:e} vs numpy {:e}",
                    c.x.len(),
                    f64::from_bits(c.dot)
                )
            })
        })
        .collect();
    println!(
        "dot vs numpy: {} vector pairs, {} bit-identical{}",
        oracle.dots.len(),
        oracle.dots.len() - wrong.len() - bounded,
        foreign.as_ref().map_or(String::new(), |k| format!(
            "; numpy ran OpenBLAS's {k} kernels (OPENBLAS_CORETYPE), not the SkylakeX ones ours \
             reproduces: {bounded} within the rounding bound of any summation order"
        ))
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn formats_neighbours_and_space_groups_agree_with_pymatgen() {
    let Some(oracle) = oracle() else { return };
    let mut failures = Vec::new();
    let (mut poscar, mut xyz, mut neigh, mut groups) = (0, 0, 0, 0);
    for case in &oracle.cases {
        poscar += case.poscar.is_some() as usize;
        xyz += case.xyz.is_some() as usize;
        neigh += case.neighbours.is_some() as usize;
        groups += case.space_group.is_some() as usize;
        failures.extend(check(case, oracle.radius));
    }
    println!(
        "formats vs pymatgen/ASE/spglib: {} structures ({poscar} POSCAR, {xyz} XYZ, {} JSON, \
         {neigh} neighbour lists, {groups} space groups), {} disagreements",
        oracle.cases.len(),
        oracle.cases.len(),
        failures.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{} disagreements (listed above)",
        failures.len()
    );
}
