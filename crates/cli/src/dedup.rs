//! `neardup dedup`: the flags, the job they describe, its topology, progress and report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use neardup_job::{Interrupt, JobConfig, JobError, Progress, Summary, Topology};

use crate::error::UsageError;
use crate::settings::{KeepArg, MethodArg, Overrides, RemovalArg, job_spec, parse_bytes};

/// The flags that say what a job is: its inputs, output, job file and the settings that
/// override it. `neardup sign` takes the same, so that a task and the dedup run after it
/// are given one argument list.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// Input files (.jsonl, .ndjson or .json, .warc or .wet, each also .gz or .zst; .parquet) or
    /// folders of them (where .json files are not taken).
    #[arg(long, short = 'i', num_args = 1.., required_unless_present = "input_list")]
    pub input: Vec<PathBuf>,
    /// A manifest of inputs: a text file with one path or address per line (blank lines and
    /// lines starting with # are ignored), as job schedulers hand them out; local or an
    /// address, gunzipped when its name ends in .gz (Common Crawl's wet.paths.gz).
    #[arg(long)]
    pub input_list: Option<PathBuf>,
    /// Where the list's relative lines are: a folder or an address prefix
    /// (`https://data.commoncrawl.org` for Common Crawl's paths files).
    #[arg(long, requires = "input_list", value_name = "PATH_OR_URL")]
    pub input_base: Option<String>,
    /// Output folder (or `s3://bucket/prefix`): pairs/, documents/, summary.json and
    /// _SUCCESS are written here.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
    /// Also write the deduplicated dataset here: every kept record, in its input's format
    /// (JSONL lines and Parquet rows with all their fields; web pages as JSONL of id, url,
    /// date, digest and text). A folder or an `s3://` prefix.
    #[arg(long, value_name = "DIR")]
    pub write_kept: Option<PathBuf>,
    /// Index of earlier runs: deduplicate against every document it holds, then add this
    /// run's documents to it as a new generation (made on first use). Runs that share an
    /// index must use the same signature and feature settings. A folder or an `s3://`
    /// prefix [job file: index.dir].
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// This run's name in the index, shown as `duplicate_of_run` when later runs find
    /// copies of its documents [default: the output folder's name].
    #[arg(long, value_name = "NAME")]
    pub run_name: Option<String>,
    /// Job file (TOML) with every setting that changes results; the flags below override it.
    #[arg(long)]
    pub job: Option<PathBuf>,
    /// Sets one job-file key over the job file, as the file would, with the same checks:
    /// `--set features.ngram_chars=3`, `--set boilerplate.enabled=false`, `--set
    /// input.url_field=link` (a value that is not TOML is a string). Repeatable; the
    /// flags below override it.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Signature method [job file: method; default: minhash].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// Leave out of each kept document the paragraphs (blocks between blank lines of 100
    /// characters or more; a web page's lines) that a document kept before it holds, and
    /// list them in `paragraphs/` [job file: paragraphs.enabled; default: false].
    #[arg(long)]
    pub paragraphs: bool,
    /// MinHash Jaccard threshold for a verified pair [job file: minhash.threshold; default: 0.8, or 0.75 for web pages].
    #[arg(long)]
    pub threshold: Option<f64>,
    /// SimHash largest Hamming distance of a verified pair [job file: simhash.max_distance; default: 3, or for web pages 7 with TF-IDF weights and 6 with term frequencies].
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
}

