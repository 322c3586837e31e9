//! `neardup eval` scores a run against labels: its pair counts agree with a brute-force
//! count over explicit pairs, the similarity bands cover every true pair, labelled pairs
//! work as truth, and a bad truth record is named.

use neardup_cli::Outcome;
use neardup_cli::eval::Report;
use neardup_e2e::{cluster_scores, dedup, neardup, repo, summary, truth};
use neardup_io::read_documents;

fn eval(args: &[&str]) -> Report {
    match neardup(args).unwrap() {
        Outcome::Evaluated(report) => *report,
        _ => panic!("eval prints a report"),
    }
}

fn dedup_poems(out: &std::path::Path) -> std::path::PathBuf {
    let input = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    dedup(&input, out, &["-w", "2"]).unwrap();
    input
}

#[test]
fn scores_agree_with_a_brute_force_pair_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = dedup_poems(&out);
    let report = eval(&[
        "eval",
        "--truth",
        input.to_str().unwrap(),
        "--run",
        out.to_str().unwrap(),
        "--show",
        "1000",
    ]);
    let labels = truth(&input);
    let docs = read_documents(&out.join("documents")).unwrap();
    let expected = cluster_scores(&docs, &labels);
    assert_eq!(report.documents, 5000);
    assert_eq!(report.missing_from_run, 0);
    let precision = report.precision.unwrap();
    assert!((precision - expected.precision).abs() < 1e-12, "{report:?} vs {expected:?}");
    let recall = report.recall.unwrap();
    assert!((recall - expected.recall).abs() < 1e-12, "{report:?} vs {expected:?}");
    assert!((report.f1.unwrap() - expected.f1).abs() < 1e-12);
    let ari = report.adjusted_rand_index.unwrap();
    assert!(ari > 0.3 && ari < 1.0, "ARI {ari}");
    // Every true pair falls in one band; identical feature sets are always found.
    let banded: u64 = report.recall_by_similarity.iter().map(|b| b.pairs).sum();
    assert_eq!(banded, report.true_pairs);
    let same = report.recall_by_similarity.last().unwrap();
    assert!(same.pairs > 0 && same.found == same.pairs, "{same:?}");
    let low = &report.recall_by_similarity[0];
    assert_eq!(low.found, 0, "pairs below 0.5 Jaccard are not found at threshold 0.8");
    // Every listed false positive is a verified pair whose labels differ.
    // Every wrong pair of a cluster is counted, verified or joined through others; the
    // listed ones are the verified pairs among them.
    let mut clusters: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for d in &docs {
        if let (Some(id), Some(cluster)) = (&d.id, &d.cluster) {
            clusters.entry(cluster).or_default().push(id);
        }
    }
    let wrong: u64 = clusters
        .values()
        .map(|m| {
            let pairs =
                m.iter().enumerate().flat_map(|(i, a)| m[i + 1..].iter().map(move |b| (a, b)));
            pairs.filter(|(a, b)| labels[**a] != labels[**b]).count() as u64
        })
        .sum();
    assert_eq!(report.false_positive_count, wrong);
    assert!(!report.false_positive_pairs.is_empty());
    assert!(report.false_positive_pairs.len() as u64 <= wrong);
    let listed: std::collections::HashSet<(&str, &str)> =
        report.false_positive_pairs.iter().map(|p| (p.id_a.as_str(), p.id_b.as_str())).collect();
    assert_eq!(listed.len(), report.false_positive_pairs.len(), "each pair listed once");
    for p in &report.false_positive_pairs {
        assert_ne!(labels[&p.id_a], labels[&p.id_b]);
        assert_eq!(clusters_of(&docs, &p.id_a), clusters_of(&docs, &p.id_b));
    }
}

/// The cluster of document `id`.
fn clusters_of(docs: &[neardup_io::DocumentRow], id: &str) -> Option<String> {
    docs.iter().find(|d| d.id.as_deref() == Some(id)).and_then(|d| d.cluster.clone())
}

