//! Lattice mappings: every basis of one lattice whose lengths and angles are within
//! tolerance of another lattice's (pymatgen's `Lattice.find_all_mappings`).
//!
//! Candidate vectors are the lattice points inside a sphere around the origin, listed in the
//! order pymatgen's cell-list neighbour search produces them, so the mappings come out in the
//! same order as the reference's.

use crate::linalg::{
    angles, det_i64, inverse, lengths, matmul, norm, rad2deg, FusedMatrix, Mat3, Vec3,
};
use crate::numeric::dot;

/// The most lattice images the sphere search may visit before giving up.
const MAX_IMAGES: i64 = 4_000_000;

/// Why no mapping list could be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MappingError {
    /// The lattice is singular, not finite, or so skewed the search would not end.
    #[error("degenerate lattice: {0}")]
    Degenerate(String),
}

/// One way to express `other` as a basis of `this` lattice.
#[derive(Debug, Clone, PartialEq)]
pub struct LatticeMapping {
    /// The basis of `this` lattice (rows, Cartesian in `this` lattice's frame) that matches
    /// `other`'s lengths and angles.
    pub aligned: Mat3,
    /// Rotation `R` with `aligned · R = other` (pymatgen's `rotation_matrix`).
    pub rotation: Mat3,
    /// Integer matrix `S` with `aligned = S · this`.
    pub scale: [[i64; 3]; 3],
}

/// A lattice point near the origin: its integer coordinates and its distance.
#[derive(Debug, Clone, Copy)]
struct Point {
    frac: [i64; 3],
    dist: f64,
}

/// Lattice points of `m` within `r` of the origin, in pymatgen's `get_points_in_sphere`
/// order for a single point at the origin; only those `keep` accepts are returned (the
/// mapping search wants lengths near the target's). `keep` is given a point's squared
/// distance and returns its distance (the square root) when it keeps the point, so that it
/// can refuse most points before taking a root.
fn points_in_sphere(
    m: &Mat3,
    r: f64,
    keep: impl Fn(f64) -> Option<f64>,
) -> Result<Vec<Point>, MappingError> {
    const MIN_R: f64 = 1.0;
    const TOL: f64 = 1e-8;
    if r < MIN_R {
        return points_in_sphere_direct(m, MIN_R + TOL, |d2| keep(d2).filter(|&d| d <= r));
    }
    points_in_sphere_direct(m, r, keep)
}

/// Every distance: [`points_in_sphere`]'s `keep` for all points.
#[cfg(test)]
fn every(d2: f64) -> Option<f64> {
    Some(d2.sqrt())
}

