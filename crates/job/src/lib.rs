//! The neardup dataflow: from input files to verified pairs, clusters and decisions.
//!
//! [`run`] executes a checked [`JobConfig`] on timely workers:
//!
//! ```text
//! read in rounds (each worker its share of files) -> spread over workers -> normalise, sign
//!   -> repeated ids (by id hash) -> exact duplicates (by content hash)
//!   -> documents and representatives to their home worker (the document store)
//!   -> one record per band or block table -> exchange by bucket key -> candidate pairs
//!   -> merge joins with the stored signatures at both home workers -> verified pairs
//!   -> verified + exact pairs -> connected components (differential) -> keep/remove
//!   -> pairs/ and documents/ Parquet parts, summary.json, _SUCCESS
//! ```
//!
//! Memory is bounded by [`Topology::memory_budget`]: the source reads in rounds paced by a
//! probe, and every grouping stage collects in sorted runs that spill to disk and merges
//! them once its input is complete (see `ARCHITECTURE.md`).
//!
//! Nothing depends on how records are spread over workers or on the budget: documents are
//! numbered by input position, every group is ordered by `DocId` before it is reduced, and
//! rows are written in a fixed order, so 1, 2 or 8 workers give the same outputs.
//!
//! ```no_run
//! use neardup_job::{JobConfig, JobSpec, Topology, run};
//!
//! let config = JobConfig::new(JobSpec::default(), &["corpus/".into()], "out".into()).unwrap();
//! let summary = run(&config, &Topology::local(2)).unwrap();
//! println!("{} of {} documents kept", summary.counts.kept, summary.counts.records);
//! ```

mod buckets;
mod cluster;
mod config;
mod corpus;
mod operators;
mod outputs;
mod progress;
mod records;
mod report;
mod routing;
mod sign;
mod source;
mod spill;
mod stats;
mod summary;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use differential_dataflow::{AsCollection, VecCollection};
use neardup_core::DocId;
use neardup_io::{Item, Record, RejectedRecord};
use neardup_text::Segmenter;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::core::{Concat, Exchange, Input, Probe};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::{Broadcast, Map, Partition};
use timely::order::TotalOrder;
use timely::progress::Timestamp;
use timely::worker::Worker;

pub use buckets::{BucketReducer, BucketStats};
pub use cluster::{MEMORY_BUDGET_FLOOR, Topology, capture_peer_failures, default_memory_budget};
pub use config::{
    BucketSpec, DecisionSpec, IdfSource, IndexPlan, IndexSpec, InputSpec, JobConfig, JobSpec,
    KeepRule, Method, MethodParams, MinHashSpec, Removal, SimHashSpec, Weighting,
    default_max_record_bytes,
};
pub use progress::{Progress, STAGES};
pub use records::{Assignment, BucketRecord, Candidate, ClusterInfo, Membership, SignedDoc};
pub use sign::{IdfWeights, SignScratch, Signer, page_text};
pub use stats::{BoilerplateStats, IndexStats, WorkerStats};
pub use summary::{
    Counts, LshCounts, Resolved, StageSeconds, Summary, file_metadata, peak_memory_bytes,
};

use crate::cluster::Heartbeat;
use crate::operators::{
    DedupIds, DocStore, ExactGroups, FetchIndexed, GatherReports, Grouped, IdOutcome, IndexKey,
    Keyed, LinkClusters, NameClusters, Near, PartSink, ProbeIndex, ReduceBuckets, SignDocs, Spill,
    StoreDocs, Stored, VerifyCandidates, VerifyIndexed, WriteDocuments, WriteKept, WritePairs,
    assign_clusters, count_in, doc_in, representative_in,
};
use crate::records::{ContentKey, Edge, IdClaim, NodeInfo, Verdict};
use crate::routing::{id_hash, route_doc, route_id};
use crate::source::{ReadPlan, read_items};

