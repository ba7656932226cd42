//! Shortest periodic vectors (pymatgen's `pbc_shortest_vectors`): one lattice's column
//! points prepared once, and the table rows of many row lists built against them, each pair
//! through the nearest of its periodic images, with the pruning that skips images a bound
//! proves too long.

mod nearest;

pub use nearest::{NearestEntry, NearestWork};

use super::rule::PairRule;
use super::table::Table;
use super::window::{ClassWindows, ColumnWindow, WindowPart};
use crate::linalg::{py_mod1, vec_mat, FusedMatrix, Mat3, Vec3};
use crate::numeric::round_ties_even;
use crate::reduction::LllReduction;

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

/// The column points of shortest-vector tables on one lattice, prepared once (their LLL
/// coordinates, the 27 image offsets, the windows over the tightest coordinate) for tables
/// against many row lists (one per translation candidate).
pub struct Columns {
    pub(super) inv: FusedMatrix,
    pub(super) lat: Mat3,
    l2: Vec<Vec3>,
    /// Wrapped LLL-fractional and Cartesian coordinates of the columns, made when a first
    /// table row is built (a mapping whose candidates the bounds all dismiss needs neither).
    wrapped: std::cell::OnceCell<(Vec<Vec3>, Vec<Vec3>)>,
    pub(super) images: [Vec3; 27],
    /// `1 / |b_k|²` for the dual basis vectors `b_k` (columns of the inverse lattice): a
    /// vector with fractional coordinate `x_k` is at least `|x_k| / |b_k|` long.
    axis_weight: Vec3,
    /// Absolute margin (Å²) for dismissing an image by that bound.
    margin: f64,
    /// How far (Å²) above the shortest value an image is still measured: `margin`, or the
    /// tie distance when that is wider (kept apart so that the scan takes no `max` per
    /// pair: in wasm, `f64::max` is a call).
    reach: f64,
    /// Squared length below which the image nearest by rounding is the shortest and every
    /// other image is longer by more than `reach` (see [`clear_below`]).
    clear: f64,
    /// `√3 / √axis_weight[k]`: how far along LLL axis k a cube of half-width 1 reaches.
    cube_reach: Vec3,
    window: ColumnWindow,
    /// The window over each class of columns alone (see [`Columns::with_classes`]).
    class_windows: ClassWindows,
    tol: Option<Vec3>,
    /// The axes in the order the per-axis tolerance test takes them: the window's last
    /// (it has already narrowed that one, so the others reject sooner).
    tol_order: [usize; 3],
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
        let window = ColumnWindow::new(&l2, lll_frac_tol);
        let a = window.axis();
        let tol_order = [(a + 1) % 3, (a + 2) % 3, a];
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
        let reach = (1e-9 * longest).max(0.0);
        Self {
            inv,
            lat,
            clear: clear_below(spacing(axis_weight), reach),
            l2,
            wrapped: std::cell::OnceCell::new(),
            images,
            axis_weight,
            margin: 1e-9 * longest,
            reach,
            cube_reach: axis_weight.map(|w: f64| 3f64.sqrt() / w.sqrt()),
            window,
            class_windows: ClassWindows::default(),
            tol: lll_frac_tol,
            tol_order,
            tie_delta: None,
        }
    }

    /// The columns with their classes (`classes[j]` for column `j`): a row whose
    /// [`PairRule::class_of_row`] names a class then looks at that class's columns alone.
    /// Ignored unless there is one class per column.
    pub fn with_classes(mut self, classes: &[u32]) -> Self {
        if classes.len() != self.l2.len() {
            return self;
        }
        let count = classes.iter().max().map_or(0, |&c| c as usize + 1);
        self.class_windows = self.window.split(classes, count);
        self
    }

    /// The candidate columns of row `i` into `near`, as `query` lists them from a window:
    /// true when every one of them is allowed (from the row's class window), false when
    /// `rule` must still be asked pair by pair (from the window over all columns).
    fn candidates(
        &self,
        (rule, i): (&impl PairRule, usize),
        query: impl Fn(&WindowPart<'_>, &mut Vec<usize>),
        near: &mut Vec<usize>,
    ) -> bool {
        let class = rule
            .class_of_row(i)
            .filter(|_| !self.class_windows.is_empty());
        match class {
            Some(c) => {
                match self.class_windows.get(c as usize) {
                    Some(w) => query(&w, near),
                    None => near.clear(),
                }
                true
            }
            None => {
                query(&self.window.part(), near);
                false
            }
        }
    }

    /// Tables from these columns also note, per entry, whether another periodic image of the
    /// pair is within `delta` (Å²) of the shortest ([`Table::tied`]): the vector then
    /// depends on the order images are scanned in, and a copy of the table under a symmetry
    /// of the structure may hold the other one.
    pub fn noting_image_ties(mut self, delta: f64) -> Self {
        self.tie_delta = Some(delta);
        self.reach = self.margin.max(delta);
        self.clear = clear_below(spacing(self.axis_weight), self.reach);
        self
    }

    /// The table from each point of `fc1` to the columns; `forbidden(i, j)` masks pairs.
    /// Each allowed pair gets the shortest of the 27 images of the LLL cell around the
    /// wrapped points (first one on ties), as the reference computes it.
    pub fn table(&self, fc1: &[Vec3], forbidden: &impl PairRule) -> Table {
        let mut t = Table::empty(self.l2.len());
        self.table_into(fc1, forbidden, &mut t, &mut Vec::new());
        t
    }

    /// [`Columns::table`] into `t` (its buffers reused; `near` a buffer too).
    pub fn table_into(
        &self,
        fc1: &[Vec3],
        forbidden: &impl PairRule,
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
        forbidden: &impl PairRule,
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
                    self.append_row(a, la, forbidden, out, near);
                    self.append_row(b, lb, forbidden, out, near);
                }
                None => self.append_row(a, self.inv.apply(points[a]), forbidden, out, near),
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
        forbidden: &impl PairRule,
        out: &mut Table,
        near: &mut Vec<usize>,
    ) {
        let (w2, c2) = self.wrapped();
        let w1 = wrap(&l1);
        let c1 = cart_of_wrapped(&w1, &self.lat);
        let all_allowed = self.candidates(
            (forbidden, i),
            |w, out| w.near_in_tolerance(&l1, self.tol, self.tol_order, out),
            near,
        );
        for &j in near.iter() {
            if !all_allowed && forbidden.forbidden(i, j) {
                continue;
            }
            let (d2, vector, tied) = self.entry((w2, c2), j, (&w1, &c1));
            if self.tie_delta.is_some() {
                out.tied.push(tied);
            }
            out.col.push(j);
            out.d2.push(d2);
            out.vectors.push(vector);
        }
        out.rows += 1;
        out.start.push(out.col.len());
    }
}

