//! Features: character n-grams, word shingles or words, hashed to 64 bits under the job
//! seed, with per-document counts capped by the over-frequency limit.

use neardup_core::hash::{SeedPurpose, derive_seed, hash_bytes, hash_u64s};
use serde::{Deserialize, Serialize};

use crate::normalize::push_ascii;
use crate::segment::{Segmenter, is_han, is_punctuation_or_symbol, is_unspaced_script};
use crate::stopwords::is_stop_word;

/// What a feature is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FeatureKind {
    /// Overlapping runs of characters of the feature text, one starting at each character:
    /// `ngram_chars` characters long, or `han_ngram_chars` where the text is Han, Hiragana
    /// or Katakana (scripts written without spaces, where a character carries about what a
    /// word of English does). Each character of those scripts fills `1 / han_ngram_chars` of
    /// an n-gram and any other character (a letter, a digit, a space) `1 / ngram_chars`; the
    /// n-gram runs until its characters fill it, so where scripts meet it takes some of
    /// each. Digits count as letters inside Han text too: see [`FeatureConfig::han_ngram_chars`].
    #[default]
    CharNgrams,
    /// Overlapping runs of `shingle_words` words (stop words removed).
    WordShingles,
    /// Single words (stop words removed).
    Words,
}

/// Characters per n-gram where `ngram_chars` is unset.
pub const DEFAULT_NGRAM_CHARS: usize = 5;

/// Characters per n-gram of Han, Hiragana or Katakana where `han_ngram_chars` is unset
/// (`None` would mean `ngram_chars`, one length for every script). It applies where it is
/// not more than `ngram_chars`.
///
/// This is MinHash's default in the neardup job: 2, a Chinese character carrying about
/// what an English word does. Chosen by the rule defaults follow (pair precision at least
/// 0.99 and documents removed for one the truth says differs at most 0.5% of those removed,
/// on every design set; then the highest mean recall, Chinese pairs counted as much as
/// English ones) on the design sets `bash bench/siteset.sh 1`, `2` and `1 zh`, `bash
/// bench/editset.sh 7` and `bash bench/webset.sh`: mean recall 0.93 with 2, 0.92 with 3 and
/// 0.91 with 5, every set within the rule (siteset mixed seed 1: Chinese recall 0.950
/// instead of 0.891, English 0.940 either way; editset 0.935 instead of 0.862). Reference
/// numbers keep the formulas that differ only in a docket number apart (see
/// `references.rs`).
pub const DEFAULT_HAN_NGRAM_CHARS: Option<usize> = Some(2);

/// `max_feature_count` when unset: a feature counts at most this many times in one document.
pub const MAX_FEATURE_COUNT: u32 = 10;

/// How documents become feature sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FeatureConfig {
    /// The kind of feature.
    pub kind: FeatureKind,
    /// Characters per n-gram, for `char_ngrams`; unset means [`DEFAULT_NGRAM_CHARS`] (the
    /// neardup job sets it by method: see `neardup_job::JobSpec::feature_config`).
    pub ngram_chars: Option<usize>,
    /// Characters per n-gram of Han, Hiragana or Katakana, for `char_ngrams` (see
    /// [`FeatureKind::CharNgrams`]): one changed Han character then changes
    /// `han_ngram_chars` n-grams instead of `ngram_chars`. Unset means
    /// [`DEFAULT_HAN_NGRAM_CHARS`] (the neardup job sets it by method); equal to
    /// `ngram_chars`, every n-gram has `ngram_chars` characters whatever the script, as
    /// when it is unset. Digits inside Han text fill an n-gram as they do in English: an
    /// n-gram that reaches a number (a date, the 77 of a docket number 第77号) takes more of
    /// it and of what follows than if digits counted as Han, so two texts that differ only
    /// in a number share no more n-grams than they would under that rule.
    pub han_ngram_chars: Option<usize>,
    /// Words per shingle, for `word_shingles`.
    pub shingle_words: usize,
    /// Drop the built-in English and Chinese stop words from word features.
    pub stop_words: bool,
    /// The over-frequency cap: a feature counts at most this many times in one document
    /// (this bounds SimHash weights; MinHash uses sets and ignores counts). Unset means
    /// [`MAX_FEATURE_COUNT`] (the neardup job sets it for web pages under SimHash).
    pub max_feature_count: Option<u32>,
    /// Documents with fewer distinct features are not near-duplicate matched (only exact
    /// duplicates are found for them), since tiny feature sets collide with everything.
    pub min_features: usize,
    /// Let jieba's HMM join Han characters that are not in its dictionary.
    pub jieba_hmm: bool,
    /// Treat punctuation and symbols as word breaks, so they are in no feature.
    pub drop_punctuation: bool,
}

impl Default for FeatureConfig {
    fn default() -> Self {
        FeatureConfig {
            kind: FeatureKind::CharNgrams,
            ngram_chars: None,
            han_ngram_chars: None,
            shingle_words: 3,
            stop_words: true,
            max_feature_count: None,
            min_features: 5,
            jieba_hmm: true,
            drop_punctuation: true,
        }
    }
}

