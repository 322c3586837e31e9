//! Reruns after a lost process: a run killed (`abort`, as under `kill -9`) while reading,
//! after reading, while verifying or while writing leaves the units it finished in the work
//! area (`OUTPUT/_work/`); the rerun into the same output replays them, reads only the
//! rest, and gives the outputs of a run never killed. A unit whose input changed, or one
//! left half written, is read again.
//!
//! Each case runs the release binary with a failpoint armed (`NEARDUP_FAILPOINTS`):
//! `work.unit_committed.N` stops the process once it has committed N units,
//! `work.unit_unfinished.N` while its N-th unit is written but not yet in place, and the
//! stage failpoints after reading and signing, after buckets (verification next) and after
//! clustering (writing next).
//!
//! `neardup sign` tasks sign shares of the inputs into the work area with no connection
//! between them; a dedup with the same flags then replays their units. A task killed part
//! way resumes from its own committed units; a dedup after tasks that did not all finish,
//! or signed with other settings, reads what they did not sign, and says so.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{hostfile, neardup, repo, results, summary};

/// Input files, so that each of two workers reads whole files.
const FILES: usize = 10;

/// Ten files of Tang poems (both editions interleaved, so files share duplicates), in
/// `dir/in`.
fn inputs(dir: &Path) -> PathBuf {
    let file = std::fs::File::open(repo().join("data-samples/zh-tang-poems/poems.jsonl.gz"))
        .expect("the bundled poems");
    let lines: Vec<String> =
        BufReader::new(flate2::read::GzDecoder::new(file)).lines().map(Result::unwrap).collect();
    let folder = dir.join("in");
    std::fs::create_dir_all(&folder).unwrap();
    for f in 0..FILES {
        let text: String = lines.iter().skip(f).step_by(FILES).map(|l| format!("{l}\n")).collect();
        std::fs::write(folder.join(format!("part-{f:02}.jsonl")), text).unwrap();
    }
    folder
}

/// `neardup dedup ARGS` run in `dir` (spilling there), with `failpoint` armed.
fn command(dir: &Path, args: &[&str], failpoint: Option<&str>) -> Command {
    let mut cmd = subcommand(dir, "dedup", args, failpoint);
    cmd.args(["--spill-dir", dir.to_str().unwrap()]);
    cmd
}

/// `neardup SUBCOMMAND ARGS -q` run in `dir`, with `failpoint` armed.
fn subcommand(dir: &Path, name: &str, args: &[&str], failpoint: Option<&str>) -> Command {
    let mut cmd = neardup();
    cmd.current_dir(dir)
        .arg(name)
        .args(args)
        .arg("-q")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove(neardup_io::failpoint::FAILPOINTS_ENV);
    if let Some(spec) = failpoint {
        cmd.env(neardup_io::failpoint::FAILPOINTS_ENV, spec);
    }
    cmd
}

/// `neardup dedup` of `input` into `out` with two workers, `failpoint` armed.
fn dedup(dir: &Path, input: &Path, out: &str, failpoint: Option<&str>) -> Output {
    let args = ["-i", input.to_str().unwrap(), "-o", out, "-w", "2"];
    wait(command(dir, &args, failpoint), Duration::from_secs(300))
}

fn wait(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the run did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn succeeds(output: &Output) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// The committed units in `out`'s work area, and the units half written.
fn units(out: &Path) -> (usize, usize) {
    let Ok(entries) = std::fs::read_dir(out.join("_work/units")) else { return (0, 0) };
    let names: Vec<String> =
        entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let committed = names.iter().filter(|n| n.ends_with(".unit")).count();
    let unfinished = names.iter().filter(|n| n.ends_with(".inprogress")).count();
    (committed, unfinished)
}

/// The names of the committed units in `out`'s work area.
fn unit_names(out: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(out.join("_work/units")) else { return Vec::new() };
    entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".unit"))
        .collect()
}

/// What a summary says the run read, kept and replayed.
fn work(out: &Path) -> (u64, u64, u64) {
    let w = &summary(out)["work_area"];
    let n = |k: &str| w[k].as_u64().unwrap();
    (n("units_read"), n("units_reused"), n("units_written"))
}

/// A summary's counts: what every run over the same input must agree on.
fn counts(out: &Path) -> serde_json::Value {
    summary(out)["counts"].clone()
}

/// Asserts that the run in `out` decided as the one in `clean`: the same rows and counts.
fn decided_alike(out: &Path, clean: &Path, what: &str) {
    assert_eq!(results(out), results(clean), "{what}: outputs differ");
    assert_eq!(counts(out), counts(clean), "{what}: counts differ");
}

