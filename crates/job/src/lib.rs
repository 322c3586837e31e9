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
//!   -> verified + exact pairs -> connected components, in spilled rounds -> keep/remove
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
//!
//! Where things are, in the order the folders may use each other (each folder's `mod.rs`
//! names what it may use): `error`; `distributed` (processes and their workers, their
//! connections); `settings` (the job file as given, the memory plan, and the run checked
//! once into a [`JobConfig`]); `storage` (records, spilled runs, logs); `reporting` (the
//! stages by name, [`Stage`], statistics and the summary); `input` (shares of the input,
//! signing, the work area); `operators` (one per file); `passes` (the corpus passes and the
//! main pass); `outputs` (the commit order and `report.html`); and [`run`] in `driver`.

mod distributed;
mod driver;
mod error;
mod input;
mod operators;
mod outputs;
mod passes;
mod reporting;
mod settings;
mod storage;

pub use distributed::interrupt::Interrupt;
pub use distributed::processes::{
    MEMORY_BUDGET_FLOOR, Topology, capture_peer_failures, default_memory_budget,
};
pub use distributed::traffic::Exchanged;
pub use driver::{read_boilerplate, read_weights, run, run_interruptible, run_with_progress};
pub use error::{ConfigError, JobError};
pub use input::sign::{IdfWeights, SignScratch, Signer, lines_left_out, page_text};
pub use input::sign_task::{SignTask, TaskReport, check_signable, sign_share};
pub use operators::buckets::BucketReducer;
pub use outputs::commit::{BOILERPLATE_FILE, SUCCESS_MARKER};
pub use outputs::report::REPORT_FILE;
pub use reporting::progress::Progress;
pub use reporting::stage::Stage;
pub use reporting::stats::{
    BoilerplateStats, BucketStats, DecisionStats, IndexStats, MatchingStats, ReadingStats,
    ResourceStats, WorkerStats,
};
pub use reporting::summary::{
    Counts, LshCounts, Resolved, RunStatus, SUMMARY_FILE, StageSeconds, Summary, file_metadata,
    peak_memory_bytes,
};
pub use settings::config::{IndexPlan, JobConfig, MethodParams};
pub use settings::memory::{
    FULL_RECORD_LIMIT_BUDGET, WORKER_FIXED_BYTES, WORKER_PAIR_BYTES, check_workers,
    default_max_record_bytes, workers_fixed_bytes,
};
pub use settings::spec::{
    BucketSpec, CONTAINMENT_BANDS_JACCARD, DecisionSpec, INDEX_LAYOUT_DOCUMENTS, IdfSource,
    IndexSpec, InputSpec, JobSpec, KeepRule, MAX_DISTANCE, Method, MinHashSpec, ParagraphSpec,
    Removal, SIMHASH_HAN_NGRAM_CHARS, SIMHASH_NGRAM_CHARS, SimHashSpec, THRESHOLD, WEB_CONTAINMENT,
    WEB_CONTAINMENT_MIN_JACCARD, WEB_MAX_DISTANCE, WEB_MAX_FEATURE_COUNT, WEB_TF_MAX_DISTANCE,
    WEB_THRESHOLD, WEB_WEIGHTING, Weighting,
};
pub use storage::records::{
    Assignment, BucketRecord, Candidate, ClusterInfo, Membership, SignedDoc,
};
