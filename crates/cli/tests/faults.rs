//! Fault injection: a run made to fail at each stage boundary and each commit step
//! (`NEARDUP_FAILPOINTS`), then run again, gives the outputs and the index of a run that
//! never failed, whether the same command is retried or the input is spelled differently.
//!
//! Each case runs the release binary: week 1 into a fresh index, week 2 with a failpoint
//! armed (it must fail), week 2 again, then week 3 against the index; the outputs of weeks
//! 2 and 3, the kept files and the index are compared with those of three clean runs.
//!
//! A run stopped by SIGTERM or SIGINT, held at a stage (`wait:PATH`) or blocked reading,
//! stops, cleans up as a failed run does and exits with the signal's conventional code.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use neardup_io::index::{Manifest, for_each_docs_batch};
use neardup_io::{read_documents, read_pairs};
use support::{read_until, repo};

/// Three weeks of Tang poems (two editions, so weeks overlap): 700 lines each.
fn weeks(dir: &Path) -> [PathBuf; 3] {
    let file = std::fs::File::open(repo().join("data-samples/zh-tang-poems/poems.jsonl.gz"))
        .expect("the bundled poems");
    let lines: Vec<String> =
        BufReader::new(flate2::read::GzDecoder::new(file)).lines().map(Result::unwrap).collect();
    // Interleaved, so each week holds both editions and matches the earlier weeks.
    [0, 1, 2].map(|w| {
        let path = dir.join(format!("week{}.jsonl", w + 1));
        let text: String =
            lines.iter().skip(w).step_by(3).take(700).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    })
}

/// `neardup dedup` of week `w` (1-based) in `root`, with `failpoint` armed.
fn week(root: &Path, input: &str, w: usize, failpoint: Option<&str>) -> Output {
    let mut cmd = support::neardup();
    cmd.current_dir(root)
        .args(["dedup", "-i", input, "-o", &format!("out{w}"), "-q", "-w", "2"])
        .args(["--index", "index", "--run-name", &format!("week-{w}")])
        .args(["--write-kept", &format!("kept{w}")])
        // A killed run's spill folder stays until a run into the same output: keep it in
        // the test's folder, not the system's temporary one.
        .args(["--spill-dir", "."])
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
    if let Some(spec) = failpoint {
        cmd.env(neardup_io::failpoint::FAILPOINTS_ENV, spec);
    }
    cmd.output().unwrap()
}

fn succeeds(output: &Output) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// What a run left that a user relies on, as text: documents and pairs (without the
/// `source` column, which spells the input), the kept files, the markers.
fn outputs(root: &Path, w: usize) -> String {
    let out = root.join(format!("out{w}"));
    let mut docs: Vec<String> = read_documents(&out.join("documents"))
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                d.doc, d.id, d.decision, d.cluster, d.duplicate_of, d.duplicate_of_run, d.reason
            )
        })
        .collect();
    let mut pairs: Vec<String> = read_pairs(&out.join("pairs"))
        .unwrap()
        .iter()
        .map(|p| format!("{} {} {:?} {}", p.id_a, p.id_b, p.kind, p.similarity))
        .collect();
    docs.sort();
    pairs.sort();
    let kept = root.join(format!("kept{w}"));
    let mut files: Vec<String> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = if name == neardup_io::FILE_LIST {
                Vec::new()
            } else {
                std::fs::read(&path).unwrap()
            };
            format!(
                "{name} {} bytes {:016x}",
                bytes.len(),
                neardup_core::hash::hash_bytes(&bytes, 0)
            )
        })
        .collect();
    files.sort();
    let mut top: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    format!("{}\n{}\n{}\n{}", docs.join("\n"), pairs.join("\n"), files.join("\n"), top.join(" "))
}

/// The index as text: its generations (without creation times and folder names) and
/// every document row (without `source`), and the folders in it.
fn index(root: &Path) -> String {
    let dir = root.join("index");
    let manifest = Manifest::load(&dir).unwrap().unwrap();
    let mut text = String::new();
    for g in &manifest.generations {
        text.push_str(&format!(
            "generation {} {} {} docs {} keys {} parts {} forgotten {:?}\n",
            g.number,
            g.run,
            g.output.rsplit('/').next().unwrap(),
            g.documents,
            g.keys,
            g.doc_parts,
            g.forgotten
        ));
    }
    let mut rows = Vec::new();
    for segment in manifest.segments() {
        for part in 0..segment.doc_parts {
            for_each_docs_batch(&dir.join(&segment.folder), part, |batch| {
                for d in batch {
                    rows.push(format!(
                        "{} {} {} {:?} {} {:x} {:x} {:016x}",
                        d.generation,
                        d.doc,
                        d.id,
                        d.kept,
                        d.kept_id,
                        d.kept_content,
                        d.content,
                        neardup_core::hash::hash_bytes(&d.signature, 0)
                    ));
                }
                Ok(())
            })
            .unwrap();
        }
    }
    rows.sort();
    let folders = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_dir())
        .count();
    text.push_str(&format!("{} segment folders, {} listed\n", folders, manifest.segments().len()));
    text + &rows.join("\n")
}

