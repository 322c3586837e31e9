//! The driver: prepares the folders a run changes, runs the corpus passes and the workers'
//! dataflow, and commits the outputs.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use neardup_text::Segmenter;

use crate::cluster::{self, Topology};
use crate::config::JobConfig;
use crate::corpus;
use crate::error::JobError;
use crate::outputs::{self, BOILERPLATE_FILE};
use crate::progress::Progress;
use crate::sign::Signer;
use crate::source::KeptShares;
use crate::spec::JobSpec;
use crate::summary::Summary;
use crate::traffic::{Exchanged, Traffic};
use crate::worker::{LearnedPass, MemoryPlan, RunContext, run_worker};
use crate::worker_report::WorkerReport;

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
    let mut held = outputs::prepare(config, topology)?;
    let topology = outputs::with_spill_dir(topology, &held);
    let mut boilerplate = None;
    let outcome = execute(config, &topology, start, progress, &mut boilerplate);
    let result =
        outputs::finish(config, &topology, outcome, boilerplate.as_deref(), start, &mut held);
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
    let bytes = match neardup_io::out::read_optional(&path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) if !learned => return Ok(None),
        Ok(None) => {
            let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
            return Err(neardup_io::Error::ReadFile { path, source });
        }
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

/// The failpoint hit once the corpus passes are done (`neardup_io::failpoint`).
pub(crate) const CORPUS_FAILPOINT: &str = "after-corpus-passes";

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
    let fingerprint = config.input_fingerprint();
    let kept = KeptShares::default();
    let mut learned = LearnedPass { local_workers: topology.workers, ..LearnedPass::default() };
    // Bytes exchanged with the other processes, in a cluster: each pass counts its own (its
    // channels are numbered afresh), the corpus passes together as `corpus_statistics`.
    let count_traffic =
        |by_stage| (topology.processes > 1).then(|| Arc::new(Traffic::new(by_stage)));
    let corpus_traffic = [count_traffic(false), count_traffic(false)];
    // The first corpus pass reads the files; later passes replay what it read.
    let reading = |traffic: &Option<Arc<Traffic>>| corpus::Reading {
        kept: kept.clone(),
        local_workers: topology.workers,
        spill_root: topology.spill_dir.clone(),
        limit_bytes: topology.spill_limit(),
        progress: Some(progress.clone()),
        traffic: traffic.clone(),
    };
    let boilerplate = if config.needs_boilerplate() {
        let pass =
            corpus::learn_boilerplate(&job, topology, fingerprint, &reading(&corpus_traffic[0]))?;
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
            &reading(&corpus_traffic[1]),
        )?;
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            "corpus document frequencies counted"
        );
        Some(idf)
    } else {
        None
    };
    learned.kept_spilled_bytes = kept.spilled_bytes();
    let corpus_passes = config.needs_corpus_idf() || config.needs_boilerplate();
    if corpus_passes {
        // The records the passes kept are in memory or in the spill folder now.
        neardup_io::failpoint::crash(CORPUS_FAILPOINT);
    }
    let signer = Signer::new(config, segmenter, corpus_idf);
    learned_set.clone_from(&boilerplate);
    let corpus_seconds = if corpus_passes { start.elapsed().as_secs_f64() } else { 0.0 };
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
        kept,
        boilerplate,
    };
    let traffic = count_traffic(true);
    let results =
        cluster::run_workers(topology, fingerprint, traffic.clone(), move |worker, heartbeat| {
            run_worker(worker, heartbeat, &context)
        })?;
    let mut total = results.into_iter().next().expect("at least one worker");
    total.seconds.corpus_statistics = corpus_seconds;
    if let Some(traffic) = traffic {
        total.exchanged = traffic.by_stage();
        let mut corpus = Exchanged::default();
        for pass in corpus_traffic.iter().flatten() {
            let t = pass.total();
            (corpus.sent, corpus.received) = (corpus.sent + t.sent, corpus.received + t.received);
        }
        if corpus != Exchanged::default() {
            total.exchanged.insert("corpus_statistics".into(), corpus);
        }
    }
    total.into_result()
}
