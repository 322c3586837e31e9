//! Every job file shipped in jobs/ parses and passes validation.

use neardup_e2e::{dedup, repo};

#[test]
fn every_shipped_job_file_is_valid_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let mut checked = 0;
    for entry in std::fs::read_dir(repo().join("jobs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let out = dir.path().join(path.file_stem().unwrap());
        // The fixture has many bad lines on purpose: accept them all here.
        let job = std::fs::read_to_string(&path).unwrap();
        let relaxed = dir.path().join(path.file_name().unwrap());
        let job =
            if job.contains("max_reject_ratio") {
                job.lines()
                    .map(|l| {
                        if l.starts_with("max_reject_ratio") { "max_reject_ratio = 1.0" } else { l }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            } else if job.contains("[decision]") {
                job.replace("[decision]", "[decision]\nmax_reject_ratio = 1.0")
            } else {
                format!("{job}\n[decision]\nmax_reject_ratio = 1.0\n")
            };
        // An index goes to the temporary folder, not the working directory.
        let index = dir.path().join("index").join(path.file_stem().unwrap());
        let job =
            job.lines()
                .map(|l| {
                    if l.starts_with("dir = ") {
                        format!("dir = {:?}", index)
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
        std::fs::write(&relaxed, job).unwrap();
        dedup(&input, &out, &["--job", relaxed.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        checked += 1;
    }
    assert!(checked >= 6, "{checked} job files");
    let weekly = dir.path().join("index/cc-wet-weekly");
    assert!(weekly.join("index.json").exists(), "the weekly job made its index");
}
