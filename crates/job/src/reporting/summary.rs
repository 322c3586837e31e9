//! The run summary (`summary.json`) and the metadata every output file carries.

use std::collections::BTreeMap;

use neardup_io::{Decision, Reason};
use serde::{Deserialize, Serialize};

use crate::reporting::stage::Stage;
use crate::reporting::stats::WorkerStats;
use crate::settings::config::{JobConfig, MethodParams};
use crate::settings::plan::RunPlan;
use crate::settings::spec::JobSpec;

/// Seconds from the start of the run until each stage had finished on every worker.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageSeconds {
    /// The corpus pass (document frequencies), when the job needs one.
    pub corpus_statistics: f64,
    /// Reading, parsing, normalising, segmenting and signing.
    pub read_and_sign: f64,
    /// Repeated ids and exact duplicates.
    pub ids_and_exact: f64,
    /// Bucket records and bucket reduction to candidates.
    pub buckets: f64,
    /// Candidate deduplication and verification.
    pub verify: f64,
    /// Connected components and cluster assignment.
    pub cluster: f64,
    /// Everything, including writing the outputs.
    pub total: f64,
}

impl StageSeconds {
    /// The seconds from the start of the run to the end of a probed stage.
    ///
    /// # Panics
    /// For a stage that is not probed ([`Stage::PROBED`]).
    pub fn set(&mut self, stage: Stage, seconds: f64) {
        let slot = match stage {
            Stage::ReadAndSign => &mut self.read_and_sign,
            Stage::IdsAndExact => &mut self.ids_and_exact,
            Stage::Buckets => &mut self.buckets,
            Stage::Verify => &mut self.verify,
            Stage::Cluster => &mut self.cluster,
            Stage::Writing | Stage::Done => panic!("stage {stage} has no time of its own"),
        };
        *slot = seconds;
    }

    /// The later of two workers' times, stage by stage.
    pub fn max(&mut self, other: &StageSeconds) {
        self.corpus_statistics = self.corpus_statistics.max(other.corpus_statistics);
        self.read_and_sign = self.read_and_sign.max(other.read_and_sign);
        self.ids_and_exact = self.ids_and_exact.max(other.ids_and_exact);
        self.buckets = self.buckets.max(other.buckets);
        self.verify = self.verify.max(other.verify);
        self.cluster = self.cluster.max(other.cluster);
        self.total = self.total.max(other.total);
    }
}

/// Parameters resolved for this run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resolved {
    /// MinHash bands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bands: Option<u32>,
    /// MinHash rows per band.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    /// SimHash blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    /// SimHash tables (`C(blocks, max_distance)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<u64>,
}

impl Resolved {
    /// The resolved parameters of `config`, with the SimHash block count used at run time.
    pub fn of(config: &JobConfig, blocks: Option<u32>) -> Self {
        match &config.params {
            MethodParams::Minhash { lsh, .. } => {
                Resolved { bands: Some(lsh.bands()), rows: Some(lsh.rows()), ..Resolved::default() }
            }
            MethodParams::Simhash { layout, max_distance, .. } => {
                let blocks = blocks.or(layout.as_ref().map(|l| l.blocks()));
                let tables = blocks.and_then(|b| {
                    neardup_core::BlockLayout::try_new(b, *max_distance)
                        .ok()
                        .map(|l| l.tables() as u64)
                });
                Resolved { blocks, tables, ..Resolved::default() }
            }
        }
    }
}

