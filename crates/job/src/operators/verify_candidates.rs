//! Verifies candidate pairs by two merge joins with the signature file of the document
//! store: at the home worker of a pair's first document, repeated pairs are dropped and the
//! first signature is attached; at the home worker of the second, the two are compared.
//!
//! Partitioning: candidates exchanged on the first `DocId`, half pairs on the second.
//! Emits: once each input is complete, in order, a batch per activation. Holds: at most its
//! spill limit of candidates (16 bytes) or half pairs (about 600 bytes with a MinHash-128
//! signature), and reads the signature file sequentially.

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::{DocId, Verdict, Verifier};
use neardup_io::{PairKind, PairRow};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::operators::doc_store::{Cursor, DocStore};
use crate::records::{Candidate, Edge, HalfPair};
use crate::routing::route_doc;
use crate::spill::SpillError;

/// A verified near-duplicate pair.
#[derive(Clone, Debug)]
pub enum Near {
    /// The `pairs/` row.
    Pair(PairRow),
    /// The pair for clustering.
    Edge(Edge),
}

struct AttachFirst {
    cursor: Cursor,
    last: Option<Candidate>,
    unique: u64,
    spill: Spill,
}

impl Drain<Candidate, HalfPair> for AttachFirst {
    fn item(&mut self, c: Candidate, emit: &mut dyn FnMut(HalfPair)) -> Result<(), SpillError> {
        if self.last == Some(c) {
            return Ok(()); // found in several buckets: verified once
        }
        self.last = Some(c);
        self.unique += 1;
        let first = self.cursor.find(c.a)?.clone();
        emit(HalfPair { b: c.b, first });
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(HalfPair)) -> Result<(), SpillError> {
        self.spill.stats.borrow_mut().unique_candidates += self.unique;
        Ok(())
    }
}

struct VerifySecond {
    cursor: Cursor,
    verifier: Verifier,
    store: Rc<RefCell<DocStore>>,
    spill: Spill,
    compared: u64,
    verified: u64,
}

impl Drain<Keyed<(DocId, DocId), HalfPair>, Near> for VerifySecond {
    fn item(
        &mut self,
        half: Keyed<(DocId, DocId), HalfPair>,
        emit: &mut dyn FnMut(Near),
    ) -> Result<(), SpillError> {
        let first = half.value.first;
        let second = self.cursor.find(half.value.b)?;
        let verdict = self.verifier.verify(first.side(), second.side());
        self.compared += 1;
        if verdict.is_duplicate {
            self.verified += 1;
            let (a, b) = (first.node, second.node.clone());
            emit(Near::Pair(near_row(&a, &b, &verdict)));
            emit(Near::Edge(Edge { a, b }));
        }
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(Near)) -> Result<(), SpillError> {
        let mut stats = self.spill.stats.borrow_mut();
        stats.compared_pairs += self.compared;
        stats.verified_pairs += self.verified;
        // Unless later stages read them, nothing reads the signatures any more (open
        // readers keep their file).
        let mut store = self.store.borrow_mut();
        if !store.signatures_read_later {
            store.signatures = None;
        }
        Ok(())
    }
}

/// Verifies candidates against the document store.
pub trait VerifyCandidates<'s, T: Timestamp> {
    /// Emits the verified pairs among the candidates, each pair once.
    fn verify_candidates(
        self,
        store: Rc<RefCell<DocStore>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Near>;
}

impl<'s, T: Timestamp> VerifyCandidates<'s, T> for StreamVec<'s, T, Candidate> {
    fn verify_candidates(
        self,
        store: Rc<RefCell<DocStore>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Near> {
        let by_first = Exchange::new(|c: &Candidate| route_doc(c.a));
        let (first_store, first_spill) = (store.clone(), spill.clone());
        let halves = collect_sorted(self, by_first, "AttachFirst", spill.clone(), move || {
            Ok(AttachFirst {
                cursor: Cursor::open(&first_store)?,
                last: None,
                unique: 0,
                spill: first_spill.clone(),
            })
        });
        let by_second = Exchange::new(|h: &Keyed<(DocId, DocId), HalfPair>| route_doc(h.key.0));
        let keyed = halves.map(|h| Keyed { key: (h.b, h.first.node.doc), value: h });
        let second_spill = spill.clone();
        collect_sorted(keyed, by_second, "VerifyPairs", spill, move || {
            let verifier = store.borrow().verifier.clone().expect("set before any bucket record");
            Ok(VerifySecond {
                cursor: Cursor::open(&store)?,
                verifier,
                store: store.clone(),
                spill: second_spill.clone(),
                compared: 0,
                verified: 0,
            })
        })
    }
}

