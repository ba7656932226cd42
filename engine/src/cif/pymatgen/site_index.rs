//! Sites looked up by place, for the pymatgen-compatible reader's closeness tests.
//!
//! The reader asks, for each new site, which earlier site (the first in order) lies within
//! [`SITE_TOLERANCE`] of it on every fractional axis, periodically. Comparing against every
//! earlier site would make reading quadratic in the number of sites, and those comparisons
//! would dominate reading a CIF of a few dozen sites already. Why by hand: the question is
//! pymatgen's exact predicate, asked of a growing list; the index only narrows the sites the
//! predicate then sees, so it answers exactly as the scan does.

use crate::cif::SITE_TOLERANCE;

/// Below this many sites a plain scan is cheaper than the grid.
const SCAN: usize = 32;

/// Most grid cells per axis (a grid of at most 40³ cells, 1 MB).
const MAX_CELLS: usize = 40;

/// Periodic closeness with numpy's round-half-even, per axis (pymatgen's test).
pub fn pbc_close(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|k| {
        let d = a[k] - b[k];
        crate::numeric::distance_to_integer(d) < SITE_TOLERANCE
    })
}

/// A growing list of sites with a grid over their wrapped coordinates, of about one cell
/// per site expected.
#[derive(Default)]
pub struct SiteIndex {
    coords: Vec<[f64; 3]>,
    /// Cells per axis (0 until the first [`SCAN`] sites are chained).
    cells: usize,
    /// Per cell, its first and last site; the cell's sites are chained through `next` in
    /// increasing order (no list allocated per cell).
    grid: Vec<(usize, usize)>,
    next: Vec<usize>,
}

/// The end of a cell's chain (and an empty cell's first and last site).
const END: usize = usize::MAX;

