//! `neardup sign`: one task of many that read and sign a share of the inputs into the
//! output's work area, with no connection to the others, for a later `neardup dedup` with
//! the same arguments to replay.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use neardup_job::{Interrupt, Progress, SignTask, TaskReport};

use crate::dedup::{JobArgs, SignalHandlers, decimal_size, job_config};
use crate::error::UsageError;
use crate::settings::parse_bytes;

/// Arguments of `neardup sign`.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// What the job is: give the tasks and the `neardup dedup` after them the same flags.
    #[command(flatten)]
    pub job_args: JobArgs,
    /// This task's index, 0..tasks: task i signs the input files whose index in the sorted
    /// input list is i modulo the count [default: $JOB_COMPLETION_INDEX of a Kubernetes
    /// Indexed Job, or $SLURM_ARRAY_TASK_ID less $SLURM_ARRAY_TASK_MIN of a Slurm array].
    #[arg(long)]
    pub task: Option<usize>,
    /// How many tasks share the inputs [default: $SLURM_ARRAY_TASK_COUNT].
    #[arg(long, value_parser = crate::settings::at_least_one)]
    pub tasks: Option<usize>,
    /// Threads signing this task's files, a file each at a time [default: the number of CPUs].
    #[arg(long, short = 'w', value_parser = crate::settings::at_least_one)]
    pub workers: Option<usize>,
    /// The --memory-budget the dedup run will be given: it sets the record size limit,
    /// which signatures depend on, unless the job file sets input.max_record_bytes; any
    /// budget of 1 GiB or more gives the same limit [default: half the machine's or
    /// container's limit, as dedup's, but at least 1 GiB, whatever this task's machine].
    #[arg(long, value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the task's report as JSON (as `_work/tasks/` keeps it).
    #[arg(long)]
    pub json: bool,
}

/// The task's index and count: the flags, or the scheduler's environment.
fn task_place(args: &SignArgs) -> anyhow::Result<(usize, usize)> {
    let env = |name: &str| -> anyhow::Result<Option<usize>> {
        match std::env::var(name) {
            Ok(value) => value.trim().parse().map(Some).map_err(|_| {
                UsageError::new(format!("${name} is \"{value}\", not a task number")).into()
            }),
            Err(_) => Ok(None),
        }
    };
    let index = match args.task {
        Some(index) => index,
        None => match (env("JOB_COMPLETION_INDEX")?, env("SLURM_ARRAY_TASK_ID")?) {
            (Some(index), _) => index,
            (None, Some(id)) => {
                id.checked_sub(env("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0)).ok_or_else(|| {
                    UsageError::new("$SLURM_ARRAY_TASK_ID is below $SLURM_ARRAY_TASK_MIN")
                })?
            }
            (None, None) => {
                return Err(UsageError::new(
                    "which task is this? give --task, or run as a Kubernetes Indexed Job or a Slurm array",
                )
                .into());
            }
        },
    };
    let count = match args.tasks {
        Some(count) => count,
        None => env("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
            UsageError::new("how many tasks share the inputs? give --tasks (the Job's completions)")
        })?,
    };
    if index >= count {
        return Err(UsageError::new(format!("task {index} is not below the {count} tasks")).into());
    }
    Ok((index, count))
}

/// Runs `neardup sign`: signs this task's share and reports what it did.
///
/// # Errors
/// [`UsageError`] for bad flags, job files, or a job that cannot sign in tasks; the task's
/// error, with context, when it fails (what it committed stays for a rerun).
pub fn run(args: &SignArgs) -> anyhow::Result<TaskReport> {
    let config = job_config(&args.job_args)?;
    // --index and --write-kept are for the dedup run after the tasks; they are accepted so
    // that both are given one argument list, and change no signature.
    neardup_job::check_signable(&config).map_err(|e| UsageError::new(e.to_string()))?;
    let (index, count) = task_place(args)?;
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    // Only the record size limit comes of it: a task on a small machine signs as a dedup run
    // on a larger one does.
    let memory_budget = args.memory_budget.unwrap_or_else(|| {
        neardup_job::default_memory_budget().max(neardup_job::FULL_RECORD_LIMIT_BUDGET)
    });
    let task = SignTask { index, count, workers, memory_budget };
    if !args.quiet {
        let share = task.share(&config);
        let bytes: u64 = share.iter().map(|f| f.bytes).sum();
        eprintln!(
            "neardup sign: task {index} of {count}, {} of {} file(s), {}, {workers} worker(s) -> {}",
            share.len(),
            config.inputs.len(),
            decimal_size(bytes),
            config.output.display()
        );
    }
    let interrupt = Interrupt::default();
    let _handlers = SignalHandlers::install(&interrupt).context("cannot handle signals")?;
    let progress = Progress::default();
    let report = neardup_job::sign_share(&config, &task, &progress, &interrupt).map_err(|e| {
        anyhow::Error::new(e).context(format!(
            "task {index} of {count} failed; the units it committed stay for a rerun"
        ))
    })?;
    let mut out = crate::stdout::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if !args.quiet {
        writeln!(
            out,
            "task {} of {}: {} file(s), {} signed now ({} records, {} rejected; {} of units), {} \
             signed by an earlier attempt; {:.2} s",
            report.task,
            report.tasks,
            report.files,
            report.units_written,
            report.records,
            report.rejected,
            decimal_size(report.bytes_written),
            report.units_reused,
            report.seconds
        )?;
    }
    out.flush()?;
    Ok(report)
}
