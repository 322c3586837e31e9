//! The `neardup` command line: argument parsing, job files, reports and exit codes.
//!
//! This is a library with a thin `main.rs`, so tests run [`run`] in-process. Exit codes:
//! 0 success, 1 the job failed, 2 a usage or job-file error.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub mod eval;
pub mod explain;
pub mod tune;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use neardup_job::{JobConfig, JobError, JobSpec, KeepRule, Method, Progress, Summary, Topology};

/// Finds near-duplicate documents with MinHash-LSH or SimHash and decides which to keep.
#[derive(Debug, Parser)]
#[command(name = "neardup", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Log level of the lines written to stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogLevel::Warn)]
    pub log: LogLevel,
}

/// Log levels.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// Stages and their timings.
    Info,
    /// Per-worker details.
    Debug,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find duplicates: write verified pairs, clusters and a keep/remove decision per document.
    Dedup(DedupArgs),
    /// Score a run against labelled truth: pair precision, recall, F1, adjusted Rand index,
    /// recall by similarity, and the false positives.
    Eval(EvalArgs),
    /// Show what LSH parameters do (candidate probability by similarity, error rates,
    /// cost), or, with --truth, try a grid of settings on labelled data and pick the best F1.
    Tune(TuneArgs),
    /// Explain why two documents were or were not matched: similarity, shared bands or
    /// tables, shared and differing features, and the differing passages side by side.
    Explain(ExplainArgs),
    /// Look after an index of earlier runs (`dedup --index`): show it, or take documents
    /// out of it.
    #[command(subcommand)]
    Index(IndexCommand),
}

/// `neardup index` subcommands.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Print the index's settings and generations.
    Show {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
    },
    /// Take documents out of the index (taken-down pages, say), so they no longer match
    /// new copies. A listed document that was kept takes its cluster's removed members
    /// with it.
    Forget {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
        /// A text file of document ids, one per line.
        #[arg(long)]
        ids: PathBuf,
    },
    /// Merge the index's generations into one segment, so a lookup opens one part per key
    /// partition instead of one per run; drops the key rows of forgotten documents and
    /// the folders of failed runs. Decisions do not change.
    Compact {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
    },
}

/// Arguments of `neardup explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A run's output folder: A and B are document ids of that run, explained under its
    /// settings. Without it, A and B are text files, explained under --job or the defaults.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// The first document.
    pub a: String,
    /// The second document.
    pub b: String,
    /// Job file (without --run).
    #[arg(long, conflicts_with = "run")]
    pub job: Option<PathBuf>,
    /// Method (without --run).
    #[arg(long, value_enum, conflicts_with = "run")]
    pub method: Option<MethodArg>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `neardup tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Method to tune [default: the job file's, else minhash].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// Job file to start from.
    #[arg(long)]
    pub job: Option<PathBuf>,
    /// MinHash Jaccard threshold (bands and rows are chosen from it unless given).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// MinHash bands (with --rows).
    #[arg(long, requires = "rows")]
    pub bands: Option<u32>,
    /// MinHash rows per band (with --bands).
    #[arg(long, requires = "bands")]
    pub rows: Option<u32>,
    /// SimHash maximum Hamming distance.
    #[arg(long)]
    pub max_distance: Option<u32>,
    /// SimHash blocks [default: chosen from --documents].
    #[arg(long)]
    pub blocks: Option<u32>,
    /// Corpus size, for SimHash block choice and chance candidates.
    #[arg(long, default_value_t = 1_000_000)]
    pub documents: u64,
    /// Labelled documents (a cluster label per document): try a grid of settings on them.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// The documents to run on, with text [default: the --truth file].
    #[arg(long, short = 'i')]
    pub input: Vec<PathBuf>,
    /// Settings to try: thresholds (MinHash) or distances (SimHash), comma-separated
    /// [default: 0.5 to 0.95 by 0.05, or 1 to 8].
    #[arg(long, value_delimiter = ',')]
    pub grid: Vec<f64>,
    /// Id field of the documents and the truth.
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// Text field of the documents.
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// Cluster label field of the truth.
    #[arg(long, default_value = "truth")]
    pub label_field: String,
    /// Worker threads for the trial runs [default: the number of CPUs].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `neardup eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Truth as a cluster label per document, in any input format (JSONL, Parquet; plain
    /// or compressed); documents with equal labels are duplicates.
    #[arg(long, required_unless_present = "truth_pairs", conflicts_with = "truth_pairs")]
    pub truth: Option<PathBuf>,
    /// Truth as labelled pairs: JSON Lines with `id_a`, `id_b` and `duplicate` (true or
    /// false; true when absent).
    #[arg(long)]
    pub truth_pairs: Option<PathBuf>,
    /// The output folder of the run to score.
    #[arg(long)]
    pub run: PathBuf,
    /// The truth's id field.
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// The truth's cluster label field.
    #[arg(long, default_value = "truth")]
    pub label_field: String,
    /// A field of the truth that groups documents (such as the transformation that made
    /// them): scores are also given per group, over the pairs with a document of the
    /// group (--truth only).
    #[arg(long, conflicts_with = "truth_pairs")]
    pub by: Option<String>,
    /// False-positive pairs to list.
    #[arg(long, default_value_t = 20)]
    pub show: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Signature method on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum MethodArg {
    /// MinHash with banded LSH, verified by Jaccard similarity.
    Minhash,
    /// SimHash with block tables, verified by Hamming distance.
    Simhash,
}

/// Removal rule on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RemovalArg {
    /// Every member of a cluster but the kept document.
    Connected,
    /// Only members verified against the kept document.
    Verified,
}

