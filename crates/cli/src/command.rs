//! The command line as a whole: the subcommands, what each ends with, and the exit code.
//! Each subcommand lives in its own module with its flags and a `run` function; this one
//! only dispatches, so no subcommand depends on another's place in the tree.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use neardup_job::{JobError, Summary};

use crate::dedup::{self, DedupArgs};
use crate::error::{UsageError, hint};
use crate::eval;
use crate::eval::command::EvalArgs;
use crate::explain::{self, ExplainArgs};
use crate::index::{self, IndexCommand};
use crate::sign::{self, SignArgs};
use crate::tune::{self, TuneArgs};

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
    /// Sign a share of the inputs as one of many independent tasks (a Kubernetes Indexed
    /// Job, a Slurm array), into the output's work area, for a `dedup` with the same flags
    /// to replay: it then reads only what no task signed.
    Sign(SignArgs),
    /// Score a run against labelled truth: pair precision, recall, F1, adjusted Rand index,
    /// recall by similarity, and the false positives.
    Eval(EvalArgs),
    /// Show what LSH parameters do (candidate probability by similarity, error rates,
    /// cost), or, with --truth, try a grid of settings on labelled data and pick the best F1.
    Tune(TuneArgs),
    /// Explain why two documents were or were not matched: similarity, shared bands or
    /// tables, shared and differing features, and the differing passages side by side.
    Explain(ExplainArgs),
    /// Look after an index of earlier runs (`dedup --index`): show it, take documents out
    /// of it, or compact it.
    #[command(subcommand)]
    Index(IndexCommand),
}

/// How a run ended, for the exit code.
#[derive(Debug)]
pub enum Outcome {
    /// The job succeeded.
    Success(Box<Summary>),
    /// A signing task succeeded.
    Signed(Box<neardup_job::TaskReport>),
    /// An evaluation was printed.
    Evaluated(Box<eval::Report>),
    /// Parameters were shown or tried.
    Tuned(Vec<tune::Trial>),
    /// A pair was explained.
    Explained(Box<explain::Explanation>),
    /// An index was shown or changed.
    Index,
}

/// Runs a parsed command line.
///
/// # Errors
/// Any failure, with context; [`UsageError`] marks usage and job-file errors.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    Ok(match cli.command {
        Command::Dedup(args) => Outcome::Success(Box::new(dedup::run(&args)?)),
        Command::Sign(args) => Outcome::Signed(Box::new(sign::run(&args)?)),
        Command::Eval(args) => Outcome::Evaluated(Box::new(eval::run(&args)?)),
        Command::Tune(args) => Outcome::Tuned(tune::run(&args)?),
        Command::Explain(args) => Outcome::Explained(Box::new(explain::run(&args)?)),
        Command::Index(command) => {
            index::run(&command)?;
            Outcome::Index
        }
    })
}

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
            exit_code(&e)
        }
    }
}

/// The exit code of a failed command: 2 for usage and job-file errors (processes of a
/// distributed run started with different settings too), 128 + the signal's number for a run a
/// signal stopped (130 for SIGINT, 143 for SIGTERM), else 1.
fn exit_code(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<UsageError>().is_some() {
        return ExitCode::from(2);
    }
    match e.chain().find_map(|cause| cause.downcast_ref::<JobError>()) {
        Some(JobError::SettingsDiffer { .. }) => ExitCode::from(2),
        Some(JobError::Interrupted { signal }) => {
            ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
        }
        _ => ExitCode::from(1),
    }
}
