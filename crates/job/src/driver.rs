//! The driver: prepares the folders a run changes, runs the corpus passes and the workers'
//! dataflow, and commits the outputs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use neardup_text::{Analyzer, Boilerplate, Segmenter};

use crate::distributed::interrupt::Interrupt;
use crate::distributed::mesh::{Control, Mesh};
use crate::distributed::processes::Topology;
use crate::distributed::traffic::{Exchanged, Traffic};
use crate::error::{JobError, error_chain};
use crate::input::sign::{IdfWeights, Signer};
use crate::input::sign_task::{self, Tasks};
use crate::input::source::KeptShares;
use crate::input::work_area::{self, KeptGeneration, LearnedState};
use crate::outputs::commit::{self, BOILERPLATE_FILE};
use crate::passes::corpus;
use crate::passes::runner::PassRunner;
use crate::passes::worker::{LearnedPass, MainPass};
use crate::reporting::progress::Progress;
use crate::reporting::summary::Summary;
use crate::reporting::worker_report::WorkerReport;
use crate::settings::config::JobConfig;
use crate::settings::plan::{CorpusPass as CorpusPassKind, RunPlan};
use crate::settings::spec::JobSpec;

/// Runs a job to completion and writes its outputs.
///
/// The output folder is cleared of earlier parts and markers first. On success it holds
/// `pairs/`, `documents/`, `summary.json` and, written last, `_SUCCESS`. On failure it holds
/// `summary.json` with the error and no `_SUCCESS`; parts are removed unless the failure is
/// only the reject ratio, whose parts show what was rejected. In a distributed run, the
/// processes first connect and compare every setting that changes results, and refuse to
/// run before changing any folder when they differ; then every process writes its own
/// parts and process 0 writes the summary and the marker, once every part of every process
/// is in place; every process returns the same outcome, and a process that ends early fails
/// the others naming it.
///
/// # Errors
/// [`JobError`] for unreadable input (unless rejected by configuration), unwritable output,
/// too many rejects, processes with different settings, a lost or silent process, or a
/// worker failure.
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
    run_interruptible(config, topology, progress, &Interrupt::default())
}

/// As [`run_with_progress`], stopping early once `interrupt` is set (by a signal): the
/// workers are told to stop and given a moment, then the run cleans up as a failed run
/// does (no parts, a failed `summary.json`, locks released, spill folder removed).
///
/// # Errors
/// As [`run`]; [`JobError::Interrupted`] when stopped so.
pub fn run_interruptible(
    config: &JobConfig,
    topology: &Topology,
    progress: Arc<Progress>,
    interrupt: &Interrupt,
) -> Result<Summary, JobError> {
    let start = Instant::now();
    // The run resolved once: every stage reads it.
    let run = RunPlan::new(config, topology);
    // What the corpus passes of a failed run into the same output learned: read once, so
    // every process of a distributed run agrees on whether the passes run.
    let kept = LearnedState::load(config, run.max_record_bytes);
    // What `neardup sign` tasks signed into the work area: its units are whole files.
    let tasks = sign_task::tasks_in(&config.output);
    // The processes of a distributed run agree on their settings before any folder is
    // changed, and stay connected, so that each learns when another ends.
    let mesh = match topology.processes {
        1 => None,
        _ => {
            progress.wait_for("the other processes to connect");
            let mesh = Mesh::join(
                &topology.addresses,
                topology.process,
                &agreed_settings(&run, kept.is_some(), &tasks),
                topology.connect_timeout,
                interrupt,
            );
            progress.done_waiting();
            Some(Arc::new(mesh?))
        }
    };
    let control = Control { mesh, interrupt: interrupt.clone() };
    let work = Kept { learned: kept, tasks };
    let result = prepare_and_execute(run, &control, start, progress, work);
    if let Some(mesh) = &control.mesh {
        mesh.end(result.as_ref().err().map(|e| error_chain(e)).as_deref());
    }
    result
}