#[test]
fn labelled_pairs_are_truth_too() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = dedup_poems(&out);
    let docs = read_documents(&out.join("documents")).unwrap();
    let cluster =
        |id: &str| docs.iter().find(|d| d.id.as_deref() == Some(id)).unwrap().cluster.clone();
    let labels = truth(&input);
    // Three labelled pairs: a found duplicate, a missed one, and a found non-duplicate.
    let mut by_label: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (id, label) in &labels {
        by_label.entry(label).or_default().push(id);
    }
    let true_pairs: Vec<(&str, &str)> =
        by_label.values().filter(|m| m.len() == 2).map(|m| (m[0], m[1])).collect();
    let found = true_pairs.iter().find(|(a, b)| cluster(a) == cluster(b)).unwrap();
    let missed = true_pairs.iter().find(|(a, b)| cluster(a) != cluster(b)).unwrap();
    let lines = [
        format!(r#"{{"id_a": "{}", "id_b": "{}"}}"#, found.0, found.1),
        format!(r#"{{"id_a": "{}", "id_b": "{}", "duplicate": true}}"#, missed.0, missed.1),
        format!(r#"{{"id_a": "{}", "id_b": "{}", "duplicate": false}}"#, found.1, found.0),
    ];
    let pairs = dir.path().join("pairs.jsonl");
    std::fs::write(&pairs, lines.join("\n")).unwrap();
    let report =
        eval(&["eval", "--truth-pairs", pairs.to_str().unwrap(), "--run", out.to_str().unwrap()]);
    // The third line relabels the first pair (same ids, either order): the last label wins.
    assert_eq!((report.true_pairs, report.predicted_pairs, report.true_positives), (1, 1, 0));
    assert_eq!(report.false_positive_count, 1);
    assert_eq!(report.recall, Some(0.0));
}

/// A score needs a run that finished and truth about its documents: a failed run, or truth
/// that names none of the run's documents, is refused rather than scored (an empty table
/// would score 1.0 everywhere).
#[test]
fn a_failed_run_and_truth_about_other_documents_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    std::fs::write(&input, "{\"id\": \"a\", \"text\": \"cut\n{\"id\": \"b\"\n").unwrap();
    let failed = dir.path().join("failed");
    assert!(dedup(&input, &failed, &[]).is_err(), "every record rejected fails the job");
    assert_eq!(summary(&failed)["status"], "failed");
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let error = format!(
        "{:#}",
        neardup(&["eval", "--truth", poems.to_str().unwrap(), "--run", failed.to_str().unwrap()])
            .map(|_| ())
            .unwrap_err()
    );
    assert!(error.contains("did not finish") && error.contains("failed"), "{error}");
    let out = dir.path().join("out");
    dedup_poems(&out);
    let other = dir.path().join("other.jsonl");
    std::fs::write(
        &other,
        "{\"id\": \"x1\", \"truth\": \"1\"}\n{\"id\": \"x2\", \"truth\": \"1\"}\n",
    )
    .unwrap();
    let error = format!(
        "{:#}",
        neardup(&["eval", "--truth", other.to_str().unwrap(), "--run", out.to_str().unwrap()])
            .map(|_| ())
            .unwrap_err()
    );
    assert!(error.contains("none of the 2 documents"), "{error}");
}

#[test]
fn a_truth_record_without_a_label_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    dedup_poems(&out);
    let bad = dir.path().join("truth.jsonl");
    std::fs::write(&bad, "{\"id\": \"a\", \"truth\": \"1\"}\n{\"id\": \"b\"}\n").unwrap();
    let error =
        neardup(&["eval", "--truth", bad.to_str().unwrap(), "--run", out.to_str().unwrap()])
            .unwrap_err();
    let message = format!("{error:#}");
    assert!(message.contains(bad.to_str().unwrap()) && message.contains("record 2"), "{message}");
    assert!(
        message.contains("no field \"truth\"") && !message.contains("missing_text"),
        "{message}"
    );
}

