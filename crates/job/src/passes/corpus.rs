//! The corpus passes: statistics over every document, gathered before signing.
//!
//! Only the first pass reads the input files; it keeps each worker's records
//! ([`Reading`], [`crate::storage::record_log`]) for the next pass and the main dataflow, which read
//! them again instead.
//!
//! [`DocumentFrequencies`] counts document frequencies of features for SimHash `tf_idf`
//! weights. Each worker counts its share of the input into a count-min sketch; the
//! sketches are broadcast in pieces and summed, so every worker ends with the same corpus
//! sketch whatever the number of workers. Holds: two sketches per worker (16 MiB each).
//!
//! [`LearnBoilerplate`] learns the boilerplate lines of web pages: every page sends its
//! line occurrences (see [`neardup_text::occurrences`]), exchanged by host (corpus-wide
//! ones by line), to a stage that collects them in sorted runs spilling past the worker's
//! limit and reads them once in order ([`Learner`]); what each learns (host entries, the
//! lines on enough hosts to be boilerplate everywhere, and how many hosts it saw) is
//! broadcast, and every process decides the corpus-wide lines by the whole corpus's host
//! count, so that all end with the same set (kept by their first worker). A worker that
//! cannot read or spill tells every other, so all processes fail with the same error.
//! Holds: the spill limit, and 8 bytes per learned entry (16 per corpus-wide candidate)
//! per process.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use neardup_core::CountMinSketch;
use neardup_io::Record;
use neardup_io::index::read_frequencies;
use neardup_text::{Analysis, AnalyzeScratch, Analyzer};
use timely::dataflow::InputHandleVec;
use timely::dataflow::operators::core::Input;
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Concat, Inspect, Probe};
use timely::worker::Worker;

use neardup_text::{Boilerplate, Learner, Lesson, LineKey, LineScratch, Occurrence};
use timely::dataflow::channels::pact::Exchange;

use crate::error::JobError;
use crate::input::pass_worker::PassWorker;
use crate::input::sign::{IdfWeights, kept_page_text};
use crate::input::source::{KeptShares, ReadContext, ReadTotals, Share, ShareError, read_once};
use crate::operators::collect::{Drain, Spill, collect_sorted};
use crate::passes::runner::{PassAt, PassFailure, Stopped, WorkerPass};
use crate::passes::templates::{PageRow, SampleDrain, read_index_share};
use crate::reporting::progress::Progress;
use crate::reporting::stats::WorkerStats;
use crate::settings::config::{IndexPlan, JobConfig};
use crate::settings::plan::RunPlan;
use crate::storage::spill::RemoveDir;
use crate::storage::spill::SpillError;

/// Rows of the document-frequency sketch.
const SKETCH_DEPTH: usize = 4;
/// Counters per row: 2^20.
const SKETCH_WIDTH_BITS: u32 = 20;
/// Counters per exchanged piece.
const PIECE: usize = 1 << 16;

/// Counts, for every feature, the documents that contain it: in the text the job analyses,
/// so web pages without their `boilerplate` lines. Each worker gives the corpus's counts
/// and documents counted ([`DocumentFrequencies::weights`] makes them weights).
pub(crate) struct DocumentFrequencies {
    /// How the pass reads.
    pub(crate) reading: Reading,
    /// The analyser the main pass signs with.
    pub(crate) analyzer: Analyzer,
    /// The boilerplate learned, left out of the pages counted.
    pub(crate) boilerplate: Option<Arc<Boilerplate>>,
}

impl DocumentFrequencies {
    /// The weights of what every worker counted (each has the whole corpus's).
    pub(crate) fn weights(results: Vec<(CountMinSketch, u64)>) -> IdfWeights {
        let (sketch, documents) = results.into_iter().next().expect("at least one worker");
        IdfWeights::Corpus { sketch, documents }
    }
}

impl WorkerPass for DocumentFrequencies {
    type Output = (CountMinSketch, u64);

    fn work(&self, worker: &mut Worker, at: &mut PassAt<'_>) -> Result<Self::Output, Stopped> {
        let total = Rc::new(RefCell::new(CountMinSketch::new(SKETCH_DEPTH, SKETCH_WIDTH_BITS)));
        let documents = Rc::new(Cell::new(0u64));
        let merged = ProbeHandle::<u64>::new();
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, pieces) = scope.new_input::<Vec<Piece>>();
            let (total, documents) = (total.clone(), documents.clone());
            pieces
                .broadcast()
                .inspect(move |piece| {
                    total.borrow_mut().merge_counts(piece.offset, &piece.counts);
                    documents.set(documents.get() + piece.documents);
                })
                .probe_with(&merged);
            input
        });
        let boilerplate = self.boilerplate.as_deref();
        let (local, local_documents, error) = count_share(self, at, boilerplate);
        if let Some(e) = error {
            at.fail(PassFailure::of_share(at.me.index, &e, Some("document frequencies")));
        }
        // Every worker sends its pieces, so no peer waits forever.
        for (i, piece) in local.counts().chunks(PIECE).enumerate() {
            if piece.iter().any(|c| *c != 0) || i == 0 {
                let docs = if i == 0 { local_documents } else { 0 };
                input.send(Piece { offset: i * PIECE, documents: docs, counts: piece.to_vec() });
            }
        }
        drop(local);
        drop(input);
        at.step_until(worker, || merged.done())?;
        Ok((total.replace(CountMinSketch::new(1, 4)), documents.get()))
    }
}

