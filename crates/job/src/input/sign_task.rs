//! Signing as independent tasks (`neardup sign`): task `index` of `count` reads and signs
//! the input files whose index is `index` modulo `count`, each file one unit of the work
//! area (`crate::input::work_area`), with no connection to any other task, so that a Kubernetes
//! Indexed Job or a Slurm array of any size signs a corpus. A later `neardup dedup` with
//! the same inputs and settings into the same output replays every unit the tasks
//! committed and reads only the files no task finished.
//!
//! A task rerun after a failure skips the units it committed before. A unit that cannot be
//! written fails the task (keeping units is what it is for), as does an input that cannot
//! be read (unless `input.on_read_error` rejects it). A task marks its start in
//! `_work/tasks/task-INDEX-of-COUNT.started` (five-digit numbers) before it writes a unit,
//! and once every unit of its share is committed clears the hidden files its killed runs
//! left half written and writes its report beside the marker (`task-INDEX-of-COUNT.json`). By these a dedup run knows the units are whole files (so
//! it reads whole files too, and their names match), says which tasks did not finish, and
//! warns, naming them, about tasks that signed with other settings.
//!
//! Jobs that learn from the whole corpus before signing (web-page templates, corpus
//! document frequencies for SimHash TF-IDF) cannot sign in independent tasks: no task sees
//! the corpus. They are refused with the settings to change.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use neardup_io::{InputFile, Item};
use serde::{Deserialize, Serialize};

use crate::distributed::interrupt::Interrupt;
use crate::error::{ConfigError, JobError, ReadFailure, error_chain};
use crate::input::sign::{SignScratch, Signer};
use crate::input::source::{ReadContext, ReadPlan, ReadTotals, read_files};
use crate::input::work_area::{self, TASKS, UnitEnd, UnitWriter, WorkArea};
use crate::reporting::progress::Progress;
use crate::reporting::stats::BoilerplateStats;
use crate::settings::config::JobConfig;

/// One task of `neardup sign`.
#[derive(Clone, Debug)]
pub struct SignTask {
    /// This task's index, `0..count`.
    pub index: usize,
    /// How many tasks share the inputs.
    pub count: usize,
    /// Threads signing this task's files, a file each at a time.
    pub workers: usize,
    /// The memory budget a `neardup dedup` of the same job would be given: it sets the
    /// record size limit, which signatures depend on, unless the job file sets it.
    pub memory_budget: u64,
}

impl SignTask {
    /// The input files this task signs, each a unit: those whose index is this task's
    /// modulo the count.
    pub fn share<'j>(&self, config: &'j JobConfig) -> Vec<&'j InputFile> {
        self.plan(config).files(config).map(|(_, file, _)| file).collect()
    }

    /// How this task reads its share: whole files, with the record size limit its memory
    /// budget gives (resolved here once for the task).
    fn plan(&self, config: &JobConfig) -> ReadPlan {
        let options = config.read_options(config.max_record_bytes(self.memory_budget));
        ReadPlan::whole_files(self.index, self.count, options)
    }
}

/// What a task did, as written to `_work/tasks/` and printed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// The task's index.
    pub task: usize,
    /// How many tasks share the inputs.
    pub tasks: usize,
    /// Input files in this task's share.
    pub files: usize,
    /// Units an earlier attempt of this task committed, left as they were.
    pub units_reused: u64,
    /// Units read, signed and committed now.
    pub units_written: u64,
    /// Bytes of the units committed now.
    pub bytes_written: u64,
    /// Records read now (each signed or rejected once).
    pub records: u64,
    /// Records rejected now (by the reader, or with no text left after normalisation).
    pub rejected: u64,
    /// A digest of the settings the units were signed with (the job's signature and input
    /// settings, the record size limit, the version).
    pub settings: String,
    /// The record size limit the units were read with.
    pub max_record_bytes: u64,
    /// Seconds the task took.
    pub seconds: f64,
}

