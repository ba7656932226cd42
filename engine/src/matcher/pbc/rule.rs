//! Which columns a table row may pair with.

/// Which columns a row may pair with: a test per pair, and, where a row pairs with exactly
/// the columns of one class, that class (the tables then look at those columns alone and ask
/// about no pair). Any `Fn(row, column) -> forbidden` closure is a rule without classes.
pub trait PairRule {
    /// True when row `i` may not be paired with column `j`.
    fn forbidden(&self, i: usize, j: usize) -> bool;

    /// The class whose columns, and no others, row `i` may pair with (classes as given to
    /// [`Columns::with_classes`](super::Columns::with_classes)); `None` when the row's
    /// partners are not one class, and every pair is asked about.
    fn class_of_row(&self, _i: usize) -> Option<u32> {
        None
    }
}

impl<F: Fn(usize, usize) -> bool> PairRule for F {
    fn forbidden(&self, i: usize, j: usize) -> bool {
        self(i, j)
    }
}