#[test]
fn a_rerun_after_a_kill_replays_the_finished_units_and_reads_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    assert_eq!(work(&clean), (FILES as u64, 0, FILES as u64), "a clean run keeps every unit");
    assert!(!clean.join("_work").exists(), "the work area goes with _SUCCESS");
    // While reading (after 4 units), after reading, before verifying, before writing.
    let cases = [
        ("work.unit_committed.4=abort", Some(4)),
        ("after-reading-and-signing=abort", Some(FILES)),
        ("after-buckets=abort", Some(FILES)),
        ("after-clustering=abort", Some(FILES)),
    ];
    for (i, (failpoint, kept)) in cases.into_iter().enumerate() {
        let out = format!("out-{i}");
        let killed = dedup(dir.path(), &input, &out, Some(failpoint));
        assert!(!killed.status.success(), "{failpoint}: the run did not stop");
        let out = dir.path().join(&out);
        assert!(!out.join("_SUCCESS").exists(), "{failpoint}");
        let (committed, _) = units(&out);
        if let Some(kept) = kept {
            // Another worker may commit a unit while the first one stops the process.
            assert!((kept..=kept + 1).contains(&committed), "{failpoint}: {committed} units");
        }
        succeeds(&dedup(dir.path(), &input, out.to_str().unwrap(), None));
        let (read, reused, _) = work(&out);
        assert_eq!(reused, committed as u64, "{failpoint}: every kept unit is replayed");
        assert_eq!(read, (FILES - committed) as u64, "{failpoint}: only the rest is read");
        decided_alike(&out, &clean, failpoint);
        assert!(!out.join("_work").exists(), "{failpoint}: the work area is removed");
    }
}

/// Each kept document's paragraphs left out (`repeated_paragraphs`), by id.
fn repeated(out: &Path) -> Vec<(Option<String>, Option<u32>)> {
    let mut docs = neardup_io::read_documents(&out.join("documents")).unwrap();
    docs.sort_by_key(|d| d.doc);
    docs.into_iter().map(|d| (d.id, d.repeated.map(|r| r.paragraphs))).collect()
}

/// With `--paragraphs`, the units keep each record's paragraphs: a rerun after a kill
/// leaves out what a run never killed leaves out.
#[test]
fn a_paragraph_run_resumes_with_the_paragraphs_its_units_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    // Every poem with a notice below it, a paragraph at a minimum of 10 characters.
    for entry in std::fs::read_dir(&input).unwrap() {
        let path = entry.unwrap().path();
        let lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| {
                let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
                let text = record["text"].as_str().unwrap().to_string();
                record["text"] = format!("{text}\n\n本站诗词仅供学习交流，转载请注明出处。").into();
                record.to_string()
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    let input = input.to_str().unwrap();
    let run = |out: &str, failpoint: Option<&str>| {
        let args =
            ["-i", input, "-o", out, "-w", "2", "--paragraphs", "--set", "paragraphs.min_chars=10"];
        wait(command(dir.path(), &args, failpoint), Duration::from_secs(300))
    };
    succeeds(&run("clean", None));
    let clean = dir.path().join("clean");
    let left_out = summary(&clean)["paragraphs"]["paragraphs_left_out"].as_u64().unwrap();
    assert!(left_out > 100, "every kept poem but the first repeats the notice: {left_out}");
    let killed = run("out", Some("work.unit_committed.4=abort"));
    assert!(!killed.status.success(), "the run did not stop");
    succeeds(&run("out", None));
    let out = dir.path().join("out");
    assert!(work(&out).1 >= 4, "the kept units are replayed");
    decided_alike(&out, &clean, "paragraphs");
    assert_eq!(repeated(&out), repeated(&clean));
    assert_eq!(summary(&out)["paragraphs"], summary(&clean)["paragraphs"]);
}

#[test]
fn a_unit_whose_input_changed_or_left_half_written_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    // A unit half written when the process stopped: never replayed, removed by the rerun.
    let killed = dedup(dir.path(), &input, "out", Some("work.unit_unfinished.3=abort"));
    assert!(!killed.status.success());
    let out = dir.path().join("out");
    let (committed, unfinished) = units(&out);
    // The other worker may commit a unit or two while the process stops.
    assert!(committed < FILES && unfinished >= 1, "{committed} {unfinished}");
    // Every unit kept, then one input file changed (a record appended).
    let killed = dedup(dir.path(), &input, "out", Some("after-reading-and-signing=abort"));
    assert!(!killed.status.success());
    assert_eq!(units(&out), (FILES, 0), "the rerun kept the rest and left nothing half written");
    let changed = input.join("part-03.jsonl");
    let mut text = std::fs::read_to_string(&changed).unwrap();
    text.push_str(
        "{\"id\":\"appended\",\"text\":\"床前明月光，疑是地上霜。举头望明月，低头思故乡。\"}\n",
    );
    std::fs::write(&changed, text).unwrap();
    succeeds(&dedup(dir.path(), &input, "out", None));
    let (read, reused, _) = work(&out);
    assert_eq!((read, reused), (1, FILES as u64 - 1), "only the changed file is read again");
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    decided_alike(&out, &clean, "rerun");
}

