//! The folders a run changes and the order in which it commits them.
//!
//! Before the dataflow starts, process 0 locks the output folder (and the index), removes
//! what the earlier run's file list names and writes the new list (`neardup_io::FileList`),
//! and every process removes the spill folders that killed runs into the same output left.
//! Once every part is written, process 0 commits in this order, each step durable before
//! the next:
//!
//! ```text
//! boilerplate.bin, report.html -> the generation's frequencies.bin -> index manifest
//!   (the generation) -> kept _SUCCESS
//!   -> summary.json -> _SUCCESS
//! ```
//!
//! Then the work area (`_work/`, see `crate::input::work_area`) is removed.
//!
//! A run that dies before the manifest leaves the index as it was; one that dies after it
//! leaves its generation committed and no `_SUCCESS`, and its retry (same run name and
//! output) replaces that generation, so either way a retry gives what one clean run gives.
//! Every step has a failpoint (`neardup_io::failpoint`) named after what is in place.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use neardup_io::failpoint;
use neardup_io::index::{FREQUENCIES_FILE, Frequencies, IndexLock, Manifest};
use neardup_io::{FileList, FolderLock, Role, write_atomically};

use crate::distributed::processes::Topology;
use crate::error::{JobError, error_chain};
use crate::input::work_area;
use crate::outputs::report::{self, REPORT_FILE};
use crate::reporting::stats::IndexStats;
use crate::reporting::summary::{RunStatus, SUMMARY_FILE, Summary};
use crate::reporting::worker_report::WorkerReport;
use crate::settings::config::{IndexPlan, JobConfig};
use crate::settings::plan::RunPlan;
use crate::storage::spill::RemoveDir;

/// Name of the marker written last, when every output is complete.
pub const SUCCESS_MARKER: &str = "_SUCCESS";
/// The learned boilerplate set (little-endian `u64` entries), read back by `eval` and
/// `explain` to analyse pages as the run did.
pub const BOILERPLATE_FILE: &str = "boilerplate.bin";

/// What the corpus passes learned that the commit writes.
#[derive(Default)]
pub(crate) struct ToCommit {
    /// The boilerplate set, written for `eval` and `explain`.
    pub boilerplate: Option<Arc<neardup_text::Boilerplate>>,
    /// The batch's document frequencies, committed with its generation of the index.
    pub frequencies: Option<Frequencies>,
    /// The document frequencies the run weighed by (with an index, the batch's and the
    /// earlier generations'), written for `explain`.
    pub weights: Option<Frequencies>,
    /// The parts of the template sample a failed run wrote into the generation's folder,
    /// when this run replays what its corpus passes learned (else each worker writes one).
    pub kept_template_parts: Option<u32>,
    /// Whether what the corpus passes learned is in the work area for a rerun (with an
    /// index, with the template sample they wrote into the generation's folder, which a
    /// failed run then leaves there).
    pub learned_kept: bool,
}

/// Folders of the output that only neardup writes.
const OWNED_FOLDERS: [&str; 2] = ["documents", "pairs"];

/// What a run holds until it ends: the locks of the folders it changes and its spill folder.
pub(crate) struct Held {
    output: Option<FolderLock>,
    /// The `--write-kept` folder's lock (process 0).
    kept: Option<FolderLock>,
    /// The index lock (process 0 of a run with an index), which commits the manifest.
    index: Option<IndexLock>,
    /// Where this process spills (removed at the end).
    pub(crate) spill: RemoveDir,
}

