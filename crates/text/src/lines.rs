//! Lines in canonical form and their keys, for learning and leaving out boilerplate
//! ([`crate::Boilerplate`]). Every line of every web page is read here, in the pass that
//! learns templates and again when pages are stripped, so ASCII and the CJK blocks take
//! shortcuts past the standard library's table lookups, with the same result.

use neardup_core::hash::hash_bytes;

/// The bit a line's key always has (see [`line_key`]). An occurrence whose line lacks it
/// counts the line's pages by canonical URL (see [`crate::occurrences`]).
pub const CONTENT_BIT: u64 = 1 << 63;

/// The bit of a line's key that says the line ends a sentence or a clause (a paragraph, a
/// verse, a notice), as main-text selection reads it: what a page's identity is taken from
/// (see [`crate::occurrences`]). The canonical form keeps the line's last character, so
/// lines of one key end alike.
pub const PROSE_BIT: u64 = 1 << 62;

/// A line in canonical form, with its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineKey {
    /// The key: it has [`CONTENT_BIT`] and is neither marker without it.
    pub key: u64,
    /// Characters of the canonical form.
    pub chars: u32,
}

/// Reusable buffer for [`line_key`].
#[derive(Debug, Default)]
pub struct LineScratch {
    canonical: Vec<u8>,
    /// For [`crate::occurrences`]: a page's identity lines.
    pub(crate) keys: Vec<(u32, u64)>,
    /// For [`crate::Boilerplate::strip`]: a page's line keys.
    pub(crate) lines: Vec<Option<LineKey>>,
}

/// How [`line_key`] reads one character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CharClass {
    Space,
    Digit,
    Letter,
    Other,
}

/// The class of `c`, as `char::is_whitespace`, `is_numeric` and `is_alphabetic` say,
/// without their table lookups for ASCII and the ideographs and syllables that have no
/// case (the CJK Unified Ideographs, their Extension A, and Hangul syllables).
#[inline]
fn class(c: char) -> CharClass {
    if !c.is_ascii() && uncased_letter(c) { CharClass::Letter } else { std_class(c) }
}

/// The class of `c` from the standard library alone (fast for ASCII already).
#[inline]
fn std_class(c: char) -> CharClass {
    if c.is_whitespace() {
        CharClass::Space
    } else if c.is_numeric() {
        CharClass::Digit
    } else if c.is_alphabetic() {
        CharClass::Letter
    } else {
        CharClass::Other
    }
}

/// Whether `c` is a letter that is its own lower case, in the blocks of Chinese, Japanese
/// and Korean text whose characters all are (checked against the standard library for
/// every character in a test).
#[inline]
fn uncased_letter(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{AC00}'..='\u{D7A3}')
}

/// The canonical form of a line as [`line_key`] writes it.
struct Canonical<'a> {
    bytes: &'a mut Vec<u8>,
    chars: u32,
    /// The last mark written (`b' '` or `b'#'`), or 0 after anything else.
    last: u8,
    alphanumeric: bool,
}

impl Canonical<'_> {
    /// A space or a number: one for a run of them, and no space first.
    #[inline]
    fn mark(&mut self, mark: u8) {
        if mark != self.last && !(mark == b' ' && self.bytes.is_empty()) {
            self.bytes.push(mark);
            self.chars += 1;
        }
        self.last = mark;
    }

    /// Any other character, already lower-cased.
    #[inline]
    fn char(&mut self, utf8: &[u8]) {
        self.bytes.extend_from_slice(utf8);
        self.chars += 1;
        self.last = 0;
    }
}

/// What an ASCII byte is to [`line_key`]: its lower case for letters and other
/// characters, or [`ASCII_SPACE`], [`ASCII_DIGIT`] or [`ASCII_HASH`].
const ASCII: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b' ' | b'\t'..=b'\r' => ASCII_SPACE,
            b'0'..=b'9' => ASCII_DIGIT,
            b'#' => ASCII_HASH,
            other => other.to_ascii_lowercase(),
        };
        b += 1;
    }
    table
};
const ASCII_SPACE: u8 = 0x80;
const ASCII_DIGIT: u8 = 0x81;
const ASCII_HASH: u8 = 0x82;

/// Eight ASCII bytes that [`line_key`] writes in canonical form as they are, lower-cased.
struct PlainChunk {
    /// The bytes in lower case.
    lower: u64,
    /// Whether one is a letter.
    letters: bool,
}