impl FeatureConfig {
    /// Characters per n-gram: `ngram_chars`, or [`DEFAULT_NGRAM_CHARS`] when unset.
    pub fn ngram_chars(&self) -> usize {
        self.ngram_chars.unwrap_or(DEFAULT_NGRAM_CHARS)
    }

    /// The over-frequency cap: `max_feature_count`, or [`MAX_FEATURE_COUNT`] when unset.
    pub fn max_feature_count(&self) -> u32 {
        self.max_feature_count.unwrap_or(MAX_FEATURE_COUNT)
    }

    /// Characters per n-gram of Han, Hiragana or Katakana: `han_ngram_chars`, or when unset
    /// [`DEFAULT_HAN_NGRAM_CHARS`] (see [`default_han_ngram_chars`]).
    pub fn han_ngram_chars(&self) -> usize {
        let n = self.ngram_chars();
        self.han_ngram_chars.unwrap_or_else(|| default_han_ngram_chars(DEFAULT_HAN_NGRAM_CHARS, n))
    }

    /// What the features are, for people: `5-grams (Han 2-grams)`, `5-grams`, `3-word
    /// shingles` or `words`.
    pub fn describe(&self) -> String {
        match self.kind {
            FeatureKind::CharNgrams => {
                let (n, han) = (self.ngram_chars(), self.han_ngram_chars());
                if n == han { format!("{n}-grams") } else { format!("{n}-grams (Han {han}-grams)") }
            }
            FeatureKind::WordShingles => format!("{}-word shingles", self.shingle_words),
            FeatureKind::Words => "words".to_string(),
        }
    }
}

/// The Han n-gram length a default `by_default` gives with n-grams of `ngram_chars`: the
/// same as theirs when `None`, else the default but not more than theirs.
pub fn default_han_ngram_chars(by_default: Option<usize>, ngram_chars: usize) -> usize {
    by_default.map_or(ngram_chars, |han| han.min(ngram_chars))
}

/// A document's features: distinct hashes in the order of their first occurrence, each with
/// its count in the document capped at `max_feature_count`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    hashes: Vec<u64>,
    counts: Vec<u32>,
}

impl Features {
    /// Distinct feature hashes, in the order of their first occurrence (use
    /// [`Features::sorted_hashes`] for ascending order).
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// The distinct feature hashes in ascending order (what [`neardup_core::jaccard_sorted`]
    /// takes).
    pub fn sorted_hashes(&self) -> Vec<u64> {
        let mut sorted = self.hashes.clone();
        sorted.sort_unstable();
        sorted
    }

    /// Capped counts, parallel to [`Features::hashes`].
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Number of distinct features.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when the document has no features.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Adds a feature that is not among the document's shingles (a reference number's:
    /// see `references.rs`), counted once.
    pub(crate) fn push_distinct(&mut self, hash: u64) {
        self.hashes.push(hash);
        self.counts.push(1);
    }

    /// Moves the distinct hashes out, leaving this empty.
    pub fn take_hashes(&mut self) -> Vec<u64> {
        self.counts.clear();
        std::mem::take(&mut self.hashes)
    }
}

/// Reusable buffers for [`FeatureExtractor::extract`].
#[derive(Debug, Default)]
pub struct FeatureScratch {
    offsets: Vec<usize>,
    raw: Vec<u64>,
    words: Vec<u64>,
    counter: Counter,
}

/// Turns feature text into [`Features`].
#[derive(Clone, Debug)]
pub struct FeatureExtractor {
    config: FeatureConfig,
    seed: u64,
    shingle_seed: u64,
    segmenter: Option<Segmenter>,
    widths: Widths,
}

impl FeatureExtractor {
    /// An extractor for `config` under job seed `seed`. Word features need a segmenter;
    /// pass `None` for character n-grams.
    ///
    /// # Panics
    /// If `config.kind` needs words and `segmenter` is `None`, or a size is zero (the job
    /// configuration checks both first).
    pub fn new(config: FeatureConfig, seed: u64, segmenter: Option<Segmenter>) -> Self {
        assert!(
            config.kind == FeatureKind::CharNgrams || segmenter.is_some(),
            "word features need a segmenter"
        );
        let (n, han) = (config.ngram_chars(), config.han_ngram_chars());
        assert!(n > 0 && han > 0 && config.shingle_words > 0, "feature sizes must be positive");
        FeatureExtractor {
            seed: derive_seed(seed, SeedPurpose::Feature, 0),
            shingle_seed: derive_seed(seed, SeedPurpose::Feature, config.shingle_words as u64),
            widths: Widths::new(n, han),
            config,
            segmenter,
        }
    }

    /// Whether this configuration needs word segmentation.
    pub fn needs_segmenter(config: &FeatureConfig) -> bool {
        config.kind != FeatureKind::CharNgrams
    }

    /// The configuration.
    pub fn config(&self) -> &FeatureConfig {
        &self.config
    }

    /// The hash of one word as a feature, as [`FeatureExtractor::extract`] computes it for
    /// `words` features.
    pub fn word_hash(&self, word: &str) -> u64 {
        hash_bytes(word.as_bytes(), self.seed)
    }

