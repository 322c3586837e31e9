//! Writes this worker's `pairs/` and `documents/` part files.
//!
//! Partitioning: none (each worker writes what it holds). Writes: once the input is
//! complete, rows sorted, to a hidden file renamed into place. Holds: this worker's rows.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_io::{DocumentRow, DocumentsWriter, PairKind, PairRow, PairsWriter};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::stats::WorkerStats;

/// Where and how a worker writes its parts.
#[derive(Clone)]
pub struct PartSink {
    /// The output folder (`pairs/` and `documents/` go below it).
    pub output: PathBuf,
    /// This worker's part number (its global index).
    pub part: usize,
    /// Key-value metadata for every file, computed when the file is written.
    pub metadata: Rc<dyn Fn() -> Vec<(String, String)>>,
    /// This worker's statistics.
    pub stats: Rc<RefCell<WorkerStats>>,
    /// The first write error of this worker.
    pub error: Rc<RefCell<Option<neardup_io::Error>>>,
    /// Set when the job has failed elsewhere: nothing is written.
    pub abort: Arc<AtomicBool>,
}

/// Writes `pairs/` rows.
pub trait WritePairs<T: Timestamp> {
    /// Writes every row of this worker, sorted by `(id_a, id_b)`.
    fn write_pairs(self, sink: PartSink);
}

impl<T: Timestamp> WritePairs<T> for StreamVec<'_, T, PairRow> {
    fn write_pairs(self, sink: PartSink) {
        let mut rows: Vec<PairRow> = Vec::new();
        let mut written = false;
        self.sink(Pipeline, "WritePairs", move |(input, frontier)| {
            input.for_each(|_cap, batch| rows.append(batch));
            if !frontier.is_empty() || written {
                return;
            }
            written = true;
            if sink.abort.load(Ordering::Relaxed) {
                return;
            }
            rows.sort_by(|x, y| (&x.id_a, &x.id_b).cmp(&(&y.id_a, &y.id_b)));
            {
                let mut stats = sink.stats.borrow_mut();
                for r in &rows {
                    match r.kind {
                        PairKind::Exact => stats.exact_pairs += 1,
                        PairKind::Near => stats.near_pairs += 1,
                    }
                }
            }
            let result =
                PairsWriter::create(&sink.output.join("pairs"), sink.part, &(sink.metadata)())
                    .and_then(|mut w| w.write(&rows).and_then(|()| w.finish()));
            rows = Vec::new();
            if let Err(e) = result {
                sink.error.borrow_mut().get_or_insert(e);
                sink.abort.store(true, Ordering::Relaxed);
            }
        });
    }
}

/// Writes `documents/` rows.
pub trait WriteDocuments<T: Timestamp> {
    /// Writes every row of this worker, sorted by `DocId`, and counts decisions.
    fn write_documents(self, sink: PartSink);
}

impl<T: Timestamp> WriteDocuments<T> for StreamVec<'_, T, DocumentRow> {
    fn write_documents(self, sink: PartSink) {
        let mut rows: Vec<DocumentRow> = Vec::new();
        let mut written = false;
        self.sink(Pipeline, "WriteDocuments", move |(input, frontier)| {
            input.for_each(|_cap, batch| rows.append(batch));
            if !frontier.is_empty() || written {
                return;
            }
            written = true;
            if sink.abort.load(Ordering::Relaxed) {
                return;
            }
            rows.sort_unstable_by_key(|r| r.doc);
            sink.stats.borrow_mut().count_documents(&rows);
            let result = DocumentsWriter::create(
                &sink.output.join("documents"),
                sink.part,
                &(sink.metadata)(),
            )
            .and_then(|mut w| w.write(&rows).and_then(|()| w.finish()));
            rows = Vec::new();
            if let Err(e) = result {
                sink.error.borrow_mut().get_or_insert(e);
                sink.abort.store(true, Ordering::Relaxed);
            }
        });
    }
}
