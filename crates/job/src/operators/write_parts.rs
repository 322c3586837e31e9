//! Writes this worker's `pairs/` part file.
//!
//! Partitioning: none (each worker writes the pairs it found). Writes: once the input is
//! complete, rows in `(id_a, id_b)` order, a batch at a time, to a hidden file renamed into
//! place. Holds: at most its spill limit of rows (about 100 bytes each) and one batch.

use neardup_io::{PairKind, PairRow, PairsWriter};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::{Batched, PartSink};
use crate::storage::records::PairOut;
use crate::storage::spill::SpillError;

/// Writes `pairs/` rows.
pub trait WritePairs<'s, T: Timestamp> {
    /// Writes every row of this worker, sorted by `(id_a, id_b)`; emits one marker when the
    /// part is in place.
    fn write_pairs(self, env: &OperatorEnv) -> StreamVec<'s, T, ()>;
}

struct Pairs {
    sink: PartSink,
    part: Batched<PairsWriter>,
}

impl Pairs {
    fn new(sink: PartSink) -> Self {
        let create = Box::new(|sink: &PartSink| {
            PairsWriter::create(&sink.output.join("pairs"), sink.part, &(sink.metadata)())
        });
        Pairs { sink, part: Batched::new(create) }
    }
}

impl Drain<PairOut, ()> for Pairs {
    fn item(&mut self, row: PairOut, _emit: &mut dyn FnMut(())) -> Result<(), SpillError> {
        let row = row.0;
        match row.kind {
            PairKind::Exact => self.sink.stats.borrow_mut().matching.exact_pairs += 1,
            PairKind::Near => {
                let mut stats = self.sink.stats.borrow_mut();
                stats.matching.near_pairs += 1;
                stats.matching.count_similarity(row.similarity);
                stats.matching.note_least_similar(&row);
            }
        }
        self.part.add(row, &self.sink);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(())) -> Result<(), SpillError> {
        // Every worker's part is there, even empty.
        self.part.finish(&self.sink, true);
        emit(());
        Ok(())
    }
}

impl<'s, T: Timestamp> WritePairs<'s, T> for StreamVec<'s, T, PairRow> {
    fn write_pairs(self, env: &OperatorEnv) -> StreamVec<'s, T, ()> {
        let (sink, spill) = (env.sink.clone(), env.spill.clone());
        collect_sorted(self.map(PairOut), Pipeline, "WritePairs", spill, move || {
            Ok(Pairs::new(sink.clone()))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;
    use std::sync::atomic::Ordering;

    use neardup_core::DocId;

    use super::*;
    use crate::operators::testing::{drain, sink};

    fn row(a: &str, b: &str, kind: PairKind, similarity: f64) -> PairOut {
        PairOut(PairRow {
            id_a: a.into(),
            id_b: b.into(),
            doc_a: DocId::new(0, 1),
            doc_b: DocId::new(0, 2),
            similarity,
            kind,
            measure: None,
            containment: None,
            hamming: None,
            matching_bands: None,
        })
    }

    #[test]
    fn rows_are_written_in_id_order_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let sink = sink(dir.path(), Rc::default());
        let mut pairs = Pairs::new(sink.clone());
        let markers = drain(
            &mut pairs,
            vec![
                row("b", "c", PairKind::Near, 0.9),
                row("a", "c", PairKind::Exact, 1.0),
                row("a", "b", PairKind::Near, 0.8),
            ],
        );
        assert_eq!(markers.len(), 1);
        let written = neardup_io::read_pairs(&dir.path().join("pairs")).unwrap();
        let ids: Vec<(&str, &str)> =
            written.iter().map(|r| (r.id_a.as_str(), r.id_b.as_str())).collect();
        assert_eq!(ids, [("a", "b"), ("a", "c"), ("b", "c")]);
        let stats = sink.stats.borrow();
        assert_eq!((stats.matching.exact_pairs, stats.matching.near_pairs), (1, 2));
        assert!(sink.error.borrow().is_none());
    }

    #[test]
    fn a_worker_without_pairs_writes_an_empty_part() {
        let dir = tempfile::tempdir().unwrap();
        let sink = sink(dir.path(), Rc::default());
        let markers = drain(&mut Pairs::new(sink), Vec::new());
        assert_eq!(markers.len(), 1);
        let parts = std::fs::read_dir(dir.path().join("pairs")).unwrap().count();
        assert_eq!(parts, 1);
        assert!(neardup_io::read_pairs(&dir.path().join("pairs")).unwrap().is_empty());
    }

    #[test]
    fn a_stopped_sink_writes_nothing_and_still_says_it_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let sink = sink(dir.path(), Rc::default());
        sink.abort.store(true, Ordering::Relaxed);
        let mut pairs = Pairs::new(sink);
        let markers = drain(&mut pairs, vec![row("a", "b", PairKind::Near, 0.9)]);
        assert_eq!(markers.len(), 1);
        assert!(!dir.path().join("pairs").exists());
    }
}
