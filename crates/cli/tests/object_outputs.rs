//! Outputs in object storage, written to moto's S3-compatible server on 127.0.0.1: a run
//! from objects to objects equals the same run on local files; a run killed mid-upload
//! leaves nothing that looks finished and its rerun completes; a prefix is locked like a
//! folder; a prefix of thousands of objects is listed whole. Uploads use small parts here
//! (`support::PART_SIZE`), so kept files and parts are multipart uploads.

mod support;

use std::path::Path;
use std::time::Duration;

use support::{S3, inputs, neardup, results, run};

/// Puts the test inputs under `s3://crawl/in/` and returns the local copy's folder.
fn stage_inputs(s3: &S3, dir: &Path) -> std::path::PathBuf {
    s3.put("/crawl", b"");
    for (name, local) in inputs(dir) {
        s3.put(&format!("/crawl/in/{name}"), &std::fs::read(local).unwrap());
    }
    dir.join("in")
}

/// Runs on the local inputs into local folders: the reference.
fn local_run(dir: &Path, workers: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (out, kept) = (dir.join("local"), dir.join("local-kept"));
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", workers, "-i"]).arg(dir.join("in")).arg("-o").arg(&out);
    cmd.arg("--write-kept").arg(&kept);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    (out, kept)
}

/// `dedup` from `s3://crawl/in` into `s3://crawl/out` and `s3://crawl/kept`.
fn remote_run(s3: &S3, workers: &str) -> std::process::Command {
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-w", workers, "-i", "s3://crawl/in", "-o", "s3://crawl/out"]);
    cmd.args(["--write-kept", "s3://crawl/kept"]);
    cmd
}

/// The names and contents of the files in a local folder, sorted.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

/// The run's output objects under `out/`, as keys relative to it.
fn output_keys(s3: &S3) -> Vec<String> {
    s3.list("crawl", "out/").into_iter().map(|(k, _)| k["out/".len()..].to_string()).collect()
}

/// What a complete run into `out/` holds (two workers), and nothing else: no lock, no
/// temporary object.
const COMPLETE: [&str; 9] = [
    "_FILES.json",
    "_SUCCESS",
    "boilerplate.bin",
    "documents/part-00000.parquet",
    "documents/part-00001.parquet",
    "pairs/part-00000.parquet",
    "pairs/part-00001.parquet",
    "report.html",
    "summary.json",
];

/// Downloads `s3://crawl/out` and `s3://crawl/kept` and checks they decide and keep what
/// the local run did.
fn check_same_as_local(s3: &S3, dir: &Path, local: &(std::path::PathBuf, std::path::PathBuf)) {
    let fetched = tempfile::tempdir_in(dir).unwrap();
    s3.download("crawl", "out", &fetched.path().join("out"));
    s3.download("crawl", "kept", &fetched.path().join("kept"));
    assert_eq!(results(&fetched.path().join("out")), results(&local.0));
    let summary = |out: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
    };
    let (remote, reference) = (summary(&fetched.path().join("out")), summary(&local.0));
    assert_eq!(remote["status"], "success");
    assert_eq!(remote["counts"], reference["counts"]);
    assert_eq!(remote["remote_retries"], 0);
    // The deduplicated dataset, byte for byte (the kept copies are multipart uploads).
    let (remote_kept, local_kept) = (files_in(&fetched.path().join("kept")), files_in(&local.1));
    let names: Vec<&String> = remote_kept.iter().map(|(n, _)| n).collect();
    assert!(remote_kept == local_kept, "kept files differ: {names:?}");
    assert!(
        remote_kept.iter().any(|(_, bytes)| bytes.len() > 2 * support::PART_SIZE),
        "a kept file is large enough for a multipart upload"
    );
}

