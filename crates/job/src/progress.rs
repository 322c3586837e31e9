//! Live counters of a running job, for progress displays.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::stage::Stage;

/// Counters this process's workers update as the job runs (cheap atomics, updated once per
/// batch of records, never per record).
#[derive(Debug, Default)]
pub struct Progress {
    records: AtomicU64,
    bytes: Arc<AtomicU64>,
    stage: AtomicUsize,
}

impl Progress {
    /// Records read so far by this process.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// Bytes of input this process has read from disk (Parquet files count when done).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The furthest stage any worker of this process has reached.
    pub fn stage(&self) -> Stage {
        Stage::at(self.stage.load(Ordering::Relaxed))
    }

    pub(crate) fn add_records(&self, n: u64) {
        self.records.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// The byte counter, for readers to count into as they read.
    pub(crate) fn byte_counter(&self) -> Arc<AtomicU64> {
        self.bytes.clone()
    }

    pub(crate) fn reach(&self, stage: Stage) {
        self.stage.fetch_max(stage.position(), Ordering::Relaxed);
    }
}
