//! SimHash fingerprints (Charikar, "Similarity estimation techniques from rounding
//! algorithms", 2002; Manku, Jain, Das Sarma, "Detecting near-duplicates for web crawling",
//! 2007) and the pigeonhole block tables that find fingerprints within Hamming distance `k`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{SeedPurpose, derive_seed, hash_u64s};
use crate::ids::BucketKey;
use crate::simd::SimdLevel;

/// Number of bits in a fingerprint.
pub const SIMHASH_BITS: u32 = 64;

/// A 64-bit SimHash fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimHash(u64);

impl SimHash {
    /// Wraps a fingerprint computed elsewhere.
    pub fn from_bits(bits: u64) -> Self {
        SimHash(bits)
    }

    /// The fingerprint bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Number of differing bits.
    pub fn hamming(self, other: SimHash) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    /// `1 - hamming / 64`: the similarity reported for SimHash pairs.
    pub fn similarity(self, other: SimHash) -> f64 {
        1.0 - f64::from(self.hamming(other)) / f64::from(SIMHASH_BITS)
    }

    /// The fingerprint of weighted features: bit `b` is 1 when the features whose hash has
    /// bit `b` set weigh more in total than those whose hash has it clear (the sign of the
    /// sum of +weight and -weight votes). Weights must be non-negative; sums run in feature
    /// order, so the result is the same on every machine.
    ///
    /// Feature hashes must already be uniform 64-bit hashes (as `neardup-text` produces).
    pub fn from_weighted<I>(features: I) -> SimHash
    where
        I: IntoIterator<Item = (u64, f64)>,
    {
        let mut set = [0f64; SIMHASH_BITS as usize];
        let mut unset = [0f64; SIMHASH_BITS as usize];
        accumulate_simd(SimdLevel::detect(), features.into_iter(), &mut set, &mut unset);
        let mut bits = 0u64;
        for (bit, (s, u)) in set.iter().zip(&unset).enumerate() {
            if s > u {
                bits |= 1 << bit;
            }
        }
        SimHash(bits)
    }
}

impl SimHash {
    /// The fingerprint of features weighted by whole-number counts (`hashes[i]` weighs
    /// `counts[i]`): the same bits as [`SimHash::from_weighted`] with those weights, but
    /// summed exactly in integers, so in any order, and in 32-bit vector lanes, several
    /// times faster.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn from_counts(hashes: &[u64], counts: &[u32]) -> SimHash {
        assert_eq!(hashes.len(), counts.len(), "one count per hash");
        let mut set = [0u64; SIMHASH_BITS as usize];
        let mut total = 0u64;
        // Lane sums are 32-bit: a chunk's counts must not overflow them.
        let largest = counts.iter().copied().max().unwrap_or(1).max(1);
        let chunk = (u32::MAX / largest) as usize;
        for (h, c) in hashes.chunks(chunk).zip(counts.chunks(chunk)) {
            let mut lanes = [0u32; SIMHASH_BITS as usize];
            count_bits_simd(SimdLevel::detect(), h, c, &mut lanes);
            for (sum, lane) in set.iter_mut().zip(lanes) {
                *sum += u64::from(lane);
            }
            total += c.iter().map(|&c| u64::from(c)).sum::<u64>();
        }
        // Bit b is set when its votes outweigh the others: set > total - set.
        let bits = set
            .iter()
            .enumerate()
            .fold(0u64, |bits, (bit, &s)| if 2 * s > total { bits | 1 << bit } else { bits });
        SimHash(bits)
    }
}

