//! The command as scripts use it: `--json` output, and readers that stop early.

use std::ffi::{OsStr, OsString};
use std::process::Stdio;

mod support;
use support::{neardup, repo};

fn poems() -> std::path::PathBuf {
    repo().join("data-samples/zh-tang-poems")
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

/// Every `[job file: KEY; default: VALUE]` in the help of `neardup`'s subcommands states the
/// job file's default for KEY (the value `JobSpec::default()` holds, or for a value
/// resolved from the inputs, the constants it is resolved from).
#[test]
fn help_text_defaults_are_the_job_files() {
    use clap::CommandFactory;
    let defaults = serde_json::to_value(neardup_job::JobSpec::default()).unwrap();
    let resolved = [
        (
            "simhash.max_distance",
            format!(
                "{}, or for web pages {} with TF-IDF weights and {} with term frequencies",
                neardup_job::MAX_DISTANCE,
                neardup_job::WEB_MAX_DISTANCE,
                neardup_job::WEB_TF_MAX_DISTANCE
            ),
        ),
        (
            "minhash.threshold",
            format!("{}, or {} for web pages", neardup_job::THRESHOLD, neardup_job::WEB_THRESHOLD),
        ),
        // Recorded only when on, so not in the defaults' JSON.
        ("paragraphs.enabled", neardup_job::ParagraphSpec::default().enabled.to_string()),
    ];
    let mut checked = 0;
    let cli = neardup_cli::Cli::command();
    for sub in cli.get_subcommands() {
        for arg in sub.get_arguments() {
            let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string());
            let Some(help) = help else { continue };
            let Some(start) = help.find("[job file: ") else { continue };
            let inner = &help[start + "[job file: ".len()..];
            let inner = &inner[..inner.rfind(']').expect("a closing bracket")];
            let Some((key, stated)) = inner.split_once("; default: ") else { continue };
            let name = format!("neardup {} --{}", sub.get_name(), arg.get_id());
            let expected = match resolved.iter().find(|(k, _)| *k == key) {
                Some((_, text)) => text.clone(),
                None => {
                    let value = key.split('.').fold(&defaults, |v, part| &v[part]);
                    assert!(!value.is_null(), "{name}: the job file has no default for {key}");
                    match value {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }
                }
            };
            assert_eq!(stated, expected, "{name}: help says the default of {key} is {stated}");
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} defaults found in the help text");
}

/// A worker count whose channels and buffers alone would outgrow the memory budget (they grow
/// with the square of the workers) is refused before anything is read or written, with what
/// would fit; `tune` refuses it too. Before the check, 1,000 workers starved the machine and
/// 100,000 aborted.
#[test]
fn more_workers_than_the_memory_budget_holds_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (workers, budget) in [("100000", None), ("256", Some("1G")), ("4000", Some("64G"))] {
        let mut command = neardup();
        command.args(["dedup", "-q", "-w", workers, "-i"]).arg(poems()).arg("-o").arg(&out);
        if let Some(budget) = budget {
            command.args(["--memory-budget", budget]);
        }
        let done = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "-w {workers}: {stderr}");
        assert!(stderr.contains(&format!("--workers {workers} needs about")), "{stderr}");
        assert!(stderr.contains("use at most"), "{stderr}");
        assert!(!out.exists(), "nothing is written");
    }
    let done = neardup()
        .args(["tune", "-w", "100000", "--truth"])
        .arg(poems().join("poems.jsonl.gz"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--workers 100000 needs about"), "{stderr}");
    // A count that fits runs.
    let done = neardup()
        .args(["dedup", "-q", "-w", "16", "--memory-budget", "1G", "-i"])
        .arg(poems())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
}

/// A budget below a mebibyte is named in bytes, not as "0 MiB".
#[test]
fn a_tiny_memory_budget_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, "{\"id\": \"a\", \"text\": \"one text\"}\n").unwrap();
    let done = neardup()
        .args(["dedup", "-q", "-w", "1", "--memory-budget", "1", "-i"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    assert!(stderr.contains("--memory-budget 1 B is below the 256.0 MiB"), "{stderr}");
}

/// A run with paragraph-level dedup against an index names the index's runs whose
/// paragraphs it cannot leave out: runs made without `--paragraphs`, and runs that kept
/// only longer paragraphs (a higher `paragraphs.min_chars`). A run whose minimum is at
/// least every earlier run's hears nothing: each paragraph it considers was kept.
#[test]
fn a_paragraph_run_names_the_index_runs_whose_paragraphs_it_cannot_leave_out() {
    let dir = tempfile::tempdir().unwrap();
    let (index, input) = (dir.path().join("index"), dir.path().join("docs.jsonl"));
    let text =
        "A paragraph long enough to count under every minimum that this test sets, kept once.";
    std::fs::write(&input, format!("{{\"id\":\"a\",\"text\":\"{text}\"}}\n")).unwrap();
    let run = |name: &str, extra: &[&str]| {
        let done = neardup()
            .args(["dedup", "-q", "-i"])
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join(name))
            .arg("--index")
            .arg(&index)
            .args(["--run-name", name])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        assert!(done.status.success(), "{name}: {stderr}");
        stderr
    };
    let min_chars = |n: u32| format!("paragraphs.min_chars={n}");
    let (at_60, at_40, at_80) = (min_chars(60), min_chars(40), min_chars(80));
    assert_eq!(run("plain", &[]), "");
    let stderr = run("sixty", &["--paragraphs", "--set", &at_60]);
    assert!(stderr.contains("kept no paragraphs") && stderr.contains("plain"), "{stderr}");
    assert!(!stderr.contains("min_chars"), "{stderr}");
    let stderr = run("forty", &["--paragraphs", "--set", &at_40]);
    assert!(stderr.contains("paragraphs.min_chars (40)"), "{stderr}");
    assert!(stderr.contains("sixty (60)") && !stderr.contains("forty ("), "{stderr}");
    let stderr = run("sixty-again", &["--paragraphs", "--set", &at_60]);
    assert!(!stderr.contains("min_chars"), "an equal minimum: {stderr}");
    let stderr = run("eighty", &["--paragraphs", "--set", &at_80]);
    assert!(!stderr.contains("min_chars"), "{stderr}");
}
