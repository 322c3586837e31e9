//! Deduplicating successive batches against an index (`--index`) decides as one run over
//! all of them, except where a later document bridges two earlier clusters (earlier
//! decisions stand, and the summary counts the bridge); an index refuses other settings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use neardup_io::{Decision, read_documents, read_pairs};
use neardup_job::{ConfigError, JobConfig, JobSpec, Summary, Topology, run};
use neardup_testkit::{CorpusSpec, generate, write_jsonl};

/// Decision, the kept document's id (`cluster`) and `duplicate_of_run`, by record id.
type Decisions = BTreeMap<String, (Decision, Option<String>, Option<String>)>;

fn decisions(out: &Path) -> Decisions {
    read_documents(&out.join("documents"))
        .unwrap()
        .into_iter()
        .map(|d| (d.id.clone().unwrap(), (d.decision, d.cluster, d.duplicate_of_run)))
        .collect()
}

fn run_batch(
    spec: &JobSpec,
    inputs: &[PathBuf],
    out: PathBuf,
    index: Option<(&Path, &str)>,
    workers: usize,
) -> Summary {
    let mut config = JobConfig::new(spec.clone(), inputs, out.clone()).unwrap();
    if let Some((dir, run_name)) = index {
        config = config.with_index(dir.to_path_buf(), run_name.to_string()).unwrap();
    }
    let summary = run(&config, &Topology::local(workers)).unwrap();
    assert!(out.join("_SUCCESS").exists());
    summary
}

/// Runs `inputs` one after another against `index`, as runs `batch-1`, `batch-2`, ...
/// written under `outs`, with 1, 2, ... workers (the index does not depend on them), calling
/// `before(i)` before batch `i`; returns every batch's decisions and summaries.
fn run_batches(
    spec: &JobSpec,
    inputs: &[PathBuf],
    index: &Path,
    outs: &Path,
    mut before: impl FnMut(usize),
) -> (Decisions, Vec<Summary>) {
    let mut batched = Decisions::new();
    let mut summaries = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        before(i);
        let name = format!("batch-{}", i + 1);
        let out = outs.join(&name);
        let summary =
            run_batch(spec, std::slice::from_ref(input), out.clone(), Some((index, &name)), i + 1);
        let decided = decisions(&out);
        assert_eq!(summary.counts.records, decided.len() as u64, "every record accounted for");
        batched.extend(decided);
        summaries.push(summary);
    }
    (batched, summaries)
}

/// Words of a fixed vocabulary, so texts can share exactly the words they should.
fn words(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("w{i:04}x")).collect::<Vec<_>>().join(" ")
}

fn line(id: &str, text: &str) -> String {
    format!("{{\"id\":\"{id}\",\"text\":\"{text}\"}}")
}

/// Three batches of a generated corpus with planted duplicates, plus a bridge: `left` and
/// `right` (batch 1) share most of their text but not enough to be a pair; `middle`
/// (batch 3) is near both.
fn batches(dir: &Path) -> Vec<PathBuf> {
    let spec = CorpusSpec { seed: 21, bad_records: 0, repeated_ids: 0, ..CorpusSpec::default() };
    let records = generate(&spec);
    let per = records.len().div_ceil(3);
    let mut paths = Vec::new();
    for (i, chunk) in records.chunks(per).enumerate() {
        let path = dir.join(format!("batch-{}.jsonl", i + 1));
        write_jsonl(&path, chunk);
        paths.push(path);
    }
    let shared = words(0, 150);
    // Jaccard about 150/178 = 0.84 with the middle, 150/206 = 0.73 with each other.
    let left = format!("{shared} {}", words(1000, 28));
    let right = format!("{shared} {}", words(2000, 28));
    let mut text = std::fs::read_to_string(&paths[0]).unwrap();
    text.push_str(&format!("{}\n{}\n", line("left", &left), line("right", &right)));
    std::fs::write(&paths[0], text).unwrap();
    let mut text = std::fs::read_to_string(&paths[2]).unwrap();
    text.push_str(&format!("{}\n", line("middle", &shared)));
    std::fs::write(&paths[2], text).unwrap();
    paths
}