/// Counts one worker's share into a sketch: the features of every document with some.
/// Returns the sketch, the documents counted, and why the share could not be read whole.
fn count_share(
    pass: &DocumentFrequencies,
    at: &mut PassAt<'_>,
    boilerplate: Option<&Boilerplate>,
) -> (CountMinSketch, u64, Option<ShareError>) {
    let analyzer = &pass.analyzer;
    let mut local = CountMinSketch::new(SKETCH_DEPTH, SKETCH_WIDTH_BITS);
    let mut local_documents = 0u64;
    let mut scratch = AnalyzeScratch::default();
    let mut analysis = Analysis::default();
    let mut content = String::new();
    let heartbeat = &mut *at.heartbeat;
    let (_totals, error) = pass.reading.read(
        &at.me,
        &at.abort,
        |record, lines| {
            if let Record::Doc(doc) = record {
                let (text, _) = kept_page_text(boilerplate, &doc, lines, &mut content);
                analyzer.analyze_into(text, &mut scratch, &mut analysis);
                if !analysis.features.is_empty() {
                    local_documents += 1;
                    analysis.features.hashes().iter().for_each(|h| local.add(*h));
                }
            }
            false
        },
        || heartbeat.beat(),
    );
    (local, local_documents, error)
}

/// Adds to a batch's document frequencies those of every generation the index holds, so
/// the run weighs as one run over all of them would. An index without frequencies (of
/// runs before they were kept, or of other weights) adds nothing.
///
/// # Errors
/// [`JobError::Index`] when the index's frequencies cannot be read or have another shape.
pub(crate) fn add_index_frequencies(
    plan: &IndexPlan,
    weights: &mut IdfWeights,
) -> Result<(), JobError> {
    let IdfWeights::Corpus { sketch, documents } = weights else { return Ok(()) };
    let dirs: Vec<PathBuf> =
        plan.manifest.segments().iter().map(|s| plan.dir.join(&s.folder)).collect();
    let indexed = read_frequencies(dirs.iter().map(PathBuf::as_path)).map_err(JobError::Index)?;
    let Some(indexed) = indexed else { return Ok(()) };
    let shape = (usize::try_from(indexed.depth).expect("a few rows"), indexed.width_bits);
    if shape != (sketch.depth(), sketch.width_bits()) {
        let detail = format!(
            "document frequencies in a sketch of {} x 2^{} counters, this run counts {} x 2^{}",
            indexed.depth,
            indexed.width_bits,
            sketch.depth(),
            sketch.width_bits()
        );
        return Err(JobError::Index(neardup_io::Error::Damaged { path: plan.dir.clone(), detail }));
    }
    sketch.merge_counts(0, &indexed.counts);
    *documents += indexed.documents;
    Ok(())
}

/// What workers exchange in the document-frequency pass: counters of one worker's sketch
/// from `offset` on, and (in the first piece) how many documents it counted.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Piece {
    offset: usize,
    documents: u64,
    counts: Vec<u32>,
}

/// Reads occurrences in order and emits what it learns.
struct LearnDrain(Learner);

impl Drain<Occurrence, Lesson> for LearnDrain {
    fn item(&mut self, item: Occurrence, emit: &mut dyn FnMut(Lesson)) -> Result<(), SpillError> {
        self.0.push(item, &mut |e| emit(e));
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Lesson)) -> Result<(), SpillError> {
        self.0.finish(&mut |e| emit(e));
        Ok(())
    }
}

/// What [`LearnBoilerplate`] found.
pub(crate) struct Learned {
    /// The boilerplate set.
    pub boilerplate: Boilerplate,
    /// Pages (documents with a host) it was learned from.
    pub pages: u64,
    /// Bytes spilled by the pass, all workers of this process.
    pub spilled_bytes: u64,
}

/// Learns the boilerplate lines of the corpus's web pages. Each worker gives the entries
/// learned (its process's first worker; the others none), the pages learned from, and
/// what it spilled ([`LearnBoilerplate::learned`] makes them the set).
pub(crate) struct LearnBoilerplate {
    /// How the pass reads.
    pub(crate) reading: Reading,
}

