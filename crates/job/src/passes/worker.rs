//! One worker's dataflow: how the stages are wired, how the source is paced in rounds, and
//! how the worker waits for the end and reports.
//!
//! Every worker builds the same dataflow; the probes see each stage end (`Stage::PROBED`),
//! for the timings in the summary, the progress display and the failpoints after them.

// `ok_err` splits a stream in two: its `Err` is the second stream's record, not an error.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use neardup_core::DocId;
use neardup_io::{Item, PairRow, RejectedRecord};
use neardup_text::Boilerplate;
use timely::dataflow::StreamVec;
use timely::dataflow::operators::core::{Concat, Exchange, Input, OkErr, Probe};
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::{Broadcast, Map};
use timely::worker::Worker;

use crate::input::pass_worker::PassWorker;
use crate::input::sign::Signer;
use crate::input::source::KeptShares;
use crate::input::work_area::{UnitEnd, WorkArea};
use crate::operators::assign_clusters::assign_clusters;
use crate::operators::collect::{Keyed, Spill};
use crate::operators::dedup_ids::{DedupIds, IdOutcome};
use crate::operators::doc_store::{
    StoreDocs, StoreKey, Stored, count_in, doc_in, representative_in,
};
use crate::operators::env::OperatorEnv;
use crate::operators::exact_groups::{ExactGroups, Grouped};
use crate::operators::failure::StageFailure;
use crate::operators::first_occurrences::FirstOccurrences;
use crate::operators::gather_reports::GatherReports;
use crate::operators::index::fetch::FetchIndexed;
use crate::operators::index::held::WriteHeld;
use crate::operators::index::link::LinkClusters;
use crate::operators::index::probe::ProbeIndex;
use crate::operators::index::records::{IndexKey, IndexMatch};
use crate::operators::index::size::SizeJoined;
use crate::operators::index::verify::VerifyIndexed;
use crate::operators::keep_units::KeepUnits;
use crate::operators::kept_paragraphs::KeptParagraphs;
use crate::operators::name_clusters::NameClusters;
use crate::operators::reduce_buckets::ReduceBuckets;
use crate::operators::sign_docs::SignDocs;
use crate::operators::sink::PartSink;
use crate::operators::store::DocStore;
use crate::operators::verify_candidates::{Near, VerifyCandidates};
use crate::operators::write_documents::{WriteDocuments, Written};
use crate::operators::write_kept::WriteKept;
use crate::operators::write_parts::WritePairs;
use crate::passes::feed::{Inputs, Source, feed};
use crate::passes::runner::{PassAt, PassFailure, Stopped, WorkerPass};
use crate::reporting::progress::Progress;
use crate::reporting::stage::{PerStage, Stage};
use crate::reporting::stats::{BoilerplateStats, ReadingStats, WorkerStats};
use crate::reporting::summary::{Resolved, StageSeconds, file_metadata, peak_memory_bytes};
use crate::reporting::worker_report::WorkerReport;

use crate::settings::plan::RunPlan;
use crate::storage::records::{ContentKey, DocItem, Edge, IdClaim, NodeInfo, SignedDoc, Verdict};
use crate::storage::routing::{id_hash, route_doc, route_id};
use crate::storage::spill::{self, RemoveDir};

/// The main pass: what every worker of it shares. Given to the pass runner, each worker
/// reads its share, signs, matches, clusters and writes its parts (see the module
/// documentation).
pub(crate) struct MainPass {
    /// The run, resolved once.
    pub(crate) run: RunPlan,
    pub(crate) signer: Signer,
    /// Input paths by file index, for the `source` column.
    pub(crate) sources: Arc<[Arc<str>]>,
    pub(crate) progress: Arc<Progress>,
    pub(crate) start: Instant,
    pub(crate) learned: LearnedPass,
    /// The records the corpus passes read, replayed instead of reading the files again.
    pub(crate) kept: KeptShares,
    /// The boilerplate learned, which the main pass leaves out of the pages it replays.
    pub(crate) boilerplate: Option<Arc<Boilerplate>>,
    /// A digest of what the corpus passes learned, part of every unit's name in the work
    /// area (`crate::input::work_area::learned_digest`).
    pub(crate) learned_digest: u64,
    /// How many `neardup sign` tasks signed into the work area (`crate::input::sign_task`).
    pub(crate) signed_tasks: usize,
    /// Whether the workers read whole files: `neardup sign` tasks started in the work
    /// area, and their units are whole files.
    pub(crate) whole_files: bool,
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
    /// Whether what the passes learn was replayed from the work area instead.
    pub(crate) corpus_statistics_reused: bool,
}