#[test]
fn batches_against_an_index_decide_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = batches(dir.path());
    let spec = JobSpec::default();

    // One run over all three batches: files in order, so batch order is input order.
    let whole_out = dir.path().join("whole");
    run_batch(&spec, &inputs, whole_out.clone(), None, 2);
    let whole = decisions(&whole_out);
    let pairs = read_pairs(&whole_out.join("pairs")).unwrap();
    let paired = |a: &str, b: &str| {
        pairs.iter().any(|p| (p.id_a == a && p.id_b == b) || (p.id_a == b && p.id_b == a))
    };
    assert!(paired("left", "middle") && paired("right", "middle"), "the bridge is near both");
    assert!(!paired("left", "right"), "the bridged documents are no pair themselves");

    // The same batches one after another, each against the index of those before.
    let index = dir.path().join("index");
    let (batched, summaries) = run_batches(&spec, &inputs, &index, dir.path(), |_| {});
    assert_eq!(batched.len(), whole.len());

    // The bridge: one run keeps one of left and right; the batches keep both (batch 1
    // decided them) and remove the middle as a copy of the earlier kept one.
    assert_eq!(whole["left"].0, Decision::Keep);
    assert_eq!(whole["right"].0, Decision::Remove);
    assert_eq!(batched["left"].0, Decision::Keep);
    assert_eq!(batched["right"].0, Decision::Keep);
    assert_eq!(batched["middle"].0, Decision::Remove);
    assert_eq!(batched["middle"].1.as_deref(), Some("left"));
    assert_eq!(batched["middle"].2.as_deref(), Some("batch-1"));
    let last = summaries.last().unwrap().index.as_ref().unwrap();
    assert!(last.stats.bridged_clusters >= 1, "the summary reports the bridge: {last:?}");

    // Everything else is decided alike. A document of a later batch may also bridge two
    // clusters of the corpus (a copy of a copy, the middle link in a later batch): then
    // one run removes a document that its own batch kept, and the bridge is counted.
    let bridged: u64 =
        summaries.iter().map(|s| s.index.as_ref().unwrap().stats.bridged_clusters).sum();
    let mut differing = Vec::new();
    for (id, (decision, _, _)) in &whole {
        let b_decision = batched[id].0;
        if *decision != b_decision {
            assert_eq!((*decision, b_decision), (Decision::Remove, Decision::Keep), "{id}");
            differing.push(id.clone());
        }
    }
    eprintln!(
        "{} documents, {} removed against the index, {bridged} bridges, differing: {differing:?}",
        whole.len(),
        batched.values().filter(|(_, _, run)| run.is_some()).count()
    );
    assert!(differing.contains(&"right".to_string()), "{differing:?}");
    assert!(differing.len() as u64 <= bridged, "{differing:?} differ, {bridged} bridges");

    // Later batches found copies of earlier documents, and say which run kept them.
    let from_index: Vec<_> =
        batched.values().filter(|(d, _, run)| *d == Decision::Remove && run.is_some()).collect();
    assert!(from_index.len() > 20, "{} removed against the index", from_index.len());
    assert!(from_index.iter().any(|(_, _, run)| run.as_deref() == Some("batch-2")));
    let s2 = summaries[1].index.as_ref().unwrap();
    assert_eq!(s2.generation, 2);
    assert!(s2.stats.matches > 0 && s2.stats.removed > 0 && s2.stats.keys_written > 0);
}

#[test]
fn an_index_refuses_a_run_with_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = batches(dir.path());
    let index = dir.path().join("index");
    run_batch(&JobSpec::default(), &inputs[..1], dir.path().join("a"), Some((&index, "a")), 1);
    let mut other = JobSpec::default();
    other.features.ngram_chars = Some(4);
    // Han n-grams as long as the index's, so that only the n-gram length differs.
    other.features.han_ngram_chars = Some(JobSpec::default().han_ngram_chars());
    let config = JobConfig::new(other, &inputs[1..2], dir.path().join("b")).unwrap();
    let err = config.with_index(index.clone(), "b".into()).unwrap_err();
    let ConfigError::Index(source) = &err else { panic!("not an index error: {err}") };
    let message = source.to_string();
    assert!(message.contains("features.ngram_chars = 5"), "{message}");
    assert!(message.contains("features.ngram_chars = 4"), "{message}");
    // The index is unchanged: the same settings still use it.
    let config = JobConfig::new(JobSpec::default(), &inputs[1..2], dir.path().join("b")).unwrap();
    assert_eq!(config.with_index(index, "b".into()).unwrap().index.unwrap().generation, 2);
}

/// An index made by signature version 6, before Han n-grams had a length of their own, is
/// refused: the message names the version and says how to build the index again.
#[test]
fn an_index_of_an_earlier_signature_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = batches(dir.path());
    let index = dir.path().join("index");
    run_batch(&JobSpec::default(), &inputs[..1], dir.path().join("a"), Some((&index, "a")), 1);
    // The settings as version 6 recorded them: no `features.han_ngram_chars`.
    let mut manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    manifest.settings.insert("signature_version".into(), "6".into());
    assert!(manifest.settings.remove("features.han_ngram_chars").is_some());
    manifest.save(&index).unwrap();
    let config = JobConfig::new(JobSpec::default(), &inputs[1..2], dir.path().join("b")).unwrap();
    let err = config.with_index(index, "b".into()).unwrap_err();
    let ConfigError::Index(source) = &err else { panic!("not an index error: {err}") };
    let message = source.to_string();
    let version = neardup_core::SIGNATURE_VERSION;
    let named = format!("signature_version = 6, this run has signature_version = {version}");
    assert!(message.contains(&named), "{message}");
    assert!(message.contains("(these differ too: features.han_ngram_chars)"), "{message}");
    assert!(message.contains("running the index's batches again"), "{message}");
}

