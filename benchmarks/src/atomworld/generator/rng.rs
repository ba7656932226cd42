//! Seeded randomness with a specified output stream.
//!
//! ChaCha8 (rand_chacha) gives the raw bits; the distributions on top are written here rather
//! than taken from `rand`/`rand_distr`, whose sampling algorithms may change between releases:
//! a task set must be regenerable from its seed forever, natively and in wasm, bit for bit.

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A deterministic random source for one task.
pub struct TaskRng(ChaCha8Rng);

impl TaskRng {
    /// The generator for task `index` of action number `stream` in a set seeded with `seed`.
    /// Tasks draw from disjoint ChaCha streams, so adding tasks never changes earlier ones.
    pub fn new(seed: u64, stream: u32, index: u32) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(b"AtomWrld");
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(((stream as u64) << 32) | index as u64);
        Self(rng)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [0, n) without modulo bias (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n.max(1) as u64;
        // Rejection sampling on the top of the range keeps every value equally likely.
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.0.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// Two distinct integers in [0, n) (n ≥ 2).
    pub fn distinct_pair(&mut self, n: usize) -> (usize, usize) {
        let i = self.below(n);
        let mut j = self.below(n.saturating_sub(1).max(1));
        if j >= i {
            j += 1;
        }
        (i, j)
    }

    /// Normal(0, σ) by the Box–Muller transform (portable maths from `libm`).
    pub fn normal(&mut self, sigma: f64) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: the logarithm stays finite
        let u2 = self.unit();
        sigma * (-2.0 * libm::log(u1)).sqrt() * libm::cos(2.0 * std::f64::consts::PI * u2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<f64> = (0..4).map(|_| TaskRng::new(7, 1, 2).unit()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = TaskRng::new(7, 1, 2);
        let mut y = TaskRng::new(7, 1, 3);
        assert_ne!(x.unit(), y.unit());
    }

    #[test]
    fn distributions_have_the_right_moments() {
        let mut r = TaskRng::new(1, 0, 0);
        let n = 20_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal(2.0)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.06, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.06, "{}", var.sqrt());
        let mut counts = [0usize; 7];
        for _ in 0..7000 {
            counts[r.below(7)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (850..1150).contains(&c)),
            "{counts:?}"
        );
        for _ in 0..1000 {
            let (i, j) = r.distinct_pair(3);
            assert!(i != j && i < 3 && j < 3);
        }
    }
}
