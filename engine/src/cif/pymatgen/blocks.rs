//! CIF text to data blocks the way pymatgen's `CifFile.from_str` / `CifBlock.from_str` cut it.
//!
//! pymatgen does not follow the CIF grammar: it splits the file at lines starting with
//! `data_`, deletes comments (`#` at a line start or after whitespace, even inside quotes),
//! deletes blank lines and non-ASCII characters, then splits each line with one regular
//! expression. Tags are case-sensitive, a tag takes whatever token follows it, and loops are
//! checked in an unusual way. All of that decides which files it accepts, so it is reproduced
//! here on characters that remember where they came from, to point errors at the text (one
//! byte per character, see [`one_byte_per_char`]; a property test holds it to the slower
//! character-level version it replaced, `pymatgen_blocks_chars`).

use std::borrow::Cow;

use compact_str::CompactString;

use super::newlines::Newlines;
use crate::cif::lexer::Pos;
use crate::cif::CifError;
use crate::python::{is_py_space, py_strip};

/// A value as pymatgen stores it, with where its token starts in the original text.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    /// The value (quotes removed; loop values stripped); short ones are stored inline.
    pub s: CompactString,
    /// Start of the token in the original text.
    pub pos: Option<Pos>,
}

/// A data item: a single value, or a loop column.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `_tag value`.
    Scalar(Text),
    /// A loop column's values in row order.
    List(Vec<Text>),
}

/// Python indexing failed (`IndexError`): pymatgen does not catch it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutOfRange;

impl Item {
    /// Python `len()`: rows of a column, characters of a single value.
    pub fn len(&self) -> usize {
        match self {
            Item::Scalar(t) => t.s.chars().count(),
            Item::List(v) => v.len(),
        }
    }

    /// True when `len()` is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Python truthiness (non-empty string or list).
    pub fn truthy(&self) -> bool {
        !self.is_empty()
    }

    /// Python `item[i]`: a column's i-th value (borrowed), or a single value's i-th
    /// character.
    pub fn index(&self, i: usize) -> Result<Cow<'_, Text>, OutOfRange> {
        match self {
            Item::List(v) => v.get(i).map(Cow::Borrowed).ok_or(OutOfRange),
            Item::Scalar(t) => {
                t.s.chars()
                    .nth(i)
                    .map(|c| {
                        Cow::Owned(Text {
                            s: CompactString::from(&*c.encode_utf8(&mut [0; 4])),
                            pos: t.pos,
                        })
                    })
                    .ok_or(OutOfRange)
            }
        }
    }

    /// Python iteration: a column's values, or a single value's characters.
    pub fn iter_values(&self) -> impl Iterator<Item = Cow<'_, Text>> {
        (0..self.len()).filter_map(|i| self.index(i).ok())
    }

    /// Where the item's first value was written.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            Item::Scalar(t) => t.pos,
            Item::List(v) => v.first().and_then(|t| t.pos),
        }
    }
}

/// One data block: its header and items in first-insertion order (keys are unique and
/// case-sensitive, like the Python dict).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PmgBlock {
    /// The text after `data_` (at most 74 characters).
    pub header: String,
    /// Where `data_` was written.
    pub pos: Option<Pos>,
    /// Items in dict order (tags are short: stored inline). Keys change through
    /// [`PmgBlock::set`] only, which keeps `prints` in step.
    data: Vec<(CompactString, Item)>,
    /// [`key_print`] of each key of `data`, in the same order.
    prints: Vec<u64>,
    /// An open-addressing table over `prints`: slot `h` holds one plus the index in `data`
    /// of a key whose print hashes there (or near, probing forward), zero when empty.
    /// Made with the first key; blocks of more than [`MAX_SLOTTED`] keys fall back to a
    /// scan of `prints`.
    slots: Vec<u8>,
}

/// Slots of [`PmgBlock::slots`] (a power of two), and the most keys they index (at most
/// half full, so probes stay short).
const SLOTS: usize = 256;
const MAX_SLOTTED: usize = SLOTS / 2;

/// A key's length and last bytes in one word: equal keys have equal prints, and the tags of
/// one block rarely share both (`_cell_length_a` and `_cell_length_b` differ in the last
/// byte), so a lookup compares words and reads a key's text only on a matching print.
/// Why: a block's items are looked up by tag dozens of times while it is read and turned
/// into a structure, and comparing the short inline strings one by one dominated that.
fn key_print(key: &str) -> u64 {
    let b = key.as_bytes();
    let len = (b.len() as u64) << 56;
    match b.len().checked_sub(8).and_then(|s| b.get(s..)) {
        // The last eight bytes, of which the top one makes way for the length.
        Some(tail) => {
            let mut word = [0u8; 8];
            word.copy_from_slice(tail);
            (u64::from_le_bytes(word) >> 8) | len
        }
        None => {
            b.iter()
                .fold(len, |w, &c| (w << 8 | u64::from(c)) & !(0xff << 56))
                | len
        }
    }
}

