//! Outputs in object storage, written to moto's S3-compatible server on 127.0.0.1: a run
//! from objects to objects equals the same run on local files; a run killed mid-upload
//! leaves nothing that looks finished and its rerun completes; a run killed after reading
//! resumes from the units it kept under the output prefix, as a dedup run after `neardup
//! sign` tasks replays the units they signed there; a prefix is locked like a
//! folder; a prefix of thousands of objects is listed whole; a missing bucket is named.
//! Uploads use small parts here (`support::PART_SIZE`), so kept files and parts are
//! multipart uploads.

mod support;

use std::path::Path;
use std::time::Duration;

use support::{S3, inputs, neardup, results, run, summary};

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
    // eval reads a run in the bucket as one on disk.
    let truth = support::repo().join("data-samples/web-templated/truth.json");
    let eval = |run_dir: &str| {
        let mut cmd = s3.neardup();
        cmd.args(["eval", "--json", "--truth"]).arg(&truth).args(["--run", run_dir]);
        let done = run(cmd, Duration::from_secs(120));
        assert!(done.status.success(), "{done:?}");
        let mut report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
        report.as_object_mut().unwrap().remove("run");
        report
    };
    assert_eq!(eval("s3://crawl/out"), eval(&local.0.to_string_lossy()));

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
    // The work area (what the run learned and signed, for its rerun) stays too.
    for key in &keys {
        let ours = key == ".lock" || key == "_FILES.json" || key.starts_with("_work/");
        assert!(listed.contains(&key.as_str()) || ours, "{key}");
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
fn a_run_killed_after_reading_into_a_prefix_resumes_from_the_units_kept_there() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    stage_inputs(&s3, dir.path());
    let local = local_run(dir.path(), "2");
    let mut cmd = remote_run(&s3, "2");
    cmd.env("NEARDUP_FAILPOINTS", "after-reading-and-signing=abort");
    let killed = run(cmd, Duration::from_secs(120));
    assert!(!killed.status.success(), "{killed:?}");
    let units = s3.list("crawl", "out/_work/units/");
    assert!(!units.is_empty(), "the units read are kept under the prefix");
    let done = run(remote_run(&s3, "2"), Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    let summary: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/out/summary.json").unwrap()).unwrap();
    let work = &summary["work_area"];
    assert_eq!(work["units_reused"], units.len() as u64, "{work}");
    assert_eq!(work["units_read"], 0, "{work}");
    // The work area went with _SUCCESS.
    assert_eq!(output_keys(&s3), COMPLETE);
    check_same_as_local(&s3, dir.path(), &local);
}

#[test]
fn tasks_signing_into_a_prefix_leave_a_dedup_run_nothing_to_read() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Six files of Tang poems: templates are learned only from web pages, which tasks
    // cannot sign.
    let poems = support::repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let text =
        std::io::read_to_string(flate2::read::GzDecoder::new(std::fs::File::open(poems).unwrap()))
            .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let local = dir.path().join("poems");
    std::fs::create_dir_all(&local).unwrap();
    s3.put("/crawl", b"");
    for f in 0..6 {
        let part: String = lines.iter().skip(f).step_by(6).map(|l| format!("{l}\n")).collect();
        std::fs::write(local.join(format!("part-{f}.jsonl")), &part).unwrap();
        s3.put(&format!("/crawl/poems/part-{f}.jsonl"), part.as_bytes());
    }
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i"]).arg(&local).arg("-o").arg(dir.path().join("local"));
    assert!(run(cmd, Duration::from_secs(120)).status.success());
    for task in ["0", "1"] {
        let mut cmd = s3.neardup();
        cmd.args(["sign", "-q", "-w", "2", "-i", "s3://crawl/poems", "-o", "s3://crawl/out"]);
        cmd.args(["--task", task, "--tasks", "2"]);
        let done = run(cmd, Duration::from_secs(120));
        assert!(done.status.success(), "{done:?}");
    }
    assert_eq!(s3.list("crawl", "out/_work/units/").len(), 6);
    // Each task's start marker and report.
    assert_eq!(s3.list("crawl", "out/_work/tasks/").len(), 4);
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i", "s3://crawl/poems", "-o", "s3://crawl/out"]);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    let fetched = dir.path().join("fetched");
    s3.download("crawl", "out", &fetched);
    let work = &summary(&fetched)["work_area"];
    assert_eq!(
        (work["units_reused"].as_u64(), work["units_read"].as_u64()),
        (Some(6), Some(0)),
        "{work}"
    );
    assert_eq!(work["signed_tasks"], 2);
    assert_eq!(results(&fetched), results(&dir.path().join("local")));
    assert!(s3.list("crawl", "out/_work/").is_empty(), "the work area went with _SUCCESS");
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

    // A holder whose clock is an hour ahead: said so, and judged by when the store last
    // changed the object (just now: refused; a holder that stopped beating would be taken
    // over three minutes after its last write, not an hour and three minutes).
    s3.put("/crawl/out/.lock", holder(now + 3600).as_bytes());
    let refused = run(remote_run(&s3, "1"), Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("ahead of this host's clock"), "{stderr}");
    assert!(stderr.contains("s ago, which judges it (taken over after 180 s)"), "{stderr}");

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
fn writing_to_a_missing_bucket_fails_naming_it() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let poems = support::repo().join("data-samples/zh-tang-poems");
    let local = dir.path().join("out");
    for (flag, address) in [
        ("--output", "s3://absent/out/"),
        ("--write-kept", "s3://absent/kept/"),
        ("--index", "s3://absent/idx/"),
    ] {
        let mut cmd = s3.neardup();
        cmd.args(["dedup", "-q", "-i"]).arg(&poems).args([flag, address]);
        if flag != "--output" {
            cmd.arg("--output").arg(&local);
        }
        let done = run(cmd, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success(), "{address}: {stderr}");
        assert!(stderr.contains(&format!("\"{address}")), "{address}: {stderr}");
        assert!(stderr.contains("no such bucket \"absent\""), "{address}: {stderr}");
        assert!(!stderr.contains('<'), "{address}: the server's XML: {stderr}");
    }
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

/// `dedup` of `inputs` (separated by spaces) into `out` against the index `index`
/// (addresses or local paths).
fn index_run(s3: &S3, inputs: &str, out: &str, index: &str) -> std::process::Command {
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o", out, "--index", index, "-i"]);
    cmd.args(inputs.split(' '));
    cmd
}

/// The segment folders of the index under `s3://crawl/idx`.
fn segments(s3: &S3) -> Vec<String> {
    let mut folders: Vec<String> = s3
        .list("crawl", "idx/")
        .into_iter()
        .filter_map(|(k, _)| k["idx/".len()..].split_once('/').map(|(f, _)| f.to_string()))
        .filter(|f| f.starts_with("gen-"))
        .collect();
    folders.dedup();
    folders
}

#[test]
fn an_index_in_object_storage_commits_once_and_equals_one_on_disk() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let local_in = stage_inputs(&s3, dir.path());
    let path = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    let file = |name: &str| local_in.join(name).to_string_lossy().into_owned();
    let (poems, court) = (file("poems.jsonl.gz"), file("court/openings.jsonl.gz"));
    let both = format!("{poems} {court}");

    // Two runs against an index in the bucket decide as two against an index on disk.
    for (input, out, index) in [
        ("s3://crawl/in/poems.jsonl.gz", "s3://crawl/first", "s3://crawl/idx"),
        (&poems, &path("first"), &path("idx")),
        (
            "s3://crawl/in/poems.jsonl.gz s3://crawl/in/court/openings.jsonl.gz",
            "s3://crawl/second",
            "s3://crawl/idx",
        ),
        (&both, &path("second"), &path("idx")),
    ] {
        let done = run(index_run(&s3, input, out, index), Duration::from_secs(120));
        assert!(done.status.success(), "{done:?}");
    }
    s3.download("crawl", "second", &dir.path().join("second-fetched"));
    let (remote, local) =
        (results(&dir.path().join("second-fetched")), results(&dir.path().join("second")));
    assert_eq!(remote, local);
    let removed_by_index = |out: &Path| -> u64 {
        let docs = neardup_io::read_documents(&out.join("documents")).unwrap();
        docs.iter().filter(|d| d.duplicate_of_run.is_some()).count() as u64
    };
    assert!(removed_by_index(&dir.path().join("second-fetched")) > 1000);
    assert_eq!(segments(&s3).len(), 2);
    assert!(s3.get("/crawl/idx/.lock").is_none());

    // A run held before its commit keeps the index locked: a second run is refused at once.
    let go = dir.path().join("go");
    let mut held =
        index_run(&s3, "s3://crawl/in/poems.jsonl.gz", "s3://crawl/third", "s3://crawl/idx");
    held.env("NEARDUP_FAILPOINTS", format!("parts-written=wait:{}", go.display()));
    let mut held = held.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let (said, rest) = support::read_until(&mut held, "waiting for");
    let refused = run(
        index_run(&s3, "s3://crawl/in/poems.jsonl.gz", "s3://crawl/fourth", "s3://crawl/idx"),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(text.contains("s3://crawl/idx/.lock"), "{text}");

    // Another writer changes the manifest meanwhile (as a run that wrongly took the lock
    // over would): the held run's conditional commit fails, and its segment goes.
    let mut manifest = s3.get("/crawl/idx/index.json").unwrap();
    manifest.extend_from_slice(b"\n");
    s3.put("/crawl/idx/index.json", &manifest);
    std::fs::write(&go, b"").unwrap();
    let status = held.wait().unwrap();
    let rest = rest.join().unwrap();
    assert_eq!(status.code(), Some(1), "{said}{rest}");
    assert!(rest.contains("changed after this run read it"), "{rest}");
    assert_eq!(s3.get("/crawl/idx/index.json").unwrap(), manifest, "not overwritten");
    assert_eq!(segments(&s3).len(), 2, "the failed run's segment is removed");
    assert!(s3.get("/crawl/third/_SUCCESS").is_none());

    // Run again, it commits the third generation and leaves no lock.
    let done = run(
        index_run(&s3, "s3://crawl/in/poems.jsonl.gz", "s3://crawl/third", "s3://crawl/idx"),
        Duration::from_secs(120),
    );
    assert!(done.status.success(), "{done:?}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/idx/index.json").unwrap()).unwrap();
    assert_eq!(manifest["generations"].as_array().unwrap().len(), 3);
    assert_eq!(segments(&s3).len(), 3);
    assert!(s3.get("/crawl/idx/.lock").is_none());
}

