//! Failpoints: named places where a run can be made to fail on purpose, to test what a
//! failure there leaves behind and what a rerun then does.
//!
//! `NEARDUP_FAILPOINTS="NAME[=ACTION],..."` arms them in any build, the release binary
//! included; unset, [`hit`] costs one check of a value read once. Actions: `error` (the
//! default: the step fails with an I/O error, as a full disk would make it), `abort` (the
//! process dies at once, as under `kill -9`: nothing is cleaned up) and `exit` (the process
//! exits with status 3 without cleaning up, for a failpoint inside a worker thread that
//! should stop the whole process quietly) and `wait:PATH` (the step waits until the file
//! `PATH` exists, then goes on: a test holds a run there while it does something else).

use std::path::PathBuf;
use std::sync::OnceLock;

/// The environment variable that arms failpoints.
pub const FAILPOINTS_ENV: &str = "NEARDUP_FAILPOINTS";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Error,
    Abort,
    Exit,
    Wait(PathBuf),
}

fn armed() -> &'static [(String, Action)] {
    static ARMED: OnceLock<Vec<(String, Action)>> = OnceLock::new();
    ARMED.get_or_init(|| {
        let Ok(spec) = std::env::var(FAILPOINTS_ENV) else { return Vec::new() };
        spec.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                let (name, action) = s.split_once('=').unwrap_or((s, "error"));
                let action = match action {
                    "abort" => Action::Abort,
                    "exit" => Action::Exit,
                    "error" => Action::Error,
                    wait if wait.starts_with("wait:") => Action::Wait(PathBuf::from(&wait[5..])),
                    other => panic!("{FAILPOINTS_ENV}: unknown action \"{other}\" for {name}"),
                };
                (name.to_string(), action)
            })
            .collect()
    })
}

/// Passes the failpoint `name`: fails as armed, or does nothing.
///
/// # Errors
/// An I/O error naming the failpoint when it is armed with `error`.
pub fn hit(name: &str) -> std::io::Result<()> {
    let armed = armed();
    if armed.is_empty() {
        return Ok(());
    }
    match armed.iter().find(|(n, _)| n == name).map(|(_, a)| a.clone()) {
        None => Ok(()),
        Some(Action::Error) => Err(std::io::Error::other(format!("failpoint {name}"))),
        Some(Action::Abort) => {
            eprintln!("neardup: failpoint {name}: aborting");
            std::process::abort()
        }
        Some(Action::Exit) => {
            eprintln!("neardup: failpoint {name}: exiting");
            std::process::exit(3)
        }
        Some(Action::Wait(path)) => {
            eprintln!("neardup: failpoint {name}: waiting for {}", path.display());
            while !path.exists() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(())
        }
    }
}

/// Passes the failpoint `name` at a place that cannot return an error (inside the
/// dataflow): armed with any action, the process stops there (`abort` as under `kill -9`,
/// otherwise with exit status 3).
pub fn crash(name: &str) {
    if hit(name).is_err() {
        eprintln!("neardup: failpoint {name}: exiting");
        std::process::exit(3)
    }
}
