//! Inverse document frequencies of words: jieba's table, keyed by feature hash.

use std::collections::HashMap;
use std::io::Read;

use crate::features::FeatureExtractor;

/// jieba's IDF table, zstd-compressed (see `data/NOTICE.md`).
const JIEBA_IDF: &[u8] = include_bytes!("../data/jieba-idf.txt.zst");

/// Version of the IDF table, recorded in output metadata when it is used.
pub const JIEBA_IDF_TABLE: &str = "jieba idf.txt (270,131 words, from jieba-rs 0.11.0)";

/// IDF of word features, looked up by the feature hash a [`FeatureExtractor`] gives a word.
/// Words missing from the table get the table's median IDF, as jieba does.
#[derive(Clone, Debug)]
pub struct WordIdf {
    idf: HashMap<u64, f32>,
    median: f32,
}

impl WordIdf {
    /// Loads jieba's table (about 0.1 s), hashing each word as `extractor` hashes words.
    ///
    /// # Panics
    /// If the embedded table is damaged (a build defect).
    pub fn jieba(extractor: &FeatureExtractor) -> Self {
        let mut text = String::new();
        zstd::stream::read::Decoder::new(JIEBA_IDF)
            .and_then(|mut d| d.read_to_string(&mut text))
            .expect("the embedded IDF table decompresses");
        let mut idf = HashMap::with_capacity(280_000);
        let mut values = Vec::with_capacity(280_000);
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if let (Some(word), Some(Ok(value))) =
                (parts.next(), parts.next().map(str::parse::<f32>))
            {
                idf.insert(extractor.word_hash(word), value);
                values.push(value);
            }
        }
        assert!(!values.is_empty(), "the embedded IDF table is not empty");
        let mid = (values.len() - 1) / 2;
        let (_, median, _) = values.select_nth_unstable_by(mid, f32::total_cmp);
        let median = *median;
        WordIdf { idf, median }
    }

    /// The IDF of a word feature.
    pub fn idf(&self, feature: u64) -> f64 {
        f64::from(self.idf.get(&feature).copied().unwrap_or(self.median))
    }

    /// Number of words in the table.
    pub fn len(&self) -> usize {
        self.idf.len()
    }

    /// True for an empty table.
    pub fn is_empty(&self) -> bool {
        self.idf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{FeatureConfig, FeatureKind};
    use crate::segment::Segmenter;

    #[test]
    fn jieba_table_ranks_rare_words_above_common_ones() {
        let config = FeatureConfig { kind: FeatureKind::Words, ..FeatureConfig::default() };
        let extractor = FeatureExtractor::new(config, 1, Some(Segmenter::new(false)));
        let table = WordIdf::jieba(&extractor);
        assert!(table.len() > 250_000);
        let idf = |w: &str| table.idf(extractor.word_hash(w));
        assert!(idf("劳动防护") > idf("中国"), "a rare word outweighs a common one");
        assert_eq!(idf("neardup-no-such-word"), f64::from(table.median));
    }
}
