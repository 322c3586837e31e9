//! The errors of reading inputs and writing outputs.

use std::path::PathBuf;

use crate::role::Role;

/// Errors of reading inputs and writing outputs; each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path could not be opened or listed.
    #[error("cannot open \"{}\"", .path.display())]
    Open {
        /// The path.
        path: PathBuf,
        /// What the system reported.
        source: std::io::Error,
    },
    /// A file broke off while being read (for example a damaged or truncated archive).
    #[error("cannot read \"{}\" after record {record}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The last record read completely.
        record: u64,
        /// What the decoder reported.
        source: std::io::Error,
    },
    /// An input file changed (written, truncated or replaced) after the run listed it.
    #[error("input \"{}\" changed while the run read it ({}); a run reads its inputs as they were when it started: rerun once the file is complete", .path.display(), describe_change(*.listed_bytes, *.bytes_now, *.rewritten))]
    InputChanged {
        /// The file.
        path: PathBuf,
        /// Its size when listed.
        listed_bytes: u64,
        /// Its size now.
        bytes_now: u64,
        /// Whether its version (modification time, ETag) is another.
        rewritten: bool,
    },
    /// A whole file could not be read.
    #[error("cannot read \"{}\"", .path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// What the system reported.
        source: std::io::Error,
    },
    /// A folder given as an index holds none (no manifest).
    #[error("no index in \"{}\"", .path.display())]
    NoIndex {
        /// The folder.
        path: PathBuf,
    },
    /// A file a run wrote is not what the run wrote (cut short or overwritten).
    #[error("\"{}\" is damaged: {detail}", .path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A file named on the command line has an unsupported format.
    #[error("unsupported input format \"{}\": expected JSON Lines (.jsonl, .ndjson or .json), a web archive (.warc or .wet), either of them compressed (.gz or .zst), or .parquet", .path.display())]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
    },
    /// No input file was found.
    #[error(
        "no input files (JSON Lines, web archives or Parquet, by their names) found in {paths:?}{}",
        skipped_text(.skipped)
    )]
    NoInput {
        /// The paths searched.
        paths: Vec<PathBuf>,
        /// Files and folders passed over in them, each with why.
        skipped: Vec<(PathBuf, String)>,
    },
    /// More input files than a `DocId` can number.
    #[error("{files} input files exceed the limit of {max}")]
    TooManyFiles {
        /// Files found.
        files: usize,
        /// The limit.
        max: usize,
    },
    /// More records in one file than a `DocId` can number.
    #[error("\"{}\" has more than 2^40 records", .path.display())]
    TooManyRecords {
        /// The file.
        path: PathBuf,
    },
    /// A Parquet file could not be opened or decoded.
    #[error("cannot read parquet file \"{}\"", .path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What the reader reported.
        source: parquet::errors::ParquetError,
    },
    /// A Parquet batch could not be decoded or built.
    #[error("cannot decode \"{}\" after record {record}", .path.display())]
    Arrow {
        /// The file.
        path: PathBuf,
        /// The last record handled.
        record: u64,
        /// What Arrow reported.
        source: arrow_schema::ArrowError,
    },
    /// The id or text column is missing from a Parquet file.
    #[error("\"{}\" has no column \"{column}\" (columns: {})", .path.display(), .available.join(", "))]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The configured column.
        column: String,
        /// The setting that names it: `text_field` or `id_field`.
        setting: &'static str,
        /// The columns the file has.
        available: Vec<String>,
    },
    /// The id or text column has an unusable type.
    #[error("column \"{column}\" of \"{}\" is {data_type}, expected {expected}", .path.display())]
    ColumnType {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// Its Arrow type.
        data_type: String,
        /// What would work.
        expected: &'static str,
    },
    /// An output file or folder could not be written.
    #[error("cannot write \"{}\"", .path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// What the system reported.
        source: std::io::Error,
    },
    /// Rows could not be assembled into a batch for an output file (a bug).
    #[error("cannot build a batch of rows for \"{}\"", .path.display())]
    Batch {
        /// The output file.
        path: PathBuf,
        /// What Arrow reported.
        source: arrow_schema::ArrowError,
    },
    /// A run name is already committed to the index by a run that cannot be replaced.
    #[error("run \"{run}\" is already in the index \"{}\" {reason}; give this run another --run-name", .path.display())]
    RunNameTaken {
        /// The index folder.
        path: PathBuf,
        /// The run name.
        run: String,
        /// Why the committed run cannot be replaced.
        reason: String,
    },
    /// An index was built with other settings than the run's: its signatures or keys
    /// would not match the run's.
    #[error(
        "the index \"{}\" was built with {}; {}",
        .path.display(),
        describe_differences(.differences),
        remedy(.differences)
    )]
    IncompatibleIndex {
        /// The index folder.
        path: PathBuf,
        /// The settings that differ, in name order: name, value in the index, value in the run.
        differences: Vec<[String; 3]>,
    },
    /// A file in the way of a run's outputs that no earlier run listed as its own.
    #[error(
        "\"{}\" was not written by neardup (no earlier run into \"{}\" lists it in _FILES.json); move it away or choose another folder",
        .path.display(), .folder.display()
    )]
    NotOurs {
        /// The file.
        path: PathBuf,
        /// The folder the run writes.
        folder: PathBuf,
    },
    /// A folder holds what another role of folder holds: a run would remove it as its own
    /// earlier files, or mix its files into it.
    #[error(
        "\"{}\" holds {} ({}), and this run would write {} there, removing them; choose another folder for {}",
        .folder.display(), .holds.holds(), .holds.flag(), describe_role(*.wanted), .wanted.flag()
    )]
    OtherRole {
        /// The folder.
        folder: PathBuf,
        /// What it holds.
        holds: Role,
        /// What this run would write there.
        wanted: Role,
    },
    /// Another run holds the lock of a folder this run changes (an output folder, an index).
    #[error(
        "\"{}\" is held by another run ({holder}); one run at a time changes that folder",
        .lock.display()
    )]
    Busy {
        /// The lock file.
        lock: PathBuf,
        /// Who holds it.
        holder: String,
    },
    /// A lock file that names no holder (empty, or not written by neardup), too recent to
    /// take over: a run may be writing it this instant, or a run died as it made it.
    #[error(
        "the lock \"{}\" is unreadable ({bytes} bytes that name no holder: empty, or not written by neardup), last changed {age_seconds} s ago: a run may be making it, or one died as it did; it is taken over once {stale_after_seconds} s old, or remove it if no run uses the folder",
        .lock.display()
    )]
    UnreadableLock {
        /// The lock file.
        lock: PathBuf,
        /// Its size.
        bytes: usize,
        /// Seconds since it last changed.
        age_seconds: u64,
        /// The age at which it is taken over.
        stale_after_seconds: u64,
    },
    /// Another run took over this run's lock (it judged this run stopped): this run must
    /// not commit.
    #[error(
        "another run took over the lock \"{}\" while this run held it (it judged this run stopped); this run commits nothing",
        .lock.display()
    )]
    LockLost {
        /// The lock file.
        lock: PathBuf,
    },
    /// The index changed (a run added to it, or it was compacted or forgotten from) after
    /// this run read it.
    #[error("the index \"{}\" changed after this run read it (another run or index command changed it); run again", .path.display())]
    IndexChanged {
        /// The index folder.
        path: PathBuf,
    },
    /// The Parquet writer failed.
    #[error("cannot write parquet file \"{}\"", .path.display())]
    ParquetWrite {
        /// The file.
        path: PathBuf,
        /// What the writer reported.
        source: parquet::errors::ParquetError,
    },
}

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// "10 bytes when listed, 4 bytes now, modified since it was listed".
fn describe_change(listed_bytes: u64, bytes_now: u64, rewritten: bool) -> String {
    let mut parts = Vec::new();
    if listed_bytes != bytes_now {
        parts.push(format!("{listed_bytes} bytes when listed, {bytes_now} bytes now"));
    }
    if rewritten {
        parts.push("modified since it was listed".to_string());
    }
    parts.join(", ")
}