impl LearnBoilerplate {
    /// The boilerplate every worker of a run of `job` learned, and what learning it
    /// spilled.
    pub(crate) fn learned(job: &JobConfig, results: Vec<(Vec<Lesson>, u64, u64)>) -> Learned {
        let spilled_bytes = results.iter().map(|r| r.2).sum();
        let (entries, pages, _) = results.into_iter().next().expect("at least one worker");
        let boilerplate = Boilerplate::learned(&entries, &job.spec.boilerplate, job.spec.seed);
        Learned { boilerplate, pages, spilled_bytes }
    }
}

impl WorkerPass for LearnBoilerplate {
    type Output = (Vec<Lesson>, u64, u64);

    fn work(&self, worker: &mut Worker, at: &mut PassAt<'_>) -> Result<Self::Output, Stopped> {
        let job = &self.reading.run.job;
        let memory = &self.reading.run.memory;
        let index = at.me.index;
        let dir = crate::storage::spill::worker_folder(&memory.dir, "boilerplate", index);
        let _remove = RemoveDir(dir.clone());
        // With an index, pages are sent (and its sample of their hosts added) rather than
        // occurrences; the two stages share the spill limit.
        let spill = Spill {
            dir,
            limit_bytes: memory.limit_bytes,
            stats: Rc::new(RefCell::new(WorkerStats::default())),
            error: Rc::new(RefCell::new(None)),
            abort: at.abort.clone(),
        };
        let spill = if job.index.is_some() { spill.share(2) } else { spill };
        let learning = Learning::default();
        let mut inputs = learning.build(worker, job, &at.me, &spill);
        let (local_pages, read_all) = inputs.send_share(&self.reading, at, &spill, worker);
        if let Some(index_plan) = job.index.as_deref()
            && read_all
        {
            let read = read_index_share(index_plan, index, at.me.peers, |page| {
                inputs.pages.send(page);
            });
            if let Err(e) = read {
                let message = crate::error::error_chain(&e);
                at.fail(PassFailure::Index { worker: index, message });
            }
        }
        inputs.pages_read.send(local_pages);
        drop(inputs);
        at.step_until(worker, || learning.done.done())?;
        // A spill error fails every process, not only this one.
        if let Some(failure) = spill.error.borrow().clone() {
            let message = format!("boilerplate pass: {}", failure.message());
            at.fail(PassFailure::Spill { worker: index, message });
        }
        let entries = learning.entries.replace(Vec::new());
        let spilled = spill.stats.borrow().resources.spilled_bytes;
        Ok((entries, learning.pages.get(), spilled))
    }
}

/// What one worker of the boilerplate pass gathers from the dataflow.
#[derive(Default)]
struct Learning {
    /// What every learner learned (kept by the first worker of each process only).
    entries: Rc<RefCell<Vec<Lesson>>>,
    /// Pages all workers read.
    pages: Rc<Cell<u64>>,
    /// Done once everything is learned and every worker's page count is in.
    done: ProbeHandle<u64>,
}

/// Where a worker of the boilerplate pass sends what it reads.
struct LearnInputs {
    /// Line occurrences (a run without an index).
    occurrences: InputHandleVec<u64, Occurrence>,
    /// The pages each worker read, for every worker.
    pages_read: InputHandleVec<u64, u64>,
    /// Pages and their line keys (a run with an index, which samples them by host).
    pages: InputHandleVec<u64, PageRow>,
}

impl Learning {
    /// Builds the pass's dataflow: occurrences (and the sampled pages' occurrences) meet by
    /// host, corpus-wide ones by line, in sorted runs read once in order; the learned
    /// entries and every worker's count of pages read are broadcast.
    fn build(
        &self,
        worker: &mut Worker,
        job: &JobConfig,
        me: &PassWorker,
        spill: &Spill,
    ) -> LearnInputs {
        let (rule, seed) = (job.spec.boilerplate.clone(), job.spec.seed);
        let index_plan = job.index.clone();
        let part = u32::try_from(me.index).expect("few workers");
        // One copy of the learned set per process: its first worker keeps it.
        let keeps_entries = me.first_of_process;
        worker.dataflow::<u64, _, _>(|scope| {
            let (occurrences, stream) = scope.new_input::<Vec<Occurrence>>();
            let (pages_read, pages_read_stream) = scope.new_input::<Vec<u64>>();
            let (pages, page_stream) = scope.new_input::<Vec<PageRow>>();
            let by_host = Exchange::new(|p: &PageRow| neardup_core::hash::route(p.host()));
            let sample_rule = rule.clone();
            let sampled = collect_sorted(page_stream, by_host, "SampleTemplates", spill.clone(), {
                move || Ok(SampleDrain::new(sample_rule.clone(), seed, index_plan.as_deref(), part))
            });
            let stream = stream.concat(sampled);
            // A host's occurrences meet on one worker; corpus-wide ones spread by line.
            let by_scope = Exchange::new(|o: &Occurrence| {
                neardup_core::hash::route(if o.0 == neardup_text::CORPUS_SCOPE { o.1 } else { o.0 })
            });
            let entries =
                collect_sorted(stream, by_scope, "LearnBoilerplate", spill.clone(), move || {
                    Ok(LearnDrain(Learner::new(rule.clone())))
                });
            let learned = self.entries.clone();
            entries
                .broadcast()
                .inspect(move |e| {
                    if keeps_entries {
                        learned.borrow_mut().push(*e);
                    }
                })
                .probe_with(&self.done);
            let read_pages = self.pages.clone();
            pages_read_stream
                .broadcast()
                .inspect(move |n| read_pages.set(read_pages.get() + n))
                .probe_with(&self.done);
            LearnInputs { occurrences, pages_read, pages }
        })
    }
}

