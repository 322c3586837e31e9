//! The job file: every setting that changes results, with its defaults. Checked into a
//! [`crate::JobConfig`] by `config`.

use std::path::PathBuf;

use neardup_core::{Containment, JaccardMode, LshParams, Verifier};
use neardup_io::{OnReadError, ReadOptions};
use neardup_text::{BoilerplateRule, FeatureConfig, NormalizeConfig};
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, invalid};

/// The signature method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// MinHash with banded LSH; pairs verified by Jaccard.
    #[default]
    Minhash,
    /// SimHash with pigeonhole block tables; pairs verified by Hamming distance.
    Simhash,
}

impl Method {
    /// The name used in flags and files.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Minhash => "minhash",
            Method::Simhash => "simhash",
        }
    }
}

/// Which document of a cluster is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KeepRule {
    /// The earliest document in input order (files in path order, then records).
    #[default]
    First,
    /// The document with the most normalised characters; ties go to the earliest.
    Longest,
}

/// Which members of a cluster are removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Removal {
    /// Every member but the kept document: connected components, most recall.
    #[default]
    Connected,
    /// Only members verified against the kept document (identical text, or a verified
    /// pair between the two texts); the others are kept as `unverified_in_cluster`.
    Verified,
}

/// SimHash feature weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Term frequency, capped by `features.max_feature_count`.
    #[default]
    Tf,
    /// Term frequency times inverse document frequency (see [`IdfSource`]).
    TfIdf,
}

/// Where inverse document frequencies come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum IdfSource {
    /// Document frequencies of this corpus, counted in a first pass over the input
    /// (a count-min sketch, so rare features may be slightly overcounted).
    #[default]
    Corpus,
    /// jieba's IDF table of Chinese words; needs `features.kind = "words"`.
    Jieba,
}

/// Where documents come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InputSpec {
    /// Field (JSONL key or Parquet column) holding the document id; `""` generates ids as
    /// `path:record`.
    pub id_field: String,
    /// Field holding the document text.
    pub text_field: String,
    /// Field (JSONL key or string Parquet column) holding a web page's URL: records with
    /// one are web pages, whose templates are learned and left out as in web archives
    /// (`[boilerplate]`). `""` reads no URLs.
    pub url_field: String,
    /// A file that cannot be opened or read to the end: `fail` the job, or `reject` what
    /// could not be read and go on.
    pub on_read_error: OnReadError,
    /// Records with more bytes than this (a JSONL line, a web-archive record or its
    /// inflated payload, a Parquet text value) are `too_large` rejects, read past without
    /// being held. Unset: [`crate::default_max_record_bytes`] of the memory budget.
    pub max_record_bytes: Option<u64>,
}

impl Default for InputSpec {
    fn default() -> Self {
        InputSpec {
            id_field: "id".into(),
            text_field: "text".into(),
            url_field: "url".into(),
            on_read_error: OnReadError::Fail,
            max_record_bytes: None,
        }
    }
}

impl InputSpec {
    /// How readers read this input: its fields and record size limit.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            id: (!self.id_field.is_empty()).then(|| self.id_field.clone()),
            text: self.text_field.clone(),
            url: (!self.url_field.is_empty()).then(|| self.url_field.clone()),
            max_record_bytes: self.record_limit(),
        }
    }

    /// The record size limit as set, or the readers' default (a run's own default follows
    /// from its memory budget: [`crate::JobConfig::max_record_bytes`]).
    pub fn record_limit(&self) -> u64 {
        self.max_record_bytes.unwrap_or(neardup_io::DEFAULT_MAX_RECORD_BYTES)
    }
}

/// `minhash.threshold` unless set, for text that is not web pages (for web pages see
/// [`WEB_THRESHOLD`]).
pub const THRESHOLD: f64 = 0.8;

/// `minhash.threshold` for web pages unless set. Chosen by the rule of docs/quality.md
/// (pair precision at least 0.99 and wrong removals at most 0.5% of removals on every
/// labelled set, then the highest mean recall over the design sets): mean MinHash recall
/// 0.945 on the design sets at 0.75 and 0.940 at 0.8, with every set, design and held
/// out, inside the budgets; at 0.7, 0.81% of the removals on a held-out draw (`bash
/// bench/siteset.sh 12 zh`) are wrong. `bash bench/warc.sh 100000 2` keeps pair precision
/// 0.998 and recall 0.998 at either.
pub const WEB_THRESHOLD: f64 = 0.75;

