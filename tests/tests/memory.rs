//! A small memory budget makes the job read in rounds and spill to disk, with the same
//! outputs; a spill folder that cannot be used fails the job with a clear error.

use neardup_e2e::{dedup, render_documents, render_pairs, repo, summary};

#[test]
fn a_tiny_budget_spills_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("data-samples/zh-tang-poems");
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let run = |out: &std::path::Path, budget: Option<&str>| {
        let mut args = vec!["-w", "2", "--spill-dir", spill.to_str().unwrap()];
        if let Some(b) = budget {
            args.extend(["--memory-budget", b]);
        }
        dedup(&input, out, &args).unwrap();
    };
    let (small, large) = (dir.path().join("small"), dir.path().join("large"));
    run(&small, Some("1M"));
    run(&large, Some("8G"));
    let (s, l) = (summary(&small), summary(&large));
    assert_eq!(s["memory_budget_bytes"], 1 << 20);
    assert!(s["spilled_bytes"].as_u64().unwrap() > 0, "a 1M budget spills: {s}");
    assert!(s["input_rounds"].as_u64().unwrap() > 2, "a 1M budget reads in rounds: {s}");
    assert_eq!(l["spilled_bytes"], 0);
    assert_eq!(l["input_rounds"], 1);
    assert_eq!(s["counts"], l["counts"]);
    assert_eq!(render_documents(&small), render_documents(&large));
    assert_eq!(render_pairs(&small), render_pairs(&large));
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "spill folders are removed");
}

/// Whatever spills first: a grouping stage, or (for web pages, read before signing to
/// learn their templates) the records the first pass keeps for the next.
#[test]
fn an_unusable_spill_folder_fails_the_job_and_names_it() {
    for sample in ["zh-tang-poems", "web-templated"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let not_a_folder = dir.path().join("file");
        std::fs::write(&not_a_folder, "").unwrap();
        let input = repo().join("data-samples").join(sample);
        let error = dedup(
            &input,
            &out,
            &["--memory-budget", "1M", "--spill-dir", not_a_folder.to_str().unwrap()],
        )
        .unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("cannot spill to disk"), "{sample}: {message}");
        assert!(message.contains(not_a_folder.to_str().unwrap()), "{sample}: {message}");
        assert!(!out.join("_SUCCESS").exists());
        assert_eq!(summary(&out)["status"], "failed");
    }
}
