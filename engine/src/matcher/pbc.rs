//! Periodic geometry for the matcher: the fractional-tolerance subset test and the table of
//! shortest periodic vectors between two site lists (pymatgen's `is_coord_subset_pbc` and
//! `pbc_shortest_vectors`).

use crate::linalg::{py_mod1, vec_mat, FusedMatrix, Mat3, Vec3};
use crate::numeric::{distance_to_integer, round_ties_even};
use crate::reduction::LllReduction;

/// Cost written for pairs that may not be matched (masked, or beyond the fractional
/// tolerance), as in the reference.
pub const FORBIDDEN: f64 = 1e20;

/// The superset side of pymatgen's `is_coord_subset_pbc`, indexed once (per lattice mapping)
/// for the subset tests of many translation candidates: each test then looks at the points
/// within the tolerance along the first axis instead of at all of them.
pub struct SupersetIndex {
    window: ColumnWindow,
    atol: Vec3,
}

impl SupersetIndex {
    /// An index of `superset` for the per-axis fractional tolerance `atol`.
    pub fn new(superset: &[Vec3], atol: Vec3) -> Self {
        Self {
            window: ColumnWindow::new(superset, Some(atol[0])),
            atol,
        }
    }

    /// True when every point of `subset` lies within the tolerance (per fractional axis,
    /// periodic) of a point of `superset` (the list indexed) it may be matched to;
    /// `forbidden(i, j)` says whether subset point `i` may not be matched to superset point
    /// `j`. The same answer as pymatgen's plain all-pairs test (checked against it in the
    /// tests): the window never misses a point the exact test accepts.
    pub fn contains(
        &self,
        superset: &[Vec3],
        subset: &[Vec3],
        forbidden: impl Fn(usize, usize) -> bool,
    ) -> bool {
        let mut near = Vec::new();
        subset.iter().enumerate().all(|(i, p)| {
            self.window.near(p[0], &mut near);
            near.iter().any(|&j| {
                let q = &superset[j];
                !forbidden(i, j) && (0..3).all(|k| distance_to_integer(p[k] - q[k]) <= self.atol[k])
            })
        })
    }
}

/// The 27 image offsets `(-1..=1)³` with the last index fastest.
fn images() -> [Vec3; 27] {
    std::array::from_fn(|n| {
        [
            (n / 9) as f64 - 1.0,
            ((n / 3) % 3) as f64 - 1.0,
            (n % 3) as f64 - 1.0,
        ]
    })
}

/// A table of shortest periodic vectors from each point of a row list to each allowed point
/// of a column list (pymatgen's `pbc_shortest_vectors`), kept sparse: a row holds only the
/// columns it may pair with. Pairs that are masked, or whose LLL-fractional
/// separation exceeds the tolerance on some axis, are the reference's `1e20` entries
/// ([`FORBIDDEN`]) and are simply absent. Within a row the entries come in the order the
/// column window lists them; nothing downstream depends on that order (ties are detected
/// whatever the order, blocks are keyed by column).
///
/// Why sparse: with the matcher's tolerance a site has a handful of possible partners, so a
/// dense `n × n` table is almost all `1e20`; for a 512-site supercell writing it cost more
/// than everything else a candidate needs.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Rows and columns of the dense table this one stands for.
    pub rows: usize,
    /// See `rows`.
    pub cols: usize,
    /// `start[i]..start[i + 1]` indexes row `i`'s entries.
    pub start: Vec<usize>,
    /// Column of each entry.
    pub col: Vec<usize>,
    /// Squared length of each entry's vector (Å²).
    pub d2: Vec<f64>,
    /// Each entry's displacement vector (Å), from the row point to the column point.
    pub vectors: Vec<Vec3>,
    /// Per entry, whether another image was nearly as short (only from columns
    /// [`Columns::noting_image_ties`]; empty otherwise).
    pub tied: Vec<bool>,
}

