//! Reducing LSH buckets to candidate pairs, one sorted bucket record at a time, with the
//! cut for huge buckets.

use neardup_core::{BucketKey, DocId};

use crate::reporting::stats::BucketStats;
use crate::settings::spec::BucketSpec;
use crate::storage::records::Candidate;

/// Turns bucket records, sorted by `(key, doc)`, into candidate pairs.
///
/// A bucket of at most `max_bucket_size` members gives all its pairs; a larger one gives
/// the pairs of each member with the first `bucket_anchors` members, so its cost is linear
/// in its size. Members are ordered by `DocId`, so neither depends on arrival order. Holds
/// at most `max_bucket_size + 1` members.
#[derive(Debug)]
pub struct BucketReducer {
    limits: BucketSpec,
    key: Option<BucketKey>,
    last: Option<DocId>,
    members: Vec<DocId>,
    size: u64,
    cut: bool,
    /// What was reduced so far.
    pub stats: BucketStats,
}

impl BucketReducer {
    /// A reducer with these limits.
    pub fn new(limits: BucketSpec) -> Self {
        BucketReducer {
            limits,
            key: None,
            last: None,
            members: Vec::new(),
            size: 0,
            cut: false,
            stats: BucketStats::default(),
        }
    }

    /// Adds the next record (records must come sorted by key, then `DocId`).
    pub fn push(&mut self, key: BucketKey, doc: DocId, emit: &mut dyn FnMut(Candidate)) {
        if self.key != Some(key) {
            self.finish(emit);
            self.key = Some(key);
        }
        if self.last == Some(doc) {
            return; // the same document twice in a bucket (a key collision across bands)
        }
        self.last = Some(doc);
        self.size += 1;
        if self.cut {
            for a in &self.members {
                self.stats.candidates += 1;
                emit(Candidate { a: *a, b: doc });
            }
            return;
        }
        self.members.push(doc);
        if self.members.len() > self.limits.max_bucket_size {
            // Too big: from now on members meet the first anchors only. Emit the pairs the
            // anchors have among themselves and with the members seen so far.
            self.cut = true;
            self.stats.cut_buckets += 1;
            let anchors = self.limits.bucket_anchors.min(self.members.len());
            for i in 0..anchors {
                for j in i + 1..self.members.len() {
                    self.stats.candidates += 1;
                    emit(Candidate { a: self.members[i], b: self.members[j] });
                }
            }
            self.members.truncate(anchors);
        }
    }

    /// Closes the current bucket; call once after the last record too.
    pub fn finish(&mut self, emit: &mut dyn FnMut(Candidate)) {
        if self.size >= 2 {
            self.stats.shared_buckets += 1;
            self.stats.largest_bucket = self.stats.largest_bucket.max(self.size);
        }
        if !self.cut {
            for (i, a) in self.members.iter().enumerate() {
                for b in &self.members[i + 1..] {
                    self.stats.candidates += 1;
                    emit(Candidate { a: *a, b: *b });
                }
            }
        }
        self.members.clear();
        self.last = None;
        self.size = 0;
        self.cut = false;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The naive twin: group, sort, and apply the rule to each whole bucket.
    fn naive(records: &[(u64, u64)], limits: &BucketSpec) -> Vec<(u64, u64)> {
        let mut sorted = records.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut out = Vec::new();
        for bucket in sorted.chunk_by(|x, y| x.0 == y.0) {
            let n = bucket.len();
            let anchors = if n > limits.max_bucket_size { limits.bucket_anchors } else { n };
            for i in 0..anchors.min(n) {
                for j in i + 1..n {
                    out.push((bucket[i].1, bucket[j].1));
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn streamed(records: &[(u64, u64)], limits: &BucketSpec) -> (Vec<(u64, u64)>, BucketStats) {
        let mut sorted = records.to_vec();
        sorted.sort_unstable();
        let mut reducer = BucketReducer::new(limits.clone());
        let mut out = Vec::new();
        let mut emit = |c: Candidate| out.push((c.a.record(), c.b.record()));
        for (k, d) in sorted {
            reducer.push(BucketKey::new(k), DocId::new(0, d), &mut emit);
        }
        reducer.finish(&mut emit);
        out.sort_unstable();
        (out, reducer.stats)
    }

    #[test]
    fn small_and_huge_buckets() {
        let limits = BucketSpec { max_bucket_size: 4, bucket_anchors: 2 };
        let records: Vec<(u64, u64)> =
            (1..=6).map(|d| (1, d)).chain([(9, 3), (9, 1), (7, 5)]).collect();
        let (out, stats) = streamed(&records, &limits);
        assert_eq!(out, naive(&records, &limits));
        assert_eq!(
            stats,
            BucketStats { shared_buckets: 2, cut_buckets: 1, largest_bucket: 6, candidates: 10 }
        );
    }

    proptest! {
        #[test]
        fn streaming_matches_the_naive_rule(
            records in proptest::collection::vec((0u64..6, 1u64..40), 0..200),
            max in 2usize..8,
            anchors in 1usize..8,
        ) {
            let limits = BucketSpec { max_bucket_size: max, bucket_anchors: anchors.min(max) };
            prop_assert_eq!(streamed(&records, &limits).0, naive(&records, &limits));
        }
    }
}
