//! The sparse table of shortest periodic vectors between a row list and a column list.

use super::FORBIDDEN;
use crate::linalg::Vec3;

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
    /// [`Columns::noting_image_ties`](super::Columns::noting_image_ties); empty otherwise).
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

    /// Empties the table (keeping its buffers) for rows against `cols` columns. A first use
    /// makes room for a row per column with a few entries each, so that a table of a
    /// search's first candidate does not grow its buffers step by step.
    pub fn clear(&mut self, cols: usize) {
        self.rows = 0;
        self.cols = cols;
        self.start.clear();
        self.start.push(0);
        self.col.clear();
        self.d2.clear();
        self.vectors.clear();
        self.tied.clear();
        if self.col.capacity() == 0 {
            let entries = 4 * cols;
            self.start.reserve(cols + 1);
            self.col.reserve(entries);
            self.d2.reserve(entries);
            self.vectors.reserve(entries);
        }
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
