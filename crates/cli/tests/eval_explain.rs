//! `eval`, `tune` and `explain` on small runs of a few JSON Lines records, through the
//! binary: a record that repeats an id changes no score and is not read for the id's text,
//! undefined scores are said to be undefined (and are null in `--json`), and `explain`
//! says how the run relates two documents.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

/// Two texts with copies in the corpus, and two that stand alone.
const FOX: &str = "The quick brown fox jumps over the lazy dog near the river bank every \
                   morning at dawn, and then it runs home.";
const OIL: &str = "Oil prices rose on Tuesday as traders weighed supply cuts from producers; \
                   analysts expect further gains this week.";
const GARDEN: &str = "A completely different sentence about gardening, tomatoes and the best \
                      time of year to plant them in cold soil.";
const VOTE: &str = "Parliament debated the new transport budget late into the night before a \
                    narrow vote approved the rail plan.";

/// Runs `neardup ARGS` to its end (a minute at most).
fn neardup(args: &[&str]) -> Output {
    let mut cmd = support::neardup();
    cmd.args(args);
    support::run(cmd, Duration::from_secs(60))
}

/// Runs `neardup ARGS`, which must succeed, and returns what it printed.
fn printed(args: &[&str]) -> String {
    let done = neardup(args);
    assert!(done.status.success(), "{args:?}: {}", String::from_utf8_lossy(&done.stderr));
    String::from_utf8(done.stdout).unwrap()
}