#[test]
fn tune_tries_a_grid_on_labels_and_agrees_with_eval() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = dedup_poems(&out);
    let at_default =
        eval(&["eval", "--truth", input.to_str().unwrap(), "--run", out.to_str().unwrap()]);
    let trials = match neardup(&[
        "tune",
        "--truth",
        input.to_str().unwrap(),
        "--grid",
        "0.5,0.8",
        "-w",
        "2",
    ])
    .unwrap()
    {
        neardup_cli::Outcome::Tuned(trials) => trials,
        _ => panic!("tune reports trials"),
    };
    assert_eq!(trials.len(), 2);
    assert_eq!(trials[1].resolved, "16 x 8");
    let f1 = trials[1].f1.unwrap();
    assert!((f1 - at_default.f1.unwrap()).abs() < 1e-12, "{trials:?} vs {at_default:?}");
    let summary = summary(&out);
    assert_eq!(trials[1].pairs, summary["counts"]["pairs"].as_u64().unwrap());
    // The poems' editions differ in many characters: a lower threshold finds more of them.
    assert!(trials[0].recall > trials[1].recall && trials[0].f1 > trials[1].f1, "{trials:?}");
    assert_eq!(neardup_cli::tune::best(&trials), Some(0));
    // The trials follow --containment: bands for its Jaccard floor (0.5), but not below 0.6.
    let args =
        ["tune", "--truth", input.to_str().unwrap(), "--grid", "0.8", "--containment", "0.9"];
    match neardup(&args).unwrap() {
        neardup_cli::Outcome::Tuned(trials) => assert_eq!(trials[0].resolved, "24 x 4"),
        _ => panic!("tune reports trials"),
    }
}

#[test]
fn tune_without_labels_describes_the_parameters() {
    // Shown, not run: nothing to check but that it succeeds for both methods and rejects
    // impossible settings as usage errors.
    for args in [
        &["tune"][..],
        &["tune", "--bands", "20", "--rows", "5", "--threshold", "0.6"],
        &["tune", "--method", "simhash", "--max-distance", "4", "--documents", "1000"],
        &["tune", "--containment", "0.9"],
    ] {
        assert!(matches!(neardup(args).unwrap(), neardup_cli::Outcome::Tuned(t) if t.is_empty()));
    }
    let error = neardup(&["tune", "--method", "simhash", "--max-distance", "4", "--blocks", "3"])
        .unwrap_err();
    assert!(error.downcast_ref::<neardup_cli::UsageError>().is_some(), "{error:#}");
    for args in [
        &["tune", "--containment", "1.5"][..],
        &["tune", "--method", "simhash", "--containment", "0.9"],
    ] {
        let error = neardup(args).unwrap_err();
        assert!(error.downcast_ref::<neardup_cli::UsageError>().is_some(), "{error:#}");
    }
}

fn explained(args: &[&str]) -> neardup_cli::explain::Explanation {
    match neardup(args).unwrap() {
        Outcome::Explained(e) => *e,
        _ => panic!("explain explains"),
    }
}

