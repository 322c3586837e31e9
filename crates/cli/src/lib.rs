//! The `neardup` command line: argument parsing, job files, reports and exit codes.
//!
//! This is a library with a thin `main.rs`, so tests run [`run`] in-process. Exit codes:
//! 0 success, 1 the job failed, 2 a usage or job-file error (or processes of a
//! distributed run started with different settings), 130 and 143 a run stopped by SIGINT
//! or SIGTERM.
//!
//! One module per subcommand, each with its flags and `run(args)`: [`dedup`], [`sign`],
//! [`eval`], [`explain`], [`tune`] and [`index`]. `command` parses and dispatches; `settings`
//! merges a job file with the flags that override it, for every subcommand; `error` holds
//! usage errors and the hints chosen from typed errors.

mod command;
pub mod dedup;
mod error;
pub mod eval;
pub mod explain;
pub mod index;
mod settings;
pub mod sign;
mod stdout;
pub mod tune;

pub use command::{Cli, Command, LogLevel, Outcome, main_with_args, run};
pub use dedup::{DedupArgs, JobArgs, job_config, topology};
pub use error::UsageError;
pub use eval::EvalArgs;
pub use explain::ExplainArgs;
pub use index::IndexCommand;
pub use settings::{KeepArg, MethodArg, Overrides, RemovalArg, job_spec, parse_bytes};
pub use sign::SignArgs;
pub use tune::TuneArgs;
