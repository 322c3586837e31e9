//! Distributed runs: two `neardup` processes on 127.0.0.1 give the same outputs as one; a
//! process whose port is still taken waits for it; processes started with different
//! settings refuse to run before changing anything; a stalled or killed process fails the
//! job naming it, at any stage; a rerun into the same folder starts clean.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use neardup_io::{read_documents, read_pairs};

mod support;
use support::{hostfile, neardup, repo};

/// The run's `summary.json`.
fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

/// Starts process `p` of `n` with one worker each.
fn start(p: usize, n: usize, hosts: &Path, input: &[&Path], out: &Path, extra: &[&str]) -> Child {
    command(p, n, hosts, input, out, extra).spawn().unwrap()
}

/// The command of process `p` of `n`, with one worker unless `extra` says otherwise.
fn command(
    p: usize,
    n: usize,
    hosts: &Path,
    input: &[&Path],
    out: &Path,
    extra: &[&str],
) -> Command {
    let mut cmd = neardup();
    let workers = if extra.contains(&"-w") { &[][..] } else { &["-w", "1"][..] };
    cmd.args(["dedup", "-o", out.to_str().unwrap(), "-q", "--log", "info"])
        .args(workers)
        .args(["-n", &n.to_string(), "-p", &p.to_string(), "--hostfile", hosts.to_str().unwrap()])
        .args(extra)
        .arg("-i")
        .args(input)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
    cmd
}