/// A stream of the main dataflow.
type Stream<'s, D> = StreamVec<'s, u64, D>;

/// One worker of the main pass: what its operators share ([`OperatorEnv`]: where they
/// spill and write, the document store, the statistics and the one place their failures
/// go), and the probes that see each stage end.
struct WorkerEnv {
    me: PassWorker,
    /// What every operator of the worker is given.
    ops: OperatorEnv,
    /// When each probed stage was seen done, in seconds from the start.
    stage_done: Rc<RefCell<PerStage<Option<f64>>>>,
    /// Every worker's report, gathered once all parts are written.
    reports: Rc<RefCell<Vec<WorkerReport>>>,
    probes: PerStage<ProbeHandle<u64>>,
    /// Done when every worker's report is in.
    finished: ProbeHandle<u64>,
    /// The frontier of everything the source's rounds feed, for pacing the source.
    paced: ProbeHandle<u64>,
    /// This worker's units of input in the work area.
    area: Rc<WorkArea>,
}

impl WorkerEnv {
    fn new(me: PassWorker, context: &MainPass, abort: &Arc<AtomicBool>) -> WorkerEnv {
        let MainPass { run, learned, .. } = context;
        let (job, memory) = (&run.job, &run.memory);
        let area = Rc::new(WorkArea::open(job, &me.plan, context.learned_digest));
        let mut own = WorkerStats::default();
        if me.index == 0 {
            own.boilerplate = learned.stats.clone();
            own.work.corpus_statistics_reused = u64::from(learned.corpus_statistics_reused);
            own.work.signed_tasks = context.signed_tasks as u64;
        }
        if me.first_of_process {
            own.resources.spilled_bytes = learned.spilled_bytes + learned.kept_spilled_bytes;
            own.boilerplate.spilled_bytes = learned.spilled_bytes;
        }
        let stats = Rc::new(RefCell::new(own));
        let store = Rc::new(RefCell::new(DocStore::default()));
        let spill = Spill {
            dir: spill::worker_folder(&memory.dir, "spill", me.index),
            limit_bytes: memory.limit_bytes,
            stats: stats.clone(),
            error: Rc::default(),
            abort: abort.clone(),
        };
        let metadata = {
            let (job, store, spec) = (job.clone(), store.clone(), run.effective.clone());
            Rc::new(move || file_metadata(&job, &spec, &Resolved::of(&job, store.borrow().blocks)))
        };
        let sink = PartSink {
            output: job.output.clone(),
            part: me.index,
            metadata,
            stats: stats.clone(),
            error: spill.error.clone(),
            abort: abort.clone(),
        };
        WorkerEnv {
            me,
            ops: OperatorEnv { spill, sink, store, stats },
            stage_done: Rc::default(),
            reports: Rc::default(),
            probes: PerStage::default(),
            finished: ProbeHandle::new(),
            paced: ProbeHandle::new(),
            area,
        }
    }

    /// This worker's report, taken once its parts are written (so its counters are final).
    fn report(&self, start: Instant) -> impl FnMut() -> WorkerReport + 'static {
        let (stats, store, stage_done) =
            (self.ops.stats.clone(), self.ops.store.clone(), self.stage_done.clone());
        let (index, first_of_process) = (self.me.index, self.me.first_of_process);
        move || {
            let now = start.elapsed().as_secs_f64();
            let mut seconds = StageSeconds { total: now, ..StageSeconds::default() };
            for stage in Stage::PROBED {
                seconds.set(stage, stage_done.borrow().get(stage).unwrap_or(now));
            }
            let mut stats = stats.borrow().clone();
            stats.resources.peak_memory_bytes = peak_memory_bytes().unwrap_or(0);
            if first_of_process {
                stats.resources.remote_retries = neardup_io::remote::retries();
            }
            let blocks = store.borrow().blocks;
            WorkerReport { worker: index, stats, seconds, blocks, ..WorkerReport::default() }
        }
    }

    /// Notes the stages whose probes are done (and stops at their failpoints); returns the
    /// stage the run is in.
    fn note_stages(&self, start: Instant) -> Stage {
        let now = start.elapsed().as_secs_f64();
        let mut done = self.stage_done.borrow_mut();
        for stage in Stage::PROBED {
            let slot = done.get_mut(stage);
            if slot.is_none() && self.probes.get(stage).done() {
                *slot = Some(now);
                if self.me.index == 0 {
                    tracing::info!(stage = stage.name(), seconds = now, "stage done");
                }
                // In every process, so that a test can stop any one of them there.
                if self.me.first_of_process {
                    neardup_io::failpoint::crash(&stage.failpoint());
                }
            }
        }
        reached(&done)
    }
}

