//! Merging the sites of a structure into a candidate smaller cell.

use super::buckets::Buckets;
use super::Group;
use crate::lattice::Lattice;
use crate::linalg::{lengths, matmul, py_mod1, vec_mat, Mat3, Vec3};
use crate::numeric::distance_to_integer;
use crate::structure::{Site, Structure};

/// A candidate smaller cell: its supercell matrix in Hermite normal form, the inverse, and
/// how many sites of the current cell fall onto each of its sites.
#[derive(Clone, Copy)]
pub(super) struct Cell<'c> {
    pub hnf: &'c [[i64; 3]; 3],
    pub inv: &'c Mat3,
    pub size: usize,
}

/// Tries the cell `inv · lattice`: returns the merged structure when every species' sites
/// fall into cliques of exactly `size` coinciding sites, else `None`. `tol` is the
/// tolerance (Å) and `super_ftol_2` twice it per fractional axis of the current cell.
///
/// As the reference: sites `i` and `j` coincide when they lie within the tolerance of each
/// other in the small cell (per fractional axis, periodically) but not within twice the
/// tolerance in the current one (`i` always coincides with itself). Each site's coinciding
/// sites are found among those near it in the small cell ([`Buckets`]), and tested exactly.
pub(super) fn merge_into_cell(
    s: &Structure,
    groups: &[Group],
    m: &Mat3,
    Cell { hnf, inv, size }: Cell<'_>,
    (tol, super_ftol_2): (f64, Vec3),
) -> Option<Structure> {
    let new_m = matmul(inv, m);
    let ftol: Vec3 = lengths(&new_m).map(|l| tol / l);
    let reach: Vec3 = ftol.map(|t| t * (1.0 + 1e-9) + 1e-12);
    let hnf_f: Mat3 = hnf.map(|r| r.map(|x| x as f64));
    let mut sites = Vec::new();
    for g in groups {
        let all_frac: Vec<Vec3> = g.frac.iter().map(|f| vec_mat(*f, &hnf_f)).collect();
        let same = coinciding(g, &all_frac, (ftol, reach, super_ftol_2), size)?;
        let wrapped: Vec<Vec3> = all_frac.iter().map(|f| f.map(py_mod1)).collect();
        let mut added = vec![false; g.frac.len()];
        // Each site not yet merged, with the sites of its clique (rows of one clique are
        // equal, so the site is its clique's first).
        for (i, members) in same.chunks_exact(size.max(1)).enumerate() {
            if added[i] {
                continue;
            }
            let Some((&first, rest)) = members.split_first() else {
                continue;
            };
            for &j in members {
                added[j] = true;
            }
            let mut coords = wrapped[first];
            for (k, &j) in rest.iter().enumerate() {
                let weight = (k + 2) as f64;
                for (c, w) in coords.iter_mut().zip(wrapped[j]) {
                    let offset = w - *c;
                    *c += (offset - offset.round_ties_even()) / weight;
                }
            }
            let template = &s.sites[g.sites[first]];
            sites.push(Site {
                frac: coords,
                ..template.clone()
            });
        }
    }
    Some(Structure::new(Lattice::from_matrix(new_m), sites))
}

