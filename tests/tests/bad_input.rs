//! Bad input never stops a run silently or loses a record: every record read is in
//! `documents/` once, rejects name their file position and reason, damaged files are clear
//! errors (or counted rejects on request), and usage errors exit with code 2.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use neardup_e2e::{dedup, dedup_args, exit_code, neardup, repo, summary};
use neardup_io::{Decision, Reason, read_documents};

#[test]
fn every_record_of_the_fixture_is_accounted_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    dedup(&input, &out, &["-w", "2"]).unwrap();
    let lines: Vec<Vec<u8>> =
        std::fs::read(&input).unwrap().split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let records: Vec<u64> = (1..=lines.len() as u64)
        .filter(|n| !lines[*n as usize - 1].iter().all(u8::is_ascii_whitespace))
        .collect();
    let docs = read_documents(&out.join("documents")).unwrap();
    let mut seen: Vec<u64> = docs.iter().map(|d| d.doc.record()).collect();
    seen.sort_unstable();
    assert_eq!(seen, records, "each non-blank line is exactly one row");
    let s = summary(&out);
    assert_eq!(s["counts"]["records"], records.len() as u64);

    let reason_at = |line: u64| docs.iter().find(|d| d.doc.record() == line).and_then(|d| d.reason);
    let line_of = |needle: &str| {
        1 + lines.iter().position(|l| String::from_utf8_lossy(l).contains(needle)).unwrap() as u64
    };
    assert_eq!(reason_at(line_of("\"broken\"")), Some(Reason::MalformedJson));
    assert_eq!(reason_at(line_of("\"no-text\"")), Some(Reason::MissingText));
    assert_eq!(reason_at(line_of("\"number-text\"")), Some(Reason::TextNotString));
    assert_eq!(reason_at(line_of("\"blank\"")), Some(Reason::EmptyText));
    assert_eq!(reason_at(line_of("\"markup-only\"")), Some(Reason::EmptyText));
    assert_eq!(reason_at(line_of("without an id")), Some(Reason::MissingId));
    assert_eq!(reason_at(line_of("repeats the id")), Some(Reason::DuplicateId));
    assert_eq!(reason_at(line_of("\"latin1\"")), Some(Reason::InvalidUtf8));
    let dup = docs.iter().find(|d| d.reason == Some(Reason::DuplicateId)).unwrap();
    assert!(dup.detail.as_deref().unwrap().contains("mixed.jsonl"), "{:?}", dup.detail);
    assert!(
        docs.iter()
            .filter(|d| d.decision == Decision::Reject)
            .all(|d| d.source.ends_with("mixed.jsonl"))
    );
}

fn truncated_gzip(path: &Path) {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for i in 0..3000 {
        writeln!(enc, "{{\"id\": \"d{i}\", \"text\": \"document number {i} talks about the weather in town {i}\"}}").unwrap();
    }
    let bytes = enc.finish().unwrap();
    std::fs::write(path, &bytes[..bytes.len() * 2 / 3]).unwrap();
}

#[test]
fn a_damaged_archive_fails_the_job_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("damaged.jsonl.gz");
    truncated_gzip(&input);
    let out = dir.path().join("out");
    let args = dedup_args(&input, &out, &["-w", "2"]);
    let err = neardup(&args).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("damaged.jsonl.gz") && message.contains("after record"), "{message}");
    assert_eq!(exit_code(&args), ExitCode::from(1));
    assert!(!out.join("_SUCCESS").exists());
    assert!(
        !out.join("documents").exists() && !out.join("pairs").exists(),
        "no parts of a failed run"
    );
    assert_eq!(summary(&out)["status"], "failed");
}

#[test]
fn a_damaged_archive_can_be_counted_as_a_reject() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("damaged.jsonl.gz");
    truncated_gzip(&input);
    let job = dir.path().join("job.toml");
    std::fs::write(&job, "[input]\non_read_error = \"reject\"\n").unwrap();
    let out = dir.path().join("out");
    dedup(&input, &out, &["--job", job.to_str().unwrap()]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    let unreadable: Vec<_> = docs.iter().filter(|d| d.reason == Some(Reason::Unreadable)).collect();
    assert_eq!(unreadable.len(), 1);
    assert_eq!(
        unreadable[0].doc.record() as usize,
        docs.len(),
        "the reject follows the last record read"
    );
    assert!(docs.len() > 1000 && docs.len() < 3000, "{}", docs.len());
    assert!(out.join("_SUCCESS").exists());
}

