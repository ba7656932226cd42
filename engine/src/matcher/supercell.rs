//! Supercells for the matcher (`attempt_supercell`): how many primitive cells one structure
//! needs to be comparable with the other, the element mask of the expanded site lists, and
//! the sites of a structure expressed in a supercell basis.

use crate::linalg::{det_i64, inverse, vec_mat, Mat3, Vec3};
use crate::species::{Kind, Relation};

/// The supercell size and whether struct1 (rather than struct2) is the one to expand
/// (pymatgen's `_get_supercell_size` with `supercell_size="num_sites"`). The size is the
/// site-count ratio rounded half to even; a size of 1 always expands struct1.
pub(super) fn supercell_size(n1: usize, n2: usize) -> (usize, bool) {
    let fu = n2 as f64 / n1 as f64;
    if fu < 2.0 / 3.0 {
        ((1.0 / fu).round_ties_even() as usize, false)
    } else {
        (fu.round_ties_even() as usize, true)
    }
}

/// Which struct2 sites (rows) may pair with which struct1 sites (columns) once one of them
/// is expanded into a supercell of `fu` cells. Expanded sites keep their parent's species
/// class and come parent by parent (`aabbcc`), matching the order of [`supercell_frac`].
pub(super) struct Mask {
    /// Kind of each row (a struct2 site, or an image of one).
    pub rows: Vec<Kind>,
    /// Kind of each column (a struct1 site, or an image of one).
    pub cols: Vec<Kind>,
    /// Which column classes pair with which row classes, when more than equal classes do
    /// (oxidation states: see [`crate::species::pairs_with`]).
    relation: Option<Relation>,
}

impl Mask {
    /// The mask for matching `e2` onto `e1`, expanding struct1 when `s1_supercell`; classes
    /// pair by `relation` (struct1's class first) when given, else when equal.
    pub fn new(
        e1: &[Kind],
        e2: &[Kind],
        fu: usize,
        s1_supercell: bool,
        relation: Option<&Relation>,
    ) -> Self {
        let repeat = |e: &[Kind]| e.iter().flat_map(|x| std::iter::repeat_n(*x, fu)).collect();
        let (rows, cols) = if s1_supercell {
            (e2.to_vec(), repeat(e1))
        } else {
            (repeat(e2), e1.to_vec())
        };
        Self {
            rows,
            cols,
            relation: relation.cloned(),
        }
    }

    /// True when row `i` may not be paired with column `j`.
    #[inline]
    pub fn forbidden(&self, i: usize, j: usize) -> bool {
        match &self.relation {
            None => self.rows[i] != self.cols[j],
            Some(r) => !r.allows(self.cols[j], self.rows[i]),
        }
    }

    /// True when every row can be paired with a distinct allowed column.
    pub fn feasible(&self) -> bool {
        let Some(relation) = &self.relation else {
            return self.rows.iter().all(|e| {
                let want = self.rows.iter().filter(|x| *x == e).count();
                let have = self.cols.iter().filter(|x| *x == e).count();
                want <= have
            });
        };
        // Rows and columns counted by class, then a maximum flow from row classes to the
        // column classes they may pair with.
        let count = |v: &[Kind]| {
            let mut out: Vec<(Kind, usize)> = Vec::new();
            for &k in v {
                match out.iter_mut().find(|(x, _)| *x == k) {
                    Some((_, n)) => *n += 1,
                    None => out.push((k, 1)),
                }
            }
            out
        };
        let (rows, cols) = (count(&self.rows), count(&self.cols));
        let edges: Vec<Vec<bool>> = rows
            .iter()
            .map(|(r, _)| cols.iter().map(|(c, _)| relation.allows(*c, *r)).collect())
            .collect();
        max_flow(&rows, &cols, &edges) == self.rows.len()
    }

    /// The row with the most forbidden columns (the first such), and the columns it may
    /// pair with; with struct1 expanded, only the first image of each struct1 site.
    pub fn translation_indices(&self, fu: usize, s1_supercell: bool) -> (usize, Vec<usize>) {
        let mut row = 0;
        let mut most = 0;
        for i in 0..self.rows.len() {
            let masked = (0..self.cols.len())
                .filter(|&j| self.forbidden(i, j))
                .count();
            if masked > most {
                most = masked;
                row = i;
            }
        }
        let allowed = (0..self.cols.len()).filter(|&j| !self.forbidden(row, j));
        let cols = if s1_supercell {
            allowed.step_by(fu.max(1)).collect()
        } else {
            allowed.collect()
        };
        (row, cols)
    }
}