#[test]
fn forgotten_documents_no_longer_block_their_copies() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let (t1, t2) = (words(0, 60), words(500, 60));
    let first = dir.path().join("first.jsonl");
    std::fs::write(&first, format!("{}\n{}\n", line("a", &t1), line("b", &t2))).unwrap();
    run_batch(&JobSpec::default(), &[first], dir.path().join("r1"), Some((&index, "r1")), 1);

    let ids = ["a".to_string()].into_iter().collect();
    let report = neardup_io::index::forget(&index, &ids).unwrap();
    assert_eq!(report.listed, 1);

    let second = dir.path().join("second.jsonl");
    let near_b = format!("{t2} {}", words(900, 2));
    std::fs::write(&second, format!("{}\n{}\n", line("a-copy", &t1), line("b-copy", &near_b)))
        .unwrap();
    let out = dir.path().join("r2");
    let summary = run_batch(&JobSpec::default(), &[second], out.clone(), Some((&index, "r2")), 2);
    let d = decisions(&out);
    assert_eq!(d["a-copy"].0, Decision::Keep, "a was forgotten: its copy is new");
    assert_eq!(d["b-copy"], (Decision::Remove, Some("b".into()), Some("r1".into())));
    assert_eq!(summary.index.unwrap().stats.removed, 1);
}

#[test]
fn a_failed_run_adds_nothing_and_leaves_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let good = dir.path().join("good.jsonl");
    std::fs::write(&good, format!("{}\n", line("a", &words(0, 60)))).unwrap();
    run_batch(
        &JobSpec::default(),
        std::slice::from_ref(&good),
        dir.path().join("r1"),
        Some((&index, "r1")),
        1,
    );

    // Mostly unreadable records: the run fails on its reject ratio, after writing parts.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, format!("{}\nnot json\nnot json\nnot json\n", line("b", &words(0, 60))))
        .unwrap();
    let config =
        JobConfig::new(JobSpec::default(), std::slice::from_ref(&bad), dir.path().join("r2"))
            .unwrap()
            .with_index(index.clone(), "r2".into())
            .unwrap();
    assert!(run(&config, &Topology::local(2)).is_err());
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    assert_eq!(manifest.generations.len(), 1, "the failed run committed nothing");
    assert!(!index.join(".lock").exists(), "the failed run released the lock");

    // The next good run takes the generation number the failed one could not commit.
    let summary =
        run_batch(&JobSpec::default(), &[good], dir.path().join("r3"), Some((&index, "r3")), 2);
    assert_eq!(summary.index.unwrap().generation, 2);
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    let folders: Vec<_> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    assert_eq!(manifest.generations.len(), 2);
    // The failed run removed its folder.
    assert_eq!(folders.len(), 2, "{folders:?}");
    assert!(manifest.generations.iter().all(|g| folders.contains(&g.folder)));

    // What a killed run leaves (an unlisted folder): compaction removes it, and merges the
    // two committed generations.
    std::fs::create_dir_all(index.join("gen-000009-killed/docs")).unwrap();
    let report = neardup_io::index::compact(&index).unwrap();
    assert_eq!(report.orphans_removed.len(), 1, "{report:?}");
    assert_eq!(report.segments_before, 2);
    let folders: Vec<_> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    assert_eq!(folders, vec![report.folder.unwrap()]);
}