fn points_in_sphere_direct(
    m: &Mat3,
    r: f64,
    keep: impl Fn(f64) -> Option<f64>,
) -> Result<Vec<Point>, MappingError> {
    const TOL: f64 = 1e-8;
    if !(r.is_finite() && r > 0.0) {
        return Err(MappingError::Degenerate(format!("search radius {r}")));
    }
    let valid_min = 0.0 - r - TOL;
    let valid_max = 0.0 + r + TOL;
    let ledge = if r < 0.1 { 0.1 } else { r };

    // Repetitions needed along each axis: reciprocal lengths of the lattice.
    let mut bounds = [(0i64, 1i64); 3];
    for (i, bound) in bounds.iter_mut().enumerate() {
        let x = crate::numeric::cross(m[(i + 1) % 3], m[(i + 2) % 3]);
        let prod = dot(m[i], x);
        let recip: Vec3 = x.map(|v| 2.0 * std::f64::consts::PI * v / prod);
        let recp_len = norm(recip);
        let max_r = ((r + 0.15) * recp_len / (2.0 * std::f64::consts::PI)).ceil();
        if !max_r.is_finite() || max_r > 1e6 {
            return Err(MappingError::Degenerate("lattice too skewed".into()));
        }
        *bound = (
            crate::numeric::floor(0.0 - max_r - 1e-8) as i64,
            (0.0 + max_r + 1e-8).ceil() as i64,
        );
    }
    let total: i64 = bounds.iter().map(|(lo, hi)| hi - lo).product();
    if total > MAX_IMAGES {
        return Err(MappingError::Degenerate("lattice too skewed".into()));
    }

    // pymatgen sorts the images inside the box `valid_min..valid_max` into a cell list of
    // cubes with edge `ledge`, then reads the 27 cubes around the origin's in index order,
    // each newest image first, keeping those within `r`. For `r ≥ 1` (`points_in_sphere`
    // never asks for less) the list is 3 × 3 × 3 cubes, all of them around the origin's,
    // so that order is: by cube, then by box-loop order reversed. Sorting the kept images
    // by that key gives it without building the list.
    if r < 1.0 {
        return Err(MappingError::Degenerate(format!(
            "search radius {r} below 1"
        )));
    }
    let ncube = ((valid_max - valid_min) / ledge).ceil() as i64;
    if ncube != 3 {
        return Err(MappingError::Degenerate("bad cell-list size".into()));
    }
    let cube_of = |x: f64| crate::numeric::floor((x - valid_min + 1e-8) / ledge) as i64;
    let r2 = r * r;
    // Only the `k` near the line's passage through the sphere can be kept: the roots of
    // |p + k·m₂|² = r² + TOL (p = i·m₀ + j·m₁), widened by one on each side far beyond
    // their rounding; the tests below decide as before, on the same values.
    let q = m[2];
    let qq = dot(q, q);
    let per_qq = 1.0 / qq;
    let k_range = |i: i64, j: i64| -> (i64, i64) {
        let p: Vec3 = std::array::from_fn(|d| i as f64 * m[0][d] + j as f64 * m[1][d]);
        let (b, c) = (dot(p, q), dot(p, p) - (r2 + TOL));
        let disc = b * b - qq * c;
        // A line that passes the sphere at a distance (its squared distance from the origin
        // exceeds r² + TOL by disc / qq) far beyond the rounding of these products and of
        // each point's squared distance: no point on it is within the sphere.
        if -disc > 1e-9 * (b * b + qq * (c.abs() + r2 + TOL)) {
            return (0, 0);
        }
        let half = disc.max(0.0).sqrt() * per_qq;
        roots_widened(-b * per_qq, half, bounds[2])
    };
    // Likewise the lines (i, j) that can meet the sphere: those whose distance from the
    // origin, |i·a + j·b| with a and b the components of m₀ and m₁ across m₂, is within
    // √(r² + TOL), widened by one on each side.
    let across = |v: Vec3| -> Vec3 {
        let t = dot(v, q) * per_qq;
        std::array::from_fn(|d| v[d] - t * q[d])
    };
    let (a, b) = (across(m[0]), across(m[1]));
    let (aa, ab, bb) = (dot(a, a), dot(a, b), dot(b, b));
    let j_range = |i: i64| -> (i64, i64) {
        let i = i as f64;
        let disc = (i * ab) * (i * ab) - bb * (i * i * aa - (r2 + TOL));
        roots_widened(-i * ab / bb, disc.max(0.0).sqrt() / bb, bounds[1])
    };
    // A Niggli cell's sphere holds a few dozen points.
    let mut kept: Vec<(usize, Point)> = Vec::with_capacity(64);
    for i in bounds[0].0..bounds[0].1 {
        let (j_lo, j_hi) = j_range(i);
        for j in j_lo..j_hi {
            let (k_lo, k_hi) = k_range(i, j);
            for k in k_lo..k_hi {
                let c: Vec3 = std::array::from_fn(|d| {
                    i as f64 * m[0][d] + j as f64 * m[1][d] + k as f64 * m[2][d] + 0.0
                });
                if !c.iter().all(|&x| x > valid_min && x < valid_max) {
                    continue;
                }
                let d2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
                if d2 >= r2 + TOL {
                    continue;
                }
                let Some(dist) = keep(d2) else {
                    continue;
                };
                let cube = c.map(cube_of);
                if !cube.iter().all(|&x| (0..ncube).contains(&x)) {
                    continue;
                }
                let point = Point {
                    frac: [i, j, k],
                    dist,
                };
                kept.push(((cube[0] * 9 + cube[1] * 3 + cube[2]) as usize, point));
            }
        }
    }
    // By cube, newest first within a cube: the box loop visits (i, j, k) in lexicographic
    // order, so a counting sort placing the points in reverse gives it.
    let mut first = [0usize; 28];
    for (cube, _) in &kept {
        first[cube + 1] += 1;
    }
    for c in 0..27 {
        first[c + 1] += first[c];
    }
    let mut out = vec![
        Point {
            frac: [0; 3],
            dist: 0.0
        };
        kept.len()
    ];
    for (cube, point) in kept.into_iter().rev() {
        out[first[cube]] = point;
        first[cube] += 1;
    }
    Ok(out)
}

