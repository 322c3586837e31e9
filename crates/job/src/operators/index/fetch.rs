//! Fetching the indexed documents of the candidates, a docs part at a time
//! ([`FetchIndexed`]).

use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::index::{IndexRef, IndexedDoc, ProbeStats, fetch_docs};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::PartSink;
use crate::settings::config::IndexPlan;
use crate::storage::spill::SpillError;

use super::records::{IndexCandidate, IndexedSide};

struct FetchDrain {
    plan: Arc<IndexPlan>,
    group: Option<(u32, u32)>,
    candidates: Vec<IndexCandidate>,
    sink: PartSink,
}

impl FetchDrain {
    fn flush(&mut self, emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>)) {
        let Some((segment, part)) = self.group else { return };
        let candidates = std::mem::take(&mut self.candidates);
        if candidates.is_empty() || self.sink.stopped() {
            return;
        }
        let mut wanted: Vec<IndexRef> = candidates.iter().map(|c| c.old).collect();
        wanted.dedup();
        let Some(dir) = self.plan.segment_dir(segment) else {
            unreachable!("candidates come from committed segments")
        };
        let mut probe = ProbeStats::default();
        let docs = match fetch_docs(&dir, part, &wanted, &mut probe) {
            Ok(docs) => docs,
            Err(e) => return self.sink.fail(e),
        };
        let mut stats = self.sink.stats.borrow_mut();
        stats.index.add_probe(probe);
        stats.index.candidates += candidates.len() as u64;
        drop(stats);
        for c in candidates {
            // A document missing from its part was taken out of the index: no candidate.
            if let Ok(i) = docs.binary_search_by_key(&c.old, IndexedDoc::at) {
                emit(Keyed { key: (c.new, c.old), value: IndexedSide(docs[i].clone()) });
            }
        }
    }
}

impl Drain<IndexCandidate, Keyed<(DocId, IndexRef), IndexedSide>> for FetchDrain {
    fn item(
        &mut self,
        c: IndexCandidate,
        emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>),
    ) -> Result<(), SpillError> {
        if self.candidates.last() == Some(&c) {
            return Ok(()); // found through several keys
        }
        if self.group != Some((c.segment, c.part)) {
            self.flush(emit);
            self.group = Some((c.segment, c.part));
        }
        self.candidates.push(c);
        Ok(())
    }

    fn end(
        &mut self,
        emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>),
    ) -> Result<(), SpillError> {
        self.flush(emit);
        Ok(())
    }
}

/// Reads the indexed side of every candidate.
pub trait FetchIndexed<'s, T: Timestamp> {
    /// The indexed documents of the candidates, keyed by the new document.
    fn fetch_indexed(
        self,
        plan: Arc<IndexPlan>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>>;
}

impl<'s, T: Timestamp> FetchIndexed<'s, T> for StreamVec<'s, T, IndexCandidate> {
    fn fetch_indexed(
        self,
        plan: Arc<IndexPlan>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>> {
        let (sink, spill) = (env.sink.clone(), env.spill.clone());
        let by_part = Exchange::new(|c: &IndexCandidate| {
            neardup_core::hash::route((u64::from(c.segment) << 32) | u64::from(c.part))
        });
        collect_sorted(self, by_part, "FetchIndexed", spill, move || {
            Ok(FetchDrain {
                plan: plan.clone(),
                group: None,
                candidates: Vec::new(),
                sink: sink.clone(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::operators::testing::{self, drain};

    fn indexed(doc: u64) -> IndexedDoc {
        IndexedDoc {
            generation: 1,
            doc,
            id: format!("old{doc}"),
            source: "old.jsonl".into(),
            kept: IndexRef { generation: 1, doc },
            kept_id: format!("old{doc}"),
            kept_content: u128::from(doc),
            content: u128::from(doc),
            signature: vec![1, 2, 3, 4],
            features: 9,
        }
    }

    fn candidate(old: u64, new: u64) -> IndexCandidate {
        IndexCandidate {
            segment: 1,
            part: 0,
            old: IndexRef { generation: 1, doc: old },
            new: DocId::new(0, new),
        }
    }

    #[test]
    fn each_candidate_gets_its_indexed_document_once() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job_with_index(dir.path(), &[indexed(10), indexed(11)], &[]);
        let sink = testing::sink(dir.path(), Rc::default());
        let mut fetch = FetchDrain {
            plan: job.index.clone().unwrap(),
            group: None,
            candidates: Vec::new(),
            sink: sink.clone(),
        };
        let sides = drain(
            &mut fetch,
            vec![
                candidate(11, 2),
                candidate(10, 1),
                candidate(10, 1), // found through two keys
                candidate(99, 3), // taken out of the index since
            ],
        );
        let got: Vec<(u64, u64, &str)> =
            sides.iter().map(|s| (s.key.0.record(), s.key.1.doc, s.value.0.id.as_str())).collect();
        assert_eq!(got, [(1, 10, "old10"), (2, 11, "old11")]);
        assert_eq!(sides[0].value.0, indexed(10));
        let stats = sink.stats.borrow();
        assert_eq!(stats.index.candidates, 3);
        assert!(sink.error.borrow().is_none());
    }
}