/// The slot a print hashes to (Fibonacci hashing).
fn slot_of(print: u64) -> usize {
    (print.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % SLOTS
}

impl PmgBlock {
    /// A block with no items yet.
    pub(super) fn new(header: String, pos: Option<Pos>) -> Self {
        PmgBlock {
            header,
            pos,
            data: Vec::with_capacity(48),
            prints: Vec::with_capacity(48),
            slots: Vec::new(),
        }
    }

    /// Items in dict order.
    pub fn items(&self) -> &[(CompactString, Item)] {
        &self.data
    }

    /// Every item's value, mutable (keys stay as they are).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Item> {
        self.data.iter_mut().map(|(_, v)| v)
    }

    /// The index in `data` of `key`, whose [`key_print`] is `print`.
    fn position(&self, key: &str, print: u64) -> Option<usize> {
        if self.data.len() > MAX_SLOTTED || self.slots.is_empty() {
            return (0..self.data.len())
                .find(|&i| self.prints[i] == print && self.data[i].0 == key);
        }
        let mut h = slot_of(print);
        loop {
            let i = usize::from(self.slots[h]).checked_sub(1)?;
            if self.prints[i] == print && self.data[i].0 == key {
                return Some(i);
            }
            h = (h + 1) % SLOTS;
        }
    }

    /// `data.get(key)`.
    pub fn get(&self, key: &str) -> Option<&Item> {
        self.position(key, key_print(key)).map(|i| &self.data[i].1)
    }

    /// Mutable `data[key]`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Item> {
        self.position(key, key_print(key))
            .map(|i| &mut self.data[i].1)
    }

    /// Mutable item at `index` of `data` (as [`PmgBlock::set`] returned it).
    pub(super) fn item_at_mut(&mut self, index: usize) -> Option<&mut Item> {
        self.data.get_mut(index).map(|(_, v)| v)
    }

    /// `data[key] = item` (an existing key keeps its place); returns the key's index in
    /// `data`.
    pub fn set(&mut self, key: CompactString, item: Item) -> usize {
        let print = key_print(&key);
        match self.position(&key, print) {
            Some(i) => {
                self.data[i].1 = item;
                i
            }
            None => {
                let i = self.data.len();
                self.prints.push(print);
                self.data.push((key, item));
                if i < MAX_SLOTTED {
                    self.slots.resize(SLOTS, 0);
                    let mut h = slot_of(print);
                    while self.slots[h] != 0 {
                        h = (h + 1) % SLOTS;
                    }
                    self.slots[h] = (i + 1) as u8;
                }
                i
            }
        }
    }

    /// `key in data`.
    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// Marks a non-ASCII Python whitespace character in the one-byte-per-character text.
const WIDE_SPACE: u8 = 0x80;
/// Marks any other non-ASCII character.
const WIDE_OTHER: u8 = 0x81;

/// The text with one byte per character: ASCII as it is, every other character as one of
/// two markers (Python whitespace or not), which each step treats as pymatgen treats the
/// character until non-ASCII characters are deleted; so byte indices are character indices.
/// Why: pymatgen's regexes and `splitlines` only distinguish ASCII characters and Unicode
/// whitespace, and working on bytes makes the splitter several times faster than on
/// `char`s (a CIF is almost always ASCII, borrowed as it is).
pub(super) fn one_byte_per_char(text: &str) -> Cow<'_, [u8]> {
    if text.is_ascii() {
        return Cow::Borrowed(text.as_bytes());
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                c if c.is_ascii() => c as u8,
                c if is_py_space(c) => WIDE_SPACE,
                _ => WIDE_OTHER,
            })
            .collect(),
    )
}

/// Python's `str.isspace()` (the `\s` of its regexes) on one-byte characters.
fn is_space(b: u8) -> bool {
    SPACE[usize::from(b)]
}

/// The characters `str.splitlines()` breaks ASCII text at.
static LINE_BREAK: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b as u8, b'\n' | b'\r' | 0x0b | 0x0c | 0x1c | 0x1d | 0x1e);
        b += 1;
    }
    t
};

/// [`is_space`] as a table.
static SPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b as u8, b'\t'..=b'\r' | 0x1c..=0x1f | b' ' | WIDE_SPACE);
        b += 1;
    }
    t
};

/// One token: pymatgen's first regex group (unquoted words; empty for quoted values and text
/// fields), the joined value, and where it starts.
#[derive(Clone, Debug, Default)]
pub(super) struct Token {
    /// Whether the value was quoted or a text field (then the first group is empty).
    pub(super) quoted: bool,
    pub(super) text: CompactString,
    /// Character index in the original text.
    pub(super) at: usize,
}

impl Token {
    /// [`Token::bare`], moved out of the token.
    fn into_bare(self) -> CompactString {
        if self.quoted {
            CompactString::default()
        } else {
            self.text
        }
    }

    /// pymatgen's first regex group: the word itself, or empty for a quoted value.
    fn bare(&self) -> &str {
        if self.quoted {
            ""
        } else {
            &self.text
        }
    }
}

