//! Helpers for the end-to-end tests: running the CLI in-process, rendering outputs as
//! sorted text for golden files, and scoring clusters against labels.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use neardup_cli::{Cli, Outcome};
use neardup_io::{DocumentRow, read_documents, read_pairs};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the repository")
        .to_path_buf()
}

/// Runs `neardup ARGS` in-process.
///
/// # Errors
/// What the CLI reports.
pub fn neardup(args: &[&str]) -> anyhow::Result<Outcome> {
    let cli = Cli::try_parse_from(std::iter::once("neardup").chain(args.iter().copied()))?;
    neardup_cli::run(cli)
}

/// The arguments `dedup -i INPUT -o OUT -q EXTRA...`.
pub fn dedup_args<'a>(input: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let (input, out) = (input.to_str().expect("UTF-8 path"), out.to_str().expect("UTF-8 path"));
    let mut args = vec!["dedup", "-i", input, "-o", out, "-q"];
    args.extend_from_slice(extra);
    args
}

/// Runs `neardup dedup -i INPUT -o OUT -q EXTRA...` in-process.
///
/// # Errors
/// What the CLI reports.
pub fn dedup(input: &Path, out: &Path, extra: &[&str]) -> anyhow::Result<Outcome> {
    neardup(&dedup_args(input, out, extra))
}

/// Runs `neardup dedup -i INPUT -o OUT -q EXTRA...` in-process and returns its exit code.
pub fn dedup_exit_code(input: &Path, out: &Path, extra: &[&str]) -> ExitCode {
    exit_code(&dedup_args(input, out, extra))
}

/// A run's `summary.json`, parsed.
///
/// # Panics
/// When it cannot be read or parsed (the message names the file).
pub fn summary(out: &Path) -> serde_json::Value {
    let path = out.join("summary.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `neardup ARGS` in-process and returns its exit code.
pub fn exit_code(args: &[&str]) -> ExitCode {
    neardup_cli::main_with_args(std::iter::once("neardup").chain(args.iter().copied()))
}

/// `documents/` rendered as sorted tab-separated text, for golden files.
pub fn render_documents(out: &Path) -> String {
    let mut rows = read_documents(&out.join("documents")).expect("documents/ readable");
    rows.sort_by_key(|r| r.doc);
    let mut text = String::from(
        "record\tid\tdecision\tcluster\tsize\tduplicate_of\treason\tverified_with_kept\n",
    );
    let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    for r in rows {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            r.doc.record(),
            show(&r.id),
            r.decision.as_str(),
            show(&r.cluster),
            r.cluster_size.map_or("-".into(), |n| n.to_string()),
            show(&r.duplicate_of),
            r.reason.map_or("-", |x| x.as_str()),
            r.verified_with_kept.map_or("-".into(), |v| v.to_string()),
        ));
    }
    text
}

/// `pairs/` rendered as sorted tab-separated text, for golden files.
pub fn render_pairs(out: &Path) -> String {
    let mut rows = read_pairs(&out.join("pairs")).expect("pairs/ readable");
    rows.sort_by(|a, b| (&a.id_a, &a.id_b).cmp(&(&b.id_a, &b.id_b)));
    let mut text = String::from("id_a\tid_b\tkind\tsimilarity\thamming\tmatching_bands\n");
    for p in rows {
        text.push_str(&format!(
            "{}\t{}\t{}\t{:.6}\t{}\t{}\n",
            p.id_a,
            p.id_b,
            p.kind.as_str(),
            p.similarity,
            p.hamming.map_or("-".into(), |h| h.to_string()),
            p.matching_bands.map_or("-".into(), |b| b.to_string()),
        ));
    }
    text
}

/// Compares `actual` with `tests/golden/NAME`; `UPDATE_GOLDEN=1` rewrites the file instead.
///
/// # Panics
/// When they differ (the message shows both).
pub fn check_golden(name: &str, actual: &str) {
    let path = repo().join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {}: {e} (run with UPDATE_GOLDEN=1 to create it)", path.display())
    });
    assert_eq!(
        actual,
        expected,
        "output differs from {}; review and rerun with UPDATE_GOLDEN=1",
        path.display()
    );
}

/// The `truth` field of every record of a (gzipped) JSONL file, by id.
pub fn truth(path: &Path) -> HashMap<String, String> {
    let mut text = String::new();
    let file = std::fs::File::open(path).expect("open labelled file");
    flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text).expect("read labelled file");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("labelled JSONL");
            (
                v["id"].as_str().expect("id").to_string(),
                v["truth"].as_str().expect("truth").to_string(),
            )
        })
        .collect()
}

/// Precision, recall and F1 over pairs of documents that share a cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Predicted pairs that are labelled pairs.
    pub precision: f64,
    /// Labelled pairs that are predicted.
    pub recall: f64,
    /// Harmonic mean.
    pub f1: f64,
}

/// Scores the clusters of `documents/` against labels (cluster ids per document id):
/// every pair inside a predicted cluster is a predicted pair, every pair sharing a label a
/// true pair. Rejected records are left out.
pub fn cluster_scores(docs: &[DocumentRow], truth: &HashMap<String, String>) -> Scores {
    let mut predicted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut gold: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for d in docs {
        let (Some(id), Some(cluster)) = (&d.id, &d.cluster) else {
            continue;
        };
        predicted.entry(cluster).or_default().push(id);
        gold.entry(truth.get(id).expect("every document is labelled")).or_default().push(id);
    }
    fn pairs<'a>(
        groups: &BTreeMap<&'a str, Vec<&'a str>>,
    ) -> std::collections::HashSet<(&'a str, &'a str)> {
        let mut set = std::collections::HashSet::new();
        for members in groups.values() {
            for (i, a) in members.iter().enumerate() {
                for b in &members[i + 1..] {
                    set.insert(if a < b { (*a, *b) } else { (*b, *a) });
                }
            }
        }
        set
    }
    let (p, g) = (pairs(&predicted), pairs(&gold));
    let tp = p.intersection(&g).count() as f64;
    let precision = if p.is_empty() { 1.0 } else { tp / p.len() as f64 };
    let recall = if g.is_empty() { 1.0 } else { tp / g.len() as f64 };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    Scores { precision, recall, f1 }
}