impl Columns {
    /// The entry of column `j` (of the wrapped columns `(w2, c2)`, see [`Columns::wrapped`])
    /// in the row at wrapped LLL-fractional coordinates `w1` (Cartesian `c1`): the squared
    /// length of its shortest image, that image's vector, and whether another image ties
    /// it ([`Columns::nearest_image`]).
    #[inline]
    pub(super) fn entry(
        &self,
        (w2, c2): (&[Vec3], &[Vec3]),
        j: usize,
        (w1, c1): (&Vec3, &Vec3),
    ) -> (f64, Vec3, bool) {
        let pre: Vec3 = std::array::from_fn(|a| c2[j][a] - c1[a]);
        let pre_frac: Vec3 = std::array::from_fn(|a| w2[j][a] - w1[a]);
        let (d2, k, tied) = self.nearest_image(&pre, &pre_frac);
        (
            d2,
            std::array::from_fn(|a| pre[a] + self.images[k][a]),
            tied,
        )
    }

    /// The columns' wrapped LLL-fractional and Cartesian coordinates (made on first use).
    pub(super) fn wrapped(&self) -> (&[Vec3], &[Vec3]) {
        let (w2, c2) = self.wrapped.get_or_init(|| {
            let w2: Vec<Vec3> = self.l2.iter().map(wrap).collect();
            let c2 = w2.iter().map(|w| cart_of_wrapped(w, &self.lat)).collect();
            (w2, c2)
        });
        (w2, c2)
    }

