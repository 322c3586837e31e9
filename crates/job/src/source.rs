//! Reading a worker's share of the input files.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_io::{Format, Item, Record, RecordReader};

use crate::config::JobConfig;
use crate::progress::Progress;

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

/// Reads the files of worker `index` of `peers` (file index modulo peers) in order, handing
/// every record to `on_record` and calling `between_batches` every [`BATCH`] records and
/// whenever `on_record` returns true (a round is complete). Stops
/// early when `abort` is set or a file cannot be read, and returns that error with what
/// was read.
pub(crate) fn read_share(
    job: &JobConfig,
    index: usize,
    peers: usize,
    abort: &AtomicBool,
    progress: Option<&Progress>,
    mut on_record: impl FnMut(Record) -> bool,
    between_batches: impl FnMut(),
) -> (ReadTotals, Option<neardup_io::Error>) {
    let on_item = |item| match item {
        Item::Record(record) => on_record(record),
        Item::Line(_) => unreachable!("lines come only when asked for"),
    };
    read_items(job, index, peers, false, abort, progress, on_item, between_batches)
}

/// As [`read_share`], handing over [`Item`]s: with `lines`, JSONL lines come unparsed.
#[expect(clippy::too_many_arguments, reason = "read_share's arguments and one flag")]
pub(crate) fn read_items(
    job: &JobConfig,
    index: usize,
    peers: usize,
    lines: bool,
    abort: &AtomicBool,
    progress: Option<&Progress>,
    mut on_record: impl FnMut(Item) -> bool,
    mut between_batches: impl FnMut(),
) -> (ReadTotals, Option<neardup_io::Error>) {
    let mut totals = ReadTotals::default();
    let fields = job.spec.input.field_names();
    for file in job.inputs.iter().filter(|f| f.index as usize % peers == index) {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        let counter = progress.map(Progress::byte_counter);
        let on_error = job.spec.input.on_read_error;
        let mut reader = match RecordReader::open_counting(file, &fields, on_error, counter) {
            Ok(reader) => reader,
            Err(e) => return (totals, Some(e)),
        };
        totals.bytes += file.bytes;
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
