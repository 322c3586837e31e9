//! Reading a worker's share of the input files.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neardup_io::{
    Compression, Format, InputFile, Item, LineRange, ReadOptions, Record, RecordReader,
    count_line_starts,
};
use neardup_text::{LineKey, LineScratch};
use serde::{Deserialize, Serialize};
use timely::dataflow::operators::Inspect;
use timely::dataflow::operators::core::{Input, Probe};
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::Broadcast;
use timely::worker::Worker;

use crate::distributed::processes::Heartbeat;
use crate::error::{JobError, ReadFailure, error_chain};
use crate::reporting::progress::Progress;
use crate::settings::config::JobConfig;
use crate::storage::record_log::RecordLog;
use crate::storage::spill::SpillError;

/// How the workers share the input files: worker `index` of `peers` reads the whole files
/// whose index is `index` modulo `peers`, or, with `lines_before`, its byte range
/// ([`byte_range`]) of every file, all of them plain JSON Lines, whose first line is
/// numbered after `lines_before[file][index]` lines.
#[derive(Clone, Debug)]
pub(crate) struct ReadPlan {
    index: usize,
    peers: usize,
    lines_before: Option<Arc<Vec<Vec<u64>>>>,
    /// How records are read: the job's fields and the run's record size limit.
    pub(crate) options: ReadOptions,
}

/// Worker `index` of `peers`'s byte range of a file of `bytes` bytes: equal slices.
pub(crate) fn byte_range(bytes: u64, index: usize, peers: usize) -> (u64, u64) {
    let at = |w: usize| (u128::from(bytes) * w as u128 / peers as u128) as u64;
    (at(index), at(index + 1))
}

impl ReadPlan {
    /// Worker `index` of `peers` reads whole files: file `i` is worker `i % peers`'s.
    pub(crate) fn whole_files(index: usize, peers: usize, options: ReadOptions) -> ReadPlan {
        ReadPlan { index, peers, lines_before: None, options }
    }

    /// The plan every worker follows; all workers must call this at the same point, as it
    /// may build a dataflow. With fewer files than four per worker, all plain JSON Lines,
    /// each worker reads a byte range of every file, so every worker reads and parses its
    /// share and no text crosses between workers or processes; the workers count the line
    /// starts of their ranges and exchange the counts, so records are numbered as by one
    /// reader. Otherwise whole files are shared out.
    ///
    /// # Errors
    /// [`JobError::Input`] when a worker cannot count its range of some file (all workers
    /// then fail alike), [`JobError::Start`] when the job is stopped meanwhile.
    pub(crate) fn agree(
        worker: &mut Worker,
        heartbeat: &mut Heartbeat,
        job: &JobConfig,
        options: ReadOptions,
    ) -> Result<ReadPlan, JobError> {
        let (index, peers) = (worker.index(), worker.peers());
        // Regular files only: a pipe has no size to split, and its reader must be one worker.
        let plain = |f: &neardup_io::InputFile| {
            f.format == Format::Jsonl(Compression::None) && neardup_io::is_regular(&f.path)
        };
        if peers == 1 || job.inputs.len() >= 4 * peers || !job.inputs.iter().all(plain) {
            return Ok(ReadPlan::whole_files(index, peers, options));
        }
        type Count = (usize, usize, Result<u64, String>);
        let counts: Rc<RefCell<Vec<Count>>> = Rc::new(RefCell::new(Vec::new()));
        let done = ProbeHandle::<u64>::new();
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, stream) = scope.new_input::<Vec<Count>>();
            let counts = counts.clone();
            stream
                .broadcast()
                .inspect(move |c: &Count| counts.borrow_mut().push(c.clone()))
                .probe_with(&done);
            input
        });
        for (f, file) in job.inputs.iter().enumerate() {
            let (start, end) = byte_range(file.bytes, index, peers);
            let count = count_line_starts(&file.path, start, end.min(file.bytes))
                .map_err(|e| error_chain(&e));
            input.send((f, index, count));
        }
        drop(input);
        while !done.done() {
            worker.step_or_park(Some(Duration::from_millis(1)));
            heartbeat.beat();
            if heartbeat.aborted() {
                return Err(JobError::Stopped);
            }
        }
        let mut per_file = vec![vec![0u64; peers]; job.inputs.len()];
        let mut counts = counts.take();
        counts.sort_by_key(|(f, w, _)| (*f, *w));
        for (f, w, count) in counts {
            match count {
                Ok(n) => per_file[f][w] = n,
                Err(message) => return Err(ReadFailure::message(message).into_error(w)),
            }
        }
        let lines_before = per_file
            .into_iter()
            .map(|counts| {
                let mut before = 0;
                counts
                    .into_iter()
                    .map(|n| {
                        let first = before;
                        before += n;
                        first
                    })
                    .collect()
            })
            .collect();
        Ok(ReadPlan { index, peers, lines_before: Some(Arc::new(lines_before)), options })
    }

    /// Whether every worker reads a byte range of every file.
    pub(crate) fn ranges(&self) -> bool {
        self.lines_before.is_some()
    }

    /// The files this worker reads, in order: each file's index, the file, and the
    /// worker's byte range of it with the lines before the range (`None`: the whole file).
    pub(crate) fn files<'j>(
        &self,
        job: &'j JobConfig,
    ) -> impl Iterator<Item = (u32, &'j InputFile, Option<(u64, u64, u64)>)> {
        let (index, peers) = (self.index, self.peers);
        job.inputs.iter().enumerate().filter_map(move |(f, file)| match &self.lines_before {
            None => (file.index as usize % peers == index).then_some((file.index, file, None)),
            Some(lines_before) => {
                let (start, end) = byte_range(file.bytes, index, peers);
                Some((file.index, file, Some((start, end, lines_before[f][index]))))
            }
        })
    }
}