/// Keep rule on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum KeepArg {
    /// Keep the earliest document of a cluster (input order).
    First,
    /// Keep the longest document of a cluster; ties go to the earliest.
    Longest,
}

/// Arguments of `neardup dedup`.
#[derive(Debug, Args)]
pub struct DedupArgs {
    /// Input files (.jsonl[.gz|.zst], .parquet, .warc[.gz], .wet[.gz]) or folders of them.
    #[arg(long, short = 'i', num_args = 1.., required_unless_present = "input_list")]
    pub input: Vec<PathBuf>,
    /// A manifest of inputs: a text file with one path per line (blank lines and lines
    /// starting with # are ignored), as cluster schedulers hand them out.
    #[arg(long)]
    pub input_list: Option<PathBuf>,
    /// Output folder: pairs/, documents/, summary.json and _SUCCESS are written here.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
    /// Also write the deduplicated dataset here: every kept record, in its input's format
    /// (JSONL lines and Parquet rows with all their fields; web pages as JSONL of id, url,
    /// date, digest and text).
    #[arg(long, value_name = "DIR")]
    pub write_kept: Option<PathBuf>,
    /// Index of earlier runs: deduplicate against every document it holds, then add this
    /// run's documents to it as a new generation (made on first use). Runs that share an
    /// index must use the same signature and feature settings [job file: index.dir].
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// This run's name in the index, shown as `duplicate_of_run` when later runs find
    /// copies of its documents [default: the output folder's name].
    #[arg(long, value_name = "NAME")]
    pub run_name: Option<String>,
    /// Job file (TOML) with every setting that changes results; the flags below override it.
    #[arg(long)]
    pub job: Option<PathBuf>,
    /// Signature method [job file: method; default: minhash].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// MinHash Jaccard threshold for a verified pair [job file: minhash.threshold; default: 0.8].
    #[arg(long)]
    pub threshold: Option<f64>,
    /// SimHash largest Hamming distance of a verified pair [job file: simhash.max_distance; default: 3].
    #[arg(long)]
    pub max_distance: Option<u32>,
    /// Which document of a cluster to keep [job file: decision.keep; default: first].
    #[arg(long, value_enum)]
    pub keep: Option<KeepArg>,
    /// Which cluster members are removed: all (connected) or only those verified against
    /// the kept document (verified) [job file: decision.removal; default: connected].
    #[arg(long, value_enum)]
    pub removal: Option<RemovalArg>,
    /// Field holding the document id; "" numbers records as path:record [job file: input.id_field; default: id].
    #[arg(long)]
    pub id_field: Option<String>,
    /// Field holding the document text [job file: input.text_field; default: text].
    #[arg(long)]
    pub text_field: Option<String>,
    /// Seed of all hashing [job file: seed; default: 42].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads per process; results do not depend on it [default: the number of CPUs].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// Processes of a cluster run (each started with the same arguments but --process).
    #[arg(long, short = 'n', default_value_t = 1)]
    pub processes: usize,
    /// This process's index in a cluster run, 0..processes.
    #[arg(long, short = 'p', default_value_t = 0)]
    pub process: usize,
    /// For a cluster run: a file with one host:port per process, in process order.
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// A cluster run fails when a process has sent nothing for this many seconds.
    #[arg(long, default_value_t = 600)]
    pub watchdog: u64,
    /// A cluster run fails when the processes have not all connected within this many seconds.
    #[arg(long, default_value_t = 300)]
    pub connect_timeout: u64,
    /// Memory this process aims to stay within, e.g. 8G or 512M; grouping stages spill
    /// sorted runs to --spill-dir past it [default: half the machine's or container's limit].
    #[arg(long, value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Folder for spill files (a subfolder per worker, removed at the end) [default: the
    /// system temporary folder].
    #[arg(long)]
    pub spill_dir: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Parses a byte count with an optional binary suffix: `1073741824`, `512M`, `8G`, `1T`.
///
/// # Errors
/// A message for clap when the text is not such a count.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                'B' => 0,
                _ => return Err(format!("unknown size suffix in \"{text}\" (use K, M, G or T)")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: f64 =
        digits.trim().parse().map_err(|_| format!("\"{text}\" is not a size like 512M or 8G"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(1.0..1e19).contains(&bytes) {
        return Err(format!("size \"{text}\" is out of range"));
    }
    Ok(bytes as u64)
}

/// How a run ended, for the exit code.
#[derive(Debug)]
pub enum Outcome {
    /// The job succeeded.
    Success(Box<Summary>),
    /// An evaluation was printed.
    Evaluated(Box<eval::Report>),
    /// Parameters were shown or tried.
    Tuned(Vec<tune::Trial>),
    /// A pair was explained.
    Explained(Box<explain::Explanation>),
    /// An index was shown or changed.
    Index,
}

/// A usage or job-file error (exit code 2), as opposed to a failed job (exit code 1).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// Parses the job file, applies flag overrides and checks the result.
///
/// # Errors
/// [`UsageError`] when the job file cannot be read or parsed, or a setting is invalid.
pub fn job_config(args: &DedupArgs) -> anyhow::Result<JobConfig> {
    let mut spec = match &args.job {
        Some(path) => read_job_file(path)?,
        None => JobSpec::default(),
    };
    if let Some(m) = args.method {
        spec.method = method(m);
    }
    if let Some(t) = args.threshold {
        spec.minhash.threshold = t;
    }
    if let Some(k) = args.max_distance {
        spec.simhash.max_distance = k;
    }
    if let Some(k) = args.keep {
        spec.decision.keep = match k {
            KeepArg::First => KeepRule::First,
            KeepArg::Longest => KeepRule::Longest,
        };
    }
    if let Some(r) = args.removal {
        spec.decision.removal = match r {
            RemovalArg::Connected => neardup_job::Removal::Connected,
            RemovalArg::Verified => neardup_job::Removal::Verified,
        };
    }
    if let Some(f) = &args.id_field {
        spec.input.id_field = f.clone();
    }
    if let Some(f) = &args.text_field {
        spec.input.text_field = f.clone();
    }
    if let Some(s) = args.seed {
        spec.seed = s;
    }
    let mut inputs = args.input.clone();
    if let Some(list) = &args.input_list {
        let text = std::fs::read_to_string(list).map_err(|e| {
            UsageError(format!("cannot read input list \"{}\": {e}", list.display()))
        })?;
        inputs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(PathBuf::from),
        );
    }
    let usage = |e: neardup_job::ConfigError| -> anyhow::Error {
        let detail = match &e {
            neardup_job::ConfigError::Input(source) | neardup_job::ConfigError::Index(source) => {
                format!("{e}: {source}")
            }
            _ => e.to_string(),
        };
        UsageError(detail).into()
    };
    if let Some(dir) = &args.index {
        spec.index.dir = Some(dir.clone());
    }
    let index = spec.index.dir.clone();
    let config = JobConfig::with_kept(spec, &inputs, args.output.clone(), args.write_kept.clone())
        .map_err(usage)?;
    match &index {
        Some(dir) => {
            let run = args.run_name.clone().unwrap_or_else(|| {
                let name = args.output.file_name().map(|n| n.to_string_lossy().into_owned());
                name.unwrap_or_else(|| args.output.display().to_string())
            });
            config.with_index(dir.clone(), run).map_err(usage)
        }
        None if args.run_name.is_some() => Err(UsageError(
            "--run-name names a run in an index: give --index or the job file's index.dir".into(),
        )
        .into()),
        None => Ok(config),
    }
}

/// Runs a parsed command line.
///
/// # Errors
/// Any failure, with context; [`UsageError`] marks usage and job-file errors.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Dedup(args) => dedup(&args),
        Command::Eval(args) => evaluate(&args),
        Command::Tune(args) => tune(&args),
        Command::Explain(args) => explain(&args),
        Command::Index(command) => index_command(&command),
    }
}

