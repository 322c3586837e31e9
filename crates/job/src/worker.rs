//! One worker's dataflow: how the stages are wired, how the source is paced in rounds, and
//! how the worker waits for the end and reports.
//!
//! Every worker builds the same dataflow; the probes see each stage end (`Stage::PROBED`),
//! for the timings in the summary, the progress display and the failpoints after them.

// `ok_err` splits a stream in two: its `Err` is the second stream's record, not an error.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use neardup_core::DocId;
use neardup_io::{Item, Record, RejectedRecord};
use neardup_text::{Boilerplate, LineKey};
use timely::dataflow::StreamVec;
use timely::dataflow::operators::core::{Concat, Exchange, Input, OkErr, Probe};
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::{Broadcast, Map};
use timely::worker::Worker;

use crate::cluster::Heartbeat;
use crate::config::JobConfig;
use crate::error::{JobError, ReadFailure, error_chain};
use crate::operators::{
    DedupIds, DocStore, ExactGroups, FetchIndexed, GatherReports, Grouped, IdOutcome, IndexKey,
    Keyed, LinkClusters, NameClusters, Near, PartSink, ProbeIndex, ReduceBuckets, SignDocs,
    SizeJoined, Spill, StoreDocs, Stored, VerifyCandidates, VerifyIndexed, WriteDocuments,
    WriteKept, WritePairs, assign_clusters, count_in, doc_in, representative_in,
};
use crate::progress::Progress;
use crate::records::{ContentKey, Edge, IdClaim, NodeInfo, SignedDoc, Verdict};
use crate::routing::{id_hash, route_doc, route_id};
use crate::sign::{Signer, kept_page_text};
use crate::source::{KeptShares, Share, ShareError, read_items, read_once};
use crate::spill::{self, RemoveDir};
use crate::stage::{PerStage, Stage};
use crate::stats::{BoilerplateStats, WorkerStats};
use crate::summary::{Resolved, StageSeconds, file_metadata, peak_memory_bytes};
use crate::worker_report::{Failure, WorkerReport};

/// What every worker of a run shares.
pub(crate) struct RunContext {
    pub(crate) job: Arc<JobConfig>,
    pub(crate) signer: Signer,
    /// Input paths by file index, for the `source` column.
    pub(crate) sources: Arc<[Arc<str>]>,
    /// Set when this process gives up, so its workers stop reading and writing.
    pub(crate) abort: Arc<AtomicBool>,
    pub(crate) progress: Arc<Progress>,
    pub(crate) start: Instant,
    pub(crate) learned: LearnedPass,
    pub(crate) memory: MemoryPlan,
    /// The records the corpus passes read, replayed instead of reading the files again.
    pub(crate) kept: KeptShares,
    /// The boilerplate learned, which the main pass leaves out of the pages it replays.
    pub(crate) boilerplate: Option<Arc<Boilerplate>>,
}

/// What the boilerplate pass learned, counted once in the run's statistics.
#[derive(Default)]
pub(crate) struct LearnedPass {
    /// What was learned (counted by worker 0).
    pub(crate) stats: BoilerplateStats,
    /// Bytes this process spilled in the pass (counted by its first worker).
    pub(crate) spilled_bytes: u64,
    /// Bytes this process spilled keeping the records the corpus passes read.
    pub(crate) kept_spilled_bytes: u64,
    /// Workers per process.
    pub(crate) local_workers: usize,
}

/// How a worker spends its share of the memory budget.
pub(crate) struct MemoryPlan {
    /// The folder below which each worker spills.
    pub(crate) dir: PathBuf,
    /// Bytes each collecting stage holds before spilling.
    pub(crate) limit_bytes: usize,
    /// Bytes of text read per round.
    pub(crate) round_bytes: u64,
}

