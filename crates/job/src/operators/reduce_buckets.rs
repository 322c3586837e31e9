//! Groups bucket records by key and emits candidate pairs once every bucket is complete.
//!
//! Partitioning: exchanged on `BucketKey`. Emits: when the input frontier passes a time.
//! Holds: every bucket record of this worker's keys for that time (16 bytes each).

use std::cell::RefCell;
use std::rc::Rc;

use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use crate::buckets::BucketTable;
use crate::config::BucketSpec;
use crate::operators::gather;
use crate::records::{BucketRecord, Candidate};
use crate::stats::WorkerStats;

/// Reduces LSH buckets to candidate pairs.
pub trait ReduceBuckets<'s, T: Timestamp> {
    /// Routes each record to the worker owning its key and, once all records have arrived,
    /// emits the candidate pairs of every bucket (see [`BucketTable::drain_candidates`]).
    fn reduce_buckets(
        self,
        limits: BucketSpec,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, Candidate>;
}

impl<'s, T: Timestamp + TotalOrder> ReduceBuckets<'s, T> for StreamVec<'s, T, BucketRecord> {
    fn reduce_buckets(
        self,
        limits: BucketSpec,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, Candidate> {
        let by_key = Exchange::new(|r: &BucketRecord| r.key.get());
        gather(self, by_key, "ReduceBuckets", move |records, emit| {
            let mut table = BucketTable::default();
            stats.borrow_mut().bucket_records += records.len() as u64;
            for r in records {
                table.insert(r.key, r.doc);
            }
            let mut bucket_stats = Default::default();
            table.drain_candidates(&limits, &mut bucket_stats, emit);
            stats.borrow_mut().buckets.merge(&bucket_stats);
        })
    }
}
