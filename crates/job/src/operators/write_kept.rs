//! Writes the deduplicated dataset: every kept record, copied from its input file.
//!
//! Partitioning: kept `DocId`s exchanged on their file index, so they reach the worker
//! that reads that file. Writes: once all kept ids have arrived, one copy per file of
//! this worker (see `neardup_io::write_kept`). Holds: the record numbers of the kept
//! records of this worker's files, 8 bytes each.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::DocId;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::config::JobConfig;
use crate::stats::WorkerStats;

/// Copies kept records out of the input files.
pub trait WriteKept<'s, T: Timestamp> {
    /// Writes the kept records of the files of worker `worker` of `peers` (the files it
    /// read) into `dir`; emits one marker when done. Errors go to `error`.
    fn write_kept(
        self,
        worker: usize,
        peers: usize,
        job: Arc<JobConfig>,
        dir: PathBuf,
        stats: Rc<RefCell<WorkerStats>>,
        error: Rc<RefCell<Option<neardup_io::Error>>>,
    ) -> StreamVec<'s, T, ()>;
}

impl<'s, T: Timestamp> WriteKept<'s, T> for StreamVec<'s, T, DocId> {
    fn write_kept(
        self,
        worker: usize,
        peers: usize,
        job: Arc<JobConfig>,
        dir: PathBuf,
        stats: Rc<RefCell<WorkerStats>>,
        error: Rc<RefCell<Option<neardup_io::Error>>>,
    ) -> StreamVec<'s, T, ()> {
        // The same rule as reading: file i belongs to worker i modulo the workers.
        let by_file = Exchange::new(|doc: &DocId| u64::from(doc.file_index()));
        self.unary_frontier(by_file, "WriteKept", move |capability, _info| {
            let mut capability = Some(capability);
            let mut kept: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|_cap, batch| {
                    for doc in batch.drain(..) {
                        kept.entry(doc.file_index()).or_default().push(doc.record());
                    }
                });
                if !frontier.is_empty() {
                    return;
                }
                let Some(cap) = capability.take() else { return };
                for file in job.inputs.iter().filter(|f| f.index as usize % peers == worker) {
                    let mut records = kept.remove(&file.index).unwrap_or_default();
                    records.sort_unstable();
                    match neardup_io::write_kept(
                        file,
                        &records,
                        &dir,
                        job.spec.input.record_limit(),
                    ) {
                        Ok(written) => stats.borrow_mut().kept_written += written,
                        Err(e) => {
                            error.borrow_mut().get_or_insert(e);
                            break;
                        }
                    }
                }
                output.session(&cap).give(());
            }
        })
        .container::<Vec<_>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{self, run_operator};
    use crate::spec::JobSpec;

    #[test]
    fn the_kept_records_of_this_workers_files_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            "{\"id\":\"1\",\"text\":\"one\"}",
            "{\"id\":\"2\",\"text\":\"two\"}",
            "{\"id\":\"3\",\"text\":\"three\"}",
        ];
        std::fs::write(dir.path().join("a.jsonl"), lines.join("\n") + "\n").unwrap();
        let job = Arc::new(testing::job(dir.path(), JobSpec::default()));
        let kept_dir = dir.path().join("kept");
        let stats = Rc::new(RefCell::new(WorkerStats::default()));
        let error = Rc::new(RefCell::new(None));
        let (file, into, counted, failed) =
            (job.inputs[0].clone(), kept_dir.clone(), stats.clone(), error.clone());
        let markers = run_operator(vec![DocId::new(0, 3), DocId::new(0, 1)], move |kept| {
            kept.write_kept(0, 1, job, into, counted, failed)
        });
        assert_eq!(markers.len(), 1);
        assert!(error.borrow().is_none());
        let written =
            std::fs::read_to_string(kept_dir.join(neardup_io::kept_file_name(&file))).unwrap();
        assert_eq!(written, format!("{}\n{}\n", lines[0], lines[2]));
        assert_eq!(stats.borrow().kept_written, 2);
    }
}
