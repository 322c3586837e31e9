//! A document's signature under either method, and the verification of candidate pairs.

use serde::{Deserialize, Serialize};

use crate::lsh::LshParams;
use crate::minhash::{MinHashSignature, jaccard_sorted};
use crate::simhash::{BlockLayout, SimHash};

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
pub struct Verification {
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
    /// Whether a MinHash pair whose signature estimate is at most `upper` may still be a
    /// duplicate under this verifier (always for other methods and exact Jaccard). A
    /// MinHash verdict never falls as the estimate rises, so `false` rejects the pair
    /// without its signatures.
    pub fn may_pass(&self, upper: f64, a_features: u32, b_features: u32) -> bool {
        match self {
            Verifier::MinHash { threshold, mode: JaccardMode::Signature, containment, .. } => {
                let (_, by_jaccard, by_containment) =
                    minhash_rule(*threshold, *containment, upper, a_features, b_features);
                by_jaccard || by_containment
            }
            _ => true,
        }
    }

    /// Whether [`Verifier::may_pass`] can reject pairs.
    pub fn bounds_by_estimate(&self) -> bool {
        matches!(self, Verifier::MinHash { mode: JaccardMode::Signature, .. })
    }

    /// Compares two documents. Their feature sets are needed only for
    /// [`JaccardMode::Exact`], their feature counts only for containment.
    ///
    /// # Panics
    /// If the signatures are of a different method than the verifier (a wiring bug).
    pub fn verify(&self, a: Side<'_>, b: Side<'_>) -> Verification {
        self.judge(a, b, true)
    }

    /// [`Verifier::verify`]'s verdict when the pair is a duplicate, `None` otherwise:
    /// for a pair that is not, the matching bands (which only a verified pair's row
    /// reports) are not counted.
    ///
    /// # Panics
    /// As [`Verifier::verify`].
    pub fn duplicate(&self, a: Side<'_>, b: Side<'_>) -> Option<Verification> {
        Some(self.judge(a, b, false)).filter(|v| v.is_duplicate)
    }

    fn judge(&self, a: Side<'_>, b: Side<'_>, every_band_count: bool) -> Verification {
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
                let (contained, by_jaccard, by_containment) =
                    minhash_rule(*threshold, *containment, similarity, a.features, b.features);
                let is_duplicate = by_jaccard || by_containment;
                Verification {
                    similarity,
                    containment: contained,
                    measure: if !by_jaccard && by_containment {
                        Measure::Containment
                    } else {
                        Measure::Jaccard
                    },
                    hamming: None,
                    matching_bands: (every_band_count || is_duplicate)
                        .then(|| lsh.matching_bands(x, y)),
                    is_duplicate,
                }
            }
            (Verifier::SimHash { layout }, Signature::SimHash(x), Signature::SimHash(y)) => {
                let distance = x.hamming(*y);
                Verification {
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

/// The MinHash rule at `similarity`: the containment, and whether the pair passes by
/// Jaccard and by containment. Both only grow with `similarity`.
fn minhash_rule(
    threshold: f64,
    containment: Option<Containment>,
    similarity: f64,
    a_features: u32,
    b_features: u32,
) -> (Option<f64>, bool, bool) {
    // Exact when the Jaccard is: the sizes give the intersection back.
    let contained =
        containment.map(|_| Containment::from_jaccard(similarity, a_features, b_features));
    let by_jaccard = similarity >= threshold;
    let by_containment = containment.zip(contained).is_some_and(|(c, contained)| {
        similarity >= c.min_jaccard && contained >= c.min_containment
    });
    (contained, by_jaccard, by_containment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::{MinHasher, agreements_at_most};

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
    fn a_bound_on_the_estimate_rejects_only_pairs_the_verdict_rejects() {
        let hasher = MinHasher::try_new(128, 3).unwrap();
        let lsh = LshParams::try_new(24, 4).unwrap();
        let with = |containment| Verifier::MinHash {
            threshold: 0.8,
            lsh,
            mode: JaccardMode::Signature,
            containment,
        };
        let web = Containment { min_containment: 0.9, min_jaccard: 0.5 };
        let (mut rejected, mut pairs) = (0, 0);
        for (shared, only_a, only_b) in
            [(100, 0, 3), (90, 10, 10), (60, 40, 0), (40, 60, 60), (5, 95, 80)]
        {
            for offset in 0..20u64 {
                let base = offset * 1000;
                let a: Vec<u64> = (base..base + shared + only_a).collect();
                let b: Vec<u64> =
                    (base..base + shared).chain(base + 500..base + 500 + only_b).collect();
                let (sa, sb) = (hasher.sign(&a), hasher.sign(&b));
                let (mut la, mut lb) = (Vec::new(), Vec::new());
                sa.low_bits_into(&mut la);
                sb.low_bits_into(&mut lb);
                let bound = agreements_at_most(&la, &lb, 128);
                assert!(bound >= sa.agreements(&sb));
                let upper = bound as f64 / 128.0;
                let (x, y) = (Signature::MinHash(sa), Signature::MinHash(sb));
                for verifier in [with(None), with(Some(web))] {
                    let (fa, fb) = (a.len() as u32, b.len() as u32);
                    let verdict = verifier.verify(Side::new(&x, fa), Side::new(&y, fb));
                    assert_eq!(verifier.may_pass(verdict.similarity, fa, fb), verdict.is_duplicate);
                    let duplicate = verifier.duplicate(Side::new(&x, fa), Side::new(&y, fb));
                    assert_eq!(duplicate, verdict.is_duplicate.then_some(verdict));
                    if !verifier.may_pass(upper, fa, fb) {
                        assert!(!verdict.is_duplicate, "{shared} {only_a} {only_b}");
                        rejected += 1;
                    }
                    pairs += 1;
                }
            }
        }
        // The bits reject most pairs far from the rules without their values.
        assert!(rejected * 3 > pairs, "{rejected} of {pairs}");
        let exact =
            Verifier::MinHash { threshold: 0.8, lsh, mode: JaccardMode::Exact, containment: None };
        assert!(exact.may_pass(0.0, 1, 1) && !exact.bounds_by_estimate());
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