/// Both processes of a two-process run of `input` into `out` (one worker each), process 1
/// with `failpoint` armed.
fn two_processes(dir: &Path, input: &Path, out: &Path, failpoint: Option<&str>) -> Ran {
    let args = ["-i", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
    two_processes_with(dir, &args, failpoint)
}

/// Both processes of a two-process run with `args` (one worker each), process 1 with
/// `failpoint` armed.
fn two_processes_with(dir: &Path, args: &[&str], failpoint: Option<&str>) -> Ran {
    let hosts = hostfile(dir, 2);
    let process = |p: usize| {
        let p_text = p.to_string();
        let mut cmd = command(dir, args, if p == 1 { failpoint } else { None });
        cmd.args(["-w", "1", "-n", "2", "-p", &p_text]);
        cmd.arg("--hostfile").arg(&hosts).args(["--connect-timeout", "60"]);
        std::thread::spawn(move || wait(cmd, Duration::from_secs(300)))
    };
    let (p1, p0) = (process(1), process(0));
    Ran([p0.join().unwrap(), p1.join().unwrap()])
}

/// What the two processes of a run did: how each ended and what it said, which a failed
/// assertion shows.
struct Ran([Output; 2]);

impl Ran {
    /// Whether each process succeeded.
    fn succeeded(&self) -> [bool; 2] {
        [self.0[0].status.success(), self.0[1].status.success()]
    }
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (p, output) in self.0.iter().enumerate() {
            let said = String::from_utf8_lossy(&output.stderr);
            writeln!(f, "process {p}: {}; it said:\n{said}", output.status)?;
        }
        Ok(())
    }
}

#[test]
fn a_two_process_run_killed_in_one_process_resumes_from_both_processes_units() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    for (i, failpoint) in
        ["work.unit_committed.3=abort", "after-verifying=abort"].into_iter().enumerate()
    {
        let out = dir.path().join(format!("out-{i}"));
        let ran = two_processes(dir.path(), &input, &out, Some(failpoint));
        assert_eq!(ran.succeeded(), [false, false], "{failpoint}: both processes fail\n{ran}");
        let (committed, _) = units(&out);
        assert!(committed >= 3, "{failpoint}: {committed} units");
        let rerun = two_processes(dir.path(), &input, &out, None);
        assert_eq!(rerun.succeeded(), [true, true], "{failpoint}\n{rerun}");
        let (read, reused, _) = work(&out);
        assert_eq!((read, reused), ((FILES - committed) as u64, committed as u64), "{failpoint}");
        decided_alike(&out, &clean, failpoint);
    }
}

/// Process 0 prepares the output (removing what killed runs left half written in the work
/// area) while the others wait for it at their first pass: a process that ran ahead wrote
/// units meanwhile, and lost the one being written, failing the flaky test above about one
/// time in ten on a loaded machine (its failpoint at the third unit was never reached).
#[test]
fn no_process_starts_a_pass_before_process_0_has_prepared_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let (out, go) = (dir.path().join("out"), dir.path().join("go"));
    let hosts = hostfile(dir.path(), 2);
    let held = format!("output-locked=wait:{}", go.display());
    let process = |p: usize| {
        let args = ["-i", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
        let mut cmd = command(dir.path(), &args, (p == 0).then_some(held.as_str()));
        cmd.args(["-w", "1", "-n", "2", "-p", &p.to_string()]);
        cmd.arg("--hostfile").arg(&hosts).args(["--connect-timeout", "60"]);
        std::thread::spawn(move || wait(cmd, Duration::from_secs(300)))
    };
    let (p1, p0) = (process(1), process(0));
    // Process 0 holds the output's lock and waits; process 1 has had time to read.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join(".lock").exists() {
        assert!(Instant::now() < deadline, "process 0 never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(2));
    let written = std::fs::read_dir(out.join("_work/units")).map_or(0, Iterator::count);
    std::fs::write(&go, "").unwrap();
    let ran = Ran([p0.join().unwrap(), p1.join().unwrap()]);
    assert_eq!(ran.succeeded(), [true, true], "{ran}");
    assert_eq!(written, 0, "process 1 wrote units before process 0 prepared the output");
    decided_alike(&out, &dir.path().join("clean"), "held");
}

#[test]
fn an_index_run_resumes_as_a_plain_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    let run = |out: &str, index: &str, failpoint: Option<&str>| {
        let input = input.to_str().unwrap();
        let args = ["-i", input, "-o", out, "-w", "2", "--index", index, "--run-name", "week"];
        wait(command(dir.path(), &args, failpoint), Duration::from_secs(300))
    };
    succeeds(&run("clean", "index-clean", None));
    assert!(!run("out", "index", Some("after-reading-and-signing=abort")).status.success());
    succeeds(&run("out", "index", None));
    let (clean, out) = (dir.path().join("clean"), dir.path().join("out"));
    assert_eq!(work(&out), (0, FILES as u64, 0), "every unit replayed");
    assert_eq!(results(&out), results(&clean));
    assert_eq!(summary(&out)["index"]["stats"], summary(&clean)["index"]["stats"]);
}