/// Makes the output folders ready (see the module documentation).
///
/// # Errors
/// [`JobError::Write`] when the output folder is locked by a live run, holds files neardup
/// did not write or cannot be written; [`JobError::Index`] when the index is locked or
/// changed since the run read it.
pub(crate) fn prepare(run: &RunPlan, kept_sample: Option<u32>) -> Result<Held, JobError> {
    let (config, topology) = (&*run.job, &run.topology);
    let output = &config.output;
    let write_err = |path: &Path, source| {
        JobError::Write(neardup_io::Error::Write { path: path.into(), source })
    };
    neardup_io::destination::create_dir_all(output).map_err(|e| write_err(output, e))?;
    let spill = spill_folder(config, topology);
    if topology.process != 0 {
        return Ok(Held { output: None, kept: None, index: None, spill });
    }
    let output_lock = lock_folder(output)?;
    // The other processes of a distributed run wait for this one at their first pass.
    neardup_io::failpoint::crash("output-locked");
    work_area::remove_unfinished(output);
    let kept_lock = match &config.write_kept {
        Some(dir) => {
            neardup_io::destination::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
            Some(lock_folder(dir)?)
        }
        None => None,
    };
    // Every folder is checked before any is changed, so a refused run leaves the earlier
    // run's outputs as they were.
    let outputs = FileList::new(Role::Output, output_files(topology));
    let earlier = outputs.check(output, &OWNED_FOLDERS).map_err(refusal(JobError::Write))?;
    let kept = match &config.write_kept {
        Some(dir) => {
            let list = FileList::new(Role::Kept, kept_files(config));
            let earlier = list.check(dir, &[]).map_err(refusal(JobError::Write))?;
            Some((dir, list, earlier))
        }
        None => None,
    };
    let index_lock = match &config.index {
        Some(plan) => Some(lock_index(run, plan, kept_sample)?),
        None => None,
    };
    outputs.replace(output, &OWNED_FOLDERS, &earlier).map_err(JobError::Write)?;
    if let Some((dir, list, earlier)) = &kept {
        list.replace(dir, &[], earlier).map_err(JobError::Write)?;
    }
    Ok(Held { output: Some(output_lock), kept: kept_lock, index: index_lock, spill })
}

/// Takes the lock of an output or kept folder (`DIR/.lock`), saying so when it took over
/// the lock of a run that stopped.
fn lock_folder(dir: &Path) -> Result<FolderLock, JobError> {
    let (lock, taken) =
        FolderLock::acquire(&dir.join(".lock")).map_err(refusal(JobError::Write))?;
    if let Some(taken) = taken {
        tracing::warn!("{taken}");
    }
    Ok(lock)
}

/// `JobError::Refused` for a lock held by another run, a file neardup did not write or a
/// folder of another role, else `other`.
fn refusal(other: fn(neardup_io::Error) -> JobError) -> impl Fn(neardup_io::Error) -> JobError {
    move |e| match e {
        neardup_io::Error::Busy { .. }
        | neardup_io::Error::UnreadableLock { .. }
        | neardup_io::Error::NotOurs { .. }
        | neardup_io::Error::OtherRole { .. } => JobError::Refused(e),
        e => other(e),
    }
}

/// Takes the index lock and removes the segment folders no generation lists (failed runs'),
/// keeping the one a retry replaces until the retry commits, and the template sample in
/// the run's own folder when it replays its corpus passes (`kept_sample`: the sample's
/// parts), which must still be there now that the run holds the lock.
fn lock_index(
    run: &RunPlan,
    plan: &IndexPlan,
    kept_sample: Option<u32>,
) -> Result<IndexLock, JobError> {
    let lock = IndexLock::acquire(&plan.dir, &plan.read).map_err(refusal(JobError::Index))?;
    if let Some(taken) = lock.taken_over() {
        tracing::warn!("{taken}");
    }
    let as_read = Manifest { generations: plan.read.clone(), ..plan.manifest.clone() };
    let own = kept_sample.map(|_| plan.folder.as_str());
    let removed = neardup_io::index::remove_orphans(&plan.dir, &as_read.segments(), own)
        .map_err(JobError::Index)?;
    let in_place = |parts| work_area::sample_in_place(&run.job, run.max_record_bytes, parts);
    if let Some(parts) = kept_sample.filter(|p| !in_place(*p)) {
        // Another run removed it since this one started (it was there then).
        let path = plan.new_generation_dir().join("templates");
        let detail = format!(
            "the {parts} parts of the template sample kept for this rerun are not all there: \
             run again, and the corpus passes write them anew"
        );
        return Err(JobError::Index(neardup_io::Error::Damaged { path, detail }));
    }
    if !removed.is_empty() {
        tracing::info!(folders = ?removed, "removed index folders of failed runs");
    }
    Ok(lock)
}