impl SiteIndex {
    /// An empty index with room for `n` sites: its grid, made when [`SCAN`] sites are
    /// reached, is sized for `n` sites (more may be added; each cell's chain then grows).
    pub fn with_capacity(n: usize) -> Self {
        Self {
            coords: Vec::with_capacity(n),
            cells: 0,
            grid: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Appends a site (its index is the number of sites before it).
    pub fn push(&mut self, c: [f64; 3]) {
        let cell = (self.cells > 0).then(|| self.locate(c).0);
        self.push_in(c, cell);
    }

    /// The first site `close` accepts, as [`SiteIndex::first`]; when there is none, `q`
    /// is appended (its place in the grid found once for both).
    pub fn first_or_push(
        &mut self,
        q: [f64; 3],
        close: impl Fn([f64; 3], [f64; 3]) -> bool,
    ) -> Option<usize> {
        if self.cells == 0 {
            let found = self.first(q, close);
            if found.is_none() {
                self.push_in(q, None);
            }
            return found;
        }
        let (cell, within) = self.locate(q);
        let found = self.first_near(q, (cell, within), close);
        if found.is_none() {
            self.push_in(q, Some(cell));
        }
        found
    }

    /// Appends a site whose grid cell is `cell` (`None` while there is no grid).
    fn push_in(&mut self, c: [f64; 3], cell: Option<[usize; 3]>) {
        self.coords.push(c);
        let i = self.coords.len() - 1;
        if self.coords.len() == SCAN {
            let expected = self.coords.capacity().max(SCAN);
            let cells = crate::grouped::cells_per_axis(expected, MAX_CELLS);
            self.cells = cells;
            self.grid = vec![(END, END); cells * cells * cells];
            self.next = Vec::with_capacity(expected);
            for k in 0..SCAN {
                let at = self.locate(self.coords[k]).0;
                self.chain(k, at);
            }
        } else if self.coords.len() > SCAN {
            let at = cell.unwrap_or_else(|| self.locate(c).0);
            self.chain(i, at);
        }
    }

    /// Appends site `i` (the last) to the chain of grid cell `at`.
    fn chain(&mut self, i: usize, at: [usize; 3]) {
        self.next.push(END);
        let at = self.cell_index(at);
        let cell = &mut self.grid[at];
        if cell.0 == END {
            *cell = (i, i);
        } else {
            self.next[cell.1] = i;
            cell.1 = i;
        }
    }

    /// The first site `close(site, q)` accepts among those `pbc_close` to `q` could be: the
    /// same as scanning every site in order, for any `close` that implies `pbc_close`.
    pub fn first(&self, q: [f64; 3], close: impl Fn([f64; 3], [f64; 3]) -> bool) -> Option<usize> {
        if self.coords.len() < SCAN {
            return self.coords.iter().position(|&c| close(c, q));
        }
        self.first_near(q, self.locate(q), close)
    }

    /// [`SiteIndex::first`] on the grid (there is one), for `q` in grid cell `cell` at
    /// `within` in it.
    fn first_near(
        &self,
        q: [f64; 3],
        (cell, within): ([usize; 3], [f64; 3]),
        close: impl Fn([f64; 3], [f64; 3]) -> bool,
    ) -> Option<usize> {
        let g = self.cells;
        // A site within the tolerance of q lies in q's cell or, along an axis where q is
        // near its cell's edge, the neighbouring one (the margin dwarfs any rounding).
        let margin = 2.0 * SITE_TOLERANCE * g as f64;
        let mut keys = [[0usize; 2]; 3];
        let mut counts = [1usize; 3];
        for a in 0..3 {
            keys[a][0] = cell[a];
            let w = within[a];
            if g == 1 || !w.is_finite() {
                continue;
            }
            if w < margin {
                keys[a][1] = if cell[a] == 0 { g - 1 } else { cell[a] - 1 };
                counts[a] = 2;
            } else if w > 1.0 - margin {
                keys[a][1] = if cell[a] + 1 == g { 0 } else { cell[a] + 1 };
                counts[a] = 2;
            }
        }
        let mut best: Option<usize> = None;
        for &x in &keys[0][..counts[0]] {
            for &y in &keys[1][..counts[1]] {
                for &z in &keys[2][..counts[2]] {
                    let mut j = self.grid[self.cell_index([x, y, z])].0;
                    while j != END && !close(self.coords[j], q) {
                        j = self.next[j];
                    }
                    if j != END {
                        best = Some(best.map_or(j, |b| b.min(j)));
                    }
                }
            }
        }
        best
    }

    /// The grid cell of a point (wrapped into the unit cell; non-finite values fall in cell
    /// 0, where the closeness test rejects them), and where in the cell it lies along each
    /// axis (0 to 1).
    fn locate(&self, c: [f64; 3]) -> ([usize; 3], [f64; 3]) {
        let g = self.cells;
        let mut cell = [0usize; 3];
        let mut within = [0.0; 3];
        for a in 0..3 {
            let x = c[a] - crate::numeric::floor(c[a]);
            let s = x * g as f64;
            // `s` lies in [0, g] (or is NaN, which casts to 0): the cast is its floor. The
            // cell past the last is the first.
            let k = s as usize;
            within[a] = s - k as f64;
            cell[a] = if k >= g { k - g } else { k };
        }
        (cell, within)
    }

    /// Where cell `k` is in the grid.
    fn cell_index(&self, [x, y, z]: [usize; 3]) -> usize {
        (x * self.cells + y) * self.cells + z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_finds_what_a_scan_finds() {
        let mut seed: u64 = 11;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        // Points on a coarse lattice (so many are close or equal), near cell edges, shifted
        // by whole cells and by just under and over the tolerance.
        let mut index = SiteIndex::with_capacity(3000);
        let mut small = SiteIndex::with_capacity(7);
        let mut all: Vec<[f64; 3]> = Vec::new();
        // Distinct points kept by `first_or_push`, and the same by a scan.
        let mut distinct = SiteIndex::with_capacity(100);
        let mut kept: Vec<[f64; 3]> = Vec::new();
        let mut hits = 0;
        for i in 0..3000 {
            let base: [f64; 3] = std::array::from_fn(|_| (rnd() * 6.0).floor() / 6.0);
            let jitter = [0.0, 0.6e-4, -0.99e-4, 1.01e-4, 2e-4][i % 5];
            let shift = [0.0, 1.0, -2.0][i % 3];
            let q = [base[0] + jitter, base[1] - jitter + shift, base[2]];
            let want = all.iter().position(|&c| pbc_close(c, q));
            let exact = all.iter().position(|&c| c == q);
            assert_eq!(index.first(q, pbc_close), want, "point {i}");
            assert_eq!(index.first(q, |a, b| a == b), exact, "point {i}");
            // A grid sized for fewer sites answers the same.
            assert_eq!(small.first(q, pbc_close), want, "point {i}");
            hits += usize::from(want.is_some());
            let seen = kept.iter().position(|&c| pbc_close(c, q));
            assert_eq!(distinct.first_or_push(q, pbc_close), seen, "point {i}");
            if seen.is_none() {
                kept.push(q);
            }
            index.push(q);
            small.push(q);
            all.push(q);
        }
        assert!(hits > 1000, "{hits}");
        assert!(kept.len() > 2 * SCAN, "{}", kept.len());
        assert_eq!(distinct.coords, kept);
        // Non-finite coordinates match nothing.
        assert_eq!(index.first([f64::NAN, 0.0, 0.0], pbc_close), None);
    }
}