impl WorkerPass for MainPass {
    type Output = WorkerReport;

    /// Units signed by `neardup sign` tasks are whole files: a run over them reads so.
    fn whole_files(&self) -> bool {
        self.whole_files
    }

    /// Builds and runs one worker's dataflow; returns the merged report of all workers.
    fn work(&self, worker: &mut Worker, at: &mut PassAt<'_>) -> Result<WorkerReport, Stopped> {
        main_pass(self, worker, at)
    }
}

/// One worker of the main pass (see [`MainPass`]'s `work`).
fn main_pass(
    context: &MainPass,
    worker: &mut Worker,
    at: &mut PassAt<'_>,
) -> Result<WorkerReport, Stopped> {
    let job = &context.run.job;
    let me = at.me.clone();
    // With fewer files than four per worker, every worker reads a byte range of each plain
    // JSONL file; other few files are read whole and their records spread, so that every
    // worker signs.
    let spread = !me.plan.ranges() && job.inputs.len() < 4 * me.peers;
    let env = WorkerEnv::new(me, context, &at.abort);
    let _remove_spill = RemoveDir(env.ops.spill.dir.clone());
    let mut inputs = worker.dataflow::<u64, _, _>(|scope| {
        let (items_in, items) = scope.new_input::<Vec<Item>>();
        let (replayed_in, replayed) = scope.new_input::<Vec<Result<SignedDoc, RejectedRecord>>>();
        let (ends_in, ends) = scope.new_input::<Vec<UnitEnd>>();
        let items = if spread { items.exchange(|i: &Item| route_doc(i.doc())) } else { items };
        main_dataflow(Fed { items, replayed, ends, spread }, &env, context);
        Inputs { items: items_in, replayed: replayed_in, ends: ends_in }
    });
    let source = Source {
        job,
        me: &env.me,
        area: &env.area,
        stats: &env.ops.stats,
        paced: &env.paced,
        abort: &at.abort,
        progress: &context.progress,
        round_bytes: context.run.memory.round_bytes,
        kept: &context.kept,
        boilerplate: context.boilerplate.as_deref(),
    };
    context.progress.start_share();
    let (totals, rounds, error) = feed(worker, at.heartbeat, &mut inputs, &source, spread);
    context.progress.end_share();
    env.ops.stats.borrow_mut().reading = ReadingStats {
        records_read: totals.records,
        input_bytes: totals.bytes,
        skipped_records: totals.skipped.clone(),
        trailing_zero_bytes: totals.trailing_zero_bytes,
        input_rounds: rounds,
    };
    let index = env.me.index;
    if let Some(e) = error {
        at.fail(PassFailure::of_share(index, &e, None));
    }
    drop(inputs);
    tracing::debug!(
        worker = env.me.index,
        records = totals.records,
        bytes = totals.bytes,
        "input read"
    );

    let progress = &context.progress;
    at.step_until(worker, || {
        progress.reach(env.note_stages(context.start));
        env.finished.done()
    })?;
    progress.reach(Stage::Writing);
    // What the stages could not write or spill fails every process.
    match env.ops.failure() {
        Some(StageFailure::Output(message)) => {
            at.fail(PassFailure::Output { worker: index, message });
        }
        Some(StageFailure::Spill(message)) => {
            at.fail(PassFailure::Spill { worker: index, message })
        }
        None => {}
    }
    let all = std::mem::take(&mut *env.reports.borrow_mut());
    assert_eq!(all.len(), env.me.peers, "every worker reports once");
    Ok(WorkerReport::merge(all))
}

/// Wires the main dataflow from the items read to the reports gathered, one stage at a
/// time.
fn main_dataflow<'s>(fed: Fed<'s>, env: &WorkerEnv, context: &MainPass) {
    let signed = read_and_sign(fed, env, context);
    let grouped = ids_and_exact(signed.claims, env, context);
    let stored = signed
        .docs
        .concat(grouped.representatives.exchange(|k| route_doc(DocId::from_raw(k.key.0))))
        .concat(grouped.counts.broadcast())
        .store_docs(context.run.job.clone(), &env.ops);
    let matched = match_and_verify(stored, env, context);
    let pairs_written = grouped.exact_pairs.concat(matched.near_pairs).write_pairs(&env.ops);
    let assignments = cluster(grouped.exact_edges, matched.near_edges, matched.index, env, context);
    let documents_written = write_documents(
        signed.rejects.concat(grouped.repeated_ids).concat(assignments),
        env,
        context,
    );
    pairs_written
        .concat(documents_written)
        .gather_reports(env.report(context.start), env.reports.clone())
        .probe_with(&env.finished);
}

