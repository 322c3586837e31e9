//! Analysis and signing of one document, free of dataflow so it is tested alone.

use std::sync::Arc;

use neardup_core::{CountMinSketch, MinHasher, Signature, SimHash};
use neardup_io::index::Frequencies;
use neardup_io::{InputDoc, OwnText, Reason, Record, RejectedRecord};
use neardup_text::{
    Analysis, AnalyzeScratch, Analyzer, Blocks, Boilerplate, FeatureExtractor, LineKey,
    LineScratch, Normalizer, ParagraphScratch, Paragraphs, Segmenter, Stripped, WordIdf,
};

use crate::settings::config::{JobConfig, MethodParams};
use crate::settings::spec::{IdfSource, JobSpec, Weighting};
use crate::storage::records::SignedDoc;

/// Inverse document frequencies for SimHash `tf_idf` weights.
#[derive(Clone, Debug)]
pub enum IdfWeights {
    /// Document frequencies counted over the corpus.
    Corpus {
        /// Features counted once per document.
        sketch: CountMinSketch,
        /// Documents counted.
        documents: u64,
    },
    /// jieba's table of word IDFs.
    Words(WordIdf),
}

impl IdfWeights {
    /// The IDF of a feature. For corpus counts this is the smoothed
    /// `ln((1 + D) / (1 + df)) + 1`, so a feature in every document keeps weight 1.
    pub fn idf(&self, feature: u64) -> f64 {
        match self {
            IdfWeights::Corpus { sketch, documents } => {
                let df = u64::from(sketch.estimate(feature)).min(*documents);
                ((1.0 + *documents as f64) / (1.0 + df as f64)).ln() + 1.0
            }
            IdfWeights::Words(table) => table.idf(feature),
        }
    }

    /// The corpus's sketch and document count, for corpus counts.
    pub(crate) fn corpus(&self) -> Option<(&CountMinSketch, u64)> {
        match self {
            IdfWeights::Corpus { sketch, documents } => Some((sketch, *documents)),
            IdfWeights::Words(_) => None,
        }
    }

    /// Corpus counts as the index (and the work area) keeps them.
    pub(crate) fn frequencies(&self) -> Option<Frequencies> {
        let (sketch, documents) = self.corpus()?;
        Some(Frequencies {
            depth: u32::try_from(sketch.depth()).expect("a few rows"),
            width_bits: sketch.width_bits(),
            documents,
            counts: sketch.counts().to_vec(),
        })
    }

    /// Weights by the corpus counts `frequencies` keeps.
    pub fn from_frequencies(frequencies: &Frequencies) -> IdfWeights {
        let depth = usize::try_from(frequencies.depth).expect("a few rows");
        let mut sketch = CountMinSketch::new(depth, frequencies.width_bits);
        sketch.merge_counts(0, &frequencies.counts);
        IdfWeights::Corpus { sketch, documents: frequencies.documents }
    }
}

/// The text of `doc` that a job analyses: for a web page (a document with a URL) when
/// boilerplate was learned, the page without its boilerplate lines (written to `content`,
/// with what was left out); otherwise the whole text.
pub fn page_text<'a>(
    boilerplate: Option<&Boilerplate>,
    doc: &'a InputDoc,
    lines: &mut LineScratch,
    content: &'a mut String,
) -> (&'a str, Option<Stripped>) {
    web_page_text(boilerplate, doc, content, |b, url, out| b.strip(&doc.text, url, lines, out))
}

/// The lines of a page's `text` that [`page_text`] left out of `kept` (which holds some of
/// its lines, in order), blank lines aside: the template lines and the lines outside the
/// main text, as `explain` and the report list them.
pub fn lines_left_out(text: &str, kept: &str) -> Vec<String> {
    let mut kept = kept.lines().peekable();
    let mut out = Vec::new();
    for line in text.lines() {
        if kept.peek() == Some(&line) {
            kept.next();
        } else if !line.trim().is_empty() {
            out.push(line.to_string());
        }
    }
    out
}