/// Maps character indices of the original text to line and column (the lexer's convention:
/// `\r\n`, `\n` and a lone `\r` each end a line). Holds only where each line starts; a
/// position is found by binary search when a token needs one.
pub(super) struct Positions {
    /// Character index at which each line starts (the first is 0).
    line_starts: Vec<usize>,
    len: usize,
}

impl Positions {
    /// [`Positions::new`] from the text's [`Newlines`]: without `\r`, the lines start
    /// after them.
    fn of_newlines(bytes: &[u8], newlines: &Newlines) -> Self {
        if newlines.cr {
            return Self::new(bytes);
        }
        let mut line_starts = Vec::with_capacity(newlines.at.len() + 1);
        line_starts.push(0);
        line_starts.extend(newlines.at.iter().map(|&i| i + 1));
        Positions {
            line_starts,
            len: bytes.len(),
        }
    }

    /// Line starts of a text given one byte per character ([`one_byte_per_char`]).
    pub(super) fn new(bytes: &[u8]) -> Self {
        let mut line_starts = Vec::with_capacity(bytes.len() / 16 + 2);
        line_starts.push(0);
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            let ends_line = bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n');
            if ends_line {
                line_starts.push(i + 1);
            }
        }
        Positions {
            line_starts,
            len: bytes.len(),
        }
    }

    fn at(&self, i: usize) -> Option<Pos> {
        if i > self.len {
            return None;
        }
        let line = self.line_starts.partition_point(|&s| s <= i);
        let start = self.line_starts.get(line.checked_sub(1)?)?;
        Some(Pos {
            line,
            col: i - start + 1,
        })
    }

    /// A reader of positions for mostly increasing indices (a block's tokens): it walks
    /// forward from the last line found instead of searching all lines each time.
    fn cursor(&self) -> PositionCursor<'_> {
        PositionCursor {
            positions: self,
            line: 0,
        }
    }
}

/// See [`Positions::cursor`].
struct PositionCursor<'a> {
    positions: &'a Positions,
    /// Index into `line_starts` of the line last found.
    line: usize,
}

impl PositionCursor<'_> {
    /// [`Positions::at`], the same answer.
    fn at(&mut self, i: usize) -> Option<Pos> {
        let starts = &self.positions.line_starts;
        if i > self.positions.len || starts.get(self.line).is_none_or(|&s| s > i) {
            let pos = self.positions.at(i)?;
            self.line = pos.line - 1;
            return Some(pos);
        }
        while starts.get(self.line + 1).is_some_and(|&s| s <= i) {
            self.line += 1;
        }
        Some(Pos {
            line: self.line + 1,
            col: i - starts[self.line] + 1,
        })
    }
}

/// Split CIF text into pymatgen's data blocks (in its dict order: a repeated header replaces
/// the earlier block in place). Errors are the ones `CifBlock.from_str` raises.
pub fn pymatgen_blocks(text: &str) -> Result<Vec<PmgBlock>, CifError> {
    let bytes = one_byte_per_char(text);
    let bytes: &[u8] = &bytes;
    let newlines = Newlines::of(bytes);
    let positions = Positions::of_newlines(bytes, &newlines);
    let mut blocks: Vec<PmgBlock> = Vec::new();
    let starts = block_starts(bytes, &newlines);
    for (n, &(_, data_at)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(bytes.len(), |&(s, _)| s);
        // The header line (up to the first '\n' after "data_") names powder-pattern blocks.
        let body = &bytes[data_at + 5..end];
        let first_line = body.split(|&c| c == b'\n').next().unwrap_or_default();
        if first_line.windows(14).any(|w| w == b"powder_pattern") {
            continue;
        }
        let block = block_of_tokens(
            tokens_of(&bytes[data_at..end], data_at, &newlines),
            &positions,
        )?;
        match blocks.iter_mut().find(|b| b.header == block.header) {
            Some(slot) => *slot = block,
            None => blocks.push(block),
        }
    }
    Ok(blocks)
}

/// Matches of `^\s*data_` (multi-line): (line start, index of `data_`).
fn block_starts(bytes: &[u8], newlines: &Newlines) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Where the last match ended: a match consumes its leading whitespace, line breaks
    // included, so the next one cannot start before.
    let mut free = 0;
    let line_starts = std::iter::once(0).chain(newlines.at.iter().map(|&i| i + 1));
    for i in line_starts {
        if i < free || i >= bytes.len() {
            continue;
        }
        let j = bytes[i..]
            .iter()
            .position(|&c| !is_space(c))
            .map_or(bytes.len(), |k| i + k);
        if bytes[j..].starts_with(b"data_") {
            out.push((i, j));
            free = j + 5;
        }
    }
    out
}

/// A block's text as pymatgen tokenizes it (comments, blank lines and non-ASCII characters
/// deleted), with where its pieces came from.
struct Cleaned<'a> {
    b: Cow<'a, [u8]>,
    /// `(index in b, index in the original text)` at the start of each piece copied whole.
    runs: Vec<(usize, usize)>,
}