/// Document counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Records read (every one is in `documents/`).
    pub records: u64,
    /// Web-archive records that are not documents (requests, metadata, revisits, pages
    /// that are not text or not 2xx), by kind; they are not in `documents/`.
    pub skipped_records: BTreeMap<String, u64>,
    /// Zero bytes after the last gzip member of input files, ignored as `gzip -d` ignores
    /// them (each such file is named in a warning).
    pub trailing_zero_bytes: u64,
    /// Documents kept.
    pub kept: u64,
    /// Documents removed as duplicates.
    pub removed: u64,
    /// Records rejected.
    pub rejected: u64,
    /// Rejected records by reason.
    pub rejected_by_reason: BTreeMap<Reason, u64>,
    /// Removed documents by reason.
    pub removed_by_reason: BTreeMap<Reason, u64>,
    /// Kept documents not near-duplicate matched (too few features).
    pub kept_unmatched: u64,
    /// Clusters by radius: the most pair hops from the kept document to a member (1: every
    /// member is in a verified or exact pair with the kept document; the cluster's pair
    /// graph has a diameter of at most twice its radius).
    pub clusters_by_radius: BTreeMap<u32, u64>,
    /// Kept documents in a cluster but never verified against its kept document
    /// (`decision.removal = "verified"`).
    pub kept_unverified_in_cluster: u64,
    /// Pairs written.
    pub pairs: u64,
    /// Exact pairs.
    pub exact_pairs: u64,
    /// Verified near pairs.
    pub near_pairs: u64,
    /// Clusters of two or more documents.
    pub clusters: u64,
    /// Documents in the largest cluster.
    pub largest_cluster: u64,
    /// Id of the largest cluster (its kept document).
    pub largest_cluster_id: Option<String>,
    /// Removed documents connected to their kept document only through others.
    pub removed_not_verified_with_kept: u64,
    /// Records written to the deduplicated dataset (`--write-kept`), if it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_written: Option<u64>,
}

/// LSH work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LshCounts {
    /// Documents with a signature (representatives with enough features).
    pub signed_representatives: u64,
    /// Bucket records emitted.
    pub bucket_records: u64,
    /// Buckets with two or more members.
    pub shared_buckets: u64,
    /// Buckets above `max_bucket_size`, compared against anchors only.
    pub cut_buckets: u64,
    /// Members of the largest bucket.
    pub largest_bucket: u64,
    /// Candidate pairs from buckets.
    pub candidates: u64,
    /// Candidate pairs after dropping repeats.
    pub unique_candidates: u64,
    /// Unique candidates per signed representative.
    pub candidates_per_document: f64,
    /// Candidates that passed verification.
    pub verified_pairs: u64,
}

/// Name of the run summary in the output folder.
pub const SUMMARY_FILE: &str = "summary.json";

/// How a run ended, as `summary.json` says it (`success` or `failed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every output is in place (`_SUCCESS` is written after the summary).
    Success,
    /// The run failed; `error` says why.
    Failed,
}

impl RunStatus {
    /// The name `summary.json` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Success => "success",
            RunStatus::Failed => "failed",
        }
    }
}

/// `summary.json`: written by every run, read back by `eval`, `explain` and the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// How the run ended.
    pub status: RunStatus,
    /// Why the run failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// neardup's version.
    pub neardup_version: String,
    /// Signature format version.
    pub signature_version: u32,
    /// The effective job settings.
    pub config: JobSpec,
    /// Parameters resolved at run time.
    pub resolved: Resolved,
    /// Input files and bytes.
    pub input_files: usize,
    /// Bytes of input.
    pub input_bytes: u64,
    /// Timely workers in all processes.
    pub workers: usize,
    /// Processes.
    pub processes: usize,
    /// Document counts.
    pub counts: Counts,
    /// LSH counts.
    pub lsh: LshCounts,
    /// Stage timings.
    pub seconds: StageSeconds,
    /// Peak resident memory of the largest process, in bytes (Linux `VmHWM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The memory budget of each process (`--memory-budget`), in bytes.
    pub memory_budget_bytes: u64,
    /// Bytes written to spill files by all workers.
    pub spilled_bytes: u64,
    /// Requests to object storage or HTTP retried after a transient failure (a timeout, a
    /// dropped connection, a 5xx or throttling answer, a body cut off), by all processes.
    #[serde(default)]
    pub remote_retries: u64,
    /// Rounds the input was read in (the most of any worker).
    pub input_rounds: u64,
    /// In a distributed run, the bytes process 0 (which writes this summary) sent to and
    /// received from the other processes, by stage (`progress`: timely's progress
    /// messages; `corpus_statistics`: the passes before the main dataflow, template
    /// learning and document frequencies); with two processes, all the bytes exchanged.
    /// Empty for one process, whose workers exchange without serialising.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exchanged_bytes: BTreeMap<String, crate::distributed::traffic::Exchanged>,
    /// Boilerplate learned from web pages and left out, when the job learned it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boilerplate: Option<crate::reporting::stats::BoilerplateStats>,
    /// Paragraphs left out of kept documents, with paragraph-level dedup (`--paragraphs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paragraphs: Option<crate::reporting::stats::ParagraphStats>,
    /// The index of earlier runs, when the run used one (`--index`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexSummary>,
    /// Units of input (a worker's share of a file) read and signed, kept in the work area
    /// for a rerun, and replayed from it (a rerun after a failure reads only the rest).
    #[serde(default)]
    pub work_area: crate::reporting::stats::WorkStats,
    /// The folder the run was started in (process 0's): the inputs' relative paths, as
    /// `documents/` gives them in `source`, are relative to it, so `eval` and `explain`
    /// find them from another folder too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

