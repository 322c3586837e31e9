//! Banded LSH for MinHash: bands, rows, their choice from a threshold, and band keys.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{SeedPurpose, derive_seed, hash_u32s};
use crate::ids::BucketKey;
use crate::minhash::MinHashSignature;

/// `bands` bands of `rows` rows each over a MinHash signature.
///
/// Valid by construction: both are at least one; [`LshParams::fits`] checks them against a
/// signature length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LshParams {
    bands: u32,
    rows: u32,
}

/// Steps of the numerical integration in [`LshParams::choose`]; the choice is a pure
/// function of its inputs.
const INTEGRATION_STEPS: u32 = 512;

impl LshParams {
    /// `bands` bands of `rows` rows.
    ///
    /// # Errors
    /// [`Error::Bands`] if either is zero.
    pub fn try_new(bands: u32, rows: u32) -> Result<Self> {
        if bands == 0 || rows == 0 {
            return Err(Error::Bands { bands, rows, num_perm: 0 });
        }
        Ok(LshParams { bands, rows })
    }

    /// Checks that `bands * rows` permutations exist in a signature of `num_perm`.
    ///
    /// # Errors
    /// [`Error::Bands`] when the bands need more permutations than there are.
    pub fn fits(self, num_perm: usize) -> Result<Self> {
        if (self.bands as usize) * (self.rows as usize) > num_perm {
            return Err(Error::Bands { bands: self.bands, rows: self.rows, num_perm });
        }
        Ok(self)
    }

    /// Chooses bands and rows for Jaccard `threshold` with `num_perm` permutations by
    /// minimising `fp_weight * FP + fn_weight * FN`, where FP is the area under the S-curve
    /// below the threshold and FN the area above the curve past it (the same criterion as
    /// datasketch's `MinHashLSH`). Ties go to fewer bands.
    ///
    /// # Errors
    /// [`Error::Threshold`] unless `0 < threshold < 1`; [`Error::NumPerm`] if `num_perm` is 0.
    pub fn choose(threshold: f64, num_perm: usize, fp_weight: f64, fn_weight: f64) -> Result<Self> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(Error::Threshold { threshold });
        }
        if num_perm == 0 {
            return Err(Error::NumPerm { num_perm, max: crate::minhash::MAX_NUM_PERM });
        }
        let num_perm = num_perm as u32;
        let mut best: Option<(f64, LshParams)> = None;
        for bands in 1..=num_perm {
            for rows in 1..=(num_perm / bands) {
                let p = LshParams { bands, rows };
                let error = fp_weight * p.false_positive_area(threshold)
                    + fn_weight * p.false_negative_area(threshold);
                if best.as_ref().is_none_or(|(e, _)| error < *e) {
                    best = Some((error, p));
                }
            }
        }
        Ok(best.expect("num_perm >= 1 gives at least one candidate").1)
    }

    /// Number of bands.
    pub fn bands(self) -> u32 {
        self.bands
    }

    /// Rows per band.
    pub fn rows(self) -> u32 {
        self.rows
    }

    /// Probability that a pair with Jaccard similarity `s` shares at least one band:
    /// `1 - (1 - s^rows)^bands` (Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*,
    /// ch. 3).
    pub fn candidate_probability(self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }

    /// `∫_0^t P(s) ds`: the weight of pairs below the threshold that become candidates.
    pub fn false_positive_area(self, threshold: f64) -> f64 {
        simpson(|s| self.candidate_probability(s), 0.0, threshold)
    }

    /// `∫_t^1 (1 - P(s)) ds`: the weight of pairs above the threshold that are missed.
    pub fn false_negative_area(self, threshold: f64) -> f64 {
        simpson(|s| 1.0 - self.candidate_probability(s), threshold, 1.0)
    }

    /// The similarity where the S-curve is steepest, about `(1/bands)^(1/rows)`.
    pub fn knee(self) -> f64 {
        (1.0 / f64::from(self.bands)).powf(1.0 / f64::from(self.rows))
    }

    /// The bucket key of each band of `signature`.
    ///
    /// # Panics
    /// If the signature is shorter than `bands * rows` (checked once by [`LshParams::fits`]).
    pub fn band_keys<'a>(
        self,
        signature: &'a MinHashSignature,
        seed: u64,
    ) -> impl Iterator<Item = BucketKey> + 'a {
        let rows = self.rows as usize;
        let values = &signature.values()[..self.bands as usize * rows];
        values.chunks_exact(rows).enumerate().map(move |(band, chunk)| {
            let band_seed = derive_seed(seed, SeedPurpose::Band, band as u64);
            BucketKey::new(hash_u32s(chunk, band_seed))
        })
    }

    /// Number of bands on which two signatures agree on every row.
    pub fn matching_bands(self, a: &MinHashSignature, b: &MinHashSignature) -> u32 {
        let rows = self.rows as usize;
        let n = self.bands as usize * rows;
        a.values()[..n]
            .chunks_exact(rows)
            .zip(b.values()[..n].chunks_exact(rows))
            .filter(|(x, y)| x == y)
            .count() as u32
    }
}

