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
    /// Estimated (or exact) containment of the smaller feature set in the larger (MinHash
    /// with a containment rule only).
    pub containment: Option<f64>,
    /// The measure that passed (or, for a pair that fails, the method's first measure).
    pub measure: Measure,
    /// Hamming distance of the fingerprints (SimHash only).
    pub hamming: Option<u32>,
    /// Bands on which the signatures agree completely (MinHash only).
    pub matching_bands: Option<u32>,
    /// Whether the pair passes the threshold and is a verified duplicate pair.
    pub is_duplicate: bool,
}

/// Which measure verified a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Jaccard similarity at least the threshold.
    Jaccard,
    /// Containment at least its minimum, with Jaccard at least its floor.
    Containment,
    /// Hamming distance at most the largest (SimHash).
    Hamming,
}

impl Measure {
    /// The name in `pairs/`.
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Jaccard => "jaccard",
            Measure::Containment => "containment",
            Measure::Hamming => "hamming",
        }
    }
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

/// A second way for a MinHash pair to pass: most of the smaller document is in the larger
/// (a teaser, a page cut at "Read more"), although Jaccard is below the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Containment {
    /// Least share of the smaller feature set found in the larger.
    pub min_containment: f64,
    /// Least Jaccard of such a pair: the shortest copy accepted, as a share of the longer
    /// (an article quoting a paragraph of another is contained but far from it).
    pub min_jaccard: f64,
}

impl Containment {
    /// Containment `|A ∩ B| / min(|A|, |B|)` from a Jaccard similarity and the sizes of the
    /// two sets: `|A ∩ B| = J (|A| + |B|) / (1 + J)`, rounded to a count (so an exact
    /// Jaccard gives the exact containment). At most 1; 0 for an empty set.
    pub fn from_jaccard(jaccard: f64, a: u32, b: u32) -> f64 {
        let smaller = a.min(b);
        if smaller == 0 {
            return 0.0;
        }
        let intersection = (jaccard * (f64::from(a) + f64::from(b)) / (1.0 + jaccard)).round();
        (intersection / f64::from(smaller)).min(1.0)
    }
}

/// One document of a pair as verification needs it.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// Its signature.
    pub signature: &'a Signature,
    /// Its distinct features (for containment).
    pub features: u32,
    /// Its sorted distinct feature hashes, for [`JaccardMode::Exact`] (empty otherwise).
    pub feature_set: &'a [u64],
}

impl<'a> Side<'a> {
    /// A side without its feature set.
    pub fn new(signature: &'a Signature, features: u32) -> Self {
        Side { signature, features, feature_set: &[] }
    }
}

/// Verifies candidate pairs against the method's threshold.
#[derive(Clone, Debug)]
pub enum Verifier {
    /// MinHash: similarity at least `threshold`, or containment under its rule.
    MinHash {
        /// Jaccard threshold.
        threshold: f64,
        /// Bands and rows, to report matching bands.
        lsh: LshParams,
        /// Signature estimate or exact Jaccard.
        mode: JaccardMode,
        /// Containment as a second measure, if any.
        containment: Option<Containment>,
    },
    /// SimHash: Hamming distance at most the layout's `max_distance`.
    SimHash {
        /// Block layout, for the distance and shared tables.
        layout: BlockLayout,
    },
}