/// The files a run may write into its output folder.
fn output_files(topology: &Topology) -> Vec<String> {
    let parts = (0..topology.total_workers())
        .flat_map(|p| OWNED_FOLDERS.map(|dir| format!("{dir}/part-{p:05}.parquet")));
    [SUMMARY_FILE, REPORT_FILE, BOILERPLATE_FILE, FREQUENCIES_FILE, SUCCESS_MARKER]
        .into_iter()
        .map(String::from)
        .chain(parts)
        .collect()
}

/// The files a run may write into its `--write-kept` folder.
fn kept_files(config: &JobConfig) -> Vec<String> {
    config
        .inputs
        .iter()
        .map(neardup_io::kept_file_name)
        .chain([SUCCESS_MARKER.to_string()])
        .collect()
}

/// Checks the reject ratio and, on process 0, commits the run's outputs in order (see the
/// module documentation), or on failure removes its parts and writes the failure summary.
pub(crate) fn finish(
    run: &RunPlan,
    outcome: Result<WorkerReport, JobError>,
    learned: &ToCommit,
    start: Instant,
    held: &mut Held,
) -> Result<Summary, JobError> {
    let (config, topology) = (&*run.job, &run.topology);
    let boilerplate = learned.boilerplate.as_deref();
    let (totals, mut failure) = match outcome {
        Ok(totals) => (totals, None),
        Err(e) => (WorkerReport::default(), Some(e)),
    };
    let mut seconds = totals.seconds.clone();
    seconds.total = start.elapsed().as_secs_f64();
    let resolved = crate::reporting::summary::Resolved::of(config, totals.blocks);
    let mut summary = Summary::new(run, &totals.stats, resolved, seconds);
    summary.exchanged_bytes.clone_from(&totals.exchanged);
    let (rejected, records) = (summary.counts.rejected, summary.counts.records);
    let max_ratio = config.spec.decision.max_reject_ratio;
    if failure.is_none() && records > 0 && rejected as f64 > max_ratio * records as f64 {
        let mut reasons: Vec<_> = summary.counts.rejected_by_reason.iter().collect();
        // Most frequent first; ties in the reasons' order.
        reasons.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        let top_reason = reasons.first().map_or("none", |(r, _)| r.as_str());
        let by_reason = reasons
            .iter()
            .map(|(r, n)| format!("{} {n}", r.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        failure =
            Some(JobError::TooManyRejects { rejected, top_reason, by_reason, records, max_ratio });
    }
    if topology.process != 0 {
        return match failure {
            Some(error) => Err(error),
            None => Ok(summary),
        };
    }
    let committed = match &failure {
        None => commit(run, &mut summary, &totals, learned, held),
        Some(JobError::TooManyRejects { .. }) => {
            // The parts stay: they show what was rejected.
            write_report(config, &summary, &totals, boilerplate).map(|()| false)
        }
        Some(_) => Ok(false),
    };
    let index_committed = match committed {
        Ok(index_committed) => index_committed,
        Err((error, index_committed)) => {
            failure = Some(error);
            index_committed
        }
    };
    match failure {
        None => Ok(summary),
        Some(error) => {
            // A run whose lock was taken over leaves the folder to the run that holds it
            // now: the files it lists are that run's.
            if lock_lost(&error) {
                return Err(error);
            }
            if !matches!(error, JobError::TooManyRejects { .. })
                && let Err(cleanup) = remove_parts(&config.output, topology)
            {
                // The job's own error matters more than a failed cleanup; report both.
                tracing::error!(error = %error_chain(&cleanup), "cannot remove the parts of the failed run");
            }
            if let Some(plan) = config.index.as_ref().filter(|_| !index_committed) {
                // Uncommitted: the next run would remove it, but nothing needs it now.
                // Checked against the manifest as it is, in case a commit reported as
                // failed was stored after all.
                let listed = neardup_io::index::Manifest::load(&plan.dir)
                    .ok()
                    .flatten()
                    .is_some_and(|m| m.generations.iter().any(|g| g.folder == plan.folder));
                let dir = plan.new_generation_dir();
                if !listed && learned.learned_kept && config.needs_boilerplate() {
                    // A rerun replays the corpus passes with the template sample they wrote.
                    let _ = neardup_io::index::remove_all_but_templates(&dir);
                } else if !listed {
                    let _ = neardup_io::destination::remove_all(&dir);
                }
            }
            summary.status = RunStatus::Failed;
            let mut message = error_chain(&error);
            if index_committed && let Some(plan) = &config.index {
                message.push_str(&format!(
                    " (generation {} of the index was committed; a retry with run name \"{}\" replaces it)",
                    plan.generation, plan.run
                ));
            }
            summary.error = Some(message);
            let json = serde_json::to_vec_pretty(&summary).expect("summary serialises");
            if let Err(e) = write_atomically(&config.output.join(SUMMARY_FILE), &json) {
                tracing::error!(error = %error_chain(&e), "cannot write the failure summary");
            }
            Err(error)
        }
    }
}

/// Whether `error` says another run took over one of this run's locks.
fn lock_lost(error: &JobError) -> bool {
    matches!(
        error,
        JobError::Write(neardup_io::Error::LockLost { .. })
            | JobError::Index(neardup_io::Error::LockLost { .. })
    )
}

/// The success path of process 0; on failure returns the error and whether the index
/// generation was committed before it.
fn commit(
    run: &RunPlan,
    summary: &mut Summary,
    totals: &WorkerReport,
    learned: &ToCommit,
    held: &mut Held,
) -> Result<bool, (JobError, bool)> {
    let config = &*run.job;
    let boilerplate = learned.boilerplate.as_deref();
    let point = |name: &str, path: &Path, committed: bool| {
        failpoint::hit(name).map_err(|source| {
            (JobError::Write(neardup_io::Error::Write { path: path.into(), source }), committed)
        })
    };
    // Requests of the commit retried are counted too (the workers counted theirs).
    let retries_before = neardup_io::remote::retries();
    point("parts-written", &config.output, false)?;
    write_report(config, summary, totals, boilerplate).map_err(|(e, _)| (e, false))?;
    if let Some(weights) = &learned.weights {
        // `explain` weighs a pair's features by them, as the run did.
        neardup_io::index::write_frequencies(&config.output, weights)
            .map_err(|e| (JobError::Write(e), false))?;
    }
    point("report-written", &config.output.join(REPORT_FILE), false)?;
    // Every part, kept copy and quoted excerpt is written from the inputs as listed: the
    // run commits nothing when one of them changed since (the workers checked theirs as
    // they finished reading each; this covers what was read again since, by every process).
    for file in &config.inputs {
        neardup_io::check_unchanged(file).map_err(|e| (JobError::InputChanged(e), false))?;
    }
    let mut index_committed = false;
    if let (Some(plan), Some(lock)) = (&config.index, held.index.as_mut()) {
        commit_generation(run, plan, &totals.stats.index, learned, lock).map_err(|e| (e, false))?;
        index_committed = true;
        point("manifest-written", &plan.dir.join(neardup_io::index::MANIFEST), true)?;
    }
    let committed = |e| (JobError::Write(e), index_committed);
    if let Some(dir) = &config.write_kept {
        // A run whose kept folder's lock was taken over must not mark it complete.
        if let Some(lock) = &held.kept {
            lock.ensure_held().map_err(committed)?;
        }
        write_atomically(&dir.join(SUCCESS_MARKER), b"").map_err(committed)?;
        point("kept-written", &dir.join(SUCCESS_MARKER), index_committed)?;
    }
    // A run whose output lock was taken over must not say it succeeded.
    if let Some(lock) = &held.output {
        lock.ensure_held().map_err(committed)?;
    }
    // The summary as written is the one the run returns (its report and `--json`).
    summary.remote_retries += neardup_io::remote::retries() - retries_before;
    let json = serde_json::to_vec_pretty(&*summary).expect("summary serialises");
    write_atomically(&config.output.join(SUMMARY_FILE), &json).map_err(committed)?;
    tracing::info!(
        status = summary.status.as_str(),
        seconds = summary.seconds.total,
        "summary written"
    );
    point("summary-written", &config.output.join(SUMMARY_FILE), index_committed)?;
    write_atomically(&config.output.join(SUCCESS_MARKER), b"").map_err(committed)?;
    point("success-written", &config.output.join(SUCCESS_MARKER), index_committed)?;
    // What a rerun would have replayed is needed no more; left behind, it costs space only
    // (a later run with other inputs or settings names other units and removes it).
    if let Err(e) = work_area::remove(&config.output) {
        let dir = config.output.join(work_area::WORK_FOLDER);
        tracing::warn!(dir = %dir.display(), error = %e, "cannot remove the work area");
    }
    Ok(index_committed)
}

/// Writes the learned boilerplate (for `eval` and `explain`) and the report page.
fn write_report(
    config: &JobConfig,
    summary: &Summary,
    totals: &WorkerReport,
    boilerplate: Option<&neardup_text::Boilerplate>,
) -> Result<(), (JobError, bool)> {
    let write = |e| (JobError::Write(e), false);
    if let Some(boilerplate) = boilerplate {
        let bytes: Vec<u8> = boilerplate.entries().iter().flat_map(|e| e.to_le_bytes()).collect();
        write_atomically(&config.output.join(BOILERPLATE_FILE), &bytes).map_err(write)?;
    }
    let page = report::render(config, summary, &totals.stats, boilerplate);
    write_atomically(&config.output.join(REPORT_FILE), page.as_bytes()).map_err(write)
}

/// Commits the run's generation: its batch's document frequencies beside its parts (when
/// it counted them), then the manifest without the generation it replaces, plus its own;
/// then removes the replaced generation's folder.
fn commit_generation(
    run: &RunPlan,
    plan: &IndexPlan,
    stats: &IndexStats,
    learned: &ToCommit,
    lock: &mut IndexLock,
) -> Result<(), JobError> {
    let (config, topology) = (&*run.job, &run.topology);
    if let Some(frequencies) = &learned.frequencies {
        let dir = plan.new_generation_dir();
        neardup_io::index::write_frequencies(&dir, frequencies).map_err(JobError::Write)?;
    }
    let workers = u32::try_from(topology.processes * topology.workers).expect("few workers");
    // The learning pass of a run with an index writes a templates part per worker; a rerun
    // that replays it commits the parts the failed run wrote (checked to be all there when
    // the run took the index lock, which it holds since).
    let template_parts = match (config.needs_boilerplate(), learned.kept_template_parts) {
        (false, _) => 0,
        (true, kept) => kept.unwrap_or(workers),
    };
    let paragraphs = &config.spec.paragraphs;
    let mut manifest = plan.manifest.clone();
    manifest.neardup_version = env!("CARGO_PKG_VERSION").to_string();
    manifest.generations.push(neardup_io::index::Generation {
        number: plan.generation,
        folder: plan.folder.clone(),
        run: plan.run.clone(),
        output: plan.output.clone(),
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        documents: stats.documents_written,
        keys: stats.keys_written,
        doc_parts: workers,
        template_parts,
        paragraphs: paragraphs.enabled.then_some(stats.paragraphs_written),
        paragraph_min_chars: paragraphs.enabled.then_some(paragraphs.min_chars),
        forgotten: Vec::new(),
    });
    // The sample's note only served a rerun.
    work_area::remove_sample_note(plan);
    lock.commit(&manifest).map_err(JobError::Index)?;
    if let Some(old) = &plan.replaces {
        // Committed without it: a failure here only leaves a folder the next run removes.
        let path = plan.dir.join(&old.folder);
        if let Err(e) = neardup_io::destination::remove_all(&path) {
            tracing::warn!(path = %path.display(), error = %e, "cannot remove the replaced generation");
        }
    }
    Ok(())
}

/// Removes the parts of a failed run (every listed file but the summary), and its folders
/// once empty.
fn remove_parts(output: &Path, topology: &Topology) -> Result<(), neardup_io::Error> {
    FileList::new(Role::Output, output_files(topology)).remove(output, &[SUMMARY_FILE])?;
    for dir in OWNED_FOLDERS {
        neardup_io::destination::remove_empty_dir(&output.join(dir));
    }
    Ok(())
}

/// This process's spill folder below `--spill-dir`, `neardup-OUTPUT-PID` with an `owner`
/// file (host and process start), after removing the folders that runs into the same output
/// left when they were killed (their process is gone from this host).
fn spill_folder(config: &JobConfig, topology: &Topology) -> RemoveDir {
    let output = neardup_io::resolved_path(&config.output);
    let key = neardup_core::hash::hash_bytes(output.as_os_str().as_encoded_bytes(), 0);
    let prefix = format!("neardup-{key:016x}-");
    let root = &topology.spill_dir;
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with(&prefix) && spill_owner_gone(&entry.path()) {
                match std::fs::remove_dir_all(entry.path()) {
                    Ok(()) => {
                        tracing::info!(path = %entry.path().display(), "removed the spill folder of a killed run")
                    }
                    Err(e) => {
                        tracing::warn!(path = %entry.path().display(), error = %e, "cannot remove a killed run's spill folder")
                    }
                }
            }
        }
    }
    let dir = root.join(format!("{prefix}{}", std::process::id()));
    // The folder is this process's own: a symbolic link of its name (left by anyone) would
    // have spills written, and removed, through it. The link goes; what it points to stays.
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        match std::fs::remove_file(&dir) {
            Ok(()) => {
                tracing::warn!(link = %dir.display(), "the spill folder's name was a symbolic link: removed the link (what it points to is untouched)")
            }
            Err(e) => {
                tracing::warn!(link = %dir.display(), error = %e, "cannot remove a symbolic link of the spill folder's name")
            }
        }
    }
    let owner = SpillOwner {
        pid: std::process::id(),
        host: neardup_io::host_name(),
        process_start: neardup_io::process_start(std::process::id()),
    };
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::write(dir.join("owner"), serde_json::to_vec(&owner).expect("serialises"))
    });
    if let Err(e) = written {
        // Spilling, if needed, reports the folder's problem itself.
        tracing::warn!(path = %dir.display(), error = %e, "cannot make the spill folder");
    }
    RemoveDir(dir)
}

/// Who spills into a folder.
#[derive(serde::Serialize, serde::Deserialize)]
struct SpillOwner {
    pid: u32,
    host: String,
    process_start: Option<u64>,
}

/// Whether the process that made spill folder `dir` is gone from this host.
fn spill_owner_gone(dir: &Path) -> bool {
    let owner: Option<SpillOwner> =
        std::fs::read(dir.join("owner")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    owner.is_some_and(|o| neardup_io::process_gone(o.pid, &o.host, o.process_start))
}

impl Held {
    /// This process's own spill folder, for the stages below it.
    pub(crate) fn spill_dir(&self) -> PathBuf {
        self.spill.0.clone()
    }
}