/// Runs `neardup index ...`.
fn index_command(command: &IndexCommand) -> anyhow::Result<Outcome> {
    use neardup_io::index::{Manifest, compact, forget};
    let mut out = std::io::stdout().lock();
    match command {
        IndexCommand::Show { index } => {
            let Some(m) = Manifest::load(index)? else {
                return Err(UsageError(format!("no index in \"{}\"", index.display())).into());
            };
            writeln!(
                out,
                "index {} (format {}, neardup {})",
                index.display(),
                m.format,
                m.neardup_version
            )?;
            writeln!(
                out,
                "{} generation(s) in {} segment(s), {} key partitions",
                m.generations.len(),
                m.segments().len(),
                m.partitions
            )?;
            writeln!(
                out,
                "{:>10}  {:<24} {:>12} {:>12}  folder",
                "generation", "run", "documents", "keys"
            )?;
            for g in &m.generations {
                writeln!(
                    out,
                    "{:>10}  {:<24} {:>12} {:>12}  {}",
                    g.number, g.run, g.documents, g.keys, g.folder
                )?;
            }
            writeln!(out, "settings:")?;
            for (k, v) in &m.settings {
                writeln!(out, "  {k} = {v}")?;
            }
        }
        IndexCommand::Forget { index, ids } => {
            let text = std::fs::read_to_string(ids).map_err(|e| {
                UsageError(format!("cannot read the id list \"{}\": {e}", ids.display()))
            })?;
            let ids: std::collections::BTreeSet<String> =
                text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
            let report = forget(index, &ids)?;
            if let Some(taken) = &report.lock_taken_over {
                eprintln!("warning: {taken}");
            }
            writeln!(
                out,
                "forgot {} listed document(s) and {} member(s) of their clusters; {} id(s) not in the index",
                report.listed, report.with_their_kept, report.unknown_ids
            )?;
        }
        IndexCommand::Compact { index } => {
            let started = std::time::Instant::now();
            let report = compact(index)?;
            if let Some(taken) = &report.lock_taken_over {
                eprintln!("warning: {taken}");
            }
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            match &report.folder {
                Some(folder) => writeln!(
                    out,
                    "merged {} segment(s) of {} generation(s) into {folder}: {} documents, {} -> {} key rows, {:.1} -> {:.1} MiB in {:.1} s",
                    report.segments_before,
                    report.generations,
                    report.documents,
                    report.keys_before,
                    report.keys_after,
                    mib(report.bytes_before),
                    mib(report.bytes_after),
                    started.elapsed().as_secs_f64()
                )?,
                None => writeln!(
                    out,
                    "nothing to merge: {} segment(s), no forgotten documents",
                    report.segments_before
                )?,
            }
            if !report.orphans_removed.is_empty() {
                writeln!(
                    out,
                    "removed {} folder(s) of failed runs: {}",
                    report.orphans_removed.len(),
                    report.orphans_removed.join(", ")
                )?;
            }
        }
    }
    Ok(Outcome::Index)
}