/// Errors of checking a job.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A setting is out of range or inconsistent.
    #[error("invalid setting `{key}`: {message}")]
    Invalid {
        /// The job-file key.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The inputs could not be listed.
    #[error("cannot list the input")]
    Input(#[source] neardup_io::Error),
    /// The index could not be read, or was built with other settings.
    #[error("cannot use the index")]
    Index(#[source] neardup_io::Error),
    /// An input, or a folder the run writes, is inside another folder the run changes.
    #[error(
        "{what} \"{}\" is inside the {role} \"{}\", which the run changes; keep them apart",
        .path.display(), .folder.display()
    )]
    Overlap {
        /// What is inside (`input`, a folder the run writes).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// What the folder is to the run.
        role: &'static str,
        /// The folder.
        folder: PathBuf,
    },
}

/// Errors of running a job.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// An input file could not be read (and `input.on_read_error` is `fail`).
    #[error("worker {worker} cannot read the input: {message}")]
    Input {
        /// The worker that read it (global index).
        worker: usize,
        /// The error, with its causes.
        message: String,
    },
    /// A part could not be written.
    #[error("worker {worker} cannot write its output: {message}")]
    Output {
        /// The worker that wrote it.
        worker: usize,
        /// The error, with its causes.
        message: String,
    },
    /// A spill file could not be written or read (is the spill folder's disk full?).
    #[error(
        "worker {worker} cannot spill to disk: {message}; set --spill-dir to a folder with room"
    )]
    Spill {
        /// The worker.
        worker: usize,
        /// The error, with its causes.
        message: String,
    },
    /// The output folder, summary or marker could not be written.
    #[error("cannot write the output")]
    Write(#[source] neardup_io::Error),
    /// The index could not be locked or committed.
    #[error("cannot use the index")]
    Index(#[source] neardup_io::Error),
    /// More records were rejected than `decision.max_reject_ratio` allows.
    #[error(
        "{rejected} of {records} records were rejected (most often: {top_reason}), above max_reject_ratio {max_ratio}"
    )]
    TooManyRejects {
        /// Rejected records.
        rejected: u64,
        /// The most frequent reject reason.
        top_reason: &'static str,
        /// Records read.
        records: u64,
        /// The limit.
        max_ratio: f64,
    },
    /// Timely could not start its workers.
    #[error("cannot start the workers: {0}")]
    Start(String),
    /// The processes did not all connect in time.
    #[error(
        "the {processes} processes did not all connect within {seconds} s: check the hostfile and that every process was started"
    )]
    Connect {
        /// Processes expected.
        processes: usize,
        /// The timeout.
        seconds: u64,
    },
    /// A process stopped sending anything.
    #[error(
        "process {process} has sent nothing for {seconds} s, so the job cannot finish; a process cannot rejoin a running job: rerun it"
    )]
    PeerSilent {
        /// The silent process.
        process: usize,
        /// How long it has been silent.
        seconds: u64,
    },
    /// The connection to a process broke (it died, or the network failed).
    #[error(
        "lost the connection to process {process} ({message}); a process cannot rejoin a running job: rerun it"
    )]
    PeerLost {
        /// The lost process.
        process: usize,
        /// What the network thread reported.
        message: String,
    },
    /// A worker of this process stopped making progress (blocked in I/O, say).
    #[error(
        "worker {worker} of process {process} has made no progress for {seconds} s (blocked reading or writing?); the job cannot finish without it"
    )]
    WorkerStalled {
        /// The worker (global index).
        worker: usize,
        /// Its process.
        process: usize,
        /// How long it has been stuck.
        seconds: u64,
    },
    /// Processes were given different input files.
    #[error(
        "process {process} lists different input files than this process; every process must get the same inputs"
    )]
    InputMismatch {
        /// A process whose list differs.
        process: usize,
    },
    /// A worker panicked; this is a bug.
    #[error("worker {worker} failed: {message}")]
    WorkerFailed {
        /// The worker's index.
        worker: usize,
        /// The panic message.
        message: String,
    },
}

/// Name of the marker written last, when every output is complete.
pub const SUCCESS_MARKER: &str = "_SUCCESS";
/// Name of the run summary.
pub const SUMMARY_FILE: &str = "summary.json";
/// The learned boilerplate set (little-endian `u64` entries), read back by `eval` and
/// `explain` to analyse pages as the run did.
pub const BOILERPLATE_FILE: &str = "boilerplate.bin";
pub use report::REPORT_FILE;