/// For each site of `g` in order, the sites it coincides with (`size` of them, in
/// increasing order), one row after another; `None` unless every site has exactly `size`
/// and each row is a clique. `all_frac` holds the sites in the small cell, `ftol` its
/// per-axis tolerance (`reach`: that with a margin for the grid), `super_ftol_2` twice the
/// tolerance in the current cell.
fn coinciding(
    g: &Group,
    all_frac: &[Vec3],
    (ftol, reach, super_ftol_2): (Vec3, Vec3, Vec3),
    size: usize,
) -> Option<Vec<usize>> {
    let n = all_frac.len();
    let buckets = Buckets::new(all_frac, reach);
    let same = |i: usize, j: usize| {
        let apart = i == j
            || (0..3).any(|k| distance_to_integer(g.frac[j][k] - g.frac[i][k]) > super_ftol_2[k]);
        apart && (0..3).all(|k| distance_to_integer(all_frac[j][k] - all_frac[i][k]) < ftol[k])
    };
    let mut rows: Vec<usize> = Vec::with_capacity(n.saturating_mul(size));
    for (i, f) in all_frac.iter().enumerate() {
        let start = rows.len();
        let at = f.map(py_mod1);
        buckets.any_near(at, |j| {
            if same(i, j) {
                rows.push(j);
            }
            false
        });
        // Every site must coincide with exactly `size` sites: most cells fail on the first.
        if rows.len() - start != size {
            return None;
        }
        rows[start..].sort_unstable();
    }
    // …and the coinciding sets must be cliques: every member's own row holds every member.
    let row = |i: usize| &rows[i * size..(i + 1) * size];
    let cliques = (0..n).all(|i| {
        row(i)
            .iter()
            .all(|&p| row(i).iter().all(|q| row(p).binary_search(q).is_ok()))
    });
    cliques.then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's dense test: the full matrix of coinciding pairs, every row counted,
    /// then every row's members checked pairwise.
    fn by_matrix(
        g: &Group,
        all_frac: &[Vec3],
        (ftol, super_ftol_2): (Vec3, Vec3),
        size: usize,
    ) -> Option<Vec<usize>> {
        let n = all_frac.len();
        let dti = |a: &Vec3, b: &Vec3, k: usize| distance_to_integer(a[k] - b[k]);
        let same: Vec<bool> = (0..n * n)
            .map(|x| {
                let (i, j) = (x / n, x % n);
                let apart =
                    i == j || (0..3).any(|k| dti(&g.frac[j], &g.frac[i], k) > super_ftol_2[k]);
                apart && (0..3).all(|k| dti(&all_frac[j], &all_frac[i], k) < ftol[k])
            })
            .collect();
        let mut rows = Vec::new();
        for i in 0..n {
            let members: Vec<usize> = (0..n).filter(|&j| same[i * n + j]).collect();
            if members.len() != size {
                return None;
            }
            rows.extend(members);
        }
        let row = |i: usize| &rows[i * size..(i + 1) * size];
        let cliques = (0..n).all(|i| {
            row(i)
                .iter()
                .all(|&p| row(i).iter().all(|&q| same[p * n + q]))
        });
        cliques.then_some(rows)
    }

    #[test]
    fn the_buckets_find_the_cliques_the_matrix_finds() {
        let mut rng = crate::test_rng::XorShift::new(0x00c0_ffee_1234_5678);
        let (mut merged, mut refused) = (0, 0);
        for case in 0..300 {
            // A motif repeated `reps` times along a (so a 1/reps cell can merge it), with
            // jitter from none to beyond the tolerance.
            let reps = [2usize, 3, 4][case % 3];
            let motif = 1 + case % 5;
            let jitter = [0.0, 0.3, 1.0, 4.0][(case / 3) % 4];
            let tol = 0.02 + 0.05 * rng.unit();
            let mut frac = Vec::new();
            for _ in 0..motif {
                let base: Vec3 = std::array::from_fn(|_| rng.unit());
                for r in 0..reps {
                    frac.push(std::array::from_fn(|k| {
                        let shift = if k == 0 { r as f64 / reps as f64 } else { 0.0 };
                        base[k] + shift + (2.0 * rng.unit() - 1.0) * jitter * tol
                    }));
                }
            }
            let g = Group {
                sites: (0..frac.len()).collect(),
                frac,
            };
            // The cell 1/reps along a: coordinates times diag(reps, 1, 1).
            let all_frac: Vec<Vec3> = g
                .frac
                .iter()
                .map(|f| [f[0] * reps as f64, f[1], f[2]])
                .collect();
            let ftol: Vec3 = [tol * reps as f64, tol, tol];
            let reach: Vec3 = ftol.map(|t| t * (1.0 + 1e-9) + 1e-12);
            let super_ftol_2: Vec3 = [2.0 * tol; 3];
            let want = by_matrix(&g, &all_frac, (ftol, super_ftol_2), reps);
            let got = coinciding(&g, &all_frac, (ftol, reach, super_ftol_2), reps);
            assert_eq!(got, want, "case {case}");
            merged += usize::from(want.is_some());
            refused += usize::from(want.is_none());
        }
        assert!(
            merged > 50 && refused > 50,
            "merged {merged}, refused {refused}"
        );
    }
}