/// Runs `neardup eval` and prints its report.
fn evaluate(args: &EvalArgs) -> anyhow::Result<Outcome> {
    let summary = read_run_summary(&args.run)?;
    let spec: JobSpec = serde_json::from_value(summary["config"].clone())
        .context("the run's summary.json has no job settings this version reads")?;
    let docs = neardup_io::read_documents(&args.run.join("documents"))?;
    let pairs = neardup_io::read_pairs(&args.run.join("pairs"))?;
    let truth = match (&args.truth, &args.truth_pairs) {
        (Some(path), _) => eval::Truth::read_clusters(path, &args.id_field, &args.label_field)?,
        (None, Some(path)) => eval::Truth::read_pairs(path)?,
        (None, None) => return Err(UsageError("give --truth or --truth-pairs".into()).into()),
    };
    let ids: std::collections::HashSet<&str> = match &truth {
        eval::Truth::Clusters(labels) => labels.keys().map(String::as_str).collect(),
        eval::Truth::Pairs(labelled) => labelled
            .iter()
            .filter(|(_, dup)| **dup)
            .flat_map(|((a, b), _)| [a.as_str(), b.as_str()])
            .collect(),
    };
    // The similarity bands need the texts; without them the other scores still stand.
    let learned = !summary["boilerplate"].is_null();
    let boilerplate = neardup_job::read_boilerplate(&args.run, &spec, learned)?;
    let texts = match eval::read_texts(&docs, &spec, &ids, boilerplate.as_ref()) {
        Ok(texts) => Some(texts),
        Err(e) => {
            eprintln!("note: no recall by similarity, the inputs cannot be read again: {e:#}");
            None
        }
    };
    let groups = match (&args.by, &args.truth) {
        (Some(field), Some(path)) => Some(eval::read_labels(path, &args.id_field, field)?),
        _ => None,
    };
    let analyzer = neardup_job::Signer::spec_analyzer(&spec);
    let texts = texts.as_ref().map(|t| (t, &analyzer));
    let report = eval::evaluate(&truth, &docs, &pairs, texts, groups.as_ref(), args.show);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_eval(&mut out, &report)?;
    }
    Ok(Outcome::Evaluated(Box::new(report)))
}