impl Table {
    /// The entry range of row `i`.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i]..self.start[i + 1]
    }

    /// The vector of pair `(i, j)`, or `[FORBIDDEN; 3]` when the pair is not allowed (what
    /// the reference's dense table holds there).
    pub fn vector(&self, i: usize, j: usize) -> Vec3 {
        let r = self.range(i);
        match self.col[r.clone()].iter().position(|&c| c == j) {
            Some(k) => self.vectors[r.start + k],
            None => [FORBIDDEN; 3],
        }
    }

    /// A table with no rows yet, against `cols` columns.
    pub fn empty(cols: usize) -> Self {
        Self {
            cols,
            start: vec![0],
            ..Self::default()
        }
    }

    /// Empties the table (keeping its buffers) for rows against `cols` columns.
    pub fn clear(&mut self, cols: usize) {
        self.rows = 0;
        self.cols = cols;
        self.start.clear();
        self.start.push(0);
        self.col.clear();
        self.d2.clear();
        self.vectors.clear();
        self.tied.clear();
    }

    /// The table with row `order[r]` of the result taken from row `r` of this one (`order`
    /// a permutation of the rows): tables built in another row order put back in place.
    pub fn reordered(&self, order: &[usize]) -> Table {
        let mut t = Table::default();
        self.reordered_into(order, &mut t);
        t
    }

    /// [`Table::reordered`] into `t` (its buffers reused).
    pub fn reordered_into(&self, order: &[usize], t: &mut Table) {
        let mut at = vec![0; self.rows];
        for (r, &o) in order.iter().enumerate() {
            at[o] = r;
        }
        t.clear(self.cols);
        t.rows = self.rows;
        t.start.clear();
        for &r in &at {
            t.start.push(t.col.len());
            let range = self.range(r);
            t.col.extend_from_slice(&self.col[range.clone()]);
            t.d2.extend_from_slice(&self.d2[range.clone()]);
            t.vectors.extend_from_slice(&self.vectors[range.clone()]);
            if !self.tied.is_empty() {
                t.tied.extend_from_slice(&self.tied[range]);
            }
        }
        t.start.push(t.col.len());
    }

    /// The dense `rows × cols` squared lengths, [`FORBIDDEN`] where no entry is.
    pub fn dense_d2(&self) -> Vec<f64> {
        let mut out = vec![FORBIDDEN; self.rows * self.cols];
        for i in 0..self.rows {
            for k in self.range(i) {
                out[i * self.cols + self.col[k]] = self.d2[k];
            }
        }
        out
    }
}

/// The column points of shortest-vector tables on one lattice, prepared once (their LLL
/// coordinates, the 27 image offsets, the window over the first coordinate) for tables
/// against many row lists (one per translation candidate).
pub struct Columns {
    inv: FusedMatrix,
    lat: Mat3,
    l2: Vec<Vec3>,
    /// Wrapped LLL-fractional and Cartesian coordinates of the columns, made when a first
    /// table row is built (a mapping whose candidates the bounds all dismiss needs neither).
    wrapped: std::cell::OnceCell<(Vec<Vec3>, Vec<Vec3>)>,
    images: [Vec3; 27],
    /// `1 / |b_k|²` for the dual basis vectors `b_k` (columns of the inverse lattice): a
    /// vector with fractional coordinate `x_k` is at least `|x_k| / |b_k|` long.
    axis_weight: Vec3,
    /// Absolute margin (Å²) for dismissing an image by that bound.
    margin: f64,
    /// `√3 / √axis_weight[k]`: how far along LLL axis k a cube of half-width 1 reaches.
    cube_reach: Vec3,
    window: ColumnWindow,
    tol: Option<Vec3>,
    /// See [`Columns::noting_image_ties`].
    tie_delta: Option<f64>,
}

