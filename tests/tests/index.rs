//! The index commands from the command line: runs add generations, `index compact` merges
//! them without changing a later run's decisions, and `index forget` takes documents out.

use neardup_cli::Outcome;
use neardup_e2e::{dedup, neardup, render_documents, repo};
use neardup_io::{Decision, read_documents};

#[test]
fn compacting_between_runs_changes_no_decision() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |name: &str| {
        let out = dir.path().join(name);
        dedup(&input, &out, &["--index", index.to_str().unwrap(), "--run-name", name]).unwrap();
        out
    };
    let index_cmd = |args: &[&str]| {
        let mut all = vec!["index", args[0], "--index", index.to_str().unwrap()];
        all.extend_from_slice(&args[1..]);
        neardup(&all)
    };
    let first = run("r1");
    // The same input again: every accepted document is a copy of one the first run
    // indexed, including one too short to sign (indexed by its content).
    let second = run("r2");
    let docs = read_documents(&second.join("documents")).unwrap();
    let accepted: Vec<_> = docs.iter().filter(|d| d.decision != Decision::Reject).collect();
    assert!(!accepted.is_empty());
    assert!(accepted.iter().all(|d| d.decision == Decision::Remove), "all copies of r1");
    assert!(accepted.iter().all(|d| d.duplicate_of_run.as_deref() == Some("r1")));
    assert!(accepted.iter().any(|d| d.id.as_deref() == Some("short")));

    assert!(matches!(index_cmd(&["compact"]).unwrap(), Outcome::Index));
    assert!(matches!(index_cmd(&["show"]).unwrap(), Outcome::Index));
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    assert_eq!((manifest.generations.len(), manifest.segments().len()), (2, 1));
    let third = run("r3");
    assert_eq!(render_documents(&third), render_documents(&second));

    // Forgetting every document the first run kept lets their copies in again.
    let kept: Vec<String> = read_documents(&first.join("documents"))
        .unwrap()
        .into_iter()
        .filter(|d| d.decision == Decision::Keep)
        .filter_map(|d| d.id)
        .collect();
    let ids = dir.path().join("ids.txt");
    std::fs::write(&ids, kept.join("\n")).unwrap();
    index_cmd(&["forget", "--ids", ids.to_str().unwrap()]).unwrap();
    let fourth = run("r4");
    assert_eq!(render_documents(&fourth), render_documents(&first));
}

#[test]
fn index_commands_name_a_folder_without_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    for command in ["show", "compact"] {
        let e = neardup(&["index", command, "--index", path]).unwrap_err();
        let message = format!("{e:#}");
        assert!(message.contains(path), "{command}: {message}");
    }
}

/// A job file's `index.dir` is used like `--index`, which overrides it; `--run-name` needs
/// one of them.
#[test]
fn a_job_file_names_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let from_file = dir.path().join("from-file");
    let job = dir.path().join("weekly.toml");
    std::fs::write(&job, format!("[index]\ndir = {:?}\n", from_file.to_str().unwrap())).unwrap();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["--job", job.to_str().unwrap()];
        args.extend_from_slice(extra);
        dedup(&input, &dir.path().join(out), &args)
    };
    run("w1", &["--run-name", "w1"]).unwrap();
    let manifest = neardup_io::index::Manifest::load(&from_file).unwrap().unwrap();
    assert_eq!(manifest.generations[0].run, "w1");

    let flag = dir.path().join("from-flag");
    run("w2", &["--index", flag.to_str().unwrap()]).unwrap();
    let manifest = neardup_io::index::Manifest::load(&flag).unwrap().unwrap();
    assert_eq!(manifest.generations[0].run, "w2", "the output folder's name");
    assert_eq!(
        neardup_io::index::Manifest::load(&from_file).unwrap().unwrap().generations.len(),
        1
    );

    let e = dedup(&input, &dir.path().join("w3"), &["--run-name", "w3"]).unwrap_err();
    assert!(format!("{e:#}").contains("--run-name"), "{e:#}");
}

/// A run name is one run: running it again into the same output replaces its generation
/// (a scheduler's retry), while a name taken by another output, or by a run that later runs
/// were deduplicated against, is refused.
#[test]
fn a_run_name_is_one_run_that_a_retry_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |out: &str, name: &str| {
        dedup(
            &input,
            &dir.path().join(out),
            &["--index", index.to_str().unwrap(), "--run-name", name],
        )
    };
    run("o1", "w1").unwrap();
    let first = render_documents(&dir.path().join("o1"));
    let folders = || {
        let mut names: Vec<String> = std::fs::read_dir(&index)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("gen-"))
            .collect();
        names.sort();
        names
    };
    let before = folders();
    // The same run again: not a copy of itself, and still one generation.
    run("o1", "w1").unwrap();
    assert_eq!(render_documents(&dir.path().join("o1")), first, "not matched against itself");
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    assert_eq!(manifest.generations.len(), 1);
    assert_eq!((manifest.generations[0].number, manifest.generations[0].run.as_str()), (1, "w1"));
    assert_eq!(folders().len(), 1, "the replaced folder is gone");
    assert_ne!(folders(), before, "a new folder, so the committed one stayed until the commit");

    let e = format!("{:#}", run("elsewhere", "w1").unwrap_err());
    assert!(e.contains("run \"w1\" is already in the index") && e.contains("o1"), "{e}");
    run("o2", "w2").unwrap();
    let e = format!("{:#}", run("o1", "w1").unwrap_err());
    assert!(e.contains("later runs were deduplicated against it"), "{e}");
}
