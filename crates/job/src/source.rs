//! Reading a worker's share of the input files.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use neardup_io::{Compression, Format, Item, LineRange, Record, RecordReader, count_line_starts};
use timely::dataflow::operators::Inspect;
use timely::dataflow::operators::core::{Input, Probe};
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::Broadcast;
use timely::worker::Worker;

use crate::cluster::Heartbeat;
use crate::config::JobConfig;
use crate::error::{JobError, ReadFailure, error_chain};
use crate::progress::Progress;

/// How the workers share the input files: worker `index` of `peers` reads the whole files
/// whose index is `index` modulo `peers`, or, with `lines_before`, its byte range
/// ([`byte_range`]) of every file, all of them plain JSON Lines, whose first line is
/// numbered after `lines_before[file][index]` lines.
#[derive(Clone, Debug)]
pub(crate) struct ReadPlan {
    index: usize,
    peers: usize,
    lines_before: Option<Arc<Vec<Vec<u64>>>>,
}

/// Worker `index` of `peers`'s byte range of a file of `bytes` bytes: equal slices.
pub(crate) fn byte_range(bytes: u64, index: usize, peers: usize) -> (u64, u64) {
    let at = |w: usize| (u128::from(bytes) * w as u128 / peers as u128) as u64;
    (at(index), at(index + 1))
}

impl ReadPlan {
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
    ) -> Result<ReadPlan, JobError> {
        let (index, peers) = (worker.index(), worker.peers());
        // Regular files only: a pipe has no size to split, and its reader must be one worker.
        let plain = |f: &neardup_io::InputFile| {
            f.format == Format::Jsonl(Compression::None) && neardup_io::is_regular(&f.path)
        };
        if peers == 1 || job.inputs.len() >= 4 * peers || !job.inputs.iter().all(plain) {
            return Ok(ReadPlan { index, peers, lines_before: None });
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
                return Err(JobError::Start("stopped: the job failed elsewhere".into()));
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
        Ok(ReadPlan { index, peers, lines_before: Some(Arc::new(lines_before)) })
    }

    /// Whether every worker reads a byte range of every file.
    pub(crate) fn ranges(&self) -> bool {
        self.lines_before.is_some()
    }
}

/// What a worker read.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadTotals {
    /// Records read.
    pub records: u64,
    /// Bytes of the files opened.
    pub bytes: u64,
    /// Web-archive records that are not documents, by kind.
    pub skipped: BTreeMap<String, u64>,
}

/// Records between calls of `between_batches`, which lets the worker step its dataflow.
const BATCH: u64 = 1024;

/// Reads this worker's share of the input as `plan` says, in file order, handing every
/// record to `on_record` and calling `between_batches` every [`BATCH`] records and whenever
/// `on_record` returns true (a round is complete). Stops early when `abort` is set or a
/// file cannot be read, and returns that error with what was read.
pub(crate) fn read_share(
    job: &JobConfig,
    plan: &ReadPlan,
    abort: &AtomicBool,
    progress: Option<&Progress>,
    mut on_record: impl FnMut(Record) -> bool,
    between_batches: impl FnMut(),
) -> (ReadTotals, Option<neardup_io::Error>) {
    let on_item = |item| match item {
        Item::Record(record) => on_record(record),
        Item::Line(_) => unreachable!("lines come only when asked for"),
    };
    read_items(job, plan, false, abort, progress, on_item, between_batches)
}

/// As [`read_share`], handing over [`Item`]s: with `lines`, JSONL lines come unparsed.
pub(crate) fn read_items(
    job: &JobConfig,
    plan: &ReadPlan,
    lines: bool,
    abort: &AtomicBool,
    progress: Option<&Progress>,
    mut on_record: impl FnMut(Item) -> bool,
    mut between_batches: impl FnMut(),
) -> (ReadTotals, Option<neardup_io::Error>) {
    let mut totals = ReadTotals::default();
    let fields = job.spec.input.field_names();
    let (index, peers) = (plan.index, plan.peers);
    let shares = job
        .inputs
        .iter()
        .enumerate()
        .filter(|(_, f)| plan.ranges() || f.index as usize % peers == index);
    for (f, file) in shares {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        let counter = progress.map(Progress::byte_counter);
        let on_error = job.spec.input.on_read_error;
        let opened = match &plan.lines_before {
            None => {
                totals.bytes += file.bytes;
                RecordReader::open_counting(file, &fields, on_error, counter)
            }
            Some(lines_before) => {
                let (start, end) = byte_range(file.bytes, index, peers);
                totals.bytes += end - start;
                let range = LineRange { start, end, lines_before: lines_before[f][index] };
                RecordReader::open_range(file, &fields, on_error, counter, range)
            }
        };
        let mut reader = match opened {
            Ok(reader) => reader,
            Err(e) => return (totals, Some(e)),
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
            totals.records += 1;
            unreported += 1;
            if pause || totals.records.is_multiple_of(BATCH) {
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
            *totals.skipped.entry(kind.clone()).or_default() += n;
        }
        if let Some(error) = outcome {
            return (totals, error);
        }
    }
    (totals, None)
}