/// What an earlier run, or `neardup sign` tasks, left in the work area besides units.
struct Kept {
    /// What the corpus passes of a failed run learned.
    learned: Option<LearnedState>,
    /// What the tasks that signed into it left.
    tasks: Tasks,
}

/// The run once the processes agree: prepares the folders, runs, and commits or cleans up.
fn prepare_and_execute(
    run: RunPlan,
    control: &Control,
    start: Instant,
    progress: Arc<Progress>,
    kept: Kept,
) -> Result<Summary, JobError> {
    // Locks, the file lists and the spill folder, held until the run ends.
    // A rerun that replays what its corpus passes learned keeps the template sample they
    // wrote into the index's new generation.
    let kept_sample = kept.learned.as_ref().and_then(|l| l.generation()).map(|g| g.template_parts);
    let mut held = commit::prepare(&run, kept_sample)?;
    let run = run.spilling_in(held.spill_dir());
    let mut learned = commit::ToCommit::default();
    let mut outcome = execute(&run, control, start, progress, kept, &mut learned);
    // A signal once the workers are done still stops the run before it commits.
    if let (Ok(_), Some(interrupted)) = (&outcome, control.interrupt.error()) {
        outcome = Err(interrupted);
    }
    let result = commit::finish(&run, outcome, &learned, start, &mut held);
    drop(held);
    result
}

/// Every setting the processes of a distributed run must share, flattened to `key = value`: the
/// job file's settings as resolved (with the record limit the memory budget gives), the
/// versions, the topology, the inputs and the folders written, whether the corpus
/// statistics are replayed from the work area (`statistics_kept`), and how many
/// `neardup sign` tasks started and finished in it (`tasks`).
fn agreed_settings(
    run: &RunPlan,
    statistics_kept: bool,
    tasks: &Tasks,
) -> BTreeMap<String, String> {
    let (config, topology) = (&*run.job, &run.topology);
    let mut settings = BTreeMap::new();
    let spec = serde_json::to_value(&run.effective).expect("the spec serialises");
    flatten("", &spec, &mut settings);
    let files = config.inputs.len();
    let fingerprint = config.input_fingerprint();
    let index = config.index.as_ref().map(|plan| format!("{} ({})", plan.generation, plan.folder));
    // Folders as resolved: `out/` and `out`, `s3a://` and `s3://`, name one place.
    let folder = |dir: &Path| neardup_io::resolved_path(dir).display().to_string();
    let kept = config.write_kept.as_deref().map(folder);
    for (key, value) in [
        ("neardup_version", env!("CARGO_PKG_VERSION").to_string()),
        ("signature_version", neardup_core::SIGNATURE_VERSION.to_string()),
        ("workers", topology.workers.to_string()),
        ("processes", topology.processes.to_string()),
        ("inputs", format!("{files} files (fingerprint {fingerprint:016x})")),
        ("web_pages", config.web_pages.to_string()),
        ("output", folder(&config.output)),
        ("write_kept", kept.unwrap_or_else(|| "none".into())),
        ("index.generation", index.unwrap_or_else(|| "none".into())),
        ("work_area.corpus_statistics", if statistics_kept { "kept" } else { "none" }.into()),
        (
            "work_area.signed_tasks",
            format!("{} started, {} finished", tasks.started.len(), tasks.reports.len()),
        ),
    ] {
        settings.insert(key.to_string(), value);
    }
    settings
}