/// [`page_text`] of a record the first pass kept, with the keys of its lines as that pass
/// computed them (see [`crate::input::source::read_once`]): its lines are not hashed again.
pub(crate) fn kept_page_text<'a>(
    boilerplate: Option<&Boilerplate>,
    doc: &'a InputDoc,
    lines: &[Option<LineKey>],
    content: &'a mut String,
) -> (&'a str, Option<Stripped>) {
    web_page_text(boilerplate, doc, content, |b, url, out| {
        b.strip_lines(&doc.text, url, lines, out)
    })
}

/// Takes `content`, what leaving out boilerplate left of `doc` (`stripped` says what that
/// was), as the text the job analyses, and marks how much of it is the page's own.
pub(crate) fn take_page_text(doc: &mut InputDoc, content: &mut String, stripped: &Stripped) {
    std::mem::swap(&mut doc.text, content);
    if let Some(meta) = doc.meta.as_deref_mut() {
        meta.own_text = if stripped.template_only { OwnText::Absent } else { OwnText::Present };
    }
}

/// `doc`'s text, or for a web page when boilerplate was learned what `strip` leaves in
/// `content`.
fn web_page_text<'a>(
    boilerplate: Option<&Boilerplate>,
    doc: &'a InputDoc,
    content: &'a mut String,
    strip: impl FnOnce(&Boilerplate, &str, &mut String) -> Stripped,
) -> (&'a str, Option<Stripped>) {
    let url = doc.meta.as_deref().and_then(|m| m.url.as_deref());
    match (boilerplate, url) {
        (Some(boilerplate), Some(url)) => {
            let stripped = strip(boilerplate, url, content);
            (content, Some(stripped))
        }
        _ => (&doc.text, None),
    }
}

/// Turns input documents into [`SignedDoc`]s. Cheap to clone into workers.
#[derive(Clone, Debug)]
pub struct Signer {
    analyzer: Analyzer,
    minhasher: Option<MinHasher>,
    idf: Option<Arc<IdfWeights>>,
    min_features: usize,
    keep_feature_sets: bool,
    /// Cuts texts into paragraphs, with paragraph-level dedup on.
    paragraphs: Option<Paragraphs>,
}

/// Reusable buffers for [`Signer::sign`].
#[derive(Debug, Default)]
pub struct SignScratch {
    analyze: AnalyzeScratch,
    analysis: Analysis,
    paragraph: ParagraphScratch,
}

impl Signer {
    /// A signer for `config`. `segmenter` must be given when the features need words
    /// ([`Signer::needs_segmenter`]); build it once per job. `corpus_idf` holds the corpus
    /// document frequencies when [`JobConfig::needs_corpus_idf`]; jieba's table is loaded
    /// here when the job asks for it.
    ///
    /// # Panics
    /// If the job needs corpus IDF and `corpus_idf` is `None`.
    pub fn new(
        config: &JobConfig,
        segmenter: Option<Segmenter>,
        corpus_idf: Option<IdfWeights>,
    ) -> Self {
        let spec = &config.spec;
        let analyzer = Self::analyzer_for(config, segmenter);
        let minhasher = match &config.params {
            MethodParams::Minhash { num_perm, .. } => Some(
                MinHasher::try_new(*num_perm, spec.seed).expect("num_perm checked by JobConfig"),
            ),
            MethodParams::Simhash { .. } => None,
        };
        let tf_idf = config.weighting() == Some(Weighting::TfIdf);
        let idf = match (tf_idf, config.spec.simhash.idf) {
            (false, _) => None,
            (true, IdfSource::Corpus) => {
                Some(corpus_idf.expect("corpus IDF is counted before signing"))
            }
            (true, IdfSource::Jieba) => {
                Some(IdfWeights::Words(WordIdf::jieba(analyzer.extractor())))
            }
        };
        Signer {
            idf: idf.map(Arc::new),
            analyzer,
            minhasher,
            // An empty feature set would share every band with every other empty set.
            min_features: spec.features.min_features.max(1),
            keep_feature_sets: matches!(config.params, MethodParams::Minhash { .. })
                && spec.minhash.verify == neardup_core::JaccardMode::Exact,
            paragraphs: spec.paragraphs.enabled.then(|| {
                let normalizer = Normalizer::new(spec.normalize.clone());
                let drop_punctuation = config.feature_config().drop_punctuation;
                Paragraphs::new(normalizer, drop_punctuation, spec.paragraphs.min_chars, spec.seed)
            }),
        }
    }

