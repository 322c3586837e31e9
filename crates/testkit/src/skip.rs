//! Tests that need a program from outside the workspace (a server, a browser) say so when
//! it is missing, in `cargo test`'s own output, or fail where it is required.

use std::io::Write;

/// Says that the running test did not check what needs a missing program, or fails the
/// test when the environment variable `required_by` is set (as `.ci/run` sets it).
///
/// The line goes straight to the process's standard error, which libtest does not capture
/// (it captures `print!` and `eprint!`, and shows them only for a failed test), so it
/// stands among the test results without `--nocapture`. It names the test (its thread's
/// name under libtest) and `reason`:
/// `SKIPPED remote_reads: moto_server not found (...); set NEARDUP_REQUIRE_S3=1 to fail
/// instead`.
///
/// # Panics
/// When `required_by` is set to anything but `0` or nothing, with `reason`.
#[track_caller]
pub fn skip(reason: &str, required_by: &str) {
    let required = std::env::var_os(required_by).is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "{reason}, and {required_by} is set");
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SKIPPED {test}: {reason}; set {required_by}=1 to fail instead\n");
    // One write, so lines of tests running in parallel do not interleave.
    let _ = std::io::stderr().write_all(line.as_bytes());
}
