//! A count-min sketch of feature counts (Cormode and Muthukrishnan, "An improved data
//! stream summary: the count-min sketch and its applications", 2005), used for corpus
//! document frequencies.
//!
//! Plain (not conservative) updates: counts are sums, so sketches built on different
//! workers merge into exactly the sketch one worker would have built, in any order.

use serde::{Deserialize, Serialize};

use crate::hash::{SeedPurpose, derive_seed, splitmix64};

/// Counts of 64-bit keys in `depth` rows of `width` counters; estimates never undercount,
/// and overcount by at most `e * total / width` with probability `1 - e^-depth`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountMinSketch {
    depth: usize,
    width_bits: u32,
    seeds: Vec<u64>,
    counts: Vec<u32>,
}

impl CountMinSketch {
    /// An empty sketch of `depth` rows of `2^width_bits` counters.
    ///
    /// # Panics
    /// Unless `1 <= depth <= 16` and `4 <= width_bits <= 28` (callers use fixed sizes).
    pub fn new(depth: usize, width_bits: u32) -> Self {
        assert!(
            (1..=16).contains(&depth) && (4..=28).contains(&width_bits),
            "sketch size out of range"
        );
        let seeds =
            (0..depth as u64).map(|row| derive_seed(0x5EED, SeedPurpose::Route, row)).collect();
        CountMinSketch { depth, width_bits, seeds, counts: vec![0; depth << width_bits] }
    }

    fn cell(&self, row: usize, key: u64) -> usize {
        let mask = (1usize << self.width_bits) - 1;
        (row << self.width_bits) | (splitmix64(key ^ self.seeds[row]) as usize & mask)
    }

    /// Adds one occurrence of `key` (saturating).
    pub fn add(&mut self, key: u64) {
        for row in 0..self.depth {
            let cell = self.cell(row, key);
            self.counts[cell] = self.counts[cell].saturating_add(1);
        }
    }

    /// The estimated count of `key`: the minimum over rows, never below the true count.
    pub fn estimate(&self, key: u64) -> u32 {
        (0..self.depth).map(|row| self.counts[self.cell(row, key)]).min().unwrap_or(0)
    }

    /// Adds another sketch of the same shape.
    ///
    /// # Panics
    /// If the shapes differ.
    pub fn merge(&mut self, other: &CountMinSketch) {
        assert_eq!(
            (self.depth, self.width_bits),
            (other.depth, other.width_bits),
            "sketch shapes differ"
        );
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(*b);
        }
    }

    /// Rows.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Each row has `2^width_bits` counters.
    pub fn width_bits(&self) -> u32 {
        self.width_bits
    }

    /// The counters, row by row (for exchanging a sketch in pieces).
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Adds `values` to the counters starting at `offset` (a piece of another sketch's
    /// [`CountMinSketch::counts`]).
    ///
    /// # Panics
    /// If the piece runs past the end.
    pub fn merge_counts(&mut self, offset: usize, values: &[u32]) {
        for (a, b) in self.counts[offset..offset + values.len()].iter_mut().zip(values) {
            *a = a.saturating_add(*b);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn never_undercounts_and_merges_in_any_split(keys in proptest::collection::vec(0u64..300, 0..400), split in 0usize..400) {
            let mut whole = CountMinSketch::new(3, 6);
            let mut truth: HashMap<u64, u32> = HashMap::new();
            for &k in &keys {
                whole.add(k);
                *truth.entry(k).or_default() += 1;
            }
            for (k, n) in &truth {
                prop_assert!(whole.estimate(*k) >= *n);
            }
            let split = split.min(keys.len());
            let (mut a, mut b) = (CountMinSketch::new(3, 6), CountMinSketch::new(3, 6));
            keys[..split].iter().for_each(|k| a.add(*k));
            keys[split..].iter().for_each(|k| b.add(*k));
            let mut pieces = CountMinSketch::new(3, 6);
            for (i, chunk) in b.counts().chunks(50).enumerate() {
                pieces.merge_counts(i * 50, chunk);
            }
            a.merge(&pieces);
            prop_assert_eq!(a, whole);
        }
    }

    #[test]
    fn estimates_are_exact_when_keys_are_few() {
        let mut s = CountMinSketch::new(4, 16);
        for k in 0..100u64 {
            for _ in 0..=k {
                s.add(k);
            }
        }
        // 100 keys in 65,536 counters per row: collisions in all four rows are very unlikely
        // (and the fixed seeds make this deterministic).
        assert!((0..100u64).all(|k| s.estimate(k) == k as u32 + 1));
    }
}