/// Two components of a later run that join one earlier cluster (a near copy of the
/// earlier kept document with its exact copy, and another near copy that is no pair with
/// the first): every row naming the cluster carries one `cluster_size`, the earlier kept
/// document and this run's rows naming it, and the summary counts the cluster once, at
/// that size, whatever the workers.
#[test]
fn components_joining_one_earlier_cluster_have_one_size() {
    let dir = tempfile::tempdir().unwrap();
    let shared = words(0, 150);
    // Each about 150/178 = 0.84 from the earlier document, 150/206 = 0.73 from each other.
    let (near_1, near_2) =
        (format!("{shared} {}", words(1000, 28)), format!("{shared} {}", words(2000, 28)));
    let first = dir.path().join("first.jsonl");
    let lines = [line("a", &shared), line("other", &words(5000, 60))];
    std::fs::write(&first, lines.join("\n") + "\n").unwrap();
    let second = dir.path().join("second.jsonl");
    let lines = [
        line("b1", &near_1),
        line("c", &words(6000, 60)),
        line("b2", &near_2),
        line("b1-copy", &near_1),
        line("c-near", &format!("{} {}", words(6000, 60), words(7000, 2))),
    ];
    std::fs::write(&second, lines.join("\n") + "\n").unwrap();

    let mut results = Vec::new();
    for workers in [1, 2, 3] {
        let index = dir.path().join(format!("index-{workers}"));
        let out = dir.path().join(format!("first-{workers}"));
        run_batch(&JobSpec::default(), std::slice::from_ref(&first), out, Some((&index, "r1")), 1);
        let out = dir.path().join(format!("second-{workers}"));
        let second = std::slice::from_ref(&second);
        let summary =
            run_batch(&JobSpec::default(), second, out.clone(), Some((&index, "r2")), workers);

        // Two components of this run: b1 with its copy, and b2 alone.
        let pairs = read_pairs(&out.join("pairs")).unwrap();
        let paired = |a: &str, b: &str| {
            pairs.iter().any(|p| (p.id_a == a && p.id_b == b) || (p.id_a == b && p.id_b == a))
        };
        assert!(paired("b1", "b1-copy") && paired("c", "c-near"), "{pairs:?}");
        assert!(!paired("b1", "b2") && !paired("b1-copy", "b2"), "{pairs:?}");

        let mut rows = read_documents(&out.join("documents")).unwrap();
        rows.sort_by_key(|r| r.doc);
        let mut sizes: BTreeMap<String, (BTreeSet<u64>, u64)> = BTreeMap::new();
        for r in &rows {
            let entry = sizes.entry(r.cluster.clone().unwrap()).or_default();
            entry.0.insert(r.cluster_size.unwrap());
            entry.1 += 1;
        }
        for (cluster, (figures, _)) in &sizes {
            assert_eq!(
                figures.len(),
                1,
                "{workers} workers: cluster {cluster} has sizes {figures:?}"
            );
        }
        for id in ["b1", "b2", "b1-copy"] {
            let row = rows.iter().find(|r| r.id.as_deref() == Some(id)).unwrap();
            assert_eq!(
                (row.decision, row.cluster.as_deref(), row.duplicate_of_run.as_deref()),
                (Decision::Remove, Some("a"), Some("r1")),
                "{id}"
            );
        }
        // The earlier kept document and this run's three rows; a cluster of this run is
        // its rows.
        let figures: Vec<(&str, u64, u64)> =
            sizes.iter().map(|(c, (f, n))| (c.as_str(), *f.first().unwrap(), *n)).collect();
        assert_eq!(figures, [("a", 4, 3), ("c", 2, 2)], "{workers} workers");

        let c = &summary.counts;
        assert_eq!(
            (c.clusters, c.largest_cluster, c.largest_cluster_id.as_deref()),
            (2, 4, Some("a")),
            "{workers} workers: the summary counts the clusters the rows name"
        );
        let rendered: Vec<_> = rows
            .iter()
            .map(|r| (r.id.clone(), r.decision, r.cluster.clone(), r.cluster_size, r.reason))
            .collect();
        results.push((rendered, serde_json::to_value(&summary.counts).unwrap()));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "results depend on workers: {results:?}");
}

/// Compacting the index between batches changes no decision: the last batch decides the
/// same against the merged segment as against one segment per run. The runs before had
/// one and two workers, so the merge splits the first run's docs part anew.
#[test]
fn batches_decide_alike_against_a_compacted_index() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = batches(dir.path());
    let spec = JobSpec::default();
    let mut results = Vec::new();
    for compacted in [false, true] {
        let index = dir.path().join(format!("index-{compacted}"));
        let outs = dir.path().join(format!("runs-{compacted}"));
        let (decided, mut summaries) = run_batches(&spec, &inputs, &index, &outs, |i| {
            if compacted && i == 2 {
                let report = neardup_io::index::compact(&index).unwrap();
                assert_eq!((report.segments_before, report.generations), (2, 2));
                assert_eq!(report.keys_after, report.keys_before);
            }
        });
        results.push((decided, summaries.pop().unwrap().index.unwrap()));
    }
    let ((plain, plain_stats), (merged, merged_stats)) = (&results[0], &results[1]);
    assert_eq!(plain, merged);
    assert!(merged.values().any(|(_, _, run)| run.as_deref() == Some("batch-1")));
    assert_eq!((plain_stats.generations_read, plain_stats.segments_read), (2, 2));
    assert_eq!((merged_stats.generations_read, merged_stats.segments_read), (2, 1));
    assert_eq!(plain_stats.stats.matches, merged_stats.stats.matches);
    assert!(merged_stats.stats.parts_opened < plain_stats.stats.parts_opened, "{merged_stats:?}");
}
