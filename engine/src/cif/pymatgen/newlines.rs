//! One look over a CIF's one-byte-per-character text ([`super::blocks`]) that finds every
//! `\n` and notes which rarer characters occur anywhere in it.
//!
//! The splitter walks the text's lines several times (line positions for errors, block
//! starts, the comment and blank-line check, the tokenizer's lines). A CIF line is short
//! (about 25 characters), so a SIMD search per line pays its set-up cost per line; searches
//! over the whole text, made once here, replace those. The notes let each step take its
//! common path (no `\r`, no `#`, no other line break, ASCII only) for the whole text at
//! once, and fall back to its general path otherwise.

/// The `\n` positions of a text and which rarer characters it holds.
pub(super) struct Newlines {
    /// Index of every `\n`, in order.
    pub(super) at: Vec<usize>,
    /// Some `\r`.
    pub(super) cr: bool,
    /// Some `#` (a comment, or a `#` inside a value).
    pub(super) hash: bool,
    /// Some line break `str.splitlines()` knows other than `\n` and `\r`
    /// (`\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`).
    pub(super) other_break: bool,
    /// Some byte from 0x80 (a marker of a non-ASCII character).
    pub(super) wide: bool,
}

impl Newlines {
    /// Finds the newlines and the rarer characters with one SIMD search each over the
    /// whole text (memchr: AVX2 natively, simd128 in wasm).
    pub(super) fn of(bytes: &[u8]) -> Self {
        let mut at = Vec::with_capacity(bytes.len() / 24 + 4);
        at.extend(memchr::memchr_iter(b'\n', bytes));
        Newlines {
            at,
            cr: memchr::memchr(b'\r', bytes).is_some(),
            hash: memchr::memchr(b'#', bytes).is_some(),
            other_break: memchr::memchr3(0x0b, 0x0c, 0x1c, bytes).is_some()
                || memchr::memchr2(0x1d, 0x1e, bytes).is_some(),
            wide: !bytes.is_ascii(),
        }
    }

    /// The `\n` positions within `start..end`, shifted to start from 0 there.
    pub(super) fn within(&self, start: usize, end: usize) -> impl Iterator<Item = usize> + '_ {
        let from = self.at.partition_point(|&i| i < start);
        self.at[from..]
            .iter()
            .take_while(move |&&i| i < end)
            .map(move |&i| i - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_newline_and_notes_rare_characters() {
        let n = Newlines::of(b"data_x\n_a 1 # c\n\n_b\r\n2\x0c");
        assert_eq!(n.at, vec![6, 15, 16, 20]);
        assert!(n.cr && n.hash && n.other_break && !n.wide);
        assert_eq!(n.within(7, 20).collect::<Vec<_>>(), vec![8, 9]);
        let plain = Newlines::of(b"a\nb\xc3");
        assert!(!plain.cr && !plain.hash && !plain.other_break && plain.wide);
        assert_eq!(plain.within(0, 1).count(), 0);
    }

    #[test]
    fn searches_agree_with_bytes_one_by_one() {
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5_000 {
            let len = (rng.next_u64() % 70) as usize;
            // Mostly text and newlines, every byte value now and then.
            let text: Vec<u8> = (0..len)
                .map(|_| match rng.next_u64() % 10 {
                    0 => (rng.next_u64() % 256) as u8,
                    1 => b'\n',
                    _ => b' ' + (rng.next_u64() % 95) as u8,
                })
                .collect();
            let n = Newlines::of(&text);
            let want: Vec<usize> = (0..len).filter(|&i| text[i] == b'\n').collect();
            assert_eq!(n.at, want, "{text:?}");
            let has = |f: fn(u8) -> bool| text.iter().any(|&b| f(b));
            assert_eq!(n.cr, has(|b| b == b'\r'), "{text:?}");
            assert_eq!(n.hash, has(|b| b == b'#'), "{text:?}");
            assert_eq!(n.wide, has(|b| b >= 0x80), "{text:?}");
            let other = |b: u8| matches!(b, 0x0b | 0x0c | 0x1c | 0x1d | 0x1e);
            assert_eq!(n.other_break, has(other), "{text:?}");
        }
    }
}