/// Runs `neardup explain`.
fn explain(args: &ExplainArgs) -> anyhow::Result<Outcome> {
    let mut out = std::io::stdout().lock();
    let explanation = match &args.run {
        Some(run) => {
            let summary = read_run_summary(run)?;
            let spec: JobSpec = serde_json::from_value(summary["config"].clone())
                .context("the run's summary.json has no job settings this version reads")?;
            let resolved = &summary["resolved"];
            let number = |k: &str| resolved[k].as_u64().and_then(|n| u32::try_from(n).ok());
            let docs = neardup_io::read_documents(&run.join("documents"))?;
            let ids: std::collections::HashSet<&str> = [args.a.as_str(), args.b.as_str()].into();
            let rows: Vec<&neardup_io::DocumentRow> = docs
                .iter()
                .filter(|d| d.id.as_deref().is_some_and(|id| ids.contains(id)))
                .collect();
            let learned = !summary["boilerplate"].is_null();
            let boilerplate = neardup_job::read_boilerplate(run, &spec, learned)?;
            let mut texts = eval::read_texts(&docs, &spec, &ids, boilerplate.as_ref())?;
            let mut take = |id: &str| -> anyhow::Result<explain::Doc> {
                let text = texts.remove(id).ok_or_else(|| {
                    UsageError(format!("no document with id \"{id}\" in the run's inputs"))
                })?;
                Ok(explain::Doc { id: id.to_string(), text })
            };
            let (a, b) = (take(&args.a)?, take(&args.b)?);
            let e = explain::explain(
                &spec,
                number("bands").zip(number("rows")),
                number("blocks"),
                &a,
                &b,
            )?;
            if !args.json {
                for row in rows {
                    let id = row.id.as_deref().unwrap_or_default();
                    writeln!(
                        out,
                        "run: {id}: {}{}{}",
                        row.decision.as_str(),
                        row.duplicate_of
                            .as_ref()
                            .map(|d| format!(" as a duplicate of {d}"))
                            .unwrap_or_default(),
                        row.cluster
                            .as_ref()
                            .map(|c| format!(", cluster {c} of {}", row.cluster_size.unwrap_or(1)))
                            .unwrap_or_default()
                    )?;
                }
                let pairs = neardup_io::read_pairs(&run.join("pairs"))?;
                let (x, y) = if args.a <= args.b { (&args.a, &args.b) } else { (&args.b, &args.a) };
                match pairs.iter().find(|p| &p.id_a == x && &p.id_b == y) {
                    Some(p) => writeln!(
                        out,
                        "run: a {} pair, similarity {:.4}\n",
                        p.kind.as_str(),
                        p.similarity
                    )?,
                    None => writeln!(
                        out,
                        "run: not a pair in pairs/ (a shared cluster comes through other documents)\n"
                    )?,
                }
            }
            e
        }
        None => {
            let mut spec = match &args.job {
                Some(path) => read_job_file(path)?,
                None => JobSpec::default(),
            };
            if let Some(m) = args.method {
                spec.method = method(m);
            }
            let read = |name: &str| -> anyhow::Result<explain::Doc> {
                let text = std::fs::read_to_string(name).map_err(|e| {
                    UsageError(format!(
                        "cannot read \"{name}\": {e} (without --run, give two text files)"
                    ))
                })?;
                Ok(explain::Doc { id: name.to_string(), text })
            };
            explain::explain(&spec, None, None, &read(&args.a)?, &read(&args.b)?)?
        }
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &explanation)?;
        writeln!(out)?;
    } else {
        explain::print(&mut out, &explanation)?;
    }
    Ok(Outcome::Explained(Box::new(explanation)))
}

/// A run's `summary.json`.
fn read_run_summary(run: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let path = run.join(neardup_job::SUMMARY_FILE);
    let bytes = std::fs::read(&path)
        .with_context(|| format!("cannot read \"{}\": is it a neardup run?", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("\"{}\" is not JSON", path.display()))
}

/// Runs `neardup tune`.
fn tune(args: &TuneArgs) -> anyhow::Result<Outcome> {
    let mut spec = match &args.job {
        Some(path) => read_job_file(path)?,
        None => JobSpec::default(),
    };
    if let Some(m) = args.method {
        spec.method = method(m);
    }
    spec.input.id_field.clone_from(&args.id_field);
    spec.input.text_field.clone_from(&args.text_field);
    let minhash = spec.method == Method::Minhash;
    let mut out = std::io::stdout().lock();
    let Some(truth_path) = &args.truth else {
        if minhash {
            let threshold = args.threshold.unwrap_or(spec.minhash.threshold);
            let m = &spec.minhash;
            let lsh = match (args.bands, args.rows) {
                (Some(b), Some(r)) => neardup_core::LshParams::try_new(b, r),
                _ => neardup_core::LshParams::choose(
                    threshold,
                    m.num_perm,
                    m.false_positive_weight,
                    m.false_negative_weight,
                ),
            }
            .map_err(|e| UsageError(e.to_string()))?;
            let curve = tune::MinHashCurve::of(lsh, threshold);
            if args.json {
                serde_json::to_writer_pretty(&mut out, &curve)?;
                writeln!(out)?;
            } else {
                tune::print_minhash(&mut out, &curve)?;
            }
        } else {
            let k = args.max_distance.unwrap_or(spec.simhash.max_distance);
            let layout = match args.blocks.or(spec.simhash.blocks) {
                Some(blocks) => neardup_core::BlockLayout::try_new(blocks, k),
                None => neardup_core::BlockLayout::choose(k, args.documents),
            }
            .map_err(|e| UsageError(e.to_string()))?;
            let curve = tune::SimHashCurve::of(&layout, args.documents);
            if args.json {
                serde_json::to_writer_pretty(&mut out, &curve)?;
                writeln!(out)?;
            } else {
                tune::print_simhash(&mut out, &curve)?;
            }
        }
        return Ok(Outcome::Tuned(Vec::new()));
    };
    let truth = eval::Truth::read_clusters(truth_path, &args.id_field, &args.label_field)?;
    let inputs = if args.input.is_empty() { vec![truth_path.clone()] } else { args.input.clone() };
    let grid = if args.grid.is_empty() { tune::default_grid(minhash) } else { args.grid.clone() };
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let scratch = tune::Scratch::new().context("cannot create a folder for the trial runs")?;
    let mut trials = Vec::new();
    for (i, &setting) in grid.iter().enumerate() {
        let mut trial_spec = spec.clone();
        if minhash {
            trial_spec.minhash.threshold = setting;
            trial_spec.minhash.bands = None;
            trial_spec.minhash.rows = None;
        } else {
            if setting.fract() != 0.0 || setting < 0.0 {
                return Err(UsageError(format!(
                    "SimHash distances are whole numbers, got {setting}"
                ))
                .into());
            }
            trial_spec.simhash.max_distance = setting as u32;
        }
        let config = JobConfig::new(trial_spec, &inputs, scratch.trial(i))
            .map_err(|e| UsageError(e.to_string()))?;
        let summary = neardup_job::run(&config, &Topology::local(workers))
            .map_err(|e| anyhow::Error::new(e).context(format!("the trial at {setting} failed")))?;
        let docs = neardup_io::read_documents(&config.output.join("documents"))?;
        let report = eval::evaluate(&truth, &docs, &[], None, None, 0);
        let r = &summary.resolved;
        let resolved = match (r.bands, r.rows, r.blocks) {
            (Some(b), Some(rows), _) => format!("{b} x {rows}"),
            (_, _, Some(blocks)) => format!("{blocks} blocks"),
            _ => String::new(),
        };
        trials.push(tune::Trial {
            setting,
            resolved,
            precision: report.precision,
            recall: report.recall,
            f1: report.f1,
            pairs: summary.counts.pairs,
            candidates_per_document: summary.lsh.candidates_per_document,
        });
    }
    if args.json {
        serde_json::to_writer_pretty(&mut out, &trials)?;
        writeln!(out)?;
    } else {
        let label = if minhash { "threshold" } else { "distance" };
        tune::print_trials(&mut out, label, &trials)?;
    }
    Ok(Outcome::Tuned(trials))
}

/// A job file.
fn read_job_file(path: &std::path::Path) -> anyhow::Result<JobSpec> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read job file \"{}\": {e}", path.display())))?;
    Ok(toml::from_str::<JobSpec>(&text)
        .map_err(|e| UsageError(format!("invalid job file \"{}\": {e}", path.display())))?)
}