/// Arguments of `neardup dedup`.
#[derive(Debug, Args)]
pub struct DedupArgs {
    /// What the job is.
    #[command(flatten)]
    pub job_args: JobArgs,
    /// Worker threads per process; results do not depend on it [default: the number of CPUs].
    #[arg(long, short = 'w', value_parser = crate::settings::at_least_one)]
    pub workers: Option<usize>,
    /// Processes of a distributed run (each started with the same arguments but --process).
    #[arg(long, short = 'n', default_value_t = 1, value_parser = crate::settings::at_least_one)]
    pub processes: usize,
    /// This process's index in a distributed run, 0..processes.
    #[arg(long, short = 'p', default_value_t = 0)]
    pub process: usize,
    /// For a distributed run: a file with one host:port per process, in process order.
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// A distributed run fails when a process has sent nothing for this many seconds.
    #[arg(long, default_value_t = 600)]
    pub watchdog: u64,
    /// A distributed run fails when the processes have not all connected within this many seconds.
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
    /// Print the run's summary.json on stdout instead of the report (with --quiet, nothing
    /// else is printed but errors).
    #[arg(long)]
    pub json: bool,
}

/// Parses the job file, applies flag overrides and checks the result.
///
/// # Errors
/// [`UsageError`] when the job file cannot be read or parsed, or a setting is invalid.
pub fn job_config(args: &JobArgs) -> anyhow::Result<JobConfig> {
    let overrides = Overrides {
        method: args.method,
        threshold: args.threshold,
        max_distance: args.max_distance,
        keep: args.keep,
        removal: args.removal,
        id_field: args.id_field.clone(),
        text_field: args.text_field.clone(),
        seed: args.seed,
        index: args.index.clone(),
        paragraphs: args.paragraphs,
        set: args.set.clone(),
    };
    let spec = job_spec(args.job.as_deref(), &overrides)?;
    let mut inputs = args.input.clone();
    if let Some(list) = &args.input_list {
        let listed = neardup_io::input_list(list, args.input_base.as_deref()).map_err(|e| {
            UsageError::new(format!("cannot read input list \"{}\": {e}", list.display()))
        })?;
        inputs.extend(listed);
    }
    let usage = |e: neardup_job::ConfigError| -> anyhow::Error {
        let detail = match &e {
            neardup_job::ConfigError::Input(source) | neardup_job::ConfigError::Index(source) => {
                // The whole chain: "cannot open X" says little without its cause.
                let mut text = format!("{e}: {source}");
                let mut cause = std::error::Error::source(source);
                while let Some(c) = cause {
                    text.push_str(&format!(": {c}"));
                    cause = c.source();
                }
                text
            }
            _ => e.to_string(),
        };
        UsageError::new(detail).into()
    };
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
        None if args.run_name.is_some() => Err(UsageError::new(
            "--run-name names a run in an index: give --index or the job file's index.dir",
        )
        .into()),
        None => Ok(config),
    }
}

/// The topology the flags describe.
///
/// # Errors
/// [`UsageError`] for an inconsistent process index, an unreadable or short hostfile, or
/// more workers than the memory budget holds ([`neardup_job::check_workers`]).
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
                "warning: --memory-budget {} is below the {} a run needs whatever its budget; \
                 the run spills all it can but will use more (summary.json reports the peak)",
                binary_size(budget),
                binary_size(neardup_job::MEMORY_BUDGET_FLOOR)
            );
        }
    }
    if let Some(dir) = &args.spill_dir {
        topology.spill_dir.clone_from(dir);
    }
    if args.processes <= 1 {
        neardup_job::check_workers(&topology).map_err(UsageError::new)?;
        return Ok(topology);
    }
    if args.process >= args.processes {
        return Err(UsageError::new(format!(
            "--process {} is not below --processes {}",
            args.process, args.processes
        ))
        .into());
    }
    let Some(hostfile) = &args.hostfile else {
        return Err(
            UsageError::new("a distributed run (--processes above 1) needs --hostfile").into()
        );
    };
    let text = std::fs::read_to_string(hostfile).map_err(|e| {
        UsageError::new(format!("cannot read hostfile \"{}\": {e}", hostfile.display()))
    })?;
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
        return Err(UsageError::new(message).into());
    }
    topology.processes = args.processes;
    topology.process = args.process;
    topology.addresses = addresses;
    neardup_job::check_workers(&topology).map_err(UsageError::new)?;
    Ok(topology)
}