/// The largest number of rows that get distinct columns, rows and columns grouped in classes
/// of `(class, count)` and `edges[r][c]` saying whether row class `r` may take column class
/// `c` (augmenting paths over the few classes; written here, as no crate is needed for a
/// graph of a handful of nodes).
fn max_flow(rows: &[(Kind, usize)], cols: &[(Kind, usize)], edges: &[Vec<bool>]) -> usize {
    let mut left: Vec<usize> = cols.iter().map(|(_, n)| *n).collect();
    // flow[r][c]: rows of class r given columns of class c.
    let mut flow = vec![vec![0usize; cols.len()]; rows.len()];
    let mut total = 0;
    for (r, (_, want)) in rows.iter().enumerate() {
        for _ in 0..*want {
            let mut seen = vec![false; cols.len()];
            if augment(r, edges, &mut flow, &mut left, &mut seen) {
                total += 1;
            } else {
                break;
            }
        }
    }
    total
}

/// One augmenting path from row class `r`: a column class with room, or one whose rows can
/// move to another class with room.
fn augment(
    r: usize,
    edges: &[Vec<bool>],
    flow: &mut [Vec<usize>],
    left: &mut [usize],
    seen: &mut [bool],
) -> bool {
    for c in 0..left.len() {
        if !edges[r][c] || seen[c] {
            continue;
        }
        seen[c] = true;
        if left[c] > 0 {
            left[c] -= 1;
            flow[r][c] += 1;
            return true;
        }
        // Move one row of another class out of column class `c`.
        for other in 0..flow.len() {
            if flow[other][c] > 0 && augment(other, edges, flow, left, seen) {
                flow[other][c] -= 1;
                flow[r][c] += 1;
                return true;
            }
        }
    }
    false
}

/// The most lattice points [`lattice_points_in_supercell`] scans before giving up.
const MAX_SCAN: i64 = 10_000_000;

/// The points of the original lattice inside the supercell `scale · lattice`, in the
/// supercell's fractional coordinates (pymatgen's `lattice_points_in_supercell`), or `None`
/// when the matrix is singular or the count does not equal |det|.
pub(super) fn lattice_points_in_supercell(scale: &[[i64; 3]; 3]) -> Option<Vec<Vec3>> {
    let mut lo = [i64::MAX; 3];
    let mut hi = [i64::MIN; 3];
    for corner in 0..8usize {
        let pick = [(corner >> 2) & 1, (corner >> 1) & 1, corner & 1].map(|x| x as i64);
        for k in 0..3 {
            let v = (0..3).map(|r| pick[r] * scale[r][k]).sum::<i64>();
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v + 1);
        }
    }
    let span: i64 = (0..3).map(|k| hi[k] - lo[k]).product();
    if span > MAX_SCAN {
        return None;
    }
    let inv = inverse(&scale.map(|r| r.map(|x| x as f64)))?;
    let mut out = Vec::new();
    for a in lo[0]..hi[0] {
        for b in lo[1]..hi[1] {
            for c in lo[2]..hi[2] {
                let f = vec_mat([a as f64, b as f64, c as f64], &inv);
                if f.iter().all(|x| (-1e-10..1.0 - 1e-10).contains(x)) {
                    out.push(f);
                }
            }
        }
    }
    (out.len() as i64 == det_i64(scale).abs()).then_some(out)
}

/// Sites with fractional coordinates `frac` re-expressed in the supercell `scale · lattice`:
/// every site followed by its images, wrapped into [0, 1).
pub(super) fn supercell_frac(frac: &[Vec3], scale: &[[i64; 3]; 3]) -> Option<Vec<Vec3>> {
    let inv: Mat3 = inverse(&scale.map(|r| r.map(|x| x as f64)))?;
    let points = lattice_points_in_supercell(scale)?;
    let mut out = Vec::with_capacity(frac.len() * points.len());
    for f in frac {
        let base = vec_mat(*f, &inv);
        for p in &points {
            out.push(std::array::from_fn(|k| {
                let x = base[k] + p[k];
                x - crate::numeric::floor(x)
            }));
        }
    }
    Some(out)
}