#[test]
fn a_run_from_objects_to_objects_equals_the_same_run_on_local_files() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    stage_inputs(&s3, dir.path());
    let local = local_run(dir.path(), "2");

    let done = run(remote_run(&s3, "2"), Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    assert_eq!(output_keys(&s3), COMPLETE);
    check_same_as_local(&s3, dir.path(), &local);

    // A rerun replaces what the first listed; objects it did not write stay untouched.
    s3.put("/crawl/out/notes/readme.txt", b"an analyst's notes");
    let done = run(remote_run(&s3, "2"), Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    check_same_as_local(&s3, dir.path(), &local);
    assert_eq!(s3.get("/crawl/out/notes/readme.txt").unwrap(), b"an analyst's notes");

    // An object in a folder only neardup writes is someone else's: refused, not removed.
    s3.put("/crawl/out/documents/part-00099.parquet", b"not ours");
    let refused = run(remote_run(&s3, "2"), Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("s3://crawl/out/documents/part-00099.parquet"), "{stderr}");
    assert_eq!(s3.get("/crawl/out/documents/part-00099.parquet").unwrap(), b"not ours");
    assert!(s3.get("/crawl/out/.lock").is_none(), "the refused run released its lock");
}

#[test]
fn a_run_killed_mid_upload_leaves_nothing_finished_and_its_rerun_completes() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    stage_inputs(&s3, dir.path());
    let local = local_run(dir.path(), "2");

    // Killed (as by kill -9) once the first part of the first multipart upload is stored.
    let mut cmd = remote_run(&s3, "2");
    cmd.env("NEARDUP_FAILPOINTS", "upload-part-written=abort");
    let killed = run(cmd, Duration::from_secs(120));
    assert!(!killed.status.success(), "{killed:?}");
    assert!(String::from_utf8_lossy(&killed.stderr).contains("upload-part-written"));
    // Nothing says finished, the half-uploaded object is not visible, and what is there is
    // on the run's list (which the rerun removes) or its lock.
    let keys = output_keys(&s3);
    assert!(!keys.contains(&"_SUCCESS".to_string()), "{keys:?}");
    assert!(s3.get("/crawl/kept/_SUCCESS").is_none());
    let listed: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/out/_FILES.json").unwrap()).unwrap();
    let listed: Vec<&str> =
        listed["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for key in &keys {
        assert!(listed.contains(&key.as_str()) || key == ".lock" || key == "_FILES.json", "{key}");
    }
    let kept_keys = s3.list("crawl", "kept/");
    assert!(kept_keys.len() < 5, "not every kept file was completed: {kept_keys:?}");

    // The rerun takes over the dead run's lock and gives what one clean run gives.
    let done = run(remote_run(&s3, "2"), Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    assert!(String::from_utf8_lossy(&done.stderr).contains("took over the lock"), "{done:?}");
    assert_eq!(output_keys(&s3), COMPLETE);
    check_same_as_local(&s3, dir.path(), &local);
}

#[test]
fn an_output_prefix_is_locked_like_a_folder() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    stage_inputs(&s3, dir.path());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    // A live run on another host: refused, naming the lock and its holder.
    let holder = |heartbeat: u64| {
        serde_json::json!({
            "pid": 4242, "host": "node-17", "process_start": null,
            "started_unix": heartbeat, "heartbeat_unix": heartbeat, "token": "other-run",
        })
        .to_string()
    };
    s3.put("/crawl/out/.lock", holder(now).as_bytes());
    let refused = run(remote_run(&s3, "1"), Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("s3://crawl/out/.lock") && stderr.contains("node-17"), "{stderr}");
    assert!(s3.get("/crawl/out/_FILES.json").is_none(), "nothing was written");

    // Its heartbeat ten minutes old: the node is lost, the lock is taken over and released.
    s3.put("/crawl/out/.lock", holder(now - 600).as_bytes());
    let done = run(remote_run(&s3, "1"), Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    assert!(stderr.contains("took over the lock") && stderr.contains("node-17"), "{stderr}");
    assert!(s3.get("/crawl/out/.lock").is_none());
    assert!(s3.get("/crawl/out/_SUCCESS").is_some());
}

#[test]
fn a_prefix_of_thousands_of_objects_is_listed_whole() {
    let Some(s3) = S3::start() else { return };
    s3.put("/many", b"");
    // More than one page of a listing (1000 keys), in nested folders.
    let n = 1500;
    for i in 0..n {
        let body = format!("{{\"id\":\"d{i}\",\"text\":\"document number {i} of many\"}}\n");
        s3.put(&format!("/many/in/{:02}/doc-{i:05}.jsonl", i % 7), body.as_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i", "s3://many/in", "-o", "s3://many/out"]);
    let done = run(cmd, Duration::from_secs(300));
    assert!(done.status.success(), "{done:?}");
    s3.download("many", "out", &dir.path().join("out"));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["input_files"], n);
    assert_eq!(summary["counts"]["records"], n);
    let docs = neardup_io::read_documents(&dir.path().join("out/documents")).unwrap();
    assert_eq!(docs.len(), n);
}