/// Each byte of `bytes` (all below 0x80) that is at least `at_least`, as its high bit.
#[inline]
fn at_least(bytes: u64, at_least: u8) -> u64 {
    // No carry crosses a byte: a byte below 0x80 plus at most 0x80 stays below 0x100.
    bytes.wrapping_add(ONES * u64::from(0x80 - at_least)) & HIGH
}

/// Each byte of `bytes` (all below 0x80) that equals `byte`, as its high bit.
#[inline]
fn equal(bytes: u64, byte: u8) -> u64 {
    !at_least(bytes ^ (ONES * u64::from(byte)), 1) & HIGH
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `chunk`'s eight bytes (little-endian) lower-cased, when [`line_key`] would write each as
/// one character of its own: all ASCII, no control byte, digit or `#`, and no space that
/// follows a space (`last` is the mark written before the chunk). A `,` or `.` in it is
/// never part of a number, which needs a digit on its right.
#[inline]
fn plain_chunk(chunk: u64, last: u8) -> Option<PlainChunk> {
    if chunk & HIGH != 0 {
        return None;
    }
    let control = !at_least(chunk, 0x20) & HIGH;
    let digit = at_least(chunk, b'0') & !at_least(chunk, b'9' + 1);
    let space = equal(chunk, b' ');
    let after_space = (space << 8) | if last == b' ' { 0x80 } else { 0 };
    if control | digit | equal(chunk, b'#') | (space & after_space) != 0 {
        return None;
    }
    let upper = at_least(chunk, b'A') & !at_least(chunk, b'Z' + 1);
    let lower = chunk | (upper >> 2);
    let letters = at_least(lower, b'a') & !at_least(lower, b'z' + 1) != 0;
    Some(PlainChunk { lower, letters })
}

/// The key of one line, or `None` when it has no letter or digit (nothing to learn).
///
/// The canonical form lower-cases, turns whitespace runs into one space (none at either
/// end) and every number into one `#` ("1,024" and "3.5" are one number; a `#` reads as
/// a number).
pub fn line_key(line: &str, seed: u64, scratch: &mut LineScratch) -> Option<LineKey> {
    scratch.canonical.clear();
    let mut out =
        Canonical { bytes: &mut scratch.canonical, chars: 0, last: b' ', alphanumeric: false };
    let bytes = line.as_bytes();
    // "1,024": a separator between digits is part of the number.
    let separator = |at: usize, c: u8, last: u8| {
        last == b'#'
            && matches!(c, b',' | b'.')
            && line[at..].chars().next().is_some_and(|n| class(n) == CharClass::Digit)
    };
    let mut at = 0;
    // Eight plain ASCII bytes at a time (see [`plain_chunk`]); the bytes of a chunk that is
    // not plain, one character at a time.
    let mut scalar_until = 0;
    while at < bytes.len() {
        if at >= scalar_until && bytes[at].is_ascii() && at + 8 <= bytes.len() {
            let chunk = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
            if let Some(plain) = plain_chunk(chunk, out.last) {
                out.bytes.extend_from_slice(&plain.lower.to_le_bytes());
                out.chars += 8;
                out.alphanumeric |= plain.letters;
                out.last = if bytes[at + 7] == b' ' { b' ' } else { 0 };
                at += 8;
                continue;
            }
            scalar_until = at + 8;
        }
        let b = bytes[at];
        if b.is_ascii() {
            at += 1;
            match ASCII[usize::from(b)] {
                ASCII_SPACE => out.mark(b' '),
                ASCII_DIGIT => {
                    out.alphanumeric = true;
                    out.mark(b'#');
                }
                ASCII_HASH => out.mark(b'#'),
                _ if separator(at, b, out.last) => {}
                lower => {
                    out.alphanumeric |= lower.is_ascii_alphabetic();
                    out.char(&[lower]);
                }
            }
            continue;
        }
        let c = line[at..].chars().next().expect("at a character boundary");
        let width = c.len_utf8();
        let utf8 = &bytes[at..at + width];
        at += width;
        if uncased_letter(c) {
            out.alphanumeric = true;
            out.char(utf8);
            continue;
        }
        match class(c) {
            CharClass::Space => out.mark(b' '),
            CharClass::Digit => {
                out.alphanumeric = true;
                out.mark(b'#');
            }
            class => {
                out.alphanumeric |= class == CharClass::Letter;
                for lower in c.to_lowercase() {
                    out.char(lower.encode_utf8(&mut [0u8; 4]).as_bytes());
                }
            }
        }
    }
    if out.bytes.last() == Some(&b' ') {
        out.bytes.pop();
        out.chars -= 1;
    }
    let prose = if crate::main_text::ending(line) == crate::main_text::Ending::Prose {
        PROSE_BIT
    } else {
        0
    };
    let key =
        ((hash_bytes(out.bytes, seed) & !PROSE_BIT) | CONTENT_BIT | prose).max(CONTENT_BIT | 2);
    out.alphanumeric.then_some(LineKey { key, chars: out.chars })
}

impl LineKey {
    /// Whether the line ends a sentence or a clause ([`PROSE_BIT`]).
    pub fn is_prose(&self) -> bool {
        self.key & PROSE_BIT != 0
    }
}

/// The key of every line of `text` (as `str::lines` splits it), in order, into `out`:
/// what [`crate::occurrences`] and [`crate::Boilerplate::strip_lines`] read, so that a page's lines are
/// put in canonical form and hashed once for both.
pub fn line_keys(text: &str, seed: u64, scratch: &mut LineScratch, out: &mut Vec<Option<LineKey>>) {
    out.clear();
    out.extend(text.lines().map(|line| line_key(line, seed, scratch)));
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 7;

    fn key(line: &str) -> Option<LineKey> {
        line_key(line, SEED, &mut LineScratch::default())
    }

    /// [`line_key`] as it was written first, char by char through the standard library.
    fn reference_key(line: &str) -> Option<LineKey> {
        let mut canonical = String::new();
        let (mut chars, mut alphanumeric) = (0u32, false);
        let mut last = ' ';
        let mut input = line.chars().peekable();
        while let Some(c) = input.next() {
            if last == '#' && matches!(c, ',' | '.') && input.peek().is_some_and(|n| n.is_numeric())
            {
                continue;
            }
            let c = if c.is_whitespace() {
                ' '
            } else if c.is_numeric() {
                alphanumeric = true;
                '#'
            } else {
                alphanumeric |= c.is_alphabetic();
                c
            };
            if (c == ' ' || c == '#') && c == last {
                continue;
            }
            last = c;
            if c == ' ' && canonical.is_empty() {
                continue;
            }
            for lower in c.to_lowercase() {
                canonical.push(lower);
                chars += 1;
            }
        }
        if canonical.ends_with(' ') {
            canonical.pop();
            chars -= 1;
        }
        let prose = if crate::main_text::ending(line) == crate::main_text::Ending::Prose {
            PROSE_BIT
        } else {
            0
        };
        let hash = hash_bytes(canonical.as_bytes(), SEED) & !PROSE_BIT;
        let key = (hash | CONTENT_BIT | prose).max(CONTENT_BIT | 2);
        alphanumeric.then_some(LineKey { key, chars })
    }

    #[test]
    fn character_classes_agree_with_the_standard_library() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(class(c), std_class(c), "{c:?}");
            if uncased_letter(c) {
                assert!(c.to_lowercase().eq([c]), "{c:?}");
            }
        }
    }

    #[test]
    fn line_keys_agree_with_the_char_by_char_reading() {
        for line in [
            "",
            " ",
            "#",
            "5#",
            "#5",
            "5 # 5",
            "1,024.5 views",
            "1,,2",
            "1.",
            "a,1",
            "Ⅻ,5 x",
            "ΣΑΣ",
            "İstanbul",
            "ǅ",
            "ﬃ",
            "阅读 １２３ 次",
            "  Trailing  ",
            "\u{3000}全角\u{3000}",
            "٣,٤ ok",
            "한국어 텍스트",
            "x\u{85}y",
            "Straße 12,5€",
        ] {
            assert_eq!(key(line), reference_key(line), "{line:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_line_keys_as_read_char_by_char(
            line in "[ a-zA-Z0-9#,.!?()_@\\t\\r\u{3000}\u{85}ÄäΣσİǅﬃ١٢٣１２３Ⅻ中文한국ぁァ€]{0,40}"
        ) {
            proptest::prop_assert_eq!(key(&line), reference_key(&line));
        }

        /// Long ASCII lines, where most chunks of eight bytes take the plain path.
        #[test]
        fn ascii_line_keys_as_read_char_by_char(
            line in "[ a-zA-Z,.!?\\[\\]{}~\u{7f}\u{1}]{0,30}[ a-zA-Z0-9#,.\t]{0,12}[ aAzZ@`.,]{0,80}"
        ) {
            proptest::prop_assert_eq!(key(&line), reference_key(&line));
        }
    }
}
