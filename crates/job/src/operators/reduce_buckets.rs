//! Groups bucket records by key and emits candidate pairs once every bucket is complete.
//!
//! Partitioning: exchanged on `BucketKey`. Emits: once the input is complete, in key
//! order, a batch per activation. Holds: at most its spill limit of records (24 bytes each)
//! plus one bucket's first `max_bucket_size + 1` members.

use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::buckets::BucketReducer;
use crate::operators::collect::{Drain, Spill, collect_sorted};
use crate::records::{BucketRecord, Candidate};
use crate::spec::BucketSpec;
use crate::spill::SpillError;

/// Reduces LSH buckets to candidate pairs.
pub trait ReduceBuckets<'s, T: Timestamp> {
    /// Routes each record to the worker owning its key and, once all records have arrived,
    /// emits the candidate pairs of every bucket (see [`BucketReducer`]).
    fn reduce_buckets(self, limits: BucketSpec, spill: Spill) -> StreamVec<'s, T, Candidate>;
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
        stats.bucket_records += self.records;
        stats.buckets.merge(&self.reducer.stats);
        Ok(())
    }
}

impl<'s, T: Timestamp> ReduceBuckets<'s, T> for StreamVec<'s, T, BucketRecord> {
    fn reduce_buckets(self, limits: BucketSpec, spill: Spill) -> StreamVec<'s, T, Candidate> {
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
