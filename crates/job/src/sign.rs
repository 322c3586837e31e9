//! Analysis and signing of one document, free of dataflow so it is tested alone.

use neardup_core::{MinHasher, Signature, SimHash};
use neardup_io::{InputDoc, Reason, RejectedRecord};
use neardup_text::{Analysis, AnalyzeScratch, Analyzer, FeatureExtractor, Segmenter};

use crate::config::{JobConfig, MethodParams};
use crate::records::SignedDoc;

/// Turns input documents into [`SignedDoc`]s. Cheap to clone into workers.
#[derive(Clone, Debug)]
pub struct Signer {
    analyzer: Analyzer,
    minhasher: Option<MinHasher>,
    min_features: usize,
    keep_feature_sets: bool,
}

/// Reusable buffers for [`Signer::sign`].
#[derive(Debug, Default)]
pub struct SignScratch {
    analyze: AnalyzeScratch,
    analysis: Analysis,
}

impl Signer {
    /// A signer for `config`. `segmenter` must be given when the features need words
    /// ([`Signer::needs_segmenter`]); build it once per job.
    pub fn new(config: &JobConfig, segmenter: Option<Segmenter>) -> Self {
        let spec = &config.spec;
        let analyzer = Analyzer::new(
            spec.normalize.clone(),
            spec.features.clone(),
            spec.seed,
            segmenter,
        );
        let minhasher = match &config.params {
            MethodParams::Minhash { num_perm, .. } => Some(
                MinHasher::try_new(*num_perm, spec.seed).expect("num_perm checked by JobConfig"),
            ),
            MethodParams::Simhash { .. } => None,
        };
        Signer {
            analyzer,
            minhasher,
            // An empty feature set would share every band with every other empty set.
            min_features: spec.features.min_features.max(1),
            keep_feature_sets: matches!(config.params, MethodParams::Minhash { .. })
                && spec.minhash.verify == neardup_core::JaccardMode::Exact,
        }
    }

    /// Whether the job's features need a word segmenter.
    pub fn needs_segmenter(config: &JobConfig) -> bool {
        FeatureExtractor::needs_segmenter(&config.spec.features)
    }

    /// Analyses and signs `doc`. A document with nothing left after normalisation is
    /// rejected as [`Reason::EmptyText`].
    pub fn sign(
        &self,
        doc: InputDoc,
        scratch: &mut SignScratch,
    ) -> Result<SignedDoc, RejectedRecord> {
        let SignScratch { analyze, analysis } = scratch;
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
        let matched = features.len() >= self.min_features;
        let signature = matched.then(|| match &self.minhasher {
            Some(hasher) => Signature::MinHash(hasher.sign(features.hashes())),
            None => Signature::SimHash(SimHash::from_weighted(
                features
                    .hashes()
                    .iter()
                    .zip(features.counts())
                    .map(|(h, c)| (*h, f64::from(*c))),
            )),
        });
        let feature_set = if matched && self.keep_feature_sets {
            features.hashes().to_vec()
        } else {
            Vec::new()
        };
        Ok(SignedDoc {
            doc: doc.doc,
            id: doc.id,
            content: analysis.content_hash,
            chars: analysis.normalized_chars as u64,
            features: u32::try_from(features.len()).unwrap_or(u32::MAX),
            signature,
            feature_set,
        })
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::DocId;

    use super::*;
    use crate::config::{JobSpec, Method};

    fn job(spec: JobSpec) -> (tempfile::TempDir, JobConfig) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        let config = JobConfig::new(spec, &[path], dir.path().join("out")).unwrap();
        (dir, config)
    }

    fn input(text: &str) -> InputDoc {
        InputDoc {
            doc: DocId::new(0, 1),
            id: "x".into(),
            text: text.into(),
        }
    }

    #[test]
    fn signs_rejects_and_skips_short_documents() {
        let (_d, config) = job(JobSpec::default());
        let signer = Signer::new(&config, None);
        let mut scratch = SignScratch::default();
        let long = signer
            .sign(
                input("a long enough document to have features"),
                &mut scratch,
            )
            .unwrap();
        assert!(matches!(long.signature, Some(Signature::MinHash(ref s)) if s.len() == 128));
        assert!(long.feature_set.is_empty());
        let short = signer.sign(input("tiny"), &mut scratch).unwrap();
        assert_eq!((short.features, short.signature), (0, None));
        let empty = signer.sign(input("<p> </p>"), &mut scratch).unwrap_err();
        assert_eq!(empty.reason, Reason::EmptyText);
    }

    #[test]
    fn simhash_and_exact_jaccard_variants() {
        let (_d, config) = job(JobSpec {
            method: Method::Simhash,
            ..JobSpec::default()
        });
        let signed = Signer::new(&config, None)
            .sign(
                input("some words in a document"),
                &mut SignScratch::default(),
            )
            .unwrap();
        assert!(matches!(signed.signature, Some(Signature::SimHash(_))));
        let mut spec = JobSpec::default();
        spec.minhash.verify = neardup_core::JaccardMode::Exact;
        let (_d, config) = job(spec);
        let signed = Signer::new(&config, None)
            .sign(
                input("some words in a document"),
                &mut SignScratch::default(),
            )
            .unwrap();
        assert_eq!(signed.feature_set.len(), signed.features as usize);
    }
}
