//! One pass over a CIF's one-byte-per-character text ([`super::blocks`]) that finds every
//! `\n` and notes which rarer characters occur anywhere in it.
//!
//! The splitter walks the text's lines several times (line positions for errors, block
//! starts, the comment and blank-line check, the tokenizer's lines). A CIF line is short
//! (about 25 characters), so a SIMD search per line pays its set-up cost per line; one byte
//! loop over the whole text, kept here, replaces those searches. The notes let each step
//! take its common path (no `\r`, no `#`, no other line break, ASCII only) for the whole
//! text at once, and fall back to its general path otherwise.

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

/// What each byte tells the scan.
const NEWLINE: u8 = 1;
const CR: u8 = 2;
const HASH: u8 = 4;
const OTHER_BREAK: u8 = 8;
const WIDE: u8 = 16;

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'\n' => NEWLINE,
            b'\r' => CR,
            b'#' => HASH,
            0x0b | 0x0c | 0x1c | 0x1d | 0x1e => OTHER_BREAK,
            0x80..=0xff => WIDE,
            _ => 0,
        };
        b += 1;
    }
    t
};

impl Newlines {
    /// Scans `bytes` once, eight bytes at a time: a word whose only byte below a space is
    /// `\n` (most are) gives its newlines from a mask, and any other word goes byte by byte.
    pub(super) fn of(bytes: &[u8]) -> Self {
        let mut at = Vec::with_capacity(bytes.len() / 24 + 4);
        let mut seen = 0u8;
        let each = |at: &mut Vec<usize>, seen: &mut u8, i: usize, b: u8| {
            let class = CLASS[usize::from(b)];
            if class == NEWLINE {
                at.push(i);
            }
            *seen |= class;
        };
        let mut words = bytes.chunks_exact(8);
        let mut base = 0;
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let x = u64::from_le_bytes(w);
            // High bit set exactly in the bytes that are `\n`, `#`, below a space, or from
            // 0x80 (no sum carries into the next byte).
            let is_byte = |b: u8| {
                let y = x ^ (ONES * u64::from(b));
                !(((y & LOW7) + LOW7) | y | LOW7)
            };
            let newline = is_byte(b'\n');
            let below_space = !(((x & LOW7) + ONES * 0x60) | x) & HIGH;
            let rare = (below_space & !newline) | is_byte(b'#') | (x & HIGH);
            if rare == 0 {
                let mut m = newline;
                while m != 0 {
                    at.push(base + (m.trailing_zeros() / 8) as usize);
                    m &= m - 1;
                }
                if newline != 0 {
                    seen |= NEWLINE;
                }
            } else {
                for (k, &b) in word.iter().enumerate() {
                    each(&mut at, &mut seen, base + k, b);
                }
            }
            base += 8;
        }
        for (k, &b) in words.remainder().iter().enumerate() {
            each(&mut at, &mut seen, base + k, b);
        }
        Newlines {
            at,
            cr: seen & CR != 0,
            hash: seen & HASH != 0,
            other_break: seen & OTHER_BREAK != 0,
            wide: seen & WIDE != 0,
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
    fn words_at_a_time_agree_with_bytes_one_by_one() {
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