/// A damaged unit (cut short, or with bits flipped, which a reader of its frames alone
/// would replay as other data) fails its checksum: the rerun warns naming it, removes it,
/// reads its file again and decides as a clean run, at once. Before checksums, a cut unit
/// failed the rerun, and flipped bits were replayed without a word.
#[test]
fn a_damaged_unit_is_read_again_from_its_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 2] = [
        ("cut", |bytes| bytes.truncate(bytes.len() / 2)),
        ("flipped", |bytes| {
            let middle = bytes.len() / 2;
            for byte in &mut bytes[middle..middle + 8] {
                *byte ^= 1;
            }
        }),
    ];
    for (what, damage) in damages {
        let name = format!("out-{what}");
        let killed = dedup(dir.path(), &input, &name, Some("after-reading-and-signing=abort"));
        assert!(!killed.status.success());
        let out = dir.path().join(&name);
        let mut units: Vec<PathBuf> = std::fs::read_dir(out.join("_work/units"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "unit"))
            .collect();
        units.sort();
        assert_eq!(units.len(), FILES);
        let damaged = &units[0];
        let mut bytes = std::fs::read(damaged).unwrap();
        damage(&mut bytes);
        std::fs::write(damaged, &bytes).unwrap();
        let rerun = dedup(dir.path(), &input, &name, None);
        succeeds(&rerun);
        let said = String::from_utf8_lossy(&rerun.stderr);
        let unit = damaged.file_name().unwrap().to_str().unwrap();
        assert!(said.contains(unit) && said.contains("damaged"), "{what}: {said}");
        let (read, reused, _) = work(&out);
        assert_eq!((read, reused), (1, FILES as u64 - 1), "{what}");
        decided_alike(&out, &clean, what);
    }
}

