//! The `neardup` binary; see `neardup --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    neardup_job::capture_peer_failures();
    neardup_cli::main_with_args(std::env::args_os())
}