/// Adds `value`'s leaves to `out` under their dotted paths below `prefix`.
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (name, field) in fields {
                let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
                flatten(&key, field, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.to_string());
        }
    }
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
    let bytes = match neardup_io::destination::read_optional(&path) {
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

/// The weights a SimHash job under `spec` gives features by TF-IDF: jieba's table, or the
/// document frequencies a finished run in `output` counted over its corpus (with an index,
/// over every generation), kept in its `frequencies.bin`; `None` for other weights, and
/// for corpus counts without a run or from a run before the file was written.
///
/// # Errors
/// When the file cannot be read or is damaged.
pub fn read_weights(
    output: Option<&Path>,
    spec: &JobSpec,
) -> Result<Option<IdfWeights>, neardup_io::Error> {
    if spec.simhash.weights() != crate::settings::spec::Weighting::TfIdf {
        return Ok(None);
    }
    match spec.simhash.idf {
        crate::settings::spec::IdfSource::Jieba => {
            let analyzer = Signer::spec_analyzer(spec);
            Ok(Some(IdfWeights::Words(neardup_text::WordIdf::jieba(analyzer.extractor()))))
        }
        crate::settings::spec::IdfSource::Corpus => {
            let frequencies = neardup_io::index::read_frequencies(output)?;
            Ok(frequencies.as_ref().map(IdfWeights::from_frequencies))
        }
    }
}

/// The failpoint hit once the corpus passes are done (`neardup_io::failpoint`).
pub(crate) const CORPUS_FAILPOINT: &str = "after-corpus-passes";

/// A corpus pass of the run ([`RunPlan::corpus_passes`]), as `execute` starts it.
struct CorpusPass<'a> {
    kind: CorpusPassKind,
    runner: &'a PassRunner,
    reading: corpus::Reading,
    /// Counts the bytes the pass exchanges with the other processes.
    traffic: Option<Arc<Traffic>>,
    /// When the run started.
    start: Instant,
}

/// What the corpus passes learned, each pass adding its part.
#[derive(Default)]
struct CorpusLearned {
    boilerplate: Option<Arc<Boilerplate>>,
    idf: Option<IdfWeights>,
}

impl CorpusPass<'_> {
    /// Runs the pass, adding what it learns to `into` (a later pass reads what the earlier
    /// ones learned) and its counts to `learned`.
    fn run(
        self,
        segmenter: Option<&Segmenter>,
        into: &mut CorpusLearned,
        learned: &mut LearnedPass,
        learned_out: &mut commit::ToCommit,
    ) -> Result<(), JobError> {
        match self.kind {
            CorpusPassKind::Templates => into.boilerplate = Some(self.learn_boilerplate(learned)?),
            CorpusPassKind::DocumentFrequencies => {
                let config = &self.runner.run.job;
                let analyzer = Signer::analyzer_for(config, segmenter.cloned());
                // Counted in what is analysed: pages without boilerplate.
                let boilerplate = into.boilerplate.clone();
                into.idf = Some(self.document_frequencies(&analyzer, boilerplate, learned_out)?);
            }
        }
        Ok(())
    }

    /// Learns the templates of the corpus's web pages, counted in `learned`.
    fn learn_boilerplate(self, learned: &mut LearnedPass) -> Result<Arc<Boilerplate>, JobError> {
        let CorpusPass { runner, reading, traffic, start, .. } = self;
        let job = reading.run.job.clone();
        let learning = corpus::LearnBoilerplate { reading };
        let pass = corpus::LearnBoilerplate::learned(&job, runner.run(learning, traffic)?);
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            pages = pass.pages,
            lines = pass.boilerplate.len(),
            "boilerplate learned"
        );
        learned.stats.learned_from_pages = pass.pages;
        learned.stats.learned_lines = pass.boilerplate.len() as u64;
        learned.spilled_bytes = pass.spilled_bytes;
        Ok(Arc::new(pass.boilerplate))
    }

    /// Counts document frequencies in what is analysed (pages without their boilerplate).
    /// With an index, the batch's go to `learned_out`, and the run weighs by them and
    /// every indexed batch's, as one run over all of them would.
    fn document_frequencies(
        self,
        analyzer: &Analyzer,
        boilerplate: Option<Arc<Boilerplate>>,
        learned_out: &mut commit::ToCommit,
    ) -> Result<IdfWeights, JobError> {
        let CorpusPass { runner, reading, traffic, start, .. } = self;
        let analyzer = analyzer.clone();
        let counting = corpus::DocumentFrequencies { reading, analyzer, boilerplate };
        let mut weights = corpus::DocumentFrequencies::weights(runner.run(counting, traffic)?);
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            "corpus document frequencies counted"
        );
        if let Some(plan) = &runner.run.job.index {
            learned_out.frequencies = weights.frequencies();
            corpus::add_index_frequencies(plan, &mut weights)?;
        }
        Ok(weights)
    }
}