/// `minhash.containment` for web pages unless set. Chosen by the rule defaults follow
/// (docs/quality.md, "The rule defaults are chosen by") among 0.7 to 0.9: 0.85 is the
/// lowest share that keeps pair precision at least 0.99 and wrong removals at most 0.5% on
/// every labelled set, and it has the highest mean MinHash recall on the design sets among
/// those that do (0.953; 0.945 at 0.9, the value before). At 0.84 0.54% of the removals on a held-out draw
/// (`bash bench/siteset.sh 12 zh`) are wrong, and at 0.8 the design sets break a budget.
/// An index keeps the share it recorded for runs that leave it unset; a share set in the
/// job file replaces it there.
pub const WEB_CONTAINMENT: f64 = 0.85;

/// `minhash.containment_min_jaccard` unless set: a teaser of two fifths of its article.
/// Chosen on the design draw of `bench/make_editset.py` (`bash bench/editset.sh 7`: pair
/// F1 0.890 at 0.4, 0.880 at 0.5, 0.896 at 0.3, the lower floor kept away from an article
/// quoting a paragraph of another), with `bench/make_webset.py`'s research set unchanged
/// (0.993 at 0.3 to 0.5; 0.991 at 0.6); reported on the held-out sets (docs/quality.md, "A
/// held-out crawl"). The bands are not chosen for it but for
/// [`CONTAINMENT_BANDS_JACCARD`].
pub const WEB_CONTAINMENT_MIN_JACCARD: f64 = 0.4;

/// The least Jaccard the bands are chosen for under the containment rule, unless bands
/// and rows are set: a floor below it is verified, but its pairs become candidates with
/// less than the usual probability (0.79 at 0.5 with 24 x 4, 0.46 at 0.4). Bands for 0.5
/// (26 x 3) make about ten times the candidates of 0.6 (24 x 4) on
/// `bench/make_real_corpus.py --docs 100000`, and on `bench/warc.sh 100000 2` 11 million
/// candidates instead of 678,000 (4.3 times the time, 3.4 times the peak memory), for the
/// same F1 on every labelled web set.
pub const CONTAINMENT_BANDS_JACCARD: f64 = 0.6;

/// `simhash.max_distance` unless set, for text that is not web pages (for web pages see
/// [`WEB_MAX_DISTANCE`] and [`WEB_TF_MAX_DISTANCE`]).
pub const MAX_DISTANCE: u32 = 3;

/// `simhash.max_distance` for web pages unless set, with [`WEB_WEIGHTING`]: chosen on
/// `bench/make_webset.py`'s research set (pair F1 with 4-grams: 0.937 at 6 and 0.952 at 7
/// with term-frequency weights, 0.936 at 6 and 0.959 at 7 with TF-IDF). At 7, term
/// frequencies chain unrelated English pages of `bench/warc.sh` into one cluster of 1,572
/// (their common n-grams pull every fingerprint one way: pair precision 0.031); TF-IDF does
/// not (0.983 then; 0.993 with [`WEB_MAX_FEATURE_COUNT`] and that corpus's labels
/// corrected). docs/quality.md "Templated web pages" has the figures on every labelled set.
pub const WEB_MAX_DISTANCE: u32 = 7;

/// `simhash.max_distance` for web pages unless set, when they are not weighted by corpus
/// TF-IDF (weights set otherwise): the previous default, F1 0.937 on the
/// research set and 0.918 on `bench/warc.sh`'s copies with term frequencies.
pub const WEB_TF_MAX_DISTANCE: u32 = 6;

/// `features.max_feature_count` for web pages under SimHash with [`WEB_WEIGHTING`] unless
/// set ([`neardup_text::MAX_FEATURE_COUNT`] otherwise). At the cap of 10, a long table of
/// numbers that two different pages both hold pulls their fingerprints within distance 7
/// (`bench/warc.sh 100000 2 simhash`: pair precision 0.988, below the 0.99 that defaults
/// must keep on every labelled set). Among the caps that keep it (8 and less), 6 finds the
/// most on the design sets (docs/quality.md): SimHash mean recall 0.814 there (0.815 at 10),
/// and `bench/warc.sh` precision 0.993 at the same recall. Plain text, at distance 3 with term
/// frequencies, keeps 10 (recall 0.680 against 0.666 with 6 on `bench/make_corpus.py`'s
/// corpus).
pub const WEB_MAX_FEATURE_COUNT: u32 = 6;