/// What a worker read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReadTotals {
    /// Records read.
    pub records: u64,
    /// Bytes of the files opened.
    pub bytes: u64,
    /// Web-archive records that are not documents, by kind.
    pub skipped: BTreeMap<String, u64>,
    /// Zero bytes ignored after the last gzip member of a file.
    pub trailing_zero_bytes: u64,
}

impl ReadTotals {
    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: &ReadTotals) {
        self.records += other.records;
        self.bytes += other.bytes;
        for (kind, n) in &other.skipped {
            *self.skipped.entry(kind.clone()).or_default() += n;
        }
        self.trailing_zero_bytes += other.trailing_zero_bytes;
    }
}

/// Records between calls of `between_batches`, which lets the worker step its dataflow.
const BATCH: u64 = 1024;

/// What reading a worker's share takes besides what is done with each record: the job,
/// the worker's read plan, the flag that stops it early, and the display that counts the
/// bytes read (`None`: not counted).
#[derive(Clone, Copy)]
pub(crate) struct ReadContext<'a> {
    /// The job, whose inputs are read.
    pub(crate) job: &'a JobConfig,
    /// The worker's share of them.
    pub(crate) plan: &'a ReadPlan,
    /// Set when the run gives up: reading stops at the next record.
    pub(crate) abort: &'a AtomicBool,
    /// Counts the bytes of files read.
    pub(crate) progress: Option<&'a Progress>,
}

