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

/// A symbolic link with the name of the run's own spill folder (left by anyone) is removed,
/// never written through: what it points to stays as it was, and the run spills as usual.
#[test]
fn a_spill_folder_that_is_a_symbolic_link_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("data-samples/zh-tang-poems");
    let (spill, out) = (dir.path().join("spill"), dir.path().join("out"));
    std::fs::create_dir(&spill).unwrap();
    std::fs::create_dir(&out).unwrap();
    // The run's folder is named by its output, resolved, and its process (this one: the
    // command runs in-process).
    let resolved = out.canonicalize().unwrap();
    let key = neardup_core::hash::hash_bytes(resolved.as_os_str().as_encoded_bytes(), 0);
    let own = spill.join(format!("neardup-{key:016x}-{}", std::process::id()));
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("keep.txt"), "not the run's").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &own).unwrap();
    let args = ["--spill-dir", spill.to_str().unwrap(), "--memory-budget", "1M"];
    dedup(&input, &out, &args).unwrap();
    assert!(summary(&out)["spilled_bytes"].as_u64().unwrap() > 0, "the run spilled");
    let listing: Vec<_> =
        std::fs::read_dir(&elsewhere).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(listing, ["keep.txt"], "nothing written through the link");
    assert_eq!(std::fs::read_to_string(elsewhere.join("keep.txt")).unwrap(), "not the run's");
    assert!(
        std::fs::symlink_metadata(&own).is_err(),
        "the link is gone, and the run's folder with it"
    );
}