/// Adds each count to `set[b]` for every bit `b` of its hash, in 32-bit lanes: the low and
/// high halves of the hash each feed 32 lanes.
#[inline(always)]
fn count_bits(hashes: &[u64], counts: &[u32], set: &mut [u32; 64]) {
    let (low, high) = set.split_at_mut(32);
    for (&hash, &count) in hashes.iter().zip(counts) {
        let (lo, hi) = (hash as u32, (hash >> 32) as u32);
        for bit in 0..32 {
            low[bit] += count & 0u32.wrapping_sub((lo >> bit) & 1);
            high[bit] += count & 0u32.wrapping_sub((hi >> bit) & 1);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn count_bits_avx2(hashes: &[u64], counts: &[u32], set: &mut [u32; 64]) {
    count_bits(hashes, counts, set);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
fn count_bits_avx512(hashes: &[u64], counts: &[u32], set: &mut [u32; 64]) {
    count_bits(hashes, counts, set);
}

/// Runs the version of [`count_bits`] compiled for `level`.
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code, reason = "calls code compiled for CPU features detected at run time")]
fn count_bits_simd(level: SimdLevel, hashes: &[u64], counts: &[u32], set: &mut [u32; 64]) {
    match level {
        // SAFETY: `level` is at most what SimdLevel::detect found on this CPU.
        SimdLevel::Avx512 => unsafe { count_bits_avx512(hashes, counts, set) },
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { count_bits_avx2(hashes, counts, set) },
        SimdLevel::Portable => count_bits(hashes, counts, set),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn count_bits_simd(_level: SimdLevel, hashes: &[u64], counts: &[u32], set: &mut [u32; 64]) {
    count_bits(hashes, counts, set);
}

/// Adds each feature's weight to `set[b]` or `unset[b]` for every bit `b`, by masking the
/// weight's bits so that the loop is pure vector additions.
#[inline(always)]
fn accumulate<I: Iterator<Item = (u64, f64)>>(
    features: I,
    set: &mut [f64; 64],
    unset: &mut [f64; 64],
) {
    for (hash, weight) in features {
        let w = weight.to_bits();
        for bit in 0..64 {
            let mask = 0u64.wrapping_sub((hash >> bit) & 1);
            set[bit] += f64::from_bits(w & mask);
            unset[bit] += f64::from_bits(w & !mask);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn accumulate_avx2<I: Iterator<Item = (u64, f64)>>(
    features: I,
    set: &mut [f64; 64],
    unset: &mut [f64; 64],
) {
    accumulate(features, set, unset);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
fn accumulate_avx512<I: Iterator<Item = (u64, f64)>>(
    features: I,
    set: &mut [f64; 64],
    unset: &mut [f64; 64],
) {
    accumulate(features, set, unset);
}

/// Runs the version of [`accumulate`] compiled for `level`.
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code, reason = "calls code compiled for CPU features detected at run time")]
fn accumulate_simd<I: Iterator<Item = (u64, f64)>>(
    level: SimdLevel,
    features: I,
    set: &mut [f64; 64],
    unset: &mut [f64; 64],
) {
    match level {
        // SAFETY: `level` is at most what SimdLevel::detect found on this CPU.
        SimdLevel::Avx512 => unsafe { accumulate_avx512(features, set, unset) },
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { accumulate_avx2(features, set, unset) },
        SimdLevel::Portable => accumulate(features, set, unset),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn accumulate_simd<I: Iterator<Item = (u64, f64)>>(
    _level: SimdLevel,
    features: I,
    set: &mut [f64; 64],
    unset: &mut [f64; 64],
) {
    accumulate(features, set, unset);
}

/// Pigeonhole block tables for Hamming distance at most `max_distance`.
///
/// The 64 bits are split into `blocks` contiguous blocks. Two fingerprints within distance
/// `k` differ in at most `k` blocks, so they agree exactly on at least `blocks - k` of them.
/// Each combination of `blocks - k` blocks is one table (`C(blocks, k)` tables), and a
/// fingerprint's key in a table hashes the table number with the bits of those blocks. Every
/// pair within distance `k` therefore shares the key of at least one table: lookup is exact,
/// and `blocks` trades the number of tables against how selective each key is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    blocks: u32,
    max_distance: u32,
    /// One bit mask per table: the union of the table's blocks.
    masks: Vec<u64>,
}

/// Upper bound on tables per fingerprint, to keep a typo from emitting millions of records.
pub const MAX_TABLES: usize = 1024;

impl BlockLayout {
    /// The layout with `blocks` blocks for distance at most `max_distance`.
    ///
    /// # Errors
    /// [`Error::Blocks`] unless `max_distance < blocks <= 64` and `C(blocks, max_distance)`
    /// is at most [`MAX_TABLES`].
    pub fn try_new(blocks: u32, max_distance: u32) -> Result<Self> {
        let err = || Error::Blocks { blocks, max_distance, max_tables: MAX_TABLES };
        if blocks <= max_distance || blocks > SIMHASH_BITS {
            return Err(err());
        }
        if binomial(blocks, max_distance).is_none_or(|n| n > MAX_TABLES as u64) {
            return Err(err());
        }
        let block_masks = block_masks(blocks);
        let mut masks = Vec::new();
        combinations(blocks as usize, (blocks - max_distance) as usize, &mut |chosen| {
            masks.push(chosen.iter().fold(0u64, |m, &i| m | block_masks[i]));
        });
        Ok(BlockLayout { blocks, max_distance, masks })
    }

    /// Picks the number of blocks for a corpus of `num_docs` documents: the one that
    /// minimises records per document plus the expected number of random (non-duplicate)
    /// candidates per document, a candidate counted as [`CANDIDATE_COST`] records because it
    /// is exchanged twice and verified.
    pub fn choose(max_distance: u32, num_docs: u64) -> Result<Self> {
        let mut best: Option<(f64, BlockLayout)> = None;
        for blocks in (max_distance + 1)..=SIMHASH_BITS {
            let Ok(layout) = BlockLayout::try_new(blocks, max_distance) else {
                // Tables only grow with more blocks once past the limit.
                if best.is_some() {
                    break;
                }
                continue;
            };
            let cost = layout.tables() as f64
                + CANDIDATE_COST * layout.random_candidates_per_doc(num_docs);
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, layout));
            }
        }
        best.map(|(_, layout)| layout).ok_or(Error::Blocks {
            blocks: max_distance + 1,
            max_distance,
            max_tables: MAX_TABLES,
        })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// The Hamming distance this layout finds exhaustively.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// Number of tables, which is the number of bucket records per fingerprint.
    pub fn tables(&self) -> usize {
        self.masks.len()
    }

    /// The bit mask of each table.
    pub fn masks(&self) -> &[u64] {
        &self.masks
    }

    /// Expected number of other documents sharing at least one key by chance, for random
    /// fingerprints in a corpus of `num_docs` (a union bound over tables).
    pub fn random_candidates_per_doc(&self, num_docs: u64) -> f64 {
        let others = num_docs.saturating_sub(1) as f64;
        self.masks.iter().map(|m| others * (-f64::from(m.count_ones())).exp2()).sum()
    }

    /// The bucket keys of a fingerprint, one per table.
    pub fn keys(&self, fingerprint: SimHash, seed: u64) -> impl Iterator<Item = BucketKey> + '_ {
        self.masks.iter().enumerate().map(move |(table, mask)| {
            let table_seed = derive_seed(seed, SeedPurpose::Block, table as u64);
            BucketKey::new(hash_u64s(&[fingerprint.bits() & mask], table_seed))
        })
    }

    /// Probability that two fingerprints `distance` bits apart share a table, when the
    /// differing bits are spread uniformly at random: the probability that they fall into
    /// at most `max_distance` blocks. It is 1 up to `max_distance` (the pigeonhole
    /// principle); beyond it, it is the share of pairs that become candidates only to fail
    /// verification.
    pub fn candidate_probability(&self, distance: u32) -> f64 {
        if distance <= self.max_distance {
            return 1.0;
        }
        if distance > SIMHASH_BITS {
            return 0.0;
        }
        let d = distance as usize;
        let k = self.max_distance as usize;
        // ways[j][m]: ways to place m differing bits in the blocks so far, touching j blocks.
        let mut ways = vec![vec![0.0f64; d + 1]; k + 1];
        ways[0][0] = 1.0;
        for mask in block_masks(self.blocks) {
            let width = mask.count_ones();
            let mut next = ways.clone();
            for j in 1..=k {
                for m in 1..=d {
                    next[j][m] += (1..=m.min(width as usize))
                        .map(|c| choose_f64(width, c as u32) * ways[j - 1][m - c])
                        .sum::<f64>();
                }
            }
            ways = next;
        }
        let touching_few: f64 = ways.iter().map(|row| row[d]).sum();
        touching_few / choose_f64(SIMHASH_BITS, distance)
    }

    /// Tables on which two fingerprints have equal keys.
    pub fn shared_tables(&self, a: SimHash, b: SimHash) -> usize {
        let diff = a.bits() ^ b.bits();
        self.masks.iter().filter(|m| diff & **m == 0).count()
    }
}

/// How many bucket records one candidate pair costs, for [`BlockLayout::choose`].
pub const CANDIDATE_COST: f64 = 4.0;

/// Masks of `blocks` contiguous blocks covering 64 bits; the first `64 % blocks` blocks
/// are one bit wider.
fn block_masks(blocks: u32) -> Vec<u64> {
    let base = SIMHASH_BITS / blocks;
    let extra = SIMHASH_BITS % blocks;
    let mut start = 0;
    (0..blocks)
        .map(|i| {
            let width = base + u32::from(i < extra);
            let mask = if width == 64 { u64::MAX } else { ((1u64 << width) - 1) << start };
            start += width;
            mask
        })
        .collect()
}

/// Calls `f` with every `k`-subset of `0..n`, in lexicographic order.
fn combinations(n: usize, k: usize, f: &mut impl FnMut(&[usize])) {
    let mut chosen: Vec<usize> = (0..k).collect();
    loop {
        f(&chosen);
        // Find the rightmost position that can still move right.
        let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
            return;
        };
        chosen[i] += 1;
        for j in i + 1..k {
            chosen[j] = chosen[j - 1] + 1;
        }
    }
}

/// `C(n, k)`, or `None` on overflow.
fn choose_f64(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k.min(n - k)).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

fn binomial(n: u32, k: u32) -> Option<u64> {
    let k = k.min(n - k);
    let mut acc: u64 = 1;
    for i in 0..k {
        acc = acc.checked_mul(u64::from(n - i))? / u64::from(i + 1);
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use super::*;

    #[test]
    fn candidate_probability_matches_sampling() {
        let layout = BlockLayout::try_new(6, 3).unwrap();
        assert_eq!(layout.candidate_probability(3), 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for distance in [4u32, 6, 10] {
            let trials = 20_000;
            let mut shared = 0;
            for _ in 0..trials {
                let mut diff = 0u64;
                while diff.count_ones() < distance {
                    diff |= 1 << (rng.next_u64() % 64);
                }
                let a = SimHash::from_bits(rng.next_u64());
                let b = SimHash::from_bits(a.bits() ^ diff);
                shared += usize::from(layout.shared_tables(a, b) > 0);
            }
            let sampled = shared as f64 / f64::from(trials);
            let exact = layout.candidate_probability(distance);
            assert!((sampled - exact).abs() < 0.015, "d={distance}: {sampled} vs {exact}");
        }
    }

    /// The naive twin: bit by bit, the weight of features voting 1 against the weight of
    /// those voting 0, summed in feature order.
    fn naive_simhash(features: &[(u64, f64)]) -> u64 {
        let mut bits = 0u64;
        for bit in 0..64 {
            let (mut ones, mut zeros) = (0.0, 0.0);
            for (hash, weight) in features {
                if (hash >> bit) & 1 == 1 {
                    ones += weight;
                } else {
                    zeros += weight;
                }
            }
            if ones > zeros {
                bits |= 1 << bit;
            }
        }
        bits
    }

    #[test]
    fn every_simd_level_gives_the_same_sums() {
        let features: Vec<(u64, f64)> =
            (0..500).map(|i| (crate::hash::splitmix64(i), 1.0 + (i % 7) as f64 * 0.37)).collect();
        let mut expected = ([0f64; 64], [0f64; 64]);
        accumulate(features.iter().copied(), &mut expected.0, &mut expected.1);
        for level in SimdLevel::available() {
            let mut got = ([0f64; 64], [0f64; 64]);
            accumulate_simd(level, features.iter().copied(), &mut got.0, &mut got.1);
            assert_eq!(got, expected, "{level:?}");
        }
    }

    #[test]
    fn integer_weights_match_plus_minus_votes() {
        // With counts as weights the sums are exact, so the fingerprint is the sign of the
        // +weight/-weight votes of the textbook definition.
        let features: Vec<(u64, f64)> =
            (0..200).map(|i| (crate::hash::splitmix64(i), f64::from(1 + i as u32 % 3))).collect();
        let mut votes = [0i64; 64];
        for (h, w) in &features {
            for (bit, v) in votes.iter_mut().enumerate() {
                *v += if (h >> bit) & 1 == 1 { *w as i64 } else { -(*w as i64) };
            }
        }
        let expect = votes
            .iter()
            .enumerate()
            .fold(0u64, |b, (bit, v)| if *v > 0 { b | 1 << bit } else { b });
        assert_eq!(SimHash::from_weighted(features).bits(), expect);
    }

    #[test]
    fn single_feature_fingerprint_is_its_hash() {
        let h = 0xDEAD_BEEF_0123_4567;
        assert_eq!(SimHash::from_weighted([(h, 1.0)]).bits(), h);
    }

    #[test]
    fn pinned_block_keys() {
        // A format pin: if this changes, bump SIGNATURE_VERSION and note it in the changelog.
        let layout = BlockLayout::try_new(4, 3).unwrap();
        let keys: Vec<u64> =
            layout.keys(SimHash::from_bits(0x0123_4567_89AB_CDEF), 9).map(|k| k.get()).collect();
        assert_eq!(keys, PINNED_KEYS);
    }
    const PINNED_KEYS: &[u64] = &[
        5_776_762_967_152_030_911,
        12_930_866_940_773_251_322,
        11_456_526_365_043_330_210,
        1_590_635_364_637_793_846,
    ];

    #[test]
    fn block_masks_partition_the_bits() {
        for blocks in 1..=64 {
            let masks = block_masks(blocks);
            assert_eq!(masks.len(), blocks as usize);
            assert_eq!(masks.iter().fold(0u64, |a, m| a | m), u64::MAX);
            assert_eq!(masks.iter().map(|m| m.count_ones()).sum::<u32>(), 64);
            for (i, a) in masks.iter().enumerate() {
                for b in &masks[i + 1..] {
                    assert_eq!(a & b, 0);
                }
            }
        }
    }

    #[test]
    fn classic_layout_has_ten_tables() {
        let layout = BlockLayout::try_new(5, 3).unwrap();
        assert_eq!(layout.tables(), 10);
        assert!(layout.masks().iter().all(|m| m.count_ones() >= 25));
        assert!(BlockLayout::try_new(3, 3).is_err());
        assert!(BlockLayout::try_new(65, 3).is_err());
        assert!(BlockLayout::try_new(64, 10).is_err(), "C(64,10) tables is too many");
    }

    #[test]
    fn choice_grows_with_the_corpus() {
        let small = BlockLayout::choose(3, 1_000).unwrap();
        let large = BlockLayout::choose(3, 100_000_000).unwrap();
        assert_eq!(small.blocks(), 4);
        assert!(large.blocks() > small.blocks());
        assert!(large.random_candidates_per_doc(100_000_000) < 1.0);
    }

    #[test]
    fn block_lookup_matches_all_pairs_hamming() {
        // Fingerprints near a few centres, so many pairs fall at every distance 0..=8.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let centres: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
        let prints: Vec<SimHash> = (0..300)
            .map(|i| {
                let mut bits = centres[i % centres.len()];
                for _ in 0..(rng.next_u32() % 5) {
                    bits ^= 1 << (rng.next_u32() % 64);
                }
                SimHash::from_bits(bits)
            })
            .collect();
        for (blocks, k) in [(4, 3), (5, 3), (7, 3), (3, 2), (6, 4), (2, 0)] {
            let layout = BlockLayout::try_new(blocks, k).unwrap();
            let keys: Vec<Vec<BucketKey>> =
                prints.iter().map(|p| layout.keys(*p, 11).collect()).collect();
            for i in 0..prints.len() {
                for j in i + 1..prints.len() {
                    let near = prints[i].hamming(prints[j]) <= k;
                    let share = keys[i].iter().zip(&keys[j]).any(|(a, b)| a == b);
                    // Exactness: every near pair shares a key. Keys of far pairs may collide
                    // (that is a candidate that verification drops), but shared_tables must
                    // agree with the keys.
                    assert!(!near || share, "blocks={blocks} k={k}: missed pair {i},{j}");
                    assert_eq!(share, layout.shared_tables(prints[i], prints[j]) > 0);
                }
            }
        }
    }

    #[test]
    fn counts_match_weights_at_every_simd_level() {
        let hashes: Vec<u64> = (0..500).map(crate::hash::splitmix64).collect();
        let counts: Vec<u32> = (0..500).map(|i| 1 + i % 10).collect();
        let weighted = hashes.iter().zip(&counts).map(|(h, c)| (*h, f64::from(*c)));
        let expect = SimHash::from_weighted(weighted);
        for level in SimdLevel::available() {
            let mut lanes = [0u32; 64];
            count_bits_simd(level, &hashes, &counts, &mut lanes);
            let mut portable = [0u32; 64];
            count_bits(&hashes, &counts, &mut portable);
            assert_eq!(lanes, portable, "{level:?}");
        }
        assert_eq!(SimHash::from_counts(&hashes, &counts), expect);
        // Counts large enough that 32-bit lanes would overflow without chunking.
        let big = vec![u32::MAX / 3; 7];
        let weighted = hashes[..7].iter().zip(&big).map(|(h, c)| (*h, f64::from(*c)));
        assert_eq!(SimHash::from_counts(&hashes[..7], &big), SimHash::from_weighted(weighted));
    }

    proptest! {
        #[test]
        fn counts_match_naive_twin(features in proptest::collection::vec((any::<u64>(), 0u32..12), 0..40)) {
            let (hashes, counts): (Vec<u64>, Vec<u32>) = features.iter().copied().unzip();
            let weighted: Vec<(u64, f64)> = features.iter().map(|(h, c)| (*h, f64::from(*c))).collect();
            prop_assert_eq!(SimHash::from_counts(&hashes, &counts).bits(), naive_simhash(&weighted));
        }

        #[test]
        fn matches_naive_twin(features in proptest::collection::vec((any::<u64>(), 0.0f64..10.0), 0..40)) {
            prop_assert_eq!(SimHash::from_weighted(features.iter().copied()).bits(), naive_simhash(&features));
        }

        #[test]
        fn keys_are_pure_functions_of_fingerprint_and_seed(bits in any::<u64>(), seed in any::<u64>()) {
            let layout = BlockLayout::try_new(5, 3).unwrap();
            let a: Vec<_> = layout.keys(SimHash::from_bits(bits), seed).collect();
            let b: Vec<_> = layout.keys(SimHash::from_bits(bits), seed).collect();
            prop_assert_eq!(a.len(), 10);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn combinations_enumerates_all_subsets() {
        let mut seen = Vec::new();
        combinations(5, 2, &mut |c| seen.push(c.to_vec()));
        assert_eq!(seen.len(), 10);
        assert_eq!(seen[0], vec![0, 1]);
        assert_eq!(seen[9], vec![3, 4]);
        assert_eq!(binomial(64, 3), Some(41_664));
    }
}
