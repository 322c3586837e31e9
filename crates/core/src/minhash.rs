//! MinHash signatures (Broder, "On the resemblance and containment of documents", 1997).
//!
//! Permutation `i` maps the low 32 bits `x` of a feature hash to
//! `h_i(x) = ((x XOR s_i) * a_i) mod 2^32` with `a_i` odd: a bijection of 32-bit values, so
//! each permutation's minimum is the feature with the smallest image, and agreeing minima
//! mean a shared feature. The feature hashes are already uniform (xxh3), so every
//! permutation's minimum is uniform over the set; the XOR before the multiply makes the
//! permutations non-affine in each other, and the statistical tests below check the
//! estimate against exact Jaccard. All arithmetic is in 32-bit lanes, which AVX2 multiplies
//! and compares natively, eight to a register (64-bit lanes need AVX-512 for both).
//! Coefficients come from the job seed through [`derive_seed`]; this scheme is part of the
//! signature format ([`crate::SIGNATURE_VERSION`]).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{SeedPurpose, derive_seed};
use crate::simd::SimdLevel;

/// Permutations are evaluated in blocks of this many, so the inner loop has a fixed length
/// that the compiler unrolls and vectorises.
const LANES: usize = 32;

/// Largest supported number of permutations.
pub const MAX_NUM_PERM: usize = 4096;

/// A MinHash signature: the minimum of each permutation over a document's feature set,
/// 32 bits per permutation. An empty set has every value `u32::MAX`.
///
/// Serialised as one byte string (the values little-endian), so that spill files and
/// exchanges between processes copy a signature at once rather than value by value.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MinHashSignature {
    values: Vec<u32>,
}

impl Serialize for MinHashSignature {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // On the stack for up to 256 permutations (the default is 128).
        let mut stack = [0u8; 1024];
        let mut heap = Vec::new();
        let bytes = if self.values.len() * 4 <= stack.len() {
            &mut stack[..self.values.len() * 4]
        } else {
            heap.resize(self.values.len() * 4, 0);
            &mut heap[..]
        };
        for (chunk, v) in bytes.chunks_exact_mut(4).zip(&self.values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        serializer.serialize_bytes(bytes)
    }
}

impl<'de> Deserialize<'de> for MinHashSignature {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = MinHashSignature;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("MinHash values as little-endian bytes")
            }

            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
                if !bytes.len().is_multiple_of(4) {
                    return Err(E::invalid_length(bytes.len(), &self));
                }
                let values = bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                Ok(MinHashSignature { values })
            }

            fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<Self::Value, E> {
                self.visit_bytes(&bytes)
            }

            // Formats without byte strings (JSON) give a sequence of numbers.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element::<u8>()? {
                    bytes.push(b);
                }
                self.visit_bytes(&bytes)
            }
        }
        deserializer.deserialize_byte_buf(Bytes)
    }
}

impl MinHashSignature {
    /// Wraps precomputed values (for tests and readers of stored signatures).
    pub fn from_values(values: Vec<u32>) -> Self {
        MinHashSignature { values }
    }

    /// The per-permutation minima.
    pub fn values(&self) -> &[u32] {
        &self.values
    }

    /// Number of permutations.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True for a signature of zero permutations.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of permutations on which the two signatures agree.
    ///
    /// # Panics
    /// If the signatures have different lengths (they come from different hashers).
    pub fn agreements(&self, other: &MinHashSignature) -> usize {
        assert_eq!(self.len(), other.len(), "signatures of different num_perm compared");
        self.values.iter().zip(&other.values).filter(|(a, b)| a == b).count()
    }

    /// The lowest bit of every value, 64 to a word (the last word's unused bits clear),
    /// appended to `out`: two signatures agree on at most as many permutations as these
    /// bits do (see [`agreements_at_most`]).
    pub fn low_bits_into(&self, out: &mut Vec<u64>) {
        out.extend(self.values.chunks(64).map(|chunk| {
            chunk.iter().enumerate().fold(0u64, |w, (i, v)| w | (u64::from(v & 1) << i))
        }));
    }

    /// The signature estimate of Jaccard similarity: the fraction of agreeing permutations.
    pub fn jaccard_estimate(&self, other: &MinHashSignature) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.agreements(other) as f64 / self.len() as f64
    }
}