/// The integers from one below the lower root `center − half` to two above the upper one,
/// as a range within `bound` (all of `bound` when a root is not finite): every integer the
/// roots enclose, with a margin far beyond their rounding.
fn roots_widened(center: f64, half: f64, bound: (i64, i64)) -> (i64, i64) {
    let (lo, hi) = (
        crate::numeric::floor(center - half) - 1.0,
        crate::numeric::floor(center + half) + 3.0,
    );
    if !(lo.is_finite() && hi.is_finite()) {
        return bound;
    }
    ((lo as i64).max(bound.0), (hi as i64).min(bound.1))
}

/// Whether the angle (degrees) between each candidate vector of `c1` and each of `c2` is
/// within `atol` of `target`, as pymatgen decides it (`arccos` of the normalised dot product);
/// row-major, `c2.len()` per row.
///
/// Most pairs are far from the target, or well inside its tolerance (a cubic cell's right
/// angles): their cosine is compared with the cosines of the target ± (atol ± 0.001°), and
/// only pairs within 0.001° of either edge get the `acos` (it was a fifth of the mapping
/// search's time). The margin dwarfs the rounding of either side, so a pair is decided by
/// its cosine only where the `acos` would decide it the same way.
fn angles_within(
    c1: &[Candidate],
    c2: &[Candidate],
    (target, atol): (f64, f64),
    out: &mut Vec<bool>,
) {
    const MARGIN: f64 = 1e-3;
    const SURE: f64 = 1e-12;
    let cos_deg = |d: f64| libm::cos(d * (std::f64::consts::PI / 180.0));
    // The cosines of angle `d`, or of the range's end beyond 0° or 180° (every angle lies
    // within them).
    let cos_or = |d: f64, beyond: f64| {
        if d > 0.0 && d < 180.0 {
            cos_deg(d)
        } else {
            beyond
        }
    };
    // Beyond `below`..`above` the angle is outside target ± (atol + MARGIN); between
    // `inner_below`..`inner_above` it is inside target ± (atol − MARGIN) (an empty band when
    // atol is not above the margin).
    let (lo, hi) = (target - atol - MARGIN, target + atol + MARGIN);
    let below = if hi < 180.0 {
        cos_deg(hi)
    } else {
        f64::NEG_INFINITY
    };
    let above = if lo > 0.0 { cos_deg(lo) } else { f64::INFINITY };
    let (inner_lo, inner_hi) = (target - atol + MARGIN, target + atol - MARGIN);
    let (inner_below, inner_above) = if inner_lo < inner_hi && inner_lo < 180.0 && inner_hi > 0.0 {
        (
            cos_or(inner_hi, f64::NEG_INFINITY),
            cos_or(inner_lo, f64::INFINITY),
        )
    } else {
        (f64::INFINITY, f64::NEG_INFINITY)
    };
    out.reserve(c1.len() * c2.len());
    for a in c1 {
        out.extend(c2.iter().map(|b| {
            // The cosine by products with the reciprocal lengths first. It is within a few
            // ulps of the quotient, so clear of each bound by `SURE` it lies on the same side
            // as the quotient: it decides nearly every pair without two divisions.
            let d = dot(a.vec, b.vec);
            let x = d * a.inv_len * b.inv_len;
            if x < below - SURE || x > above + SURE {
                return false;
            }
            if x > inner_below + SURE && x < inner_above - SURE {
                return true;
            }
            // Near a bound: the quotient decides, as pymatgen computes it.
            let x = (d / a.len / b.len).clamp(-1.0, 1.0);
            if x < below || x > above {
                return false;
            }
            if x > inner_below && x < inner_above {
                return true;
            }
            (rad2deg(libm::acos(x)) - target).abs() <= atol
        }));
    }
}

