//! The command as scripts use it: `--json` output, and readers that stop early.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Stdio};

fn neardup() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
}

fn poems() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data-samples/zh-tang-poems")
}

/// Runs `neardup ARGS` with its stdout closed before it writes: what `| head -0` does.
fn with_stdout_closed(args: &[&OsStr]) -> std::process::Output {
    let mut child =
        neardup().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn dedup_json_prints_the_summary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let done = neardup()
        .args(["dedup", "-q", "--json", "-w", "2", "-i"])
        .arg(poems())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(done.stderr.is_empty(), "{}", String::from_utf8_lossy(&done.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert_eq!(printed["counts"]["records"], 5000);
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The report of a run (every document kept or removed is still written).
    let done = with_stdout_closed(&[
        "dedup".as_ref(),
        "-i".as_ref(),
        poems().as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(done.status.success(), "dedup: {}", String::from_utf8_lossy(&done.stderr));
    assert!(out.join("_SUCCESS").exists());
    let (truth, run) = (poems().into_os_string(), out.clone().into_os_string());
    let strings = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
    let mut eval = strings(&["eval", "--truth"]);
    eval.extend([truth.clone(), "--run".into(), run.clone()]);
    let mut eval_json = eval.clone();
    eval_json.push("--json".into());
    let mut explain = strings(&["explain", "--run"]);
    explain.push(run.clone());
    explain.extend(strings(&[
        "quantangshi/poet.tang.0.json#246",
        "yuding_quantangshi/json/005.json#31",
    ]));
    for args in [eval, eval_json, strings(&["tune"]), explain] {
        let refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let done = with_stdout_closed(&refs);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success() && stderr.is_empty(), "{args:?}: {:?} {stderr}", done.status);
    }
}

#[test]
fn eval_names_a_path_that_is_not_there_as_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let done =
        neardup().args(["dedup", "-q", "-i"]).arg(poems()).arg("-o").arg(&out).output().unwrap();
    assert!(done.status.success());
    for (truth, run) in
        [(dir.path().join("truth.json"), out.clone()), (poems(), dir.path().join("nope"))]
    {
        let done = neardup()
            .args(["eval", "--truth"])
            .arg(&truth)
            .arg("--run")
            .arg(&run)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("does not exist"), "{stderr}");
    }
}