    /// The columns a table row `i` at point `f` holds (those `rule` allows and within the
    /// tolerance), without measuring their vectors. `near` is a buffer.
    pub fn partners(
        &self,
        f: Vec3,
        (rule, i): (&impl PairRule, usize),
        near: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) {
        out.clear();
        let l1 = self.inv.apply(f);
        let all_allowed = self.candidates(
            (rule, i),
            |w, out| w.near_in_tolerance(&l1, self.tol, self.tol_order, out),
            near,
        );
        out.extend(
            near.iter()
                .copied()
                .filter(|&j| all_allowed || !rule.forbidden(i, j)),
        );
    }

    /// Appends to `out` the Cartesian vector (Å) from point `f` (row `i`) to every column
    /// `rule` allows that has a periodic image in the cube `[-half, half]³` around `f`, whatever
    /// the tolerance: a superset of the vectors any table row at `f` can hold there. Returns
    /// false, appending nothing, when the cube is too wide for that to be cheap and exact
    /// (it spans half a cell along some LLL axis, so a column could have two images in it).
    pub fn in_cube(
        &self,
        f: Vec3,
        half: f64,
        (rule, i): (&impl PairRule, usize),
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
        let half_window = reach[self.window.axis()];
        // The window's columns within `reach` on every axis (within half a cell of the point:
        // the only image of each that can be in the cube).
        let all_allowed = self.candidates(
            (rule, i),
            |w, out| w.near_in_box(&l1, half_window, reach, self.tol_order, out),
            near,
        );
        for &j in near.iter() {
            if !all_allowed && rule.forbidden(i, j) {
                continue;
            }
            let d: Vec3 = std::array::from_fn(|a| {
                let x = self.l2[j][a] - l1[a];
                x - round_ties_even(x)
            });
            let v = vec_mat(d, &self.lat);
            if v.iter().all(|x| x.abs() <= half) {
                out.push(v);
            }
        }
        true
    }

    /// The vectors that another image of a pair whose shortest vector is `v` gives within the
    /// tie distance of [`Columns::noting_image_ties`] (none without it): `v` plus each
    /// lattice vector with LLL coordinates in `-2..=2` (every difference of two of the 27
    /// images) that keeps the squared length within that distance of `v`'s.
    pub fn tied_images(&self, v: Vec3) -> Vec<Vec3> {
        let Some(delta) = self.tie_delta else {
            return Vec::new();
        };
        let own = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        image_steps(&self.lat)
            .map(|l| -> Vec3 { std::array::from_fn(|a| v[a] + l[a]) })
            .filter(|w| w[0] * w[0] + w[1] * w[1] + w[2] * w[2] <= own + delta)
            .collect()
    }

    /// The squared length of `pre + image` and the index of the image, for the first of the
    /// 27 images with the smallest value, exactly as scanning all 27 in order gives it.
    ///
    /// Why not scan all 27: an image whose fractional offset puts some axis far from the
    /// nearest lattice plane is provably longer than one already measured (a vector with
    /// fractional coordinate `x_k` is at least `|x_k| / |b_k|` long); the image nearest by
    /// rounding is measured first, then only the images no axis rules out (usually 1 to 4),
    /// in order. An image is ruled out only when its bound exceeds the best value by a margin
    /// far above the rounding of either side, so it could never have been the minimum. A
    /// vector shorter than about half the spacing of the lattice planes rules out every
    /// other image at once ([`clear_below`]), and so does a first image whose coordinates
    /// all keep the neighbouring images beyond the bound.
    ///
    /// With [`Columns::noting_image_ties`], also whether another image is within that
    /// distance of the shortest (a tie the scan order decides); images are then measured
    /// up to the best value plus that distance.
    pub(super) fn nearest_image(&self, pre: &Vec3, pre_frac: &Vec3) -> (f64, usize, bool) {
        let measure = |k: usize| {
            let im = &self.images[k];
            let da = pre[0] + im[0];
            let db = pre[1] + im[1];
            let dc = pre[2] + im[2];
            da * da + db * db + dc * dc
        };
        // Offsets -1, 0, 1 per axis; image k = 9 (i0 + 1) + 3 (i1 + 1) + (i2 + 1).
        let rounded = pre_frac.map(round_ties_even);
        // 1 − round(x) by comparisons (a float-to-integer conversion costs more): coordinate
        // differences of wrapped points are within ±1.
        let nearest = rounded.map(|r| 1 + usize::from(r < 0.0) - usize::from(r > 0.0));
        let first = 9 * nearest[0] + 3 * nearest[1] + nearest[2];
        let mut best = measure(first);
        let mut best_k = first;
        if !best.is_finite() {
            let (d, k) = nearest_image_scan(&self.images, pre);
            return (d, k, self.tie_delta.is_some());
        }
        if best <= self.clear {
            return (best, first, false);
        }
        let limit = best + self.reach;
        // Every other image differs from the first on some axis, where its fractional
        // coordinate is at least 1 − |x| from zero (x the first's, within ±½): when that
        // bound rules out a step on every axis, the scan below would measure nothing.
        let step_bound = |a: usize| {
            let y = 1.0 - (pre_frac[a] - rounded[a]).abs();
            y * y * self.axis_weight[a]
        };
        if step_bound(0) > limit && step_bound(1) > limit && step_bound(2) > limit {
            return (best, first, false);
        }
        // The second smallest value measured (the first image counted): another image is
        // within the tie distance of the shortest exactly when this one is.
        let mut second = f64::INFINITY;
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
                    if d < best || (d == best && k < best_k) {
                        second = best;
                        best = d;
                        best_k = k;
                    } else if d < second {
                        second = d;
                    }
                }
            }
        }
        let tied = self.tie_delta.is_some_and(|delta| second <= best + delta);
        (best, best_k, tied)
    }
}