/// What signing needs of the whole corpus: the web pages' boilerplate and the document
/// frequencies, as the job needs them. Replayed from the work area when a failed run into
/// the same output kept them (`kept`), learned by the plan's corpus passes otherwise
/// (process 0 then keeps them there for a rerun).
fn corpus_statistics(
    run: &RunPlan,
    kept: Option<LearnedState>,
    passes: Vec<CorpusPass<'_>>,
    segmenter: Option<Segmenter>,
    learned: &mut LearnedPass,
    learned_out: &mut commit::ToCommit,
) -> Result<(Option<Arc<Boilerplate>>, Option<IdfWeights>), JobError> {
    let (config, topology) = (&*run.job, &run.topology);
    if let Some(state) = kept {
        let restored = state.restore(config);
        let boilerplate = restored.boilerplate;
        learned.stats.learned_from_pages = restored.pages;
        learned.stats.learned_lines = boilerplate.as_ref().map_or(0, |b| b.len() as u64);
        learned.corpus_statistics_reused = true;
        // With an index: the batch's frequencies and the template sample the passes wrote
        // into the generation's folder (kept there by the index lock) are committed.
        if let Some(generation) = restored.generation {
            learned_out.frequencies = generation.batch_frequencies;
            learned_out.kept_template_parts = Some(generation.template_parts);
        }
        learned_out.learned_kept = true;
        return Ok((boilerplate.map(Arc::new), restored.idf));
    }
    let mut corpus = CorpusLearned::default();
    for pass in passes {
        pass.run(segmenter.as_ref(), &mut corpus, learned, learned_out)?;
    }
    let CorpusLearned { boilerplate, idf: corpus_idf } = corpus;
    if topology.process == 0 {
        let pages = learned.stats.learned_from_pages;
        // The learning pass of a run with an index writes a templates part per worker.
        let generation = config.index.as_ref().map(|_| {
            let parts = if run.corpus_passes.contains(&CorpusPassKind::Templates) {
                topology.total_workers()
            } else {
                0
            };
            let parts = u32::try_from(parts).expect("few workers");
            KeptGeneration {
                template_parts: parts,
                batch_frequencies: learned_out.frequencies.clone(),
            }
        });
        let state =
            LearnedState::of(boilerplate.as_deref(), pages, corpus_idf.as_ref(), generation);
        learned_out.learned_kept = state.keep(config, run.max_record_bytes);
    } else {
        // Process 0 keeps it (a failure to is a warning there).
        learned_out.learned_kept = work_area::keeps_learned(config, run.max_record_bytes);
    }
    Ok((boilerplate, corpus_idf))
}

/// Warns, in a paragraph run against an index, of the index's runs whose paragraphs it
/// cannot leave out: runs made without `--paragraphs`, and runs that kept only paragraphs
/// longer than this run's `paragraphs.min_chars`.
fn warn_of_index_paragraphs(config: &JobConfig) {
    let Some(plan) = config.index.as_deref().filter(|_| config.spec.paragraphs.enabled) else {
        return;
    };
    let runs = plan.runs_without_paragraphs();
    if !runs.is_empty() {
        tracing::warn!(
            runs = runs.join(", "),
            "these runs of the index kept no paragraphs (made without --paragraphs): \
             their paragraphs are not left out of this run"
        );
    }
    let min_chars = config.spec.paragraphs.min_chars;
    let longer = plan.runs_with_longer_paragraphs(min_chars);
    if !longer.is_empty() {
        let runs: Vec<String> =
            longer.iter().map(|(run, least)| format!("{run} ({least})")).collect();
        tracing::warn!(
            runs = runs.join(", "),
            "these runs of the index kept only paragraphs of more characters than this \
             run's paragraphs.min_chars ({min_chars}): their shorter paragraphs are not \
             left out of this run"
        );
    }
}