/// The corpus passes' kept state of a web run with one bit flipped is not trusted: the
/// rerun warns, learns again, and decides as a clean run (before its checksum, it kept
/// pages a clean run removes, and found more pairs).
#[test]
fn damaged_corpus_statistics_are_learned_again() {
    let dir = tempfile::tempdir().unwrap();
    succeeds(&web_dedup(dir.path(), "clean", None));
    let killed = web_dedup(dir.path(), "out", Some("after-reading-and-signing=abort"));
    assert!(!killed.status.success());
    let out = dir.path().join("out");
    let learned: Vec<PathBuf> = std::fs::read_dir(out.join("_work"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("learned-"))
        .collect();
    assert_eq!(learned.len(), 1, "{learned:?}");
    let mut bytes = std::fs::read(&learned[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&learned[0], &bytes).unwrap();
    let rerun = web_dedup(dir.path(), "out", None);
    succeeds(&rerun);
    let said = String::from_utf8_lossy(&rerun.stderr);
    assert!(said.contains("damaged") && said.contains("checksum"), "{said}");
    decided_alike(&out, &dir.path().join("clean"), "learned again");
}

/// `dedup` of the bundled web pages (a templated site, a crawl's WET file, web archives:
/// nine files, so each of two workers reads whole files) into `out`, `failpoint` armed.
fn web_dedup(dir: &Path, out: &str, failpoint: Option<&str>) -> Output {
    wait(web_dedup_command(dir, out, failpoint), Duration::from_secs(300))
}

fn web_dedup_command(dir: &Path, out: &str, failpoint: Option<&str>) -> Command {
    let mut cmd = command(dir, &["-o", out, "-w", "2"], failpoint);
    for folder in ["web-templated", "crawlset", "warc"] {
        cmd.arg("-i").arg(repo().join("data-samples").join(folder));
    }
    cmd
}

#[test]
fn a_web_run_resumes_without_learning_its_templates_again() {
    let dir = tempfile::tempdir().unwrap();
    succeeds(&web_dedup(dir.path(), "clean", None));
    let clean = dir.path().join("clean");
    assert_eq!(summary(&clean)["work_area"]["corpus_statistics_reused"], 0);
    // While reading (the rest is read again, its pages stripped of the kept templates),
    // and after reading (nothing is read again).
    for (i, failpoint) in
        ["work.unit_committed.2=abort", "after-reading-and-signing=abort"].into_iter().enumerate()
    {
        let out = format!("out-{i}");
        assert!(!web_dedup(dir.path(), &out, Some(failpoint)).status.success(), "{failpoint}");
        succeeds(&web_dedup(dir.path(), &out, None));
        let out = dir.path().join(out);
        let (rerun, first) = (summary(&out), summary(&clean));
        assert_eq!(rerun["work_area"]["corpus_statistics_reused"], 1, "{failpoint}");
        assert!(rerun["work_area"]["units_reused"].as_u64().unwrap() >= 2, "{failpoint}");
        assert_eq!(results(&out), results(&clean), "{failpoint}: outputs differ");
        for key in ["counts", "boilerplate", "input_bytes"] {
            assert_eq!(rerun[key], first[key], "{failpoint}: {key} differs");
        }
        assert_eq!(
            std::fs::read(out.join("boilerplate.bin")).unwrap(),
            std::fs::read(clean.join("boilerplate.bin")).unwrap(),
            "{failpoint}: the templates written are the ones learned"
        );
    }
    // SimHash weighs pages by the corpus's document frequencies: kept and replayed too.
    let simhash = |out: &str, failpoint| {
        let mut cmd = web_dedup_command(dir.path(), out, failpoint);
        cmd.args(["--method", "simhash"]);
        wait(cmd, Duration::from_secs(300))
    };
    succeeds(&simhash("clean-simhash", None));
    assert!(!simhash("out-simhash", Some("work.unit_committed.3=abort")).status.success());
    succeeds(&simhash("out-simhash", None));
    let (out, clean) = (dir.path().join("out-simhash"), dir.path().join("clean-simhash"));
    assert_eq!(summary(&out)["work_area"]["corpus_statistics_reused"], 1);
    decided_alike(&out, &clean, "SimHash");
}

#[test]
fn an_index_web_run_resumes_without_its_corpus_passes_and_commits_the_same_generation() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &str, index: &str, method: &str, failpoint: Option<&str>| {
        let mut cmd = web_dedup_command(dir.path(), out, failpoint);
        cmd.args(["--index", index, "--run-name", "week", "--method", method]);
        wait(cmd, Duration::from_secs(300))
    };
    // An index whose first generation holds pages of the same site (its template sample
    // and document frequencies count in what the run learns).
    let earlier_week = |out: &str, index: &str, method: &str| {
        let mut cmd = command(dir.path(), &["-o", out, "-w", "2"], None);
        cmd.arg("-i").arg(repo().join("data-samples/web-templated/pages.warc.gz"));
        cmd.args(["--index", index, "--run-name", "earlier", "--method", method]);
        succeeds(&wait(cmd, Duration::from_secs(300)));
    };
    // Every file of the second generation's folder (its template sample, document
    // frequencies, docs and keys), by path in the folder.
    let generation = |index: &str| {
        let index = dir.path().join(index);
        let mut folders: Vec<PathBuf> = std::fs::read_dir(&index)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("gen-000002"))
            .collect();
        assert_eq!(folders.len(), 1, "{folders:?}");
        let folder = folders.pop().unwrap();
        let mut files = Vec::new();
        let mut dirs = vec![folder.clone()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()) {
                if entry.is_dir() {
                    dirs.push(entry);
                } else {
                    let name = entry.strip_prefix(&folder).unwrap().display().to_string();
                    files.push((name, std::fs::read(&entry).unwrap()));
                }
            }
        }
        files.sort();
        assert!(files.iter().any(|(name, _)| name.starts_with("templates/part-")));
        files
    };
    let templates = |index: &str| {
        let mut files = generation(index);
        files.retain(|(name, _)| name.starts_with("templates/"));
        files
    };
    // MinHash learns templates; SimHash learns templates and weighs by the corpus's
    // document frequencies, which its generation keeps too. Killed after the passes (the
    // process dies: its generation's folder stays), then failing at the commit (the run
    // cleans up after itself).
    for (method, failpoint) in [
        ("minhash", "after-reading-and-signing=abort"),
        ("simhash", "work.unit_committed.3=abort"),
        ("minhash", "parts-written=error"),
    ] {
        let case = format!("{method} {failpoint}");
        let (clean, out) = (format!("clean-{method}"), format!("out-{method}"));
        let (clean_index, index) = (format!("{clean}-index"), format!("{out}-index"));
        if !dir.path().join(&clean).exists() {
            earlier_week(&format!("{clean}-earlier"), &clean_index, method);
            succeeds(&run(&clean, &clean_index, method, None));
        }
        let _ = std::fs::remove_dir_all(dir.path().join(&out));
        let _ = std::fs::remove_dir_all(dir.path().join(&index));
        earlier_week(&format!("{out}-earlier"), &index, method);
        assert!(!run(&out, &index, method, Some(failpoint)).status.success(), "{case}");
        succeeds(&run(&out, &index, method, None));
        let (out, clean) = (dir.path().join(out), dir.path().join(clean));
        let (rerun, first) = (summary(&out), summary(&clean));
        assert_eq!(rerun["work_area"]["corpus_statistics_reused"], 1, "{case}");
        decided_alike(&out, &clean, &case);
        let mut stats = rerun["index"].clone();
        stats["dir"] = first["index"]["dir"].clone();
        assert_eq!(stats, first["index"], "{case}: the index's figures differ");
        assert_eq!(rerun["boilerplate"], first["boilerplate"], "{case}: boilerplate differs");
        let manifest = |index: &str| {
            let path = dir.path().join(index).join("index.json");
            let mut m: serde_json::Value =
                serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            for g in m["generations"].as_array_mut().unwrap() {
                g.as_object_mut()
                    .unwrap()
                    .retain(|k, _| !["created_unix", "output"].contains(&k.as_str()));
            }
            m["generations"].clone()
        };
        assert_eq!(manifest(&index), manifest(&clean_index), "{case}: generations differ");
        let (files, clean_files) = (generation(&index), generation(&clean_index));
        let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
            files.iter().map(|(name, _)| name.clone()).collect()
        };
        assert_eq!(names(&files), names(&clean_files), "{case}: the generations' files differ");
        assert_eq!(files, clean_files, "{case}: the generations' bytes differ");
    }
    // Two processes, one killed after reading (the other fails and cleans up, keeping the
    // sample): the rerun replays the passes of both.
    earlier_week("two-earlier", "two-index", "minhash");
    let web: Vec<String> = ["web-templated", "crawlset", "warc"]
        .iter()
        .map(|f| repo().join("data-samples").join(f).to_string_lossy().into_owned())
        .collect();
    let two = dir.path().join("two");
    let index = dir.path().join("two-index");
    let mut args = vec!["-o", two.to_str().unwrap(), "--index", index.to_str().unwrap()];
    args.extend(["--run-name", "week"]);
    for folder in &web {
        args.extend(["-i", folder.as_str()]);
    }
    let killed = two_processes_with(dir.path(), &args, Some("after-reading-and-signing=abort"));
    assert_eq!(killed.succeeded(), [false, false], "{killed}");
    let rerun = two_processes_with(dir.path(), &args, None);
    assert_eq!(rerun.succeeded(), [true, true], "{rerun}");
    assert_eq!(summary(&two)["work_area"]["corpus_statistics_reused"], 1);
    decided_alike(&two, &dir.path().join("clean-minhash"), "two processes");
    assert_eq!(templates("two-index"), templates("clean-minhash-index"));
    // A part of the sample gone (as when a process died before writing it): the rerun
    // learns again, and writes the whole sample anew.
    earlier_week("gone-earlier", "gone-index", "minhash");
    assert!(
        !run("gone", "gone-index", "minhash", Some("after-reading-and-signing=abort"))
            .status
            .success()
    );
    let part = templates("gone-index").pop().unwrap().0;
    let folder = std::fs::read_dir(dir.path().join("gone-index"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("gen-000002"))
        .unwrap();
    std::fs::remove_file(folder.join(part)).unwrap();
    succeeds(&run("gone", "gone-index", "minhash", None));
    let gone = dir.path().join("gone");
    assert_eq!(summary(&gone)["work_area"]["corpus_statistics_reused"], 0);
    decided_alike(&gone, &dir.path().join("clean-minhash"), "a part gone");
    assert_eq!(generation("gone-index"), generation("clean-minhash-index"));
    // A run with another record limit (so another kept state) killed after writing its
    // own sample into the same folder: the first settings' rerun does not take that sample
    // for its own, and learns again.
    earlier_week("other-earlier", "other-index", "minhash");
    let killed = Some("after-reading-and-signing=abort");
    assert!(!run("other", "other-index", "minhash", killed).status.success());
    let mut limited = web_dedup_command(dir.path(), "other", killed);
    limited.args(["--index", "other-index", "--run-name", "week", "--memory-budget", "256M"]);
    assert!(!wait(limited, Duration::from_secs(300)).status.success());
    succeeds(&run("other", "other-index", "minhash", None));
    let other = dir.path().join("other");
    assert_eq!(summary(&other)["work_area"]["corpus_statistics_reused"], 0);
    decided_alike(&other, &dir.path().join("clean-minhash"), "another record limit");
    assert_eq!(generation("other-index"), generation("clean-minhash-index"));
    // Another run committed to the index meanwhile: the kept state was learned from the
    // index as it was, so the rerun learns again.
    earlier_week("changed-earlier", "changed-index", "minhash");
    assert!(!run("changed", "changed-index", "minhash", killed).status.success());
    let mut between = command(dir.path(), &["-o", "between", "-w", "2"], None);
    between.arg("-i").arg(repo().join("data-samples/warc"));
    between.args(["--index", "changed-index", "--run-name", "between"]);
    succeeds(&wait(between, Duration::from_secs(300)));
    succeeds(&run("changed", "changed-index", "minhash", None));
    assert_eq!(summary(&dir.path().join("changed"))["work_area"]["corpus_statistics_reused"], 0);
    // The next week's batch decides against either index alike.
    let next = |out: &str, index: &str| {
        let mut cmd = command(dir.path(), &["-o", out, "-w", "2"], None);
        cmd.arg("-i").arg(repo().join("data-samples/web-templated"));
        cmd.args(["--index", index, "--run-name", "next"]);
        succeeds(&wait(cmd, Duration::from_secs(300)));
        results(&dir.path().join(out))
    };
    assert_eq!(next("next", "out-minhash-index"), next("next-clean", "clean-minhash-index"));
}

