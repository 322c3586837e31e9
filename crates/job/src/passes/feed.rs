//! The source of the main pass: a worker's share of the input fed into the dataflow in
//! rounds, the units an earlier run kept in the work area replayed first
//! (`crate::input::work_area`), and each unit read ended, so that it is kept in turn.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_io::{Item, Record, RejectedRecord};
use neardup_text::{Boilerplate, LineKey, LineScratch};
use timely::dataflow::InputHandleVec;
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::worker::Worker;

use crate::distributed::processes::Heartbeat;
use crate::input::pass_worker::PassWorker;
use crate::input::sign::{kept_page_text, page_text, take_page_text};
use crate::input::source::{
    KeptShares, ReadContext, ReadTotals, Share, ShareError, read_files, read_once,
};
use crate::input::work_area::{UnitEnd, WorkArea};
use crate::passes::runner::Rounds;
use crate::reporting::progress::Progress;
use crate::reporting::stats::{BoilerplateStats, WorkerStats};
use crate::settings::config::JobConfig;
use crate::storage::records::SignedDoc;
use crate::storage::spill::MemSize;

/// What one worker's source uses.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) job: &'a JobConfig,
    pub(crate) me: &'a PassWorker,
    /// The worker's units in the work area.
    pub(crate) area: &'a WorkArea,
    /// The worker's statistics.
    pub(crate) stats: &'a RefCell<WorkerStats>,
    /// The frontier of everything the rounds feed.
    pub(crate) paced: &'a ProbeHandle<u64>,
    pub(crate) abort: &'a AtomicBool,
    pub(crate) progress: &'a Progress,
    /// Bytes of text per round.
    pub(crate) round_bytes: u64,
    /// The records the corpus passes kept, replayed instead of reading the files again.
    pub(crate) kept: &'a KeptShares,
    /// The boilerplate learned, left out of the pages fed: those the corpus passes kept, or
    /// (when the work area held what they learned) those read here.
    pub(crate) boilerplate: Option<&'a Boilerplate>,
}

/// The source's handles into the main dataflow (see `crate::passes::worker`'s `Fed`).
pub(crate) struct Inputs {
    pub(crate) items: InputHandleVec<u64, Item>,
    pub(crate) replayed: InputHandleVec<u64, Result<SignedDoc, RejectedRecord>>,
    pub(crate) ends: InputHandleVec<u64, UnitEnd>,
}

impl Inputs {
    fn advance_to(&mut self, round: u64) {
        self.items.advance_to(round);
        self.replayed.advance_to(round);
        self.ends.advance_to(round);
    }
}

/// Reads the worker's share into `inputs` in rounds of about `round_bytes` of text; before
/// reading a round, waits until all rounds but the last one are through the first
/// exchanges, so at most two rounds are in flight. The units an earlier run kept in the
/// work area are replayed first, and their files are not read. Returns what was read, the
/// rounds, and why the share could not be read whole.
pub(crate) fn feed(
    worker: &mut Worker,
    heartbeat: &mut Heartbeat,
    inputs: &mut Inputs,
    source: &Source<'_>,
    spread: bool,
) -> (ReadTotals, u64, Option<ShareError>) {
    let Source { job, abort, progress, round_bytes, kept, .. } = *source;
    let inputs = RefCell::new(inputs);
    let rounds = Rounds::new(round_bytes, source.paced);
    // `text` is an item's size as read (a page's before its boilerplate is left out), so
    // rounds do not depend on what was learned.
    let paced = |text: u64| rounds.fed(text);
    let mut between_batches = || {
        rounds.between_batches(worker, heartbeat, |round| inputs.borrow_mut().advance_to(round));
    };
    let share = kept.take(source.me.slot);
    let direct = share.is_none();
    let replayed = replay_units(source, direct, &inputs, &paced, &mut between_batches);
    let (mut totals, done) = match replayed {
        Ok(replayed) => replayed,
        Err(e) => return (ReadTotals::default(), rounds.round() + 1, Some(ShareError::Input(e))),
    };
    let send = |item: Item, text: usize| {
        inputs.borrow_mut().items.send(item);
        paced(text as u64)
    };
    let end_unit = |end: UnitEnd| {
        // Sent at once, so the unit is committed as soon as its records are in (a round
        // can hold many units).
        let mut inputs = inputs.borrow_mut();
        inputs.items.flush();
        inputs.ends.send(end);
        inputs.ends.flush();
        source.stats.borrow_mut().work.units_read += 1;
    };
    let plan = &source.me.plan;
    let at = |progress| ReadContext { job, plan, abort, progress };
    let (read, error) = match share {
        // The corpus passes read the files: their records are replayed.
        Some(share) => {
            let files = share.files.clone();
            let kept = KeptFeed {
                done: &done,
                files: &files,
                unit: RefCell::default(),
                content: RefCell::default(),
            };
            let on_record = |record: Record, lines: &[Option<LineKey>]| {
                let text = record_text(&record);
                match kept.page(record, lines, &end_unit, source) {
                    Some(item) => send(item, text),
                    None => false,
                }
            };
            let share = Share::Replay(Box::new(share));
            let (read, error, _) = read_once(at(None), share, on_record, &mut between_batches);
            if let (None, Some(last)) = (&error, kept.unit.into_inner())
                && !abort.load(Ordering::Relaxed)
            {
                end_unit(last);
            }
            (read, error)
        }
        // With records spread over workers, JSONL lines are parsed where they are signed
        // (unless pages lose their boilerplate here).
        None => {
            let direct = DirectFeed::default();
            let on_item = |item: Item| {
                let text = item_text(&item);
                send(direct.item(item, source), text)
            };
            let on_file_end = |file, read: &ReadTotals| end_unit(direct.end(file, read));
            let lines = spread && source.boilerplate.is_none();
            let (read, error) = read_files(
                at(Some(progress)),
                &done,
                lines,
                on_item,
                &mut between_batches,
                on_file_end,
            );
            (read, error.map(ShareError::Input))
        }
    };
    totals.add(&read);
    (totals, rounds.round() + 1, error)
}

