//! Folding of traditional and variant Han characters to simplified ones, one character at a
//! time: the table `normalize.han_fold` applies.
//!
//! The table (`data/han-fold.txt`, made by `data/make_han_fold.py`) comes from OpenCC's
//! dictionaries: compatibility ideographs to unified ones, Taiwan and Hong Kong variant forms
//! to OpenCC's standard traditional ones, and traditional characters to simplified ones (the
//! first candidate); then from Unihan, variant forms left over (廻, 劒, 碁) to the one
//! GB 2312 character their semantic and Z variants fold to (回, 剑, 棋). It is applied
//! without context, so a character folds the same wherever it stands, and it is idempotent. Folding is many to one (後 and 后 both become 后), which
//! only makes texts that differ by script or variant characters equal; it never splits one
//! text into two.

use std::sync::OnceLock;

use crate::segment::is_han;

/// The table's text: comment lines, then one `from<TAB>to` pair per line.
const TABLE_TEXT: &str = include_str!("../data/han-fold.txt");

/// What the table is, for output metadata and the index's settings: a changed table folds
/// texts differently, so its name changes with it.
pub const HAN_FOLD_TABLE: &str = "OpenCC 5249273a3e56: TSCharacters (first candidate), \
    TWVariants and HKVariants read backwards, CJK compatibility ideographs; Unihan 15.0.0: \
    semantic and Z variants to GB 2312; 5335 characters";

/// The folding table, parsed once.
pub(crate) struct HanFold {
    /// One bit per Basic Multilingual Plane code point: set when the table folds it.
    bmp: Box<[u64; 1024]>,
    /// Every pair, in code point order of the character folded.
    pairs: Box<[(char, char)]>,
}

impl std::fmt::Debug for HanFold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HanFold({} characters)", self.pairs.len())
    }
}

impl HanFold {
    /// The table, parsed on first use.
    pub(crate) fn get() -> &'static HanFold {
        static TABLE: OnceLock<HanFold> = OnceLock::new();
        TABLE.get_or_init(|| HanFold::parse(TABLE_TEXT))
    }

    fn parse(text: &str) -> HanFold {
        let mut pairs: Vec<(char, char)> = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| {
                let mut chars = line.chars();
                let pair = (chars.next(), chars.next(), chars.next(), chars.next());
                match pair {
                    (Some(from), Some('\t'), Some(to), None) => (from, to),
                    _ => panic!("han-fold.txt: malformed line {line:?}"),
                }
            })
            .collect();
        pairs.sort_unstable();
        let mut bmp = Box::new([0u64; 1024]);
        for &(from, _) in &pairs {
            let c = from as usize;
            if c < 0x10000 {
                bmp[c / 64] |= 1 << (c % 64);
            }
        }
        HanFold { bmp, pairs: pairs.into_boxed_slice() }
    }

    /// What `c` folds to, if the table changes it.
    #[inline]
    pub(crate) fn fold(&self, c: char) -> Option<char> {
        let code = c as usize;
        if code < 0x10000 && self.bmp[code / 64] & (1 << (code % 64)) == 0 {
            return None;
        }
        let at = self.pairs.binary_search_by_key(&c, |&(from, _)| from).ok()?;
        Some(self.pairs[at].1)
    }

    /// Appends `text` to `out` with every character folded.
    #[cfg(test)]
    pub(crate) fn push_folded(&self, text: &str, out: &mut String) {
        let mut rest = text;
        while !rest.is_empty() {
            let han = self.push_han_run(rest, out);
            let other = rest[han..].chars().next().map_or(0, char::len_utf8);
            out.push_str(&rest[han..han + other]);
            rest = &rest[han + other..];
        }
    }

    /// Appends the run of Han ideographs ([`is_han`]) that starts `text` to `out`, folded,
    /// and returns its length in bytes. One pass: what needs no folding is copied in
    /// slices.
    #[inline]
    pub(crate) fn push_han_run(&self, text: &str, out: &mut String) -> usize {
        let mut copied = 0;
        for (at, c) in text.char_indices() {
            if !is_han(c) {
                out.push_str(&text[copied..at]);
                return at;
            }
            if let Some(to) = self.fold(c) {
                out.push_str(&text[copied..at]);
                out.push(to);
                copied = at + c.len_utf8();
            }
        }
        out.push_str(&text[copied..]);
        text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(text: &str) -> String {
        let mut out = String::new();
        HanFold::get().push_folded(text, &mut out);
        out
    }

    #[test]
    fn traditional_and_variants_fold_to_simplified() {
        // Traditional characters.
        assert_eq!(fold("國際關係發展"), "国际关系发展");
        // Variant forms: 眞/真, 峯/峰, 敎/教, 爲/為/为, 衆/眾/众, 閒/閑/闲, 說/説/说.
        assert_eq!(fold("眞峯敎爲為衆眾閒閑說説"), "真峰教为为众众闲闲说说");
        // Variant forms Unihan names (editions of classical poems use them): 廻/回, 劒/剑,
        // 碁/棋, 猨/猿, 覩/睹; a character of GB 2312 that is also a variant stays (沈, a
        // surname as well as a form of 沉).
        assert_eq!(fold("廻劒碁猨覩沈"), "回剑棋猿睹沈");
        // Compatibility ideographs become unified ones first (as NFKC would).
        assert_eq!(fold("\u{F900}"), fold("\u{8C48}"));
        // Characters outside the Basic Multilingual Plane are looked up too.
        let beyond = HanFold::get().pairs.iter().find(|(from, _)| *from as u32 >= 0x10000);
        let &(from, to) = beyond.expect("the table folds some supplementary characters");
        assert_eq!(fold(&from.to_string()), to.to_string());
    }

    #[test]
    fn simplified_text_and_other_scripts_are_left_alone() {
        let simplified = "中华人民共和国国务院关于发展经济的决定，我们说话";
        assert_eq!(fold(simplified), simplified);
        let other = "Hello, wörld! こんにちは 안녕하세요 1234";
        assert_eq!(fold(other), other);
    }

    #[test]
    fn the_table_is_idempotent_and_matches_its_name() {
        let table = HanFold::get();
        for &(from, to) in table.pairs.iter() {
            assert_ne!(from, to, "the table lists only characters that change");
            assert_eq!(table.fold(to), None, "{from} folds to {to}, which folds again");
        }
        assert!(HAN_FOLD_TABLE.contains(&format!("; {} characters", table.pairs.len())));
        assert!(TABLE_TEXT.contains(&format!("; {} characters.", table.pairs.len())));
        assert!(
            TABLE_TEXT.contains("Unihan\n# 15.0.0") && HAN_FOLD_TABLE.contains("Unihan 15.0.0")
        );
    }
}
