//! A test that skips for want of a program says so in `cargo test`'s output, where libtest
//! captures what tests print, and fails where the program is required. The test below runs
//! this test binary again on the ignored test after it, as `cargo test` would.

use std::process::{Command, Output};

/// The variable that requires the probe's missing program.
const REQUIRED_BY: &str = "NEARDUP_TESTKIT_REQUIRE_PROBE";

/// This binary run on the ignored test `skipping_probe` alone, without `--nocapture`, with
/// `REQUIRED_BY` set to `required` (unset for `None`).
fn run_probe(required: Option<&str>) -> Output {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(["--ignored", "--exact", "skipping_probe", "--test-threads=1"]);
    match required {
        Some(value) => cmd.env(REQUIRED_BY, value),
        None => cmd.env_remove(REQUIRED_BY),
    };
    cmd.env_remove("RUST_TEST_NOCAPTURE").output().expect("run the test binary")
}

#[test]
fn a_skip_shows_in_the_test_output_and_fails_where_required() {
    let line = "SKIPPED skipping_probe: probe-server not found (apt-get install probe); set \
                NEARDUP_TESTKIT_REQUIRE_PROBE=1 to fail instead";
    for required in [None, Some(""), Some("0")] {
        let done = run_probe(required);
        let (stdout, stderr) =
            (String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
        assert!(done.status.success(), "{required:?}: {stdout}{stderr}");
        assert!(stdout.contains("1 passed"), "{required:?}: the probe ran: {stdout}");
        assert!(stderr.contains(line), "{required:?}: no skip line in: {stderr}");
    }
    let done = run_probe(Some("1"));
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(!done.status.success(), "required, the skip fails: {stdout}");
    assert!(
        stdout.contains(
            "probe-server not found (apt-get install probe), and NEARDUP_TESTKIT_REQUIRE_PROBE is set"
        ),
        "{stdout}"
    );
}

/// What a test does without the program it needs; run by the test above.
#[test]
#[ignore = "run by a_skip_shows_in_the_test_output_and_fails_where_required"]
fn skipping_probe() {
    neardup_testkit::skip("probe-server not found (apt-get install probe)", REQUIRED_BY);
}