/// Why a worker failed, carried to every other worker.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Failure {
    Input(String),
    Output(String),
    Spill(String),
}

/// What one worker did, sent to every worker at the end; merged, what all of them did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct WorkerReport {
    worker: usize,
    stats: WorkerStats,
    seconds: StageSeconds,
    blocks: Option<u32>,
    failure: Option<(usize, Failure)>,
}

impl WorkerReport {
    /// The sum of all workers' reports (the first failure, by worker, wins).
    fn merge(mut reports: Vec<WorkerReport>) -> WorkerReport {
        reports.sort_by_key(|r| r.worker);
        let mut total = WorkerReport::default();
        for r in &reports {
            total.stats.merge(&r.stats);
            total.seconds.max(&r.seconds);
            total.blocks = total.blocks.or(r.blocks);
            if total.failure.is_none() {
                total.failure.clone_from(&r.failure);
            }
        }
        total
    }

    fn into_result(self) -> Result<WorkerReport, JobError> {
        match self.failure.clone() {
            None => Ok(self),
            Some((worker, Failure::Input(message))) => Err(JobError::Input { worker, message }),
            Some((worker, Failure::Output(message))) => Err(JobError::Output { worker, message }),
            Some((worker, Failure::Spill(message))) => Err(JobError::Spill { worker, message }),
        }
    }
}

/// Runs a job to completion and writes its outputs.
///
/// The output folder is cleared of earlier parts and markers first. On success it holds
/// `pairs/`, `documents/`, `summary.json` and, written last, `_SUCCESS`. On failure it holds
/// `summary.json` with the error and no `_SUCCESS`; parts are removed unless the failure is
/// only the reject ratio, whose parts show what was rejected. In a cluster, every process
/// writes its own parts and process 0 writes the summary and the marker, once every part
/// of every process is in place; every process returns the same outcome.
///
/// # Errors
/// [`JobError`] for unreadable input (unless rejected by configuration), unwritable output,
/// too many rejects, a lost or silent process, or a worker failure.
pub fn run(config: &JobConfig, topology: &Topology) -> Result<Summary, JobError> {
    run_with_progress(config, topology, Arc::new(Progress::default()))
}

/// As [`run`], updating `progress` as the job goes, for a progress display.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    config: &JobConfig,
    topology: &Topology,
    progress: Arc<Progress>,
) -> Result<Summary, JobError> {
    let start = Instant::now();
    let config = &config.clone().with_record_limit(topology.memory_budget);
    // Locks, the file lists and the spill folder, held until the run ends.
    let held = outputs::prepare(config, topology)?;
    let topology = outputs::with_spill_dir(topology, &held);
    let mut boilerplate = None;
    let outcome = execute(config, &topology, start, progress, &mut boilerplate);
    let result = outputs::finish(config, &topology, outcome, boilerplate.as_deref(), start);
    drop(held);
    result
}

/// The boilerplate a run in `output` learned and left out of its pages under `spec`, or
/// `None` when it learned none. `learned` says whether the run's summary reports a
/// boilerplate pass, in which case the file must be there.
///
/// # Errors
/// When the file is missing although `learned`, cannot be read, or is not a whole number
/// of entries.
pub fn read_boilerplate(
    output: &Path,
    spec: &JobSpec,
    learned: bool,
) -> Result<Option<neardup_text::Boilerplate>, neardup_io::Error> {
    let path = output.join(BOILERPLATE_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !learned => return Ok(None),
        Err(source) => return Err(neardup_io::Error::ReadFile { path, source }),
    };
    if !bytes.len().is_multiple_of(8) {
        let detail = format!("{} bytes is not a whole number of 8-byte entries", bytes.len());
        return Err(neardup_io::Error::Damaged { path, detail });
    }
    let entries =
        bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
    Ok(Some(neardup_text::Boilerplate::new(entries, &spec.boilerplate, spec.seed)))
}

/// A fingerprint of the input list: processes that disagree on it would number documents
/// differently.
pub(crate) fn input_fingerprint(config: &JobConfig) -> u64 {
    let mut bytes = Vec::new();
    for f in &config.inputs {
        bytes.extend_from_slice(f.path.display().to_string().as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&f.bytes.to_le_bytes());
    }
    neardup_core::hash::hash_bytes(&bytes, 0)
}