#[test]
fn a_wrong_text_field_fails_on_the_reject_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("content.jsonl");
    std::fs::write(
        &input,
        "{\"id\": \"a\", \"content\": \"x\"}\n{\"id\": \"b\", \"content\": \"y\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let args = dedup_args(&input, &out, &[]);
    let err = format!("{:#}", neardup(&args).unwrap_err());
    assert!(err.contains("2 of 2 records were rejected (missing_text 2)"), "{err}");
    assert_eq!(exit_code(&args), ExitCode::from(1));
    assert!(!out.join("_SUCCESS").exists());
    assert_eq!(summary(&out)["status"], "failed");
    // The parts stay, so the rejects can be inspected.
    assert_eq!(read_documents(&out.join("documents")).unwrap().len(), 2);
    let ok = dedup_args(&input, &out, &["--text-field", "content"]);
    neardup(&ok).unwrap();
    assert!(out.join("_SUCCESS").exists());
}

#[test]
fn usage_errors_exit_with_two() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let (input, out) = (input.to_str().unwrap(), dir.path().join("out"));
    let out = out.to_str().unwrap();
    let job = dir.path().join("typo.toml");
    std::fs::write(&job, "[minhash]\nthreshhold = 0.7\n").unwrap();
    let job = job.to_str().unwrap();
    for args in [
        vec!["dedup", "-i", input, "-o", out, "--job", job],
        vec!["dedup", "-i", input, "-o", out, "--threshold", "1.5"],
        vec!["dedup", "-i", "/nonexistent/input.jsonl", "-o", out],
        vec!["dedup", "-i", input, "-o", out, "--no-such-flag"],
        vec!["dedup", "-o", out],
        vec!["dedup", "-i", input, "-o", out, "-w", "0"],
        vec!["dedup", "-i", input, "-o", out, "--processes", "0"],
        vec!["tune", "-w", "0"],
    ] {
        assert_eq!(exit_code(&args), ExitCode::from(2), "{args:?}");
    }
    let err =
        format!("{:#}", neardup(&["dedup", "-i", input, "-o", out, "--job", job]).unwrap_err());
    assert!(err.contains("threshhold") && err.contains("typo.toml"), "{err}");
}