/// Runs the corpus passes (when needed) and the main dataflow; what the passes learned
/// that the commit writes is left in `learned_out`.
fn execute(
    run: &RunPlan,
    control: &Control,
    start: Instant,
    progress: Arc<Progress>,
    kept: Kept,
    learned_out: &mut commit::ToCommit,
) -> Result<WorkerReport, JobError> {
    let (config, topology) = (&*run.job, &run.topology);
    let segmenter =
        Signer::needs_segmenter(config).then(|| Segmenter::new(config.spec.features.jieba_hmm));
    tracing::info!(
        method = config.spec.method.as_str(),
        files = config.inputs.len(),
        workers = topology.workers,
        processes = topology.processes,
        process = topology.process,
        "job started"
    );
    if topology.process == 0 {
        warn_of_index_paragraphs(config);
    }
    let fingerprint = config.input_fingerprint();
    let records = KeptShares::default();
    let mut learned = LearnedPass::default();
    // Bytes exchanged with the other processes, in a distributed run: each pass counts its
    // own (its channels are numbered afresh), the corpus passes together as
    // `corpus_statistics`.
    let count_traffic =
        |by_stage| (topology.processes > 1).then(|| Arc::new(Traffic::new(by_stage)));
    let corpus_traffic: Vec<_> = run.corpus_passes.iter().map(|_| count_traffic(false)).collect();
    let runner = PassRunner {
        run: run.clone(),
        control: control.clone(),
        fingerprint,
        kept: records.clone(),
    };
    // The first corpus pass reads the files; later passes replay what it read.
    let reading = corpus::Reading {
        run: run.clone(),
        kept: records.clone(),
        progress: Some(progress.clone()),
    };
    let passes = (run.corpus_passes.iter().zip(&corpus_traffic))
        .map(|(kind, traffic)| CorpusPass {
            kind: *kind,
            runner: &runner,
            reading: reading.clone(),
            traffic: traffic.clone(),
            start,
        })
        .collect();
    let (boilerplate, corpus_idf) =
        corpus_statistics(run, kept.learned, passes, segmenter.clone(), &mut learned, learned_out)?;
    learned.kept_spilled_bytes = records.spilled_bytes();
    let corpus_passes = !run.corpus_passes.is_empty();
    if corpus_passes {
        // The records the passes kept are in memory or in the spill folder now.
        neardup_io::failpoint::crash(CORPUS_FAILPOINT);
    }
    let frequencies = corpus_idf.as_ref().and_then(IdfWeights::corpus);
    let frequencies = frequencies.map(|(sketch, documents)| (sketch.counts(), documents));
    let learned_digest =
        work_area::learned_digest(boilerplate.as_deref().map(Boilerplate::entries), frequencies);
    if topology.process == 0 {
        let limit = run.max_record_bytes;
        let settings = work_area::settings_digest(config, limit, learned_digest);
        sign_task::warn_unused(&kept.tasks, settings, limit);
    }
    learned_out.weights = corpus_idf.as_ref().and_then(IdfWeights::frequencies);
    let signer = Signer::new(config, segmenter, corpus_idf);
    learned_out.boilerplate.clone_from(&boilerplate);
    let corpus_seconds = if corpus_passes { start.elapsed().as_secs_f64() } else { 0.0 };
    let sources: Arc<[Arc<str>]> = config
        .inputs
        .iter()
        .map(|f| Arc::from(f.path.display().to_string()))
        .collect::<Vec<_>>()
        .into();
    let main = MainPass {
        run: run.clone(),
        signer,
        sources,
        progress,
        start,
        learned,
        kept: records,
        boilerplate,
        learned_digest,
        signed_tasks: kept.tasks.reports.len(),
        whole_files: kept.tasks.any(),
    };
    let traffic = count_traffic(true);
    let results = runner.run(main, traffic.clone())?;
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
    Ok(total)
}