/// Runs the corpus passes (when needed) and the main dataflow; the boilerplate it learned
/// is left in `learned_set`.
fn execute(
    config: &JobConfig,
    topology: &Topology,
    start: Instant,
    progress: Arc<Progress>,
    learned_set: &mut Option<Arc<neardup_text::Boilerplate>>,
) -> Result<WorkerReport, JobError> {
    let segmenter =
        Signer::needs_segmenter(config).then(|| Segmenter::new(config.spec.features.jieba_hmm));
    let job = Arc::new(config.clone());
    tracing::info!(
        method = config.spec.method.as_str(),
        files = config.inputs.len(),
        workers = topology.workers,
        processes = topology.processes,
        process = topology.process,
        "job started"
    );
    let fingerprint = input_fingerprint(config);
    let mut learned = LearnedPass { local_workers: topology.workers, ..LearnedPass::default() };
    let boilerplate = if config.needs_boilerplate() {
        let pass = corpus::learn_boilerplate(&job, topology, fingerprint)?;
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            pages = pass.pages,
            lines = pass.boilerplate.len(),
            "boilerplate learned"
        );
        learned.stats.learned_from_pages = pass.pages;
        learned.stats.learned_lines = pass.boilerplate.len() as u64;
        learned.spilled_bytes = pass.spilled_bytes;
        Some(Arc::new(pass.boilerplate))
    } else {
        None
    };
    // Document frequencies are counted in what is analysed: pages without boilerplate.
    let corpus_idf = if config.needs_corpus_idf() {
        let analyzer = Signer::analyzer_for(config, segmenter.clone());
        let idf = corpus::document_frequencies(
            &job,
            topology,
            fingerprint,
            &analyzer,
            boilerplate.clone(),
        )?;
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            "corpus document frequencies counted"
        );
        Some(idf)
    } else {
        None
    };
    let mut signer = Signer::new(config, segmenter, corpus_idf);
    if let Some(boilerplate) = &boilerplate {
        signer = signer.with_boilerplate(boilerplate.clone());
    }
    learned_set.clone_from(&boilerplate);
    let corpus_seconds = if config.needs_corpus_idf() || config.needs_boilerplate() {
        start.elapsed().as_secs_f64()
    } else {
        0.0
    };
    let sources: Arc<[Arc<str>]> = config
        .inputs
        .iter()
        .map(|f| Arc::from(f.path.display().to_string()))
        .collect::<Vec<_>>()
        .into();
    let context = RunContext {
        job,
        signer,
        sources,
        abort: Arc::new(AtomicBool::new(false)),
        progress,
        start,
        learned,
        memory: MemoryPlan {
            dir: topology.spill_dir.clone(),
            limit_bytes: topology.spill_limit(),
            round_bytes: topology.round_bytes(),
        },
    };
    let results = cluster::run_workers(topology, fingerprint, move |worker, heartbeat| {
        run_worker(worker, heartbeat, &context)
    })?;
    let mut total = results.into_iter().next().expect("at least one worker");
    total.seconds.corpus_statistics = corpus_seconds;
    total.into_result()
}

/// An error and its sources on one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// What every worker of a run shares.
struct RunContext {
    job: Arc<JobConfig>,
    signer: Signer,
    /// Input paths by file index, for the `source` column.
    sources: Arc<[Arc<str>]>,
    /// Set when this process gives up, so its workers stop reading and writing.
    abort: Arc<AtomicBool>,
    progress: Arc<Progress>,
    start: Instant,
    learned: LearnedPass,
    memory: MemoryPlan,
}

/// What the boilerplate pass learned, counted once in the run's statistics.
#[derive(Default)]
struct LearnedPass {
    /// What was learned (counted by worker 0).
    stats: BoilerplateStats,
    /// Bytes this process spilled in the pass (counted by its first worker).
    spilled_bytes: u64,
    /// Workers per process.
    local_workers: usize,
}

