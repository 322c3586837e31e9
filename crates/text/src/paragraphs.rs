//! Paragraphs of a document, for leaving out the passages a corpus repeats (syndicated
//! paragraphs, quoted press releases, notices and promotions) from the documents it keeps.
//!
//! A paragraph is a block of text between blank lines, or, for a web page whose text is
//! one block a line (its main text after template learning), a line. Paragraphs are
//! compared in the form features are taken from: normalised as the job normalises
//! ([`Normalizer`]: markup, NFKC, Han folding, width, case, whitespace), then as feature
//! text ([`feature_text_into`]: no spacing inside Han text, punctuation a word break), so
//! that a copy with other whitespace, full-width letters or traditional characters has the
//! paragraph's key. Only paragraphs of at least a minimum length are keyed
//! ([`PARAGRAPH_MIN_CHARS`] unless set): shorter lines (menus, bylines, headings) are left
//! to template learning.

use neardup_core::hash::hash_bytes;
use serde::{Deserialize, Serialize};

use crate::features::feature_text_into;
use crate::normalize::{NormalizeScratch, Normalizer};

/// `paragraphs.min_chars` unless set: passages of 100 characters or more, in their compared
/// form, are paragraphs, in either script (about two sentences of English, or three to four
/// of Chinese).
pub const PARAGRAPH_MIN_CHARS: u32 = 100;

/// How a document's text is cut into paragraphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// Blocks between blank lines (plain text).
    BlankLines,
    /// Every line is a block (a web page's text, one block of its HTML a line).
    Lines,
}

/// One paragraph of a document that is long enough to be compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paragraph {
    /// Its place among the document's blocks, from 0 (blocks too short to be paragraphs
    /// count too, so numbers are stable whatever the minimum).
    pub number: u32,
    /// Byte offset of its first character in the text.
    pub offset: u64,
    /// Its length in bytes in the text (without the line breaks around it).
    pub len: u64,
    /// Characters of its compared form.
    pub chars: u32,
    /// Hash of its compared form under the run's seed.
    pub key: u64,
}

/// Reusable buffers for [`Paragraphs::of`].
#[derive(Debug, Default)]
pub struct ParagraphScratch {
    normalized: String,
    compared: String,
    normalize: NormalizeScratch,
}

/// Cuts texts into paragraphs and keys them.
#[derive(Clone, Debug)]
pub struct Paragraphs {
    normalizer: Normalizer,
    drop_punctuation: bool,
    min_chars: u32,
    seed: u64,
}

impl Paragraphs {
    /// Paragraphs compared after `normalizer` (and, with `drop_punctuation`, without
    /// punctuation, as features are), of at least `min_chars` characters, keyed under
    /// `seed`.
    pub fn new(normalizer: Normalizer, drop_punctuation: bool, min_chars: u32, seed: u64) -> Self {
        Paragraphs { normalizer, drop_punctuation, min_chars, seed }
    }

    /// The paragraphs of `text`, cut into `blocks`, in order, into `out`. Returns the
    /// characters of every block of the text as compared, paragraphs or not (what a
    /// paragraph's `chars` is a share of).
    pub fn of(
        &self,
        text: &str,
        blocks: Blocks,
        scratch: &mut ParagraphScratch,
        out: &mut Vec<Paragraph>,
    ) -> u64 {
        out.clear();
        let mut total = 0u64;
        for (number, (offset, block)) in split(text, blocks).enumerate() {
            let number = u32::try_from(number).unwrap_or(u32::MAX);
            self.normalizer.normalize_into(block, &mut scratch.normalized, &mut scratch.normalize);
            feature_text_into(&scratch.normalized, self.drop_punctuation, &mut scratch.compared);
            let compared = scratch.compared.trim();
            let chars = u32::try_from(compared.chars().count()).unwrap_or(u32::MAX);
            total += u64::from(chars);
            if chars < self.min_chars.max(1) {
                continue;
            }
            out.push(Paragraph {
                number,
                offset: offset as u64,
                len: block.len() as u64,
                chars,
                key: hash_bytes(compared.as_bytes(), self.seed),
            });
        }
        total
    }
}