    /// The analyser (normalisation and features) of `config`.
    pub fn analyzer_for(config: &JobConfig, segmenter: Option<Segmenter>) -> Analyzer {
        let spec = &config.spec;
        Analyzer::new(spec.normalize.clone(), config.feature_config(), spec.seed, segmenter)
    }

    /// The analyser of a job's settings, building the segmenter when the features need it.
    pub fn spec_analyzer(spec: &JobSpec) -> Analyzer {
        let segmenter = FeatureExtractor::needs_segmenter(&spec.features)
            .then(|| Segmenter::new(spec.features.jieba_hmm));
        Self::analyzer_for_spec(spec, segmenter)
    }

    fn analyzer_for_spec(spec: &JobSpec, segmenter: Option<Segmenter>) -> Analyzer {
        Analyzer::new(spec.normalize.clone(), spec.feature_config(), spec.seed, segmenter)
    }

    /// The analyser (normalisation and features).
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// Whether the job's features need a word segmenter.
    pub fn needs_segmenter(config: &JobConfig) -> bool {
        FeatureExtractor::needs_segmenter(&config.spec.features)
    }

    /// Signs a record as read: a document as [`Signer::sign`] does, a reader's reject as
    /// it is.
    pub(crate) fn sign_record(
        &self,
        record: Record,
        scratch: &mut SignScratch,
    ) -> Result<SignedDoc, RejectedRecord> {
        match record {
            Record::Doc(doc) => self.sign(doc, scratch),
            Record::Reject(reject) => Err(reject),
        }
    }

    /// Analyses and signs `doc`, whose text is what the job analyses (for a web page, its
    /// text without the learned boilerplate: the main pass leaves it out as it replays the
    /// records the first pass kept). A document with nothing left after normalisation is
    /// rejected as [`Reason::EmptyText`].
    pub fn sign(
        &self,
        doc: InputDoc,
        scratch: &mut SignScratch,
    ) -> Result<SignedDoc, RejectedRecord> {
        let SignScratch { analyze, analysis, paragraph } = scratch;
        self.analyzer.analyze_into(&doc.text, analyze, analysis);
        if analysis.normalized_chars == 0 {
            return Err(RejectedRecord {
                doc: doc.doc,
                id: Some(doc.id),
                reason: Reason::EmptyText,
                detail: "nothing is left of the text after normalisation".into(),
            });
        }
        let features = &analysis.features;
        // A page with nothing of its own left is never joined by what its template shares.
        let own = doc.meta.as_deref().map_or(OwnText::Present, |m| m.own_text);
        let matched = features.len() >= self.min_features && own != OwnText::Absent;
        let signature = matched.then(|| match &self.minhasher {
            Some(hasher) => Signature::MinHash(hasher.sign(features.hashes())),
            None => Signature::SimHash(match &self.idf {
                None => SimHash::from_counts(features.hashes(), features.counts()),
                Some(idf) => {
                    let weighted = features.hashes().iter().zip(features.counts());
                    SimHash::from_weighted(weighted.map(|(h, c)| (*h, f64::from(*c) * idf.idf(*h))))
                }
            }),
        });
        let feature_set =
            if matched && self.keep_feature_sets { features.sorted_hashes() } else { Vec::new() };
        let (mut paragraphs, mut paragraph_chars) = (Vec::new(), 0);
        if let Some(cutter) = &self.paragraphs {
            // A web page's text is one block of its HTML a line (its main text, as compared).
            let web = doc.meta.as_deref().is_some_and(|m| m.url.is_some());
            let blocks = if web { Blocks::Lines } else { Blocks::BlankLines };
            paragraph_chars = cutter.of(&doc.text, blocks, paragraph, &mut paragraphs);
        }
        Ok(SignedDoc {
            doc: doc.doc,
            id: doc.id,
            content: analysis.content_hash,
            chars: analysis.normalized_chars as u64,
            features: u32::try_from(features.len()).unwrap_or(u32::MAX),
            signature,
            feature_set,
            web: doc.meta,
            paragraphs,
            paragraph_chars,
        })
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::DocId;

    use super::*;
    use crate::settings::spec::{JobSpec, Method};

    fn job(spec: JobSpec) -> (tempfile::TempDir, JobConfig) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        let config = JobConfig::new(spec, &[path], dir.path().join("out")).unwrap();
        (dir, config)
    }