impl Cleaned<'_> {
    /// Appends `piece` (starting at `orig` in the text) without its non-ASCII characters.
    fn append(&mut self, piece: &[u8], orig: usize) {
        let b = self.b.to_mut();
        // The usual case, one ASCII run (`is_ascii` checks a word at a time).
        if piece.is_ascii() {
            if !piece.is_empty() {
                self.runs.push((b.len(), orig));
                b.extend_from_slice(piece);
            }
            return;
        }
        let mut from = 0;
        while from < piece.len() {
            let to = piece[from..]
                .iter()
                .position(|c| !c.is_ascii())
                .map_or(piece.len(), |k| from + k);
            if to > from {
                self.runs.push((b.len(), orig + from));
                b.extend_from_slice(&piece[from..to]);
            }
            from = to + 1;
        }
    }

    /// A cursor mapping increasing indices of `b` to the original text.
    fn origins(&self) -> Origins<'_> {
        Origins {
            runs: &self.runs,
            k: 0,
        }
    }
}

/// See [`Cleaned::origins`].
struct Origins<'a> {
    runs: &'a [(usize, usize)],
    k: usize,
}

impl Origins<'_> {
    /// The original index of cleaned index `i` (calls in increasing `i` cost O(1) each).
    fn of(&mut self, i: usize) -> usize {
        if self.runs.get(self.k).is_some_and(|r| r.0 > i) {
            self.k = 0;
        }
        while self.runs.get(self.k + 1).is_some_and(|r| r.0 <= i) {
            self.k += 1;
        }
        self.runs.get(self.k).map_or(i, |&(c, o)| o + (i - c))
    }
}

/// `CifBlock._process_string`'s three deletions, line by line. On the block's lines (split
/// at `\n`; `s` starts at character `offset` of the text):
/// - comments, `(\s|^)#.*$` (multi-line): a line starting with `#` vanishes together with
///   the line break before it (the first line of a block starts with `data_`); any other
///   line ends before its first whitespace character followed by `#`;
/// - blank lines, `^\s*\n`: of what remains, joined by line breaks, every line of
///   whitespace only that a line break follows (all but the last) goes;
/// - then every non-ASCII character.
fn clean<'s>(s: &'s [u8], offset: usize, newlines: &Newlines) -> Cleaned<'s> {
    if nothing_to_clean(s, offset, newlines) {
        return Cleaned {
            b: Cow::Borrowed(s),
            runs: vec![(0, offset)],
        };
    }
    let line_count = memchr::memchr_iter(b'\n', s).count() + 1;
    let mut lines: Vec<(usize, &[u8])> = Vec::with_capacity(line_count);
    let ends = memchr::memchr_iter(b'\n', s).chain(std::iter::once(s.len()));
    let mut at = 0;
    for (k, end) in ends.enumerate() {
        let line = &s[at..end];
        let start = at;
        at = end + 1;
        if k > 0 && line.first() == Some(&b'#') {
            continue;
        }
        let end = if line.first() == Some(&b'#') {
            0 // `^#` on the first line: the comment goes, its line break stays
        } else {
            memchr::memchr_iter(b'#', line)
                .find(|&h| h > 0 && is_space(line[h - 1]))
                .map_or(line.len(), |h| h - 1)
        };
        lines.push((start, &line[..end]));
    }
    let last = lines.len().saturating_sub(1);
    let mut out = Cleaned {
        b: Cow::Owned(Vec::with_capacity(s.len())),
        runs: Vec::with_capacity(line_count),
    };
    let mut first = true;
    for (k, &(at, line)) in lines.iter().enumerate() {
        if k < last && line.iter().all(|&c| is_space(c)) {
            continue;
        }
        if !first {
            out.b.to_mut().push(b'\n');
        }
        first = false;
        out.append(line, offset + at);
    }
    out
}

/// Whether [`clean`] would leave the block `s` (at `offset` in the text, whose newlines
/// are `newlines`) as it is (nearly every CIF): ASCII, no `#`, and no line but the last of
/// whitespace only.
fn nothing_to_clean(s: &[u8], offset: usize, newlines: &Newlines) -> bool {
    let ascii = !newlines.wide || s.is_ascii();
    if !ascii || (newlines.hash && memchr::memchr(b'#', s).is_some()) {
        return false;
    }
    let mut start = 0;
    for end in newlines.within(offset, offset + s.len()) {
        if s[start..end].iter().all(|&c| is_space(c)) {
            return false;
        }
        start = end + 1;
    }
    true
}

/// Whether `s` holds a line break other than `\n` that `str.splitlines()` breaks at (two
/// SIMD searches; almost no CIF does).
fn has_rare_breaks(s: &[u8]) -> bool {
    memchr::memchr3(b'\r', 0x0b, 0x0c, s).is_some()
        || memchr::memchr3(0x1c, 0x1d, 0x1e, s).is_some()
}