/// A record above the size limit (by default a sixty-fourth of the budget, at most 16 MiB)
/// is a `too_large` reject, and so is a gzip bomb of one endless line; the run goes on.
#[test]
fn records_above_the_size_limit_are_rejected_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&input).unwrap(),
        flate2::Compression::fast(),
    );
    for i in 0..20 {
        writeln!(gz, "{{\"id\":\"d{i}\",\"text\":\"document number {i} of a small batch\"}}")
            .unwrap();
    }
    writeln!(gz, "{{\"id\":\"huge\",\"text\":\"{}\"}}", "word ".repeat(1 << 20)).unwrap();
    writeln!(gz, "{{\"id\":\"after\",\"text\":\"the record after the large one\"}}").unwrap();
    gz.write_all(&vec![0u8; 8 << 20]).unwrap();
    gz.finish().unwrap();
    let out = dir.path().join("out");
    dedup(&input, &out, &["--memory-budget", "256M"]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    assert_eq!(docs.len(), 23, "every record is in documents/ once");
    let large: Vec<u64> = docs
        .iter()
        .filter(|d| d.reason == Some(Reason::TooLarge))
        .map(|d| d.doc.record())
        .collect();
    assert_eq!(large, [21, 23]);
    assert!(docs.iter().any(|d| d.id.as_deref() == Some("after") && d.decision == Decision::Keep));
    let s = summary(&out);
    assert_eq!(s["config"]["input"]["max_record_bytes"], 4 << 20, "256M / 64: {s}");
    // With a budget of 1 GiB or more, or a limit set in the job file, 16 MiB or that.
    let job = dir.path().join("job.toml");
    std::fs::write(&job, "[input]\nmax_record_bytes = 100\n").unwrap();
    dedup(&input, &out, &["--job", job.to_str().unwrap()]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    assert!(
        docs.iter().all(|d| d.reason == Some(Reason::TooLarge) || d.decision == Decision::Keep)
    );
    assert_eq!(docs.iter().filter(|d| d.reason == Some(Reason::TooLarge)).count(), 2);
}

/// `text` gzipped as one member.
fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

/// JSON Lines records `from..to`, each on a subject of its own.
fn jsonl_records(from: usize, to: usize) -> String {
    const SUBJECTS: [&str; 6] = [
        "the harbour freezes in the first week of winter",
        "a bakery sells rye bread on tuesday mornings",
        "forty species of birds were counted in the marsh",
        "the library stays open late during exam weeks",
        "the old bridge was closed for repairs in march",
        "a choir rehearses in the town hall every thursday",
    ];
    (from..to)
        .map(|i| format!("{{\"id\": \"d{i}\", \"text\": \"{} ({i})\"}}\n", SUBJECTS[i]))
        .collect()
}

/// Zero bytes after the last gzip member (padding that `gzip -d` ignores) are ignored and
/// counted, in JSON Lines and in web archives of a member per record, and the kept copies
/// are written; other bytes there fail the run naming the file and where they start, and
/// so do zero bytes after the last zstd frame, which `zstd -d` rejects.
#[test]
fn zero_bytes_after_the_last_gzip_member_are_ignored_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let members = [gzip(&jsonl_records(0, 3)), gzip(&jsonl_records(3, 6))].concat();
    std::fs::write(input.join("a.jsonl.gz"), [&members[..], &[0u8; 512]].concat()).unwrap();
    let warc = std::fs::read(repo().join("data-samples/warc/cc_whirlwind.warc.gz")).unwrap();
    std::fs::write(input.join("b.warc.gz"), [&warc[..], &[0u8; 4096]].concat()).unwrap();
    let out = dir.path().join("out");
    let kept = dir.path().join("kept");
    dedup(&input, &out, &["-w", "2", "--write-kept", kept.to_str().unwrap()]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    let records = |name: &str| {
        let mut found: Vec<u64> =
            docs.iter().filter(|d| d.source.ends_with(name)).map(|d| d.doc.record()).collect();
        found.sort_unstable();
        found
    };
    assert_eq!(records("a.jsonl.gz"), [1, 2, 3, 4, 5, 6]);
    assert!(!records("b.warc.gz").is_empty());
    assert!(docs.iter().all(|d| d.decision != Decision::Reject), "no rejects");
    let s = summary(&out);
    assert_eq!(s["counts"]["trailing_zero_bytes"], 512 + 4096, "{}", s["counts"]);
    let mut copy = String::new();
    let kept_jsonl = std::fs::File::open(kept.join("00000-a.jsonl.gz")).unwrap();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(kept_jsonl), &mut copy)
        .unwrap();
    assert_eq!(copy, jsonl_records(0, 6), "every record kept, copied byte for byte");
    assert!(kept.join("00001-b.warc.gz.jsonl.gz").exists());

    let fails = |name: &str, bytes: Vec<u8>, at: usize| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let args = dedup_args(&path, &out, &[]);
        let message = format!("{:#}", neardup(&args).unwrap_err());
        let at = format!("byte {at}");
        assert!(message.contains(name) && message.contains(&at), "{message}");
        assert_eq!(exit_code(&args), ExitCode::from(1));
    };
    fails("garbage.jsonl.gz", [&members[..], b"not gzip"].concat(), members.len());
    fails("zeros-then-more.jsonl.gz", [&members[..], &[0; 8], b"x"].concat(), members.len());
    let frame = zstd::encode_all(jsonl_records(0, 6).as_bytes(), 3).unwrap();
    fails("padded.jsonl.zst", [&frame[..], &[0; 512]].concat(), frame.len());
}