impl Columns {
    /// Columns `fc2` (fractional coordinates of the lattice whose LLL reduction is `lll`);
    /// pairs whose LLL-fractional separation exceeds `lll_frac_tol` on some axis are left
    /// out of every table.
    pub fn new(lll: &LllReduction, fc2: &[Vec3], lll_frac_tol: Option<Vec3>) -> Self {
        let inv = FusedMatrix::new(lll.mapping_inverse());
        let lat = lll.matrix;
        let l2: Vec<Vec3> = inv.apply_all(fc2);
        let images = images().map(|im| vec_mat(im, &lat));
        let window = ColumnWindow::new(&l2, lll_frac_tol.map(|t| t[0]));
        let dual = crate::linalg::inverse(&lat);
        let axis_weight = std::array::from_fn(|k| {
            dual.map_or(0.0, |d| {
                1.0 / (d[0][k] * d[0][k] + d[1][k] * d[1][k] + d[2][k] * d[2][k])
            })
        })
        .map(|w: f64| if w.is_finite() { w } else { 0.0 });
        let longest = lat
            .iter()
            .map(|r| r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
            .fold(0.0f64, f64::max);
        Self {
            inv,
            lat,
            l2,
            wrapped: std::cell::OnceCell::new(),
            images,
            axis_weight,
            margin: 1e-9 * longest,
            cube_reach: axis_weight.map(|w: f64| 3f64.sqrt() / w.sqrt()),
            window,
            tol: lll_frac_tol,
            tie_delta: None,
        }
    }

    /// Tables from these columns also note, per entry, whether another periodic image of the
    /// pair is within `delta` (Å²) of the shortest ([`Table::tied`]): the vector then
    /// depends on the order images are scanned in, and a copy of the table under a symmetry
    /// of the structure may hold the other one.
    pub fn noting_image_ties(mut self, delta: f64) -> Self {
        self.tie_delta = Some(delta);
        self
    }

    /// The table from each point of `fc1` to the columns; `forbidden(i, j)` masks pairs.
    /// Each allowed pair gets the shortest of the 27 images of the LLL cell around the
    /// wrapped points (first one on ties), as the reference computes it.
    pub fn table(&self, fc1: &[Vec3], forbidden: impl Fn(usize, usize) -> bool) -> Table {
        let mut t = Table::empty(self.l2.len());
        self.table_into(fc1, forbidden, &mut t, &mut Vec::new());
        t
    }

    /// [`Columns::table`] into `t` (its buffers reused; `near` a buffer too).
    pub fn table_into(
        &self,
        fc1: &[Vec3],
        forbidden: impl Fn(usize, usize) -> bool,
        t: &mut Table,
        near: &mut Vec<usize>,
    ) {
        t.clear(self.l2.len());
        self.append_rows(fc1, 0..fc1.len(), forbidden, t, near);
    }

    /// Appends to `out` the rows of `points` listed in `rows` (in that order; `forbidden`
    /// is asked with the point's index), as [`Columns::table`] builds them. `near` is a
    /// buffer reused between calls.
    pub fn append_rows(
        &self,
        points: &[Vec3],
        rows: impl IntoIterator<Item = usize>,
        forbidden: impl Fn(usize, usize) -> bool,
        out: &mut Table,
        near: &mut Vec<usize>,
    ) {
        // Rows go two at a time through the fused products (side by side in wasm, where
        // they are emulated), then one by one into the table.
        let mut rows = rows.into_iter().filter(|&i| i < points.len());
        while let Some(a) = rows.next() {
            match rows.next() {
                Some(b) => {
                    let (la, lb) = self.inv.apply_pair(points[a], points[b]);
                    self.append_row(a, la, &forbidden, out, near);
                    self.append_row(b, lb, &forbidden, out, near);
                }
                None => self.append_row(a, self.inv.apply(points[a]), &forbidden, out, near),
            }
        }
    }

    /// Appends row `i`, at LLL-fractional coordinates `l1`, to `out` (see
    /// [`Columns::append_rows`]).
    #[inline]
    fn append_row(
        &self,
        i: usize,
        l1: Vec3,
        forbidden: &impl Fn(usize, usize) -> bool,
        out: &mut Table,
        near: &mut Vec<usize>,
    ) {
        let (w2, c2) = self.wrapped();
        let c1 = cart_mod(&l1, &self.lat);
        let w1 = l1.map(py_mod1);
        self.window.near(l1[0], near);
        for &j in near.iter() {
            if forbidden(i, j) || !self.within_tolerance(&l1, j) {
                continue;
            }
            let pre: Vec3 = std::array::from_fn(|a| c2[j][a] - c1[a]);
            let pre_frac: Vec3 = std::array::from_fn(|a| w2[j][a] - w1[a]);
            let (best, best_k, tied) = self.nearest_image(&pre, &pre_frac);
            if self.tie_delta.is_some() {
                out.tied.push(tied);
            }
            out.col.push(j);
            out.d2.push(best);
            out.vectors
                .push(std::array::from_fn(|a| pre[a] + self.images[best_k][a]));
        }
        out.rows += 1;
        out.start.push(out.col.len());
    }
}

impl Columns {
    /// The columns' wrapped LLL-fractional and Cartesian coordinates (made on first use).
    fn wrapped(&self) -> (&[Vec3], &[Vec3]) {
        let (w2, c2) = self.wrapped.get_or_init(|| {
            (
                self.l2.iter().map(|l| l.map(py_mod1)).collect(),
                self.l2.iter().map(|l| cart_mod(l, &self.lat)).collect(),
            )
        });
        (w2, c2)
    }