/// Python `str.splitlines()` on ASCII text, line by line (index ranges). `newline_at`,
/// when given, lists every `\n` of `s`, and `s` holds no other line break.
fn for_each_line(
    s: &[u8],
    newline_at: Option<&mut dyn Iterator<Item = usize>>,
    mut each: impl FnMut(std::ops::Range<usize>),
) {
    let mut start = 0;
    if let Some(ends) = newline_at {
        for i in ends {
            each(start..i);
            start = i + 1;
        }
    } else if !has_rare_breaks(s) {
        // Lines end at `\n` only: found by SIMD search.
        for i in memchr::memchr_iter(b'\n', s) {
            each(start..i);
            start = i + 1;
        }
    } else {
        let mut i = 0;
        while i < s.len() {
            let c = s[i];
            if LINE_BREAK[usize::from(c)] {
                each(start..i);
                if c == b'\r' && s.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            i += 1;
        }
    }
    if start < s.len() {
        each(start..s.len());
    }
}

/// Part of the cleaned block as a string (every index is a character boundary there: the
/// cleaned text is ASCII).
fn string_of(text: &str, r: std::ops::Range<usize>) -> CompactString {
    CompactString::from(text.get(r).unwrap_or_default())
}

/// Tags too long to be stored inline (over 24 bytes) that CIF writers commonly use, above
/// all pymatgen's: read as references to these instead of one heap string each.
const LONG_TAGS: [&str; 17] = [
    "_symmetry_space_group_name_H-M",
    "_symmetry_Int_Tables_number",
    "_chemical_formula_structural",
    "_symmetry_equiv_pos_site_id",
    "_symmetry_equiv_pos_as_xyz",
    "_atom_site_symmetry_multiplicity",
    "_space_group_symop_operation_xyz",
    "_symmetry_space_group_name_Hall",
    "_space_group_name_H-M_alt",
    "_space_group_crystal_system",
    "_atom_site_U_iso_or_equiv",
    "_atom_site_B_iso_or_equiv",
    "_atom_site_thermal_displace_type",
    "_atom_site_attached_hydrogens",
    "_atom_site_Wyckoff_symbol",
    "_atom_type_oxidation_number",
    "_cell_measurement_temperature",
];

/// A word of the cleaned block: [`string_of`], or one of [`LONG_TAGS`] without a copy.
fn word_of(text: &str, r: std::ops::Range<usize>) -> CompactString {
    let word = text.get(r).unwrap_or_default();
    if word.len() > 24 && word.starts_with('_') {
        if let Some(tag) = LONG_TAGS
            .iter()
            .find(|t| t.len() == word.len() && **t == word)
        {
            return CompactString::const_new(tag);
        }
    }
    CompactString::from(word)
}

/// Python `str.strip()`: the range without leading and trailing whitespace.
fn strip_range(s: &[u8], r: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let line = &s[r.clone()];
    let start = line
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |e| e + 1);
    r.start + start..r.start + end.max(start)
}

/// The first whitespace byte of `line` from `from` on (its length when there is none).
/// Eight bytes at a time: a word holds no byte at or below a space (`0x20`, the largest
/// ASCII whitespace) and no marker byte (`0x80` and above, see [`one_byte_per_char`]), so
/// only where one of those turns up does the table decide.
fn word_end(line: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut q = from;
    while let Some(chunk) = line.get(q..q + 8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let x = u64::from_le_bytes(bytes);
        // High bit set in each byte below 0x21 (the lowest such byte exactly) or from 0x80.
        let flagged = (x.wrapping_sub(0x21 * ONES) & !x & HIGH) | (x & HIGH);
        if flagged == 0 {
            q += 8;
            continue;
        }
        q += (flagged.trailing_zeros() / 8) as usize;
        if is_space(line[q]) {
            return q;
        }
        q += 1;
    }
    while q < line.len() && !is_space(line[q]) {
        q += 1;
    }
    q
}

/// The token regex `([^'"\s][\S]*)|'(.*?)'(?!\S)|"(.*?)"(?!\S)` applied with `findall` to
/// the line `r` of the cleaned block.
fn tokenize_line(
    text: &str,
    r: std::ops::Range<usize>,
    origins: &mut Origins<'_>,
    out: &mut Vec<Token>,
) {
    let base = r.start;
    let line = &text.as_bytes()[r];
    let n = line.len();
    let mut p = 0;
    while p < n {
        let c = line[p];
        if is_space(c) {
            p += 1;
            continue;
        }
        if c != b'\'' && c != b'"' {
            let q = word_end(line, p + 1);
            out.push(Token {
                quoted: false,
                text: word_of(text, base + p..base + q),
                at: origins.of(base + p),
            });
            p = q;
            continue;
        }
        let close = (p + 1..n).find(|&q| line[q] == c && (q + 1 == n || is_space(line[q + 1])));
        match close {
            Some(q) => {
                out.push(Token {
                    quoted: true,
                    text: string_of(text, base + p + 1..base + q),
                    at: origins.of(base + p),
                });
                p = q + 1;
            }
            None => p += 1,
        }
    }
}