/// The most permutations two signatures of `len` values can agree on, from their
/// [`MinHashSignature::low_bits_into`]: equal values have equal lowest bits.
pub fn agreements_at_most(a: &[u64], b: &[u64], len: usize) -> usize {
    let differ: u32 = a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum();
    len - differ as usize
}

/// Computes MinHash signatures for one seed and number of permutations.
#[derive(Clone, Debug)]
pub struct MinHasher {
    num_perm: usize,
    simd: SimdLevel,
    /// XOR masks `s_i`, padded with copies to a multiple of `LANES`.
    xor: Vec<u32>,
    /// Odd multipliers `a_i`, padded like `xor`.
    mul: Vec<u32>,
}

impl MinHasher {
    /// A hasher with `num_perm` permutations derived from `seed`.
    ///
    /// # Errors
    /// [`Error::NumPerm`] unless `1 <= num_perm <= MAX_NUM_PERM`.
    pub fn try_new(num_perm: usize, seed: u64) -> Result<Self> {
        if num_perm == 0 || num_perm > MAX_NUM_PERM {
            return Err(Error::NumPerm { num_perm, max: MAX_NUM_PERM });
        }
        let padded = num_perm.div_ceil(LANES) * LANES;
        let mut xor = Vec::with_capacity(padded);
        let mut mul = Vec::with_capacity(padded);
        for i in 0..padded {
            let i = (i % num_perm) as u64;
            xor.push((derive_seed(seed, SeedPurpose::Permutation, 2 * i) >> 32) as u32);
            mul.push((derive_seed(seed, SeedPurpose::Permutation, 2 * i + 1) >> 32) as u32 | 1);
        }
        Ok(MinHasher { num_perm, simd: SimdLevel::detect(), xor, mul })
    }

    /// The same hasher running the loop compiled for `simd` (for tests and benchmarks).
    ///
    /// # Panics
    /// If this CPU does not support `simd`.
    pub fn with_simd(mut self, simd: SimdLevel) -> Self {
        assert!(simd <= SimdLevel::detect(), "this CPU does not support {simd:?}");
        self.simd = simd;
        self
    }

    /// The instruction-set level the signing loop runs at.
    pub fn simd(&self) -> SimdLevel {
        self.simd
    }

    /// Number of permutations.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// Writes the signature of the feature set `features` into `out`.
    ///
    /// Repeats in `features` do not change the result; callers usually pass distinct
    /// hashes, which is faster.
    pub fn sign_into(&self, features: &[u64], out: &mut MinHashSignature) {
        out.values.clear();
        out.values.reserve(self.mul.len());
        match self.simd {
            SimdLevel::Portable => sign_lanes(&self.xor, &self.mul, features, &mut out.values),
            level => sign_lanes_simd(level, &self.xor, &self.mul, features, &mut out.values),
        }
        out.values.truncate(self.num_perm);
    }

    /// The signature of `features`, allocating.
    pub fn sign(&self, features: &[u64]) -> MinHashSignature {
        let mut out = MinHashSignature::default();
        self.sign_into(features, &mut out);
        out
    }

    /// Permutation `i` applied to one hash: the naive definition, for tests and explanations.
    pub fn permute(&self, i: usize, x: u64) -> u32 {
        permute(self.xor[i], self.mul[i], x)
    }
}

/// One permutation of a feature hash: its low 32 bits, XOR `xor`, times `mul`.
#[inline(always)]
fn permute(xor: u32, mul: u32, x: u64) -> u32 {
    ((x as u32) ^ xor).wrapping_mul(mul)
}