/// `simhash.weighting` for web pages unless set (with an index, the frequencies of the batch
/// and of every generation the index committed). Corpus document frequencies take
/// one more pass over the input: 1.42 times the wall time of term frequencies at distance
/// 6 on `bench/warc.sh 100000 2 simhash`, and 0.60 times the peak memory (fewer chance
/// candidates).
pub const WEB_WEIGHTING: Weighting = Weighting::TfIdf;

/// `features.ngram_chars` for SimHash unless set (MinHash takes
/// [`neardup_text::DEFAULT_NGRAM_CHARS`], 5): a fingerprint weighs every n-gram, and shorter
/// ones move less under an edit. Chosen on `bench/make_webset.py`'s research set (pair F1
/// 0.917 with 5-grams, 0.939 with 4, 0.913 with 3, at distance 6); on
/// `bench/make_real_corpus.py --docs 100000` 0.764 instead of 0.719 at distance 3, at the
/// same cost. Web pages (then at distance 6 with term frequencies) paid for it: 79
/// candidates per document instead of 17 on `bench/warc.sh 100000 2`, 12.1 s instead of
/// 7.4 s (figures from when it was chosen; docs/quality.md "Templated web pages" has the current
/// ones).
pub const SIMHASH_NGRAM_CHARS: usize = 4;

/// `features.han_ngram_chars` for SimHash unless set (MinHash takes
/// [`neardup_text::DEFAULT_HAN_NGRAM_CHARS`], 2 as well): Han, Hiragana and Katakana take
/// 2-grams where other text takes `ngram_chars`. Chosen by the rule defaults follow (see
/// [`neardup_text::DEFAULT_HAN_NGRAM_CHARS`]) on the same design sets: Chinese recall 0.821
/// instead of 0.800 on `bash bench/siteset.sh 1`, 0.822 instead of 0.786 on `1 zh`, 0.784
/// instead of 0.719 on `bash bench/editset.sh 7`; on `bash bench/webset.sh` 7 documents
/// removed for one the truth says differs of 1,658 (0.42%, court openings that differ in
/// a name) instead of 3; Han 3-grams gain half as much.
pub const SIMHASH_HAN_NGRAM_CHARS: Option<usize> = Some(2);

/// The corpus size an index's SimHash block layout is chosen for when `simhash.blocks` is
/// unset ([`neardup_core::BlockLayout::choose`]): an index outlives its first batch, and
/// every run of it keeps the layout its first run recorded. At the web-page distance 7
/// that is 11 blocks, 330 tables (a key row each per indexed document); at 3, 5 blocks and
/// 10 tables. Set `simhash.blocks` for an index planned far bigger (`neardup tune --method
/// simhash --documents N` shows the cost).
pub const INDEX_LAYOUT_DOCUMENTS: u64 = 1_000_000;

/// MinHash settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MinHashSpec {
    /// Number of permutations.
    pub num_perm: usize,
    /// Jaccard threshold: verified pairs have similarity at least this. Unset:
    /// [`WEB_THRESHOLD`] when the input holds web pages, [`THRESHOLD`] otherwise; a run
    /// records the value it used.
    pub threshold: Option<f64>,
    /// Bands; chosen from the threshold when unset (set both or neither).
    pub bands: Option<u32>,
    /// Rows per band; chosen from the threshold when unset.
    pub rows: Option<u32>,
    /// Weight of the false-positive area when choosing bands and rows.
    pub false_positive_weight: f64,
    /// Weight of the false-negative area when choosing bands and rows.
    pub false_negative_weight: f64,
    /// Verify candidates by the `signature` estimate or by `exact` Jaccard of feature sets.
    pub verify: JaccardMode,
    /// A pair below the threshold also passes when this share of the smaller document's
    /// features is in the larger (a teaser, a page cut at "Read more") and its Jaccard is
    /// at least `containment_min_jaccard`; 0 turns containment off. Unset: 0.85 when the
    /// input holds web pages ([`WEB_CONTAINMENT`]), off otherwise; against an index with
    /// the rule on, the share it recorded (the last one a run set). A run records the value
    /// it used.
    pub containment: Option<f64>,
    /// Least Jaccard of a pair passing by containment: about the shortest copy accepted as
    /// a share of the longer. When containment is on, the bands are chosen for it, or for
    /// [`CONTAINMENT_BANDS_JACCARD`] when that is higher ([`MinHashSpec::bands_jaccard`]).
    pub containment_min_jaccard: f64,
}