/// How a worker spends its share of the memory budget.
struct MemoryPlan {
    /// The folder below which each worker spills.
    dir: PathBuf,
    /// Bytes each collecting stage holds before spilling.
    limit_bytes: usize,
    /// Bytes of text read per round.
    round_bytes: u64,
}

/// Builds and runs one worker's dataflow; returns the merged report of all workers.
fn run_worker(
    worker: &mut Worker,
    heartbeat: &mut Heartbeat,
    context: &RunContext,
) -> Result<WorkerReport, JobError> {
    let RunContext { job, signer, sources, abort, progress, start, learned, memory } = context;
    let start = *start;
    let index = worker.index();
    let peers = worker.peers();
    let mut own = WorkerStats::default();
    if index == 0 {
        own.boilerplate = learned.stats.clone();
    }
    if index.is_multiple_of(learned.local_workers.max(1)) {
        own.spilled_bytes = learned.spilled_bytes;
        own.boilerplate.spilled_bytes = learned.spilled_bytes;
    }
    let stats = Rc::new(RefCell::new(own));
    let store = Rc::new(RefCell::new(DocStore::default()));
    let write_error = Rc::new(RefCell::new(None));
    let read_error: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    let spill_error: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    let stage_done: Rc<RefCell<[Option<f64>; 5]>> = Rc::new(RefCell::new([None; 5]));
    let reports: Rc<RefCell<Vec<WorkerReport>>> = Rc::new(RefCell::new(Vec::new()));
    let probes: [ProbeHandle<u64>; 5] = Default::default();
    let finished = ProbeHandle::<u64>::new();
    // The frontier of everything the source's rounds feed, for pacing the source.
    let paced = ProbeHandle::<u64>::new();
    // With fewer files than four per worker, every worker reads a byte range of each plain
    // JSONL file; other few files are read whole and their records spread, so that every
    // worker signs.
    let plan = ReadPlan::agree(worker, heartbeat, job)?;
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
            let done = *stage_done.borrow();
            let at = |i: usize| done[i].unwrap_or(now);
            let failure = match (read_error.borrow().clone(), write_error.borrow().as_ref()) {
                (Some(message), _) => Some((index, Failure::Input(message))),
                (None, Some(e)) => Some((index, Failure::Output(error_chain(e)))),
                (None, None) => spill_error.borrow().clone().map(|m| (index, Failure::Spill(m))),
            };
            let mut stats = stats.borrow().clone();
            stats.peak_memory_bytes = peak_memory_bytes().unwrap_or(0);
            WorkerReport {
                worker: index,
                stats,
                seconds: StageSeconds {
                    corpus_statistics: 0.0,
                    read_and_sign: at(0),
                    ids_and_exact: at(1),
                    buckets: at(2),
                    verify: at(3),
                    cluster: at(4),
                    total: now,
                },
                blocks: store.borrow().blocks,
                failure,
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
        let signed = records.sign_docs(signer.clone(), stats.clone()).probe_with(&probes[0]);
        let mut split = signed.flat_map(split_signed).partition(3, |s| {
            let part = match &s {
                Signed::Claim(_) => 0,
                Signed::Doc(_) => 1,
                Signed::Reject(_) => 2,
            };
            (part, s)
        });
        let rejects = split.pop().expect("3 parts").flat_map(|s| match s {
            Signed::Reject(r) => Some(Keyed { key: r.doc, value: Verdict::Rejected(r) }),
            _ => None,
        });
        let docs = split.pop().expect("3 parts").flat_map(|s| match s {
            Signed::Doc(d) => Some(doc_in(d)),
            _ => None,
        });
        let claims = split.pop().expect("3 parts").flat_map(|s| match s {
            Signed::Claim(c) => Some(c),
            _ => None,
        });
        let claims = claims.exchange(|c: &IdClaim| route_id(c.id_hash)).probe_with(&paced);
        let docs = docs.exchange(|k| route_doc(DocId::from_raw(k.key.0))).probe_with(&paced);
        let rejects = rejects.exchange(|v| route_doc(v.key)).probe_with(&paced);

        let mut ids = claims.dedup_ids(spill.clone()).partition(2, |o| match o {
            IdOutcome::Accepted(_) => (0, o),
            IdOutcome::Duplicate { .. } => (1, o),
        });
        let repeated_ids = ids.pop().expect("2 parts").flat_map(|o| match o {
            IdOutcome::Duplicate { doc, first } => {
                Some(Keyed { key: doc, value: Verdict::DuplicateId { first } })
            }
            IdOutcome::Accepted(_) => None,
        });
        let accepted = ids.pop().expect("2 parts").flat_map(|o| match o {
            IdOutcome::Accepted(key) => Some(key),
            IdOutcome::Duplicate { .. } => None,
        });

        let mut grouped = accepted
            .exact_groups(job.index.is_some(), spill.clone())
            .probe_with(&probes[1])
            .partition(4, |g| {
                let part = match &g {
                    Grouped::Pair(..) => 0,
                    Grouped::Edge(..) => 1,
                    Grouped::Representative(..) => 2,
                    Grouped::RepresentativeCount(..) => 3,
                };
                (part, g)
            });
        let counts = grouped.pop().expect("4 parts").flat_map(move |g| match g {
            Grouped::RepresentativeCount(n) => Some(count_in(index, n)),
            _ => None,
        });
        let representatives = grouped.pop().expect("4 parts").flat_map(|g| match g {
            Grouped::Representative(doc) => Some(representative_in(doc)),
            _ => None,
        });
        let exact_edges = grouped.pop().expect("4 parts").flat_map(|g| match g {
            Grouped::Edge(e) => Some(e),
            _ => None,
        });
        let exact_pairs = grouped.pop().expect("4 parts").flat_map(|g| match g {
            Grouped::Pair(p) => Some(p),
            _ => None,
        });

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
        let mut near = stored
            .flat_map(|s| match s {
                Stored::Bucket(r) => Some(r),
                Stored::Content(_) => None,
            })
            .reduce_buckets(job.spec.buckets.clone(), spill.clone())
            .probe_with(&probes[2])
            .verify_candidates(store.clone(), spill.clone())
            .probe_with(&probes[3])
            .partition(2, |n| match n {
                Near::Pair(_) => (0, n),
                Near::Edge(_) => (1, n),
            });
        let near_edges = near.pop().expect("2 parts").flat_map(|n| match n {
            Near::Edge(e) => Some(e),
            Near::Pair(_) => None,
        });
        let near_pairs = near.pop().expect("2 parts").flat_map(|n| match n {
            Near::Pair(p) => Some(p),
            Near::Edge(_) => None,
        });
        let pairs_written = exact_pairs.concat(near_pairs).write_pairs(sink.clone(), spill.clone());

        let edges = exact_edges.clone().concat(near_edges.clone());
        let info =
            edges.clone().flat_map(|e: Edge| [e.a, e.b].map(|n| (n.doc, (n.chars, n.content))));
        let names = edges.flat_map(|e: Edge| [e.a, e.b]);
        let doc_pair = |e: Edge| (e.a.doc, e.b.doc);
        let assignments = assign_clusters(
            stamped(exact_edges.map(doc_pair)),
            stamped(near_edges.map(doc_pair)),
            stamped(info),
            job.spec.decision.keep,
        )
        .consolidate()
        .inner
        .flat_map(|((doc, membership), _time, diff)| {
            debug_assert_eq!(diff, 1, "one membership per clustered document");
            (diff > 0).then_some((doc, membership))
        })
        .probe_with(&probes[4]);
        let links =
            index_matches.map(|matches| matches.link_clusters(assignments.clone(), spill.clone()));
        let assignments = assignments.name_clusters(names, links, stats.clone(), spill.clone());

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
    // With records spread over workers, JSONL lines are parsed where they are signed.
    let (totals, error) = read_items(
        job,
        &plan,
        spread,
        abort,
        Some(progress),
        |item| {
            let text = match &item {
                Item::Record(Record::Doc(d)) => d.text.len() + d.id.len(),
                Item::Record(Record::Reject(_)) => 0,
                Item::Line(line) => line.bytes.len(),
            };
            round_text.set(round_text.get() + text as u64);
            input_cell.borrow_mut().send(item);
            round_text.get() >= round_bytes
        },
        || {
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
        },
    );
    {
        let mut stats = stats.borrow_mut();
        stats.records_read = totals.records;
        stats.input_bytes = totals.bytes;
        stats.skipped_records = totals.skipped.clone();
        stats.input_rounds = round + 1;
    }
    if let Some(e) = error {
        *read_error.borrow_mut() = Some(error_chain(&e));
        abort.store(true, Ordering::Relaxed);
    }
    drop(input);
    tracing::debug!(worker = index, records = totals.records, bytes = totals.bytes, "input read");

    while !finished.done() {
        worker.step_or_park(Some(Duration::from_millis(1)));
        heartbeat.beat();
        if heartbeat.aborted() {
            return Err(JobError::Start("stopped: the job failed elsewhere".into()));
        }
        let now = start.elapsed().as_secs_f64();
        let mut done = stage_done.borrow_mut();
        for ((probe, slot), stage) in probes.iter().zip(done.iter_mut()).zip(STAGES) {
            if slot.is_none() && probe.done() {
                *slot = Some(now);
                if index == 0 {
                    tracing::info!(stage, seconds = now, "stage done");
                    neardup_io::failpoint::crash(&format!("after-{}", stage.replace(' ', "-")));
                }
            }
        }
        progress.reach(done_stages(&*done));
    }
    progress.reach(STAGES.len() - 1);
    let all = std::mem::take(&mut *reports.borrow_mut());
    assert_eq!(all.len(), peers, "every worker reports once");
    Ok(WorkerReport::merge(all))
}

/// A folder removed (with what is in it) when dropped: a worker's spill folder.
pub(crate) struct RemoveDir(pub(crate) PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        use std::io::ErrorKind;
        match std::fs::remove_dir_all(&self.0) {
            Ok(()) => {}
            // Never created (nothing spilled, or the spill folder is unusable).
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
            Err(e) => {
                tracing::warn!(path = %self.0.display(), error = %e, "cannot remove the spill folder")
            }
        }
    }
}