    /// Extracts the features of `feature_text` (see [`feature_text_into`]) into `out`.
    pub fn extract(&self, feature_text: &str, out: &mut Features, scratch: &mut FeatureScratch) {
        let counter = &mut scratch.counter;
        let cap = self.config.max_feature_count().max(1);
        match self.config.kind {
            FeatureKind::CharNgrams => {
                let bytes = feature_text.as_bytes();
                if feature_text.is_ascii() {
                    // One byte per character, none of an unspaced script: the n-grams are
                    // the byte windows of `ngram_chars`.
                    let n = self.config.ngram_chars();
                    let raw = &mut scratch.raw;
                    raw.clear();
                    raw.extend(bytes.windows(n).map(|w| hash_bytes(w, self.seed)));
                    counter.add_all(raw, cap, out);
                } else if self.widths.is_uniform() {
                    // One length for every script: the n-grams are windows of characters.
                    let n = self.config.ngram_chars();
                    let offsets = &mut scratch.offsets;
                    offsets.clear();
                    offsets.extend(feature_text.char_indices().map(|(i, _)| i));
                    offsets.push(feature_text.len());
                    let raw = &mut scratch.raw;
                    raw.clear();
                    raw.extend(
                        offsets.windows(n + 1).map(|w| hash_bytes(&bytes[w[0]..w[n]], self.seed)),
                    );
                    counter.add_all(raw, cap, out);
                } else {
                    let raw = &mut scratch.raw;
                    raw.clear();
                    self.widths.for_each_ngram(feature_text, |start, end| {
                        raw.push(hash_bytes(&bytes[start..end], self.seed));
                    });
                    counter.add_all(raw, cap, out);
                }
            }
            FeatureKind::Words | FeatureKind::WordShingles => {
                let segmenter = self.segmenter.as_ref().expect("checked in new");
                let words = &mut scratch.words;
                words.clear();
                segmenter.for_each_word(feature_text, |w| {
                    if !(self.config.stop_words && is_stop_word(w)) {
                        words.push(hash_bytes(w.as_bytes(), self.seed));
                    }
                });
                let raw = &mut scratch.raw;
                raw.clear();
                if self.config.kind == FeatureKind::Words {
                    raw.extend_from_slice(words);
                } else {
                    let k = self.config.shingle_words;
                    raw.extend(words.windows(k).map(|w| hash_u64s(w, self.shingle_seed)));
                }
                counter.add_all(raw, cap, out);
            }
        }
    }
}

/// How much of a character n-gram each character fills, in integers: a character of an
/// unspaced script (Han, Hiragana, Katakana) `1 / han_ngram_chars` and any other
/// `1 / ngram_chars`, both times `ngram_chars * han_ngram_chars`, which a full n-gram
/// reaches. Only the character itself decides: digits and Latin letters inside Han text
/// fill as they do in English (see [`FeatureConfig::han_ngram_chars`]).
#[derive(Clone, Copy, Debug)]
struct Widths {
    /// What a character of an unspaced script fills: `ngram_chars`.
    unspaced: u32,
    /// What any other character fills: `han_ngram_chars`.
    other: u32,
    /// What a full n-gram holds: their product.
    full: u32,
}

impl Widths {
    /// The widths for n-grams of `ngram_chars` characters, `han_ngram_chars` in unspaced
    /// scripts (both positive; the job checks them to at most 64).
    fn new(ngram_chars: usize, han_ngram_chars: usize) -> Self {
        let size = |n: usize| u32::try_from(n).expect("an n-gram length fits 32 bits");
        let (unspaced, other) = (size(ngram_chars), size(han_ngram_chars));
        let full = unspaced.checked_mul(other).expect("n-gram lengths whose product fits 32 bits");
        Widths { unspaced, other, full }
    }

    /// Whether every character has the same width: the n-grams are then the windows of
    /// `ngram_chars` characters.
    fn is_uniform(&self) -> bool {
        self.unspaced == self.other
    }

    /// What `c` fills.
    #[inline]
    fn of(&self, c: char) -> u32 {
        if is_unspaced_script(c) { self.unspaced } else { self.other }
    }

    /// Calls `f` with the byte range of `text`'s n-gram starting at each character, in
    /// order: the shortest run of characters from there that fills an n-gram. Where the
    /// rest of the text cannot fill one, no more n-grams start (a text that cannot fill one
    /// has none). One pass: the n-gram's end moves on as its start does.
    #[inline]
    fn for_each_ngram(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        let mut ends = text.char_indices();
        // `filled` is the width of the characters from the start to before `end`.
        let (mut end, mut filled) = (0, 0);
        for (start, c) in text.char_indices() {
            while filled < self.full {
                let Some((at, next)) = ends.next() else { return };
                filled += self.of(next);
                end = at + next.len_utf8();
            }
            f(start, end);
            filled -= self.of(c);
        }
    }
}