/// A lattice point near one of the target lengths: its index among the points in the
/// sphere, its Cartesian vector and that vector's length.
struct Candidate {
    point: usize,
    vec: Vec3,
    len: f64,
    /// `1 / len`.
    inv_len: f64,
}

/// All bases of `this` lattice whose lengths are within the fractional tolerance `ltol` and
/// whose angles are within `atol` degrees of `other`'s, in pymatgen's enumeration order.
///
/// Bases with a zero determinant are skipped; supercell bases (|det S| > 1) are included, as
/// in pymatgen. The matcher asks [`find_mappings_of_size`] for the one size it needs; this
/// whole list is what the tests hold that to.
#[cfg(test)]
fn find_all_mappings(
    this: &Mat3,
    other: &Mat3,
    ltol: f64,
    atol: f64,
) -> Result<Vec<LatticeMapping>, MappingError> {
    // Up to 48 for a cubic lattice.
    let mut out = Vec::with_capacity(48);
    visit_mappings(this, other, (ltol, atol), None, |m| {
        out.push(m);
        true
    })?;
    Ok(out)
}

/// Every basis of `this` lattice whose lengths are within the fractional tolerance `ltol` and
/// whose angles are within `atol` degrees of `other`'s and whose scale matrix has
/// `|det S| = size`, in pymatgen's enumeration order (its `find_all_mappings`, of which the
/// matcher's `_get_lattices` keeps only that size). The others are dropped before
/// their rotation is computed: mapping a small cell onto a large supercell, most bases of
/// the right lengths and angles have another volume.
pub fn find_mappings_of_size(
    this: &Mat3,
    other: &Mat3,
    (ltol, atol): (f64, f64),
    size: u64,
) -> Result<Vec<LatticeMapping>, MappingError> {
    let mut out = Vec::with_capacity(48);
    visit_mappings(this, other, (ltol, atol), Some(size), |m| {
        out.push(m);
        true
    })?;
    Ok(out)
}

