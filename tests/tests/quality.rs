//! Quality floors on the bundled labelled samples: precision and recall must not fall below
//! what was measured when the defaults were chosen (README "Quality"). Labels come from
//! metadata (edition alignment by author and title; identical court openings), never from
//! the similarity neardup computes.

use std::path::Path;

use neardup_e2e::{Scores, cluster_scores, dedup, repo, truth};
use neardup_io::read_documents;

fn scores(input: &Path, extra: &[&str]) -> Scores {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    dedup(input, &out, extra).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    cluster_scores(&docs, &truth(input))
}

fn poems() -> std::path::PathBuf {
    repo().join("data-samples/zh-tang-poems/poems.jsonl.gz")
}

fn court() -> std::path::PathBuf {
    repo().join("data-samples/zh-court-openings/openings.jsonl.gz")
}

/// Asserts a floor with the measured value in the message; floors sit just under the
/// measured figures (MinHash estimates vary with the seed only, which is fixed).
fn at_least(what: &str, got: f64, floor: f64) {
    assert!(got >= floor, "{what}: {got:.4} fell below {floor}");
}

#[test]
fn minhash_defaults_on_the_tang_poems() {
    // Measured: P 0.980, R 0.363.
    let s = scores(&poems(), &["--method", "minhash"]);
    at_least("precision", s.precision, 0.975);
    at_least("recall", s.recall, 0.355);
}

#[test]
fn simhash_defaults_on_the_tang_poems() {
    // Measured: P 0.992, R 0.243.
    let s = scores(&poems(), &["--method", "simhash"]);
    at_least("precision", s.precision, 0.985);
    at_least("recall", s.recall, 0.24);
}

#[test]
fn variant_job_on_the_tang_poems() {
    // Measured: P 0.952, R 0.842.
    let job = repo().join("jobs/zh-variants.toml");
    let s = scores(&poems(), &["--job", job.to_str().unwrap()]);
    at_least("precision", s.precision, 0.95);
    at_least("recall", s.recall, 0.83);
}

#[test]
fn both_methods_find_every_repeated_court_opening() {
    // Measured: recall 1.0 for both; precision 0.19 (MinHash) and 0.91 (SimHash), the rest
    // being openings that differ only in a docket number or a name.
    let m = scores(&court(), &["--method", "minhash"]);
    at_least("minhash recall", m.recall, 1.0);
    at_least("minhash precision", m.precision, 0.18);
    let s = scores(&court(), &["--method", "simhash"]);
    at_least("simhash recall", s.recall, 1.0);
    at_least("simhash precision", s.precision, 0.9);
}