/// Two processes with no shared folder: inputs, outputs, the kept dataset and the index all
/// in the bucket, equal to one process on local files.
#[test]
fn two_processes_on_objects_equal_one_process_on_local_files() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let local_in = stage_inputs(&s3, dir.path());
    let (local_out, local_kept) = (dir.path().join("local"), dir.path().join("local-kept"));
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i"]).arg(&local_in).arg("-o").arg(&local_out);
    cmd.arg("--write-kept").arg(&local_kept).arg("--index").arg(dir.path().join("idx"));
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");

    // A hostfile on free loopback ports, in a folder only the test shares.
    let hostfile = support::hostfile(dir.path(), 2);
    let processes: Vec<std::process::Child> = (0..2)
        .map(|p| {
            let mut cmd = s3.neardup();
            cmd.args(["dedup", "-q", "-w", "1", "-n", "2", "-p", &p.to_string(), "--hostfile"])
                .arg(&hostfile)
                .args(["-i", "s3://crawl/in", "-o", "s3://crawl/two"])
                .args(["--write-kept", "s3://crawl/two-kept", "--index", "s3://crawl/two-idx"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for child in processes {
        let done = child.wait_with_output().unwrap();
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    let fetched = dir.path().join("fetched");
    s3.download("crawl", "two", &fetched.join("out"));
    s3.download("crawl", "two-kept", &fetched.join("kept"));
    assert_eq!(results(&fetched.join("out")), results(&local_out));
    assert!(files_in(&fetched.join("kept")) == files_in(&local_kept), "kept files differ");
    let manifest: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/two-idx/index.json").unwrap()).unwrap();
    let generation = &manifest["generations"][0];
    let local: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("idx/index.json")).unwrap()).unwrap();
    assert_eq!(generation["documents"], local["generations"][0]["documents"]);
    assert_eq!(generation["keys"], local["generations"][0]["keys"]);
    assert!(s3.get("/crawl/two-idx/.lock").is_none() && s3.get("/crawl/two/.lock").is_none());
}

/// The answer to an index commit is lost after the store made it: the retry meets the
/// run's own manifest, which it must recognise, and the run succeeds with its segment in
/// place (it was reported as "the index changed" and its segment removed, leaving the
/// manifest naming a folder that was gone).
#[test]
fn a_commit_whose_answer_is_lost_is_recognised_as_made() {
    let Some(s3) = S3::start() else { return };
    s3.put("/crawl", b"");
    let proxy = support::LossyProxy::start(s3.port());
    *proxy.target.lock().unwrap() = "PUT /crawl/idx/index.json".into();
    proxy.lose.store(1, std::sync::atomic::Ordering::SeqCst);
    let poems = support::repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let mut cmd = s3.neardup();
    cmd.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", proxy.port));
    cmd.args(["dedup", "-q", "-o", "s3://crawl/out", "--index", "s3://crawl/idx", "-i"]);
    cmd.arg(&poems);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(proxy.lose.load(std::sync::atomic::Ordering::SeqCst), 0, "an answer was lost");
    let manifest: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/idx/index.json").unwrap()).unwrap();
    let folder = manifest["generations"][0]["folder"].as_str().unwrap().to_string();
    assert_eq!(segments(&s3), [folder]);
    let summary: serde_json::Value =
        serde_json::from_slice(&s3.get("/crawl/out/summary.json").unwrap()).unwrap();
    assert!(summary["remote_retries"].as_u64().unwrap() >= 1, "{summary}");
}

/// Web pages with an index in the bucket: each generation keeps its template sample
/// (`templates/`) and its document frequencies (`frequencies.bin`) as objects, and a later
/// batch that learns from them decides as the same runs against an index on disk do.
#[test]
fn an_index_in_object_storage_keeps_what_web_page_runs_learn() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let local_in = stage_inputs(&s3, dir.path());
    let path = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    let file = |name: &str| local_in.join(name).to_string_lossy().into_owned();
    let (warc, wet) = (file("web/pages.warc.gz"), file("web/crawl.wet.gz"));
    for (input, out, index) in [
        ("s3://crawl/in/web/pages.warc.gz", "s3://crawl/web1", "s3://crawl/webidx"),
        (warc.as_str(), &path("web1"), &path("webidx")),
        ("s3://crawl/in/web/crawl.wet.gz", "s3://crawl/web2", "s3://crawl/webidx"),
        (wet.as_str(), &path("web2"), &path("webidx")),
    ] {
        let web = |failpoint: Option<&str>| {
            let mut cmd = index_run(&s3, input, out, index);
            cmd.args(["--method", "simhash"]);
            if let Some(failpoint) = failpoint {
                cmd.env("NEARDUP_FAILPOINTS", failpoint);
            }
            run(cmd, Duration::from_secs(120))
        };
        // The second batch into the bucket is killed once its parts are written: its rerun
        // replays what its corpus passes learned, with the template sample they wrote into
        // the bucket (the generation's other objects go).
        let killed = out == "s3://crawl/web2";
        if killed {
            let done = web(Some("parts-written=abort"));
            assert!(!done.status.success(), "{done:?}");
            // Objects of the unlisted folder besides its sample, at its top and below.
            let folder = s3
                .list("crawl", "webidx/gen-000002-")
                .into_iter()
                .find_map(|(k, _)| k.split('/').nth(1).map(str::to_string))
                .unwrap();
            for stray in ["stray.bin", "docs/part-00009.parquet"] {
                s3.put(&format!("/crawl/webidx/{folder}/{stray}"), b"left by a killed run");
            }
        }
        let done = web(None);
        assert!(done.status.success(), "{done:?}");
        if killed {
            let summary: serde_json::Value =
                serde_json::from_slice(&s3.get("/crawl/web2/summary.json").unwrap()).unwrap();
            assert_eq!(summary["work_area"]["corpus_statistics_reused"], 1, "{summary}");
        }
    }
    s3.download("crawl", "web2", &dir.path().join("web2-fetched"));
    assert_eq!(results(&dir.path().join("web2-fetched")), results(&dir.path().join("web2")));
    let keys: Vec<String> = s3.list("crawl", "webidx/").into_iter().map(|(k, _)| k).collect();
    // The bucket's generations hold the files the folder's do, the template sample and the
    // document frequencies alike.
    let of_generation = |keys: Vec<String>, n: &str| -> Vec<String> {
        let mut files: Vec<String> = keys
            .into_iter()
            .filter_map(|k| {
                k.split_once(&format!("gen-00000{n}-")).map(|(_, rest)| rest.to_string())
            })
            .filter_map(|rest| rest.split_once('/').map(|(_, name)| name.to_string()))
            .collect();
        files.sort();
        files
    };
    let mut local_keys = Vec::new();
    let mut dirs = vec![dir.path().join("webidx")];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()) {
            if entry.is_dir() {
                dirs.push(entry);
            } else {
                let rel = entry.strip_prefix(dir.path()).unwrap().display().to_string();
                local_keys.push(rel);
            }
        }
    }
    for n in ["1", "2"] {
        assert_eq!(of_generation(keys.clone(), n), of_generation(local_keys.clone(), n), "{n}");
    }
    for wanted in ["/frequencies.bin", "/templates/part-"] {
        let generations: std::collections::BTreeSet<&str> = keys
            .iter()
            .filter(|k| k.contains(wanted))
            .filter_map(|k| k.split('/').nth(1))
            .collect();
        assert_eq!(generations.len(), 2, "{wanted}: {keys:?}");
    }
}