    /// Whether column `j` is within the tolerance of a row at LLL coordinates `l1` on every
    /// axis (a pair the table holds, unless masked).
    fn within_tolerance(&self, l1: &Vec3, j: usize) -> bool {
        let Some(tol) = self.tol else {
            return true;
        };
        let l2 = &self.l2[j];
        !(0..3).any(|a| distance_to_integer(l2[a] - l1[a]) > tol[a])
    }

    /// The columns a table row at point `f` holds (those `allowed` accepts and within the
    /// tolerance), without measuring their vectors. `near` is a buffer.
    pub fn partners(
        &self,
        f: Vec3,
        allowed: impl Fn(usize) -> bool,
        near: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) {
        out.clear();
        let l1 = self.inv.apply(f);
        self.window.near(l1[0], near);
        out.extend(
            near.iter()
                .copied()
                .filter(|&j| allowed(j) && self.within_tolerance(&l1, j)),
        );
    }

    /// Appends to `out` the Cartesian vector (Å) from point `f` to every column `allowed`
    /// accepts that has a periodic image in the cube `[-half, half]³` around `f`, whatever
    /// the tolerance: a superset of the vectors any table row at `f` can hold there. Returns
    /// false, appending nothing, when the cube is too wide for that to be cheap and exact
    /// (it spans half a cell along some LLL axis, so a column could have two images in it).
    pub fn in_cube(
        &self,
        f: Vec3,
        half: f64,
        allowed: impl Fn(usize) -> bool,
        near: &mut Vec<usize>,
        out: &mut Vec<Vec3>,
    ) -> bool {
        // The cube lies in the ball of radius half·√3, whose extent along LLL axis k is its
        // radius over the spacing of the lattice planes, radius · |d_k| (d_k the dual basis
        // vector; `axis_weight` holds 1 / |d_k|²). A margin far above rounding keeps every
        // image in the cube among those looked at.
        let reach: Vec3 = std::array::from_fn(|k| half * self.cube_reach[k] * (1.0 + 1e-9) + 1e-9);
        if !reach.iter().all(|r| *r < 0.5) {
            return false;
        }
        let l1 = self.inv.apply(f);
        self.window.near_within(l1[0], reach[0], near);
        for &j in near.iter() {
            if !allowed(j) {
                continue;
            }
            // Within half a cell of the point on every axis: the only image that can be.
            let d: Vec3 = std::array::from_fn(|a| {
                let x = self.l2[j][a] - l1[a];
                x - round_ties_even(x)
            });
            if (0..3).any(|a| d[a].abs() > reach[a]) {
                continue;
            }
            let v = vec_mat(d, &self.lat);
            if v.iter().all(|x| x.abs() <= half) {
                out.push(v);
            }
        }
        true
    }

