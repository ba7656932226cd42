//! Retrieval that every suite may use: exact nearest neighbours by cosine similarity
//! ([`Embeddings`]) and the word pieces BM25 indexes ([`tokens`]).
//!
//! [`Embeddings`] keeps every vector normalised to unit length in one contiguous `f32`
//! buffer (row-major), so a query is one pass over memory: one dot product per row and a
//! bounded heap of the K best so far. Vectors need not be unit length on the way in (the
//! upstream embeddings are, up to rounding); a zero vector has no direction and is never
//! returned. Ranking is by similarity, highest first, and equal similarities by index,
//! lowest first, so the result is one defined list. The dot product sums in sixteen lanes,
//! then adds the lanes pairwise in a fixed order: the compiler can vectorise it without fused
//! or reordered arithmetic, so the scores are the same bits natively and in wasm32.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Why vectors could not be indexed or searched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RetrievalError {
    /// Vectors must have at least one dimension.
    #[error("embeddings need at least one dimension")]
    ZeroDimension,
    /// A vector (or the flat buffer) has the wrong length.
    #[error("{what} has {got} values, expected {expected}")]
    Length {
        /// Which vector ("row 3", "the query", "the buffer").
        what: String,
        /// Its length.
        got: usize,
        /// The length it must have.
        expected: usize,
    },
    /// A value is NaN or infinite.
    #[error("{what} has a value that is not finite at position {index}")]
    NotFinite {
        /// Which vector.
        what: String,
        /// The position of the value.
        index: usize,
    },
    /// The query has no direction.
    #[error("the query is a zero vector")]
    ZeroQuery,
}

/// One neighbour: its row and its cosine similarity to the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    /// The row in the indexed set (0-based, in insertion order).
    pub index: usize,
    /// Cosine similarity, in [-1, 1] up to rounding.
    pub score: f32,
}

/// Vectors of one dimension, normalised, in one contiguous buffer.
#[derive(Clone, Debug)]
pub struct Embeddings {
    dim: usize,
    /// Row-major unit vectors (a zero row stays zero).
    data: Vec<f32>,
    /// Whether each row has a direction (is not the zero vector).
    usable: Vec<bool>,
}

/// Scales `v` to unit length (the norm summed in f64); `false` when it is the zero vector.
fn normalise(v: &mut [f32]) -> bool {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 {
        return false;
    }
    for x in v.iter_mut() {
        *x = (f64::from(*x) / norm) as f32;
    }
    true
}

fn check_finite(v: &[f32], what: impl FnOnce() -> String) -> Result<(), RetrievalError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(RetrievalError::NotFinite {
            what: what(),
            index,
        }),
        None => Ok(()),
    }
}

/// The dot product of two equally long slices: sixteen lane sums, then a fixed pairwise
/// reduction, then the tail.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0.0f32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            acc[i] += acc[i + width];
        }
        width /= 2;
    }
    let mut sum = acc[0];
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

/// A kept candidate; ordered so that the *worst* one is the greatest (the heap's top).
#[derive(Clone, Copy, Debug)]
struct Worst(Neighbour);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        // Lower score is worse; at equal scores the higher index is worse.
        other
            .0
            .score
            .total_cmp(&self.0.score)
            .then(self.0.index.cmp(&other.0.index))
    }
}

impl Embeddings {
    /// An empty set of `dim`-dimensional vectors.
    pub fn new(dim: usize) -> Result<Self, RetrievalError> {
        if dim == 0 {
            return Err(RetrievalError::ZeroDimension);
        }
        Ok(Self {
            dim,
            data: Vec::new(),
            usable: Vec::new(),
        })
    }

    /// The set from `data`, rows of `dim` values one after another, normalised in place
    /// (no copy).
    pub fn from_flat(dim: usize, mut data: Vec<f32>) -> Result<Self, RetrievalError> {
        if dim == 0 {
            return Err(RetrievalError::ZeroDimension);
        }
        if !data.len().is_multiple_of(dim) {
            return Err(RetrievalError::Length {
                what: "the buffer".into(),
                got: data.len(),
                expected: data.len() / dim * dim + dim,
            });
        }
        let mut usable = Vec::with_capacity(data.len() / dim);
        for (i, row) in data.chunks_exact_mut(dim).enumerate() {
            check_finite(row, || format!("row {i}"))?;
            usable.push(normalise(row));
        }
        Ok(Self { dim, data, usable })
    }