/// `neardup sign` of `input` into `out` (two threads) with `args` saying which task it is,
/// `failpoint` armed.
fn sign(dir: &Path, input: &Path, out: &str, args: &[&str], failpoint: Option<&str>) -> Command {
    let mut cmd =
        subcommand(dir, "sign", &["-i", input.to_str().unwrap(), "-o", out, "-w", "2"], failpoint);
    cmd.args(args)
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("SLURM_ARRAY_TASK_MIN")
        .env_remove("SLURM_ARRAY_TASK_COUNT");
    cmd
}

/// The report task `task` of `tasks` wrote into `out`'s work area.
fn task_report(out: &Path, task: usize, tasks: usize) -> serde_json::Value {
    let path = out.join(format!("_work/tasks/task-{task:05}-of-{tasks:05}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn signing_tasks_then_one_dedup_give_the_outputs_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    let out = dir.path().join("out");
    // Task 0 of 3, by flag: files 0, 3, 6, 9.
    succeeds(&wait(
        sign(dir.path(), &input, "out", &["--task", "0", "--tasks", "3"], None),
        Duration::from_secs(300),
    ));
    // Task 1, as a Kubernetes Indexed Job names it, killed after its first unit; rerun, it
    // signs only its other two files.
    let k8s = |failpoint| {
        let mut cmd = sign(dir.path(), &input, "out", &["--tasks", "3"], failpoint);
        cmd.env("JOB_COMPLETION_INDEX", "1");
        wait(cmd, Duration::from_secs(300))
    };
    let of_task_0 = unit_names(&out);
    assert!(!k8s(Some("work.unit_committed.1=abort")).status.success());
    assert!(!out.join("_work/tasks/task-00001-of-00003.json").exists(), "no report before the end");
    // Task 0's four units, and what task 1 committed before it stopped (its other thread
    // may commit a second unit meanwhile).
    let committed = units(&out).0 as u64 - 4;
    assert!((1..=2).contains(&committed), "{committed} units");
    // What a process killed while writing a unit leaves (the other thread may have left one
    // too): the task's rerun clears it.
    let of_task_1 = unit_names(&out).into_iter().find(|n| !of_task_0.contains(n)).unwrap();
    std::fs::write(out.join(format!("_work/units/.{of_task_1}.99999-0.inprogress")), b"torn")
        .unwrap();
    succeeds(&k8s(None));
    assert_eq!(units(&out), (7, 0), "the killed runs' half-written units are cleared");
    let report = task_report(&out, 1, 3);
    let n = |k: &str| report[k].as_u64().unwrap();
    assert_eq!((n("files"), n("units_reused"), n("units_written")), (3, committed, 3 - committed));
    // Task 2, as the third task of a Slurm array numbered from 1.
    let mut slurm = sign(dir.path(), &input, "out", &[], None);
    slurm
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "3");
    succeeds(&wait(slurm, Duration::from_secs(300)));
    assert_eq!(task_report(&out, 2, 3)["units_written"], 3);
    assert_eq!(units(&out), (FILES, 0));
    // The dedup run reads nothing: every file was signed by a task.
    succeeds(&dedup(dir.path(), &input, "out", None));
    assert_eq!(work(&out), (0, FILES as u64, 0), "every unit replayed");
    assert_eq!(summary(&out)["work_area"]["signed_tasks"], 3);
    decided_alike(&out, &clean, "tasks then dedup");
    assert!(!out.join("_work").exists(), "the work area goes with _SUCCESS");
}

#[test]
fn a_dedup_after_tasks_that_did_not_all_finish_or_signed_otherwise_reads_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    let dedup_said = |out: &str| {
        let cmd = command(
            dir.path(),
            &["-i", input.to_str().unwrap(), "-o", out, "-w", "2", "--memory-budget", "2G"],
            None,
        );
        let done = wait(cmd, Duration::from_secs(300));
        succeeds(&done);
        String::from_utf8_lossy(&done.stderr).into_owned()
    };
    // Tasks 0 and 2 of 3 finished; task 1's three files are read by the dedup run.
    for task in ["0", "2"] {
        succeeds(&wait(
            sign(dir.path(), &input, "part", &["--task", task, "--tasks", "3"], None),
            Duration::from_secs(300),
        ));
    }
    let said = dedup_said("part");
    assert!(said.contains("task(s) 1 of 3 did not finish"), "{said}");
    let part = dir.path().join("part");
    assert_eq!(work(&part), (3, 7, 3));
    assert_eq!(results(&part), results(&clean));
    // Signed with a smaller record size limit (a 256 MiB budget): none is used, and the
    // warning says why.
    let small = ["--task", "0", "--tasks", "1", "--memory-budget", "256M"];
    succeeds(&wait(sign(dir.path(), &input, "other", &small, None), Duration::from_secs(300)));
    let said = dedup_said("other");
    assert!(said.contains("record size limit of 4194304 bytes"), "{said}");
    let other = dir.path().join("other");
    assert_eq!(work(&other), (FILES as u64, 0, FILES as u64));
    assert_eq!(results(&other), results(&clean));
}

