//! The translations that could make a cell smaller: vectors between sites of one species
//! that map every species onto itself, within the tolerance.

use super::buckets::Buckets;
use crate::linalg::{py_mod1, Vec3};

/// Translations from the first site of the smallest group to each of its sites that map
/// every group onto itself within `tol2` (per fractional axis, periodic). `groups` are the
/// fractional coordinates of each species' sites.
///
/// As the reference: for each group (smallest first) and each of its sites `f`, a
/// translation `v` stays when some site `x` of the group has `x - f` within `tol2` of `v`,
/// with coordinates wrapped into [0, 1), scaled by `1 / tol2` and compared in the Chebyshev
/// metric with a strict bound of 1 (its k-d tree query). The sites near `f + v` are found
/// through [`Buckets`], and only they are compared.
pub(super) fn candidate_translations(groups: &[&[Vec3]], tol2: Vec3) -> Vec<Vec3> {
    let Some(smallest) = groups.iter().min_by_key(|g| g.len()) else {
        return Vec::new();
    };
    let Some(&origin) = smallest.first() else {
        return Vec::new();
    };
    let scale: Vec3 = tol2.map(|t| 1.0 / t);
    // Each translation with its scaled form, which every comparison of it uses.
    let mut vecs: Vec<(Vec3, Vec3)> = smallest
        .iter()
        .map(|f| {
            let v: Vec3 = std::array::from_fn(|k| f[k] - origin[k]);
            (v, scaled(&v, scale))
        })
        .collect();
    let mut by_size: Vec<&[Vec3]> = groups.to_vec();
    by_size.sort_by_key(|g| g.len());
    // Any site the comparison accepts lies within the tolerance of `f + v` modulo 1, up to
    // the rounding of a few operations on numbers below 1: the margin covers that.
    let reach: Vec3 = tol2.map(|t| t * (1.0 + 1e-9) + 1e-12);
    'groups: for g in by_size {
        let buckets = Buckets::new(g, reach);
        for f in g {
            // The zero translation (the first) always stays: every site maps onto itself.
            // Alone, it stays alone.
            if vecs.len() < 2 {
                break 'groups;
            }
            vecs.retain(|(v, vs)| {
                let at: Vec3 = std::array::from_fn(|k| py_mod1(f[k] + v[k]));
                buckets.any_near(at, |j| {
                    let x = &g[j];
                    let shifted: Vec3 = std::array::from_fn(|k| x[k] - f[k]);
                    within_one(vs, &scaled(&shifted, scale), scale)
                })
            });
        }
    }
    vecs.into_iter().map(|(v, _)| v).collect()
}

/// A point wrapped into [0, 1) and scaled by `scale` per axis (kept below `scale`).
fn scaled(p: &Vec3, scale: Vec3) -> Vec3 {
    std::array::from_fn(|k| (py_mod1(p[k]) * scale[k]).clamp(0.0, scale[k] * (1.0 - 1e-15)))
}

/// Whether two scaled points are less than 1 apart on every axis, periodically (period
/// `scale`).
fn within_one(p: &Vec3, q: &Vec3, scale: Vec3) -> bool {
    (0..3).all(|k| {
        let (full, half) = (scale[k], scale[k] / 2.0);
        let mut d = p[k] - q[k];
        if d < -half {
            d += full;
        } else if d > half {
            d -= full;
        }
        d.abs() < 1.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's scan: every translation against every shifted site.
    fn by_scan(groups: &[&[Vec3]], tol2: Vec3) -> Vec<Vec3> {
        let Some(smallest) = groups.iter().min_by_key(|g| g.len()) else {
            return Vec::new();
        };
        let origin = smallest[0];
        let mut vecs: Vec<Vec3> = smallest
            .iter()
            .map(|f| std::array::from_fn(|k| f[k] - origin[k]))
            .collect();
        let mut by_size: Vec<&[Vec3]> = groups.to_vec();
        by_size.sort_by_key(|g| g.len());
        let scale: Vec3 = tol2.map(|t| 1.0 / t);
        for g in by_size {
            for f in g {
                let shifted: Vec<Vec3> = g
                    .iter()
                    .map(|x| std::array::from_fn(|k| x[k] - f[k]))
                    .map(|s| scaled(&s, scale))
                    .collect();
                vecs.retain(|v| {
                    let vs = scaled(v, scale);
                    shifted.iter().any(|q| within_one(&vs, q, scale))
                });
            }
        }
        vecs
    }

    #[test]
    fn the_buckets_keep_what_the_scan_keeps() {
        let mut rng = crate::test_rng::XorShift::new(0x5eed_1234_abcd_0001);
        // Cases keeping a translation besides zero, and cases losing one near the tolerance.
        let (mut kept, mut lost) = (0, 0);
        for case in 0..400 {
            // A lattice of repeats (some exact, some jittered around the tolerance) of a
            // random motif, in two or three species, with coordinates near cell edges.
            let reps = [1usize, 2, 3, 4][case % 4];
            let tol2: Vec3 = std::array::from_fn(|_| 0.01 + 0.1 * rng.unit());
            let jitter = [0.0, 0.3, 0.9, 1.1][(case / 4) % 4];
            let species = 2 + case % 2;
            let mut groups: Vec<Vec<Vec3>> = vec![Vec::new(); species];
            for (s, g) in groups.iter_mut().enumerate() {
                for _ in 0..=s {
                    let base: Vec3 = std::array::from_fn(|_| {
                        if rng.unit() < 0.3 {
                            0.999_999_999_9
                        } else {
                            rng.unit()
                        }
                    });
                    for r in 0..reps {
                        g.push(std::array::from_fn(|k| {
                            let shift = if k == 0 { r as f64 / reps as f64 } else { 0.0 };
                            let noise = (2.0 * rng.unit() - 1.0) * jitter * tol2[k];
                            base[k] + shift + noise
                        }));
                    }
                }
            }
            let slices: Vec<&[Vec3]> = groups.iter().map(Vec::as_slice).collect();
            let want = by_scan(&slices, tol2);
            let got = candidate_translations(&slices, tol2);
            let bits =
                |v: &[Vec3]| -> Vec<[u64; 3]> { v.iter().map(|p| p.map(f64::to_bits)).collect() };
            assert_eq!(bits(&got), bits(&want), "case {case}");
            kept += usize::from(want.len() > 1);
            lost += usize::from(reps > 1 && want.len() < reps);
        }
        assert!(kept > 100 && lost > 50, "kept {kept}, lost {lost}");
    }
}