fn method(m: MethodArg) -> Method {
    match m {
        MethodArg::Minhash => Method::Minhash,
        MethodArg::Simhash => Method::Simhash,
    }
}

/// The human form of an evaluation report.
fn print_eval(out: &mut dyn Write, r: &eval::Report) -> std::io::Result<()> {
    writeln!(
        out,
        "documents  {:>10}  ({} of the truth not in the run)",
        r.documents, r.missing_from_run
    )?;
    writeln!(
        out,
        "pairs      {:>10} true, {} predicted, {} both",
        r.true_pairs, r.predicted_pairs, r.true_positives
    )?;
    write!(
        out,
        "precision  {:>10.4}\nrecall     {:>10.4}\nF1         {:>10.4}\n",
        r.precision, r.recall, r.f1
    )?;
    if let Some(ari) = r.adjusted_rand_index {
        writeln!(out, "ARI        {ari:>10.4}")?;
    }
    if !r.recall_by_similarity.is_empty() {
        writeln!(out, "\nrecall by feature Jaccard of the true pairs")?;
        for b in r.recall_by_similarity.iter().filter(|b| b.pairs > 0) {
            let range = if b.from >= 1.0 {
                "1.0 (same features)".to_string()
            } else {
                format!("{:.1} - {:.1}", b.from, b.to)
            };
            writeln!(
                out,
                "  {range:<20} {:>8} pairs  {:>6.1}% found",
                b.pairs,
                100.0 * b.found as f64 / b.pairs as f64
            )?;
        }
    }
    if r.removed > 0 {
        writeln!(
            out,
            "removed    {:>10}  ({} for a document the truth says differs)",
            r.removed, r.removed_wrongly
        )?;
    }
    if !r.by_group.is_empty() {
        let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "\n{:<16} {:>6} {:>8} {:>9} {:>6} {:>6} {:>6} {:>8} {:>7}",
            "group", "docs", "true", "predicted", "P", "R", "F1", "removed", "wrongly"
        )?;
        for g in &r.by_group {
            writeln!(
                out,
                "{:<16} {:>6} {:>8} {:>9} {:>6} {:>6} {:>6} {:>8} {:>7}",
                g.group,
                g.documents,
                g.true_pairs,
                g.predicted_pairs,
                cell(g.precision),
                cell(g.recall),
                cell(g.f1),
                g.removed,
                g.removed_wrongly
            )?;
        }
    }
    writeln!(out, "\nfalse positives: {} predicted pairs", r.false_positive_count)?;
    if !r.false_positive_pairs.is_empty() {
        writeln!(out, "  verified pairs the truth rejects, most similar first:")?;
        for p in &r.false_positive_pairs {
            writeln!(out, "  {:.3} {:<5} {}  {}", p.similarity, p.kind, p.id_a, p.id_b)?;
        }
    }
    Ok(())
}