/// Counts distinct feature hashes into [`Features`], in the order of their first
/// occurrence: an open-addressing table (linear probing) with at least four times as many
/// slots as values, each slot holding a position in the output plus one (0 is free). A
/// document of fewer than 2^14 values has a table of two bytes a slot, any other one of
/// four: small slots keep the table of a typical document in the L1 cache. The hashes are
/// uniform, so their low bits index it directly.
#[derive(Debug, Default)]
struct Counter {
    small: Vec<u16>,
    large: Vec<u32>,
}

/// A slot of a [`Counter`]'s table.
trait Slot: Copy + Default {
    fn position(self) -> usize;
    fn of(position: usize) -> Self;
}

impl Slot for u16 {
    #[inline(always)]
    fn position(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn of(position: usize) -> Self {
        u16::try_from(position).expect("a small table holds under 2^14 features")
    }
}

impl Slot for u32 {
    #[inline(always)]
    fn position(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn of(position: usize) -> Self {
        u32::try_from(position).expect("under 2^32 features")
    }
}

impl Counter {
    /// Values below this take the table of two-byte slots.
    const SMALL: usize = 1 << 14;

    /// Empties `out` and counts each of `hashes` into it in order, capping counts at `cap`.
    fn add_all(&mut self, hashes: &[u64], cap: u32, out: &mut Features) {
        out.hashes.clear();
        out.counts.clear();
        if hashes.len() < Self::SMALL {
            count_into(&mut self.small, hashes, cap, out);
        } else {
            count_into(&mut self.large, hashes, cap, out);
        }
    }
}

/// [`Counter::add_all`] with the table `slots`, sized here. The slot of the hash a few
/// places ahead is read before each one is counted: that read, which nothing waits for,
/// has it in cache by the time it is counted when the table is larger than the cache.
fn count_into<S: Slot>(slots: &mut Vec<S>, hashes: &[u64], cap: u32, out: &mut Features) {
    const AHEAD: usize = 8;
    let size = (4 * hashes.len()).next_power_of_two().max(16);
    slots.clear();
    slots.resize(size, S::default());
    let mask = size - 1;
    for (i, &hash) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(i + AHEAD) {
            std::hint::black_box(slots[ahead as usize & mask]);
        }
        let mut at = hash as usize & mask;
        loop {
            let slot = slots[at].position();
            if slot == 0 {
                out.hashes.push(hash);
                out.counts.push(1);
                slots[at] = S::of(out.hashes.len());
                break;
            }
            if out.hashes[slot - 1] == hash {
                let count = &mut out.counts[slot - 1];
                *count = (*count + 1).min(cap);
                break;
            }
            at = (at + 1) & mask;
        }
    }
}

impl FeatureExtractor {
    /// The distinct features of `feature_text` with a readable label each (the n-gram, the
    /// word, or the shingle's words joined by spaces), sorted by hash: the same hashes as
    /// [`FeatureExtractor::extract`], for explaining a match.
    pub fn labelled(&self, feature_text: &str) -> Vec<(u64, String)> {
        let mut out: Vec<(u64, String)> = Vec::new();
        match self.config.kind {
            FeatureKind::CharNgrams => {
                self.widths.for_each_ngram(feature_text, |start, end| {
                    let gram = &feature_text[start..end];
                    out.push((hash_bytes(gram.as_bytes(), self.seed), gram.to_string()));
                });
            }
            FeatureKind::Words | FeatureKind::WordShingles => {
                let segmenter = self.segmenter.as_ref().expect("checked in new");
                let mut words: Vec<(u64, &str)> = Vec::new();
                segmenter.for_each_word(feature_text, |w| {
                    if !(self.config.stop_words && is_stop_word(w)) {
                        words.push((hash_bytes(w.as_bytes(), self.seed), w));
                    }
                });
                if self.config.kind == FeatureKind::Words {
                    out.extend(words.iter().map(|(h, w)| (*h, (*w).to_string())));
                } else {
                    let k = self.config.shingle_words;
                    for window in words.windows(k) {
                        let hashes: Vec<u64> = window.iter().map(|(h, _)| *h).collect();
                        let label: Vec<&str> = window.iter().map(|(_, w)| *w).collect();
                        out.push((hash_u64s(&hashes, self.shingle_seed), label.join(" ")));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup_by_key(|(h, _)| *h);
        out
    }
}

/// Builds the text features are taken from: whitespace runs become one space, no space is
/// kept next to Han, Hiragana or Katakana, where spacing carries no meaning, and with
/// `drop_punctuation` punctuation and symbols become word breaks too (`你好，世界` and
/// `你好 世界` both give `你好世界`).
pub fn feature_text_into(normalized: &str, drop_punctuation: bool, out: &mut String) {
    out.clear();
    out.reserve(normalized.len());
    // A break writes a space at once when one may follow what is there (text that is not
    // unspaced script, and no space yet); the space is taken back when an unspaced
    // character or the end follows.
    let mut space_allowed = false;
    let mut rest = normalized;
    let mut ascii = Vec::new();
    let table = &ASCII_BREAKS[usize::from(drop_punctuation)];
    while !rest.is_empty() {
        let run = crate::normalize::ascii_prefix(rest);
        if run > 0 {
            // Breaks map to a space, which is left out where it would repeat one.
            let mut space_before = !space_allowed;
            push_ascii(&rest[..run], table, &mut space_before, &mut ascii, out);
            space_allowed = !space_before;
            rest = &rest[run..];
            continue;
        }
        // A run of Han ideographs is copied whole: letters of an unspaced script.
        let han = crate::normalize::han_prefix(rest);
        if han > 0 {
            if out.ends_with(' ') {
                out.pop();
            }
            out.push_str(&rest[..han]);
            rest = &rest[han..];
            space_allowed = false;
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        rest = chars.as_str();
        // Han ideographs are letters: most characters of Chinese text skip the
        // general-category lookup.
        let (breaks, unspaced) = if is_han(c) {
            (false, true)
        } else {
            let breaks = c.is_whitespace() || (drop_punctuation && is_punctuation_or_symbol(c));
            (breaks, is_unspaced_script(c))
        };
        if breaks {
            if space_allowed {
                out.push(' ');
            }
            space_allowed = false;
            continue;
        }
        if unspaced && out.ends_with(' ') {
            out.pop();
        }
        out.push(c);
        space_allowed = !unspaced;
    }
    if out.ends_with(' ') {
        out.pop();
    }
}

/// What each ASCII byte becomes in feature text, as [`push_ascii`] takes it: whitespace
/// (as [`char::is_whitespace`] has it) is a break, written as a space; so is punctuation
/// with `drop_punctuation` (the second table).
const ASCII_BREAKS: [[u16; 128]; 2] = {
    let mut tables = [[0u16; 128]; 2];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        let space = matches!(byte, b' ' | b'\t'..=b'\r');
        let kept = if space { 0x100 | b' ' as u16 } else { byte as u16 };
        tables[0][b] = kept;
        tables[1][b] = if byte.is_ascii_punctuation() { 0x100 | b' ' as u16 } else { kept };
        b += 1;
    }
    tables
};

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn feature_text(s: &str) -> String {
        let mut out = String::new();
        feature_text_into(s, true, &mut out);
        out
    }

    fn extract(config: FeatureConfig, text: &str) -> Features {
        let seg = FeatureExtractor::needs_segmenter(&config).then(|| Segmenter::new(true));
        let ex = FeatureExtractor::new(config, 7, seg);
        let mut out = Features::default();
        ex.extract(&feature_text(text), &mut out, &mut FeatureScratch::default());
        out
    }

    /// The naive twin of [`feature_text_into`]: one character at a time.
    fn naive_feature_text(normalized: &str, drop_punctuation: bool) -> String {
        let mut out = String::new();
        let (mut pending_break, mut last_unspaced) = (false, false);
        for c in normalized.chars() {
            if c.is_whitespace() || (drop_punctuation && is_punctuation_or_symbol(c)) {
                pending_break = true;
                continue;
            }
            let unspaced = is_unspaced_script(c);
            if pending_break && !out.is_empty() && !unspaced && !last_unspaced {
                out.push(' ');
            }
            pending_break = false;
            out.push(c);
            last_unspaced = unspaced;
        }
        out
    }

    #[test]
    fn han_ideographs_are_letters() {
        let ranges = [
            0x3400..=0x4DBF,
            0x4E00..=0x9FFF,
            0xF900..=0xFAFF,
            0x20000..=0x2FA1F,
            0x30000..=0x323AF,
        ];
        for c in ranges.into_iter().flatten().filter_map(char::from_u32).filter(|c| is_han(*c)) {
            assert!(!c.is_whitespace() && !is_punctuation_or_symbol(c), "{c:?}");
        }
    }

    #[test]
    fn feature_text_drops_punctuation_and_cjk_spacing() {
        assert_eq!(feature_text("你好，世界！"), "你好世界");
        assert_eq!(feature_text("你好 世界"), "你好世界");
        assert_eq!(feature_text("hello,world -- again"), "hello world again");
        assert_eq!(feature_text("rust 程序 code"), "rust程序code");
        assert_eq!(feature_text("  ...  "), "");
        let mut kept = String::new();
        feature_text_into("你好，世界! ok", false, &mut kept);
        assert_eq!(kept, "你好，世界! ok");
    }

    /// Naive twin of character n-grams: collect the n-gram strings and count them.
    fn naive_char_ngrams(text: &str, n: usize, cap: u32) -> BTreeMap<u64, u32> {
        let seed = derive_seed(7, SeedPurpose::Feature, 0);
        let chars: Vec<char> = feature_text(text).chars().collect();
        let mut counts = BTreeMap::new();
        if chars.len() >= n {
            for i in 0..=chars.len() - n {
                let gram: String = chars[i..i + n].iter().collect();
                let c = counts.entry(hash_bytes(gram.as_bytes(), seed)).or_insert(0);
                *c = (*c + 1).min(cap);
            }
        }
        counts
    }

    /// Naive twin of character n-grams whose length follows the script: from each
    /// character, take characters one at a time until `a / han + b / n` reaches one, where `a`
    /// of them are of an unspaced script (as `unspaced` says) and `b` are not; the labels
    /// with their capped counts.
    fn naive_shingles(
        text: &str,
        n: usize,
        han: usize,
        cap: u32,
        unspaced: impl Fn(char) -> bool,
    ) -> BTreeMap<String, u32> {
        let chars: Vec<char> = feature_text(text).chars().collect();
        let mut counts = BTreeMap::new();
        for start in 0..chars.len() {
            let (mut a, mut b) = (0, 0);
            for end in start..chars.len() {
                if unspaced(chars[end]) {
                    a += 1;
                } else {
                    b += 1;
                }
                // a / han + b / n >= 1, multiplied out.
                if a * n + b * han >= n * han {
                    let gram: String = chars[start..=end].iter().collect();
                    let c = counts.entry(gram).or_insert(0);
                    *c = (*c + 1).min(cap);
                    break;
                }
            }
        }
        counts
    }

    fn config(n: usize, han: usize) -> FeatureConfig {
        FeatureConfig { ngram_chars: Some(n), han_ngram_chars: Some(han), ..Default::default() }
    }

    /// The labels of the features of `text`, as `labelled` gives them.
    fn labels(config: FeatureConfig, text: &str) -> Vec<String> {
        let ex = FeatureExtractor::new(config, 7, None);
        let mut labels: Vec<String> =
            ex.labelled(&feature_text(text)).into_iter().map(|(_, l)| l).collect();
        labels.sort();
        labels
    }

    fn sorted(labels: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn ngram_length_follows_the_script() {
        // Latin text: 5-grams, whatever the Han length (non-ASCII too).
        let latin = "le café noir";
        let expected: Vec<String> =
            naive_shingles(latin, 5, 5, 10, |_| false).into_keys().collect();
        assert_eq!(labels(config(5, 2), latin), expected);
        assert_eq!(labels(config(5, 2), "a café"), sorted(&["a caf", " café"]));
        // Han text: 2-grams.
        assert_eq!(labels(config(5, 2), "我们的程序"), sorted(&["我们", "们的", "的程", "程序"]));
        assert_eq!(labels(config(5, 3), "我们的程序"), sorted(&["我们的", "们的程", "的程序"]));
        // Kana is unspaced too.
        assert_eq!(labels(config(5, 2), "ひらがな"), sorted(&["ひら", "らが", "がな"]));
        // Where scripts meet, an n-gram takes some of each: Latin characters fill 2/10 of
        // it, Han ones 5/10.
        assert_eq!(
            labels(config(5, 2), "rust程序code"),
            sorted(&["rust程", "ust程", "st程序", "t程序", "程序", "序cod"])
        );
        // Equal lengths: the n-grams of old.
        assert_eq!(labels(config(3, 3), "ab程序c"), sorted(&["ab程", "b程序", "程序c"]));
    }

    #[test]
    fn unset_han_ngrams_follow_the_default() {
        for n in [1, 2, 5, 9] {
            let unset = FeatureConfig { ngram_chars: Some(n), ..Default::default() };
            assert_eq!(
                unset.han_ngram_chars(),
                default_han_ngram_chars(DEFAULT_HAN_NGRAM_CHARS, n)
            );
            assert_eq!(default_han_ngram_chars(None, n), n);
            assert_eq!(default_han_ngram_chars(Some(2), n), n.min(2));
            let set = FeatureConfig { han_ngram_chars: Some(7), ..unset };
            assert_eq!(set.han_ngram_chars(), 7, "a set length is taken as set");
        }
        let describe = |n, han| config(n, han).describe();
        assert_eq!(describe(5, 2), "5-grams (Han 2-grams)");
        assert_eq!(describe(4, 4), "4-grams");
        let words = FeatureConfig { kind: FeatureKind::WordShingles, ..Default::default() };
        assert_eq!(words.describe(), "3-word shingles");
    }

    #[test]
    fn text_that_fills_no_ngram_has_no_features() {
        for (text, expected) in [("中", 0), ("ab中", 0), ("ab中文", 3), ("中文", 1), ("abcd", 0)]
        {
            assert_eq!(extract(config(5, 2), text).len(), expected, "{text}");
        }
        assert!(extract(config(5, 3), "中文").is_empty());
    }

    /// Digits count as letters inside Han text: an n-gram that reaches a number spans
    /// more of it and of what follows than a Han-width digit would.
    #[test]
    fn digits_in_han_text_fill_ngrams_as_letters() {
        assert_eq!(
            labels(config(5, 2), "于2016年4月20日"),
            sorted(&["于201", "2016年", "016年", "16年4", "6年4月", "年4月", "4月20", "月20日"])
        );
        assert_eq!(
            labels(config(5, 2), "作出第77号判决"),
            sorted(&["作出", "出第", "第77号", "77号判", "7号判", "号判", "判决"])
        );
    }

    /// Jaccard of the distinct labels of two texts.
    fn jaccard(a: &BTreeMap<String, u32>, b: &BTreeMap<String, u32>) -> f64 {
        let shared = a.keys().filter(|k| b.contains_key(*k)).count();
        shared as f64 / (a.len() + b.len() - shared) as f64
    }

    /// Texts that differ only in a number (two court formulas with other docket numbers,
    /// two dates) are no more alike than if digits took the width of the Han around them,
    /// and strictly less alike when a number keeps some of its digits.
    #[test]
    fn texts_that_differ_in_a_number_are_no_more_alike_than_with_han_width_digits() {
        let pairs = [
            ("本院依法作出第77号行政判决书原告不服", "本院依法作出第83号行政判决书原告不服"),
            ("本院依法作出第177号行政判决书原告不服", "本院依法作出第183号行政判决书原告不服"),
            ("原告于2016年4月20日自愿撤回起诉", "原告于2016年4月21日自愿撤回起诉"),
            ("（2011）辰行初字第21号行政判决书", "（2011）辰行初字第30号行政判决书"),
        ];
        let mut less = 0;
        for (a, b) in pairs {
            for han in [2, 3] {
                let chosen = |t| naive_shingles(t, 5, han, 10, is_unspaced_script);
                let han_digits = |t| {
                    naive_shingles(t, 5, han, 10, |c: char| {
                        is_unspaced_script(c) || c.is_ascii_digit()
                    })
                };
                let (j, j_han) =
                    (jaccard(&chosen(a), &chosen(b)), jaccard(&han_digits(a), &han_digits(b)));
                assert!(j <= j_han, "{a} / {b}, Han {han}: {j} > {j_han}");
                less += usize::from(j < j_han);
                // The extractor takes the chosen rule.
                let found: BTreeMap<String, u32> =
                    labels(config(5, han), a).into_iter().map(|l| (l, 0)).collect();
                assert_eq!(found.keys().collect::<Vec<_>>(), chosen(a).keys().collect::<Vec<_>>());
            }
        }
        assert!(less >= 4, "{less}");
    }

    /// A format pin: the features of a mixed text as 5-grams and Han 2-grams under seed 7.
    /// If this changes, bump `SIGNATURE_VERSION` and note it in the changelog.
    #[test]
    fn pinned_features() {
        let f = extract(config(5, 2), "Court 第77号 判决 in 2016年");
        assert_eq!(f.hashes(), PINNED_FEATURES);
        // English text signs as under signature version 6 (5-grams, the same hashes).
        let english = extract(FeatureConfig::default(), "the court ruled");
        assert_eq!(english.hashes(), PINNED_ENGLISH);
    }
    const PINNED_FEATURES: &[u64] = &[
        1_006_119_114_894_327_406,
        83_371_209_492_781_383,
        18_163_036_949_027_626_184,
        11_315_808_149_321_056_161,
        3_915_864_322_646_032_837,
        10_956_821_744_080_517_353,
        6_275_899_618_252_065_552,
        9_725_196_980_382_331_768,
        5_400_969_127_683_684_417,
        14_658_832_515_801_116_394,
        7_548_184_612_647_300_076,
        10_048_860_590_092_733_974,
        8_640_129_468_461_804_425,
        6_756_907_877_228_347_149,
        17_569_486_417_983_508_720,
        9_303_610_134_022_755_008,
    ];
    const PINNED_ENGLISH: &[u64] = &[
        13_365_311_571_671_141_008,
        18_330_989_978_558_695_215,
        567_071_595_169_100_658,
        4_578_255_205_433_763_470,
        14_424_215_937_915_842_747,
        6_474_752_352_404_651_017,
        3_833_864_444_567_076_981,
        9_764_198_787_443_129_388,
        10_269_250_995_509_705_262,
        17_832_106_403_894_037_314,
        8_212_301_241_961_672_729,
    ];

    #[test]
    fn char_ngrams_count_and_cap() {
        let config = FeatureConfig {
            ngram_chars: Some(2),
            max_feature_count: Some(2),
            ..Default::default()
        };
        let f = extract(config, "abababab");
        // "ab" x4 capped at 2, "ba" x3 capped at 2.
        assert_eq!(f.len(), 2);
        assert_eq!(f.counts(), &[2, 2]);
        assert!(extract(FeatureConfig::default(), "abcd").is_empty(), "shorter than n");
    }

    #[test]
    fn words_drop_stop_words_and_shingles_slide() {
        let words = FeatureConfig { kind: FeatureKind::Words, ..Default::default() };
        assert_eq!(extract(words.clone(), "the cat and the hat").len(), 2);
        assert_eq!(extract(words.clone(), "我们的程序").len(), 1, "我们 and 的 are stop words");
        let shingles = FeatureConfig { kind: FeatureKind::WordShingles, shingle_words: 2, ..words };
        assert_eq!(extract(shingles, "red green blue red green").len(), 3);
    }

    #[test]
    fn labelled_features_have_the_extracted_hashes() {
        for kind in [FeatureKind::CharNgrams, FeatureKind::Words, FeatureKind::WordShingles] {
            let config = FeatureConfig {
                kind,
                shingle_words: 2,
                han_ngram_chars: Some(2),
                ..Default::default()
            };
            let seg = FeatureExtractor::needs_segmenter(&config).then(|| Segmenter::new(true));
            let ex = FeatureExtractor::new(config, 7, seg);
            let text =
                feature_text("The red fox jumps over the lazy dog. 我们的程序很快，程序员很开心。");
            let mut features = Features::default();
            ex.extract(&text, &mut features, &mut FeatureScratch::default());
            let labelled: Vec<u64> = ex.labelled(&text).into_iter().map(|(h, _)| h).collect();
            assert_eq!(labelled, features.sorted_hashes(), "{kind:?}");
        }
    }

    #[test]
    fn counter_counts_in_order_of_first_occurrence() {
        let (mut counter, mut out) = (Counter::default(), Features::default());
        let values = [5u64, 0, 5, 69, 0, 5, 133, 69, 0, 0];
        counter.add_all(&values, 3, &mut out);
        // 5, 69 and 133 share the low bits of a 64-slot table: they probe past each other.
        assert_eq!(out.hashes(), &[5, 0, 69, 133]);
        assert_eq!(out.counts(), &[3, 3, 2, 1]);
        // As many values as take the table of four-byte slots: the same counts.
        let many: Vec<u64> = (0..Counter::SMALL as u64).map(|v| v % 1024 * 64 + 5).collect();
        counter.add_all(&many, 100, &mut out);
        assert_eq!(out.hashes(), (0..1024).map(|v| v * 64 + 5).collect::<Vec<u64>>());
        assert_eq!(out.counts(), [16; 1024]);
    }

    /// The features of `text` with `han_ngram_chars` equal to `ngram_chars` are the naive
    /// twin's n-grams of old, each hash once.
    fn check_char_ngrams(text: &str, n: usize, cap: u32) -> Result<(), TestCaseError> {
        let config = FeatureConfig { max_feature_count: Some(cap), ..config(n, n) };
        let f = extract(config, text);
        let found: BTreeMap<u64, u32> =
            f.hashes().iter().copied().zip(f.counts().iter().copied()).collect();
        prop_assert_eq!(found.len(), f.len(), "hashes are distinct");
        prop_assert_eq!(found, naive_char_ngrams(text, n, cap));
        Ok(())
    }

    /// The features of `text` are the naive twin's shingles, hashed, each hash once; the
    /// labelled features have the same hashes, and each label hashes to its own.
    fn check_shingles(text: &str, n: usize, han: usize, cap: u32) -> Result<(), TestCaseError> {
        let config = FeatureConfig { max_feature_count: Some(cap), ..config(n, han) };
        let f = extract(config.clone(), text);
        let found: BTreeMap<u64, u32> =
            f.hashes().iter().copied().zip(f.counts().iter().copied()).collect();
        prop_assert_eq!(found.len(), f.len(), "hashes are distinct");
        let seed = derive_seed(7, SeedPurpose::Feature, 0);
        let naive = naive_shingles(text, n, han, cap, is_unspaced_script);
        let expected: BTreeMap<u64, u32> =
            naive.iter().map(|(gram, c)| (hash_bytes(gram.as_bytes(), seed), *c)).collect();
        prop_assert_eq!(found, expected);
        let ex = FeatureExtractor::new(config, 7, None);
        let labelled = ex.labelled(&feature_text(text));
        prop_assert!(labelled.iter().all(|(h, l)| *h == hash_bytes(l.as_bytes(), seed)));
        let hashes: Vec<u64> = labelled.iter().map(|(h, _)| *h).collect();
        prop_assert_eq!(hashes, f.sorted_hashes());
        let mut labels: Vec<&str> = labelled.iter().map(|(_, l)| l.as_str()).collect();
        labels.sort_unstable();
        prop_assert_eq!(labels, naive.keys().map(String::as_str).collect::<Vec<_>>());
        Ok(())
    }

    proptest! {
        #[test]
        fn char_ngrams_match_naive_twin(text in "[a-c 中文，。]{0,40}", n in 1usize..6, cap in 1u32..4) {
            check_char_ngrams(&text, n, cap)?;
        }

        #[test]
        fn feature_text_matches_naive_twin(
            text in "[a-c A-C\t\x0b,.!$中文字，。ひカ\u{00A0}\u{3000}①]{0,60}",
            drop_punctuation in any::<bool>(),
        ) {
            let mut out = String::new();
            feature_text_into(&text, drop_punctuation, &mut out);
            prop_assert_eq!(out, naive_feature_text(&text, drop_punctuation));
        }

        #[test]
        fn shingles_match_naive_twin(
            text in "[a-c 1-3é中文字，。ひカ]{0,40}",
            n in 1usize..7,
            han in 1usize..7,
            cap in 1u32..4,
        ) {
            check_shingles(&text, n, han, cap)?;
        }

        #[test]
        fn ascii_char_ngrams_match_naive_twin(text in "[a-d .,!]{0,60}", n in 1usize..6, cap in 1u32..4) {
            check_char_ngrams(&text, n, cap)?;
            check_shingles(&text, n, 2, cap)?;
        }
    }
}