/// The bases of pymatgen's `find_all_mappings` (with `size` given, only those whose scale
/// matrix has `|det S| = size`), handed to `visit` in order until it returns false.
fn visit_mappings(
    this: &Mat3,
    other: &Mat3,
    (ltol, atol): (f64, f64),
    size: Option<u64>,
    mut visit: impl FnMut(LatticeMapping) -> bool,
) -> Result<(), MappingError> {
    let target_len = lengths(other);
    let [alpha, beta, gamma] = angles(other);
    let max_len = target_len.iter().copied().fold(f64::NAN, f64::max);
    // Whether a length is within the tolerance of a target length, as pymatgen decides it
    // (by the quotient); lengths clearly outside, by a margin far above rounding, are ruled
    // out by products first (most lattice points are).
    let (hi, lo) = (
        (1.0 + ltol) * (1.0 + 1e-9),
        1.0 / (1.0 + ltol) * (1.0 - 1e-9),
    );
    let near = |dist: f64, ln: f64| {
        if dist > ln * hi || dist < ln * lo {
            return false;
        }
        let q = dist / ln;
        q < 1.0 + ltol && q > 1.0 / (1.0 + ltol)
    };
    // Only points near one of the target lengths can be picked below. A squared distance
    // outside every band of squares around those ranges (widened far beyond the rounding of
    // the square and the root) is refused without its root: most points are.
    let bands = target_len.map(|ln| {
        let (a, b) = (ln * lo, ln * hi);
        (a * a * (1.0 - 1e-12), b * b * (1.0 + 1e-12))
    });
    let pts = points_in_sphere(this, max_len * (1.0 + ltol), |d2| {
        if !bands.iter().any(|&(a, b)| d2 >= a && d2 <= b) {
            return None;
        }
        let d = d2.sqrt();
        target_len.iter().any(|&ln| near(d, ln)).then_some(d)
    })?;

    // Per target length, the lattice points near it: each with its Cartesian vector
    // recomputed from the integer coordinates, as pymatgen does (`get_cartesian_coords`,
    // numpy's fused products: these vectors become the mapped lattices, whose last bits the
    // reference's ties follow), and that vector's length.
    let cartesian = FusedMatrix::new(*this);
    let pick = |ln: f64| {
        let (pts, near, cartesian) = (&pts, &near, &cartesian);
        (0..pts.len())
            .filter(move |&i| near(pts[i].dist, ln))
            .map(move |i| {
                let vec = cartesian.apply(pts[i].frac.map(|x| x as f64));
                let len = norm(vec);
                Candidate {
                    point: i,
                    vec,
                    len,
                    inv_len: 1.0 / len,
                }
            })
    };
    // The three lists one after another in one buffer, and likewise the three angle tests.
    let mut candidates: Vec<Candidate> = Vec::with_capacity(3 * pts.len());
    let mut ends = [0usize; 3];
    for (end, &ln) in ends.iter_mut().zip(&target_len) {
        candidates.extend(pick(ln));
        *end = candidates.len();
    }
    let sel: [&[Candidate]; 3] = [
        &candidates[..ends[0]],
        &candidates[ends[0]..ends[1]],
        &candidates[ends[1]..ends[2]],
    ];
    let (na, nb, nc) = (sel[0].len(), sel[1].len(), sel[2].len());
    let mut ok: Vec<bool> = Vec::with_capacity(nb * nc + na * nc + na * nb);
    angles_within(sel[1], sel[2], (alpha, atol), &mut ok);
    let alpha_end = ok.len();
    angles_within(sel[0], sel[2], (beta, atol), &mut ok);
    let beta_end = ok.len();
    angles_within(sel[0], sel[1], (gamma, atol), &mut ok);
    let (alpha_ok, rest) = ok.split_at(alpha_end);
    let (beta_ok, gamma_ok) = rest.split_at(beta_end - alpha_end);

    // The third vectors at the right angle to the first and to the second, in order: from
    // a list per first vector, or where there are many (onto a large supercell, thousands)
    // from bit sets per first and per second vector, intersected a word at a time.
    let wide = nc >= WIDE;
    let bits = |flags: &[bool]| {
        if wide {
            Bits::rows(flags, nc)
        } else {
            Bits::default()
        }
    };
    let (alpha_bits, beta_bits) = (bits(alpha_ok), bits(beta_ok));
    let mut third: Vec<usize> = Vec::with_capacity(if wide { 0 } else { nc });
    for (ia, ca) in sel[0].iter().enumerate() {
        let a = pts[ca.point].frac;
        if !wide {
            third.clear();
            third.extend((0..nc).filter(|&kc| beta_ok[ia * nc + kc]));
        }
        for (jb, cb) in sel[1].iter().enumerate() {
            if !gamma_ok[ia * nb + jb] {
                continue;
            }
            let b = pts[cb.point].frac;
            // det [a; b; c] = (a × b) · c, one product per third vector. The coordinates are
            // below 2.5e5 in magnitude (the sphere search visits at most `MAX_IMAGES`), so
            // these products stay far inside i64.
            let normal = cross_i64(a, b);
            // The mapping of third vector `kc`, if its volume is right; false once `visit`
            // asks to stop.
            let mut each = |kc: usize| -> bool {
                let cc = &sel[2][kc];
                let c = pts[cc.point].frac;
                let det = normal[0] * c[0] + normal[1] * c[1] + normal[2] * c[2];
                if det == 0 || size.is_some_and(|s| det.unsigned_abs() != s) {
                    return true;
                }
                let aligned = [ca.vec, cb.vec, cc.vec];
                let Some(inv) = inverse(&aligned) else {
                    return true;
                };
                visit(LatticeMapping {
                    aligned,
                    rotation: matmul(&inv, other),
                    scale: [a, b, c],
                })
            };
            let go_on = if wide {
                beta_bits.row(ia).both(alpha_bits.row(jb)).all(&mut each)
            } else {
                third
                    .iter()
                    .filter(|&&kc| alpha_ok[jb * nc + kc])
                    .all(|&kc| each(kc))
            };
            if !go_on {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// `a × b` of integer vectors.
fn cross_i64(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Third vectors from which [`visit_mappings`] intersects bit sets instead of filtering a
/// list (below, the list is cheaper).
const WIDE: usize = 64;

/// Rows of flags as bit sets, `words` 64-bit words per row.
#[derive(Default)]
struct Bits {
    words: usize,
    bits: Vec<u64>,
}

impl Bits {
    /// The rows of `flags`, `len` flags each.
    fn rows(flags: &[bool], len: usize) -> Self {
        let words = len.div_ceil(64);
        let rows = flags.len().checked_div(len).unwrap_or(0);
        let mut bits = vec![0u64; rows * words];
        for (r, row) in flags.chunks_exact(len.max(1)).enumerate() {
            for (k, &f) in row.iter().enumerate() {
                bits[r * words + k / 64] |= u64::from(f) << (k % 64);
            }
        }
        Self { words, bits }
    }

    fn row(&self, r: usize) -> &[u64] {
        &self.bits[r * self.words..(r + 1) * self.words]
    }
}

/// A row of [`Bits`].
trait BitRow {
    /// The positions set in both rows, in increasing order.
    fn both<'a>(&'a self, other: &'a [u64]) -> impl Iterator<Item = usize> + 'a;
}

impl BitRow for [u64] {
    fn both<'a>(&'a self, other: &'a [u64]) -> impl Iterator<Item = usize> + 'a {
        self.iter().zip(other).enumerate().flat_map(|(w, (x, y))| {
            let mut m = x & y;
            std::iter::from_fn(move || {
                (m != 0).then(|| {
                    let k = m.trailing_zeros() as usize;
                    m &= m - 1;
                    w * 64 + k
                })
            })
        })
    }
}

/// The first mapping with a proper (positive-determinant) scale matrix, else the first
/// mapping at all (pymatgen's `find_mapping` with `skip_rotation_matrix=True`). The search
/// stops at the first proper one (the Niggli reduction asks for one mapping per structure).
pub fn find_mapping(
    this: &Mat3,
    other: &Mat3,
    ltol: f64,
    atol: f64,
) -> Result<Option<LatticeMapping>, MappingError> {
    let mut first = None;
    let mut proper = None;
    visit_mappings(this, other, (ltol, atol), None, |m| {
        if det_i64(&m.scale) > 0 {
            proper = Some(m);
            return false;
        }
        first.get_or_insert(m);
        true
    })?;
    Ok(proper.or(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::vec_mat;

    #[test]
    fn ruling_out_by_cosine_agrees_with_the_arccos() {
        let mut seed: u64 = 17;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut vecs: Vec<Vec3> = (0..120).map(|_| [rnd(), rnd(), rnd()]).collect();
        let mut inside = 0;
        // Targets near and at the ends of the range, a tolerance below the margin (no band
        // decided inside), and the angles between these vectors and their rotations by the
        // target and target ± atol ± tiny steps (at the edges, and in the inner band).
        for step in [0.0, 1e-12, -1e-12, 1e-4, -1e-4, 2e-3, -2e-3] {
            for d in [
                90.0 + step,
                95.0 + step,
                85.0 + step,
                60.0 + step,
                65.0 + step,
            ] {
                let t = d * std::f64::consts::PI / 180.0;
                vecs.push([libm::cos(t), libm::sin(t), 0.0]);
            }
        }
        vecs.push([1.0, 0.0, 0.0]);
        let lens: Vec<f64> = vecs.iter().map(|v| norm(*v)).collect();
        for (target, atol) in [
            (90.0, 5.0),
            (60.0, 5.0),
            (2.0, 5.0),
            (178.0, 5.0),
            (120.0, 0.5),
            (90.0, 5e-4),
            (0.0, 5.0),
            (180.0, 5.0),
        ] {
            let candidates: Vec<Candidate> = vecs
                .iter()
                .zip(&lens)
                .enumerate()
                .map(|(point, (&vec, &len))| Candidate {
                    point,
                    vec,
                    len,
                    inv_len: 1.0 / len,
                })
                .collect();
            let mut got = Vec::new();
            angles_within(&candidates, &candidates, (target, atol), &mut got);
            let n = vecs.len();
            for (i, a) in vecs.iter().enumerate() {
                for (j, b) in vecs.iter().enumerate() {
                    let x = (dot(*a, *b) / lens[i] / lens[j]).clamp(-1.0, 1.0);
                    let want = (rad2deg(libm::acos(x)) - target).abs() <= atol;
                    assert_eq!(got[i * n + j], want, "target {target}, pair {i} {j}");
                    inside += usize::from(want);
                }
            }
        }
        assert!(inside > 500, "{inside}");
    }

    /// The mappings of one size are [`find_all_mappings`]' of that size, in its order: onto
    /// lattices of the same volume, onto supercells (a fcc primitive cell onto its 4×4×4
    /// conventional cube, 256 primitive cells) and onto skewed cells.
    #[test]
    fn mappings_of_one_size_are_all_mappings_of_that_size_in_order() {
        let fcc = [[0.0, 2.82, 2.82], [2.82, 0.0, 2.82], [2.82, 2.82, 0.0]];
        let cube = |a: f64| [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
        let skewed = [[4.1, 0.0, 0.0], [1.3, 3.9, 0.0], [0.7, 0.9, 5.2]];
        let cases = [
            (cube(4.0), cube(4.0), [1, 2]),
            (fcc, cube(5.64), [1, 4]),
            (fcc, cube(22.56), [256, 255]),
            (skewed, skewed, [1, 2]),
            (
                cube(3.0),
                [[6.0, 0.0, 0.0], [0.0, 6.1, 0.0], [0.2, 0.0, 5.9]],
                [8, 1],
            ),
        ];
        let mut found = 0;
        for (this, other, sizes) in cases {
            let all = find_all_mappings(&this, &other, 0.2, 5.0).unwrap();
            for size in sizes {
                let want: Vec<_> = all
                    .iter()
                    .filter(|m| det_i64(&m.scale).unsigned_abs() == size)
                    .cloned()
                    .collect();
                let got = find_mappings_of_size(&this, &other, (0.2, 5.0), size).unwrap();
                assert_eq!(got, want, "size {size}");
                found += got.len();
            }
        }
        assert!(found > 100, "{found}");
    }

    #[test]
    fn cubic_lattice_has_48_unimodular_self_mappings() {
        let m = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]];
        let maps = find_all_mappings(&m, &m, 0.2, 5.0).unwrap();
        let unimodular = maps.iter().filter(|x| det_i64(&x.scale).abs() == 1).count();
        assert_eq!(unimodular, 48);
        // Every aligned basis reproduces the target's metric.
        for x in &maps {
            let l = lengths(&x.aligned);
            assert!(l.iter().all(|v| (v - 4.0).abs() < 1e-12));
        }
    }

    #[test]
    fn sphere_search_finds_all_short_vectors() {
        let m = [[3.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, 0.5, 5.0]];
        let pts = points_in_sphere(&m, 6.0, every).unwrap();
        let mut brute = 0;
        for i in -5..=5 {
            for j in -5..=5 {
                for k in -5..=5 {
                    let v = vec_mat([i as f64, j as f64, k as f64], &m);
                    if dot(v, v) < 36.0 + 1e-8 {
                        brute += 1;
                    }
                }
            }
        }
        assert_eq!(pts.len(), brute);
    }

    /// pymatgen's cell list as it builds it: the images in the bounding box, in loop order,
    /// filed into cubes of edge `r`, read from the 27 cubes around the origin's, each newest
    /// first, keeping those within `r` (for `r ≥ 1`).
    fn cell_list_order(m: &Mat3, r: f64) -> Vec<[i64; 3]> {
        const TOL: f64 = 1e-8;
        let (valid_min, valid_max) = (-r - TOL, r + TOL);
        let mut bounds = [(0i64, 0i64); 3];
        for (i, bound) in bounds.iter_mut().enumerate() {
            let x = crate::numeric::cross(m[(i + 1) % 3], m[(i + 2) % 3]);
            let recip = norm(x.map(|v| 2.0 * std::f64::consts::PI * v / dot(m[i], x)));
            let max_r = ((r + 0.15) * recip / (2.0 * std::f64::consts::PI)).ceil();
            *bound = ((-max_r - 1e-8).floor() as i64, (max_r + 1e-8).ceil() as i64);
        }
        let cube_of = |x: f64| ((x - valid_min + 1e-8) / r).floor() as i64;
        let mut cubes: Vec<Vec<([i64; 3], f64)>> = vec![Vec::new(); 27];
        for i in bounds[0].0..bounds[0].1 {
            for j in bounds[1].0..bounds[1].1 {
                for k in bounds[2].0..bounds[2].1 {
                    let c: Vec3 = std::array::from_fn(|d| {
                        i as f64 * m[0][d] + j as f64 * m[1][d] + k as f64 * m[2][d] + 0.0
                    });
                    if c.iter().all(|&x| x > valid_min && x < valid_max) {
                        let q = c.map(cube_of);
                        if q.iter().all(|x| (0..3).contains(x)) {
                            cubes[(q[0] * 9 + q[1] * 3 + q[2]) as usize]
                                .push(([i, j, k], dot(c, c)));
                        }
                    }
                }
            }
        }
        cubes
            .iter()
            .flat_map(|cube| cube.iter().rev())
            .filter(|(_, d2)| *d2 < r * r + TOL)
            .map(|(f, _)| *f)
            .collect()
    }

    #[test]
    fn sphere_points_follow_the_cell_list_on_skewed_lattices() {
        let mut seed: u64 = 5;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut total = 0;
        for _ in 0..300 {
            let m: Mat3 = [
                [2.0 + 6.0 * rnd(), 0.0, 0.0],
                [4.0 * rnd() - 2.0, 2.0 + 6.0 * rnd(), 0.0],
                [4.0 * rnd() - 2.0, 4.0 * rnd() - 2.0, 2.0 + 8.0 * rnd()],
            ];
            let r = 1.0 + 12.0 * rnd();
            let got: Vec<[i64; 3]> = points_in_sphere(&m, r, every)
                .unwrap()
                .iter()
                .map(|p| p.frac)
                .collect();
            assert_eq!(got, cell_list_order(&m, r), "lattice {m:?}, r {r}");
            total += got.len();
        }
        assert!(total > 5_000, "{total}");
    }

    #[test]
    fn sphere_points_come_in_pymatgen_order() {
        // Order recorded from pymatgen 2026.10.24 `Lattice.get_points_in_sphere`.
        let m = [[3.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, 0.5, 5.0]];
        let pts = points_in_sphere(&m, 4.2, every).unwrap();
        let order: Vec<[i64; 3]> = pts.iter().map(|p| p.frac).collect();
        let expected = [
            [0, -1, 0],
            [-1, 1, 0],
            [-1, 0, 0],
            [1, -1, 0],
            [1, 0, 0],
            [0, 1, 0],
            [0, 0, 0],
        ];
        assert_eq!(order, expected);
    }

    #[test]
    fn degenerate_lattice_is_an_error_not_a_panic() {
        let m = [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(find_all_mappings(&m, &m, 0.2, 5.0).is_err());
    }
}
