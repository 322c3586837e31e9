//! Writes this worker's `pairs/` and `documents/` part files.
//!
//! Partitioning: none (each worker writes what it holds). Writes: once the input is
//! complete, rows sorted, to a hidden file renamed into place. Holds: this worker's rows.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_core::DocId;
use neardup_io::{Decision, DocumentRow, DocumentsWriter, PairKind, PairRow, PairsWriter};
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

/// Collects a stream's rows and, once the input is complete, hands them to `write` with a
/// function to emit output; the output is complete when this worker's part is in place.
fn collect_and_write<'s, T: Timestamp, D: 'static, O: 'static>(
    stream: StreamVec<'s, T, D>,
    name: &str,
    mut write: impl FnMut(Vec<D>, &mut dyn FnMut(O)) + 'static,
) -> StreamVec<'s, T, O> {
    stream
        .unary_frontier(Pipeline, name, move |capability, _info| {
            let mut capability = Some(capability);
            let mut rows: Vec<D> = Vec::new();
            move |(input, frontier), output| {
                input.for_each(|_cap, batch| rows.append(batch));
                if !frontier.is_empty() {
                    return;
                }
                if let Some(cap) = capability.take() {
                    let mut session = output.session(&cap);
                    write(std::mem::take(&mut rows), &mut |o| session.give(o));
                }
            }
        })
        .container::<Vec<_>>()
}

/// Writes `pairs/` rows.
pub trait WritePairs<'s, T: Timestamp> {
    /// Writes every row of this worker, sorted by `(id_a, id_b)`; emits one marker when the
    /// part is in place.
    fn write_pairs(self, sink: PartSink) -> StreamVec<'s, T, ()>;
}

impl<'s, T: Timestamp> WritePairs<'s, T> for StreamVec<'s, T, PairRow> {
    fn write_pairs(self, sink: PartSink) -> StreamVec<'s, T, ()> {
        collect_and_write(self, "WritePairs", move |mut rows, emit| {
            emit(());
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
            if let Err(e) = result {
                sink.error.borrow_mut().get_or_insert(e);
                sink.abort.store(true, Ordering::Relaxed);
            }
        })
    }
}

/// Writes `documents/` rows.
pub trait WriteDocuments<'s, T: Timestamp> {
    /// Writes every row of this worker, sorted by `DocId`, and counts decisions; then emits
    /// the kept documents (for the deduplicated dataset).
    fn write_documents(self, sink: PartSink) -> StreamVec<'s, T, DocId>;
}

impl<'s, T: Timestamp> WriteDocuments<'s, T> for StreamVec<'s, T, DocumentRow> {
    fn write_documents(self, sink: PartSink) -> StreamVec<'s, T, DocId> {
        collect_and_write(self, "WriteDocuments", move |mut rows, emit| {
            if sink.abort.load(Ordering::Relaxed) {
                return;
            }
            rows.sort_unstable_by_key(|r| r.doc);
            sink.stats.borrow_mut().count_documents(&rows);
            rows.iter().filter(|r| r.decision == Decision::Keep).for_each(|r| emit(r.doc));
            let result = DocumentsWriter::create(
                &sink.output.join("documents"),
                sink.part,
                &(sink.metadata)(),
            )
            .and_then(|mut w| w.write(&rows).and_then(|()| w.finish()));
            if let Err(e) = result {
                sink.error.borrow_mut().get_or_insert(e);
                sink.abort.store(true, Ordering::Relaxed);
            }
        })
    }
}
