//! Stores the signatures of representatives and emits one bucket record per band or table.
//!
//! Partitioning: representatives arrive exchanged on `DocId` (their home worker); the
//! per-worker counts arrive broadcast. Emits: once both inputs are complete, since SimHash
//! picks its block layout from the corpus size. Holds: the signatures of this worker's
//! representatives, shared with [`super::VerifyCandidates`] until verification ends.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::{BlockLayout, DocId, Signature, Verifier};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::config::{JobConfig, MethodParams};
use crate::records::{BucketRecord, SignedDoc};
use crate::stats::WorkerStats;

/// A representative's signature, by `DocId`.
#[derive(Debug)]
pub struct StoredDoc {
    /// The record's id.
    pub id: String,
    /// Its signature.
    pub signature: Signature,
    /// Its feature set (exact-Jaccard verification only).
    pub feature_set: Vec<u64>,
}

/// The signatures of one worker's representatives and the verifier for their pairs.
#[derive(Debug, Default)]
pub struct SignatureStore {
    docs: Vec<(DocId, StoredDoc)>,
    verifier: Option<Verifier>,
}

impl SignatureStore {
    /// The stored document `doc`.
    ///
    /// # Panics
    /// If `doc` is not stored here: candidates are routed to their documents' home workers,
    /// so a miss is a routing bug.
    pub fn get(&self, doc: DocId) -> &StoredDoc {
        match self.docs.binary_search_by_key(&doc, |(d, _)| *d) {
            Ok(i) => &self.docs[i].1,
            Err(_) => unreachable!("document {doc:?} is not stored on its home worker"),
        }
    }

    /// The verifier, set once the layout is known.
    ///
    /// # Panics
    /// If called before the index has emitted its bucket records.
    pub fn verifier(&self) -> &Verifier {
        self.verifier.as_ref().expect("the verifier is set before any candidate exists")
    }

    /// Frees the signatures once verification is over.
    pub fn clear(&mut self) {
        self.docs = Vec::new();
    }
}

/// Indexes representatives for LSH.
pub trait IndexSignatures<'s, T: Timestamp> {
    /// Stores representatives (already on their home worker) in `store` and emits their
    /// bucket records; `counts` holds every worker's number of representatives.
    /// `blocks_chosen` receives the SimHash block count used.
    fn index_signatures(
        self,
        counts: StreamVec<'s, T, u64>,
        config: Arc<JobConfig>,
        store: Rc<RefCell<SignatureStore>>,
        blocks_chosen: Rc<RefCell<Option<u32>>>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, BucketRecord>;
}

impl<'s, T: Timestamp> IndexSignatures<'s, T> for StreamVec<'s, T, SignedDoc> {
    fn index_signatures(
        self,
        counts: StreamVec<'s, T, u64>,
        config: Arc<JobConfig>,
        store: Rc<RefCell<SignatureStore>>,
        blocks_chosen: Rc<RefCell<Option<u32>>>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, BucketRecord> {
        self.binary_frontier(
            counts,
            Pipeline,
            Pipeline,
            "IndexSignatures",
            move |capability, _info| {
                let mut capability = Some(capability);
                let mut total_docs = 0u64;
                move |(docs, docs_frontier), (counts, counts_frontier), output| {
                    docs.for_each(|_cap, batch| {
                        let mut store = store.borrow_mut();
                        for d in batch.drain(..) {
                            let signature =
                                d.signature.expect("only signed representatives are indexed");
                            store.docs.push((
                                d.doc,
                                StoredDoc { id: d.id, signature, feature_set: d.feature_set },
                            ));
                        }
                    });
                    counts.for_each(|_cap, batch| total_docs += batch.drain(..).sum::<u64>());
                    if !(docs_frontier.is_empty() && counts_frontier.is_empty()) {
                        return;
                    }
                    let Some(cap) = capability.take() else { return };
                    let mut store = store.borrow_mut();
                    store.docs.sort_unstable_by_key(|(d, _)| *d);
                    stats.borrow_mut().signed_representatives += store.docs.len() as u64;
                    let seed = config.spec.seed;
                    let mut session = output.session(&cap);
                    match &config.params {
                        MethodParams::Minhash { lsh, .. } => {
                            store.verifier = Some(Verifier::MinHash {
                                threshold: config.spec.minhash.threshold,
                                lsh: *lsh,
                                mode: config.spec.minhash.verify,
                            });
                            for (doc, stored) in &store.docs {
                                let Signature::MinHash(sig) = &stored.signature else {
                                    unreachable!("minhash job")
                                };
                                session.give_iterator(
                                    lsh.band_keys(sig, seed)
                                        .map(|key| BucketRecord { key, doc: *doc }),
                                );
                            }
                        }
                        MethodParams::Simhash { layout } => {
                            let k = config.spec.simhash.max_distance;
                            let layout = layout.clone().unwrap_or_else(|| {
                                BlockLayout::choose(k, total_docs)
                                    .expect("max_distance checked by JobConfig")
                            });
                            *blocks_chosen.borrow_mut() = Some(layout.blocks());
                            for (doc, stored) in &store.docs {
                                let Signature::SimHash(fp) = &stored.signature else {
                                    unreachable!("simhash job")
                                };
                                session.give_iterator(
                                    layout
                                        .keys(*fp, seed)
                                        .map(|key| BucketRecord { key, doc: *doc }),
                                );
                            }
                            store.verifier = Some(Verifier::SimHash { layout });
                        }
                    }
                }
            },
        )
        .container::<Vec<_>>()
    }
}
