//! The `neardup` binary; see `neardup --help`.

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    neardup_job::capture_peer_failures();
    neardup_cli::main_with_args(std::env::args_os())
}