/// What a run writes into a folder of `role`, for messages.
fn describe_role(role: Role) -> &'static str {
    match role {
        Role::Output => "its outputs",
        Role::Kept => "its kept dataset",
        Role::Index => "its index",
    }
}

/// "`a` = 1, this run has `a` = 2 (these differ too: b, c)", the signature version first
/// when it differs (it explains the others).
fn describe_differences(differences: &[[String; 3]]) -> String {
    let first = differences.iter().position(|d| d[0] == "signature_version").unwrap_or(0);
    let Some([setting, index, run]) = differences.get(first) else {
        return "other settings".to_string();
    };
    let mut text = format!("{setting} = {index}, this run has {setting} = {run}");
    let others: Vec<&str> = (differences.iter().enumerate())
        .filter(|(i, _)| *i != first)
        .map(|(_, d)| d[0].as_str())
        .collect();
    if !others.is_empty() {
        text.push_str(&format!(" (these differ too: {})", others.join(", ")));
    }
    text
}

/// What a run refused by an index of other settings can do: use the index's settings
/// (named as `--set` arguments where the index recorded a value a job file can give), or,
/// when the index was signed by another signature version (which no setting gives back),
/// build the index again.
fn remedy(differences: &[[String; 3]]) -> String {
    if differences.iter().any(|[setting, ..]| setting == "signature_version") {
        return "this neardup signs differently (CHANGELOG.md, \"Signature versions\"): build a \
                new index by running the index's batches again into another index folder, or \
                keep using this one with the neardup release that made it"
            .to_string();
    }
    // A value in parentheses ("(not set)", "(chosen per run)") and the folding table's
    // name are recorded by a run, never given.
    let sets: Vec<String> = differences
        .iter()
        .filter(|[setting, index, _]| {
            !index.starts_with('(') && setting != "normalize.han_fold_table"
        })
        .map(|[setting, index, _]| format!("--set {setting}={index}"))
        .collect();
    if sets.is_empty() {
        "use the settings of the index, or another index folder".to_string()
    } else {
        format!("use the settings of the index ({}), or another index folder", sets.join(" "))
    }
}

/// The message a panic carried (`panic!` with a literal or a formatted message); `None`
/// for any other payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
}

/// What [`Error::NoInput`] says of the files it passed over: at most ten, with why.
fn skipped_text(skipped: &[(PathBuf, String)]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut text = format!("; passed over {}:", skipped.len());
    for (path, why) in skipped.iter().take(10) {
        text.push_str(&format!(" \"{}\" ({why});", path.display()));
    }
    if skipped.len() > 10 {
        text.push_str(&format!(" and {} more", skipped.len() - 10));
    }
    text.trim_end_matches(';').to_string()
}
