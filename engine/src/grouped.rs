//! Indices grouped by a small integer key, all groups in one list (a counting sort): the
//! layout of the engine's periodic cell lists and of the tie search's adjacency lists.
//!
//! Why by hand: it is a dozen lines, and the crates that offer it (CSR graphs, sparse
//! matrices) bring a data model the callers would have to translate into and out of.

/// Indices `0..n` grouped by key: group `k` holds, in increasing order, the indices whose
/// key is `k`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Grouped {
    /// Group `k` is `members[start[k]..start[k + 1]]`.
    start: Vec<usize>,
    members: Vec<usize>,
}

impl Grouped {
    /// Groups index `i` under `keys[i]`; every key must be below `groups` (a larger one is
    /// left out of every group).
    pub(crate) fn new(keys: &[usize], groups: usize) -> Self {
        let mut start = vec![0usize; groups + 1];
        for &k in keys.iter().filter(|&&k| k < groups) {
            start[k + 1] += 1;
        }
        for k in 0..groups {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut members = vec![0usize; start[groups]];
        for (i, &k) in keys.iter().enumerate().filter(|(_, &k)| k < groups) {
            members[fill[k]] = i;
            fill[k] += 1;
        }
        Self { start, members }
    }

    /// The indices with key `k` (none for a key beyond the groups).
    #[inline]
    pub(crate) fn group(&self, k: usize) -> &[usize] {
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.members[a..b],
            _ => &[],
        }
    }

    /// Where each group starts in [`Grouped::members`], and (last) their total size.
    pub(crate) fn starts(&self) -> &[usize] {
        &self.start
    }

    /// Every group's indices, one group after another.
    pub(crate) fn members(&self) -> &[usize] {
        &self.members
    }
}

/// Cells per axis of a periodic grid holding about one of `n` points per cell (at most
/// `most` per axis), as the cell lists grouped here are laid out.
pub(crate) fn cells_per_axis(n: usize, most: usize) -> usize {
    let mut g = 1;
    while (g + 1) * (g + 1) * (g + 1) <= n && g < most {
        g += 1;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_hold_their_indices_in_order() {
        let keys = [2, 0, 2, 5, 1, 0, 9];
        let g = Grouped::new(&keys, 6);
        assert_eq!(g.group(0), &[1, 5]);
        assert_eq!(g.group(1), &[4]);
        assert_eq!(g.group(2), &[0, 2]);
        assert_eq!(g.group(3), &[] as &[usize]);
        assert_eq!(g.group(5), &[3]);
        assert_eq!(g.group(6), &[] as &[usize], "beyond the groups");
        assert_eq!(g.starts(), &[0, 2, 3, 5, 5, 5, 6]);
        assert_eq!(g.members(), &[1, 5, 4, 0, 2, 3], "key 9 is left out");
        assert_eq!(Grouped::new(&[], 0).group(0), &[] as &[usize]);
    }
}
