//! Live counters of a running job, for progress displays.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::reporting::stage::Stage;

/// Counters this process's workers update as the job runs (cheap atomics, updated once per
/// batch of records, never per record).
#[derive(Debug, Default)]
pub struct Progress {
    records: AtomicU64,
    bytes: Arc<AtomicU64>,
    stage: AtomicUsize,
    /// What the process waits for while it does nothing else.
    waiting: Mutex<Option<&'static str>>,
    /// Workers of this process reading their share of the main pass.
    reading: AtomicUsize,
    /// Whether a worker of this process started reading its share.
    started: AtomicBool,
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

    /// What this process waits for while it does nothing else: the other processes of a
    /// distributed run, to connect or to read their shares once it has read its own.
    pub fn waiting_for(&self) -> Option<&'static str> {
        if let Some(what) = *self.waiting.lock().expect("not poisoned") {
            return Some(what);
        }
        let share_read = self.started.load(Ordering::Relaxed)
            && self.reading.load(Ordering::Relaxed) == 0
            && self.stage() == Stage::ReadAndSign;
        share_read.then_some("the other processes to read their shares")
    }

    /// Notes that the process waits for `what` (until [`Progress::done_waiting`]).
    pub(crate) fn wait_for(&self, what: &'static str) {
        *self.waiting.lock().expect("not poisoned") = Some(what);
    }

    pub(crate) fn done_waiting(&self) {
        *self.waiting.lock().expect("not poisoned") = None;
    }

    /// Notes that a worker starts reading its share of the main pass.
    pub(crate) fn start_share(&self) {
        self.started.store(true, Ordering::Relaxed);
        self.reading.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes that a worker read its share of the main pass.
    pub(crate) fn end_share(&self) {
        self.reading.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn reach(&self, stage: Stage) {
        self.stage.fetch_max(stage.position(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_says_what_it_waits_for() {
        let progress = Progress::default();
        assert_eq!(progress.waiting_for(), None, "nothing before reading starts");
        progress.wait_for("the other processes to connect");
        assert_eq!(progress.waiting_for(), Some("the other processes to connect"));
        progress.done_waiting();
        progress.start_share();
        progress.start_share();
        progress.end_share();
        assert_eq!(progress.waiting_for(), None, "a worker still reads");
        progress.end_share();
        assert_eq!(progress.waiting_for(), Some("the other processes to read their shares"));
        progress.reach(Stage::IdsAndExact);
        assert_eq!(progress.waiting_for(), None, "the run went on");
    }
}
