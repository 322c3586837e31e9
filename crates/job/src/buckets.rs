//! Reducing LSH buckets to candidate pairs, with the cut for huge buckets.

use neardup_core::{BucketKey, DocId};

use crate::config::BucketSpec;
use crate::records::Candidate;

/// Bucket statistics, summed over workers into the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BucketStats {
    /// Buckets with at least two members.
    pub shared_buckets: u64,
    /// Buckets above `max_bucket_size`, compared only against their anchors.
    pub cut_buckets: u64,
    /// Members of the largest bucket.
    pub largest_bucket: u64,
    /// Candidate pairs emitted (before removing pairs found in several buckets).
    pub candidates: u64,
}

impl BucketStats {
    /// Adds another worker's statistics.
    pub fn merge(&mut self, other: &BucketStats) {
        self.shared_buckets += other.shared_buckets;
        self.cut_buckets += other.cut_buckets;
        self.largest_bucket = self.largest_bucket.max(other.largest_bucket);
        self.candidates += other.candidates;
    }
}

/// The bucket records of one worker, reduced to candidate pairs once all have arrived.
#[derive(Debug, Default)]
pub struct BucketTable {
    records: Vec<(BucketKey, DocId)>,
}

impl BucketTable {
    /// Adds one membership.
    pub fn insert(&mut self, key: BucketKey, doc: DocId) {
        self.records.push((key, doc));
    }

    /// Number of memberships held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no membership is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Emits every candidate pair and empties the table.
    ///
    /// Members of a bucket are ordered by `DocId`. A bucket of at most `max_bucket_size`
    /// members gives all its pairs; a larger one gives the pairs of each member with the
    /// first `bucket_anchors` members, so its cost is linear in its size. Neither depends on
    /// the order records arrived in.
    pub fn drain_candidates(
        &mut self,
        limits: &BucketSpec,
        stats: &mut BucketStats,
        mut emit: impl FnMut(Candidate),
    ) {
        self.records.sort_unstable();
        self.records.dedup();
        for bucket in self.records.chunk_by(|x, y| x.0 == y.0) {
            let n = bucket.len();
            if n < 2 {
                continue;
            }
            stats.shared_buckets += 1;
            stats.largest_bucket = stats.largest_bucket.max(n as u64);
            let anchors = if n > limits.max_bucket_size {
                stats.cut_buckets += 1;
                limits.bucket_anchors
            } else {
                n
            };
            for (i, (_, a)) in bucket.iter().enumerate().take(anchors) {
                for (_, b) in &bucket[i + 1..] {
                    stats.candidates += 1;
                    emit(Candidate { a: *a, b: *b });
                }
            }
        }
        self.records = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(i: u64) -> DocId {
        DocId::new(0, i)
    }

    #[test]
    fn small_buckets_give_all_pairs_in_order() {
        let mut t = BucketTable::default();
        for (k, d) in [(7, 3), (7, 1), (9, 2), (7, 2), (7, 1)] {
            t.insert(BucketKey::new(k), doc(d));
        }
        let mut out = Vec::new();
        let mut stats = BucketStats::default();
        t.drain_candidates(&BucketSpec::default(), &mut stats, |c| {
            out.push((c.a.record(), c.b.record()))
        });
        assert_eq!(out, vec![(1, 2), (1, 3), (2, 3)]);
        assert_eq!(
            stats,
            BucketStats { shared_buckets: 1, cut_buckets: 0, largest_bucket: 3, candidates: 3 }
        );
        assert!(t.is_empty());
    }

    #[test]
    fn huge_buckets_are_compared_with_their_first_members_whatever_the_arrival_order() {
        let limits = BucketSpec { max_bucket_size: 4, bucket_anchors: 2 };
        let run = |order: &[u64]| {
            let mut t = BucketTable::default();
            for &d in order {
                t.insert(BucketKey::new(1), doc(d));
            }
            let mut out = Vec::new();
            let mut stats = BucketStats::default();
            t.drain_candidates(&limits, &mut stats, |c| out.push((c.a.record(), c.b.record())));
            (out, stats)
        };
        let (forward, stats) = run(&[1, 2, 3, 4, 5, 6]);
        let (backward, _) = run(&[6, 5, 4, 3, 2, 1]);
        assert_eq!(forward, backward);
        assert_eq!(
            forward,
            vec![(1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (2, 3), (2, 4), (2, 5), (2, 6)]
        );
        assert_eq!((stats.cut_buckets, stats.candidates, stats.largest_bucket), (1, 9, 6));
    }
}
