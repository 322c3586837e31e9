//! Verifies candidate pairs: each pair visits the home worker of its first document (where
//! duplicates of the pair are dropped and the first signature attached) and then that of
//! its second, where it is compared.
//!
//! Partitioning: candidates exchanged on the first `DocId`, then on the second.
//! Emits: deduplicated candidates when the first input's frontier passes; verified pairs
//! as they are compared. Holds: this worker's candidates (16 bytes each) until deduplicated.

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::DocId;
use neardup_io::{PairKind, PairRow};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use crate::operators::SignatureStore;
use crate::operators::gather;
use crate::records::{Candidate, HalfPair};
use crate::routing::route_doc;
use crate::stats::WorkerStats;

/// Verifies candidates against the signature store.
pub trait VerifyCandidates<'s, T: Timestamp> {
    /// Emits the verified pairs among the candidates, each pair once.
    fn verify_candidates(
        self,
        store: Rc<RefCell<SignatureStore>>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, PairRow>;
}

impl<'s, T: Timestamp + TotalOrder> VerifyCandidates<'s, T> for StreamVec<'s, T, Candidate> {
    fn verify_candidates(
        self,
        store: Rc<RefCell<SignatureStore>>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, PairRow> {
        let by_first = Exchange::new(|c: &Candidate| route_doc(c.a));
        let first_store = store.clone();
        let first_stats = stats.clone();
        let half_pairs = gather(self, by_first, "AttachFirst", move |mut candidates, emit| {
            candidates.sort_unstable();
            candidates.dedup();
            first_stats.borrow_mut().unique_candidates += candidates.len() as u64;
            let store = first_store.borrow();
            for Candidate { a, b } in candidates {
                let first = store.get(a);
                emit(HalfPair {
                    a,
                    b,
                    id_a: first.id.clone(),
                    signature_a: first.signature.clone(),
                    feature_set_a: first.feature_set.clone(),
                });
            }
        });
        let by_second = Exchange::new(|h: &HalfPair| route_doc(h.b));
        half_pairs
            .unary_frontier(by_second, "VerifyPairs", move |_capability, _info| {
                let mut freed = false;
                move |(input, frontier), output| {
                    input.for_each_stamp(|cap, batches| {
                        let store = store.borrow();
                        let verifier = store.verifier();
                        let mut session = output.session(&cap);
                        let (mut compared, mut verified) = (0u64, 0u64);
                        for half in batches.flat_map(|b| b.drain(..)) {
                            let second = store.get(half.b);
                            let verdict = verifier.verify(
                                &half.signature_a,
                                &second.signature,
                                &half.feature_set_a,
                                &second.feature_set,
                            );
                            compared += 1;
                            if verdict.is_duplicate {
                                verified += 1;
                                session.give(near_row(
                                    half.a,
                                    half.id_a,
                                    half.b,
                                    second.id.clone(),
                                    &verdict,
                                ));
                            }
                        }
                        let mut stats = stats.borrow_mut();
                        stats.compared_pairs += compared;
                        stats.verified_pairs += verified;
                    });
                    if frontier.is_empty() && !freed {
                        store.borrow_mut().clear();
                        freed = true;
                    }
                }
            })
            .container::<Vec<_>>()
    }
}

/// The `pairs/` row of a verified pair, ordered by id.
fn near_row(
    a: DocId,
    id_a: String,
    b: DocId,
    id_b: String,
    verdict: &neardup_core::Verdict,
) -> PairRow {
    let ((doc_a, id_a), (doc_b, id_b)) =
        if id_a <= id_b { ((a, id_a), (b, id_b)) } else { ((b, id_b), (a, id_a)) };
    PairRow {
        id_a,
        id_b,
        doc_a,
        doc_b,
        similarity: verdict.similarity,
        kind: PairKind::Near,
        hamming: verdict.hamming,
        matching_bands: verdict.matching_bands,
    }
}
