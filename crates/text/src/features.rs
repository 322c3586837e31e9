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
    /// Overlapping runs of `ngram_chars` characters of the feature text.
    #[default]
    CharNgrams,
    /// Overlapping runs of `shingle_words` words (stop words removed).
    WordShingles,
    /// Single words (stop words removed).
    Words,
}

/// Characters per n-gram where `ngram_chars` is unset.
pub const DEFAULT_NGRAM_CHARS: usize = 5;

/// How documents become feature sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FeatureConfig {
    /// The kind of feature.
    pub kind: FeatureKind,
    /// Characters per n-gram, for `char_ngrams`; unset means [`DEFAULT_NGRAM_CHARS`] (the
    /// neardup job sets it by method: see `neardup_job::JobSpec::feature_config`).
    pub ngram_chars: Option<usize>,
    /// Words per shingle, for `word_shingles`.
    pub shingle_words: usize,
    /// Drop the built-in English and Chinese stop words from word features.
    pub stop_words: bool,
    /// The over-frequency cap: a feature counts at most this many times in one document
    /// (this bounds SimHash weights; MinHash uses sets and ignores counts).
    pub max_feature_count: u32,
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
            shingle_words: 3,
            stop_words: true,
            max_feature_count: 10,
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
        assert!(
            config.ngram_chars() > 0 && config.shingle_words > 0,
            "feature sizes must be positive"
        );
        FeatureExtractor {
            seed: derive_seed(seed, SeedPurpose::Feature, 0),
            shingle_seed: derive_seed(seed, SeedPurpose::Feature, config.shingle_words as u64),
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
        let cap = self.config.max_feature_count.max(1);
        match self.config.kind {
            FeatureKind::CharNgrams => {
                let n = self.config.ngram_chars();
                let bytes = feature_text.as_bytes();
                if feature_text.is_ascii() {
                    // One byte per character: the n-grams are the byte windows.
                    counter.reset((bytes.len() + 1).saturating_sub(n), out);
                    for w in bytes.windows(n) {
                        counter.add(hash_bytes(w, self.seed), cap, out);
                    }
                } else {
                    let offsets = &mut scratch.offsets;
                    offsets.clear();
                    offsets.extend(feature_text.char_indices().map(|(i, _)| i));
                    offsets.push(feature_text.len());
                    counter.reset(offsets.len().saturating_sub(n), out);
                    for w in offsets.windows(n + 1) {
                        counter.add(hash_bytes(&bytes[w[0]..w[n]], self.seed), cap, out);
                    }
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
                counter.reset(raw.len(), out);
                raw.iter().for_each(|h| counter.add(*h, cap, out));
            }
        }
    }
}

/// Counts distinct feature hashes into [`Features`], in the order of their first
/// occurrence: an open-addressing table (linear probing) with at least four times as many
/// slots as values, each slot holding a position in the output plus one (0 is free). Four
/// bytes a slot keep the table of a typical document in the L1 cache; the hashes are uniform,
/// so their low bits index it directly.
#[derive(Debug, Default)]
struct Counter {
    slots: Vec<u32>,
    mask: usize,
}

impl Counter {
    /// Empties the table and `out`, sizing the table for at most `values` additions.
    fn reset(&mut self, values: usize, out: &mut Features) {
        let size = (4 * values).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(size, 0);
        self.mask = size - 1;
        out.hashes.clear();
        out.counts.clear();
    }

    /// Counts `hash`, capping its count at `cap`.
    #[inline(always)]
    fn add(&mut self, hash: u64, cap: u32, out: &mut Features) {
        let mut i = hash as usize & self.mask;
        loop {
            let slot = self.slots[i] as usize;
            if slot == 0 {
                out.hashes.push(hash);
                out.counts.push(1);
                self.slots[i] = u32::try_from(out.hashes.len()).expect("under 2^32 features");
                return;
            }
            if out.hashes[slot - 1] == hash {
                let count = &mut out.counts[slot - 1];
                *count = (*count + 1).min(cap);
                return;
            }
            i = (i + 1) & self.mask;
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
                let n = self.config.ngram_chars();
                let mut offsets: Vec<usize> = feature_text.char_indices().map(|(i, _)| i).collect();
                offsets.push(feature_text.len());
                if offsets.len() > n {
                    for w in offsets.windows(n + 1) {
                        let gram = &feature_text[w[0]..w[n]];
                        out.push((hash_bytes(gram.as_bytes(), self.seed), gram.to_string()));
                    }
                }
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

    #[test]
    fn char_ngrams_count_and_cap() {
        let config =
            FeatureConfig { ngram_chars: Some(2), max_feature_count: 2, ..Default::default() };
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
            let config = FeatureConfig { kind, shingle_words: 2, ..Default::default() };
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
        counter.reset(values.len(), &mut out);
        values.iter().for_each(|v| counter.add(*v, 3, &mut out));
        // 5, 69 and 133 share the low bits of a 64-slot table: they probe past each other.
        assert_eq!(out.hashes(), &[5, 0, 69, 133]);
        assert_eq!(out.counts(), &[3, 3, 2, 1]);
    }

    /// The features of `text` are the naive twin's, each hash once.
    fn check_char_ngrams(text: &str, n: usize, cap: u32) -> Result<(), TestCaseError> {
        let config =
            FeatureConfig { ngram_chars: Some(n), max_feature_count: cap, ..Default::default() };
        let f = extract(config, text);
        let found: BTreeMap<u64, u32> =
            f.hashes().iter().copied().zip(f.counts().iter().copied()).collect();
        prop_assert_eq!(found.len(), f.len(), "hashes are distinct");
        prop_assert_eq!(found, naive_char_ngrams(text, n, cap));
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
        fn ascii_char_ngrams_match_naive_twin(text in "[a-d .,!]{0,60}", n in 1usize..6, cap in 1u32..4) {
            check_char_ngrams(&text, n, cap)?;
        }
    }
}