/// What reading and signing give the stages after them.
struct Signed<'s> {
    /// Every record's claim to its id, exchanged by id.
    claims: Stream<'s, IdClaim>,
    /// Signed documents for the store, exchanged by document.
    docs: Stream<'s, StoreKey>,
    /// Rejected records' decisions, exchanged by document.
    rejects: Stream<'s, Keyed<DocId, Verdict>>,
}

/// What the source feeds the main dataflow.
struct Fed<'s> {
    /// Records (or JSONL lines) read.
    items: Stream<'s, Item>,
    /// Signed records of the units an earlier run kept in the work area.
    replayed: Stream<'s, Result<SignedDoc, RejectedRecord>>,
    /// The end of each unit read.
    ends: Stream<'s, UnitEnd>,
    /// Whether records were spread over workers to be signed.
    spread: bool,
}

/// Parses and signs the items read, keeping each unit's signed records in the work area,
/// and adds the records replayed from it; every record, document or reject, claims its id.
fn read_and_sign<'s>(fed: Fed<'s>, env: &WorkerEnv, context: &MainPass) -> Signed<'s> {
    let Fed { items, replayed, ends, spread } = fed;
    let job = context.run.job.clone();
    let fields = env.me.plan.options.clone();
    let records = items.probe_with(&env.paced).map(move |item| match item {
        Item::Record(record) => record,
        Item::Line(line) => {
            let file = &job.inputs[line.doc.file_index() as usize];
            neardup_io::parse_line(file, &fields, line.doc, &line.bytes)
        }
    });
    let signed = records.sign_docs(context.signer.clone(), &env.ops);
    // Records are kept on their way, so the stages after them see their units committed.
    let signed = signed.keep_units(ends, env.area.clone(), spread, &env.ops);
    let (docs, rejects): (Stream<_>, Stream<_>) = signed
        .concat(replayed)
        .probe_with(env.probes.get(Stage::ReadAndSign))
        .ok_err(|signed| signed);
    let claims = docs
        .clone()
        .map(|doc: SignedDoc| id_claim(&doc))
        .concat(rejects.clone().flat_map(|r: RejectedRecord| reject_claim(&r)));
    let docs = docs.map(doc_in);
    let rejects = rejects.map(|r| Keyed { key: r.doc, value: Verdict::Rejected(r) });
    Signed {
        claims: claims.exchange(|c: &IdClaim| route_id(c.id_hash)).probe_with(&env.paced),
        docs: docs.exchange(|k| route_doc(DocId::from_raw(k.key.0))).probe_with(&env.paced),
        rejects: rejects.exchange(|v| route_doc(v.key)).probe_with(&env.paced),
    }
}

/// What settling ids and grouping exact copies give the stages after them.
struct Exact<'s> {
    /// Records that repeat an earlier record's id.
    repeated_ids: Stream<'s, Keyed<DocId, Verdict>>,
    exact_pairs: Stream<'s, PairRow>,
    exact_edges: Stream<'s, Edge>,
    /// The document that represents each group of exact copies in matching.
    representatives: Stream<'s, StoreKey>,
    /// How many representatives each worker sent, for the store to know when it has all.
    counts: Stream<'s, StoreKey>,
}

/// The first record of an id keeps it; the documents that keep theirs are grouped by
/// content into exact copies.
fn ids_and_exact<'s>(
    claims: Stream<'s, IdClaim>,
    env: &WorkerEnv,
    context: &MainPass,
) -> Exact<'s> {
    let index = env.me.index;
    let (accepted, repeated_ids): (Stream<_>, Stream<_>) =
        claims.dedup_ids(&env.ops).ok_err(|o| match o {
            IdOutcome::Accepted(key) => Ok(key),
            IdOutcome::Duplicate { doc, first } => {
                Err(Keyed { key: doc, value: Verdict::DuplicateId { first } })
            }
        });
    // Pairs and their edges one way, representatives and their counts the other.
    let (exact, representatives): (Stream<_>, Stream<_>) = accepted
        .exact_groups(context.run.job.index.is_some(), &env.ops)
        .probe_with(env.probes.get(Stage::IdsAndExact))
        .ok_err(move |g| match g {
            Grouped::Pair(p) => Ok(Ok(p)),
            Grouped::Edge(e) => Ok(Err(e)),
            Grouped::Representative(doc) => Err(Ok(representative_in(doc))),
            Grouped::RepresentativeCount(n) => Err(Err(count_in(index, n))),
        });
    let (exact_pairs, exact_edges): (Stream<_>, Stream<_>) = exact.ok_err(|p| p);
    let (representatives, counts): (Stream<_>, Stream<_>) = representatives.ok_err(|r| r);
    Exact { repeated_ids, exact_pairs, exact_edges, representatives, counts }
}