/// Refuses a job whose signing needs statistics of the whole corpus.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the setting to change.
pub fn check_signable(config: &JobConfig) -> Result<(), ConfigError> {
    if config.needs_boilerplate() {
        return Err(ConfigError::Invalid {
            key: "boilerplate.enabled",
            message: "the inputs are web pages, whose templates are learned from the whole \
                      corpus before signing, which independent tasks cannot do: sign them in \
                      one `neardup dedup` (over several processes if need be), or set \
                      `boilerplate.enabled = false` for both the tasks and the dedup run"
                .into(),
        });
    }
    if config.needs_corpus_idf() {
        return Err(ConfigError::Invalid {
            key: "simhash.idf",
            message: "SimHash TF-IDF weights by corpus document frequencies, counted over the \
                      whole corpus before signing, which independent tasks cannot do: use \
                      `simhash.idf = \"jieba\"`, `simhash.weighting = \"tf\"`, or one \
                      `neardup dedup`"
                .into(),
        });
    }
    if let Some(file) = config.inputs.iter().find(|f| f.version.is_none()) {
        return Err(ConfigError::Invalid {
            key: "input",
            message: format!(
                "\"{}\" has no modification time or ETag to tell a changed file by (a \
                 stream?): only files and objects can be signed in tasks",
                file.path.display()
            ),
        });
    }
    Ok(())
}

/// Signs task `task`'s share of `config`'s inputs into its output's work area.
///
/// # Errors
/// [`JobError::Input`] when a file cannot be read, [`JobError::Output`] when a unit cannot
/// be written, [`JobError::Write`] when the report cannot be, [`JobError::Interrupted`]
/// when `interrupt` is set meanwhile. The units committed before stay for a rerun.
///
/// # Panics
/// When the job is not signable ([`check_signable`]) or `task.index >= task.count`.
pub fn sign_share(
    config: &JobConfig,
    task: &SignTask,
    progress: &Progress,
    interrupt: &Interrupt,
) -> Result<TaskReport, JobError> {
    assert!(check_signable(config).is_ok(), "the job was checked to be signable");
    assert!(task.index < task.count, "the task's index is below the count");
    let start = Instant::now();
    let plan = task.plan(config);
    let max_record_bytes = plan.options.max_record_bytes;
    let learned = work_area::learned_digest(None, None);
    let area = WorkArea::open(config, &plan, learned);
    let share: Vec<u32> = plan.files(config).map(|(f, _, _)| f).collect();
    // Before any unit: a dedup run knows from it that the units are whole files.
    let started = tasks_dir(&config.output).join(task_name(task.index, task.count, "started"));
    neardup_io::write_atomically(&started, b"").map_err(JobError::Write)?;
    let reused: BTreeSet<u32> =
        share.iter().copied().filter(|f| area.committed(*f).is_some()).collect();
    let todo: Vec<u32> = share.iter().copied().filter(|f| !reused.contains(f)).collect();
    let segmenter = Signer::needs_segmenter(config)
        .then(|| neardup_text::Segmenter::new(config.spec.features.jieba_hmm));
    let signer = Signer::new(config, segmenter, None);
    let abort = AtomicBool::new(false);
    let threads = task.workers.clamp(1, todo.len().max(1));
    let signed: Vec<Result<Signed, JobError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                // Thread `t` signs every `threads`-th file still to do; the others are skipped.
                let mine: BTreeSet<u32> = todo.iter().copied().skip(t).step_by(threads).collect();
                let skip: BTreeSet<u32> =
                    share.iter().copied().filter(|f| !mine.contains(f)).collect();
                let thread = Thread {
                    job: config,
                    plan: &plan,
                    area: &area,
                    signer: signer.clone(),
                    abort: &abort,
                    interrupt,
                    progress,
                    worker: t,
                };
                scope.spawn(move || thread.sign(&skip))
            })
            .collect();
        let joined = handles.into_iter().enumerate().map(|(worker, handle)| {
            handle.join().unwrap_or_else(|panic| {
                let message =
                    neardup_io::panic_message(&*panic).unwrap_or_else(|| "a panic".into());
                Err(JobError::WorkerFailed { worker, message })
            })
        });
        joined.collect()
    });
    if let Some(e) = interrupt.error() {
        return Err(e);
    }
    let mut report = TaskReport {
        task: task.index,
        tasks: task.count,
        files: share.len(),
        units_reused: reused.len() as u64,
        settings: format!("{:016x}", work_area::settings_digest(config, max_record_bytes, learned)),
        max_record_bytes,
        ..TaskReport::default()
    };
    for thread in signed {
        let thread = thread?;
        report.units_written += thread.units;
        report.bytes_written += thread.bytes;
        report.records += thread.records;
        report.rejected += thread.rejected;
    }
    // Every unit of the share is in place: clear what writers of them killed before left.
    for path in share.iter().filter_map(|f| area.path(*f)) {
        neardup_io::destination::remove_private_leftovers(&path);
    }
    report.seconds = start.elapsed().as_secs_f64();
    let path = tasks_dir(&config.output).join(task_name(task.index, task.count, "json"));
    let text = serde_json::to_vec_pretty(&report).expect("the report serialises");
    neardup_io::write_atomically(&path, &text).map_err(JobError::Write)?;
    Ok(report)
}