#[test]
fn units_of_a_task_that_never_reported_are_replayed_and_a_path_spelled_otherwise_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    // Four workers for ten files would read byte ranges of each; the units of a task that
    // started are whole files, so the run reads whole files, even with no report.
    let run = |out: &str, workers: &str| {
        let args = ["-i", input.to_str().unwrap(), "-o", out, "-w", workers];
        let done = wait(command(dir.path(), &args, None), Duration::from_secs(300));
        succeeds(&done);
        String::from_utf8_lossy(&done.stderr).into_owned()
    };
    run("clean", "4");
    let task = ["--task", "0", "--tasks", "1"];
    assert!(
        !wait(
            sign(dir.path(), &input, "out", &task, Some("work.unit_committed.2=abort")),
            Duration::from_secs(300)
        )
        .status
        .success()
    );
    let committed = units(&dir.path().join("out")).0 as u64;
    assert!(committed >= 2, "{committed}");
    let said = run("out", "4");
    assert!(said.contains("task(s) 0 of 1 did not finish"), "{said}");
    let out = dir.path().join("out");
    assert_eq!(work(&out).1, committed, "the units committed are replayed");
    assert_eq!(results(&out), results(&dir.path().join("clean")));
    // Ids made from paths spell the input as given: units signed from `./in` are not
    // replayed by a run given `in`, which writes its own spelling.
    let ids = |input: &str, out: &str, name: &str| {
        let args = ["-i", input, "-o", out, "-w", "2", "--id-field", ""];
        let mut cmd = subcommand(dir.path(), name, &args, None);
        if name == "sign" {
            cmd.args(["--task", "0", "--tasks", "1"]);
        }
        succeeds(&wait(cmd, Duration::from_secs(300)));
    };
    ids("./in", "spelled", "sign");
    ids("in", "spelled", "dedup");
    ids("in", "spelled-clean", "dedup");
    let spelled = dir.path().join("spelled");
    assert_eq!(work(&spelled), (FILES as u64, 0, FILES as u64), "nothing replayed");
    assert_eq!(results(&spelled), results(&dir.path().join("spelled-clean")));
}

