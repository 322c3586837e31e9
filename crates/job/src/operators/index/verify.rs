//! Verifying candidates from the index at the new document's home worker
//! ([`VerifyIndexed`]).

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::DocId;
use neardup_io::index::IndexRef;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::operators::doc_store::Cursor;
use crate::operators::doc_store::DocStore;
use crate::records::DocMeta;
use crate::routing::route_doc;
use crate::spill::SpillError;

use super::records::{IndexMatch, IndexedSide};
use crate::records::decode_signature;

struct VerifyDrain {
    store: Rc<RefCell<DocStore>>,
    signatures: Cursor,
    /// For the content hash of new documents without a signature.
    meta: Cursor<DocMeta>,
    stats: Rc<RefCell<crate::stats::WorkerStats>>,
}

impl Drain<Keyed<(DocId, IndexRef), IndexedSide>, IndexMatch> for VerifyDrain {
    fn item(
        &mut self,
        item: Keyed<(DocId, IndexRef), IndexedSide>,
        emit: &mut dyn FnMut(IndexMatch),
    ) -> Result<(), SpillError> {
        let (new, old) = item.key;
        let side = item.value.0;
        let verifier = self.store.borrow().verifier.clone().expect("set by the store");
        // Equal texts match; otherwise both need signatures (a document with too few
        // features to sign has none, and matches equal texts only).
        let similarity = match self.signatures.get(new)? {
            Some(entry) if entry.node.content.get() == side.content => Some(1.0),
            Some(_) if side.signature.is_empty() => None,
            Some(entry) => decode_signature(&side.signature, &entry.signature).and_then(|theirs| {
                let verdict = verifier.verify(&entry.signature, &theirs, &[], &[]);
                verdict.is_duplicate.then_some(verdict.similarity)
            }),
            None => (self.meta.find(new)?.content.get() == side.content).then_some(1.0),
        };
        if let Some(similarity) = similarity {
            self.stats.borrow_mut().index.matches += 1;
            emit(IndexMatch {
                new,
                old,
                kept: side.kept,
                kept_id: side.kept_id,
                kept_content: side.kept_content,
                similarity,
            });
        }
        Ok(())
    }
}

/// Verifies new documents against the indexed documents they met.
pub trait VerifyIndexed<'s, T: Timestamp> {
    /// The verified matches.
    fn verify_indexed(
        self,
        store: Rc<RefCell<DocStore>>,
        stats: Rc<RefCell<crate::stats::WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexMatch>;
}

impl<'s, T: Timestamp> VerifyIndexed<'s, T>
    for StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>>
{
    fn verify_indexed(
        self,
        store: Rc<RefCell<DocStore>>,
        stats: Rc<RefCell<crate::stats::WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexMatch> {
        let by_new = Exchange::new(|k: &Keyed<(DocId, IndexRef), IndexedSide>| route_doc(k.key.0));
        collect_sorted(self, by_new, "VerifyIndexed", spill, move || {
            let meta = Cursor::over(
                store.borrow().meta.as_ref().expect("the store finished before any candidate"),
            )?;
            Ok(VerifyDrain {
                store: store.clone(),
                signatures: Cursor::open(&store)?,
                meta,
                stats: stats.clone(),
            })
        })
    }
}