/// The signing loop: for each block of [`LANES`] permutations, the minimum over all
/// features. Inlined into each instruction-set version below.
#[inline(always)]
fn sign_lanes(xor: &[u32], mul: &[u32], features: &[u64], out: &mut Vec<u32>) {
    for (xor, mul) in xor.chunks_exact(LANES).zip(mul.chunks_exact(LANES)) {
        let xor: &[u32; LANES] = xor.try_into().expect("chunks_exact yields LANES");
        let mul: &[u32; LANES] = mul.try_into().expect("chunks_exact yields LANES");
        let mut mins = [u32::MAX; LANES];
        for &x in features {
            for lane in 0..LANES {
                mins[lane] = mins[lane].min(permute(xor[lane], mul[lane], x));
            }
        }
        out.extend_from_slice(&mins);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sign_lanes_avx2(xor: &[u32], mul: &[u32], features: &[u64], out: &mut Vec<u32>) {
    sign_lanes(xor, mul, features, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
fn sign_lanes_avx512(xor: &[u32], mul: &[u32], features: &[u64], out: &mut Vec<u32>) {
    sign_lanes(xor, mul, features, out);
}

/// Runs the version of [`sign_lanes`] compiled for `level`.
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code, reason = "calls code compiled for CPU features detected at run time")]
fn sign_lanes_simd(
    level: SimdLevel,
    xor: &[u32],
    mul: &[u32],
    features: &[u64],
    out: &mut Vec<u32>,
) {
    match level {
        // SAFETY: a MinHasher only holds a level that SimdLevel::detect found on this CPU.
        SimdLevel::Avx512 => unsafe { sign_lanes_avx512(xor, mul, features, out) },
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { sign_lanes_avx2(xor, mul, features, out) },
        SimdLevel::Portable => sign_lanes(xor, mul, features, out),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn sign_lanes_simd(
    _level: SimdLevel,
    xor: &[u32],
    mul: &[u32],
    features: &[u64],
    out: &mut Vec<u32>,
) {
    sign_lanes(xor, mul, features, out);
}

/// Exact Jaccard similarity `|A ∩ B| / |A ∪ B|` of two sorted, distinct slices.
/// Two empty sets have similarity 0: an empty document is a duplicate of nothing.
pub fn jaccard_sorted(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - inter;
    if union == 0 { 0.0 } else { inter as f64 / union as f64 }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use super::*;

    /// The naive twin: each permutation evaluated separately over the whole set.
    fn naive(hasher: &MinHasher, features: &[u64]) -> Vec<u32> {
        (0..hasher.num_perm())
            .map(|i| features.iter().map(|&x| hasher.permute(i, x)).min().unwrap_or(u32::MAX))
            .collect()
    }

    #[test]
    fn matches_naive_twin_for_odd_sizes() {
        for num_perm in [1, 7, 32, 33, 128, 200] {
            let hasher = MinHasher::try_new(num_perm, 42).unwrap();
            let features: Vec<u64> = (0..57).map(crate::hash::splitmix64).collect();
            assert_eq!(hasher.sign(&features).values(), naive(&hasher, &features).as_slice());
        }
    }

    #[test]
    fn every_simd_level_gives_the_same_signature() {
        let features: Vec<u64> = (0..777).map(crate::hash::splitmix64).collect();
        let portable =
            MinHasher::try_new(200, 5).unwrap().with_simd(SimdLevel::Portable).sign(&features);
        for level in SimdLevel::available() {
            let hasher = MinHasher::try_new(200, 5).unwrap().with_simd(level);
            assert_eq!(hasher.sign(&features), portable, "{level:?}");
        }
    }

    #[test]
    fn pinned_signature() {
        // A format pin: if this changes, bump SIGNATURE_VERSION and note it in the changelog.
        let hasher = MinHasher::try_new(4, 1).unwrap();
        let sig = hasher.sign(&[1, 2, 3]);
        assert_eq!(sig.values(), PINNED);
    }
    const PINNED: &[u32] = &[1_815_807_579, 607_081_728, 829_700_577, 314_356_563];

    #[test]
    fn rejects_bad_num_perm() {
        assert!(MinHasher::try_new(0, 1).is_err());
        assert!(MinHasher::try_new(MAX_NUM_PERM + 1, 1).is_err());
    }

    #[test]
    fn empty_set_is_all_max() {
        let hasher = MinHasher::try_new(8, 3).unwrap();
        assert!(hasher.sign(&[]).values().iter().all(|&v| v == u32::MAX));
        assert_eq!(jaccard_sorted(&[], &[]), 0.0);
    }

    /// Draws two sets of `n` elements each with exactly `shared` in common.
    fn pair_with_overlap(rng: &mut ChaCha8Rng, n: usize, shared: usize) -> (Vec<u64>, Vec<u64>) {
        let common: Vec<u64> = (0..shared).map(|_| rng.next_u64()).collect();
        let mut a = common.clone();
        let mut b = common;
        a.extend((shared..n).map(|_| rng.next_u64()));
        b.extend((shared..n).map(|_| rng.next_u64()));
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    #[test]
    fn estimate_is_unbiased_against_exact_jaccard() {
        // Each permutation agrees with probability J, so the agreement count over `trials`
        // pairs x `num_perm` permutations is Binomial(n, J) when permutations are min-wise
        // independent. Allow 4 sigma: a correct hasher fails with probability < 1e-4.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let hasher = MinHasher::try_new(128, 99).unwrap();
        for (n, shared) in [(200, 100), (300, 270), (150, 30), (50, 49)] {
            let trials = 40;
            let mut agree = 0usize;
            let mut exact = 0.0;
            for _ in 0..trials {
                let (a, b) = pair_with_overlap(&mut rng, n, shared);
                exact = jaccard_sorted(&a, &b);
                agree += hasher.sign(&a).agreements(&hasher.sign(&b));
            }
            let draws = (trials * 128) as f64;
            let sigma = (exact * (1.0 - exact) / draws).sqrt();
            let estimate = agree as f64 / draws;
            assert!(
                (estimate - exact).abs() <= 4.0 * sigma + 1e-12,
                "n={n} shared={shared}: estimate {estimate} vs exact {exact} (sigma {sigma})"
            );
        }
    }

    #[test]
    fn agreements_vary_as_independent_permutations_would() {
        // With min-wise independent permutations the agreements of a pair of Jaccard J are
        // Binomial(num_perm, J); permutations that move together would spread them wider.
        // Over T pairs the sample variance divided by num_perm J (1 - J) is close to
        // chi-square(T - 1) / (T - 1), whose sigma is sqrt(2 / (T - 1)); allow 4 sigma (a
        // correct hasher fails with probability < 1e-4 per case).
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let hasher = MinHasher::try_new(128, 3).unwrap();
        let trials = 400;
        for (n, shared) in [(300, 200), (500, 450), (100, 80), (1000, 600)] {
            let mut counts = Vec::with_capacity(trials);
            let mut exact = 0.0;
            for _ in 0..trials {
                let (a, b) = pair_with_overlap(&mut rng, n, shared);
                exact = jaccard_sorted(&a, &b);
                counts.push(hasher.sign(&a).agreements(&hasher.sign(&b)) as f64);
            }
            let mean = counts.iter().sum::<f64>() / trials as f64;
            let variance =
                counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (trials - 1) as f64;
            let ratio = variance / (128.0 * exact * (1.0 - exact));
            let sigma = (2.0 / (trials - 1) as f64).sqrt();
            assert!(
                (ratio - 1.0).abs() <= 4.0 * sigma,
                "n={n} shared={shared}: variance ratio {ratio:.3} (sigma {sigma:.3})"
            );
        }
    }

    proptest! {
        #[test]
        fn signature_ignores_order_and_repeats(mut v in proptest::collection::vec(any::<u64>(), 0..64), seed in any::<u64>()) {
            let hasher = MinHasher::try_new(40, seed).unwrap();
            let sig = hasher.sign(&v);
            let mut shuffled = v.clone();
            shuffled.reverse();
            shuffled.extend_from_slice(&v);
            prop_assert_eq!(&hasher.sign(&shuffled), &sig);
            v.sort_unstable();
            v.dedup();
            prop_assert_eq!(hasher.sign(&v), sig);
        }

        #[test]
        fn jaccard_sorted_matches_set_definition(
            a in proptest::collection::btree_set(0u64..50, 0..30),
            b in proptest::collection::btree_set(0u64..50, 0..30),
        ) {
            let inter = a.intersection(&b).count();
            let union = a.union(&b).count();
            let expect = if union == 0 { 0.0 } else { inter as f64 / union as f64 };
            let a: Vec<u64> = a.into_iter().collect();
            let b: Vec<u64> = b.into_iter().collect();
            prop_assert_eq!(jaccard_sorted(&a, &b), expect);
        }
    }
}
