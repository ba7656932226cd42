//! The deterministic generator of the engine's randomised unit tests: xorshift64
//! (Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8 (2003), shifts 13, 7, 17). The same
//! sequence on every target and no OS randomness, which wasm tests do not have.

/// A xorshift64 state (never zero).
pub(crate) struct XorShift(u64);

impl XorShift {
    /// A generator started from `seed` (zero, which xorshift never leaves, is replaced).
    pub(crate) fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A uniform value in [0, 1) with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