/// The topology the flags describe.
///
/// # Errors
/// [`UsageError`] for an inconsistent process index or an unreadable or short hostfile.
pub fn topology(args: &DedupArgs) -> anyhow::Result<Topology> {
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let mut topology = Topology::local(workers);
    topology.watchdog = std::time::Duration::from_secs(args.watchdog.max(1));
    topology.connect_timeout = std::time::Duration::from_secs(args.connect_timeout.max(1));
    if let Some(budget) = args.memory_budget {
        topology.memory_budget = budget;
        if budget < neardup_job::MEMORY_BUDGET_FLOOR {
            eprintln!(
                "warning: --memory-budget {} MiB is below the {} MiB a run needs whatever its budget; \
                 the run spills all it can but will use more (summary.json reports the peak)",
                budget >> 20,
                neardup_job::MEMORY_BUDGET_FLOOR >> 20
            );
        }
    }
    if let Some(dir) = &args.spill_dir {
        topology.spill_dir.clone_from(dir);
    }
    if args.processes <= 1 {
        return Ok(topology);
    }
    if args.process >= args.processes {
        return Err(UsageError(format!(
            "--process {} is not below --processes {}",
            args.process, args.processes
        ))
        .into());
    }
    let Some(hostfile) = &args.hostfile else {
        return Err(
            UsageError("a cluster run (--processes above 1) needs --hostfile".into()).into()
        );
    };
    let text = std::fs::read_to_string(hostfile)
        .map_err(|e| UsageError(format!("cannot read hostfile \"{}\": {e}", hostfile.display())))?;
    let addresses: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .take(args.processes)
        .collect();
    if addresses.len() < args.processes {
        let message = format!(
            "hostfile \"{}\" has {} addresses for {} processes",
            hostfile.display(),
            addresses.len(),
            args.processes
        );
        return Err(UsageError(message).into());
    }
    topology.processes = args.processes;
    topology.process = args.process;
    topology.addresses = addresses;
    Ok(topology)
}

fn dedup(args: &DedupArgs) -> anyhow::Result<Outcome> {
    let config = job_config(args)?;
    let topology = topology(args)?;
    let workers = topology.workers;
    if !args.quiet {
        let bytes: u64 = config.inputs.iter().map(|f| f.bytes).sum();
        let place = if topology.processes > 1 {
            format!("process {} of {}, ", topology.process, topology.processes)
        } else {
            String::new()
        };
        eprintln!(
            "neardup: {} on {} file(s), {:.1} MB, {place}{} worker(s) -> {}",
            config.spec.method.as_str(),
            config.inputs.len(),
            bytes as f64 / 1e6,
            workers,
            config.output.display()
        );
    }
    let progress = Arc::new(Progress::default());
    let stop = Arc::new(AtomicBool::new(false));
    let reporter = (!args.quiet).then(|| {
        let (progress, stop) = (progress.clone(), stop.clone());
        let total: u64 = config.inputs.iter().map(|f| f.bytes).sum();
        std::thread::spawn(move || report_progress(&progress, total, &stop))
    });
    let outcome = neardup_job::run_with_progress(&config, &topology, progress);
    stop.store(true, Ordering::Relaxed);
    if let Some(reporter) = reporter {
        let _ = reporter.join();
    }
    let summary = outcome.map_err(|e| match e {
        JobError::TooManyRejects { .. } => anyhow::Error::new(e),
        other => anyhow::Error::new(other).context("the job failed; no _SUCCESS was written"),
    })?;
    if !args.quiet {
        print_report(&summary, &config).context("cannot print the report")?;
    }
    Ok(Outcome::Success(Box::new(summary)))
}

/// Shows progress until `stop`: one line rewritten in place on a terminal, or a plain line
/// every ten seconds when stderr is a file or a pipe (as under a scheduler).
fn report_progress(progress: &Progress, total_bytes: u64, stop: &AtomicBool) {
    let tty = std::io::stderr().is_terminal();
    let period = if tty { Duration::from_millis(250) } else { Duration::from_secs(10) };
    let start = Instant::now();
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() < period {
            continue;
        }
        last = Instant::now();
        let records = progress.records();
        let rate = records as f64 / start.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "{records} records, {:.1} of {:.1} MB read, {rate:.0} records/s, {}",
            progress.bytes() as f64 / 1e6,
            total_bytes as f64 / 1e6,
            progress.stage().name()
        );
        if tty {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("progress: {line}");
        }
    }
    if tty {
        eprint!("\r\x1b[2K");
    }
}

