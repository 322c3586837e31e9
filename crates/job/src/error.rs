//! What can go wrong checking a job ([`ConfigError`]) and running it ([`JobError`]).

use std::path::PathBuf;

/// A [`ConfigError::Invalid`] of the job-file key `key`.
pub(crate) fn invalid(key: &'static str, message: String) -> ConfigError {
    ConfigError::Invalid { key, message }
}

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
    /// An input folder named on the command line is a folder the run writes, or inside one.
    #[error(
        "the input folder \"{}\" is the {role} or inside it, which the run writes; give the input and the {role} apart",
        .path.display()
    )]
    InputInOutput {
        /// The input as named.
        path: PathBuf,
        /// What the folder is to the run.
        role: &'static str,
    },
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
        /// The setting (`text_field` or `id_field`) that names a column the file lacks.
        missing_column: Option<String>,
    },
    /// A part could not be written.
    #[error("worker {worker} cannot write its output: {message}")]
    Output {
        /// The worker that wrote it.
        worker: usize,
        /// The error, with its causes.
        message: String,
    },
    /// The index's template statistics could not be read.
    #[error("worker {worker} cannot read the index: {message}")]
    IndexRead {
        /// The worker.
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
    /// The run stopped before it changed any folder: one it writes (the output, the kept
    /// dataset, the index) is locked by another run, holds files neardup did not write, or
    /// holds another role's files (an earlier run's outputs given as the kept folder, ...).
    #[error("the run did not start, and changed nothing")]
    Refused(#[source] neardup_io::Error),
    /// The index could not be locked or committed.
    #[error("cannot use the index")]
    Index(#[source] neardup_io::Error),
    /// An input changed after the run listed it; what was read of it cannot be trusted.
    #[error("the input changed")]
    InputChanged(#[source] neardup_io::Error),
    /// More records were rejected than `decision.max_reject_ratio` allows.
    #[error(
        "{rejected} of {records} records were rejected ({by_reason}), above max_reject_ratio {max_ratio}"
    )]
    TooManyRejects {
        /// Rejected records.
        rejected: u64,
        /// The most frequent reject reason (for hints).
        top_reason: &'static str,
        /// The reasons with their counts, most frequent first.
        by_reason: String,
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
    /// Another process of the run stopped with an error of its own, and said so.
    #[error("process {process} stopped: {message}")]
    PeerFailed {
        /// The process that stopped.
        process: usize,
        /// Its error.
        message: String,
    },
    /// The processes of a distributed run were started with different settings; they stop
    /// before changing any folder.
    #[error(
        "the run did not start, and changed nothing: process {process} has {}, where this process (process {this}) has {}; start every process with the same job file, flags and binary{}",
        settings_list(.differences, |(setting, _, theirs)| format!("`{setting}` = {theirs}")),
        settings_list(.differences, |(_, ours, _)| ours.clone()),
        record_limit_hint(.differences)
    )]
    SettingsDiffer {
        /// The other process.
        process: usize,
        /// This process.
        this: usize,
        /// The settings that differ (a job-file key, `workers`, `inputs`, ...), in key
        /// order: each with this process's value and the other's.
        differences: Vec<(String, String, String)>,
    },
    /// The run was stopped by a signal (SIGTERM or SIGINT).
    #[error("the run was interrupted by {}", signal_name(*.signal))]
    Interrupted {
        /// The signal's number.
        signal: i32,
    },
    /// A worker stopped because the run gave up elsewhere (another worker's or process's
    /// failure, a signal); the cause is reported instead.
    #[error("stopped: the job failed elsewhere")]
    Stopped,
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

/// The first few `differences`, each as `show` puts it, joined.
fn settings_list(
    differences: &[(String, String, String)],
    show: impl Fn(&(String, String, String)) -> String,
) -> String {
    const SHOWN: usize = 8;
    let mut list: Vec<String> = differences.iter().take(SHOWN).map(show).collect();
    if differences.len() > SHOWN {
        list.push(format!("{} more", differences.len() - SHOWN));
    }
    list.join(", ")
}

/// A hint for a record limit that differs: unset in the job file, it follows from each
/// process's memory budget (a pod's cgroup limit, when `--memory-budget` is not given).
fn record_limit_hint(differences: &[(String, String, String)]) -> &'static str {
    if differences.iter().any(|(setting, _, _)| setting == "input.max_record_bytes") {
        " (`input.max_record_bytes` follows from the memory budget unless the job file sets \
         it: give every process the same --memory-budget, or set it in the job file)"
    } else {
        ""
    }
}

/// The conventional name of signal `signal`.
pub(crate) fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        1 => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
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

/// A read error as it travels between workers and processes: its text, and what the user
/// can act on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ReadFailure {
    /// The error, with its causes.
    pub(crate) message: String,
    /// The setting (`text_field` or `id_field`) that names a column a file lacks.
    pub(crate) missing_column: Option<String>,
}

impl ReadFailure {
    /// The failure `error` describes.
    pub(crate) fn of(error: &neardup_io::Error) -> Self {
        let missing_column = match error {
            neardup_io::Error::MissingColumn { setting, .. } => Some((*setting).to_string()),
            _ => None,
        };
        ReadFailure { message: error_chain(error), missing_column }
    }

    /// A failure with nothing more to it than its text.
    pub(crate) fn message(message: String) -> Self {
        ReadFailure { message, missing_column: None }
    }

    /// The job error of `worker` failing so.
    pub(crate) fn into_error(self, worker: usize) -> JobError {
        JobError::Input { worker, message: self.message, missing_column: self.missing_column }
    }
}