    /// The squared length of `pre + image` and the index of the image, for the first of the
    /// 27 images with the smallest value, exactly as scanning all 27 in order gives it.
    ///
    /// Why not scan all 27: an image whose fractional offset puts some axis far from the
    /// nearest lattice plane is provably longer than one already measured (a vector with
    /// fractional coordinate `x_k` is at least `|x_k| / |b_k|` long); the image nearest by
    /// rounding is measured first, then only the images no axis rules out (usually 1 to 4),
    /// in order. An image is ruled out only when its bound exceeds the best value by a margin
    /// far above the rounding of either side, so it could never have been the minimum.
    ///
    /// With [`Columns::noting_image_ties`], also whether another image is within that
    /// distance of the shortest (a tie the scan order decides); images are then measured
    /// up to the best value plus that distance.
    fn nearest_image(&self, pre: &Vec3, pre_frac: &Vec3) -> (f64, usize, bool) {
        let measure = |k: usize| {
            let im = &self.images[k];
            let da = pre[0] + im[0];
            let db = pre[1] + im[1];
            let dc = pre[2] + im[2];
            da * da + db * db + dc * dc
        };
        // Offsets -1, 0, 1 per axis; image k = 9 (i0 + 1) + 3 (i1 + 1) + (i2 + 1).
        let nearest: [usize; 3] =
            std::array::from_fn(|a| (1.0 - round_ties_even(pre_frac[a])).clamp(0.0, 2.0) as usize);
        let first = 9 * nearest[0] + 3 * nearest[1] + nearest[2];
        let mut best = measure(first);
        let mut best_k = first;
        if !best.is_finite() {
            let (d, k) = nearest_image_scan(&self.images, pre);
            return (d, k, self.tie_delta.is_some());
        }
        let limit = best + self.margin.max(self.tie_delta.unwrap_or(0.0));
        // The values measured (at most 27; usually a handful), for the tie count.
        let mut measured = [0.0f64; 27];
        let mut count = 0;
        if self.tie_delta.is_some() {
            measured[0] = best;
            count = 1;
        }
        // Per axis, the offsets whose bound does not rule the image out.
        let mut offsets = [[0usize; 3]; 3];
        let mut lens = [0usize; 3];
        for a in 0..3 {
            for o in 0..3 {
                let x = pre_frac[a] + o as f64 - 1.0;
                if x * x * self.axis_weight[a] <= limit {
                    offsets[a][lens[a]] = o;
                    lens[a] += 1;
                }
            }
        }
        for &o0 in &offsets[0][..lens[0]] {
            for &o1 in &offsets[1][..lens[1]] {
                for &o2 in &offsets[2][..lens[2]] {
                    let k = 9 * o0 + 3 * o1 + o2;
                    if k == first {
                        continue;
                    }
                    let d = measure(k);
                    if self.tie_delta.is_some() {
                        measured[count] = d;
                        count += 1;
                    }
                    if d < best || (d == best && k < best_k) {
                        best = d;
                        best_k = k;
                    }
                }
            }
        }
        let tied = self.tie_delta.is_some_and(|delta| {
            measured[..count]
                .iter()
                .filter(|&&d| d <= best + delta)
                .count()
                > 1
        });
        (best, best_k, tied)
    }
}

/// The first of the 27 images with the smallest squared length of `pre + image` (the
/// reference's scan).
fn nearest_image_scan(images: &[Vec3; 27], pre: &Vec3) -> (f64, usize) {
    let mut best = 1e100;
    let mut best_k = 0;
    for (k, im) in images.iter().enumerate() {
        let da = pre[0] + im[0];
        let db = pre[1] + im[1];
        let dc = pre[2] + im[2];
        let d = da * da + db * db + dc * dc;
        if d < best {
            best = d;
            best_k = k;
        }
    }
    (best, best_k)
}

/// LLL-fractional coordinates wrapped into [0, 1) and turned Cartesian (the reference wraps
/// with Python's `%`).
fn cart_mod(l: &Vec3, lat: &Mat3) -> Vec3 {
    let w = l.map(py_mod1);
    let mut o = [0.0; 3];
    for (k, wk) in w.iter().enumerate() {
        for (j, oj) in o.iter_mut().enumerate() {
            *oj += wk * lat[k][j];
        }
    }
    o
}

/// The columns whose first LLL-fractional coordinate can lie within a tolerance of a given
/// value (periodically), found by binary search in the columns sorted by that coordinate.
///
/// Why by hand: it only narrows the pairs the exact per-axis test then sees. The window is
/// widened by 1e-9 beyond the tolerance, far more than the rounding of wrapping a coordinate
/// into [0, 1), so every pair the exact test would accept is among the candidates and the
/// table is the same as checking all pairs; rows then cost O(window) instead of O(n).
struct ColumnWindow {
    /// Wrapped coordinates, sorted, and the column of each.
    keys: Vec<f64>,
    cols: Vec<usize>,
    /// Half-width of the window, or `None` for every column.
    half: Option<f64>,
}

impl ColumnWindow {
    fn new(l2: &[Vec3], tol: Option<f64>) -> Self {
        let half = tol.map(|t| t + 1e-9).filter(|h| *h < 0.5);
        let mut sorted: Vec<(f64, usize)> = l2
            .iter()
            .enumerate()
            .map(|(j, p)| (p[0] - crate::numeric::floor(p[0]), j))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Self {
            keys: sorted.iter().map(|p| p.0).collect(),
            cols: sorted.iter().map(|p| p.1).collect(),
            half,
        }
    }