/// Waits for a child with a deadline, so a hang fails the test instead of blocking it.
fn wait(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!(
                "process did not finish within {limit:?}: {:?}",
                child.wait_with_output().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn render(out: &Path) -> (Vec<String>, Vec<String>) {
    let mut docs: Vec<String> = read_documents(&out.join("documents"))
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?}",
                d.doc, d.id, d.decision, d.cluster, d.reason, d.verified_with_kept
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
    (docs, pairs)
}

#[test]
fn two_processes_give_the_same_outputs_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let samples = repo().join("data-samples");
    let single = dir.path().join("single");
    let status = neardup()
        .args([
            "dedup",
            "-i",
            samples.to_str().unwrap(),
            "-o",
            single.to_str().unwrap(),
            "-w",
            "1",
            "-q",
        ])
        .status()
        .unwrap();
    assert!(status.success());

    let hosts = hostfile(dir.path(), 2);
    let distributed = dir.path().join("distributed");
    let p1 = start(1, 2, &hosts, &[&samples], &distributed, &[]);
    let p0 = start(0, 2, &hosts, &[&samples], &distributed, &[]);
    for (p, child) in [(0, p0), (1, p1)] {
        let out = wait(child, Duration::from_secs(120));
        assert!(out.status.success(), "process {p}: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(distributed.join("_SUCCESS").exists());
    assert_eq!(render(&distributed), render(&single));
    let summary = summary(&distributed);
    assert_eq!((summary["processes"].as_u64(), summary["workers"].as_u64()), (Some(2), Some(2)));
    // The bytes exchanged, by stage: every grouping stage crosses between the processes.
    let exchanged = &summary["exchanged_bytes"];
    // The samples hold web pages, so the template-learning pass runs and exchanges too.
    for stage in [
        "corpus_statistics",
        "read_and_sign",
        "ids_and_exact",
        "buckets",
        "verify",
        "cluster",
        "writing",
    ] {
        for way in ["sent", "received"] {
            assert!(exchanged[stage][way].as_u64().unwrap_or(0) > 0, "{stage} {way}: {exchanged}");
        }
    }
    // One process exchanges nothing over the network.
    assert!(self::summary(&single).get("exchanged_bytes").is_none());
}

/// With `--paragraphs`, two processes leave out the paragraphs one leaves out: a key's
/// paragraphs meet on one worker whichever process read them.
#[test]
fn two_processes_leave_out_the_paragraphs_one_does() {
    let dir = tempfile::tempdir().unwrap();
    let samples = repo().join("data-samples");
    let single = dir.path().join("single");
    let args = ["dedup", "-i", samples.to_str().unwrap(), "-o", single.to_str().unwrap()];
    let status = neardup().args(args).args(["-w", "1", "-q", "--paragraphs"]).status().unwrap();
    assert!(status.success());
    let hosts = hostfile(dir.path(), 2);
    let distributed = dir.path().join("distributed");
    let p1 = start(1, 2, &hosts, &[&samples], &distributed, &["--paragraphs"]);
    let p0 = start(0, 2, &hosts, &[&samples], &distributed, &["--paragraphs"]);
    for (p, child) in [(0, p0), (1, p1)] {
        let out = wait(child, Duration::from_secs(120));
        assert!(out.status.success(), "process {p}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let left_out = |out: &Path| {
        let mut rows = neardup_io::read_paragraphs(&out.join("paragraphs")).unwrap();
        rows.sort_by_key(|r| (r.doc, r.paragraph));
        rows
    };
    let rows = left_out(&single);
    assert!(rows.len() > 100, "the samples repeat paragraphs: {}", rows.len());
    assert_eq!(left_out(&distributed), rows);
    let repeated = |out: &Path| {
        let mut docs = read_documents(&out.join("documents")).unwrap();
        docs.sort_by_key(|d| d.doc);
        docs.into_iter().map(|d| (d.doc, d.decision, d.repeated)).collect::<Vec<_>>()
    };
    assert_eq!(repeated(&distributed), repeated(&single));
    assert_eq!(summary(&distributed)["paragraphs"], summary(&single)["paragraphs"]);
}

/// A process waiting for the others to connect says so on its progress line (a line every
/// ten seconds, stderr being a pipe), where it printed "0 records, 0 B of ... read".
#[test]
fn a_process_waiting_for_the_others_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = hostfile(dir.path(), 2);
    let samples = repo().join("data-samples/zh-tang-poems");
    let out = dir.path().join("out");
    let mut cmd = neardup();
    cmd.args(["dedup", "-o", out.to_str().unwrap(), "-w", "1", "-n", "2", "-p", "0"])
        .args(["--hostfile", hosts.to_str().unwrap(), "--connect-timeout", "12", "-i"])
        .arg(&samples)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
    let done = wait(cmd.spawn().unwrap(), Duration::from_secs(120));
    assert!(!done.status.success(), "process 1 never came");
    let said = String::from_utf8_lossy(&done.stderr);
    let line = "progress: 0 records read here; waiting for the other processes to connect";
    assert!(said.contains(line), "{said}");
}

#[test]
fn a_process_waits_for_its_port_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let poems = repo().join("data-samples/zh-tang-poems");
    let hosts = hostfile(dir.path(), 2);
    let text = std::fs::read_to_string(&hosts).unwrap();
    let port = text.lines().next().unwrap().rsplit(':').next().unwrap().to_string();
    // Process 0's port is taken (bound, not listening: connections to it are refused), as
    // by a process that is still ending, until process 0 says it is waiting for it.
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import socket, sys, time\n\
             s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))\n\
             print('held', flush=True); time.sleep(60)",
            &port,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 holds the port");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "held");
    let out = dir.path().join("out");
    let mut p0 = start(0, 2, &hosts, &[&poems], &out, &[]);
    let p1 = start(1, 2, &hosts, &[&poems], &out, &[]);
    wait_for_line(&mut p0, "cannot listen yet");
    holder.kill().unwrap();
    holder.wait().unwrap();
    for (p, child) in [(0, p0), (1, p1)] {
        let done = wait(child, Duration::from_secs(60));
        assert!(done.status.success(), "process {p}: {}", String::from_utf8_lossy(&done.stderr));
    }
    assert!(out.join("_SUCCESS").exists());
    assert_eq!(summary(&out)["counts"]["records"], 5000);
}

/// Two inputs: file 0 (read by process 0) is real, file 1 (read by process 1, the second
/// in sorted order) is a named pipe nobody writes to, so process 1's worker blocks in
/// `open` and stops sending heartbeats.
fn stalling_input(dir: &Path) -> (PathBuf, PathBuf) {
    let good = dir.join("a.jsonl");
    std::fs::copy(repo().join("tests/fixtures/mixed.jsonl"), &good).unwrap();
    let pipe = dir.join("b.jsonl");
    assert!(Command::new("mkfifo").arg(&pipe).status().unwrap().success(), "mkfifo");
    (good, pipe)
}

