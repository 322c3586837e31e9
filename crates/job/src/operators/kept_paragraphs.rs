//! Sends the paragraphs of every kept document to the worker of each paragraph's key
//! (paragraph-level dedup, `--paragraphs`).
//!
//! Partitioning: verdicts exchanged on `DocId`, as `WriteDocuments` takes them; the
//! documents' paragraphs come from the metadata the document store of the same worker
//! keeps. Emits: `(key, document, number)` with what the document's row needs of the
//! paragraph, for every paragraph of a document the run keeps (removed documents and
//! rejects neither count nor lose paragraphs). Holds: at most its spill limit of verdicts;
//! it reads the metadata file alongside, sequentially (`WriteDocuments` reads it again
//! after).

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::DocId;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::store::DocStore;
use crate::operators::write_documents::keeps;
use crate::settings::spec::Removal;
use crate::storage::records::{DocMeta, ParagraphKey, ParagraphSeen, Verdict};
use crate::storage::routing::route_doc;
use crate::storage::spill::{SortedIter, SpillError};

/// Sends kept documents' paragraphs to their keys' workers.
pub trait KeptParagraphs<'s, T: Timestamp> {
    /// The paragraphs of the documents these verdicts (and no verdict: a document alone
    /// in its cluster) keep.
    fn kept_paragraphs(
        self,
        env: &OperatorEnv,
        removal: Removal,
    ) -> StreamVec<'s, T, Keyed<ParagraphKey, ParagraphSeen>>;
}

struct Walk {
    meta: SortedIter<Keyed<DocId, DocMeta>>,
    next: Option<Keyed<DocId, DocMeta>>,
    removal: Removal,
}

impl Walk {
    /// Emits the paragraphs of the stored documents before `doc` (no verdict: kept), and
    /// returns `doc`'s metadata when it is stored.
    fn until(
        &mut self,
        doc: DocId,
        emit: &mut dyn FnMut(Keyed<ParagraphKey, ParagraphSeen>),
    ) -> Result<Option<DocMeta>, SpillError> {
        loop {
            if self.next.is_none() {
                match self.meta.next() {
                    Some(m) => self.next = Some(m?),
                    None => return Ok(None),
                }
            }
            let at = self.next.as_ref().expect("filled above").key;
            if at > doc {
                return Ok(None);
            }
            let m = self.next.take().expect("present");
            if at == doc {
                return Ok(Some(m.value));
            }
            send(m.key, &m.value, emit);
        }
    }
}

/// Emits the paragraphs of kept document `doc`.
fn send(doc: DocId, meta: &DocMeta, emit: &mut dyn FnMut(Keyed<ParagraphKey, ParagraphSeen>)) {
    for p in &meta.paragraphs {
        let seen =
            ParagraphSeen { id: meta.id.clone(), offset: p.offset, len: p.len, chars: p.chars };
        emit(Keyed { key: (p.key, doc, p.number), value: seen });
    }
}

impl Drain<Keyed<DocId, Verdict>, Keyed<ParagraphKey, ParagraphSeen>> for Walk {
    fn item(
        &mut self,
        v: Keyed<DocId, Verdict>,
        emit: &mut dyn FnMut(Keyed<ParagraphKey, ParagraphSeen>),
    ) -> Result<(), SpillError> {
        let meta = self.until(v.key, emit)?;
        if let (Some(meta), Verdict::Assigned(a)) = (meta, &v.value)
            && keeps(v.key, Some(a), self.removal)
        {
            send(v.key, &meta, emit);
        }
        Ok(())
    }

    fn end(
        &mut self,
        emit: &mut dyn FnMut(Keyed<ParagraphKey, ParagraphSeen>),
    ) -> Result<(), SpillError> {
        self.until(DocId::from_raw(u64::MAX), emit).map(|_| ())
    }
}

impl<'s, T: Timestamp> KeptParagraphs<'s, T> for StreamVec<'s, T, Keyed<DocId, Verdict>> {
    fn kept_paragraphs(
        self,
        env: &OperatorEnv,
        removal: Removal,
    ) -> StreamVec<'s, T, Keyed<ParagraphKey, ParagraphSeen>> {
        let store: Rc<RefCell<DocStore>> = env.store.clone();
        let by_doc = Exchange::new(|v: &Keyed<DocId, Verdict>| route_doc(v.key));
        collect_sorted(self, by_doc, "KeptParagraphs", env.spill.clone(), move || {
            let store = store.borrow();
            let meta = store.meta.as_ref().expect("the store finished before the clusters");
            Ok(Walk { meta: meta.iter()?, next: None, removal })
        })
    }
}