/// Runs `neardup ARGS --json`, which must succeed, and parses what it printed.
fn printed_json(args: &[&str]) -> Value {
    let args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    serde_json::from_str(&printed(&args)).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Writes JSON Lines records to `dir/name`.
fn write_lines(dir: &Path, name: &str, records: &[Value]) -> PathBuf {
    let file = dir.join(name);
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

/// The labelled corpus, with `extra` records after it: a2 is a copy of a1 and a3 has a
/// word more ("fox"), b1 and b2 are copies ("oil"), c1 and d1 stand alone.
fn corpus(dir: &Path, name: &str, extra: &[Value]) -> PathBuf {
    let more = format!("{FOX} Really.");
    let records = [
        ("a1", FOX, "fox"),
        ("a2", FOX, "fox"),
        ("a3", more.as_str(), "fox"),
        ("b1", OIL, "oil"),
        ("b2", OIL, "oil"),
        ("c1", GARDEN, "garden"),
        ("d1", VOTE, "vote"),
    ];
    let mut lines: Vec<Value> = records
        .iter()
        .map(|(id, text, truth)| json!({"id": id, "text": text, "truth": truth}))
        .collect();
    lines.extend_from_slice(extra);
    write_lines(dir, name, &lines)
}

/// Deduplicates `input` into `dir/name` with one worker, which writes the rows of
/// documents/ in record order (a repeated id's row after the row of the record that owns
/// the id), and returns the output folder.
fn dedup(input: &Path, dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec!["dedup", "-q", "-w", "1", "-i", path(input), "-o", path(&out)];
    args.extend_from_slice(extra);
    printed(&args);
    out
}

/// A record that repeats an earlier record's id is rejected (`duplicate_id`) and says
/// nothing about the document the id names: eval scores the run as if the record were not
/// there, with cluster truth and with labelled pairs, and so does tune, whose truth is the
/// input itself (the repeat's label is not the id's label either).
#[test]
fn a_repeated_id_changes_no_score() {
    let dir = tempfile::tempdir().unwrap();
    // Another text and another label: taken for a1's, either would change the scores.
    let repeat = json!({"id": "a1", "text": OIL, "truth": "oil"});
    let clean = corpus(dir.path(), "clean.jsonl", &[]);
    let repeated = corpus(dir.path(), "repeated.jsonl", &[repeat]);
    let labels: Vec<Value> = ["a1", "a2", "a3", "b1", "b2", "c1", "d1"]
        .iter()
        .map(|id| json!({"id": id, "truth": &id[..1]}))
        .collect();
    let truth = write_lines(dir.path(), "truth.jsonl", &labels);
    let pairs = write_lines(
        dir.path(),
        "pairs.jsonl",
        &[
            json!({"id_a": "a1", "id_b": "a2"}),
            json!({"id_a": "a1", "id_b": "a3"}),
            json!({"id_a": "a1", "id_b": "b1", "duplicate": false}),
        ],
    );
    let scores = |input: &Path, name: &str| {
        let out = dedup(input, dir.path(), name, &[]);
        let run = path(&out);
        let by_clusters = printed_json(&["eval", "--truth", path(&truth), "--run", run]);
        let by_pairs = printed_json(&["eval", "--truth-pairs", path(&pairs), "--run", run]);
        (by_clusters, by_pairs, out)
    };
    let (clean_clusters, clean_pairs, _) = scores(&clean, "clean");
    let (clusters, labelled, out) = scores(&repeated, "repeated");
    let docs = neardup_io::read_documents(&out.join("documents")).unwrap();
    let rejected = docs.iter().filter(|d| d.reason == Some(neardup_io::Reason::DuplicateId));
    assert_eq!(rejected.map(|d| d.id.as_deref()).collect::<Vec<_>>(), [Some("a1")]);
    let counts = |r: &Value| {
        ["true_pairs", "predicted_pairs", "true_positives"].map(|k| r[k].as_u64().unwrap())
    };
    assert_eq!(counts(&clean_clusters), [4, 4, 4], "{clean_clusters:#}");
    assert_eq!(counts(&clean_pairs), [2, 2, 2], "{clean_pairs:#}");
    assert_eq!(clusters, clean_clusters, "cluster truth");
    assert_eq!(labelled, clean_pairs, "labelled pairs");

    let trials = |input: &Path| {
        let tried = printed_json(&["tune", "--truth", path(input), "--grid", "0.8", "-w", "1"]);
        let keys = ["precision", "recall", "f1"];
        tried.as_array().unwrap().iter().map(|t| keys.map(|k| t[k].clone())).collect::<Vec<_>>()
    };
    let clean_trials = trials(&clean);
    assert_eq!(clean_trials, [[json!(1.0), json!(1.0), json!(1.0)]]);
    assert_eq!(trials(&repeated), clean_trials);
}

/// explain reads the record that owns an id: when the run rejected that record, it says
/// so, rather than explain the text of a later record with the same id (a `duplicate_id`
/// reject).
#[test]
fn explain_reads_the_record_that_owns_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(
        dir.path(),
        "in.jsonl",
        &[json!({"id": "x"}), json!({"id": "y", "text": FOX}), json!({"id": "x", "text": FOX})],
    );
    let job = dir.path().join("job.toml");
    std::fs::write(&job, "[decision]\nmax_reject_ratio = 1.0\n").unwrap();
    let out = dedup(&input, dir.path(), "out", &["--job", path(&job)]);
    let done = neardup(&["explain", "--run", path(&out), "x", "y"]);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert_eq!(done.status.code(), Some(2), "explained x by its repeat's text: {stdout}");
    assert!(stderr.contains("rejected") && stderr.contains("missing_text"), "{stderr}");
    assert!(!stderr.contains("duplicate_id"), "{stderr}");
}

/// Whether a score's line says it is undefined, and why.
fn undefined(line: &str) -> bool {
    line.split_whitespace().nth(1) == Some("n/a") && line.ends_with(')')
}

/// Truth that labels no duplicate pair gives no recall and no F1, and precision only over
/// pairs the run predicts: eval says which scores are undefined and why (null in
/// `--json`), and still counts the labelled non-duplicates the run joins.
#[test]
fn eval_of_truth_without_duplicates_gives_only_defined_scores() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus(dir.path(), "in.jsonl", &[]);
    let out = dedup(&input, dir.path(), "out", &[]);
    let negatives = |name: &str, pairs: [(&str, &str); 2]| {
        let lines = pairs.map(|(a, b)| json!({"id_a": a, "id_b": b, "duplicate": false}));
        write_lines(dir.path(), name, &lines)
    };
    // None of these is joined by the run.
    let apart = negatives("apart.jsonl", [("a1", "c1"), ("b1", "d1")]);
    let args = ["eval", "--truth-pairs", path(&apart), "--run", path(&out)];
    let text = printed(&args);
    for score in ["precision", "recall", "F1"] {
        let line = text.lines().find(|l| l.starts_with(score)).unwrap();
        assert!(undefined(line), "{score} is undefined, and says why: {text}");
    }
    assert!(!text.contains("1.0000"), "{text}");
    assert!(!text.contains("recall by feature Jaccard"), "no true pair to band: {text}");
    let report = printed_json(&args);
    for score in ["precision", "recall", "f1"] {
        assert!(report[score].is_null(), "{score}: {report:#}");
    }
    // The run joins a1 and a2, which this truth says differ: precision 0, one false
    // positive; recall and F1 stay undefined.
    let joined = negatives("joined.jsonl", [("a1", "a2"), ("b1", "d1")]);
    let args = ["eval", "--truth-pairs", path(&joined), "--run", path(&out)];
    let text = printed(&args);
    let line = |score: &str| text.lines().find(|l| l.starts_with(score)).unwrap();
    assert!(line("precision").ends_with("0.0000"), "{text}");
    assert!(undefined(line("recall")) && undefined(line("F1")), "{text}");
    assert!(text.contains("false positives: 1 predicted pair"), "{text}");
    let report = printed_json(&args);
    assert_eq!(report["precision"], json!(0.0), "{report:#}");
    assert!(report["recall"].is_null() && report["f1"].is_null(), "{report:#}");
    assert_eq!(report["false_positive_count"], 1, "{report:#}");

    // tune on labels that call no two documents alike: only precision, of the 4 pairs the
    // copies make, all false.
    let records: Vec<Value> = std::fs::read_to_string(&input)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| json!({"id": r["id"], "text": r["text"], "truth": r["id"]}))
        .collect();
    let distinct = write_lines(dir.path(), "distinct.jsonl", &records);
    let args = ["tune", "--truth", path(&distinct), "--grid", "0.8", "-w", "1"];
    let trial = &printed_json(&args)[0];
    assert_eq!(trial["precision"], json!(0.0), "{trial:#}");
    assert!(trial["recall"].is_null() && trial["f1"].is_null(), "{trial:#}");
    let text = printed(&args);
    assert!(text.contains("recall and F1 are n/a") && !text.contains("best F1"), "{text}");
}