/// `CifBlock._process_string`: the token stream of one block (at `offset` in the text,
/// whose newlines are `newlines`).
fn tokens_of(block: &[u8], offset: usize, newlines: &Newlines) -> Vec<Token> {
    let cleaned = clean(block, offset, newlines);
    let b = &cleaned.b;
    // The block as it was (almost always): its lines end at the text's newlines, unless the
    // text has other line breaks.
    let as_written = matches!(cleaned.b, Cow::Borrowed(_)) && !newlines.cr && !newlines.other_break;
    let mut known_ends = as_written.then(|| newlines.within(offset, offset + block.len()));
    // One validation for every token (the cleaned text is ASCII, so always valid).
    let text = match std::str::from_utf8(b) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(b),
    };
    let mut origins = cleaned.origins();
    // About one token per six characters in a CIF (spare room is never touched).
    let mut tokens = Vec::with_capacity(b.len() / 6 + 8);
    let mut multiline = false;
    let mut field: Vec<CompactString> = Vec::new();
    let mut field_at = 0;
    let known_ends = known_ends
        .as_mut()
        .map(|e| e as &mut dyn Iterator<Item = usize>);
    for_each_line(b, known_ends, |mut line| {
        if multiline {
            if !line.is_empty() && b[line.start] == b';' {
                multiline = false;
                tokens.push(Token {
                    quoted: true,
                    text: field.join(" ").into(),
                    at: field_at,
                });
                field.clear();
                line = strip_range(b, line.start + 1..line.end);
            } else {
                field.push(string_of(&text, line));
                return;
            }
        }
        if !line.is_empty() && b[line.start] == b';' {
            multiline = true;
            field_at = origins.of(line.start);
            field.push(string_of(&text, strip_range(b, line.start + 1..line.end)));
        } else {
            tokenize_line(&text, line, &mut origins, &mut tokens);
        }
    });
    tokens
}

/// `CifBlock.from_str` after `_process_string`: tags, values and loops from the tokens.
pub(super) fn block_of_tokens(
    mut tokens: Vec<Token>,
    positions: &Positions,
) -> Result<PmgBlock, CifError> {
    let Some(first) = tokens.first() else {
        return Err(CifError::general("empty data block"));
    };
    let header: String = first.bare().chars().skip(5).take(74).collect();
    let mut cursor = positions.cursor();
    let mut out = PmgBlock::new(header, cursor.at(first.at));
    let is_tag = |t: &Token| t.bare().starts_with('_');
    let is_loop = |t: &Token| t.bare().starts_with("loop_");
    let n = tokens.len();
    let mut i = 1;
    while i < n {
        let bare = tokens[i].bare();
        if bare == "_eof" {
            break;
        }
        if is_tag(&tokens[i]) {
            let tag = std::mem::take(&mut tokens[i]);
            let value = match tokens.get_mut(i + 1) {
                Some(v) => value_of(std::mem::take(v), false, &mut cursor),
                None => Text {
                    s: CompactString::default(),
                    pos: cursor.at(tag.at),
                },
            };
            out.set(tag.into_bare(), Item::Scalar(value));
            i += 2;
        } else if is_loop(&tokens[i]) {
            i = read_loop(&mut tokens, i, &mut cursor, &mut out)?;
        } else {
            // A stray token: pymatgen only warns.
            i += 1;
        }
    }
    Ok(out)
}

/// A token's value, moved out of it (stripped of Python whitespace when asked; a value with
/// none to strip keeps its string). A bare word has none: it ends at whitespace on both
/// sides ([`tokenize_line`]).
fn value_of(t: Token, strip: bool, cursor: &mut PositionCursor<'_>) -> Text {
    let pos = cursor.at(t.at);
    let s = if strip && t.quoted && py_strip(&t.text).len() != t.text.len() {
        CompactString::from(py_strip(&t.text))
    } else {
        t.text
    };
    Text { s, pos }
}

