//! Verifying candidates from the index at the new document's home worker
//! ([`VerifyIndexed`]).

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::DocId;
use neardup_io::index::IndexRef;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::store::DocStore;
use crate::operators::store::{Cursor, SigCursor};
use crate::storage::records::DocMeta;
use crate::storage::routing::route_doc;
use crate::storage::spill::SpillError;

use super::records::{IndexMatch, IndexedSide};
use crate::storage::records::decode_signature;

struct VerifyDrain {
    store: Rc<RefCell<DocStore>>,
    signatures: SigCursor,
    /// For the content hash of new documents without a signature.
    meta: Cursor<DocMeta>,
    stats: Rc<RefCell<crate::reporting::stats::WorkerStats>>,
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
                let ours = neardup_core::Side::new(&entry.signature, entry.features);
                let theirs = neardup_core::Side::new(&theirs, side.features);
                verifier.duplicate(ours, theirs).map(|verdict| verdict.similarity)
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
    fn verify_indexed(self, env: &OperatorEnv) -> StreamVec<'s, T, IndexMatch>;
}

impl<'s, T: Timestamp> VerifyIndexed<'s, T>
    for StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>>
{
    fn verify_indexed(self, env: &OperatorEnv) -> StreamVec<'s, T, IndexMatch> {
        let (store, spill) = (env.store.clone(), env.spill.clone());
        let by_new = Exchange::new(|k: &Keyed<(DocId, IndexRef), IndexedSide>| route_doc(k.key.0));
        let stats = spill.stats.clone();
        collect_sorted(self, by_new, "VerifyIndexed", spill, move || {
            let meta = Cursor::over(
                store.borrow().meta.as_ref().expect("the store finished before any candidate"),
            )?;
            Ok(VerifyDrain {
                store: store.clone(),
                signatures: SigCursor::open(&store)?,
                meta,
                stats: stats.clone(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::Signature;
    use neardup_io::index::IndexedDoc;

    use super::*;
    use crate::operators::testing::{self, drain, signed, store};
    use crate::reporting::stats::WorkerStats;
    use crate::storage::records::{SignedDoc, encode_signature};

    const TEXT: &str = "a river runs through the old town and past the mill where the baker \
                        sells bread every morning before the market opens on the square";

    /// An indexed document `old` with `content` and, when given, the signature of `like`.
    fn side(
        new: u64,
        old: u64,
        content: u128,
        like: Option<&SignedDoc>,
    ) -> Keyed<(DocId, IndexRef), IndexedSide> {
        let at = IndexRef { generation: 1, doc: old };
        let signature =
            like.and_then(|d| d.signature.as_ref()).map(encode_signature).unwrap_or_default();
        let doc = IndexedDoc {
            generation: 1,
            doc: old,
            id: format!("old{old}"),
            source: "old.jsonl".into(),
            kept: IndexRef { generation: 1, doc: 1 },
            kept_id: "old1".into(),
            kept_content: 7,
            content,
            signature,
            features: like.map_or(0, |d| d.features),
        };
        Keyed { key: (DocId::new(0, new), at), value: IndexedSide(doc) }
    }

    #[test]
    fn equal_texts_match_and_signatures_are_verified_as_within_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job_with_index(dir.path(), &[], &[]);
        let long = signed(&job, 1, TEXT);
        let edited = signed(&job, 2, &TEXT.replace("bread", "cakes"));
        let short = signed(&job, 3, "tiny");
        assert!(matches!(long.signature, Some(Signature::MinHash(_))) && short.signature.is_none());
        let store = store(dir.path(), &job, &[long.clone(), edited.clone(), short.clone()]);
        let stats = Rc::new(RefCell::new(WorkerStats::default()));
        let meta = Cursor::over(store.borrow().meta.as_ref().unwrap()).unwrap();
        let mut verify = VerifyDrain {
            store: store.clone(),
            signatures: SigCursor::open(&store).unwrap(),
            meta,
            stats: stats.clone(),
        };
        let other = u128::MAX;
        let matches = drain(
            &mut verify,
            vec![
                side(1, 10, long.content.get(), None),  // the same text
                side(2, 11, other, Some(&long)),        // a near text
                side(2, 12, other, None),               // indexed without a signature
                side(3, 13, short.content.get(), None), // a short text, the same
                side(3, 14, other, Some(&long)),        // a short text, another
            ],
        );
        let got: Vec<(u64, u64)> = matches.iter().map(|m| (m.new.record(), m.old.doc)).collect();
        assert_eq!(got, [(1, 10), (2, 11), (3, 13)]);
        assert_eq!((matches[0].similarity, matches[2].similarity), (1.0, 1.0));
        assert!(
            matches[1].similarity >= job.minhash_spec().threshold() && matches[1].similarity < 1.0
        );
        assert!(matches.iter().all(|m| m.kept_id == "old1" && m.kept_content == 7));
        assert_eq!(stats.borrow().index.matches, 3);
    }
}