    /// Fills `out` with the candidate columns for a row at coordinate `x` (each once, in no
    /// particular order: every pair is computed on its own).
    fn near(&self, x: f64, out: &mut Vec<usize>) {
        match self.half {
            Some(half) => self.near_within(x, half, out),
            None => {
                out.clear();
                out.extend(0..self.cols.len());
            }
        }
    }

    /// Fills `out` with the columns whose coordinate lies within `half` (below 0.5) of `x`,
    /// periodically.
    fn near_within(&self, x: f64, half: f64, out: &mut Vec<usize>) {
        out.clear();
        if !x.is_finite() || half.is_nan() || half >= 0.5 {
            out.extend(0..self.cols.len());
            return;
        }
        let c = x - crate::numeric::floor(x);
        let mut take = |lo: f64, hi: f64| {
            let start = self.keys.partition_point(|&k| k < lo);
            let end = start + self.keys[start..].partition_point(|&k| k <= hi);
            out.extend_from_slice(&self.cols[start..end]);
        };
        let (lo, hi) = (c - half, c + half);
        take(lo.max(0.0), hi.min(1.0));
        if lo < 0.0 {
            take(lo + 1.0, 1.0);
        }
        if hi > 1.0 {
            take(0.0, hi - 1.0);
        }
        // The ranges are disjoint (the window is narrower than the period): no duplicates.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pymatgen's `is_coord_subset_pbc` as written, the reference for [`SupersetIndex`]: true
    /// when every point of `subset` lies within `atol` (per fractional axis, periodic) of a
    /// point of `superset` it may be matched to. `forbidden(i, j)` says whether subset point `i`
    /// may not be matched to superset point `j`.
    fn is_coord_subset_pbc(
        subset: &[Vec3],
        superset: &[Vec3],
        atol: Vec3,
        forbidden: impl Fn(usize, usize) -> bool,
    ) -> bool {
        subset.iter().enumerate().all(|(i, p)| {
            superset.iter().enumerate().any(|(j, q)| {
                !forbidden(i, j) && (0..3).all(|k| distance_to_integer(p[k] - q[k]) <= atol[k])
            })
        })
    }

    #[test]
    fn the_column_window_never_misses_a_pair_the_exact_test_accepts() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
        };
        let cols: Vec<Vec3> = (0..300).map(|_| [rnd(), 0.0, 0.0]).collect();
        let mut out = Vec::new();
        for tol in [0.01, 0.1, 0.3, 0.49, 0.6] {
            let w = ColumnWindow::new(&cols, Some(tol));
            for _ in 0..300 {
                let r = rnd();
                w.near(r, &mut out);
                let mut once = out.clone();
                once.sort_unstable();
                once.dedup();
                assert_eq!(once.len(), out.len(), "a column listed twice");
                for (j, c) in cols.iter().enumerate() {
                    if distance_to_integer(c[0] - r) <= tol {
                        assert!(
                            out.contains(&j),
                            "tol {tol}: row {r} misses column {j} at {}",
                            c[0]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn distance_to_integer_is_exactly_the_rounding_formula() {
        let mut x: u64 = 0x1234_5678_9abc_def0;
        let mut cases = vec![
            0.5,
            -0.5,
            1.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            1e-300,
            -0.0,
            2251799813685247.5,
            4503599627370497.0,
            1e300,
            -7.25,
            3.0,
        ];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as f64 / u64::MAX as f64 - 0.5) * 40.0);
        }
        for c in cases {
            assert_eq!(
                distance_to_integer(c).to_bits(),
                (c - c.round()).abs().to_bits(),
                "{c}"
            );
        }
    }
    use crate::reduction::{lll_reduce_matrix, LLL_DELTA};

    #[test]
    fn shortest_vector_crosses_the_boundary() {
        let m = [[4.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 6.0]];
        let lll = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
        let columns = Columns::new(&lll, &[[0.95, 0.5, 0.0], [0.1, 0.0, 0.0]], None);
        let t = columns.table(&[[0.05, 0.0, 0.0]], |_, j| j == 1);
        let v = t.vector(0, 0);
        assert!(
            (v[0] + 0.4).abs() < 1e-12 && (v[1].abs() - 2.5).abs() < 1e-12,
            "{v:?}"
        );
        assert_eq!(t.vector(0, 1), [FORBIDDEN; 3]);
        assert_eq!(t.dense_d2()[1], FORBIDDEN);
        assert_eq!(t.col, vec![0]);
    }

    #[test]
    fn a_table_built_in_stages_and_reordered_is_the_table_built_at_once() {
        let lll = lll_reduce_matrix(
            &[[4.0, 0.0, 0.0], [0.5, 3.5, 0.0], [0.2, 0.3, 5.0]],
            LLL_DELTA,
        )
        .unwrap();
        let cols: Vec<Vec3> = (0..7)
            .map(|i| {
                [
                    0.13 * i as f64,
                    0.29 * i as f64 % 1.0,
                    0.41 * i as f64 % 1.0,
                ]
            })
            .collect();
        let rows: Vec<Vec3> = (0..5)
            .map(|i| {
                [
                    0.07 + 0.17 * i as f64,
                    0.31 * i as f64 % 1.0,
                    0.9 - 0.11 * i as f64,
                ]
            })
            .collect();
        let columns = Columns::new(&lll, &cols, Some([0.4, 0.4, 0.4]));
        let forbidden = |i: usize, j: usize| (i + j).is_multiple_of(3);
        let whole = columns.table(&rows, forbidden);
        let order = [3, 0, 4, 1, 2];
        let mut staged = Table::empty(cols.len());
        let mut near = Vec::new();
        for part in [&order[..2], &order[2..]] {
            let part = part.iter().copied();
            columns.append_rows(&rows, part, forbidden, &mut staged, &mut near);
        }
        let back = staged.reordered(&order);
        assert_eq!(back.rows, whole.rows);
        assert_eq!(back.start, whole.start);
        assert_eq!(back.col, whole.col);
        assert_eq!(back.d2, whole.d2);
        assert_eq!(back.vectors, whole.vectors);
        assert!(!whole.col.is_empty());
    }

    #[test]
    fn the_cube_holds_every_image_inside_it_and_partners_are_a_rows_columns() {
        let matrix = [[4.0, 0.0, 0.0], [1.7, 3.5, 0.0], [-0.9, 0.6, 5.0]];
        let lll = lll_reduce_matrix(&matrix, LLL_DELTA).unwrap();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let cols: Vec<Vec3> = (0..40).map(|_| [next(), next(), next()]).collect();
        let rows: Vec<Vec3> = (0..25)
            .map(|_| [2.0 * next() - 0.5, next(), next() + 1.0])
            .collect();
        let columns = Columns::new(&lll, &cols, Some([0.2, 0.3, 0.25]));
        let forbidden = |i: usize, j: usize| (i + j).is_multiple_of(4);
        // Every image, by brute force over the original basis.
        let brute = |f: &Vec3, i: usize, half: f64| {
            let mut out = Vec::new();
            for (j, c) in cols.iter().enumerate() {
                if forbidden(i, j) {
                    continue;
                }
                for n in 0..343 {
                    let m = [
                        (n / 49) as f64 - 3.0,
                        ((n / 7) % 7) as f64 - 3.0,
                        (n % 7) as f64 - 3.0,
                    ];
                    let d: Vec3 = std::array::from_fn(|a| c[a] - f[a] + m[a]);
                    let v = vec_mat(d, &matrix);
                    if v.iter().all(|x| x.abs() <= half) {
                        out.push(v);
                    }
                }
            }
            out
        };
        let table = columns.table(&rows, forbidden);
        let (mut near, mut found, mut partners) = (Vec::new(), Vec::new(), Vec::new());
        let mut seen = 0;
        for (i, f) in rows.iter().enumerate() {
            for half in [0.3, 0.9, 1.6] {
                found.clear();
                if !columns.in_cube(*f, half, |j| !forbidden(i, j), &mut near, &mut found) {
                    assert!(half > 0.5, "a small cube is always searched");
                    assert!(found.is_empty());
                    continue;
                }
                let want = brute(f, i, half);
                seen += want.len();
                assert_eq!(found.len(), want.len(), "row {i}, half {half}");
                for w in &want {
                    assert!(
                        found
                            .iter()
                            .any(|v| (0..3).all(|a| (v[a] - w[a]).abs() < 1e-9)),
                        "row {i}, half {half}: {w:?} missing from {found:?}"
                    );
                }
            }
            columns.partners(*f, |j| !forbidden(i, j), &mut near, &mut partners);
            let mut got = partners.clone();
            got.sort_unstable();
            let mut want = table.col[table.range(i)].to_vec();
            want.sort_unstable();
            assert_eq!(got, want, "row {i}");
        }
        assert!(seen > 20, "too few vectors in the cubes: {seen}");
    }

    #[test]
    fn the_indexed_subset_test_agrees_with_the_plain_one() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 3.0 - 1.0
        };
        let (mut yes, mut no) = (0, 0);
        for round in 0..400 {
            let sup: Vec<Vec3> = (0..12).map(|_| [rnd(), rnd(), rnd()]).collect();
            // Subsets near superset points (some beyond the tolerance), shifted by integers.
            let sub: Vec<Vec3> = (0..6)
                .map(|k| {
                    let q = sup[(k * 5 + round) % 12];
                    [
                        q[0] + 0.01 * rnd() + 1.0,
                        q[1] + 0.015 * rnd() - 2.0,
                        q[2] + 0.01 * rnd(),
                    ]
                })
                .collect();
            let atol = [0.05, 0.03, 0.04];
            let forbidden = |i: usize, j: usize| (3 * i + j + round).is_multiple_of(23);
            let plain = is_coord_subset_pbc(&sub, &sup, atol, forbidden);
            let index = SupersetIndex::new(&sup, atol);
            assert_eq!(index.contains(&sup, &sub, forbidden), plain);
            if plain {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 20 && no > 20, "{yes} / {no}");
    }

    #[test]
    fn pruned_image_search_equals_the_full_scan() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut pairs = 0;
        let mut ties = 0;
        for _ in 0..200 {
            // Skewed cells, some with exact ties (half-cell separations below).
            let m = [
                [3.0 + 4.0 * rnd(), 0.0, 0.0],
                [4.0 * rnd() - 2.0, 3.0 + 4.0 * rnd(), 0.0],
                [4.0 * rnd() - 2.0, 4.0 * rnd() - 2.0, 3.0 + 4.0 * rnd()],
            ];
            let lll = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
            let cols: Vec<Vec3> = (0..8)
                .map(|k| {
                    if k < 2 {
                        [0.5 * k as f64, 0.5, 0.0]
                    } else {
                        [3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0]
                    }
                })
                .collect();
            let columns = Columns::new(&lll, &cols, None);
            let noting = Columns::new(&lll, &cols, None).noting_image_ties(1e-5);
            let rows: Vec<Vec3> = (0..8)
                .map(|k| {
                    if k < 2 {
                        [0.0; 3]
                    } else {
                        [3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0]
                    }
                })
                .collect();
            for f in &rows {
                let l1 = columns.inv.apply(*f);
                let c1 = cart_mod(&l1, &columns.lat);
                let w1 = l1.map(py_mod1);
                let (w2, c2) = columns.wrapped();
                for j in 0..cols.len() {
                    let pre: Vec3 = std::array::from_fn(|a| c2[j][a] - c1[a]);
                    let pre_frac: Vec3 = std::array::from_fn(|a| w2[j][a] - w1[a]);
                    let (d, k, tied) = columns.nearest_image(&pre, &pre_frac);
                    let (d0, k0) = nearest_image_scan(&columns.images, &pre);
                    assert_eq!((d.to_bits(), k), (d0.to_bits(), k0), "{m:?} {f:?} {j}");
                    assert!(!tied);
                    // Noting ties: the same image, and a tie exactly when another of the
                    // 27 is within 1e-5 Å² of the shortest.
                    let (dn, kn, tied) = noting.nearest_image(&pre, &pre_frac);
                    assert_eq!((dn.to_bits(), kn), (d0.to_bits(), k0));
                    let close = columns
                        .images
                        .iter()
                        .map(|im| (0..3).map(|a| (pre[a] + im[a]).powi(2)).sum::<f64>())
                        .filter(|&x| x <= d0 + 1e-5)
                        .count();
                    assert_eq!(tied, close > 1, "{m:?} {f:?} {j}");
                    ties += usize::from(tied);
                    pairs += 1;
                }
            }
        }
        assert_eq!(pairs, 200 * 64);
        assert!(ties > 100, "{ties} ties");
    }

    #[test]
    fn subset_test_is_periodic() {
        let a = [[0.99, 0.5, 0.5]];
        let b = [[0.01, 0.5, 0.5]];
        assert!(is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| false));
        assert!(!is_coord_subset_pbc(&a, &b, [0.01; 3], |_, _| false));
        assert!(!is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| true));
    }
}