/// Reads this worker's share of the input as `at.plan` says, in file order, leaving out
/// the files in `skip` (by index): hands every record (with `lines`, JSONL lines come
/// unparsed) to `on_record`, calls `between_batches` every [`BATCH`] records and whenever
/// `on_record` returns true (a round is complete), and `on_file_end` with what each file
/// gave once it was read whole and unchanged. Stops early when `at.abort` is set or a file
/// cannot be read, and returns that error with what was read.
pub(crate) fn read_files(
    at: ReadContext<'_>,
    skip: &BTreeSet<u32>,
    lines: bool,
    mut on_record: impl FnMut(Item) -> bool,
    mut between_batches: impl FnMut(),
    mut on_file_end: impl FnMut(u32, &ReadTotals),
) -> (ReadTotals, Option<neardup_io::Error>) {
    let ReadContext { job, plan, abort, progress } = at;
    let mut totals = ReadTotals::default();
    let fields = &plan.options;
    for (_, file, range) in plan.files(job).filter(|(f, _, _)| !skip.contains(f)) {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        // What this file gave, added to the totals however reading it ends.
        let mut this = ReadTotals::default();
        let counter = progress.map(Progress::byte_counter);
        let on_error = job.spec.input.on_read_error;
        let opened = match range {
            None => {
                this.bytes = file.bytes;
                RecordReader::open_counting(file, fields, on_error, counter)
            }
            Some((start, end, lines_before)) => {
                this.bytes = end - start;
                let range = LineRange { start, end, lines_before };
                RecordReader::open_range(file, fields, on_error, counter, range)
            }
        };
        let mut reader = match opened {
            Ok(reader) => reader,
            Err(e) => {
                totals.add(&this);
                return (totals, Some(e));
            }
        };
        let mut outcome = None;
        let mut unreported = 0;
        while let Some(record) = reader.next_item(lines) {
            let pause = match record {
                Ok(record) => on_record(record),
                Err(e) => {
                    outcome = Some(Some(e));
                    break;
                }
            };
            this.records += 1;
            unreported += 1;
            if pause || (totals.records + this.records).is_multiple_of(BATCH) {
                if let Some(p) = progress {
                    p.add_records(std::mem::take(&mut unreported));
                }
                between_batches();
                if abort.load(Ordering::Relaxed) {
                    outcome = Some(None);
                    break;
                }
            }
        }
        if let Some(p) = progress {
            p.add_records(unreported);
        }
        if let (Some(p), Format::Parquet) = (progress, file.format) {
            p.add_bytes(file.bytes); // Parquet is read by random access: count it whole
        }
        for (kind, n) in reader.skipped().into_iter().flatten() {
            *this.skipped.entry(kind.clone()).or_default() += n;
        }
        let zeros = reader.trailing_zero_bytes();
        if zeros > 0 {
            let file = file.path.display();
            tracing::warn!(%file, bytes = zeros, "zero bytes after the last gzip member ignored");
            this.trailing_zero_bytes = zeros;
        }
        totals.add(&this);
        if let Some(error) = outcome {
            return (totals, error);
        }
        // A file written or truncated as it was read was read in part, or mixed.
        if let Err(changed) = neardup_io::check_unchanged(file) {
            return (totals, Some(changed));
        }
        on_file_end(file.index, &this);
    }
    (totals, None)
}

/// A worker's records as the first pass over the corpus read them, and what reading counted.
#[derive(Debug)]
pub(crate) struct KeptShare {
    log: RecordLog,
    totals: ReadTotals,
    /// What reading counted for each file (by index) read whole.
    pub(crate) files: BTreeMap<u32, ReadTotals>,
    /// The plan the records were read by, so later passes agree on no other.
    plan: ReadPlan,
}

impl KeptShare {
    /// Bytes the log wrote to its spill file.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.log.spilled_bytes()
    }
}

/// The kept shares of a process's workers, by the worker's place in its process, handed
/// from pass to pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptShares(Arc<Mutex<Vec<Option<KeptShare>>>>);

impl KeptShares {
    /// The share of the worker at `slot` of its process, when an earlier pass kept it.
    pub(crate) fn take(&self, slot: usize) -> Option<KeptShare> {
        self.0.lock().expect("not poisoned").get_mut(slot).and_then(Option::take)
    }

    /// Leaves `share` for the next pass of the worker at `slot`.
    pub(crate) fn put(&self, slot: usize, share: KeptShare) {
        let mut shares = self.0.lock().expect("not poisoned");
        if shares.len() <= slot {
            shares.resize_with(slot + 1, || None);
        }
        shares[slot] = Some(share);
    }

    /// The plan the first pass read by, for the worker at `slot`, when it kept its share.
    pub(crate) fn plan(&self, slot: usize) -> Option<ReadPlan> {
        let shares = self.0.lock().expect("not poisoned");
        shares.get(slot).and_then(Option::as_ref).map(|share| share.plan.clone())
    }

    /// Bytes the kept shares spilled.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        let shares = self.0.lock().expect("not poisoned");
        shares.iter().flatten().map(KeptShare::spilled_bytes).sum()
    }
}

/// Why a worker could not read its share.
#[derive(Debug)]
pub(crate) enum ShareError {
    /// An input file could not be read.
    Input(neardup_io::Error),
    /// The records read could not be kept for the next pass, or not read back.
    Keep(SpillError),
}

/// Where a pass reads a worker's share from.
pub(crate) enum Share<'a> {
    /// The input files, keeping the records in a log in `dir` (up to `limit_bytes` in
    /// memory) for the passes after this one.
    ReadAndKeep { dir: PathBuf, limit_bytes: usize },
    /// What an earlier pass kept, read again and kept for a later pass.
    Reread(&'a mut KeptShare),
    /// What an earlier pass kept, for the last time: memory is freed as it is read.
    Replay(Box<KeptShare>),
}

