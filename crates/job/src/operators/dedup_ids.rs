//! Rejects records whose id repeats an earlier record's id.
//!
//! Partitioning: exchanged on a hash of the id. Emits: when the input frontier passes.
//! Holds: every signed document of this worker's ids.

use std::sync::Arc;

use neardup_io::{Reason, RejectedRecord};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use crate::operators::gather;
use crate::records::SignedDoc;
use crate::routing::route_str;

/// Keeps the earliest record of each id.
pub trait DedupIds<'s, T: Timestamp> {
    /// Passes the earliest document (smallest `DocId`) of each id and rejects the others as
    /// [`Reason::DuplicateId`], naming where the id was first seen. `sources` maps file
    /// indexes to paths.
    fn dedup_ids(
        self,
        sources: Arc<[Arc<str>]>,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>>;
}

impl<'s, T: Timestamp + TotalOrder> DedupIds<'s, T> for StreamVec<'s, T, SignedDoc> {
    fn dedup_ids(
        self,
        sources: Arc<[Arc<str>]>,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>> {
        let by_id = Exchange::new(|d: &SignedDoc| route_str(&d.id));
        gather(self, by_id, "DedupIds", move |mut docs, emit| {
            docs.sort_unstable_by(|a, b| a.id.cmp(&b.id).then(a.doc.cmp(&b.doc)));
            let mut docs = docs.into_iter().peekable();
            while let Some(first) = docs.next() {
                while let Some(dup) = docs.next_if(|d| d.id == first.id) {
                    emit(Err(RejectedRecord {
                        doc: dup.doc,
                        id: Some(dup.id),
                        reason: Reason::DuplicateId,
                        detail: format!(
                            "id first seen at \"{}\" record {}",
                            sources[first.doc.file_index() as usize],
                            first.doc.record()
                        ),
                    }));
                }
                emit(Ok(first));
            }
        })
    }
}
