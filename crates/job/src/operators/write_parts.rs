//! Writes this worker's `pairs/` part file.
//!
//! Partitioning: none (each worker writes the pairs it found). Writes: once the input is
//! complete, rows in `(id_a, id_b)` order, a batch at a time, to a hidden file renamed into
//! place. Holds: at most its spill limit of rows (about 100 bytes each) and one batch.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_io::{PairKind, PairRow, PairsWriter};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Spill, collect_sorted};
use crate::records::PairOut;
use crate::spill::SpillError;
use crate::stats::WorkerStats;

/// Rows handed to the Parquet writer at once.
const ROWS_PER_BATCH: usize = 65_536;

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

impl PartSink {
    /// Records a write error (the first one wins) and stops this process's writing.
    pub fn fail(&self, error: neardup_io::Error) {
        self.error.borrow_mut().get_or_insert(error);
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Whether nothing more should be written.
    pub fn stopped(&self) -> bool {
        self.error.borrow().is_some() || self.abort.load(Ordering::Relaxed)
    }
}

/// Writes `pairs/` rows.
pub trait WritePairs<'s, T: Timestamp> {
    /// Writes every row of this worker, sorted by `(id_a, id_b)`; emits one marker when the
    /// part is in place.
    fn write_pairs(self, sink: PartSink, spill: Spill) -> StreamVec<'s, T, ()>;
}

struct Pairs {
    sink: PartSink,
    rows: Vec<PairRow>,
    writer: Option<PairsWriter>,
}

impl Pairs {
    fn write_rows(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        if self.sink.stopped() {
            return;
        }
        if self.writer.is_none() {
            let dir = self.sink.output.join("pairs");
            match PairsWriter::create(&dir, self.sink.part, &(self.sink.metadata)()) {
                Ok(w) => self.writer = Some(w),
                Err(e) => return self.sink.fail(e),
            }
        }
        if let Err(e) = self.writer.as_mut().expect("created above").write(&rows) {
            self.sink.fail(e);
        }
    }
}

impl Drain<PairOut, ()> for Pairs {
    fn item(&mut self, row: PairOut, _emit: &mut dyn FnMut(())) -> Result<(), SpillError> {
        let row = row.0;
        match row.kind {
            PairKind::Exact => self.sink.stats.borrow_mut().exact_pairs += 1,
            PairKind::Near => {
                let mut stats = self.sink.stats.borrow_mut();
                stats.near_pairs += 1;
                stats.count_similarity(row.similarity);
            }
        }
        self.rows.push(row);
        if self.rows.len() >= ROWS_PER_BATCH {
            self.write_rows();
        }
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(())) -> Result<(), SpillError> {
        self.write_rows();
        if !self.sink.stopped() {
            let writer = match self.writer.take() {
                Some(w) => Ok(w),
                None => PairsWriter::create(
                    &self.sink.output.join("pairs"),
                    self.sink.part,
                    &(self.sink.metadata)(),
                ),
            };
            if let Err(e) = writer.and_then(PairsWriter::finish) {
                self.sink.fail(e);
            }
        }
        emit(());
        Ok(())
    }
}

impl<'s, T: Timestamp> WritePairs<'s, T> for StreamVec<'s, T, PairRow> {
    fn write_pairs(self, sink: PartSink, spill: Spill) -> StreamVec<'s, T, ()> {
        collect_sorted(self.map(PairOut), Pipeline, "WritePairs", spill, move || {
            Ok(Pairs { sink: sink.clone(), rows: Vec::new(), writer: None })
        })
    }
}