/// Runs `neardup dedup`: the job, with a progress line and the report at the end.
///
/// # Errors
/// [`UsageError`] for bad flags or job files; the job's error, with context, when it fails.
pub fn run(args: &DedupArgs) -> anyhow::Result<Summary> {
    let config = job_config(&args.job_args)?;
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
            "neardup: {} on {} file(s), {}, {place}{} worker(s) -> {}",
            config.spec.method.as_str(),
            config.inputs.len(),
            decimal_size(bytes),
            workers,
            config.output.display()
        );
    }
    let interrupt = Interrupt::default();
    let _handlers = SignalHandlers::install(&interrupt).context("cannot handle signals")?;
    let progress = Arc::new(Progress::default());
    let stop = Arc::new(AtomicBool::new(false));
    let reporter = (!args.quiet).then(|| {
        let (progress, stop) = (progress.clone(), stop.clone());
        let total: u64 = config.inputs.iter().map(|f| f.bytes).sum();
        let processes = topology.processes;
        std::thread::spawn(move || report_progress(&progress, total, processes, &stop))
    });
    let outcome = neardup_job::run_interruptible(&config, &topology, progress, &interrupt);
    stop.store(true, Ordering::Relaxed);
    if let Some(reporter) = reporter {
        let _ = reporter.join();
    }
    let summary = outcome.map_err(|e| match e {
        JobError::TooManyRejects { .. }
        | JobError::Refused(_)
        | JobError::SettingsDiffer { .. } => anyhow::Error::new(e),
        other => anyhow::Error::new(other).context("the job failed; no _SUCCESS was written"),
    })?;
    if args.json {
        print_summary_json(&summary).context("cannot print the summary")?;
    } else if !args.quiet {
        print_report(&summary, &config).context("cannot print the report")?;
    }
    Ok(summary)
}

/// SIGINT and SIGTERM handlers for the length of a run: the first signal asks the run to
/// stop (it cleans up as a failed run and exits with 128 + the signal's number); a second
/// one while it stops exits at once, leaving what the run holds for the next run to clear.
pub(crate) struct SignalHandlers(Vec<signal_hook::SigId>);

/// Runs going on in this process (tests run several in one).
static RUNS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

/// Set while no run goes on: SIGINT and SIGTERM then act as they do by default (the
/// process ends), as they did before the first run. Unregistering a run's handlers leaves
/// signal-hook's own handler installed, which would otherwise ignore them.
fn default_action() -> &'static Arc<AtomicBool> {
    static DEFAULT: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(true));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Registered before any run's handlers, so it acts first, and only while idle.
            // It fails only for signals that cannot be caught, which these are not.
            let _ = signal_hook::flag::register_conditional_default(signal, flag.clone());
        }
        flag
    })
}

impl SignalHandlers {
    pub(crate) fn install(interrupt: &Interrupt) -> std::io::Result<SignalHandlers> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let idle = default_action();
        {
            let mut runs = RUNS.lock().expect("runs lock");
            *runs += 1;
            idle.store(false, Ordering::SeqCst);
        }
        let stopping = Arc::new(AtomicBool::new(false));
        // Made before anything can fail, so that dropping it undoes what was done.
        let mut handlers = SignalHandlers(Vec::new());
        let ids = &mut handlers.0;
        for signal in [SIGINT, SIGTERM] {
            // Handlers run in the order registered: this one sees whether an earlier
            // signal already asked the run to stop.
            ids.push(signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                stopping.clone(),
            )?);
            let number = usize::try_from(signal).expect("signal numbers are positive");
            ids.push(signal_hook::flag::register_usize(signal, interrupt.flag(), number)?);
            ids.push(signal_hook::flag::register(signal, stopping.clone())?);
        }
        Ok(handlers)
    }
}

impl Drop for SignalHandlers {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let mut runs = RUNS.lock().expect("runs lock");
        *runs -= 1;
        if *runs == 0 {
            default_action().store(true, Ordering::SeqCst);
        }
    }
}