/// The short human summary printed at the end of a run.
fn print_report(s: &Summary, config: &JobConfig) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let c = &s.counts;
    let pct = |n: u64| {
        if c.records == 0 { 0.0 } else { 100.0 * n as f64 / c.records as f64 }
    };
    writeln!(out, "records   {:>10}", c.records)?;
    if !c.skipped_records.is_empty() {
        let total: u64 = c.skipped_records.values().sum();
        let mut kinds: Vec<_> = c.skipped_records.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let kinds = kinds.join(", ");
        writeln!(out, "skipped   {total:>10}  web-archive records, not documents: {kinds}")?;
    }
    writeln!(out, "kept      {:>10}  {:5.1}%", c.kept, pct(c.kept))?;
    if c.kept_unverified_in_cluster > 0 {
        let n = c.kept_unverified_in_cluster;
        writeln!(out, "  of them {n:>10}  {:5.1}%  unverified_in_cluster", pct(n))?;
    }
    for (reason, n) in &c.removed_by_reason {
        writeln!(out, "removed   {:>10}  {:5.1}%  {}", n, pct(*n), reason.as_str())?;
    }
    for (reason, n) in &c.rejected_by_reason {
        writeln!(out, "rejected  {:>10}  {:5.1}%  {}", n, pct(*n), reason.as_str())?;
    }
    writeln!(out, "pairs     {:>10}  ({} exact, {} near)", c.pairs, c.exact_pairs, c.near_pairs)?;
    match &c.largest_cluster_id {
        Some(id) => {
            writeln!(out, "clusters  {:>10}  (largest {}: {id})", c.clusters, c.largest_cluster)?
        }
        None => writeln!(out, "clusters  {:>10}", c.clusters)?,
    }
    if c.clusters_by_radius.keys().any(|r| *r > 1) {
        let radii: Vec<String> =
            c.clusters_by_radius.iter().map(|(r, n)| format!("{n} of radius {r}")).collect();
        writeln!(
            out,
            "          {:>10}  pair hops from the kept document: {}",
            "",
            radii.join(", ")
        )?;
    }
    if let Some(b) = &s.boilerplate {
        writeln!(
            out,
            "boilerplate {:>8}  lines learned from {} pages; {} lines ({} chars) left out of {} pages",
            b.learned_lines,
            b.learned_from_pages,
            b.lines_removed,
            b.chars_removed,
            b.pages_stripped
        )?;
    }
    if let Some(i) = &s.index {
        let bridged = if i.stats.bridged_clusters > 0 {
            format!(
                "; {} new cluster(s) bridge earlier ones, which stay apart",
                i.stats.bridged_clusters
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "index     {:>10}  removed as copies of {} earlier generation(s) in {} segment(s) ({} matches of {} candidates){bridged}",
            i.stats.removed,
            i.generations_read,
            i.segments_read,
            i.stats.matches,
            i.stats.candidates
        )?;
        writeln!(
            out,
            "          {:>10}  generation {} \"{}\" added: {} documents, {} keys -> {}",
            "", i.generation, i.run, i.stats.documents_written, i.stats.keys_written, i.dir
        )?;
    }
    let secs = s.seconds.total.max(1e-9);
    writeln!(
        out,
        "time      {:>10.2}s  {:.0} records/s",
        s.seconds.total,
        c.records as f64 / secs
    )?;
    if let Some(peak) = s.peak_memory_bytes {
        let over = if peak > s.memory_budget_bytes { ", above the budget" } else { "" };
        writeln!(
            out,
            "memory    {:>10.1} MiB peak  (budget {:.0} MiB, {:.1} MiB spilled{over})",
            peak as f64 / MIB,
            s.memory_budget_bytes as f64 / MIB,
            s.spilled_bytes as f64 / MIB
        )?;
    }
    writeln!(out, "output    {}", config.output.display())?;
    if let (Some(dir), Some(n)) = (&config.write_kept, c.kept_written) {
        writeln!(out, "kept      {n:>10}  records written to {}", dir.display())?;
    }
    Ok(())
}

const MIB: f64 = 1024.0 * 1024.0;

/// Entry point of the binary: parses arguments, runs, prints errors, returns the exit code.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let level = match cli.log {
        LogLevel::Error => tracing_subscriber::filter::LevelFilter::ERROR,
        LogLevel::Warn => tracing_subscriber::filter::LevelFilter::WARN,
        LogLevel::Info => tracing_subscriber::filter::LevelFilter::INFO,
        LogLevel::Debug => tracing_subscriber::filter::LevelFilter::DEBUG,
    };
    // A second initialisation (tests run the CLI repeatedly in one process) is harmless.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    match run(cli) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if let Some(hint) = hint(&e) {
                eprintln!("hint: {hint}");
            }
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// A suggestion for common mistakes.
fn hint(e: &anyhow::Error) -> Option<&'static str> {
    let text = format!("{e:#}");
    if text.contains("missing_text") || text.contains("has no column") {
        Some("set `input.text_field` (or --text-field) to the field that holds the document text")
    } else if text.contains("missing_id") {
        Some("set `input.id_field` (or --id-field) to the id field, or \"\" to number records")
    } else if text.contains("max_reject_ratio") {
        Some(
            "documents/ lists every rejected record with its reason; raise `decision.max_reject_ratio` to accept them",
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("8g"), Ok(8 << 30));
        assert_eq!(parse_bytes("1.5G"), Ok(3 << 29));
        assert_eq!(parse_bytes("2T"), Ok(2 << 40));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
        assert!(parse_bytes("0").is_err());
    }
}