impl SimHashSpec {
    /// The largest distance: as set (or resolved by the run), else [`MAX_DISTANCE`].
    pub fn distance(&self) -> u32 {
        self.max_distance.unwrap_or(MAX_DISTANCE)
    }

    /// The feature weights: as set (or resolved by the run), else term frequency.
    pub fn weights(&self) -> Weighting {
        self.weighting.unwrap_or_default()
    }

    /// Whether fingerprints take document frequencies counted over this run's corpus.
    pub fn corpus_idf(&self) -> bool {
        self.weights() == Weighting::TfIdf && self.idf == IdfSource::Corpus
    }
}

impl MinHashSpec {
    /// The threshold: as set (or resolved by the run), else [`THRESHOLD`].
    pub fn threshold(&self) -> f64 {
        self.threshold.unwrap_or(THRESHOLD)
    }

    /// The containment rule, when on: `containment` as set (unset: off; a run chooses
    /// it by its input, [`crate::JobConfig::minhash_spec`]).
    pub fn containment_rule(&self) -> Option<Containment> {
        let containment = self.containment.unwrap_or(0.0);
        (containment > 0.0).then_some(Containment {
            min_containment: containment,
            min_jaccard: self.containment_min_jaccard,
        })
    }

    /// The least Jaccard a verified pair can have: the threshold, or the containment
    /// rule's floor.
    pub fn least_jaccard(&self) -> f64 {
        let threshold = self.threshold();
        self.containment_rule().map_or(threshold, |c| c.min_jaccard.min(threshold))
    }

    /// The Jaccard the bands are chosen for unless set: [`Self::least_jaccard`], but under
    /// the containment rule not below [`CONTAINMENT_BANDS_JACCARD`] (nor above the
    /// threshold). Pairs between the floor and this are verified when they are candidates.
    pub fn bands_jaccard(&self) -> f64 {
        match self.containment_rule() {
            Some(_) => self.least_jaccard().max(CONTAINMENT_BANDS_JACCARD).min(self.threshold()),
            None => self.threshold(),
        }
    }

    /// The verifier of these settings over `lsh`.
    pub fn verifier(&self, lsh: LshParams) -> Verifier {
        Verifier::MinHash {
            threshold: self.threshold(),
            lsh,
            mode: self.verify,
            containment: self.containment_rule(),
        }
    }
}

impl Default for MinHashSpec {
    fn default() -> Self {
        MinHashSpec {
            num_perm: 128,
            threshold: None,
            bands: None,
            rows: None,
            // Verification drops the false positives, so they cost work, not precision;
            // the missed pairs are lost. These weights choose 16 x 8 at 0.8.
            false_positive_weight: 0.05,
            false_negative_weight: 0.95,
            verify: JaccardMode::Signature,
            containment: None,
            containment_min_jaccard: WEB_CONTAINMENT_MIN_JACCARD,
        }
    }
}

/// SimHash settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimHashSpec {
    /// Largest Hamming distance of a verified pair. Unset: for web pages 7 with corpus
    /// TF-IDF weights ([`WEB_MAX_DISTANCE`]) and 6 with other weights
    /// ([`WEB_TF_MAX_DISTANCE`]), 3 otherwise ([`MAX_DISTANCE`]); a run records the value
    /// it used.
    pub max_distance: Option<u32>,
    /// Blocks the fingerprint is split into; chosen from the corpus size when unset (with an
    /// index, the index's: see [`INDEX_LAYOUT_DOCUMENTS`]).
    pub blocks: Option<u32>,
    /// Feature weights. Unset: [`WEB_WEIGHTING`] (TF-IDF from corpus document frequencies)
    /// when the input holds web pages and `idf` is `corpus`; term frequency otherwise. A run records the value it used.
    pub weighting: Option<Weighting>,
    /// IDF source for `tf_idf` weights.
    pub idf: IdfSource,
}

impl Default for SimHashSpec {
    fn default() -> Self {
        SimHashSpec { max_distance: None, blocks: None, weighting: None, idf: IdfSource::Corpus }
    }
}

/// Limits on bucket sizes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BucketSpec {
    /// Buckets with more members are cut: members are compared only with the first
    /// `bucket_anchors` members in input order, so a boilerplate band costs linear work.
    pub max_bucket_size: usize,
    /// Members of a cut bucket that every other member is compared with.
    pub bucket_anchors: usize,
}

impl Default for BucketSpec {
    fn default() -> Self {
        BucketSpec { max_bucket_size: 500, bucket_anchors: 50 }
    }
}