/// Prints the run's summary as `summary.json` holds it (process 0 writes that file; the
/// other processes of a distributed run print their own).
fn print_summary_json(summary: &Summary) -> anyhow::Result<()> {
    let mut out = crate::stdout::stdout();
    serde_json::to_writer_pretty(&mut out, summary)?;
    writeln!(out)?;
    Ok(out.flush()?)
}

/// Shows progress until `stop`: one line rewritten in place on a terminal, or a plain line
/// every ten seconds when stderr is a file or a pipe (as under a scheduler).
fn report_progress(progress: &Progress, total_bytes: u64, processes: usize, stop: &AtomicBool) {
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
        let line = match progress.waiting_for() {
            // A process of a distributed run that does nothing but wait says what for.
            Some(what) if processes > 1 => {
                format!("{records} records read here; waiting for {what}")
            }
            _ => format!(
                "{records} records, {} of {} read, {rate:.0} records/s, {}",
                decimal_size(progress.bytes()),
                decimal_size(total_bytes),
                progress.stage().name()
            ),
        };
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
    let mut out = crate::stdout::stdout();
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
        let held = match s.paragraphs {
            Some(_) => format!(", {} paragraphs", i.stats.paragraphs_written),
            None => String::new(),
        };
        writeln!(
            out,
            "          {:>10}  generation {} \"{}\" added: {} documents, {} keys{held} -> {}",
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
            "memory    {:>14} peak  (budget {}, {} spilled{over})",
            binary_size(peak),
            binary_size(s.memory_budget_bytes),
            binary_size(s.spilled_bytes)
        )?;
    }
    writeln!(out, "output    {}", config.output.display())?;
    if let (Some(dir), Some(n)) = (&config.write_kept, c.kept_written) {
        writeln!(out, "kept      {n:>10}  records written to {}", dir.display())?;
    }
    Ok(())
}

/// `bytes` as file sizes are given: B, then KB, MB, GB, TB (powers of 1000), in the
/// largest unit that leaves at least one.
pub(crate) fn decimal_size(bytes: u64) -> String {
    scaled(bytes, 1000.0, ["KB", "MB", "GB", "TB"])
}

/// `bytes` as memory is given: B, then KiB, MiB, GiB, TiB (powers of 1024), in the largest
/// unit that leaves at least one.
fn binary_size(bytes: u64) -> String {
    scaled(bytes, 1024.0, ["KiB", "MiB", "GiB", "TiB"])
}

/// Whole bytes below `base`, else one decimal of the largest of `units` (each `base` times
/// the one before) that leaves at least one once rounded: 999,960 bytes are 1.0 MB.
fn scaled(bytes: u64, base: f64, units: [&str; 4]) -> String {
    let mut value = bytes as f64;
    if value < base {
        return format!("{bytes} B");
    }
    for (i, unit) in units.iter().enumerate() {
        value /= base;
        if (value * 10.0).round() < base * 10.0 || i == units.len() - 1 {
            return format!("{value:.1} {unit}");
        }
    }
    unreachable!("the last unit returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_shown_in_units_that_fit() {
        assert_eq!(decimal_size(0), "0 B");
        assert_eq!(decimal_size(999), "999 B");
        assert_eq!(decimal_size(1000), "1.0 KB");
        assert_eq!(decimal_size(11_834), "11.8 KB");
        assert_eq!(decimal_size(999_960), "1.0 MB");
        assert_eq!(decimal_size(2_987_654), "3.0 MB");
        assert_eq!(decimal_size(16_700_000_000), "16.7 GB");
        assert_eq!(decimal_size(3_200_000_000_000_000), "3200.0 TB");
        assert_eq!(binary_size(0), "0 B");
        assert_eq!(binary_size(1023), "1023 B");
        assert_eq!(binary_size(1536), "1.5 KiB");
        assert_eq!(binary_size(62_810_521), "59.9 MiB");
        assert_eq!(binary_size(12_053 << 20), "11.8 GiB");
    }
}