/// What matching gives the stages after it.
struct Matched<'s> {
    near_pairs: Stream<'s, PairRow>,
    near_edges: Stream<'s, Edge>,
    /// With an index: the batch's documents that match indexed ones.
    index: Option<Stream<'s, IndexMatch>>,
}

/// Stored documents' bucket keys meet in buckets, whose candidates are verified; with an
/// index, the keys also probe it and become its new generation.
fn match_and_verify<'s>(
    stored: Stream<'s, Stored>,
    env: &WorkerEnv,
    context: &MainPass,
) -> Matched<'s> {
    let job = &context.run.job;
    let index = job.index.as_ref().map(|plan| {
        stored
            .clone()
            .map(|s: Stored| {
                let r = s.record();
                IndexKey { key: r.key.get(), doc: r.doc }
            })
            .probe_index(plan.clone(), job.spec.buckets.clone(), &env.ops)
            .fetch_indexed(plan.clone(), &env.ops)
            .verify_indexed(&env.ops)
    });
    let (near_pairs, near_edges): (Stream<_>, Stream<_>) = stored
        .flat_map(|s| match s {
            Stored::Bucket(r) => Some(r),
            Stored::Content(_) => None,
        })
        .reduce_buckets(job.spec.buckets.clone(), &env.ops)
        .probe_with(env.probes.get(Stage::Buckets))
        .verify_candidates(&env.ops)
        .probe_with(env.probes.get(Stage::Verify))
        .ok_err(|n| match n {
            Near::Pair(p) => Ok(p),
            Near::Edge(e) => Err(e),
        });
    Matched { near_pairs, near_edges, index }
}

/// Edges become clusters, each named by its kept document; with an index, clusters that
/// join earlier ones are linked to them and sized.
fn cluster<'s>(
    exact_edges: Stream<'s, Edge>,
    near_edges: Stream<'s, Edge>,
    index_matches: Option<Stream<'s, IndexMatch>>,
    env: &WorkerEnv,
    context: &MainPass,
) -> Stream<'s, Keyed<DocId, Verdict>> {
    let job = &context.run.job;
    let ops = &env.ops;
    let names = exact_edges.clone().concat(near_edges.clone()).flat_map(|e: Edge| [e.a, e.b]);
    let assignments = assign_clusters(exact_edges, near_edges, job.spec.decision.keep, ops)
        .probe_with(env.probes.get(Stage::Cluster));
    let links = index_matches.map(|matches| matches.link_clusters(assignments.clone(), ops));
    let (mut assignments, joined) = assignments.name_clusters(names, links, ops);
    if job.index.is_some() {
        assignments = assignments.concat(joined.size_joined(ops));
    }
    assignments
}

/// Every record's decision is written to `documents/`, and with `--write-kept` the kept
/// records to the kept dataset. With paragraph-level dedup, the paragraphs of kept
/// documents meet by key first, and those that repeat one kept before them go back to their
/// documents' rows.
fn write_documents<'s>(
    verdicts: Stream<'s, Keyed<DocId, Verdict>>,
    env: &WorkerEnv,
    context: &MainPass,
) -> Stream<'s, ()> {
    let job = &context.run.job;
    let mut items = verdicts.clone().map(|v: Keyed<DocId, Verdict>| Keyed {
        key: (v.key, 0),
        value: DocItem::Verdict(v.value),
    });
    let paragraphs = job.spec.paragraphs.enabled;
    if paragraphs {
        let removal = job.spec.decision.removal;
        let repeated = verdicts
            .kept_paragraphs(&env.ops, removal)
            .first_occurrences(job.index.clone(), &env.ops);
        items = items.concat(repeated);
    }
    let written = items.write_documents(&env.ops, context.sources.clone(), job);
    let kept = written.clone().flat_map(|w| match w {
        Written::Kept(kept) => Some(kept),
        Written::Held(_) => None,
    });
    let mut done = match &job.write_kept {
        Some(dir) => kept.write_kept(
            &env.me,
            job.clone(),
            dir.clone(),
            &env.ops,
            context.boilerplate.clone(),
        ),
        None => kept.flat_map(|_| None::<()>),
    };
    if let Some(plan) = job.index.as_ref().filter(|_| paragraphs) {
        let held = written.flat_map(|w| match w {
            Written::Held(held) => Some(held),
            Written::Kept(_) => None,
        });
        done = done.concat(held.write_held(plan.clone(), &env.ops));
    }
    done
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
