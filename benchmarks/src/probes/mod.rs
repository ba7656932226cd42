//! The AtomWorld probes (the AtomWorld paper): small tasks that isolate one skill behind the main
//! benchmark.
//!
//! - [`points`] ("PointWorld"): the spatial actions on bare 3-D points, no crystal;
//! - [`cif_repair`]: repair a CIF with one essential line removed or tags renamed;
//! - [`cif_gen`]: write a CIF for a named structure type, checked against structures we
//!   build ourselves;
//! - [`struct_prop`]: modify a CIF to raise or lower a property (statement only; the
//!   scoring hook is open);
//! - [`move_all`]: every atom shifted by one vector, compared site by site in order.
//!
//! Each is also a [`Suite`](crate::task::Suite) (its `suite` module), so it runs over a
//! model in batch like the benchmarks, its numbers per group in [`figures`].
//!
//! Every probe has a serde task type, a seeded generator drawing from
//! [`TaskRng`](crate::atomworld::generator::rng::TaskRng) streams of its own, the exact
//! prompt, and an evaluation returning a serde verdict.

pub mod cif_gen;
pub mod cif_repair;
pub mod figures;
pub mod move_all;
pub mod points;
pub mod struct_prop;

use serde::{Deserialize, Serialize};

/// Where a prompt's wording comes from, recorded with every task so a result table can say
/// whether it is comparable with the reference's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptOrigin {
    /// Byte-identical to the reference implementation's prompt.
    Reference,
    /// Written for this project; results are not directly comparable with the reference.
    Ours,
}

/// First ChaCha stream number of the probes: far above the AtomWorld action numbers, so a
/// probe task never shares a stream with a benchmark task of the same seed.
pub(crate) const PROBE_STREAM_BASE: u32 = 0x5052_0000;

/// Rounds to `decimals` decimal places through the decimal text, so the value is exactly
/// the double nearest to what is printed (and `-0.0` becomes `0.0`).
pub(crate) fn round_dp(x: f64, decimals: usize) -> f64 {
    format!("{x:.decimals$}").parse::<f64>().unwrap_or(x) + 0.0
}

#[cfg(test)]
mod tests {
    use super::round_dp;

    #[test]
    fn rounding_goes_through_the_printed_text() {
        assert_eq!(round_dp(1.23456, 2), 1.23);
        assert_eq!(round_dp(-0.001, 2).to_bits(), 0.0f64.to_bits());
        assert_eq!(round_dp(2.675, 2), 2.67); // 2.675 is 2.67499… in binary
    }
}