#[test]
fn signing_in_tasks_refuses_jobs_that_learn_from_the_whole_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let pages = repo().join("data-samples/web-templated");
    let refused = wait(
        sign(dir.path(), &pages, "out", &["--task", "0", "--tasks", "2"], None),
        Duration::from_secs(60),
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("boilerplate.enabled"), "{said}");
    assert!(!dir.path().join("out/_work").exists(), "nothing is written");
    let beyond = wait(
        sign(dir.path(), &inputs(dir.path()), "out", &["--task", "3", "--tasks", "3"], None),
        Duration::from_secs(60),
    );
    assert_eq!(beyond.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&beyond.stderr).contains("task 3 is not below the 3 tasks"));
}

#[test]
fn of_two_reruns_at_once_one_is_refused_and_the_other_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let killed = dedup(dir.path(), &input, "out", Some("work.unit_committed.4=abort"));
    assert!(!killed.status.success());
    let out = dir.path().join("out");
    let (committed, _) = units(&out);
    // The first rerun holds the output, stopped once it has read and signed.
    let go = dir.path().join("go");
    let args = ["-i", input.to_str().unwrap(), "-o", "out", "-w", "2"];
    let mut first = command(
        dir.path(),
        &args,
        Some(&format!("after-reading-and-signing=wait:{}", go.display())),
    );
    let mut first = first.spawn().unwrap();
    let (said, rest) = support::read_until(&mut first, "waiting for");
    let second = dedup(dir.path(), &input, "out", None);
    let refused = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{refused}");
    assert!(refused.contains("the run did not start"), "{refused}");
    std::fs::write(&go, b"").unwrap();
    let status = first.wait().unwrap();
    assert!(status.success(), "{said}{}", rest.join().unwrap());
    let (read, reused, _) = work(&out);
    assert_eq!((read, reused), ((FILES - committed) as u64, committed as u64));
    assert_eq!(results(&out), results(&dir.path().join("clean")));
}

/// Every file below `dir` (through no link) with its size, sorted.
#[cfg(unix)]
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(folder) = todo.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                out.push((entry.path().strip_prefix(dir).unwrap().to_path_buf(), meta.len()));
            }
        }
    }
    out.sort();
    out
}

/// A work area, or its units folder, that is a symbolic link (to a copy of a killed run's
/// units) is not written through: the rerun removes the link, reads every file again,
/// leaves what the link pointed to as it was, and decides as a clean run. Before, it wrote
/// its units into the link's target and left them there after `_SUCCESS`.
#[cfg(unix)]
#[test]
fn a_work_area_that_is_a_symbolic_link_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(dir.path());
    succeeds(&dedup(dir.path(), &input, "clean", None));
    let clean = dir.path().join("clean");
    for (i, linked) in ["_work", "_work/units"].into_iter().enumerate() {
        let name = format!("out-{i}");
        let killed = dedup(dir.path(), &input, &name, Some("after-reading-and-signing=abort"));
        assert!(!killed.status.success());
        let out = dir.path().join(&name);
        let elsewhere = dir.path().join(format!("elsewhere-{i}"));
        std::fs::rename(out.join(linked), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join(linked)).unwrap();
        let before = listing(&elsewhere);
        assert!(!before.is_empty());
        let rerun = dedup(dir.path(), &input, &name, None);
        succeeds(&rerun);
        let said = String::from_utf8_lossy(&rerun.stderr);
        assert!(said.contains("symbolic link"), "{linked}: {said}");
        assert_eq!(listing(&elsewhere), before, "{linked}: the link's target is untouched");
        assert!(std::fs::symlink_metadata(out.join("_work")).is_err(), "{linked}: removed");
        assert_eq!(work(&out).1, 0, "{linked}: nothing replayed through the link");
        decided_alike(&out, &clean, linked);
    }
}
