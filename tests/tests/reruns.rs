//! Reruns into the same output folder start clean: no stale parts or markers survive, and
//! nothing a run did not write is removed: inputs inside the folders a run changes are
//! refused, files neardup did not write stop the run, and one run at a time writes a folder.

use std::path::Path;

use std::process::ExitCode;

use neardup_e2e::{
    dedup, dedup_args, dedup_exit_code, exit_code, neardup, render_documents, render_pairs, repo,
    summary,
};

fn parts(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_rerun_with_fewer_workers_leaves_no_stale_parts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |workers: &str| {
        dedup(&input, &out, &["-w", workers]).unwrap();
    };
    run("8");
    assert_eq!(parts(&out.join("documents")).len(), 8);
    let (docs8, pairs8) = (render_documents(&out), render_pairs(&out));
    run("1");
    assert_eq!(parts(&out.join("documents")), ["part-00000.parquet"]);
    assert_eq!(parts(&out.join("pairs")), ["part-00000.parquet"]);
    assert_eq!((render_documents(&out), render_pairs(&out)), (docs8, pairs8));
    assert_eq!(
        parts(&out),
        ["_FILES.json", "_SUCCESS", "documents", "pairs", "report.html", "summary.json"]
    );
}

#[test]
fn an_output_folder_inside_the_input_folder_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus");
    std::fs::create_dir(&input).unwrap();
    std::fs::copy(repo().join("tests/fixtures/mixed.jsonl"), input.join("mixed.jsonl")).unwrap();
    // A manifest is not JSON Lines: inside a folder, .json files are skipped.
    std::fs::write(input.join("manifest.json"), "{\n  \"files\": [\"mixed.jsonl\"]\n}\n").unwrap();
    let out = input.join("out");
    let args = dedup_args(&input, &out, &[]);
    neardup(&args).unwrap();
    let first = render_documents(&out);
    neardup(&args).unwrap();
    assert_eq!(render_documents(&out), first, "the rerun read the same input, not its own outputs");
}

#[test]
fn a_failed_rerun_removes_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let good = repo().join("tests/fixtures/mixed.jsonl");
    dedup(&good, &out, &[]).unwrap();
    assert!(out.join("_SUCCESS").exists());
    let bad = dir.path().join("bad.jsonl.gz");
    std::fs::write(&bad, b"\x1f\x8b\x08\x00not really gzip").unwrap();
    assert!(dedup(&bad, &out, &[]).is_err());
    assert_eq!(parts(&out), ["_FILES.json", "summary.json"], "only the failure summary remains");
}

#[test]
fn inputs_inside_the_folders_a_run_changes_are_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = std::fs::read(repo().join("tests/fixtures/mixed.jsonl")).unwrap();
    // An input among the outputs: `-i d/documents/user.jsonl -o d`.
    let d = dir.path().join("d");
    std::fs::create_dir_all(d.join("documents")).unwrap();
    let user = d.join("documents/user.jsonl");
    std::fs::write(&user, &fixture).unwrap();
    let args = dedup_args(&user, &d, &[]);
    assert_eq!(exit_code(&args), ExitCode::from(2));
    let e = neardup(&args).unwrap_err();
    assert!(format!("{e:#}").contains("is inside the output folder"), "{e:#}");
    assert_eq!(std::fs::read(&user).unwrap(), fixture, "the input is untouched");
    // An input in the --write-kept folder: `-i s/00000-a.jsonl -o out --write-kept s`.
    let s = dir.path().join("s");
    std::fs::create_dir(&s).unwrap();
    let named = s.join("00000-a.jsonl");
    std::fs::write(&named, &fixture).unwrap();
    let out = dir.path().join("out");
    let kept_in_s = dedup_exit_code(&named, &out, &["--write-kept", s.to_str().unwrap()]);
    assert_eq!(kept_in_s, ExitCode::from(2));
    assert_eq!(std::fs::read(&named).unwrap(), fixture);
    // The kept folder may not be the output folder.
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let kept_in_out = dedup_exit_code(&input, &out, &["--write-kept", out.to_str().unwrap()]);
    assert_eq!(kept_in_out, ExitCode::from(2));
}