    /// Adds a vector as the next row.
    pub fn push(&mut self, v: &[f32]) -> Result<(), RetrievalError> {
        let what = || format!("row {}", self.usable.len());
        if v.len() != self.dim {
            return Err(RetrievalError::Length {
                what: what(),
                got: v.len(),
                expected: self.dim,
            });
        }
        check_finite(v, what)?;
        let start = self.data.len();
        self.data.extend_from_slice(v);
        let ok = normalise(&mut self.data[start..]);
        self.usable.push(ok);
        Ok(())
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// How many rows there are (zero rows included).
    pub fn len(&self) -> usize {
        self.usable.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.usable.is_empty()
    }

    /// Row `index`, normalised (`None` past the end).
    pub fn row(&self, index: usize) -> Option<&[f32]> {
        self.data.get(index * self.dim..(index + 1) * self.dim)
    }

    /// Whether row `index` can be returned (exists and is not a zero vector).
    pub fn is_usable(&self, index: usize) -> bool {
        self.usable.get(index).copied().unwrap_or(false)
    }

    /// `query` checked and normalised.
    fn unit_query(&self, query: &[f32]) -> Result<Vec<f32>, RetrievalError> {
        if query.len() != self.dim {
            return Err(RetrievalError::Length {
                what: "the query".into(),
                got: query.len(),
                expected: self.dim,
            });
        }
        check_finite(query, || "the query".into())?;
        let mut q = query.to_vec();
        if !normalise(&mut q) {
            return Err(RetrievalError::ZeroQuery);
        }
        Ok(q)
    }

    /// Cosine similarity of `query` to every usable row (`None` for zero rows), in row
    /// order: the same numbers [`top_k`](Self::top_k) ranks.
    pub fn scores(&self, query: &[f32]) -> Result<Vec<Option<f32>>, RetrievalError> {
        let q = self.unit_query(query)?;
        Ok(self
            .data
            .chunks_exact(self.dim)
            .zip(&self.usable)
            .map(|(row, &ok)| ok.then(|| dot(row, &q)))
            .collect())
    }

    /// The `k` rows most similar to `query`, best first (ties: lower index first).
    pub fn top_k(&self, query: &[f32], k: usize) -> Result<Vec<Neighbour>, RetrievalError> {
        self.top_k_where(query, k, |_| true)
    }

    /// [`top_k`](Self::top_k) among the rows for which `keep(index)` holds.
    pub fn top_k_where(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Result<Vec<Neighbour>, RetrievalError> {
        let q = self.unit_query(query)?;
        if k == 0 {
            return Ok(Vec::new());
        }
        let mut heap: BinaryHeap<Worst> = BinaryHeap::with_capacity(k + 1);
        for (index, (row, &ok)) in self
            .data
            .chunks_exact(self.dim)
            .zip(&self.usable)
            .enumerate()
        {
            if !ok || !keep(index) {
                continue;
            }
            let score = dot(row, &q);
            if heap.len() < k {
                heap.push(Worst(Neighbour { index, score }));
            } else if let Some(mut worst) = heap.peek_mut() {
                // A later row with an equal score has a higher index: it never displaces.
                if score > worst.0.score {
                    *worst = Worst(Neighbour { index, score });
                }
            }
        }
        // Ascending order of `Worst` is best first.
        Ok(heap.into_sorted_vec().into_iter().map(|w| w.0).collect())
    }
}

/// Lower-case word pieces: split at non-alphanumerics and at lower→upper case changes, so
/// `AntiSiteGenerator.get_defects` gives `anti site generator get defects`.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = false;
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn brute(e: &Embeddings, q: &[f32], k: usize) -> Vec<Neighbour> {
        let mut all: Vec<Neighbour> = e
            .scores(q)
            .unwrap()
            .into_iter()
            .enumerate()
            .filter_map(|(index, s)| s.map(|score| Neighbour { index, score }))
            .collect();
        all.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        all.truncate(k);
        all
    }

    #[test]
    fn heap_equals_full_sort_with_ties_and_zero_rows() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let dim = 19;
        let mut e = Embeddings::new(dim).unwrap();
        let mut rows: Vec<Vec<f32>> = Vec::new();
        for i in 0..1200 {
            let v: Vec<f32> = match i % 50 {
                0 => vec![0.0; dim],
                // Exact duplicates of an earlier row: ties broken by index.
                2 => rows[i - 1].clone(),
                _ => (0..dim)
                    .map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 - 0.5)
                    .collect(),
            };
            e.push(&v).unwrap();
            rows.push(v);
        }
        for t in 0..20 {
            let q = if t == 0 {
                rows[102].clone()
            } else {
                (0..dim)
                    .map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 - 0.5)
                    .collect()
            };
            for k in [1, 5, 25, 1200, 5000] {
                assert_eq!(
                    e.top_k(&q, k).unwrap(),
                    brute(&e, &q, k),
                    "query {t}, k {k}"
                );
            }
        }
        let top = e.top_k(&rows[102], 2000).unwrap();
        assert_eq!(top.len(), 1200 - 24, "zero rows are never returned");
        assert_eq!(
            (top[0].index, top[1].index),
            (101, 102),
            "a tie goes to the lower index"
        );
        assert_eq!(top[0].score, top[1].score);
    }

    #[test]
    fn cosine_not_dot_and_defined_errors() {
        let e = Embeddings::from_flat(2, vec![10.0, 0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 3.0]).unwrap();
        let top = e.top_k(&[0.0, 2.0], 3).unwrap();
        let idx: Vec<usize> = top.iter().map(|n| n.index).collect();
        assert_eq!(idx, [3, 1, 0]);
        assert!((top[1].score - 0.8).abs() < 1e-6);
        assert_eq!(e.top_k(&[0.0, 0.0], 1), Err(RetrievalError::ZeroQuery));
        assert!(matches!(
            e.top_k(&[1.0], 1),
            Err(RetrievalError::Length { .. })
        ));
        assert!(matches!(
            e.top_k(&[f32::NAN, 1.0], 1),
            Err(RetrievalError::NotFinite { .. })
        ));
        assert!(Embeddings::from_flat(2, vec![1.0; 3]).is_err());
        assert_eq!(
            Embeddings::new(0).unwrap_err(),
            RetrievalError::ZeroDimension
        );
        assert!(e.top_k(&[1.0, 0.0], 0).unwrap().is_empty());
        assert!(!e.is_usable(2) && e.is_usable(3) && !e.is_usable(9));
    }

    #[test]
    fn dot_matches_a_plain_sum() {
        let a: Vec<f32> = (0..53).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..53).map(|i| (i as f32 * 0.11).cos()).collect();
        let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
        assert!((f64::from(dot(&a, &b)) - plain).abs() < 1e-5);
    }

    #[test]
    fn tokens_split_names() {
        assert_eq!(
            tokens("AntiSiteGenerator.get_defects(x2)"),
            ["anti", "site", "generator", "get", "defects", "x2"]
        );
    }
}