/// Waits until a child's stderr has a line containing `needle`; returns the lines read.
fn wait_for_line(child: &mut Child, needle: &str) -> Vec<String> {
    let stderr = child.stderr.as_mut().unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        let found = line.contains(needle);
        lines.push(line);
        if found {
            return lines;
        }
    }
    panic!("no line with {needle:?}: {lines:?}");
}

fn rerun_succeeds(dir: &Path, inputs: &[&Path], out: &Path) {
    let hosts = hostfile(dir, 2);
    let p1 = start(1, 2, &hosts, inputs, out, &[]);
    let p0 = start(0, 2, &hosts, inputs, out, &[]);
    for child in [p0, p1] {
        let o = wait(child, Duration::from_secs(120));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.join("_SUCCESS").exists());
    let summary = summary(out);
    assert_eq!(summary["status"], "success");
}

#[test]
fn a_stalled_process_is_named_and_the_rerun_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (good, pipe) = stalling_input(dir.path());
    let out = dir.path().join("out");
    let hosts = hostfile(dir.path(), 2);
    let mut p1 = start(1, 2, &hosts, &[&good, &pipe], &out, &["--watchdog", "3"]);
    let mut p0 = start(0, 2, &hosts, &[&good, &pipe], &out, &["--watchdog", "3"]);
    // Freeze process 1 entirely once it has joined, as a hung machine would be.
    wait_for_line(&mut p0, "all processes connected");
    let stop = Command::new("kill").args(["-STOP", &p1.id().to_string()]).status().unwrap();
    assert!(stop.success());
    let o = wait(p0, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("process 1 has sent nothing"), "{stderr}");
    assert!(!out.join("_SUCCESS").exists());
    let summary = summary(&out);
    assert_eq!(summary["status"], "failed");
    p1.kill().unwrap();
    let _ = p1.wait();
    assert!(!out.join("documents").exists(), "no parts of the failed run");

    std::fs::remove_file(&pipe).unwrap();
    std::fs::write(
        &pipe,
        "{\"id\": \"late\", \"text\": \"a record in the file that stalled before\"}\n",
    )
    .unwrap();
    rerun_succeeds(dir.path(), &[&good, &pipe], &out);
}

#[test]
fn a_killed_process_fails_the_job_and_the_rerun_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (good, pipe) = stalling_input(dir.path());
    let out = dir.path().join("out");
    let hosts = hostfile(dir.path(), 2);
    let mut p1 = start(1, 2, &hosts, &[&good, &pipe], &out, &[]);
    let mut p0 = start(0, 2, &hosts, &[&good, &pipe], &out, &[]);
    let seen = wait_for_line(&mut p0, "all processes connected");
    p1.kill().unwrap();
    let _ = p1.wait();
    let o = wait(p0, Duration::from_secs(60));
    let stderr = format!("{}\n{}", seen.join("\n"), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lost the connection to process 1"), "{stderr}");
    assert!(!stderr.contains("panicked"), "only neardup's own error is printed: {stderr}");
    assert!(!out.join("_SUCCESS").exists());
    assert!(!out.join("documents").exists(), "no parts of the failed run");

    std::fs::remove_file(&pipe).unwrap();
    std::fs::write(
        &pipe,
        "{\"id\": \"late\", \"text\": \"a record in the file whose reader died\"}\n",
    )
    .unwrap();
    rerun_succeeds(dir.path(), &[&good, &pipe], &out);
}