/// Runs the three weeks cleanly in a fresh folder.
fn clean(root: &Path) -> (String, String, String) {
    let inputs = weeks(root);
    for (w, input) in inputs.iter().enumerate() {
        succeeds(&week(root, input.file_name().unwrap().to_str().unwrap(), w + 1, None));
    }
    (outputs(root, 2), outputs(root, 3), index(root))
}

/// Week 2 fails at `failpoint`; then week 2 again (as `retry_input` spells it) and week 3.
fn faulty(root: &Path, failpoint: &str, retry_input: &str) -> (String, String, String) {
    weeks(root);
    succeeds(&week(root, "week1.jsonl", 1, None));
    let failed = week(root, "week2.jsonl", 2, Some(failpoint));
    assert!(!failed.status.success(), "{failpoint}: the run did not fail");
    let after_success = failpoint == "success-written=abort";
    assert_eq!(root.join("out2/_SUCCESS").exists(), after_success, "{failpoint}: _SUCCESS");
    succeeds(&week(root, retry_input, 2, None));
    succeeds(&week(root, "week3.jsonl", 3, None));
    assert!(!root.join("out2/.lock").exists() && !root.join("index/.lock").exists());
    (outputs(root, 2), outputs(root, 3), index(root))
}

const STAGES: [&str; 5] = [
    "after-reading-and-signing",
    "after-ids-and-exact-duplicates",
    "after-buckets",
    "after-verifying",
    "after-clustering",
];
const COMMIT_STEPS: [&str; 6] = [
    "parts-written",
    "report-written",
    "manifest-written",
    "kept-written",
    "summary-written",
    "success-written",
];

#[test]
fn a_failure_at_any_step_is_undone_by_a_retry_or_a_rerun() {
    let base = tempfile::tempdir().unwrap();
    let reference = base.path().join("clean");
    std::fs::create_dir(&reference).unwrap();
    let expected = clean(&reference);
    let mut cases: Vec<String> = STAGES.iter().map(|s| format!("{s}=abort")).collect();
    for step in COMMIT_STEPS {
        cases.push(format!("{step}=error"));
        cases.push(format!("{step}=abort"));
    }
    // Two lanes: the machine has two cores, and every case is independent.
    let lane = cases.len().div_ceil(2);
    let chunks: Vec<Vec<(usize, String)>> =
        cases.into_iter().enumerate().collect::<Vec<_>>().chunks(lane).map(<[_]>::to_vec).collect();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let (base, expected) = (base.path(), &expected);
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for (i, case) in chunk {
                        // A retry of the same command, and a rerun with the input spelled
                        // differently (another folder token, and an orphan to remove).
                        for (kind, input) in [("retry", "week2.jsonl"), ("rerun", "./week2.jsonl")]
                        {
                            let root = base.join(format!("case-{i}-{kind}"));
                            std::fs::create_dir(&root).unwrap();
                            let got = faulty(&root, case, input);
                            for (what, a, b) in [
                                ("week 2 outputs", &got.0, &expected.0),
                                ("week 3 outputs", &got.1, &expected.1),
                                ("index", &got.2, &expected.2),
                            ] {
                                if a != b {
                                    failures.push(format!("{case} ({kind}): {what} differ"));
                                }
                            }
                        }
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_killed_runs_spill_folder_and_locks_are_cleared_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    weeks(root);
    let spill = root.join("spill");
    std::fs::create_dir(&spill).unwrap();
    let run = |failpoint: Option<&str>| {
        let mut cmd = support::neardup();
        cmd.current_dir(root)
            .args(["dedup", "-i", "week1.jsonl", "-o", "out", "-q", "-w", "2"])
            .args(["--index", "index", "--spill-dir", "spill", "--memory-budget", "8M"])
            .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
        if let Some(spec) = failpoint {
            cmd.env(neardup_io::failpoint::FAILPOINTS_ENV, spec);
        }
        cmd.output().unwrap()
    };
    let killed = run(Some("after-verifying=abort"));
    assert!(!killed.status.success());
    let left: Vec<_> = std::fs::read_dir(&spill).unwrap().collect();
    assert_eq!(left.len(), 1, "the killed run's spill folder stays behind");
    assert!(root.join("out/.lock").exists() && root.join("index/.lock").exists());
    // Another run's spill folder (a live process: this one) is left alone.
    let other = spill.join("neardup-0000000000000000-1");
    std::fs::create_dir(&other).unwrap();
    let rerun = run(None);
    succeeds(&rerun);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(stderr.contains("took over the lock"), "the takeover is reported: {stderr}");
    let left: Vec<_> = std::fs::read_dir(&spill).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left, [other], "the killed run's folder is gone, the rerun's too");
    assert!(!root.join("out/.lock").exists() && !root.join("index/.lock").exists());
}