#[test]
fn explain_agrees_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    dedup_poems(&out);
    let docs = read_documents(&out.join("documents")).unwrap();
    let pairs = neardup_io::read_pairs(&out.join("pairs")).unwrap();
    let near =
        pairs.iter().find(|p| p.kind == neardup_io::PairKind::Near && p.similarity < 1.0).unwrap();
    let run = out.to_str().unwrap();
    let e = explained(&["explain", "--run", run, &near.id_a, &near.id_b]);
    use neardup_cli::explain::MethodView;
    let MethodView::Minhash { estimate, candidate, verified, agreeing_bands, .. } = &e.method
    else {
        panic!("a MinHash run")
    };
    assert!(*candidate && *verified && !agreeing_bands.is_empty());
    assert!((estimate - near.similarity).abs() < 1e-9, "the run's similarity is the estimate");
    assert!(e.left_out.iter().all(Vec::is_empty), "plain JSON Lines have no boilerplate");
    // The features are named as `tune` names them (with the Han length where it differs).
    let han = neardup_text::default_han_ngram_chars(neardup_text::DEFAULT_HAN_NGRAM_CHARS, 5);
    let named = if han == 5 { "5-grams".to_string() } else { format!("5-grams (Han {han}-grams)") };
    assert_eq!(e.feature_kind, named);
    // Two documents of different clusters are not verified.
    let kept: Vec<&str> = docs
        .iter()
        .filter(|d| d.decision == neardup_io::Decision::Keep)
        .filter_map(|d| d.id.as_deref())
        .take(2)
        .collect();
    let apart = explained(&["explain", "--run", run, kept[0], kept[1], "--json"]);
    let MethodView::Minhash { verified, .. } = &apart.method else { panic!("MinHash") };
    assert!(!verified && apart.jaccard < 0.8);
    let missing = neardup(&["explain", "--run", run, kept[0], "no-such-id"]).unwrap_err();
    assert!(format!("{missing:#}").contains("no-such-id"));
}

/// A record the run rejected is named with its reason, not called absent.
#[test]
fn explaining_a_rejected_record_says_why_it_has_no_text() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let text = "the quick brown fox jumps over the lazy dog again and again today";
    std::fs::write(
        &input,
        format!("{{\"id\": \"x1\", \"text\": \"{text}\"}}\n{{\"id\": \"x2\"}}\n"),
    )
    .unwrap();
    let job = dir.path().join("job.toml");
    std::fs::write(&job, "[decision]\nmax_reject_ratio = 1.0\n").unwrap();
    let out = dir.path().join("out");
    dedup(&input, &out, &["--job", job.to_str().unwrap()]).unwrap();
    let error = format!(
        "{:#}",
        neardup(&["explain", "--run", out.to_str().unwrap(), "x1", "x2"]).map(|_| ()).unwrap_err()
    );
    assert!(error.contains("rejected") && error.contains("missing_text"), "{error}");
}

#[test]
fn explain_takes_two_text_files() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    let base =
        "Oil prices rose on Tuesday as traders weighed supply cuts. Analysts expect further gains.";
    std::fs::write(&a, format!("{base}\nViews: 1,234")).unwrap();
    std::fs::write(&b, format!("{base}\nViews: 98,765")).unwrap();
    let e =
        explained(&["explain", a.to_str().unwrap(), b.to_str().unwrap(), "--method", "simhash"]);
    assert!(!e.identical_normalized && e.jaccard > 0.7, "{e:?}");
    assert!(matches!(e.method, neardup_cli::explain::MethodView::Simhash { .. }));
    assert_eq!(e.differences.len(), 1, "only the counter line differs: {:?}", e.differences);
    let error = neardup(&["explain", a.to_str().unwrap(), "missing.txt"]).unwrap_err();
    assert!(error.downcast_ref::<neardup_cli::UsageError>().is_some());
}

/// A run made under another signature version analysed its texts differently (another
/// normalisation or feature rule): eval and explain refuse it rather than explain what the
/// run did not do.
#[test]
fn a_run_of_another_signature_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = dedup_poems(&out);
    let path = out.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    summary["signature_version"] = serde_json::json!(neardup_core::SIGNATURE_VERSION - 1);
    std::fs::write(&path, serde_json::to_vec(&summary).unwrap()).unwrap();
    let (run, truth) = (out.to_str().unwrap(), input.to_str().unwrap());
    for args in [
        &["eval", "--truth", truth, "--run", run][..],
        &[
            "explain",
            "--run",
            run,
            "quantangshi/poet.tang.0.json#547",
            "quantangshi/poet.tang.0.json#35",
        ],
    ] {
        let error = format!("{:#}", neardup(args).map(|_| ()).unwrap_err());
        let old = format!("signature version {}", neardup_core::SIGNATURE_VERSION - 1);
        assert!(error.contains(&old) && error.contains("run the job again"), "{error}");
    }
}
