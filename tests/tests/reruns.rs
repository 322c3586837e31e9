//! Reruns into the same output folder start clean: no stale parts or markers survive.

use std::path::Path;

use neardup_e2e::{neardup, render_documents, render_pairs, repo};

fn parts(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_rerun_with_fewer_workers_leaves_no_stale_parts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |workers: &str| {
        neardup(&[
            "dedup",
            "-i",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-q",
            "-w",
            workers,
        ])
        .unwrap();
    };
    run("8");
    assert_eq!(parts(&out.join("documents")).len(), 8);
    let (docs8, pairs8) = (render_documents(&out), render_pairs(&out));
    run("1");
    assert_eq!(parts(&out.join("documents")), ["part-00000.parquet"]);
    assert_eq!(parts(&out.join("pairs")), ["part-00000.parquet"]);
    assert_eq!((render_documents(&out), render_pairs(&out)), (docs8, pairs8));
    assert_eq!(parts(&out), ["_SUCCESS", "documents", "pairs", "report.html", "summary.json"]);
}

#[test]
fn an_output_folder_inside_the_input_folder_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus");
    std::fs::create_dir(&input).unwrap();
    std::fs::copy(repo().join("tests/fixtures/mixed.jsonl"), input.join("mixed.jsonl")).unwrap();
    // A manifest is not JSON Lines: inside a folder, .json files are skipped.
    std::fs::write(input.join("manifest.json"), "{\n  \"files\": [\"mixed.jsonl\"]\n}\n").unwrap();
    let out = input.join("out");
    let args = ["dedup", "-i", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"];
    neardup(&args).unwrap();
    let first = render_documents(&out);
    neardup(&args).unwrap();
    assert_eq!(render_documents(&out), first, "the rerun read the same input, not its own outputs");
}

#[test]
fn a_failed_rerun_removes_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let good = repo().join("tests/fixtures/mixed.jsonl");
    neardup(&["dedup", "-i", good.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"]).unwrap();
    assert!(out.join("_SUCCESS").exists());
    let bad = dir.path().join("bad.jsonl.gz");
    std::fs::write(&bad, b"\x1f\x8b\x08\x00not really gzip").unwrap();
    assert!(
        neardup(&["dedup", "-i", bad.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"])
            .is_err()
    );
    assert_eq!(parts(&out), ["summary.json"], "only the failure summary remains");
}