/// The shortest distance between lattice planes (Å), from `1 / |b_k|²` per dual basis
/// vector (`axis_weight`).
fn spacing(axis_weight: Vec3) -> f64 {
    axis_weight.into_iter().fold(f64::INFINITY, f64::min).sqrt()
}

/// The lattice vectors by which two of the 27 images of a pair differ: LLL coordinates in
/// `-2..=2`, not all zero.
fn image_steps(lat: &Mat3) -> impl Iterator<Item = Vec3> + '_ {
    (0..125)
        .map(|n| [n / 25, (n / 5) % 5, n % 5].map(|x| f64::from(x) - 2.0))
        .filter(|o| *o != [0.0; 3])
        .map(|o| vec_mat(o, lat))
}

/// The squared length below which a vector `v` is provably the shortest of its images,
/// every other one longer by more than `reach` (Å²), on a lattice whose lattice planes are
/// at least `spacing` apart (Å; the shortest of `1 / |b_k|` for the dual basis vectors
/// `b_k`): another image is `v + L` for a lattice vector `L ≠ 0`, which has a fractional
/// coordinate of at least 1 and so is at least `spacing` long, and `|v + L| ≥ |L| − |v|`;
/// `|v| ≤ spacing/2 − reach/spacing` gives `(|L| − |v|)² ≥ |v|² + 2·reach`, twice the
/// reach to cover rounding. Negative (never) for a degenerate lattice.
fn clear_below(spacing: f64, reach: f64) -> f64 {
    let t = spacing / 2.0 - reach / spacing;
    if t.is_finite() && t > 0.0 {
        (t * (1.0 - 1e-9)).powi(2)
    } else {
        -1.0
    }
}

/// The first of the 27 images with the smallest squared length of `pre + image` (the
/// reference's scan).
pub(super) fn nearest_image_scan(images: &[Vec3; 27], pre: &Vec3) -> (f64, usize) {
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

/// LLL-fractional coordinates wrapped into [0, 1) (the reference wraps with Python's `%`).
/// Written out: `array::map` here stayed a call.
#[inline]
pub(super) fn wrap(l: &Vec3) -> Vec3 {
    [py_mod1(l[0]), py_mod1(l[1]), py_mod1(l[2])]
}

/// Wrapped LLL-fractional coordinates ([`wrap`]) turned Cartesian.
pub(super) fn cart_of_wrapped(w: &Vec3, lat: &Mat3) -> Vec3 {
    let mut o = [0.0; 3];
    for (k, wk) in w.iter().enumerate() {
        for (j, oj) in o.iter_mut().enumerate() {
            *oj += wk * lat[k][j];
        }
    }
    o
}