impl Verifier {
    /// Compares two documents. Their feature sets are needed only for
    /// [`JaccardMode::Exact`], their feature counts only for containment.
    ///
    /// # Panics
    /// If the signatures are of a different method than the verifier (a wiring bug).
    pub fn verify(&self, a: Side<'_>, b: Side<'_>) -> Verdict {
        match (self, a.signature, b.signature) {
            (
                Verifier::MinHash { threshold, lsh, mode, containment },
                Signature::MinHash(x),
                Signature::MinHash(y),
            ) => {
                let similarity = match mode {
                    JaccardMode::Signature => x.jaccard_estimate(y),
                    JaccardMode::Exact => jaccard_sorted(a.feature_set, b.feature_set),
                };
                // Exact when the Jaccard is: the sizes give the intersection back.
                let contained = containment
                    .map(|_| Containment::from_jaccard(similarity, a.features, b.features));
                let by_jaccard = similarity >= *threshold;
                let by_containment = containment.zip(contained).is_some_and(|(c, contained)| {
                    similarity >= c.min_jaccard && contained >= c.min_containment
                });
                Verdict {
                    similarity,
                    containment: contained,
                    measure: if !by_jaccard && by_containment {
                        Measure::Containment
                    } else {
                        Measure::Jaccard
                    },
                    hamming: None,
                    matching_bands: Some(lsh.matching_bands(x, y)),
                    is_duplicate: by_jaccard || by_containment,
                }
            }
            (Verifier::SimHash { layout }, Signature::SimHash(x), Signature::SimHash(y)) => {
                let distance = x.hamming(*y);
                Verdict {
                    similarity: x.similarity(*y),
                    containment: None,
                    measure: Measure::Hamming,
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
        let side =
            |s, f: &'static [u64]| Side { signature: s, features: f.len() as u32, feature_set: f };
        let (a, b): (&'static [u64], &'static [u64]) = (a.leak(), b.leak());
        let strict =
            Verifier::MinHash { threshold: 0.99, lsh, mode: JaccardMode::Exact, containment: None };
        let v = strict.verify(side(&sa, a), side(&sb, b));
        assert!((v.similarity - 100.0 / 105.0).abs() < 1e-12);
        assert!(!v.is_duplicate && v.containment.is_none());
        let loose =
            Verifier::MinHash { threshold: 0.9, lsh, mode: JaccardMode::Exact, containment: None };
        let v = loose.verify(side(&sa, a), side(&sb, b));
        assert!(v.is_duplicate && v.measure == Measure::Jaccard);
    }

    #[test]
    fn simhash_verdicts_use_the_distance() {
        let layout = BlockLayout::try_new(4, 3).unwrap();
        let verifier = Verifier::SimHash { layout };
        let a = Signature::SimHash(SimHash::from_bits(0));
        let near = Signature::SimHash(SimHash::from_bits(0b111));
        let far = Signature::SimHash(SimHash::from_bits(0b1111));
        let v = verifier.verify(Side::new(&a, 0), Side::new(&near, 0));
        assert_eq!(v.hamming, Some(3));
        assert!(v.is_duplicate);
        assert!((v.similarity - (1.0 - 3.0 / 64.0)).abs() < 1e-12);
        assert_eq!(v.measure, Measure::Hamming);
        assert!(!verifier.verify(Side::new(&a, 0), Side::new(&far, 0)).is_duplicate);
    }

    /// A teaser holding the first 60% of an article: Jaccard 0.6, containment 1. It passes by
    /// containment with a Jaccard floor of 0.5, and not with one of 0.7; a short quote of it
    /// (all of the quote inside, Jaccard 0.1) never does.
    #[test]
    fn containment_passes_truncated_copies_above_its_jaccard_floor() {
        let hasher = MinHasher::try_new(256, 7).unwrap();
        let article: Vec<u64> = (0..1000).collect();
        let teaser: Vec<u64> = (0..600).collect();
        let quote: Vec<u64> = (300..400).collect();
        let lsh = LshParams::try_new(32, 4).unwrap();
        let rule = |min_jaccard| Containment { min_containment: 0.9, min_jaccard };
        let sig = |f: &[u64]| Signature::MinHash(hasher.sign(f));
        let (sa, st, sq) = (sig(&article), sig(&teaser), sig(&quote));
        for mode in [JaccardMode::Exact, JaccardMode::Signature] {
            let side = |s, f: &'static [u64]| Side {
                signature: s,
                features: f.len() as u32,
                feature_set: if mode == JaccardMode::Exact { f } else { &[] },
            };
            let (a, t, q): (&'static [u64], &'static [u64], &'static [u64]) =
                (article.clone().leak(), teaser.clone().leak(), quote.clone().leak());
            let verifier = |min_jaccard| Verifier::MinHash {
                threshold: 0.8,
                lsh,
                mode,
                containment: Some(rule(min_jaccard)),
            };
            let v = verifier(0.5).verify(side(&sa, a), side(&st, t));
            assert!(v.is_duplicate && v.measure == Measure::Containment, "{mode:?} {v:?}");
            assert!((v.similarity - 0.6).abs() < 0.1, "{v:?}");
            assert!(v.containment.unwrap() > 0.9, "{v:?}");
            assert!(!verifier(0.7).verify(side(&sa, a), side(&st, t)).is_duplicate);
            let v = verifier(0.5).verify(side(&sa, a), side(&sq, q));
            assert!(!v.is_duplicate, "{mode:?} {v:?}");
            if mode == JaccardMode::Exact {
                assert_eq!(v.containment, Some(1.0), "the quote is all inside");
            }
        }
    }

    #[test]
    fn containment_from_jaccard_inverts_the_sizes() {
        // |A| = 100, |B| = 60 inside it: J = 0.6, containment 1.
        assert!((Containment::from_jaccard(0.6, 100, 60) - 1.0).abs() < 1e-12);
        // Half of B inside A: |A ∩ B| = 30, union 130.
        assert!((Containment::from_jaccard(30.0 / 130.0, 100, 60) - 0.5).abs() < 1e-12);
        assert_eq!(Containment::from_jaccard(0.5, 0, 10), 0.0);
        assert!(Containment::from_jaccard(1.0, 10, 10) <= 1.0);
    }
}
