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