/// How clusters become decisions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecisionSpec {
    /// Which document of a cluster is kept.
    pub keep: KeepRule,
    /// Which members of a cluster are removed.
    pub removal: Removal,
    /// The job fails (no `_SUCCESS`) when more than this fraction of records is rejected.
    pub max_reject_ratio: f64,
}

impl Default for DecisionSpec {
    fn default() -> Self {
        DecisionSpec { keep: KeepRule::First, removal: Removal::Connected, max_reject_ratio: 0.5 }
    }
}

/// The job file: every setting that changes results. Topology (workers, processes) is not
/// here: it never changes results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobSpec {
    /// Signature method.
    pub method: Method,
    /// Seed of every hash, permutation and key.
    pub seed: u64,
    /// Input fields.
    pub input: InputSpec,
    /// Normalisation steps.
    pub normalize: NormalizeConfig,
    /// Features.
    pub features: FeatureConfig,
    /// MinHash settings.
    pub minhash: MinHashSpec,
    /// SimHash settings.
    pub simhash: SimHashSpec,
    /// Bucket limits.
    pub buckets: BucketSpec,
    /// Decision rules.
    pub decision: DecisionSpec,
    /// Boilerplate of web pages, learned from the corpus and left out of features.
    pub boilerplate: BoilerplateRule,
    /// The index of earlier runs that scheduled runs of this job use (`--index` overrides).
    #[serde(skip_serializing_if = "IndexSpec::is_unset")]
    pub index: IndexSpec,
    /// Paragraph-level dedup (`--paragraphs`): paragraphs of kept documents that a document
    /// kept before them holds are left out. Recorded only when on, so a run without it
    /// records what it did before the setting was added.
    #[serde(skip_serializing_if = "ParagraphSpec::is_off")]
    pub paragraphs: ParagraphSpec,
}

/// `paragraphs.max_repeated_share` unless set: a kept document more than this share of
/// whose characters are in paragraphs other documents hold is removed (see
/// `docs/quality.md` for how it was chosen).
pub const MAX_REPEATED_SHARE: f64 = 0.9;

/// The job file's `[paragraphs]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParagraphSpec {
    /// Leave out repeated paragraphs of kept documents.
    pub enabled: bool,
    /// Passages of at least this many characters, as compared, are paragraphs
    /// ([`neardup_text::PARAGRAPH_MIN_CHARS`]); shorter lines are left to template learning.
    pub min_chars: u32,
    /// A kept document more than this share of whose characters (as compared) are in
    /// paragraphs left out is removed as `mostly_repeated`, unless it holds the first
    /// occurrence of a paragraph a later document left out (0.9 unless set; 1:
    /// never).
    pub max_repeated_share: f64,
}

impl Default for ParagraphSpec {
    fn default() -> Self {
        ParagraphSpec {
            enabled: false,
            min_chars: neardup_text::PARAGRAPH_MIN_CHARS,
            max_repeated_share: MAX_REPEATED_SHARE,
        }
    }
}

impl ParagraphSpec {
    /// Whether paragraph-level dedup is off.
    pub fn is_off(&self) -> bool {
        !self.enabled
    }
}

/// The job file's `[index]`: the index of earlier runs this job deduplicates against and
/// adds to, so that scheduled runs need not repeat `--index`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexSpec {
    /// The index folder (made on first use); a relative path is from the working directory,
    /// as `--index` is.
    pub dir: Option<PathBuf>,
}

impl IndexSpec {
    /// Whether no index is set.
    pub fn is_unset(&self) -> bool {
        self.dir.is_none()
    }
}

impl JobSpec {
    /// Characters per n-gram: `features.ngram_chars`, or by method when unset
    /// ([`SIMHASH_NGRAM_CHARS`] for SimHash, [`neardup_text::DEFAULT_NGRAM_CHARS`] for
    /// MinHash).
    pub fn ngram_chars(&self) -> usize {
        self.features.ngram_chars.unwrap_or(match self.method {
            Method::Minhash => neardup_text::DEFAULT_NGRAM_CHARS,
            Method::Simhash => SIMHASH_NGRAM_CHARS,
        })
    }