/// The blocks of `text` with their byte offsets: runs of lines with letters between blank
/// lines, or its lines, each without the whitespace around it. Blank blocks are skipped.
fn split(text: &str, blocks: Blocks) -> impl Iterator<Item = (usize, &str)> {
    let mut lines = text.split_inclusive('\n').scan(0, |at, line| {
        let start = *at;
        *at += line.len();
        Some((start, line))
    });
    let mut pending: Option<(usize, usize)> = None;
    std::iter::from_fn(move || {
        loop {
            let Some((start, line)) = lines.next() else {
                return pending.take().map(|(s, e)| (s, &text[s..e]));
            };
            let content = line.trim();
            if content.is_empty() {
                if blocks == Blocks::BlankLines
                    && let Some((s, e)) = pending.take()
                {
                    return Some((s, &text[s..e]));
                }
                continue;
            }
            let lead = line.len() - line.trim_start().len();
            let (s, e) = (start + lead, start + lead + content.len());
            match blocks {
                Blocks::Lines => return Some((s, &text[s..e])),
                Blocks::BlankLines => {
                    pending = Some(pending.map_or((s, e), |(first, _)| (first, e)));
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::NormalizeConfig;

    const SEED: u64 = 11;

    fn paragraphs(text: &str, blocks: Blocks, min_chars: u32) -> Vec<Paragraph> {
        let p = Paragraphs::new(Normalizer::new(NormalizeConfig::default()), true, min_chars, SEED);
        let mut out = Vec::new();
        p.of(text, blocks, &mut ParagraphScratch::default(), &mut out);
        out
    }

    fn texts<'a>(text: &'a str, found: &[Paragraph]) -> Vec<&'a str> {
        found.iter().map(|p| &text[p.offset as usize..(p.offset + p.len) as usize]).collect()
    }

    #[test]
    fn blocks_between_blank_lines_are_paragraphs_with_their_place_in_the_text() {
        let text = "Title\n\n  First line of one paragraph\nand its second line.  \n \t\n\nA second \
                    paragraph.\n\n\nThird.";
        let found = paragraphs(text, Blocks::BlankLines, 1);
        assert_eq!(
            texts(text, &found),
            [
                "Title",
                "First line of one paragraph\nand its second line.",
                "A second paragraph.",
                "Third."
            ]
        );
        assert_eq!(found.iter().map(|p| p.number).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // Lines: every line is one, blank ones skipped.
        let lines = paragraphs(text, Blocks::Lines, 1);
        assert_eq!(
            texts(text, &lines)[1..3],
            ["First line of one paragraph", "and its second line."]
        );
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn short_blocks_are_not_paragraphs_but_keep_their_numbers() {
        let long = "The harbour board met on Tuesday to hear the plans for the new ferry \
                    terminal, and residents asked about the beach path.";
        let text = format!("Home | News\n\n{long}\n\nShare this");
        let found = paragraphs(&text, Blocks::BlankLines, PARAGRAPH_MIN_CHARS);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].number, texts(&text, &found)[0]), (1, long));
        assert!(found[0].chars >= PARAGRAPH_MIN_CHARS);
    }

    /// Whitespace, full-width letters, case, traditional characters and markup do not
    /// change a paragraph's key; a changed word does.
    #[test]
    fn a_paragraph_has_one_key_through_the_noise_normalisation_removes() {
        let key = |text: &str| paragraphs(text, Blocks::BlankLines, 10)[0].key;
        let zh = "国务院新闻办公室今天举行发布会，介绍今年前三季度国民经济运行情况。";
        let spaced = "国务院新闻办公室 今天举行发布会， 介绍今年前三季度\n国民经济运行情况。";
        let traditional = "國務院新聞辦公室今天舉行發布會，介紹今年前三季度國民經濟運行情況。";
        assert_eq!(key(zh), key(spaced));
        assert_eq!(key(zh), key(traditional));
        let en = "The Harbour Board met on Tuesday to hear the plans.";
        let wide = "Ｔｈｅ harbour board  met on <b>Tuesday</b> to hear the plans.";
        assert_eq!(key(en), key(wide));
        assert_ne!(key(en), key("The Harbour Board met on Monday to hear the plans."));
        assert_ne!(
            key(zh),
            key("国务院新闻办公室今天举行发布会，介绍今年前两季度国民经济运行情况。")
        );
    }

    #[test]
    fn the_minimum_counts_characters_of_either_script() {
        let zh: String = "经济运行总体平稳。".repeat(13);
        let found = paragraphs(&zh, Blocks::Lines, PARAGRAPH_MIN_CHARS);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].chars, 104, "the full stops are word breaks, not characters");
        assert!(paragraphs(&zh, Blocks::Lines, 105).is_empty());
        assert_eq!(found[0].len as usize, zh.len());
    }
}
