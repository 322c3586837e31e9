//! Groups documents by normalised text: the earliest of each group represents it in LSH,
//! the others become exact pairs with it.
//!
//! Partitioning: exchanged on the content hash. Emits: when the input frontier passes.
//! Holds: every signed document of this worker's content hashes.

use neardup_core::DocId;
use neardup_io::{PairKind, PairRow};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use crate::operators::gather;
use crate::records::{DocInfo, SignedDoc};

/// What grouping by content produces.
#[derive(Debug)]
pub enum Grouped {
    /// Every document, for the decision stage.
    Info(DocId, DocInfo),
    /// An exact-duplicate pair (representative, copy).
    Exact(PairRow),
    /// A representative with a signature, for LSH.
    Representative(SignedDoc),
    /// How many representatives this worker emitted, once at the end.
    RepresentativeCount(u64),
}

/// Finds exact duplicates.
pub trait ExactGroups<'s, T: Timestamp> {
    /// Groups documents by content hash.
    fn exact_groups(self) -> StreamVec<'s, T, Grouped>;
}

impl<'s, T: Timestamp + TotalOrder> ExactGroups<'s, T> for StreamVec<'s, T, SignedDoc> {
    fn exact_groups(self) -> StreamVec<'s, T, Grouped> {
        let by_content = Exchange::new(|d: &SignedDoc| d.content.route());
        gather(self, by_content, "ExactGroups", |mut docs, emit| {
            docs.sort_unstable_by_key(|d| (d.content, d.doc));
            let mut docs = docs.into_iter().peekable();
            let mut representatives = 0;
            while let Some(mut first) = docs.next() {
                emit(Grouped::Info(first.doc, info(&mut first)));
                while let Some(mut copy) = docs.next_if(|d| d.content == first.content) {
                    emit(Grouped::Exact(exact_pair(&first, &copy)));
                    emit(Grouped::Info(copy.doc, info(&mut copy)));
                }
                if first.signature.is_some() {
                    representatives += 1;
                    emit(Grouped::Representative(first));
                }
            }
            emit(Grouped::RepresentativeCount(representatives));
        })
    }
}

/// The decision stage's view of a document; the web metadata moves there, since no later
/// stage of LSH needs it.
fn info(d: &mut SignedDoc) -> DocInfo {
    DocInfo {
        id: d.id.clone(),
        chars: d.chars,
        features: d.features,
        content: d.content,
        matched: d.signature.is_some(),
        web: d.web.take(),
    }
}

/// The exact pair of two documents, ordered by id as `pairs/` requires.
fn exact_pair(x: &SignedDoc, y: &SignedDoc) -> PairRow {
    let (a, b) = if x.id <= y.id { (x, y) } else { (y, x) };
    PairRow {
        id_a: a.id.clone(),
        id_b: b.id.clone(),
        doc_a: a.doc,
        doc_b: b.doc,
        similarity: 1.0,
        kind: PairKind::Exact,
        hamming: None,
        matching_bands: None,
    }
}