/// The `run:` line after the decisions says whether `pairs/` holds the two documents, and
/// when not, whether a cluster joins them through others; feature samples with nothing to
/// show say "none".
#[test]
fn explain_says_how_the_run_relates_two_documents() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus(dir.path(), "in.jsonl", &[]);
    let out = dedup(&input, dir.path(), "out", &[]);
    let explain = |a: &str, b: &str| printed(&["explain", "--run", path(&out), a, b]);
    let run_line = |text: &str| -> String {
        let line = text.lines().rfind(|l| l.starts_with("run: "));
        line.unwrap().to_string()
    };
    let apart = explain("c1", "d1");
    assert_eq!(run_line(&apart), "run: not a pair in pairs/, and not in one cluster", "{apart}");
    // a2 is a copy of a1, a3 a near duplicate of a1: one cluster, no pair of their own.
    let joined = explain("a2", "a3");
    assert_eq!(
        run_line(&joined),
        "run: not a pair in pairs/; cluster a1 joins them through other documents",
        "{joined}"
    );
    assert!(run_line(&explain("a1", "a2")).starts_with("run: a exact pair"));
    let same = explain("a1", "a2");
    for title in ["only in A", "only in B"] {
        let line = same.lines().find(|l| l.starts_with(title)).unwrap();
        assert_eq!(line[title.len()..].trim(), "none", "{same}");
    }
}

/// A run given its input by a relative path is explained and evaluated from another folder:
/// `summary.json` records the folder the run was started in, and the relative paths of its
/// inputs are found from there. Before, `explain` failed and `eval` dropped its recall by
/// similarity.
#[test]
fn eval_and_explain_find_a_runs_relative_inputs_from_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    let start = dir.path().join("start");
    std::fs::create_dir_all(start.join("in")).unwrap();
    let records = [("a", FOX), ("b", FOX), ("c", OIL), ("d", GARDEN)];
    let lines: String = records
        .iter()
        .map(|(id, text)| {
            format!("{}\n", json!({"id": id, "text": text, "truth": text.len().to_string()}))
        })
        .collect();
    std::fs::write(start.join("in/docs.jsonl"), lines).unwrap();
    let mut cmd = support::neardup();
    cmd.current_dir(&start).args(["dedup", "-q", "-w", "1", "-i", "in/docs.jsonl", "-o", "out"]);
    let done = support::run(cmd, Duration::from_secs(60));
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = start.join("out");
    let in_another_folder = |args: &[&str]| {
        let mut cmd = support::neardup();
        cmd.current_dir(&elsewhere).args(args).arg("--run").arg(&run);
        support::run(cmd, Duration::from_secs(60))
    };
    let explained = in_another_folder(&["explain", "a", "b"]);
    let said = String::from_utf8_lossy(&explained.stderr);
    assert!(explained.status.success(), "{said}");
    assert!(String::from_utf8_lossy(&explained.stdout).contains("Jaccard"), "{said}");
    let truth = start.join("in/docs.jsonl");
    let evaluated = in_another_folder(&["eval", "--truth", truth.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&evaluated.stderr);
    assert!(evaluated.status.success(), "{said}");
    assert!(!said.contains("no recall by similarity"), "{said}");
    assert!(String::from_utf8_lossy(&evaluated.stdout).contains("recall by feature Jaccard"));
}

/// `tune --truth` with labels only and no --input says to give the documents, rather than
/// failing its first trial and suggesting a text field.
#[test]
fn tune_with_labels_only_asks_for_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("truth.jsonl");
    std::fs::write(
        &truth,
        "{\"id\": \"a\", \"truth\": \"x\"}\n{\"id\": \"b\", \"truth\": \"x\"}\n",
    )
    .unwrap();
    let done = neardup(&["tune", "--truth", truth.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{said}");
    assert!(said.contains("give the documents with --input"), "{said}");
    assert!(!said.contains("trial"), "{said}");
}
