//! Text to features for near-duplicate detection, for Chinese, English and mixed text.
//!
//! A document goes through [`Normalizer`] (markup, NFKC, Han script and variants, width,
//! case, whitespace), is hashed for exact duplicates, becomes feature text
//! ([`feature_text_into`]: no punctuation, no spacing inside Chinese or Japanese), and then
//! features ([`FeatureExtractor`]): character n-grams, or words and word shingles from
//! [`Segmenter`] (jieba for Han runs, Unicode word boundaries for the rest). This crate
//! computes no signatures and runs no threads.
//!
//! ```
//! use neardup_text::{Analyzer, AnalyzeScratch, FeatureConfig, NormalizeConfig};
//!
//! let analyzer = Analyzer::new(NormalizeConfig::default(), FeatureConfig::default(), 42, None);
//! let mut scratch = AnalyzeScratch::default();
//! let a = analyzer.analyze("<p>Ｈｅｌｌｏ，　World!</p>", &mut scratch);
//! let b = analyzer.analyze("hello, world!", &mut scratch);
//! assert_eq!(a.content_hash, b.content_hash);
//! assert_eq!(a.features, b.features);
//! assert_eq!(a.features.len(), 7); // 5-grams of "hello world"
//! ```

mod boilerplate;
mod features;
mod han_fold;
mod idf;
mod learning;
mod lines;
mod main_text;
mod markup;
mod normalize;
mod paragraphs;
mod references;
mod segment;
mod stopwords;
mod urls;

use neardup_core::ContentHash;

pub use boilerplate::{Boilerplate, Stripped};
pub use features::{
    DEFAULT_HAN_NGRAM_CHARS, DEFAULT_NGRAM_CHARS, FeatureConfig, FeatureExtractor, FeatureKind,
    FeatureScratch, Features, MAX_FEATURE_COUNT, default_han_ngram_chars, feature_text_into,
};
pub use han_fold::HAN_FOLD_TABLE;
pub use idf::{JIEBA_IDF_TABLE, WordIdf};
pub use learning::{
    BoilerplateRule, CORPUS_MIN_HOSTS, CORPUS_MIN_SHARE, CORPUS_SCOPE, IDENTITY_FALLBACK_SHARE,
    IDENTITY_LINE_CHARS, Learner, Lesson, MIN_IDENTITY_LINES, Occurrence, PAGE_MARKER,
    PROSE_IDENTITY_CHARS, SHARED_MIN_HOSTS, URL_MARKER, entry, occurrences,
};
pub use lines::{CONTENT_BIT, LineKey, LineScratch, PROSE_BIT, line_key, line_keys};
pub use main_text::{CONTENT_LINE_CHARS, OPEN_LINE_SHARE, PARAGRAPH_CHARS};
pub use normalize::{NormalizeConfig, NormalizeScratch, Normalizer};
pub use paragraphs::{Blocks, PARAGRAPH_MIN_CHARS, Paragraph, ParagraphScratch, Paragraphs};
pub use segment::{
    JIEBA_DICTIONARY, Segmenter, is_han, is_punctuation_or_symbol, is_unspaced_script,
};
pub use stopwords::{CHINESE as CHINESE_STOP_WORDS, ENGLISH as ENGLISH_STOP_WORDS, is_stop_word};
pub use urls::{host_key, url_key};

/// The exact versions of the crates that shape features, recorded in output metadata
/// (they are pinned with `=` in the workspace manifest).
pub const SHAPING_CRATES: &str = "jieba-rs 0.11.0, unicode-normalization 0.1.26, \
unicode-segmentation 1.13.3, unicode-properties 0.1.5, html-escape 0.3.0, xxhash-rust 0.8.19";

/// Unicode version of the normalisation tables, recorded in output metadata.
pub const UNICODE_VERSION: (u8, u8, u8) = unicode_normalization::UNICODE_VERSION;

/// What analysis found in one document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Hash of the normalised text: equal hashes are exact duplicates.
    pub content_hash: ContentHash,
    /// Characters in the normalised text (0 means nothing was left to compare).
    pub normalized_chars: usize,
    /// The document's features.
    pub features: Features,
}