/// What a run did with its index.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexSummary {
    /// The index folder.
    pub dir: String,
    /// The generation this run added, and its name.
    pub generation: u32,
    /// This run's name.
    pub run: String,
    /// Generations of earlier runs read.
    pub generations_read: u64,
    /// Index segments they are in (one per run, or fewer after compaction).
    pub segments_read: u64,
    /// Counts of what was read, matched and written.
    #[serde(flatten)]
    pub stats: crate::reporting::stats::IndexStats,
}

impl Summary {
    /// The summary of the run whose output folder is `output`.
    ///
    /// # Errors
    /// [`neardup_io::Error::ReadFile`] when there is none (not a neardup output folder),
    /// [`neardup_io::Error::Damaged`] when it is not a summary this version reads.
    pub fn read(output: &std::path::Path) -> Result<Summary, neardup_io::Error> {
        let path = output.join(SUMMARY_FILE);
        let bytes = match neardup_io::destination::read_optional(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
                return Err(neardup_io::Error::ReadFile { path, source });
            }
            Err(source) => return Err(neardup_io::Error::ReadFile { path, source }),
        };
        serde_json::from_slice(&bytes).map_err(|e| neardup_io::Error::Damaged {
            path,
            detail: format!("not a run summary this version reads: {e}"),
        })
    }

    /// Builds the summary of a run from the summed worker counts.
    pub(crate) fn new(
        run: &RunPlan,
        stats: &WorkerStats,
        resolved: Resolved,
        seconds: StageSeconds,
    ) -> Self {
        let (config, topology) = (&*run.job, &run.topology);
        let by = |decision: Decision| -> BTreeMap<Reason, u64> {
            stats
                .decisions
                .reasons
                .iter()
                .filter(|((d, _), _)| *d == decision)
                .map(|((_, r), n)| (*r, *n))
                .collect()
        };
        let signed = stats.matching.signed_representatives;
        Summary {
            status: RunStatus::Success,
            error: None,
            neardup_version: env!("CARGO_PKG_VERSION").into(),
            signature_version: neardup_core::SIGNATURE_VERSION,
            config: run.effective.clone(),
            resolved,
            input_files: config.inputs.len(),
            input_bytes: stats.reading.input_bytes,
            workers: topology.total_workers(),
            processes: topology.processes,
            counts: Counts {
                records: stats.reading.records_read,
                skipped_records: stats.reading.skipped_records.clone(),
                trailing_zero_bytes: stats.reading.trailing_zero_bytes,
                kept: stats.decisions.decided(Decision::Keep),
                removed: stats.decisions.decided(Decision::Remove),
                rejected: stats.decisions.decided(Decision::Reject),
                rejected_by_reason: by(Decision::Reject),
                removed_by_reason: by(Decision::Remove),
                kept_unmatched: by(Decision::Keep)
                    .get(&Reason::TooFewFeatures)
                    .copied()
                    .unwrap_or(0),
                clusters_by_radius: stats.decisions.cluster_radii.clone(),
                kept_unverified_in_cluster: by(Decision::Keep)
                    .get(&Reason::UnverifiedInCluster)
                    .copied()
                    .unwrap_or(0),
                pairs: stats.matching.exact_pairs + stats.matching.near_pairs,
                exact_pairs: stats.matching.exact_pairs,
                near_pairs: stats.matching.near_pairs,
                clusters: stats.decisions.clusters,
                largest_cluster: stats.decisions.largest_cluster().map_or(0, |c| c.size),
                largest_cluster_id: stats.decisions.largest_cluster().map(|c| c.kept_id.clone()),
                removed_not_verified_with_kept: stats.decisions.removed_not_verified_with_kept,
                kept_written: config.write_kept.is_some().then_some(stats.decisions.kept_written),
            },
            lsh: LshCounts {
                signed_representatives: signed,
                bucket_records: stats.matching.bucket_records,
                shared_buckets: stats.matching.buckets.shared_buckets,
                cut_buckets: stats.matching.buckets.cut_buckets,
                largest_bucket: stats.matching.buckets.largest_bucket,
                candidates: stats.matching.buckets.candidates,
                unique_candidates: stats.matching.unique_candidates,
                candidates_per_document: if signed == 0 {
                    0.0
                } else {
                    stats.matching.unique_candidates as f64 / signed as f64
                },
                verified_pairs: stats.matching.verified_pairs,
            },
            seconds,
            peak_memory_bytes: peak_memory_bytes()
                .map(|own| own.max(stats.resources.peak_memory_bytes))
                .or((stats.resources.peak_memory_bytes > 0)
                    .then_some(stats.resources.peak_memory_bytes)),
            memory_budget_bytes: topology.memory_budget,
            spilled_bytes: stats.resources.spilled_bytes,
            remote_retries: stats.resources.remote_retries,
            input_rounds: stats.reading.input_rounds,
            exchanged_bytes: BTreeMap::new(),
            boilerplate: config.needs_boilerplate().then(|| stats.boilerplate.clone()),
            paragraphs: config.spec.paragraphs.enabled.then(|| stats.paragraphs.clone()),
            index: config.index.as_ref().map(|plan| IndexSummary {
                dir: plan.dir.display().to_string(),
                generation: plan.generation,
                run: plan.run.clone(),
                generations_read: plan.manifest.generations.len() as u64,
                segments_read: plan.manifest.segments().len() as u64,
                stats: stats.index.clone(),
            }),
            work_area: stats.work.clone(),
            working_dir: std::env::current_dir().ok().map(|d| d.display().to_string()),
        }
    }
}

