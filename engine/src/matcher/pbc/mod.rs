//! Periodic geometry for the matcher: the fractional-tolerance subset test and the table of
//! shortest periodic vectors between two site lists (pymatgen's `is_coord_subset_pbc` and
//! `pbc_shortest_vectors`).

//!
//! [`SupersetIndex`] (`subset`) answers the subset test; [`Columns`] (`columns`) holds one
//! lattice's column points and builds sparse [`Table`]s (`table`) of shortest vectors
//! against many row lists; both narrow the pairs they look at through a sorted window over
//! the fractional coordinate with the tightest tolerance (`window`), which never drops a pair
//! the exact per-axis test would accept, and for tables applies that test itself to the
//! window's points in sorted order. A [`PairRule`] (`rule`) says which columns a row may
//! pair with; where that is one class of columns, only that class's window is looked at.

mod columns;
mod rule;
mod subset;
mod table;
#[cfg(test)]
mod tests;
mod window;

pub use columns::{Columns, NearestEntry, NearestWork};
pub use rule::PairRule;
pub use subset::SupersetIndex;
pub use table::Table;
pub(in crate::matcher) use window::PeriodicSpans;

/// Cost written for pairs that may not be matched (masked, or beyond the fractional
/// tolerance), as in the reference.
pub const FORBIDDEN: f64 = 1e20;
