//! The CLI on a small hand-written mixed Chinese/English fixture, compared with reviewed
//! golden outputs (Parquet read back and rendered as sorted text).
//!
//! With default settings the two-word edit of the 100-character weather report stays below
//! Jaccard 0.8 over 5-grams and is kept; the changed counter, the HTML copy, the full-width
//! copy and the whitespace copies are found.

use neardup_e2e::{check_golden, dedup, render_documents, render_pairs, repo};

fn run_fixture(extra: &[&str], name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    dedup(&input, &out, extra).unwrap();
    check_golden(&format!("{name}-documents.tsv"), &render_documents(&out));
    check_golden(&format!("{name}-pairs.tsv"), &render_pairs(&out));
}

#[test]
fn minhash_defaults() {
    run_fixture(&["--workers", "3"], "mixed-minhash");
}

#[test]
fn simhash_with_distance_eight() {
    run_fixture(&["--method", "simhash", "--max-distance", "8", "--workers", "2"], "mixed-simhash");
}

#[test]
fn minhash_lower_threshold_keeps_longest() {
    run_fixture(&["--threshold", "0.6", "--keep", "longest"], "mixed-minhash-longest");
}