/// The name of task `index` of `count`'s marker (`started`) or report (`json`).
fn task_name(index: usize, count: usize, kind: &str) -> String {
    format!("task-{index:05}-of-{count:05}.{kind}")
}

/// Task index and count of a marker's or report's name.
fn task_of(name: &str) -> Option<(usize, usize)> {
    let stem = name.strip_prefix("task-")?.split('.').next()?;
    let (index, count) = stem.split_once("-of-")?;
    Some((index.parse().ok()?, count.parse().ok()?))
}

/// `OUTPUT/_work/tasks`.
fn tasks_dir(output: &Path) -> PathBuf {
    output.join(work_area::WORK_FOLDER).join(TASKS)
}

/// What one thread of a task signed.
#[derive(Default)]
struct Signed {
    units: u64,
    bytes: u64,
    records: u64,
    rejected: u64,
}

/// One thread of a task.
struct Thread<'a> {
    job: &'a JobConfig,
    plan: &'a ReadPlan,
    area: &'a WorkArea,
    signer: Signer,
    /// Set by the first thread that fails, so the others stop.
    abort: &'a AtomicBool,
    interrupt: &'a Interrupt,
    progress: &'a Progress,
    /// The thread's number, which errors name.
    worker: usize,
}

/// The unit a thread is writing.
#[derive(Default)]
struct Writing {
    unit: Option<UnitWriter>,
    rejected: u64,
    failure: Option<JobError>,
    signed: Signed,
}

impl Thread<'_> {
    /// Signs the files of the share not in `skip`, each into its unit.
    fn sign(self, skip: &BTreeSet<u32>) -> Result<Signed, JobError> {
        let writing = RefCell::new(Writing::default());
        let mut scratch = SignScratch::default();
        let fail = |writing: &mut Writing, file: u32, unit: &Path, e: &std::io::Error| {
            let input = self.job.inputs[file as usize].path.display();
            let unit = unit.display();
            let message =
                format!("cannot keep the unit of \"{input}\" (\"{unit}\"): {}", error_chain(e));
            writing.failure = Some(JobError::Output { worker: self.worker, message });
            writing.unit = None;
            self.abort.store(true, Ordering::Relaxed);
        };
        let on_item = |item: Item| {
            let record = match item {
                Item::Record(record) => record,
                Item::Line(_) => unreachable!("lines are read parsed"),
            };
            let mut guard = writing.borrow_mut();
            let w = &mut *guard;
            if w.failure.is_some() {
                return false;
            }
            let file = record.doc().file_index();
            let signed = self.signer.sign_record(record, &mut scratch);
            w.rejected += u64::from(signed.is_err());
            if w.unit.is_none() {
                let path = self.area.path(file).expect("the share's files can be kept");
                match UnitWriter::create(path.clone()) {
                    Ok(unit) => w.unit = Some(unit),
                    Err(e) => {
                        fail(w, file, &path, &e);
                        return false;
                    }
                }
            }
            let unit = w.unit.as_mut().expect("started");
            if let Err(e) = unit.write(&signed) {
                let path = unit.path().to_path_buf();
                fail(w, file, &path, &e);
            }
            false
        };
        let between_batches = || {
            if self.interrupt.signal().is_some() {
                self.abort.store(true, Ordering::Relaxed);
            }
        };
        let on_file_end = |file: u32, read: &ReadTotals| {
            let mut guard = writing.borrow_mut();
            let w = &mut *guard;
            if w.failure.is_some() || self.abort.load(Ordering::Relaxed) {
                return;
            }
            let path = self.area.path(file).expect("the share's files can be kept");
            let unit = match w.unit.take() {
                Some(unit) => Ok(unit),
                // A file with no records is a unit too.
                None => UnitWriter::create(path.clone()),
            };
            let end = UnitEnd::read(file, read, BoilerplateStats::default());
            match unit.and_then(|unit| unit.commit(&end)) {
                Ok(bytes) => {
                    w.signed.units += 1;
                    w.signed.bytes += bytes;
                    w.signed.records += read.records;
                    w.signed.rejected += std::mem::take(&mut w.rejected);
                }
                Err(e) => fail(w, file, &path, &e),
            }
        };
        let at = ReadContext {
            job: self.job,
            plan: self.plan,
            abort: self.abort,
            progress: Some(self.progress),
        };
        let (_, error) = read_files(at, skip, false, on_item, between_batches, on_file_end);
        let writing = writing.into_inner();
        if let Some(failure) = writing.failure {
            return Err(failure);
        }
        if let Some(e) = error {
            self.abort.store(true, Ordering::Relaxed);
            return Err(ReadFailure::of(&e).into_error(self.worker));
        }
        Ok(writing.signed)
    }
}

