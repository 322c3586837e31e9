//! Writes the deduplicated dataset: every kept record, copied from its input file.
//!
//! Partitioning: kept `DocId`s exchanged on their file index, so they reach the worker
//! that reads that file. Writes: once all kept ids have arrived, one copy per file of
//! this worker (see `neardup_io::write_kept`). Holds: the record numbers of the kept
//! records of this worker's files, 8 bytes each.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use neardup_io::{InputDoc, KeptRecords};
use neardup_text::{Boilerplate, LineScratch};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::error::error_chain;
use crate::input::pass_worker::PassWorker;
use crate::input::sign::page_text;
use crate::operators::env::OperatorEnv;
use crate::operators::failure::StageFailure;
use crate::operators::sink::PartSink;
use crate::operators::write_documents::{Cuts, KeptDoc};
use crate::settings::config::JobConfig;

/// Copies kept records out of the input files.
pub trait WriteKept<'s, T: Timestamp> {
    /// Writes the kept records of the files worker `me` read into `dir`, reading them as
    /// it did; emits one marker when done. Counts and errors go to `sink`'s statistics and
    /// error cell, as a part's would.
    fn write_kept(
        self,
        me: &PassWorker,
        job: Arc<JobConfig>,
        dir: PathBuf,
        env: &OperatorEnv,
        boilerplate: Option<Arc<Boilerplate>>,
    ) -> StreamVec<'s, T, ()>;
}

impl<'s, T: Timestamp> WriteKept<'s, T> for StreamVec<'s, T, KeptDoc> {
    fn write_kept(
        self,
        me: &PassWorker,
        job: Arc<JobConfig>,
        dir: PathBuf,
        env: &OperatorEnv,
        boilerplate: Option<Arc<Boilerplate>>,
    ) -> StreamVec<'s, T, ()> {
        let sink = env.sink.clone();
        let (worker, peers) = (me.index, me.peers);
        let PartSink { stats, error, .. } = sink;
        let max_record_bytes = me.plan.options.max_record_bytes;
        // The same rule as reading: file i belongs to worker i modulo the workers.
        let by_file = Exchange::new(|kept: &KeptDoc| u64::from(kept.0.file_index()));
        // Ranges come only for records that are not web pages (`WriteDocuments`).
        let text_field = job.spec.input.text_field.clone();
        self.unary_frontier(by_file, "WriteKept", move |capability, _info| {
            let mut capability = Some(capability);
            let mut kept: BTreeMap<u32, Vec<(u64, Cuts)>> = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|_cap, batch| {
                    for (doc, cuts) in batch.drain(..) {
                        kept.entry(doc.file_index()).or_default().push((doc.record(), cuts));
                    }
                });
                if !frontier.is_empty() {
                    return;
                }
                let Some(cap) = capability.take() else { return };
                // A web page's text as the run compared it: what it learned left out.
                let (mut lines, mut content) = (LineScratch::default(), String::new());
                let mut main_text = |doc: &InputDoc| {
                    page_text(boilerplate.as_deref(), doc, &mut lines, &mut content).0.to_string()
                };
                for file in job.inputs.iter().filter(|f| f.index as usize % peers == worker) {
                    let mut records = kept.remove(&file.index).unwrap_or_default();
                    records.sort_unstable();
                    let (numbers, cuts): (Vec<u64>, Vec<Cuts>) = records.into_iter().unzip();
                    let records =
                        KeptRecords { records: &numbers, cuts: &cuts, text_field: &text_field };
                    match neardup_io::write_kept(
                        file,
                        &records,
                        &dir,
                        max_record_bytes,
                        &mut main_text,
                    ) {
                        Ok(written) => stats.borrow_mut().decisions.kept_written += written,
                        Err(e) => {
                            let failure = StageFailure::Output(error_chain(&e));
                            error.borrow_mut().get_or_insert(failure);
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

    use neardup_core::DocId;

    use super::*;
    use crate::input::source::ReadPlan;
    use crate::operators::testing::{self, run_operator};
    use crate::settings::spec::JobSpec;

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
        let env = testing::env(&dir.path().join("out"), 0);
        let (stats, error) = (env.stats.clone(), env.sink.error.clone());
        let (file, into) = (job.inputs[0].clone(), kept_dir.clone());
        let plan = ReadPlan::whole_files(0, 1, job.spec.input.read_options());
        let me = PassWorker { index: 0, peers: 1, slot: 0, first_of_process: true, plan };
        let kept = vec![(DocId::new(0, 3), Vec::new()), (DocId::new(0, 1), Vec::new())];
        let markers = run_operator(kept, move |kept| kept.write_kept(&me, job, into, &env, None));
        assert_eq!(markers.len(), 1);
        assert!(error.borrow().is_none());
        let written =
            std::fs::read_to_string(kept_dir.join(neardup_io::kept_file_name(&file))).unwrap();
        assert_eq!(written, format!("{}\n{}\n", lines[0], lines[2]));
        assert_eq!(stats.borrow().decisions.kept_written, 2);
    }
}