    /// Characters per n-gram of Han, Hiragana or Katakana: `features.han_ngram_chars`, or
    /// by method when unset ([`SIMHASH_HAN_NGRAM_CHARS`] for SimHash,
    /// [`neardup_text::DEFAULT_HAN_NGRAM_CHARS`] for MinHash; both leave it
    /// [`JobSpec::ngram_chars`]).
    pub fn han_ngram_chars(&self) -> usize {
        self.features.han_ngram_chars.unwrap_or_else(|| {
            let by_method = match self.method {
                Method::Minhash => neardup_text::DEFAULT_HAN_NGRAM_CHARS,
                Method::Simhash => SIMHASH_HAN_NGRAM_CHARS,
            };
            neardup_text::default_han_ngram_chars(by_method, self.ngram_chars())
        })
    }

    /// The feature settings with the n-gram lengths resolved ([`JobSpec::ngram_chars`],
    /// [`JobSpec::han_ngram_chars`]) and the over-frequency cap (unset:
    /// [`neardup_text::MAX_FEATURE_COUNT`]; a run's analysers take
    /// [`crate::JobConfig::feature_config`], which gives web pages SimHash's own cap).
    pub fn feature_config(&self) -> FeatureConfig {
        FeatureConfig {
            ngram_chars: Some(self.ngram_chars()),
            han_ngram_chars: Some(self.han_ngram_chars()),
            max_feature_count: Some(self.features.max_feature_count()),
            ..self.features.clone()
        }
    }

    /// Checks the settings that do not depend on the method or the inputs.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        let f = &self.features;
        let n = self.ngram_chars();
        if n == 0 || n > 64 {
            return Err(invalid("features.ngram_chars", format!("must be 1..=64, got {n}")));
        }
        let han = self.han_ngram_chars();
        if han == 0 || han > 64 {
            return Err(invalid("features.han_ngram_chars", format!("must be 1..=64, got {han}")));
        }
        if f.shingle_words == 0 || f.shingle_words > 16 {
            return Err(invalid(
                "features.shingle_words",
                format!("must be 1..=16, got {}", f.shingle_words),
            ));
        }
        if f.max_feature_count == Some(0) {
            return Err(invalid("features.max_feature_count", "must be at least 1".into()));
        }
        if self.input.max_record_bytes == Some(0) {
            return Err(invalid("input.max_record_bytes", "must be at least 1".into()));
        }
        if self.input.text_field.is_empty() {
            return Err(invalid("input.text_field", "must name a field".into()));
        }
        let b = &self.buckets;
        if b.max_bucket_size < 2 {
            return Err(invalid(
                "buckets.max_bucket_size",
                format!("must be at least 2, got {}", b.max_bucket_size),
            ));
        }
        if b.bucket_anchors == 0 || b.bucket_anchors > b.max_bucket_size {
            return Err(invalid(
                "buckets.bucket_anchors",
                format!(
                    "must be 1..=max_bucket_size ({}), got {}",
                    b.max_bucket_size, b.bucket_anchors
                ),
            ));
        }
        let ratio = self.decision.max_reject_ratio;
        if !(0.0..=1.0).contains(&ratio) {
            return Err(invalid(
                "decision.max_reject_ratio",
                format!("must be within 0..=1, got {ratio}"),
            ));
        }
        let bp = &self.boilerplate;
        for (key, share) in [
            ("boilerplate.min_share", bp.min_share),
            ("boilerplate.corpus_min_share", bp.corpus_min_share),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return Err(invalid(key, format!("must be within 0..=1, got {share}")));
            }
        }
        if bp.min_pages < 2 || bp.corpus_min_hosts < 2 {
            let (key, value) = if bp.min_pages < 2 {
                ("boilerplate.min_pages", bp.min_pages)
            } else {
                ("boilerplate.corpus_min_hosts", bp.corpus_min_hosts)
            };
            return Err(invalid(key, format!("must be at least 2, got {value}")));
        }
        if self.paragraphs.min_chars == 0 {
            return Err(invalid("paragraphs.min_chars", "must be at least 1".into()));
        }
        let share = self.paragraphs.max_repeated_share;
        if !(share > 0.0 && share <= 1.0) {
            let why = format!("must be above 0 and at most 1 (1: never remove), got {share}");
            return Err(invalid("paragraphs.max_repeated_share", why));
        }
        Ok(())
    }
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            method: Method::Minhash,
            seed: 42,
            input: InputSpec::default(),
            normalize: NormalizeConfig::default(),
            features: FeatureConfig::default(),
            minhash: MinHashSpec::default(),
            simhash: SimHashSpec::default(),
            buckets: BucketSpec::default(),
            decision: DecisionSpec::default(),
            boilerplate: BoilerplateRule::default(),
            index: IndexSpec::default(),
            paragraphs: ParagraphSpec::default(),
        }
    }
}