/// Peak resident set size of this process (`VmHWM` in `/proc/self/status`), if known.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Key-value metadata for every output file: what shaped the results.
pub fn file_metadata(
    config: &JobConfig,
    spec: &JobSpec,
    resolved: &Resolved,
) -> Vec<(String, String)> {
    let (major, minor, patch) = neardup_text::UNICODE_VERSION;
    vec![
        ("neardup.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("neardup.signature_version".into(), neardup_core::SIGNATURE_VERSION.to_string()),
        ("neardup.method".into(), config.spec.method.as_str().into()),
        ("neardup.seed".into(), config.spec.seed.to_string()),
        ("neardup.config".into(), serde_json::to_string(spec).expect("config serialises")),
        ("neardup.resolved".into(), serde_json::to_string(resolved).expect("resolved serialises")),
        ("neardup.hash_scheme".into(), neardup_core::hash::HASH_SCHEME.into()),
        ("neardup.unicode_version".into(), format!("{major}.{minor}.{patch}")),
        ("neardup.tokenizer".into(), neardup_text::JIEBA_DICTIONARY.into()),
        ("neardup.han_fold".into(), han_fold_description(config)),
        ("neardup.shaping_crates".into(), neardup_text::SHAPING_CRATES.into()),
        ("neardup.idf".into(), idf_description(config)),
    ]
}

/// Which table folds Han characters, for output metadata.
fn han_fold_description(config: &JobConfig) -> String {
    if config.spec.normalize.han_fold { neardup_text::HAN_FOLD_TABLE.into() } else { "off".into() }
}

/// What SimHash weights come from, for output metadata.
fn idf_description(config: &JobConfig) -> String {
    use crate::settings::spec::{IdfSource, Method, Weighting};
    match (config.spec.method, config.weighting(), config.spec.simhash.idf) {
        (Method::Simhash, Some(Weighting::TfIdf), IdfSource::Jieba) => {
            neardup_text::JIEBA_IDF_TABLE.into()
        }
        (Method::Simhash, Some(Weighting::TfIdf), IdfSource::Corpus) => {
            "corpus document frequencies (count-min sketch, 4 rows of 2^20)".into()
        }
        _ => "none (term-frequency or MinHash)".into(),
    }
}