/// Web pages are read once: the pass that learns their templates keeps the records, here
/// spilled, for the main dataflow. A run killed between the two leaves them in its spill
/// folder; the next run removes them and decides as a run that never failed.
#[test]
fn records_kept_between_passes_are_cleared_after_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pages = repo().join("data-samples/web-templated/pages.warc.gz");
    let spill = root.join("spill");
    std::fs::create_dir(&spill).unwrap();
    let run = |out: &str, failpoint: Option<&str>| {
        let mut cmd = support::neardup();
        cmd.current_dir(root)
            .args(["dedup", "-o", out, "-q", "-w", "2", "--spill-dir", "spill"])
            .args(["--memory-budget", "8M", "-i"])
            .arg(&pages)
            .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
        if let Some(spec) = failpoint {
            cmd.env(neardup_io::failpoint::FAILPOINTS_ENV, spec);
        }
        cmd.output().unwrap()
    };
    let killed = run("out", Some("after-corpus-passes=abort"));
    assert!(!killed.status.success());
    let kept: Vec<PathBuf> =
        walk(&spill).into_iter().filter(|p| p.ends_with("records.zst")).collect();
    assert!(!kept.is_empty(), "the killed run's kept records stay behind");
    succeeds(&run("out", None));
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "and go with the next run");
    succeeds(&run("clean", None));
    let decided = |out: &str| {
        let mut docs: Vec<String> = read_documents(&root.join(out).join("documents"))
            .unwrap()
            .iter()
            .map(|d| format!("{:?} {:?} {:?} {:?}", d.id, d.decision, d.cluster, d.reason))
            .collect();
        docs.sort();
        docs
    };
    assert_eq!(decided("out"), decided("clean"));
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_budget_below_the_floor_is_said() {
    let dir = tempfile::tempdir().unwrap();
    weeks(dir.path());
    let out = support::neardup()
        .current_dir(dir.path())
        .args(["dedup", "-i", "week1.jsonl", "-o", "out", "--memory-budget", "64M"])
        .output()
        .unwrap();
    succeeds(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--memory-budget 64.0 MiB is below the 256.0 MiB a run needs"),
        "{stderr}"
    );
}

/// A local input truncated while a run goes on fails the run, naming the file, instead of
/// a run that read part of it ending in `_SUCCESS`; the run into the same folder after the
/// file is whole again succeeds.
#[test]
fn an_input_that_changes_during_a_run_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let [input, ..] = weeks(root);
    let whole = std::fs::read(&input).unwrap();
    let go = root.join("go");
    let mut cmd = support::neardup();
    cmd.current_dir(root)
        .args(["dedup", "-i", "week1.jsonl", "-o", "out", "-w", "2", "--spill-dir", "."])
        .env(
            neardup_io::failpoint::FAILPOINTS_ENV,
            format!("after-reading-and-signing=wait:{}", go.display()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut held = cmd.spawn().unwrap();
    let (said, rest) = read_until(&mut held, "waiting for");
    // Cut to a whole first half of its lines, as a writer that truncates and rewrites does.
    let half = whole.len() / 2;
    let cut = half + whole[half..].iter().position(|b| *b == b'\n').unwrap() + 1;
    std::fs::write(&input, &whole[..cut]).unwrap();
    std::fs::write(&go, b"").unwrap();
    let status = held.wait().unwrap();
    let rest = rest.join().unwrap();
    assert_eq!(status.code(), Some(1), "{said}{rest}");
    assert!(
        rest.contains("week1.jsonl") && rest.contains("changed while the run read it"),
        "{rest}"
    );
    assert!(
        rest.contains(&format!("{} bytes when listed, {cut} bytes now", whole.len())),
        "{rest}"
    );
    let out = root.join("out");
    assert!(!out.join("_SUCCESS").exists() && !out.join("documents").exists());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    // Whole again, with another modification time: the next run reads it all.
    std::fs::write(&input, &whole).unwrap();
    let again = support::neardup()
        .current_dir(root)
        .args(["dedup", "-q", "-i", "week1.jsonl", "-o", "out", "--json"])
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV)
        .output()
        .unwrap();
    succeeds(&again);
    let summary: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(summary["counts"]["records"], 700);
}