/// What `neardup sign` tasks left in a work area: the tasks that started (index and
/// count), and the reports of those that finished.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    pub(crate) started: BTreeSet<(usize, usize)>,
    pub(crate) reports: Vec<TaskReport>,
}

impl Tasks {
    /// Whether any task started: its units are whole files.
    pub(crate) fn any(&self) -> bool {
        !self.started.is_empty() || !self.reports.is_empty()
    }
}

/// What `neardup sign` tasks left in `output`'s work area.
pub(crate) fn tasks_in(output: &Path) -> Tasks {
    let dir = tasks_dir(output);
    let Ok(names) = neardup_io::destination::names_in(&dir) else { return Tasks::default() };
    let mut tasks = Tasks::default();
    for name in &names {
        let Some(task) = task_of(name) else { continue };
        if name.ends_with(".started") {
            tasks.started.insert(task);
            continue;
        }
        if !name.ends_with(".json") {
            continue;
        }
        let path = dir.join(name);
        match neardup_io::destination::read_optional(&path) {
            Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
                Ok(report) => tasks.reports.push(report),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "a task's report is damaged: ignored")
                }
            },
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read a task's report: ignored")
            }
        }
    }
    tasks.reports.sort_by_key(|r: &TaskReport| (r.tasks, r.task));
    tasks
}

/// Warns about what a dedup run over the tasks' work area will read again: the files of
/// tasks that did not finish, and everything signed with settings other than the run's
/// (`settings`, `max_record_bytes`).
pub(crate) fn warn_unused(tasks: &Tasks, settings: u64, max_record_bytes: u64) {
    let ours = format!("{settings:016x}");
    let other: Vec<&TaskReport> = tasks.reports.iter().filter(|r| r.settings != ours).collect();
    if let Some(first) = other.first() {
        let why = if first.max_record_bytes == max_record_bytes {
            "other settings or another neardup version".to_string()
        } else {
            format!(
                "a record size limit of {} bytes where this run's is {max_record_bytes} (give \
                 both the same --memory-budget, or set input.max_record_bytes)",
                first.max_record_bytes
            )
        };
        let named: Vec<String> =
            other.iter().map(|r| format!("{} of {}", r.task, r.tasks)).collect();
        tracing::warn!(
            "`neardup sign` task(s) {} signed with {why}: their units are not used, and their files are read again",
            named.join(", ")
        );
    }
    let finished: BTreeSet<(usize, usize)> =
        tasks.reports.iter().map(|r| (r.task, r.tasks)).collect();
    let counts: BTreeSet<usize> = tasks.started.iter().chain(&finished).map(|(_, n)| *n).collect();
    for count in counts {
        let missing: Vec<String> = (0..count)
            .filter(|t| !finished.contains(&(*t, count)))
            .map(|t| t.to_string())
            .collect();
        if !missing.is_empty() {
            tracing::warn!(
                "`neardup sign` task(s) {} of {count} did not finish: the files they did not commit are read by this run",
                missing.join(", ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_reports_name_their_task() {
        assert_eq!(task_name(3, 64, "json"), "task-00003-of-00064.json");
        assert_eq!(task_of(&task_name(3, 64, "started")), Some((3, 64)));
        assert_eq!(task_of(&task_name(123_456, 200_000, "json")), Some((123_456, 200_000)));
        assert_eq!(task_of("task-x-of-2.json"), None);
        assert_eq!(task_of(".task-00001-of-00002.json.123-0.inprogress"), None);
    }

    #[test]
    fn a_work_area_with_a_started_task_holds_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!tasks_in(dir.path()).any());
        let tasks = tasks_dir(dir.path());
        std::fs::create_dir_all(&tasks).unwrap();
        std::fs::write(tasks.join(task_name(1, 2, "started")), b"").unwrap();
        let report = TaskReport { task: 0, tasks: 2, ..TaskReport::default() };
        std::fs::write(tasks.join(task_name(0, 2, "json")), serde_json::to_vec(&report).unwrap())
            .unwrap();
        std::fs::write(tasks.join("notes.txt"), b"not a task").unwrap();
        let seen = tasks_in(dir.path());
        assert!(seen.any());
        assert_eq!(seen.started, BTreeSet::from([(1, 2)]));
        assert_eq!(seen.reports, [report]);
    }
}