/// The loop whose `loop_` is token `at`: its tags, then its values row by row into their
/// columns. Returns the index of the first token after it.
fn read_loop(
    tokens: &mut [Token],
    at: usize,
    cursor: &mut PositionCursor<'_>,
    out: &mut PmgBlock,
) -> Result<usize, CifError> {
    let loop_pos = cursor.at(tokens[at].at);
    let is_tag = |t: &Token| t.bare().starts_with('_');
    let is_loop = |t: &Token| t.bare().starts_with("loop_");
    // Each column's slot in `data` (a tag repeated in the header shares one slot, as one
    // dict key).
    let tags = tokens[at + 1..].iter().take_while(|t| is_tag(t)).count();
    let mut columns: Vec<usize> = Vec::with_capacity(tags);
    let mut i = at + 1;
    while let Some(tag) = tokens.get_mut(i).filter(|t| is_tag(t)) {
        columns.push(out.set(std::mem::take(tag).into_bare(), Item::List(Vec::new())));
        i += 1;
    }
    let first_value = i;
    let end = first_value
        + tokens[first_value..]
            .iter()
            .take_while(|t| !(is_loop(t) || is_tag(t)))
            .count();
    let values = end - first_value;
    // pymatgen divides by len(columns) and then by the row count: both must be non-zero,
    // and the values must fill whole rows.
    if columns.is_empty() {
        return Err(CifError {
            message: "loop_ without any tags (pymatgen: division by zero)".into(),
            pos: loop_pos,
        });
    }
    if values < columns.len() {
        return Err(CifError {
            message: format!(
                "loop with {} tags has {values} values, less than one row (pymatgen: division by zero)",
                columns.len(),
            ),
            pos: loop_pos,
        });
    }
    if !values.is_multiple_of(columns.len()) {
        return Err(CifError {
            message: format!(
                "loop has {} tags but {values} values, not a whole number of rows",
                columns.len(),
            ),
            pos: cursor.at(tokens[end - 1].at).or(loop_pos),
        });
    }
    let rows = values / columns.len();
    for &slot in &columns {
        if let Some(Item::List(list)) = out.item_at_mut(slot) {
            list.reserve(rows);
        }
    }
    for row in tokens[first_value..end].chunks_exact_mut(columns.len()) {
        for (&slot, t) in columns.iter().zip(row) {
            let v = value_of(std::mem::take(t), true, cursor);
            if let Some(Item::List(list)) = out.item_at_mut(slot) {
                list.push(v);
            }
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(b: &PmgBlock, k: &str) -> String {
        match b.get(k) {
            Some(Item::Scalar(t)) => t.s.to_string(),
            other => panic!("{k}: {other:?}"),
        }
    }

    #[test]
    fn blocks_tags_and_loops() {
        let text =
            "# head\ndata_a\n_cell_length_a 4.0(1) # c\nloop_\n _x\n _y\n 1 'a b'\n 2 \"c\"\n\
                    data_b\n_t\n;\nline one\nline two\n;\n";
        let blocks = pymatgen_blocks(text).unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].header, "a");
        assert_eq!(scalar(&blocks[0], "_cell_length_a"), "4.0(1)");
        let Some(Item::List(y)) = blocks[0].get("_y") else {
            panic!()
        };
        assert_eq!(y[0].s, "a b");
        assert_eq!(y[1].pos, Some(Pos { line: 8, col: 4 }));
        assert_eq!(scalar(&blocks[1], "_t"), " line one line two");
    }

    #[test]
    fn keys_are_found_by_text_past_the_slot_table_and_through_shared_prints() {
        let mut b = PmgBlock::new("x".into(), None);
        // Short keys, keys whose prints collide (same length and last seven bytes) and more
        // keys than the slot table indexes.
        let mut keys: Vec<String> = vec!["_a".into(), "".into(), "_abcdefgh".into()];
        keys.push("_Xsame_tail_1234567".into());
        keys.push("_Ysame_tail_1234567".into());
        keys.extend((0..300).map(|k| format!("_tag_{k}")));
        for (k, key) in keys.iter().enumerate() {
            let item = Item::Scalar(Text {
                s: k.to_string().into(),
                pos: None,
            });
            assert_eq!(b.set(key.as_str().into(), item), k);
        }
        assert_eq!(key_print(&keys[3]), key_print(&keys[4]));
        for (k, key) in keys.iter().enumerate() {
            assert_eq!(b.get(key).map(|i| i.index(0).is_ok()), Some(true), "{key}");
            assert_eq!(scalar(&b, key), k.to_string());
        }
        for absent in ["_b", "_tag_300", "_Zsame_tail_1234567", "_abcdefg"] {
            assert!(b.get(absent).is_none(), "{absent}");
        }
        // A repeated key keeps its place and takes the new value.
        let item = Item::Scalar(Text {
            s: "new".into(),
            pos: None,
        });
        assert_eq!(b.set("_Ysame_tail_1234567".into(), item), 4);
        assert_eq!(scalar(&b, "_Ysame_tail_1234567"), "new");
        assert_eq!(b.items().len(), keys.len());
    }

    #[test]
    fn comments_cut_through_quotes_and_crlf_works() {
        let b = &pymatgen_blocks("data_x\r\n_a 'P 1 # c'\r\n_b 2\r\n").unwrap()[0];
        // The closing quote is cut off, so the opening quote is skipped and `P` is the value.
        assert_eq!(scalar(b, "_a"), "P");
        assert_eq!(scalar(b, "_b"), "2");
        // Positions count CRLF, LF and a lone CR as one line end each, columns in characters.
        let b = &pymatgen_blocks("data_x\r\n_a 1\r_b 2\n_c é 3\n").unwrap()[0];
        let pos = |k: &str| b.get(k).and_then(Item::pos);
        assert_eq!(pos("_a"), Some(Pos { line: 2, col: 4 }));
        assert_eq!(pos("_b"), Some(Pos { line: 3, col: 4 }));
        assert_eq!(b.pos, Some(Pos { line: 1, col: 1 }));
    }

    /// The pieces pymatgen's splitting reacts to: block and loop keywords, comments, both
    /// quotes, text fields, every kind of line break and Python whitespace, non-ASCII
    /// characters (whitespace and not).
    #[cfg(not(target_arch = "wasm32"))]
    const PIECES: [&str; 35] = [
        "data_",
        "data_x",
        "data_powder_pattern",
        "_a",
        "_b",
        "_eof",
        "loop_",
        "#",
        " #",
        "'",
        "\"",
        ";",
        "\n;",
        "\n",
        "\r",
        "\r\n",
        " ",
        "\t",
        "\u{0b}",
        "\u{0c}",
        "\u{1c}",
        "\u{1e}",
        "\u{1f}",
        "\u{85}",
        "\u{a0}",
        "\u{2028}",
        "é",
        "Å",
        "1.5",
        "0.25(3)",
        "x",
        "a b",
        "Fe",
        "?",
        ".",
    ];
    /// The line breaks among [`PIECES`] other than `\n`.
    #[cfg(not(target_arch = "wasm32"))]
    const RARE_BREAKS: [&str; 6] = ["\r", "\r\n", "\u{0b}", "\u{0c}", "\u{1c}", "\u{1e}"];

    /// Texts of up to 60 [`PIECES`]; `plain` leaves out the rare line breaks (a text with any
    /// of them is split the slow way, and nearly every text of 60 pieces has one).
    #[cfg(not(target_arch = "wasm32"))]
    fn cif_like(plain: bool) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces: Vec<&str> = PIECES
            .into_iter()
            .filter(|p| !(plain && RARE_BREAKS.contains(p)))
            .collect();
        prop::collection::vec(prop::sample::select(pieces), 0..60).prop_map(|v| v.concat())
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        #[test]
        fn bytes_cut_every_text_as_characters_did(text in cif_like(false)) {
            let want = super::super::blocks_chars::pymatgen_blocks_chars(&text);
            proptest::prop_assert_eq!(pymatgen_blocks(&text), want);
        }

        #[test]
        fn texts_broken_at_newlines_only_cut_as_characters_did(text in cif_like(true)) {
            let want = super::super::blocks_chars::pymatgen_blocks_chars(&text);
            proptest::prop_assert_eq!(pymatgen_blocks(&text), want);
        }
    }

    /// Blocks [`clean`] leaves as they are, and the nearest ones it does not (a blank or
    /// whitespace line inside a text field, a comment, a non-ASCII character), against the
    /// character-level reader.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn blocks_with_nothing_to_clean_read_as_characters_did() {
        let texts = [
            "data_x\n_a 1\nloop_\n_b\n_c\n 1 'x y'\n 2 z\n",
            "data_x\n_t\n;\nline one\n   \nline two\n;\n_a 1\n",
            "data_x\n_t\n;\nline one\n\nline two\n;\n",
            "data_x\r\n_t\r\n;\r\none\r\n\r\ntwo\r\n;\r\n",
            "data_x\n_a 1 #c\n",
            "data_x\n_a \u{e9}1\n",
            "data_x\n_a 1\n\n",
        ];
        for text in texts {
            let want = super::super::blocks_chars::pymatgen_blocks_chars(text);
            assert_eq!(pymatgen_blocks(text), want, "{text:?}");
        }
        let nothing = |text: &str| {
            let b = text.as_bytes();
            nothing_to_clean(b, 0, &Newlines::of(b))
        };
        assert!(nothing(texts[0]));
        assert!(!nothing(texts[1]));
        assert!(!nothing(texts[4]));
        assert!(!nothing(texts[6]));
    }

    #[test]
    fn words_end_at_the_first_whitespace() {
        let mut rng = crate::test_rng::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut next = || rng.next_u64();
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            // Mostly word bytes, with every byte value now and then.
            let line: Vec<u8> = (0..len)
                .map(|_| match next() % 8 {
                    0 => (next() % 256) as u8,
                    _ => b'!' + (next() % 94) as u8,
                })
                .collect();
            let from = (next() % (len as u64 + 1)) as usize;
            let want = line[from..]
                .iter()
                .position(|&c| is_space(c))
                .map_or(len, |k| from + k);
            assert_eq!(word_end(&line, from), want, "{line:?} from {from}");
        }
    }

    #[test]
    fn long_tags_are_read_as_written() {
        for tag in LONG_TAGS {
            assert!(tag.len() > 24 && tag.starts_with('_'), "{tag}");
            let text = format!("{tag} x {tag}y");
            let word = word_of(&text, 0..tag.len());
            assert_eq!((word.as_str(), word.is_heap_allocated()), (tag, false));
            let longer = word_of(&text, tag.len() + 3..text.len());
            assert_eq!(longer, format!("{tag}y"));
        }
    }

    #[test]
    fn loop_errors() {
        assert!(pymatgen_blocks("data_x\nloop_\n_a\n_b\n1 2 3\n").is_err());
        assert!(pymatgen_blocks("data_x\nloop_\n_a\n").is_err());
        assert!(pymatgen_blocks("data_x\nloop_\n1 2\n").is_err());
    }
}