#[test]
fn files_neardup_did_not_write_stop_the_run_and_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    std::fs::create_dir_all(out.join("documents")).unwrap();
    std::fs::write(out.join("documents/user.parquet"), b"theirs").unwrap();
    let args = dedup_args(&input, &out, &[]);
    let e = neardup(&args).unwrap_err();
    assert!(format!("{e:#}").contains("was not written by neardup"), "{e:#}");
    assert_eq!(std::fs::read(out.join("documents/user.parquet")).unwrap(), b"theirs");
    // Moved away, the run goes on; a file of the user's beside the outputs stays.
    std::fs::remove_file(out.join("documents/user.parquet")).unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    neardup(&args).unwrap();
    neardup(&args).unwrap();
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
    // With --write-kept, a file of the same name as a kept copy is not overwritten.
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(kept.join("00000-mixed.jsonl"), b"theirs").unwrap();
    let mut with_kept = args.to_vec();
    with_kept.extend(["--write-kept", kept.to_str().unwrap()]);
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let e = neardup(&with_kept).unwrap_err();
    assert_eq!(std::fs::read(kept.join("00000-mixed.jsonl")).unwrap(), b"theirs");
    // Refused before any folder changed: the earlier run's outputs are all there.
    assert!(out.join("_SUCCESS").exists(), "the earlier run's marker stays");
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    assert!(!neardup_io::read_documents(&out.join("documents")).unwrap().is_empty());
    assert!(format!("{e:#}").contains("changed nothing"), "{e:#}");
}

#[test]
fn a_kept_folder_is_locked_as_the_output_folder_is() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let first = dir.path().join("first");
    let kept_flag = kept.display().to_string();
    let args = dedup_args(&input, &first, &["--write-kept", &kept_flag]);
    // Another run into another output folder holds the kept folder.
    let (held, _) = neardup_io::FolderLock::acquire(&kept.join(".lock")).unwrap();
    assert_eq!(exit_code(&args), ExitCode::from(1));
    let e = format!("{:#}", neardup(&args).unwrap_err());
    assert!(e.contains(&kept.join(".lock").display().to_string()), "{e}");
    assert!(e.contains("held by another run") && e.contains("changed nothing"), "{e}");
    assert!(!kept.join("_SUCCESS").exists() && !first.join("documents").exists());
    drop(held);
    neardup(&args).unwrap();
    assert!(kept.join("_SUCCESS").exists() && !kept.join(".lock").exists());
}

#[test]
fn a_second_run_into_a_locked_output_folder_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let args = dedup_args(&input, &out, &[]);
    // A live run holds the folder (this process, as far as the lock can tell).
    let (held, _) = neardup_io::FolderLock::acquire(&out.join(".lock")).unwrap();
    assert_eq!(exit_code(&args), ExitCode::from(1));
    let e = format!("{:#}", neardup(&args).unwrap_err());
    assert!(e.contains(".lock") && e.contains("held by another run"), "{e}");
    assert!(e.contains(&format!("process {}", std::process::id())), "{e}");
    assert!(!out.join("_SUCCESS").exists() && !out.join("documents").exists());
    drop(held);
    neardup(&args).unwrap();
    assert!(!out.join(".lock").exists(), "a finished run leaves no lock");
    // A lock whose process is gone (killed) is taken over.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let lock = serde_json::json!({
        "pid": pid, "host": neardup_io::host_name(), "process_start": 1,
        "started_unix": 0, "heartbeat_unix": 0, "token": "killed"
    });
    std::fs::write(out.join(".lock"), lock.to_string()).unwrap();
    neardup(&args).unwrap();
    assert!(out.join("_SUCCESS").exists() && !out.join(".lock").exists());
}

#[test]
fn folders_neardup_wrote_inside_an_input_folder_are_not_read_as_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::copy(repo().join("tests/fixtures/mixed.jsonl"), data.join("mixed.jsonl")).unwrap();
    let records = |out: &Path| summary(out)["counts"]["records"].as_u64().unwrap();
    // An output, a kept dataset and an index written inside the input folder.
    let inside = data.join("out-inside");
    let (kept, index) = (data.join("kept-inside"), data.join("index-inside"));
    let (kept_flag, index_flag) = (kept.display().to_string(), index.display().to_string());
    neardup(&dedup_args(&data, &inside, &["--write-kept", &kept_flag, "--index", &index_flag]))
        .unwrap();
    let alone = records(&inside);
    assert!(kept.join("00000-mixed.jsonl").exists() && index.join("index.json").exists());
    // The next run over the input folder reads the input alone.
    let out = dir.path().join("out");
    neardup(&dedup_args(&data, &out, &[])).unwrap();
    assert_eq!(records(&out), alone);
    // Named directly, a kept dataset is read.
    let from_kept = dir.path().join("from-kept");
    neardup(&dedup_args(&kept, &from_kept, &[])).unwrap();
    assert!(records(&from_kept) > 0);
    // The input given as the output folder is named so, not "no input files".
    let e = format!("{:#}", neardup(&dedup_args(&out, &out, &[])).unwrap_err());
    assert!(e.contains("is the output folder or inside it"), "{e}");
    let e =
        format!("{:#}", neardup(&dedup_args(&inside.join("documents"), &inside, &[])).unwrap_err());
    assert!(e.contains("is the output folder or inside it"), "{e}");
}