/// The records a worker reads itself, and what it counts of the unit being read.
#[derive(Default)]
struct DirectFeed {
    /// Boilerplate left out of the unit's pages so far.
    boilerplate: RefCell<BoilerplateStats>,
    /// Scratch for hashing a page's lines, and its text without boilerplate.
    page: RefCell<(LineScratch, String)>,
}

impl DirectFeed {
    /// `item` as the main pass takes it: a page without the boilerplate the corpus passes
    /// learned, when a failed run kept it in the work area and no pass read the pages.
    fn item(&self, mut item: Item, source: &Source<'_>) -> Item {
        if let (Some(learned), Item::Record(Record::Doc(doc))) = (source.boilerplate, &mut item) {
            let (lines, content) = &mut *self.page.borrow_mut();
            if let Some(stripped) = page_text(Some(learned), doc, lines, content).1 {
                source.stats.borrow_mut().boilerplate.count(&stripped);
                self.boilerplate.borrow_mut().count(&stripped);
                take_page_text(doc, content, &stripped);
            }
        }
        item
    }

    /// The end of the unit of `file`, which reading counted `read` for.
    fn end(&self, file: u32, read: &ReadTotals) -> UnitEnd {
        UnitEnd::read(file, read, self.boilerplate.take())
    }
}

/// The records of a share the corpus passes kept, handed on as the main pass reads them.
struct KeptFeed<'a> {
    /// Files whose units were replayed: their records are left out.
    done: &'a BTreeSet<u32>,
    /// What the first pass's reading counted for each file.
    files: &'a BTreeMap<u32, ReadTotals>,
    /// The unit being read.
    unit: RefCell<Option<UnitEnd>>,
    /// A page's text without its boilerplate, reused from record to record.
    content: RefCell<String>,
}

impl KeptFeed<'_> {
    /// `record` as the main pass takes it, unless its unit was replayed: a page without the
    /// learned boilerplate, left out with the keys of its lines that the first pass computed
    /// (lines are hashed once). Ends the unit before it when it starts another file's.
    fn page(
        &self,
        mut record: Record,
        lines: &[Option<LineKey>],
        end_unit: &impl Fn(UnitEnd),
        source: &Source<'_>,
    ) -> Option<Item> {
        let file = record.doc().file_index();
        if self.done.contains(&file) {
            return None;
        }
        let mut unit = self.unit.borrow_mut();
        if unit.as_ref().is_some_and(|u| u.file != file)
            && let Some(ended) = unit.take()
        {
            end_unit(ended);
        }
        let current = unit.get_or_insert_with(|| UnitEnd {
            file,
            totals: self.files.get(&file).cloned().unwrap_or_default(),
            ..UnitEnd::default()
        });
        current.records += 1;
        let content = &mut *self.content.borrow_mut();
        if let Record::Doc(doc) = &mut record
            && let (_, Some(stripped)) = kept_page_text(source.boilerplate, doc, lines, content)
        {
            source.stats.borrow_mut().boilerplate.count(&stripped);
            current.boilerplate.count(&stripped);
            take_page_text(doc, content, &stripped);
        }
        Some(Item::Record(record))
    }
}

/// Replays the units of this worker that an earlier run kept in the work area, in file
/// order, counting what reading them counted (`direct`: when this pass reads the files
/// itself; otherwise the corpus passes counted them). Returns those counts and the files
/// replayed.
fn replay_units(
    source: &Source<'_>,
    direct: bool,
    inputs: &RefCell<&mut Inputs>,
    paced: &impl Fn(u64) -> bool,
    between_batches: &mut impl FnMut(),
) -> Result<(ReadTotals, BTreeSet<u32>), neardup_io::Error> {
    let mut totals = ReadTotals::default();
    let mut done = BTreeSet::new();
    for (file, _, _) in source.me.plan.files(source.job) {
        let Some(path) = source.area.committed(file) else { continue };
        if source.abort.load(Ordering::Relaxed) {
            break;
        }
        let mut sent = 0u64;
        let end = crate::input::work_area::replay(&path, |signed| {
            let size = replayed_size(&signed);
            inputs.borrow_mut().replayed.send(signed);
            sent += 1;
            if paced(size) || sent.is_multiple_of(1024) {
                between_batches();
            }
        })?;
        if direct {
            totals.add(&end.totals);
            source.progress.add_bytes(end.totals.bytes);
            source.progress.add_records(end.records);
        }
        let mut stats = source.stats.borrow_mut();
        stats.boilerplate.merge(&end.boilerplate);
        stats.work.units_reused += 1;
        done.insert(file);
    }
    Ok((totals, done))
}

/// What a replayed record weighs in a round: about its size in memory.
fn replayed_size(signed: &Result<SignedDoc, RejectedRecord>) -> u64 {
    match signed {
        Ok(doc) => doc.mem_size() as u64,
        Err(reject) => (reject.id.as_deref().map_or(0, str::len) + 64) as u64,
    }
}

/// The bytes of text an item carries as read: what input rounds are sized by.
fn item_text(item: &Item) -> usize {
    match item {
        Item::Record(record) => record_text(record),
        Item::Line(line) => line.bytes.len(),
    }
}

/// The bytes of text a record carries.
fn record_text(record: &Record) -> usize {
    match record {
        Record::Doc(d) => d.text.len() + d.id.len(),
        Record::Reject(_) => 0,
    }
}