    fn input(text: &str) -> InputDoc {
        InputDoc { doc: DocId::new(0, 1), id: "x".into(), text: text.into(), meta: None }
    }

    #[test]
    fn signs_rejects_and_skips_short_documents() {
        let (_d, config) = job(JobSpec::default());
        let signer = Signer::new(&config, None, None);
        let mut scratch = SignScratch::default();
        let long =
            signer.sign(input("a long enough document to have features"), &mut scratch).unwrap();
        assert!(matches!(long.signature, Some(Signature::MinHash(ref s)) if s.len() == 128));
        assert!(long.feature_set.is_empty());
        let short = signer.sign(input("tiny"), &mut scratch).unwrap();
        assert_eq!((short.features, short.signature), (0, None));
        let empty = signer.sign(input("<p> </p>"), &mut scratch).unwrap_err();
        assert_eq!(empty.reason, Reason::EmptyText);
    }

    #[test]
    fn tf_idf_weights_change_the_fingerprint() {
        use neardup_text::FeatureKind;
        let mut spec = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        spec.features.kind = FeatureKind::Words;
        let (_d, tf) = job(spec.clone());
        spec.simhash.weighting = Some(Weighting::TfIdf);
        spec.simhash.idf = IdfSource::Jieba;
        let (_d2, jieba) = job(spec);
        let seg = Some(Segmenter::new(true));
        let text = "劳动防护用品的发放标准由国家统一规定，各地劳动部门负责监督检查。";
        let a = Signer::new(&tf, seg.clone(), None)
            .sign(input(text), &mut SignScratch::default())
            .unwrap();
        let b =
            Signer::new(&jieba, seg, None).sign(input(text), &mut SignScratch::default()).unwrap();
        assert_ne!(a.signature, b.signature);

        // Corpus IDF: a feature in every document weighs 1, one in no other document more.
        let mut sketch = CountMinSketch::new(4, 10);
        for _ in 0..100 {
            sketch.add(7);
        }
        let idf = IdfWeights::Corpus { sketch, documents: 100 };
        assert!((idf.idf(7) - (101f64 / 101.0).ln() - 1.0).abs() < 1e-12);
        assert!(idf.idf(8) > 5.0);
    }

    #[test]
    fn simhash_and_exact_jaccard_variants() {
        let (_d, config) = job(JobSpec { method: Method::Simhash, ..JobSpec::default() });
        let signed = Signer::new(&config, None, None)
            .sign(input("some words in a document"), &mut SignScratch::default())
            .unwrap();
        assert!(matches!(signed.signature, Some(Signature::SimHash(_))));
        let mut spec = JobSpec::default();
        spec.minhash.verify = neardup_core::JaccardMode::Exact;
        let (_d, config) = job(spec);
        let signed = Signer::new(&config, None, None)
            .sign(input("some words in a document"), &mut SignScratch::default())
            .unwrap();
        assert_eq!(signed.feature_set.len(), signed.features as usize);
    }
}