impl super::pbc::PairRule for Mask {
    fn forbidden(&self, i: usize, j: usize) -> bool {
        Mask::forbidden(self, i, j)
    }

    /// The row's own class when classes pair only when equal (no oxidation-state relation).
    #[inline]
    fn class_of_row(&self, i: usize) -> Option<Kind> {
        match &self.relation {
            None => self.rows.get(i).copied(),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;

    #[test]
    fn size_rounds_half_to_even_and_picks_the_smaller_structure() {
        assert_eq!(supercell_size(2, 8), (4, true));
        assert_eq!(supercell_size(8, 2), (4, false));
        assert_eq!(supercell_size(2, 5), (2, true));
        assert_eq!(supercell_size(4, 5), (1, true));
        assert_eq!(supercell_size(3, 2), (1, true));
    }

    #[test]
    fn lattice_points_of_a_doubled_cell() {
        let p = lattice_points_in_supercell(&[[2, 0, 0], [0, 1, 0], [0, 0, 1]]).unwrap();
        assert_eq!(p, vec![[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]]);
        let q = lattice_points_in_supercell(&[[1, 1, 0], [-1, 1, 0], [0, 0, 2]]).unwrap();
        assert_eq!(q.len(), 4);
        assert!(lattice_points_in_supercell(&[[1, 0, 0], [2, 0, 0], [0, 0, 1]]).is_none());
    }

    #[test]
    fn mask_expands_parent_by_parent() {
        let (na, cl) = (
            Element::from_symbol("Na").unwrap().z(),
            Element::from_symbol("Cl").unwrap().z(),
        );
        let m = Mask::new(&[na, cl], &[cl, na, na, cl], 2, true, None);
        assert_eq!(m.cols, vec![na, na, cl, cl]);
        assert!(m.feasible());
        let (row, cols) = m.translation_indices(2, true);
        assert_eq!(row, 0);
        assert_eq!(cols, vec![2]);
    }

    #[test]
    fn with_oxidation_states_the_mask_follows_pymatgens_relation() {
        use crate::species::{Kinds, Occupant};
        use crate::structure::Site;
        let ion = |sym: &str, o: Option<f64>| {
            let mut s = Site::new(Element::from_symbol(sym).unwrap(), [0.0; 3], sym, 1.0);
            s.oxidation = o;
            s
        };
        // struct1: plain Fe, Fe; struct2: Fe2+, Fe3+. Plain Fe pairs with either.
        let s1 = [ion("Fe", None), ion("Fe", None)];
        let s2 = [ion("Fe", Some(2.0)), ion("Fe", Some(3.0))];
        let kinds = Kinds::of(s1.iter().chain(&s2));
        let r = kinds.relation().unwrap();
        let (k1, k2) = (kinds.kinds(&s1), kinds.kinds(&s2));
        let m = Mask::new(&k1, &k2, 1, true, Some(&r));
        assert!((0..2).all(|i| (0..2).all(|j| !m.forbidden(i, j))));
        assert!(m.feasible());
        // The other way round nothing pairs.
        let back = Mask::new(&k2, &k1, 1, true, Some(&r));
        assert!((0..2).all(|i| (0..2).all(|j| back.forbidden(i, j))));
        assert!(!back.feasible());
        // Counts per class decide: two Fe2+ rows cannot share one Fe2+ column.
        let s3 = [ion("Fe", Some(2.0)), ion("Fe", Some(2.0))];
        let kinds = Kinds::of(s2.iter().chain(&s3));
        let r = kinds.relation().unwrap();
        let m = Mask::new(&kinds.kinds(&s2), &kinds.kinds(&s3), 1, true, Some(&r));
        assert!(!m.feasible());
        // A mixed site of both oxidation states pairs only with the same mix.
        let mut mixed = ion("Fe", Some(2.0));
        mixed.occupancy = 0.5;
        mixed.others.push(Occupant {
            element: Element::from_symbol("Fe").unwrap(),
            occupancy: 0.5,
            oxidation: Some(3.0),
        });
        let kinds = Kinds::of([&s1[0], &mixed]);
        let r = kinds.relation().unwrap();
        assert!(!r.allows(kinds.kind(&s1[0]), kinds.kind(&mixed)));
    }
}
