//! A document's signature under either method, and the verification of candidate pairs.

use serde::{Deserialize, Serialize};

use crate::{BlockLayout, LshParams, MinHashSignature, SimHash, jaccard_sorted};

/// A document's signature: MinHash values or a SimHash fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Signature {
    /// MinHash values, one per permutation.
    MinHash(MinHashSignature),
    /// A 64-bit SimHash fingerprint.
    SimHash(SimHash),
}

/// The outcome of comparing a candidate pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// Estimated (or exact) Jaccard for MinHash, `1 - hamming/64` for SimHash.
    pub similarity: f64,
    /// Hamming distance of the fingerprints (SimHash only).
    pub hamming: Option<u32>,
    /// Bands on which the signatures agree completely (MinHash only).
    pub matching_bands: Option<u32>,
    /// Whether the pair passes the threshold and is a verified duplicate pair.
    pub is_duplicate: bool,
}

/// How MinHash candidates are verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JaccardMode {
    /// The fraction of agreeing permutations over the whole signature.
    #[default]
    Signature,
    /// Exact Jaccard of the two feature sets (the sets travel with the signatures).
    Exact,
}

/// Verifies candidate pairs against the method's threshold.
#[derive(Clone, Debug)]
pub enum Verifier {
    /// MinHash: similarity at least `threshold`.
    MinHash {
        /// Jaccard threshold.
        threshold: f64,
        /// Bands and rows, to report matching bands.
        lsh: LshParams,
        /// Signature estimate or exact Jaccard.
        mode: JaccardMode,
    },
    /// SimHash: Hamming distance at most the layout's `max_distance`.
    SimHash {
        /// Block layout, for the distance and shared tables.
        layout: BlockLayout,
    },
}

impl Verifier {
    /// Compares two documents. `features_*` are the sorted distinct feature hashes, needed
    /// only for [`JaccardMode::Exact`] (pass empty slices otherwise).
    ///
    /// # Panics
    /// If the signatures are of a different method than the verifier (a wiring bug).
    pub fn verify(
        &self,
        a: &Signature,
        b: &Signature,
        features_a: &[u64],
        features_b: &[u64],
    ) -> Verdict {
        match (self, a, b) {
            (
                Verifier::MinHash { threshold, lsh, mode },
                Signature::MinHash(x),
                Signature::MinHash(y),
            ) => {
                let similarity = match mode {
                    JaccardMode::Signature => x.jaccard_estimate(y),
                    JaccardMode::Exact => jaccard_sorted(features_a, features_b),
                };
                Verdict {
                    similarity,
                    hamming: None,
                    matching_bands: Some(lsh.matching_bands(x, y)),
                    is_duplicate: similarity >= *threshold,
                }
            }
            (Verifier::SimHash { layout }, Signature::SimHash(x), Signature::SimHash(y)) => {
                let distance = x.hamming(*y);
                Verdict {
                    similarity: x.similarity(*y),
                    hamming: Some(distance),
                    matching_bands: None,
                    is_duplicate: distance <= layout.max_distance(),
                }
            }
            _ => unreachable!("verifier and signatures come from different methods"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MinHasher;

    #[test]
    fn minhash_verdicts_use_the_threshold() {
        let hasher = MinHasher::try_new(64, 1).unwrap();
        let a: Vec<u64> = (0..100).collect();
        let b: Vec<u64> = (0..100).chain(100..105).collect();
        let (sa, sb) = (Signature::MinHash(hasher.sign(&a)), Signature::MinHash(hasher.sign(&b)));
        let lsh = LshParams::try_new(8, 8).unwrap();
        let strict = Verifier::MinHash { threshold: 0.99, lsh, mode: JaccardMode::Exact };
        let v = strict.verify(&sa, &sb, &a, &b);
        assert!((v.similarity - 100.0 / 105.0).abs() < 1e-12);
        assert!(!v.is_duplicate);
        let loose = Verifier::MinHash { threshold: 0.9, lsh, mode: JaccardMode::Exact };
        assert!(loose.verify(&sa, &sb, &a, &b).is_duplicate);
    }

    #[test]
    fn simhash_verdicts_use_the_distance() {
        let layout = BlockLayout::try_new(4, 3).unwrap();
        let verifier = Verifier::SimHash { layout };
        let a = Signature::SimHash(SimHash::from_bits(0));
        let near = Signature::SimHash(SimHash::from_bits(0b111));
        let far = Signature::SimHash(SimHash::from_bits(0b1111));
        let v = verifier.verify(&a, &near, &[], &[]);
        assert_eq!(v.hamming, Some(3));
        assert!(v.is_duplicate);
        assert!((v.similarity - (1.0 - 3.0 / 64.0)).abs() < 1e-12);
        assert!(!verifier.verify(&a, &far, &[], &[]).is_duplicate);
    }
}