/// Builds and runs one worker's dataflow; returns the merged report of all workers.
pub(crate) fn run_worker(
    worker: &mut Worker,
    heartbeat: &mut Heartbeat,
    context: &RunContext,
) -> Result<WorkerReport, JobError> {
    let RunContext {
        job,
        signer,
        sources,
        abort,
        progress,
        start,
        learned,
        memory,
        kept,
        boilerplate,
    } = context;
    let start = *start;
    let index = worker.index();
    let peers = worker.peers();
    let mut own = WorkerStats::default();
    if index == 0 {
        own.boilerplate = learned.stats.clone();
    }
    let first_of_process = index.is_multiple_of(learned.local_workers.max(1));
    if first_of_process {
        own.spilled_bytes = learned.spilled_bytes + learned.kept_spilled_bytes;
        own.boilerplate.spilled_bytes = learned.spilled_bytes;
    }
    let stats = Rc::new(RefCell::new(own));
    let store = Rc::new(RefCell::new(DocStore::default()));
    let write_error = Rc::new(RefCell::new(None));
    let read_error: Rc<RefCell<Option<ReadFailure>>> = Rc::new(RefCell::new(None));
    let spill_error: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    let stage_done: Rc<RefCell<PerStage<Option<f64>>>> = Rc::default();
    let reports: Rc<RefCell<Vec<WorkerReport>>> = Rc::new(RefCell::new(Vec::new()));
    let probes = PerStage::<ProbeHandle<u64>>::default();
    let finished = ProbeHandle::<u64>::new();
    // The frontier of everything the source's rounds feed, for pacing the source.
    let paced = ProbeHandle::<u64>::new();
    // With fewer files than four per worker, every worker reads a byte range of each plain
    // JSONL file; other few files are read whole and their records spread, so that every
    // worker signs.
    let plan = kept.plan(index % learned.local_workers.max(1), worker, heartbeat, job)?;
    let spread = !plan.ranges() && job.inputs.len() < 4 * peers;
    let spill_dir = spill::worker_folder(&memory.dir, "spill", index);
    let _remove_spill = RemoveDir(spill_dir.clone());
    let spill = Spill {
        dir: spill_dir,
        limit_bytes: memory.limit_bytes,
        stats: stats.clone(),
        error: spill_error.clone(),
        abort: abort.clone(),
    };

    let metadata = {
        let (job, store) = (job.clone(), store.clone());
        Rc::new(move || file_metadata(&job, &Resolved::of(&job, store.borrow().blocks)))
    };
    let sink = PartSink {
        output: job.output.clone(),
        part: index,
        metadata,
        stats: stats.clone(),
        error: write_error.clone(),
        abort: abort.clone(),
    };
    // This worker's report, taken once its parts are written (so its counters are final).
    let report = {
        let (stats, store, stage_done) = (stats.clone(), store.clone(), stage_done.clone());
        let (write_error, read_error) = (write_error.clone(), read_error.clone());
        let spill_error = spill_error.clone();
        move || {
            let now = start.elapsed().as_secs_f64();
            let mut seconds = StageSeconds { total: now, ..StageSeconds::default() };
            for stage in Stage::PROBED {
                seconds.set(stage, stage_done.borrow().get(stage).unwrap_or(now));
            }
            let failure = match (read_error.borrow().clone(), write_error.borrow().as_ref()) {
                (Some(failure), _) => Some((index, Failure::Input(failure))),
                (None, Some(e)) => Some((index, Failure::Output(error_chain(e)))),
                (None, None) => spill_error.borrow().clone().map(|m| (index, Failure::Spill(m))),
            };
            let mut stats = stats.borrow().clone();
            stats.peak_memory_bytes = peak_memory_bytes().unwrap_or(0);
            if first_of_process {
                stats.remote_retries = neardup_io::remote::retries();
            }
            let blocks = store.borrow().blocks;
            WorkerReport {
                worker: index,
                stats,
                seconds,
                blocks,
                failure,
                ..WorkerReport::default()
            }
        }
    };

    let mut input = worker.dataflow::<u64, _, _>(|scope| {
        let (input, items) = scope.new_input::<Vec<Item>>();
        let items = if spread { items.exchange(|i: &Item| route_doc(i.doc())) } else { items };
        let records = {
            let job = job.clone();
            let fields = job.spec.input.field_names();
            items.probe_with(&paced).map(move |item| match item {
                Item::Record(record) => record,
                Item::Line(line) => {
                    let file = &job.inputs[line.doc.file_index() as usize];
                    neardup_io::parse_line(file, &fields, line.doc, &line.bytes)
                }
            })
        };
        let (docs, rejects): (StreamVec<_, _>, StreamVec<_, _>) = records
            .sign_docs(signer.clone(), stats.clone())
            .probe_with(probes.get(Stage::ReadAndSign))
            .ok_err(|signed| signed);
        // Every record with an id claims it: documents and rejects alike.
        let claims = docs
            .clone()
            .map(|doc: SignedDoc| id_claim(&doc))
            .concat(rejects.clone().flat_map(|r: RejectedRecord| reject_claim(&r)));
        let docs = docs.map(doc_in);
        let rejects = rejects.map(|r| Keyed { key: r.doc, value: Verdict::Rejected(r) });
        let claims = claims.exchange(|c: &IdClaim| route_id(c.id_hash)).probe_with(&paced);
        let docs = docs.exchange(|k| route_doc(DocId::from_raw(k.key.0))).probe_with(&paced);
        let rejects = rejects.exchange(|v| route_doc(v.key)).probe_with(&paced);

        let (accepted, repeated_ids): (StreamVec<_, _>, StreamVec<_, _>) =
            claims.dedup_ids(spill.clone()).ok_err(|o| match o {
                IdOutcome::Accepted(key) => Ok(key),
                IdOutcome::Duplicate { doc, first } => {
                    Err(Keyed { key: doc, value: Verdict::DuplicateId { first } })
                }
            });

        // Pairs and their edges one way, representatives and their counts the other.
        let (exact, representatives): (StreamVec<_, _>, StreamVec<_, _>) = accepted
            .exact_groups(job.index.is_some(), spill.clone())
            .probe_with(probes.get(Stage::IdsAndExact))
            .ok_err(move |g| match g {
                Grouped::Pair(p) => Ok(Ok(p)),
                Grouped::Edge(e) => Ok(Err(e)),
                Grouped::Representative(doc) => Err(Ok(representative_in(doc))),
                Grouped::RepresentativeCount(n) => Err(Err(count_in(index, n))),
            });
        let (exact_pairs, exact_edges): (StreamVec<_, _>, StreamVec<_, _>) = exact.ok_err(|p| p);
        let (representatives, counts): (StreamVec<_, _>, StreamVec<_, _>) =
            representatives.ok_err(|r| r);

        let store_in = docs
            .concat(representatives.exchange(|k| route_doc(DocId::from_raw(k.key.0))))
            .concat(counts.broadcast());
        let stored = store_in.store_docs(job.clone(), store.clone(), spill.clone());
        // With an index: this run's keys probe it and become its new generation.
        let index_matches = job.index.as_ref().map(|plan| {
            stored
                .clone()
                .map(|s: Stored| {
                    let r = s.record();
                    IndexKey { key: r.key.get(), doc: r.doc }
                })
                .probe_index(plan.clone(), job.spec.buckets.clone(), sink.clone(), spill.clone())
                .fetch_indexed(plan.clone(), sink.clone(), spill.clone())
                .verify_indexed(store.clone(), stats.clone(), spill.clone())
        });
        let near: (StreamVec<_, _>, StreamVec<_, _>) = stored
            .flat_map(|s| match s {
                Stored::Bucket(r) => Some(r),
                Stored::Content(_) => None,
            })
            .reduce_buckets(job.spec.buckets.clone(), spill.clone())
            .probe_with(probes.get(Stage::Buckets))
            .verify_candidates(store.clone(), spill.clone())
            .probe_with(probes.get(Stage::Verify))
            .ok_err(|n| match n {
                Near::Pair(p) => Ok(p),
                Near::Edge(e) => Err(e),
            });
        let (near_pairs, near_edges) = near;
        let pairs_written = exact_pairs.concat(near_pairs).write_pairs(sink.clone(), spill.clone());

        let names = exact_edges.clone().concat(near_edges.clone()).flat_map(|e: Edge| [e.a, e.b]);
        let assignments =
            assign_clusters(exact_edges, near_edges, job.spec.decision.keep, spill.clone())
                .probe_with(probes.get(Stage::Cluster));
        let links =
            index_matches.map(|matches| matches.link_clusters(assignments.clone(), spill.clone()));
        let (mut assignments, joined) =
            assignments.name_clusters(names, links, stats.clone(), spill.clone());
        if job.index.is_some() {
            assignments = assignments.concat(joined.size_joined(stats.clone(), spill.clone()));
        }

        let kept = rejects.concat(repeated_ids).concat(assignments).write_documents(
            store.clone(),
            sink,
            spill.clone(),
            sources.clone(),
            job,
        );
        let documents_written = match &job.write_kept {
            Some(dir) => {
                let (job, stats, error) = (job.clone(), stats.clone(), write_error.clone());
                kept.write_kept(index, peers, job, dir.clone(), stats, error)
            }
            None => kept.flat_map(|_| None::<()>),
        };
        pairs_written
            .concat(documents_written)
            .gather_reports(report, reports.clone())
            .probe_with(&finished);
        input
    });

    // Read in rounds of about `round_bytes` of text; before reading a round, wait until
    // all rounds but the last one are through the first exchanges, so at most two rounds
    // are in flight.
    let round_bytes = memory.round_bytes;
    let mut round: u64 = 0;
    let input_cell = RefCell::new(&mut input);
    let round_text = std::cell::Cell::new(0u64);
    // `text` is the item's size as read (a page's before its boilerplate is left out), so
    // rounds do not depend on what was learned.
    let send_item = |item: Item, text: usize| {
        round_text.set(round_text.get() + text as u64);
        input_cell.borrow_mut().send(item);
        round_text.get() >= round_bytes
    };
    let on_item = |item: Item| {
        let text = item_text(&item);
        send_item(item, text)
    };
    let between_batches = || {
        worker.step();
        heartbeat.beat();
        if round_text.get() < round_bytes {
            return;
        }
        round_text.set(0);
        round += 1;
        input_cell.borrow_mut().advance_to(round);
        while paced.less_than(&(round - 1)) && !heartbeat.aborted() {
            worker.step_or_park(Some(Duration::from_millis(1)));
            heartbeat.beat();
        }
    };
    let (totals, error) = match kept.take(index % learned.local_workers.max(1)) {
        // The corpus passes read the files: their records are replayed.
        Some(share) => {
            // Pages go on without the learned boilerplate, left out here with the keys of
            // their lines that the first pass computed (lines are hashed once).
            let mut content = String::new();
            let on_record = |mut record: Record, lines: &[Option<LineKey>]| {
                let text = record_text(&record);
                if let Record::Doc(doc) = &mut record
                    && let (_, Some(stripped)) =
                        kept_page_text(boilerplate.as_deref(), doc, lines, &mut content)
                {
                    stats.borrow_mut().boilerplate.count(&stripped);
                    std::mem::swap(&mut doc.text, &mut content);
                }
                send_item(Item::Record(record), text)
            };
            let (totals, error, _) = read_once(
                job,
                &plan,
                Share::Replay(Box::new(share)),
                abort,
                None,
                on_record,
                between_batches,
            );
            (totals, error)
        }
        // With records spread over workers, JSONL lines are parsed where they are signed.
        None => {
            let (totals, error) =
                read_items(job, &plan, spread, abort, Some(progress), on_item, between_batches);
            (totals, error.map(ShareError::Input))
        }
    };
    {
        let mut stats = stats.borrow_mut();
        stats.records_read = totals.records;
        stats.input_bytes = totals.bytes;
        stats.skipped_records = totals.skipped.clone();
        stats.trailing_zero_bytes = totals.trailing_zero_bytes;
        stats.input_rounds = round + 1;
    }
    if let Some(error) = error {
        match error {
            ShareError::Input(e) => *read_error.borrow_mut() = Some(ReadFailure::of(&e)),
            ShareError::Keep(e) => {
                spill_error.borrow_mut().get_or_insert_with(|| crate::error::error_chain(&e));
            }
        }
        abort.store(true, Ordering::Relaxed);
    }
    drop(input);
    tracing::debug!(worker = index, records = totals.records, bytes = totals.bytes, "input read");

    while !finished.done() {
        worker.step_or_park(Some(Duration::from_millis(1)));
        heartbeat.beat();
        if heartbeat.aborted() {
            return Err(JobError::Stopped);
        }
        let now = start.elapsed().as_secs_f64();
        let mut done = stage_done.borrow_mut();
        for stage in Stage::PROBED {
            let slot = done.get_mut(stage);
            if slot.is_none() && probes.get(stage).done() {
                *slot = Some(now);
                if index == 0 {
                    tracing::info!(stage = stage.name(), seconds = now, "stage done");
                }
                // In every process, so that a test can stop any one of them there.
                if first_of_process {
                    neardup_io::failpoint::crash(&stage.failpoint());
                }
            }
        }
        progress.reach(reached(&done));
    }
    progress.reach(Stage::Writing);
    let all = std::mem::take(&mut *reports.borrow_mut());
    assert_eq!(all.len(), peers, "every worker reports once");
    Ok(WorkerReport::merge(all))
}

/// A signed document's claim to its id; it goes on to grouping by text if it wins it.
fn id_claim(doc: &SignedDoc) -> IdClaim {
    let node =
        NodeInfo { doc: doc.doc, id: doc.id.clone(), chars: doc.chars, content: doc.content };
    IdClaim {
        id_hash: id_hash(&doc.id),
        doc: doc.doc,
        accepted: Some(ContentKey { node, matched: doc.signature.is_some() }),
    }
}

/// A rejected record's claim to its id, when it has one: a later record with that id is a
/// repeated id all the same.
fn reject_claim(reject: &RejectedRecord) -> Option<IdClaim> {
    let id = reject.id.as_deref()?;
    Some(IdClaim { id_hash: id_hash(id), doc: reject.doc, accepted: None })
}

/// The stage the first unfinished probed stage is (writing once they are all done).
fn reached(done: &PerStage<Option<f64>>) -> Stage {
    Stage::PROBED.into_iter().find(|&stage| done.get(stage).is_none()).unwrap_or(Stage::Writing)
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
