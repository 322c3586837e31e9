//! Groups bucket records by key and emits candidate pairs once every bucket is complete.
//!
//! Partitioning: exchanged on `BucketKey`. Emits: once the input is complete, in key
//! order, a batch per activation. Holds: at most its spill limit of records (24 bytes each)
//! plus one bucket's first `max_bucket_size + 1` members.

use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::buckets::BucketReducer;
use crate::operators::collect::{Drain, Spill, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::settings::spec::BucketSpec;
use crate::storage::records::{BucketRecord, Candidate};
use crate::storage::spill::SpillError;

/// Reduces LSH buckets to candidate pairs.
pub trait ReduceBuckets<'s, T: Timestamp> {
    /// Routes each record to the worker owning its key and, once all records have arrived,
    /// emits the candidate pairs of every bucket (see [`BucketReducer`]).
    fn reduce_buckets(self, limits: BucketSpec, env: &OperatorEnv) -> StreamVec<'s, T, Candidate>;
}

struct Buckets {
    reducer: BucketReducer,
    spill: Spill,
    records: u64,
}

impl Drain<BucketRecord, Candidate> for Buckets {
    fn item(&mut self, r: BucketRecord, emit: &mut dyn FnMut(Candidate)) -> Result<(), SpillError> {
        self.records += 1;
        self.reducer.push(r.key, r.doc, emit);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Candidate)) -> Result<(), SpillError> {
        self.reducer.finish(emit);
        let mut stats = self.spill.stats.borrow_mut();
        stats.matching.bucket_records += self.records;
        stats.matching.buckets.merge(&self.reducer.stats);
        Ok(())
    }
}

impl<'s, T: Timestamp> ReduceBuckets<'s, T> for StreamVec<'s, T, BucketRecord> {
    fn reduce_buckets(self, limits: BucketSpec, env: &OperatorEnv) -> StreamVec<'s, T, Candidate> {
        let spill = env.spill.clone();
        let by_key = Exchange::new(|r: &BucketRecord| r.key.get());
        let drain_spill = spill.clone();
        collect_sorted(self, by_key, "ReduceBuckets", spill, move || {
            Ok(Buckets {
                reducer: BucketReducer::new(limits.clone()),
                spill: drain_spill.clone(),
                records: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::{BucketKey, DocId};

    use super::*;
    use crate::operators::testing::{drain, spill};

    fn record(key: u64, record: u64) -> BucketRecord {
        BucketRecord { key: BucketKey::new(key), doc: DocId::new(0, record) }
    }

    #[test]
    fn every_bucket_gives_its_pairs_and_the_records_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), 0);
        let limits = BucketSpec { max_bucket_size: 3, bucket_anchors: 1 };
        let mut buckets =
            Buckets { reducer: BucketReducer::new(limits), spill: spill.clone(), records: 0 };
        let records = vec![
            // Three members: all three pairs.
            record(7, 3),
            record(7, 1),
            record(7, 2),
            // Alone: none.
            record(8, 4),
            // Four members, over the limit: each with the anchor only.
            record(9, 5),
            record(9, 6),
            record(9, 7),
            record(9, 8),
        ];
        let mut pairs: Vec<(u64, u64)> = drain(&mut buckets, records)
            .into_iter()
            .map(|c| (c.a.record(), c.b.record()))
            .collect();
        pairs.sort_unstable();
        assert_eq!(pairs, [(1, 2), (1, 3), (2, 3), (5, 6), (5, 7), (5, 8)]);
        let stats = spill.stats.borrow();
        assert_eq!(stats.matching.bucket_records, 8);
        assert_eq!(
            (stats.matching.buckets.shared_buckets, stats.matching.buckets.cut_buckets),
            (2, 1)
        );
        assert_eq!(stats.matching.buckets.largest_bucket, 4);
    }
}