impl LearnInputs {
    /// Reads the worker's share and sends its pages' occurrences (or, with an index, its
    /// pages); a worker that cannot read tells the others. Returns the pages sent and
    /// whether the share was read whole. A worker that cannot read sets the pass's stop
    /// flag (its spill's).
    fn send_share(
        &mut self,
        reading: &Reading,
        at: &mut PassAt<'_>,
        spill: &Spill,
        worker: &mut Worker,
    ) -> (u64, bool) {
        let job = &reading.run.job;
        let heartbeat = &mut *at.heartbeat;
        let (rule, seed) = (&job.spec.boilerplate, job.spec.seed);
        let (mut scratch, mut one) = (LineScratch::default(), Vec::new());
        let mut local_pages = 0u64;
        let (_totals, error) = reading.read(
            &at.me,
            &at.abort,
            |record, lines| {
                if let Record::Doc(doc) = record
                    && let Some(url) = doc.meta.as_deref().and_then(|m| m.url.as_deref())
                {
                    if let Some(index_plan) = &job.index {
                        let (generation, id) = (index_plan.generation, doc.doc.get());
                        if let Some(page) = PageRow::of_batch(generation, id, url, lines, seed) {
                            local_pages += 1;
                            self.pages.send(page);
                        }
                        return false;
                    }
                    // The lines' keys, computed as the record was kept, serve again when the
                    // learned lines are left out.
                    neardup_text::occurrences(lines, url, rule, seed, &mut scratch, &mut one);
                    if !one.is_empty() {
                        local_pages += 1;
                        one.drain(..).for_each(|o| self.occurrences.send(o));
                    }
                }
                false
            },
            || {
                worker.step();
                heartbeat.beat();
            },
        );
        let read_all = error.is_none();
        match error {
            // Told the others with the spill errors of learning, at the end.
            Some(ShareError::Keep(e)) => {
                spill.settle::<()>(0, Err(e));
            }
            Some(e) => at.fail(PassFailure::of_share(at.me.index, &e, Some("boilerplate"))),
            None => {}
        }
        (local_pages, read_all)
    }
}

/// How the corpus passes read: the first one reads the files and keeps the records, in
/// memory up to the spill limit and spilled beyond, for the passes after it (see
/// [`crate::storage::record_log`]).
#[derive(Clone)]
pub(crate) struct Reading {
    /// The run: its job, workers and memory plan (where kept records spill, and how much
    /// of them a worker holds in memory).
    pub run: RunPlan,
    /// The records kept, by worker slot.
    pub kept: KeptShares,
    /// Counts the reading of files.
    pub progress: Option<Arc<Progress>>,
}

impl Reading {
    /// Reads worker `index`'s share: what an earlier pass kept, or the files (kept then).
    fn read(
        &self,
        me: &PassWorker,
        abort: &AtomicBool,
        on_record: impl FnMut(Record, &[Option<LineKey>]) -> bool,
        between_batches: impl FnMut(),
    ) -> (ReadTotals, Option<ShareError>) {
        let mut earlier = self.kept.take(me.slot);
        let share = match &mut earlier {
            Some(kept) => Share::Reread(kept),
            None => Share::ReadAndKeep {
                dir: crate::storage::spill::worker_folder(
                    &self.run.memory.dir,
                    "records",
                    me.index,
                ),
                limit_bytes: self.run.memory.limit_bytes,
            },
        };
        let job = &self.run.job;
        let progress = self.progress.as_deref();
        let at = ReadContext { job, plan: &me.plan, abort, progress };
        let (totals, error, kept) = read_once(at, share, on_record, between_batches);
        if let Some(kept) = kept.or(earlier) {
            self.kept.put(me.slot, kept);
        }
        (totals, error)
    }
}