/// As [`read_files`], from `share`: a pass after the first reads what the first kept rather
/// than the files, with the same records in the same order and the same totals. Progress
/// counts the reading of files only. Each record comes with the keys of its lines
/// ([`neardup_text::line_keys`]) when the job learns boilerplate and it is a page with a
/// URL, computed in the first pass and kept with it; otherwise with none.
pub(crate) fn read_once(
    at: ReadContext<'_>,
    share: Share<'_>,
    mut on_record: impl FnMut(Record, &[Option<LineKey>]) -> bool,
    mut between_batches: impl FnMut(),
) -> (ReadTotals, Option<ShareError>, Option<KeptShare>) {
    let ReadContext { job, plan, abort, .. } = at;
    let mut owned;
    let (kept, consume) = match share {
        Share::ReadAndKeep { dir, limit_bytes } => {
            let mut log = RecordLog::new(dir, limit_bytes);
            let mut failed = None;
            let learns = job.needs_boilerplate();
            let (mut scratch, mut lines) = (LineScratch::default(), Vec::new());
            let mut files = BTreeMap::new();
            let every = BTreeSet::new();
            let (totals, error) = read_files(
                at,
                &every,
                false,
                |item| {
                    let Item::Record(record) = item else {
                        unreachable!("lines come only when asked for")
                    };
                    lines.clear();
                    if learns
                        && let Record::Doc(doc) = &record
                        && doc.meta.as_deref().is_some_and(|m| m.url.is_some())
                    {
                        neardup_text::line_keys(&doc.text, job.spec.seed, &mut scratch, &mut lines);
                    }
                    if failed.is_none()
                        && let Err(e) = log.push(&record, &lines)
                    {
                        failed = Some(e);
                        abort.store(true, Ordering::Relaxed);
                    }
                    on_record(record, &lines)
                },
                &mut between_batches,
                |file, read| {
                    files.insert(file, read.clone());
                },
            );
            let failed = failed.or_else(|| log.finish().err());
            // Stopped by another worker's failure, the log is not the whole share: the pass
            // fails, and nothing may read it.
            let whole = !abort.load(Ordering::Relaxed);
            return match (error, failed) {
                (Some(e), _) => (totals, Some(ShareError::Input(e)), None),
                (None, Some(e)) => (totals, Some(ShareError::Keep(e)), None),
                (None, None) if whole => {
                    let plan = plan.clone();
                    (totals.clone(), None, Some(KeptShare { log, totals, plan, files }))
                }
                (None, None) => (totals, None, None),
            };
        }
        Share::Reread(kept) => (kept, false),
        Share::Replay(kept) => {
            owned = *kept;
            (&mut owned, true)
        }
    };
    let mut records = 0u64;
    let replayed = kept.log.replay(consume, |record, lines| {
        let pause = on_record(record, lines);
        records += 1;
        if pause || records.is_multiple_of(BATCH) {
            between_batches();
        }
        !abort.load(Ordering::Relaxed)
    });
    match replayed {
        Ok(_) => (kept.totals.clone(), None, None),
        Err(e) => (kept.totals.clone(), Some(ShareError::Keep(e)), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing;
    use crate::settings::spec::JobSpec;

    #[test]
    fn a_file_that_changed_since_it_was_listed_fails_the_worker_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let plan = ReadPlan::whole_files(0, 1, job.spec.input.read_options());
        let abort = AtomicBool::new(false);
        let read = || {
            let mut records = 0;
            let on_item = |_: Item| {
                records += 1;
                false
            };
            let every = BTreeSet::new();
            let at = ReadContext { job: &job, plan: &plan, abort: &abort, progress: None };
            let (_, error) = read_files(at, &every, false, on_item, || {}, |_, _| {});
            (records, error)
        };
        let (records, error) = read();
        assert_eq!(records, 1);
        assert!(error.is_none(), "{error:?}");
        // A writer appends after the run listed the file: what was read is not the file
        // the run listed, and the worker says so as it finishes reading it.
        let more = "{\"id\":\"1\",\"text\":\"x\"}\n{\"id\":\"2\",\"text\":\"y\"}\n";
        std::fs::write(dir.path().join("a.jsonl"), more).unwrap();
        let (records, error) = read();
        assert_eq!(records, 2);
        let error = error.expect("the change is an error");
        assert!(matches!(error, neardup_io::Error::InputChanged { .. }), "{error}");
        assert!(error.to_string().contains("a.jsonl"), "{error}");
    }
}