/// A run in `root` of `input` into `out`, spilling into `spill`, with `failpoint` armed,
/// its stderr piped.
fn held_run(root: &Path, input: &Path, failpoint: Option<&str>) -> Child {
    let mut cmd = support::neardup();
    cmd.current_dir(root)
        .args(["dedup", "-o", "out", "-q", "-w", "2", "--log", "info", "--spill-dir", "spill"])
        .arg("-i")
        .arg(input)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
    if let Some(spec) = failpoint {
        cmd.env(neardup_io::failpoint::FAILPOINTS_ENV, spec);
    }
    cmd.spawn().unwrap()
}

fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status();
    assert!(sent.unwrap().success(), "kill -{name}");
}

/// Waits for a child with a deadline, so a run that does not stop fails the test.
fn wait_for(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the run did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_stops_a_run_at_any_stage_and_cleans_up() {
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let pages = repo().join("data-samples/web-templated/pages.warc.gz");
    // What holds the run, the signal, and whether the hold is released after signalling
    // (the driver waits in `after-corpus-passes`; the others hold a worker, which the run
    // must not wait for).
    let cases = [
        ("reading", "TERM", 143),
        ("after-corpus-passes", "TERM", 143),
        ("after-buckets", "INT", 130),
        ("after-clustering", "TERM", 143),
    ];
    let base = tempfile::tempdir().unwrap();
    for (hold, name, code) in cases {
        let root = base.path().join(hold);
        std::fs::create_dir_all(root.join("spill")).unwrap();
        let release = root.join("release");
        let (mut child, needle) = match hold {
            // A named pipe nobody writes to: the worker reading it blocks in `open`.
            "reading" => {
                let fifo = root.join("stalled.jsonl");
                assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
                (held_run(&root, &fifo, None), "job started")
            }
            _ => {
                let input = if hold == "after-corpus-passes" { &pages } else { &poems };
                let spec = format!("{hold}=wait:{}", release.display());
                (held_run(&root, input, Some(&spec)), "waiting for")
            }
        };
        let (seen, rest) = read_until(&mut child, needle);
        signal(&child, name);
        if hold == "after-corpus-passes" {
            std::fs::write(&release, "").unwrap();
        }
        let status = wait_for(&mut child, Duration::from_secs(60));
        let stderr = format!("{seen}{}", rest.join().unwrap());
        assert_eq!(status.code(), Some(code), "{hold}, SIG{name}: {stderr}");
        assert!(stderr.contains(&format!("interrupted by SIG{name}")), "{hold}: {stderr}");
        let out = root.join("out");
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["status"], "failed", "{hold}");
        let error = summary["error"].as_str().unwrap();
        assert!(error.contains(&format!("interrupted by SIG{name}")), "{hold}: {error}");
        assert!(!out.join(".lock").exists(), "{hold}: the lock is released");
        assert!(!out.join("_SUCCESS").exists() && !out.join("documents").exists(), "{hold}");
        let spilled: Vec<_> = std::fs::read_dir(root.join("spill")).unwrap().collect();
        assert!(spilled.is_empty(), "{hold}: the spill folder is removed: {spilled:?}");
        std::fs::write(&release, "").unwrap();
    }
}

#[test]
fn a_second_signal_while_stopping_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("spill")).unwrap();
    let pages = repo().join("data-samples/web-templated/pages.warc.gz");
    let release = root.join("release");
    let spec = format!("after-corpus-passes=wait:{}", release.display());
    let mut child = held_run(root, &pages, Some(&spec));
    // The driver waits in the failpoint, so the first signal cannot be acted on yet.
    let (_seen, rest) = read_until(&mut child, "waiting for");
    signal(&child, "TERM");
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, "INT");
    // It ends while still held: the second signal's own code, 130 (or 143, should a busy
    // machine deliver both at once, the lower-numbered SIGINT first).
    let status = wait_for(&mut child, Duration::from_secs(30));
    std::fs::write(&release, "").unwrap();
    let code = status.code();
    assert!(matches!(code, Some(130 | 143)), "{code:?}: {}", rest.join().unwrap());
}