/// A signed record, split three ways.
enum Signed {
    /// Its claim to its id.
    Claim(IdClaim),
    /// The document, for its home worker.
    Doc(SignedDoc),
    /// A rejected record, for its `documents/` row.
    Reject(RejectedRecord),
}

/// A signed document claims its id and goes to its home worker; a rejected record claims
/// its id (when it has one) and gets its row.
fn split_signed(signed: Result<SignedDoc, RejectedRecord>) -> Vec<Signed> {
    match signed {
        Ok(doc) => {
            let node = NodeInfo {
                doc: doc.doc,
                id: doc.id.clone(),
                chars: doc.chars,
                content: doc.content,
            };
            let claim = IdClaim {
                id_hash: id_hash(&doc.id),
                doc: doc.doc,
                accepted: Some(ContentKey { node, matched: doc.signature.is_some() }),
            };
            vec![Signed::Claim(claim), Signed::Doc(doc)]
        }
        Err(reject) => {
            let claim = reject.id.as_deref().map(|id| IdClaim {
                id_hash: id_hash(id),
                doc: reject.doc,
                accepted: None,
            });
            claim.map(Signed::Claim).into_iter().chain([Signed::Reject(reject)]).collect()
        }
    }
}

/// How many of the first stages in a row are done.
fn done_stages(done: &[Option<f64>]) -> usize {
    done.iter().take_while(|d| d.is_some()).count()
}

/// A stream as a differential collection, each record stamped with the time of its message.
fn stamped<'s, T: Timestamp + TotalOrder, D: 'static>(
    stream: StreamVec<'s, T, D>,
) -> VecCollection<'s, T, D> {
    stream
        .unary(Pipeline, "Stamp", |_cap, _info| {
            move |input, output| {
                input.for_each_stamp(|cap, batches| {
                    let Some(time) = cap.least().cloned() else {
                        unreachable!("every message of this dataflow is sent at a time");
                    };
                    output.session(&cap).give_iterator(
                        batches.flat_map(|b| b.drain(..)).map(|d| (d, time.clone(), 1isize)),
                    );
                });
            }
        })
        .container::<Vec<_>>()
        .as_collection()
}