/// The `pairs/` row of a verified pair, ordered by id.
fn near_row(
    a: &crate::records::NodeInfo,
    b: &crate::records::NodeInfo,
    verdict: &Verdict,
) -> PairRow {
    let (x, y) = if a.id <= b.id { (a, b) } else { (b, a) };
    PairRow {
        id_a: x.id.clone(),
        id_b: y.id.clone(),
        doc_a: x.doc,
        doc_b: y.doc,
        similarity: verdict.similarity,
        kind: PairKind::Near,
        measure: Some(verdict.measure),
        containment: verdict.containment,
        hamming: verdict.hamming,
        matching_bands: verdict.matching_bands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{self, drain, signed, store};
    use crate::spec::JobSpec;
    use neardup_core::Measure;

    const TEXT: &str = "a river runs through the old town and past the mill where the baker \
                        sells bread every morning before the market opens on the square";

    fn candidate(a: u64, b: u64) -> Candidate {
        Candidate { a: DocId::new(0, a), b: DocId::new(0, b) }
    }

    #[test]
    fn candidates_found_in_several_buckets_are_verified_once() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs = [signed(&job, 1, TEXT), signed(&job, 2, TEXT), signed(&job, 3, TEXT)];
        let store = store(dir.path(), &job, &docs);
        let spill = testing::spill(dir.path(), 0);
        let mut attach =
            AttachFirst { cursor: Cursor::open(&store).unwrap(), last: None, unique: 0, spill };
        let halves = drain(
            &mut attach,
            vec![candidate(1, 2), candidate(1, 3), candidate(1, 2), candidate(2, 3)],
        );
        let got: Vec<(u64, u64)> =
            halves.iter().map(|h| (h.first.node.doc.record(), h.b.record())).collect();
        assert_eq!(got, [(1, 2), (1, 3), (2, 3)]);
        assert_eq!(halves[0].first.node.id, "d1");
        assert_eq!(attach.spill.stats.borrow().unique_candidates, 3);
    }

    #[test]
    fn similar_pairs_become_pair_rows_and_edges_and_the_rest_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let edited = TEXT.replace("bread", "cakes");
        let other = "nothing in this sentence is shared with the other documents at all, \
                     whatever the seed and whatever the shingles";
        let docs = [signed(&job, 1, TEXT), signed(&job, 2, &edited), signed(&job, 3, other)];
        let store = store(dir.path(), &job, &docs);
        let spill = testing::spill(dir.path(), 0);
        let mut attach = AttachFirst {
            cursor: Cursor::open(&store).unwrap(),
            last: None,
            unique: 0,
            spill: spill.clone(),
        };
        let halves = drain(&mut attach, vec![candidate(1, 2), candidate(1, 3)]);
        let mut verify = VerifySecond {
            cursor: Cursor::open(&store).unwrap(),
            verifier: store.borrow().verifier.clone().unwrap(),
            store: store.clone(),
            spill: spill.clone(),
            compared: 0,
            verified: 0,
        };
        let keyed =
            halves.into_iter().map(|h| Keyed { key: (h.b, h.first.node.doc), value: h }).collect();
        let near = drain(&mut verify, keyed);
        assert_eq!(near.len(), 2);
        let Near::Pair(row) = &near[0] else { panic!("a pair row first: {near:?}") };
        assert_eq!((row.id_a.as_str(), row.id_b.as_str(), row.kind), ("d1", "d2", PairKind::Near));
        assert!(row.similarity >= job.spec.minhash.threshold && row.similarity < 1.0, "{row:?}");
        assert!(row.matching_bands.is_some() && row.hamming.is_none());
        assert_eq!((row.measure, row.containment), (Some(Measure::Jaccard), None));
        assert!(matches!(&near[1], Near::Edge(e) if e.a.id == "d1" && e.b.id == "d2"));
        let stats = spill.stats.borrow();
        assert_eq!((stats.compared_pairs, stats.verified_pairs), (2, 1));
        // Nothing reads the signatures after verification in a run without an index.
        assert!(store.borrow().signatures.is_none());
    }
}