/// Composite Simpson integration of `f` over `[a, b]`.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    let n = INTEGRATION_STEPS;
    let h = (b - a) / f64::from(n);
    let mut total = f(a) + f(b);
    for i in 1..n {
        let x = a + h * f64::from(i);
        total += if i % 2 == 1 { 4.0 } else { 2.0 } * f(x);
    }
    total * h / 3.0
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use super::*;
    use crate::minhash::MinHasher;

    #[test]
    fn choice_matches_datasketch_defaults() {
        // datasketch 2.0 MinHashLSH(threshold=0.8, num_perm=128) uses b=9, r=13.
        let p = LshParams::choose(0.8, 128, 0.5, 0.5).unwrap();
        assert_eq!((p.bands(), p.rows()), (9, 13));
        let p = LshParams::choose(0.5, 128, 0.5, 0.5).unwrap();
        assert!(p.bands() * p.rows() <= 128);
        assert!((p.knee() - 0.5).abs() < 0.1, "knee {} far from threshold", p.knee());
    }

    #[test]
    fn pinned_band_keys() {
        // A format pin: if this changes, bump SIGNATURE_VERSION and note it in the changelog.
        let sig = MinHashSignature::from_values(vec![1, 2, 3, 4]);
        let keys: Vec<u64> =
            LshParams::try_new(2, 2).unwrap().band_keys(&sig, 9).map(|k| k.get()).collect();
        assert_eq!(keys, PINNED_KEYS);
    }
    const PINNED_KEYS: &[u64] = &[10_723_907_321_926_779_645, 3_955_781_085_559_708_152];

    proptest::proptest! {
        #[test]
        fn band_keys_are_pure_functions_of_signature_band_and_seed(
            values in proptest::collection::vec(proptest::prelude::any::<u32>(), 24),
            seed in proptest::prelude::any::<u64>(),
            band in 0usize..6,
            other in proptest::prelude::any::<u32>(),
        ) {
            let p = LshParams::try_new(6, 4).unwrap();
            let sig = MinHashSignature::from_values(values.clone());
            let keys: Vec<_> = p.band_keys(&sig, seed).collect();
            proptest::prop_assert_eq!(&keys, &p.band_keys(&sig.clone(), seed).collect::<Vec<_>>());
            // Changing a row of one band changes that band's key only (up to a 2^-64 collision).
            let mut changed = values;
            changed[band * 4] = if changed[band * 4] == other { other.wrapping_add(1) } else { other };
            let changed_keys: Vec<_> = p.band_keys(&MinHashSignature::from_values(changed), seed).collect();
            for (i, (a, b)) in keys.iter().zip(&changed_keys).enumerate() {
                proptest::prop_assert_eq!(a == b, i != band);
            }
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(LshParams::try_new(0, 3).is_err());
        assert!(LshParams::try_new(20, 7).unwrap().fits(128).is_err());
        assert!(LshParams::choose(1.0, 128, 0.5, 0.5).is_err());
        assert!(LshParams::choose(f64::NAN, 128, 0.5, 0.5).is_err());
    }

    #[test]
    fn simpson_integrates_polynomials_exactly() {
        assert!((simpson(|x| x * x, 0.0, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        let p = LshParams::try_new(1, 1).unwrap();
        assert!((p.false_positive_area(0.5) - 0.125).abs() < 1e-12);
        assert!((p.false_negative_area(0.5) - 0.125).abs() < 1e-12);
    }

    /// Two random sets of `n` elements with exactly `shared` elements in common.
    fn pair(rng: &mut ChaCha8Rng, n: usize, shared: usize) -> (Vec<u64>, Vec<u64>) {
        let mut a: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let mut b = a[..shared].to_vec();
        b.extend((shared..n).map(|_| rng.next_u64()));
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    #[test]
    fn candidate_rate_follows_the_s_curve() {
        // For pairs of Jaccard s the candidate indicator is Bernoulli(p), p = 1-(1-s^r)^b.
        // With n trials the rate stays within 4 sigma of p, sigma = sqrt(p(1-p)/n), unless
        // the permutations are not min-wise independent; a correct implementation fails one
        // of these five checks with probability below 5 * 6.3e-5.
        let params = LshParams::try_new(9, 13).unwrap();
        let hasher = MinHasher::try_new(128, 2024).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 400;
        let size = 100;
        for shared in [50, 70, 80, 90, 95] {
            // |A ∩ B| = shared, |A ∪ B| = 2 * size - shared.
            let s = shared as f64 / (2 * size - shared) as f64;
            let p = params.candidate_probability(s);
            let mut hits = 0;
            for _ in 0..n {
                let (a, b) = pair(&mut rng, size, shared);
                let (sa, sb) = (hasher.sign(&a), hasher.sign(&b));
                let ka: Vec<_> = params.band_keys(&sa, 5).collect();
                let kb: Vec<_> = params.band_keys(&sb, 5).collect();
                let shares = ka.iter().zip(&kb).any(|(x, y)| x == y);
                assert_eq!(shares, params.matching_bands(&sa, &sb) > 0);
                hits += usize::from(shares);
            }
            let rate = hits as f64 / n as f64;
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (rate - p).abs() <= 4.0 * sigma + 1.0 / n as f64,
                "s={s:.3}: rate {rate} vs p {p:.4} (sigma {sigma:.4})"
            );
        }
    }
}