/// Runs `dedup` on `inputs` with `--index`, in one process or two, and returns the output.
fn indexed_run(
    dir: &Path,
    name: &str,
    inputs: &[&Path],
    index: &Path,
    processes: usize,
) -> PathBuf {
    let out = dir.join(name);
    let extra = ["--index", index.to_str().unwrap(), "--run-name", name];
    if processes == 1 {
        let status = neardup()
            .args(["dedup", "-o", out.to_str().unwrap(), "-w", "2", "-q"])
            .args(extra)
            .arg("-i")
            .args(inputs)
            .status()
            .unwrap();
        assert!(status.success());
    } else {
        let hosts = hostfile(dir, 2);
        let p1 = start(1, 2, &hosts, inputs, &out, &extra);
        let p0 = start(0, 2, &hosts, inputs, &out, &extra);
        for (p, child) in [(0, p0), (1, p1)] {
            let o = wait(child, Duration::from_secs(120));
            assert!(o.status.success(), "process {p}: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    assert!(out.join("_SUCCESS").exists());
    out
}

#[test]
fn two_processes_use_an_index_as_one_does() {
    let dir = tempfile::tempdir().unwrap();
    // The sample folders (web archives, templated pages, court openings, poems).
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("data-samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    files.sort();
    let all: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let first = &all[..all.len() / 2];
    let mut outputs = Vec::new();
    for processes in [1, 2] {
        let index = dir.path().join(format!("index-{processes}"));
        indexed_run(dir.path(), &format!("first-{processes}"), first, &index, processes);
        let out = indexed_run(dir.path(), &format!("all-{processes}"), &all, &index, processes);
        let summary = summary(&out);
        assert!(summary["index"]["removed"].as_u64().unwrap() > 0, "{}", summary["index"]);
        outputs.push(render(&out));
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// Every file below `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            let meta = std::fs::metadata(&path).unwrap();
            files.push(format!("{} {} {:?}", path.display(), meta.len(), meta.modified().unwrap()));
        }
    }
    files.sort();
    files
}

#[test]
fn processes_with_different_settings_refuse_to_run_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let out = dir.path().join("out");
    // An earlier run's outputs, which a refused run must leave as they are.
    let status = neardup()
        .args(["dedup", "-w", "1", "-q", "-o", out.to_str().unwrap(), "-i"])
        .arg(&input)
        .status()
        .unwrap();
    assert!(status.success());
    let before = snapshot(&out);
    assert!(out.join("_SUCCESS").exists());
    // The setting given to process 1 alone, how the error names it, and the two values.
    let cases: [(&[&str], &str, &str, &str); 2] =
        [(&["--threshold", "0.5"], "threshold", "0.8", "0.5"), (&["-w", "2"], "workers", "1", "2")];
    for (extra, setting, default, given) in cases {
        let hosts = hostfile(dir.path(), 2);
        let p1 = start(1, 2, &hosts, &[&input], &out, extra);
        let p0 = start(0, 2, &hosts, &[&input], &out, &[]);
        for (p, child, ours, theirs, other) in
            [(0, p0, default, given, 1), (1, p1, given, default, 0)]
        {
            let o = wait(child, Duration::from_secs(60));
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{extra:?}, process {p}: {stderr}");
            assert!(stderr.contains(setting), "{extra:?}, process {p} names {setting}: {stderr}");
            assert!(
                stderr.contains(&format!("process {other} has `")),
                "{extra:?}, process {p} names process {other}: {stderr}"
            );
            let value = format!("{setting}` = {theirs}");
            assert!(stderr.contains(&value), "{extra:?}, process {p}: {value}: {stderr}");
            let this = format!("this process (process {p}) has ");
            let here = stderr.split(&this).nth(1).unwrap_or_default();
            assert!(here.contains(ours), "{extra:?}, process {p}: {this}{ours}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
        assert_eq!(snapshot(&out), before, "{extra:?}: the output folder is unchanged");
    }
}

/// Process 1 dies (`abort`, as under `kill -9`) at `failpoint` while process 0 runs on;
/// returns process 0's stderr and the spill folder's entries.
fn kill_process_1_at(dir: &Path, failpoint: &str, input: &Path) -> (String, Vec<String>) {
    let hosts = hostfile(dir, 2);
    let out = dir.join("out");
    let spill = dir.join("spill");
    std::fs::create_dir(&spill).unwrap();
    let extra = ["--spill-dir", spill.to_str().unwrap(), "--connect-timeout", "60"];
    let mut p1 = command(1, 2, &hosts, &[input], &out, &extra);
    p1.env(neardup_io::failpoint::FAILPOINTS_ENV, format!("{failpoint}=abort"));
    let p1 = p1.spawn().unwrap();
    let p0 = start(0, 2, &hosts, &[input], &out, &extra);
    let p0_id = p0.id();
    let killed = wait(p1, Duration::from_secs(60));
    let said = String::from_utf8_lossy(&killed.stderr);
    let aborted = said.contains(&format!("failpoint {failpoint}: aborting"));
    if !aborted {
        // Said before process 0 is waited for, which may not end.
        eprintln!("{failpoint}: process 1 ended before its failpoint: {said}");
    }
    let o = wait(p0, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(aborted, "{failpoint}: process 1 said {said}\nprocess 0 said {stderr}");
    assert_eq!(o.status.code(), Some(1), "{failpoint}: {stderr}");
    let named = "lost the connection to process 1";
    assert!(stderr.contains(named), "{failpoint}: the lost process is named: {stderr}");
    assert!(!stderr.contains("panicked"), "{failpoint}: no panics: {stderr}");
    let summary = summary(&out);
    assert_eq!(summary["status"], "failed", "{failpoint}");
    assert!(summary["error"].as_str().unwrap().contains("process 1"), "{failpoint}: {summary}");
    assert!(!out.join("_SUCCESS").exists(), "{failpoint}");
    for folder in ["documents", "pairs"] {
        assert!(!out.join(folder).exists(), "{failpoint}: no parts of the failed run");
    }
    assert!(!out.join(".lock").exists(), "{failpoint}: the lock is released");
    let left: Vec<String> = std::fs::read_dir(&spill)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left.iter().any(|name| name.ends_with(&format!("-{p0_id}"))),
        "{failpoint}: process 0's spill folder is removed: {left:?}"
    );
    (stderr, left)
}

#[test]
fn a_process_killed_at_any_stage_fails_the_other_naming_it() {
    let poems = repo().join("data-samples/zh-tang-poems");
    let pages = repo().join("data-samples/web-templated");
    // The main dataflow's stages, and between the pass that learns web templates and the
    // main dataflow (no connection open then but the processes' own).
    let cases = [
        ("after-reading-and-signing", &poems),
        ("after-buckets", &poems),
        ("after-clustering", &poems),
        ("after-corpus-passes", &pages),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for lane in cases.chunks(2) {
            let dir = dir.path();
            scope.spawn(move || {
                for (failpoint, input) in lane {
                    let case = dir.join(failpoint);
                    std::fs::create_dir(&case).unwrap();
                    kill_process_1_at(&case, failpoint, input);
                }
            });
        }
    });
}

#[test]
fn a_process_that_refuses_to_start_fails_the_others_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let poems = repo().join("data-samples/zh-tang-poems");
    let out = dir.path().join("out");
    // A one-process run holds the output folder's lock, waiting at a failpoint.
    let release = dir.path().join("release");
    let mut holder = neardup()
        .args(["dedup", "-w", "1", "-q", "--log", "info", "-o", out.to_str().unwrap(), "-i"])
        .arg(&poems)
        .env(
            neardup_io::failpoint::FAILPOINTS_ENV,
            format!("after-buckets=wait:{}", release.display()),
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&mut holder, "waiting for");
    let hosts = hostfile(dir.path(), 2);
    let p1 = start(1, 2, &hosts, &[&poems], &out, &[]);
    let p0 = start(0, 2, &hosts, &[&poems], &out, &[]);
    let o = wait(p0, Duration::from_secs(60));
    let refused = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{refused}");
    assert!(refused.contains("the run did not start"), "{refused}");
    let o = wait(p1, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("process 0 stopped: the run did not start"), "{stderr}");
    std::fs::write(&release, "").unwrap();
    let held = wait(holder, Duration::from_secs(60));
    assert!(held.status.success(), "{}", String::from_utf8_lossy(&held.stderr));
}
