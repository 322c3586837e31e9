//! Rejects records whose id repeats an earlier record's id.
//!
//! An id belongs to its first record (smallest `DocId`), even when that record is itself
//! rejected: a later record with the same id is rejected as a duplicate id.
//!
//! Partitioning: exchanged on a hash of the id (records without an id, on their `DocId`).
//! Emits: when the input frontier passes. Holds: every record of this worker's ids.

use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::{Reason, RejectedRecord};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use crate::operators::gather;
use crate::records::SignedDoc;
use crate::routing::{route_doc, route_str};

/// A signed document or a reject.
type Signed = Result<SignedDoc, RejectedRecord>;

fn id_of(r: &Signed) -> Option<&str> {
    match r {
        Ok(d) => Some(&d.id),
        Err(r) => r.id.as_deref(),
    }
}

fn doc_of(r: &Signed) -> DocId {
    match r {
        Ok(d) => d.doc,
        Err(r) => r.doc,
    }
}

/// Keeps the earliest record of each id.
pub trait DedupIds<'s, T: Timestamp> {
    /// Passes the earliest record (smallest `DocId`) of each id as it is, and turns later
    /// documents with that id into [`Reason::DuplicateId`] rejects naming where the id was
    /// first seen (later records already rejected keep their own reason). `sources` maps
    /// file indexes to paths.
    fn dedup_ids(self, sources: Arc<[Arc<str>]>) -> StreamVec<'s, T, Signed>;
}

impl<'s, T: Timestamp + TotalOrder> DedupIds<'s, T> for StreamVec<'s, T, Signed> {
    fn dedup_ids(self, sources: Arc<[Arc<str>]>) -> StreamVec<'s, T, Signed> {
        let by_id =
            Exchange::new(|r: &Signed| id_of(r).map_or_else(|| route_doc(doc_of(r)), route_str));
        gather(self, by_id, "DedupIds", move |records, emit| {
            let (mut with_id, without_id): (Vec<Signed>, Vec<Signed>) =
                records.into_iter().partition(|r| id_of(r).is_some());
            without_id.into_iter().for_each(&mut *emit);
            with_id
                .sort_unstable_by(|a, b| id_of(a).cmp(&id_of(b)).then(doc_of(a).cmp(&doc_of(b))));
            let mut records = with_id.into_iter().peekable();
            while let Some(first) = records.next() {
                let first_doc = doc_of(&first);
                while let Some(later) = records.next_if(|r| id_of(r) == id_of(&first)) {
                    emit(match later {
                        Ok(dup) => Err(RejectedRecord {
                            doc: dup.doc,
                            id: Some(dup.id),
                            reason: Reason::DuplicateId,
                            detail: format!(
                                "id first seen at \"{}\" record {}",
                                sources[first_doc.file_index() as usize],
                                first_doc.record()
                            ),
                        }),
                        already_rejected => already_rejected,
                    });
                }
                emit(first);
            }
        })
    }
}
