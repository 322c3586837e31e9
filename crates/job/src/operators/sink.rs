//! Where and how a worker writes its parts of the outputs ([`PartSink`]), shared by the
//! stages that write.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::operators::failure::{StageFailure, StageFailures};
use crate::reporting::stats::WorkerStats;

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
    /// The worker's first stage failure (shared with its spill).
    pub error: StageFailures,
    /// Set when the job has failed elsewhere: nothing is written.
    pub abort: Arc<AtomicBool>,
}

impl PartSink {
    /// Records a write error (the first one wins) and stops this process's writing.
    pub fn fail(&self, error: neardup_io::Error) {
        let failure = || StageFailure::Output(crate::error::error_chain(&error));
        self.error.borrow_mut().get_or_insert_with(failure);
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Whether nothing more should be written.
    pub fn stopped(&self) -> bool {
        self.error.borrow().is_some() || self.abort.load(Ordering::Relaxed)
    }
}

/// Rows per Parquet batch of a [`Batched`] part.
pub const ROWS_PER_BATCH: usize = 65_536;

/// A part file that takes rows a batch at a time ([`Batched`]).
pub trait PartWrite: Sized {
    /// One row.
    type Row;
    /// Appends rows.
    ///
    /// # Errors
    /// What writing the part reports.
    fn write(&mut self, rows: &[Self::Row]) -> neardup_io::Result<()>;
    /// Completes the part; returns the rows written.
    ///
    /// # Errors
    /// What completing the part reports.
    fn finish(self) -> neardup_io::Result<u64>;
}

/// [`PartWrite`] for an output's writer of rows, by its own `write` and `finish`.
macro_rules! part_write {
    ($($writer:ty => $row:ty),* $(,)?) => {$(
        impl PartWrite for $writer {
            type Row = $row;
            fn write(&mut self, rows: &[Self::Row]) -> neardup_io::Result<()> {
                <$writer>::write(self, rows)
            }
            fn finish(self) -> neardup_io::Result<u64> {
                <$writer>::finish(self)
            }
        }
    )*};
}

part_write! {
    neardup_io::DocumentsWriter => neardup_io::DocumentRow,
    neardup_io::PairsWriter => neardup_io::PairRow,
    neardup_io::ParagraphsWriter => neardup_io::ParagraphRow,
    neardup_io::index::DocPartWriter => neardup_io::index::IndexedDoc,
}

impl<R: neardup_io::index::KeyTable> PartWrite for neardup_io::index::KeyPartWriter<R> {
    type Row = R;
    fn write(&mut self, rows: &[R]) -> neardup_io::Result<()> {
        neardup_io::index::KeyPartWriter::write(self, rows)
    }
    fn finish(self) -> neardup_io::Result<u64> {
        neardup_io::index::KeyPartWriter::finish(self)
    }
}

/// Creates a [`Batched`] part's file when its first batch is written.
pub type CreatePart<W> = Box<dyn Fn(&PartSink) -> neardup_io::Result<W>>;

/// One part file written through the sink a batch of [`ROWS_PER_BATCH`] rows at a time,
/// made at its first batch; nothing is written once the sink has stopped, and a failure
/// stops it.
pub struct Batched<W: PartWrite> {
    rows: Vec<W::Row>,
    writer: Option<W>,
    create: CreatePart<W>,
}

impl<W: PartWrite> Batched<W> {
    /// A part that `create` makes.
    pub fn new(create: CreatePart<W>) -> Self {
        Batched { rows: Vec::new(), writer: None, create }
    }

    /// Adds a row, writing the batch once it is full.
    pub fn add(&mut self, row: W::Row, sink: &PartSink) {
        self.rows.push(row);
        if self.rows.len() >= ROWS_PER_BATCH {
            self.write(sink);
        }
    }

    /// Writes the rows gathered (making the file for the first).
    pub fn write(&mut self, sink: &PartSink) {
        let rows = std::mem::take(&mut self.rows);
        if rows.is_empty() || sink.stopped() {
            return;
        }
        if self.writer.is_none() {
            match (self.create)(sink) {
                Ok(w) => self.writer = Some(w),
                Err(e) => return sink.fail(e),
            }
        }
        if let Err(e) = self.writer.as_mut().expect("created above").write(&rows) {
            sink.fail(e);
        }
    }

    /// Writes what is left and completes the part; `always`: makes it even with no rows,
    /// so that every worker's part is there. Returns the rows written.
    pub fn finish(&mut self, sink: &PartSink, always: bool) -> u64 {
        self.write(sink);
        if sink.stopped() {
            return 0;
        }
        let writer = match self.writer.take() {
            Some(w) => w,
            None if always => match (self.create)(sink) {
                Ok(w) => w,
                Err(e) => {
                    sink.fail(e);
                    return 0;
                }
            },
            None => return 0,
        };
        writer.finish().unwrap_or_else(|e| {
            sink.fail(e);
            0
        })
    }
}