/// Reusable buffers for [`Analyzer::analyze`]; after a call, [`AnalyzeScratch::normalized`]
/// and [`AnalyzeScratch::feature_text`] hold that document's texts.
#[derive(Debug, Default)]
pub struct AnalyzeScratch {
    normalized: String,
    feature_text: String,
    normalize: NormalizeScratch,
    features: FeatureScratch,
}

impl AnalyzeScratch {
    /// The normalised text of the last analysed document.
    pub fn normalized(&self) -> &str {
        &self.normalized
    }

    /// The feature text of the last analysed document.
    pub fn feature_text(&self) -> &str {
        &self.feature_text
    }
}

/// Normalisation, content hash and feature extraction in one step.
#[derive(Clone, Debug)]
pub struct Analyzer {
    normalizer: Normalizer,
    extractor: FeatureExtractor,
    seed: u64,
}

impl Analyzer {
    /// An analyser for the given settings and job seed. `segmenter` is needed for word
    /// features (see [`FeatureExtractor::needs_segmenter`]).
    pub fn new(
        normalize: NormalizeConfig,
        features: FeatureConfig,
        seed: u64,
        segmenter: Option<Segmenter>,
    ) -> Self {
        Analyzer {
            normalizer: Normalizer::new(normalize),
            extractor: FeatureExtractor::new(features, seed, segmenter),
            seed,
        }
    }

    /// The feature extractor.
    pub fn extractor(&self) -> &FeatureExtractor {
        &self.extractor
    }

    /// Analyses one document.
    pub fn analyze(&self, text: &str, scratch: &mut AnalyzeScratch) -> Analysis {
        let mut out = Analysis::default();
        self.analyze_into(text, scratch, &mut out);
        out
    }

    /// The normalised text and the feature text (what features are taken from) of `text`.
    pub fn texts(&self, text: &str) -> (String, String) {
        let (mut normalized, mut feature_text) = (String::new(), String::new());
        self.normalizer.normalize_into(text, &mut normalized, &mut NormalizeScratch::default());
        let drop_punctuation = self.extractor.config().drop_punctuation;
        feature_text_into(&normalized, drop_punctuation, &mut feature_text);
        (normalized, feature_text)
    }

    /// Analyses one document into `out`, reusing its buffers.
    pub fn analyze_into(&self, text: &str, scratch: &mut AnalyzeScratch, out: &mut Analysis) {
        self.normalizer.normalize_into(text, &mut scratch.normalized, &mut scratch.normalize);
        out.content_hash = ContentHash::of_text(&scratch.normalized, self.seed);
        out.normalized_chars = scratch.normalized.chars().count();
        let drop_punctuation = self.extractor.config().drop_punctuation;
        feature_text_into(&scratch.normalized, drop_punctuation, &mut scratch.feature_text);
        self.extractor.extract(&scratch.feature_text, &mut out.features, &mut scratch.features);
        references::add_features(&scratch.normalized, self.seed, &mut out.features);
    }

    /// The distinct features of `text` with a readable label each, sorted by hash: the
    /// same hashes as [`Analyzer::analyze`] (shingles labelled as
    /// [`FeatureExtractor::labelled`] labels them, a reference number's as `№` and the
    /// number), for explaining a match.
    pub fn labelled(&self, text: &str) -> Vec<(u64, String)> {
        let (normalized, feature_text) = self.texts(text);
        let mut out = self.extractor.labelled(&feature_text);
        let shingles = out.len();
        references::for_each_feature(&normalized, self.seed, shingles, |hash, number, i| {
            out.push((hash, format!("№{number}#{i}")));
        });
        out.sort_unstable();
        out.dedup_by_key(|(h, _)| *h);
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shaping_crate_versions_match_the_lockfile() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("the workspace lockfile");
        for entry in super::SHAPING_CRATES.split(", ") {
            let (name, version) = entry.split_once(' ').expect("name version");
            let pinned = format!("name = \"{name}\"\nversion = \"{version}\"");
            assert!(lock.contains(&pinned), "Cargo.lock does not pin {name} {version}");
        }
    }
}
