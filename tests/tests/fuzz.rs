//! Reader fuzzing on the stable toolchain: the bundled real samples (JSON Lines plain, gzip
//! and zstd, WARC and WET plain and gzip, Parquet, HTML pages) are mutated (bit flips,
//! random and hostile bytes, cut, repeated and spliced ranges) and read. No reader panics,
//! every record comes once and in order, none is held above the record limit, and jobs over
//! folders of mutated files account for every record in `documents/`.
//!
//! The test command runs a few hundred cases in seconds; `bash bench/fuzz.sh SECONDS` runs
//! it for longer (`NEARDUP_FUZZ_SECONDS`) and reports the figures. A failing case is saved
//! under `target/fuzz-failures/` with its seed (`NEARDUP_FUZZ_SEED` replays it).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use neardup_e2e::{dedup, repo, summary};
use neardup_io::{
    Compression, Format, InputFile, OnReadError, ReadOptions, Record, RecordReader, html_to_text,
    read_documents,
};

/// The record limit of the readers under test: mutations that join lines or lengthen
/// records meet it.
const LIMIT: u64 = 256 << 10;

/// splitmix64: the mutations depend on the seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

struct Sample {
    /// File name, whose extension gives the format.
    name: String,
    bytes: Vec<u8>,
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).unwrap();
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    out.write_all(bytes).unwrap();
    out.finish().unwrap()
}

/// Seed inputs: the bundled samples, a few hundred records each.
fn samples() -> Vec<Sample> {
    let poems =
        gunzip(&std::fs::read(repo().join("data-samples/zh-tang-poems/poems.jsonl.gz")).unwrap());
    let lines: Vec<&[u8]> = poems.split(|b| *b == b'\n').take(300).collect();
    let jsonl = lines.join(&b'\n');
    let mut samples = vec![
        Sample { name: "poems.jsonl".into(), bytes: jsonl.clone() },
        Sample { name: "poems.jsonl.gz".into(), bytes: gzip(&jsonl) },
        Sample { name: "poems.jsonl.zst".into(), bytes: zstd::encode_all(&jsonl[..], 3).unwrap() },
        Sample { name: "poems.parquet".into(), bytes: parquet_of(&lines) },
    ];
    for name in ["resiliparse_warcfile", "dolma_sample-0000", "warcio_example", "cc_whirlwind"] {
        let bytes =
            std::fs::read(repo().join(format!("data-samples/warc/{name}.warc.gz"))).unwrap();
        samples.push(Sample { name: format!("{name}.warc"), bytes: gunzip(&bytes) });
        samples.push(Sample { name: format!("{name}.warc.gz"), bytes });
    }
    let wet = std::fs::read(repo().join("data-samples/warc/cc_whirlwind.warc.wet.gz")).unwrap();
    samples.push(Sample { name: "whirlwind.wet".into(), bytes: gunzip(&wet) });
    samples.push(Sample { name: "whirlwind.wet.gz".into(), bytes: wet });
    samples
}

/// The poems as Parquet (`id`, `text`), with small row groups.
fn parquet_of(lines: &[&[u8]]) -> Vec<u8> {
    use arrow_array::{RecordBatch, StringArray};
    let (mut ids, mut texts) = (Vec::new(), Vec::new());
    for line in lines {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        ids.push(v["id"].as_str().unwrap_or_default().to_string());
        texts.push(v["text"].as_str().unwrap_or_default().to_string());
    }
    let batch = RecordBatch::try_from_iter([
        ("id", std::sync::Arc::new(StringArray::from(ids)) as _),
        ("text", std::sync::Arc::new(StringArray::from(texts)) as _),
    ])
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(64))
        .build();
    let mut out = Vec::new();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// Bytes that mean something to some reader.
const HOSTILE: &[&[u8]] = &[
    b"\n",
    b"\r\n\r\n",
    b"WARC/1.0\r\n",
    b"Content-Length: 999999999\r\n",
    b"Content-Length: 3\r\n",
    b"WARC-Type: response\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n\x1f\x8b\x08\x00",
    b"<script>",
    b"<head>",
    b"<svg/>",
    b"<!--",
    b"{\"id\":\"x\",\"text\":\"",
    b"\"",
    b"\\u",
    b"\xff\xfe",
    b"\xe4\xb8",
    b"\0\0\0\0",
    b"PAR1",
];

/// One to eight mutations of `bytes` (splices take from `other`).
fn mutate(bytes: &[u8], other: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(8) {
        let len = out.len();
        let at = rng.below(len + 1);
        match rng.below(9) {
            0 if len > 0 => out[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => out[at.min(len - 1)] = rng.next() as u8,
            2 => {
                let bytes: Vec<u8> = (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect();
                out.splice(at..at, bytes);
            }
            3 => {
                let token = HOSTILE[rng.below(HOSTILE.len())];
                out.splice(at..at, token.iter().copied());
            }
            4 => {
                let end = (at + 1 + rng.below(4096)).min(len);
                out.drain(at.min(end)..end);
            }
            5 => out.truncate(at),
            6 => {
                let end = (at + 1 + rng.below(8192)).min(len);
                let copy = out[at.min(end)..end].to_vec();
                let to = rng.below(len + 1);
                out.splice(to..to, copy);
            }
            7 if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(8192)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            _ => {
                // A long run of one byte: a line or record that never ends.
                let run = vec![b"x\0 "[rng.below(3)]; rng.below(2 * LIMIT as usize)];
                out.splice(at..at, run);
            }
        }
    }
    out
}

/// What reading one file gave.
#[derive(Debug, Default)]
struct Outcome {
    records: u64,
    rejects: BTreeMap<&'static str, u64>,
    errors: u64,
}

/// Reads `path` as the job does (rejects, not failures, for damaged files) and checks the
/// invariants; returns what it read.
fn read_checked(path: &Path) -> Result<Outcome, String> {
    let format = Format::of(path).ok_or("no format")?;
    let file = InputFile { index: 3, path: path.to_path_buf(), format, bytes: 0, version: None };
    let fields = ReadOptions { max_record_bytes: LIMIT, ..ReadOptions::default() };
    let mut reader = match RecordReader::open(&file, &fields, OnReadError::Reject) {
        Ok(r) => r,
        Err(e) => return Err(format!("opening with on_read_error = reject failed: {e}")),
    };
    let mut out = Outcome::default();
    let mut last = 0u64;
    for record in reader.by_ref() {
        let record = match record {
            Ok(r) => r,
            Err(_) => {
                out.errors += 1; // a clear error ends the file (too many records)
                break;
            }
        };
        let (doc, text_len) = match &record {
            Record::Doc(d) => (d.doc, d.text.len() as u64),
            Record::Reject(r) => {
                *out.rejects.entry(r.reason.as_str()).or_default() += 1;
                (r.doc, 0)
            }
        };
        if doc.file_index() != 3 || doc.record() <= last {
            return Err(format!("record {} after {last}: not once and in order", doc.record()));
        }
        // A JSONL line holds its text; an archive's text comes from a block within the limit
        // (HTML decoding may grow it, but not past a few times).
        if matches!(format, Format::Jsonl(_)) && text_len > LIMIT || text_len > 4 * LIMIT {
            return Err(format!("record {} holds {text_len} bytes", doc.record()));
        }
        last = doc.record();
        out.records += 1;
    }
    // Plain JSON Lines: every non-blank line is one record.
    if format == Format::Jsonl(Compression::None) && out.errors == 0 {
        let bytes = std::fs::read(path).unwrap();
        let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
        let expected = lines.count() as u64;
        if out.records != expected {
            return Err(format!("{} records from {expected} lines", out.records));
        }
    }
    Ok(out)
}

/// Runs the job over `dir` with a 256 MiB budget, rejects instead of failures, and checks
/// that `documents/` holds every record read, once.
fn job_checked(dir: &Path, out: &Path) -> Result<u64, String> {
    let job = dir.with_extension("toml");
    std::fs::write(
        &job,
        "[input]\non_read_error = \"reject\"\n[decision]\nmax_reject_ratio = 1.0\n",
    )
    .unwrap();
    let extra = ["-w", "2", "--memory-budget", "256M", "--job", job.to_str().unwrap()];
    if let Err(e) = dedup(dir, out, &extra) {
        let message = format!("{e:#}");
        // Too many records in one file is the one clear error left; anything else (a worker
        // failure is a bug) fails the case.
        if message.contains("more than 2^40 records") {
            return Ok(0);
        }
        return Err(format!("the job failed: {message}"));
    }
    let summary = summary(out);
    let records = summary["counts"]["records"].as_u64().unwrap();
    let docs = read_documents(&out.join("documents")).map_err(|e| e.to_string())?;
    let mut ids: Vec<_> = docs.iter().map(|d| d.doc).collect();
    ids.sort_unstable();
    ids.dedup();
    if docs.len() as u64 != records || ids.len() != docs.len() {
        return Err(format!("{} rows, {} distinct, {records} records read", docs.len(), ids.len()));
    }
    Ok(records)
}

fn save_failure(seed: u64, name: &str, bytes: &[u8], why: &str) -> String {
    let dir = repo().join("target/fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{seed:016x}-{name}"));
    std::fs::write(&path, bytes).unwrap();
    format!("seed {seed:#x} ({name}): {why}; input saved as {}", path.display())
}

/// Starts measuring the peak resident memory afresh (Linux: `clear_refs` 5 resets it).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

#[test]
fn mutated_real_inputs_never_panic_or_lose_a_record() {
    let seconds: Option<u64> =
        std::env::var("NEARDUP_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok());
    let replay: Option<u64> = std::env::var("NEARDUP_FUZZ_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok());
    let deadline = Instant::now() + Duration::from_secs(seconds.unwrap_or(0));
    let samples = samples();
    let dir = tempfile::tempdir().unwrap();
    let (mut cases, mut records, mut jobs, mut job_records) = (0u64, 0u64, 0u64, 0u64);
    // The largest peak of one job (memory is measured afresh for each), and its seed.
    let mut job_peak = (0.0f64, 0u64);
    let mut rejects: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let start = Instant::now();
    let mut seed = replay.unwrap_or(0x5eed);
    loop {
        let done = match (replay, seconds) {
            (Some(_), _) => cases == 1,
            (None, Some(_)) => Instant::now() >= deadline,
            (None, None) => cases >= 12 * samples.len() as u64,
        };
        if done {
            break;
        }
        let case_seed = seed;
        seed = seed.wrapping_add(1);
        let mut rng = Rng(case_seed);
        let sample = &samples[rng.below(samples.len())];
        let other = &samples[rng.below(samples.len())];
        let bytes = mutate(&sample.bytes, &other.bytes, &mut rng);
        let path = dir.path().join(&sample.name);
        std::fs::write(&path, &bytes).unwrap();
        // A reader that panics fails the case, not the whole run.
        let read = std::panic::catch_unwind(|| read_checked(&path));
        match read {
            Ok(Ok(r)) => {
                records += r.records;
                for (reason, n) in r.rejects {
                    *rejects.entry(reason).or_default() += n;
                }
            }
            Ok(Err(why)) => failures.push(save_failure(case_seed, &sample.name, &bytes, &why)),
            Err(_) => failures.push(save_failure(case_seed, &sample.name, &bytes, "panicked")),
        }
        // Page text and its normalisation: no panic on any bytes.
        if std::panic::catch_unwind(|| html_to_text(&String::from_utf8_lossy(&bytes))).is_err() {
            failures.push(save_failure(case_seed, "page.html", &bytes, "html_to_text panicked"));
        }
        cases += 1;
        // Every 16th case, a job over a folder of several mutated files.
        if cases.is_multiple_of(16) || replay.is_some() {
            let folder = dir.path().join(format!("job-{case_seed:x}"));
            std::fs::create_dir(&folder).unwrap();
            for i in 0..4 {
                let s = &samples[rng.below(samples.len())];
                let o = &samples[rng.below(samples.len())];
                std::fs::write(
                    folder.join(format!("{i}-{}", s.name)),
                    mutate(&s.bytes, &o.bytes, &mut rng),
                )
                .unwrap();
            }
            let out = dir.path().join(format!("out-{case_seed:x}"));
            reset_peak();
            let checked = std::panic::catch_unwind(|| job_checked(&folder, &out));
            if peak_rss_mb() > job_peak.0 {
                job_peak = (peak_rss_mb(), case_seed);
            }
            match checked {
                Ok(Ok(n)) => job_records += n,
                Ok(Err(why)) => {
                    let keep = repo().join(format!("target/fuzz-failures/job-{case_seed:x}"));
                    let _ = std::fs::create_dir_all(&keep);
                    for e in std::fs::read_dir(&folder).unwrap() {
                        let e = e.unwrap();
                        let _ = std::fs::copy(e.path(), keep.join(e.file_name()));
                    }
                    failures.push(format!(
                        "seed {case_seed:#x}: job: {why} (files kept in {})",
                        keep.display()
                    ));
                }
                Err(_) => failures.push(format!("seed {case_seed:#x}: the job panicked")),
            }
            let _ = std::fs::remove_dir_all(&folder);
            let _ = std::fs::remove_dir_all(&out);
            jobs += 1;
        }
    }
    eprintln!(
        "fuzz: {cases} cases in {:.0} s, {records} records read ({rejects:?}), {jobs} jobs of 4 files ({job_records} records); largest peak of a job {:.0} MB (seed {:#x}, budget 256 MiB)",
        start.elapsed().as_secs_f64(),
        job_peak.0,
        job_peak.1
    );
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n"));
}

/// Inputs the fuzzing found a defect with (`tests/fixtures/fuzz/`, named after it): each
/// reads without a panic, its records once and in order.
#[test]
fn inputs_that_once_failed_read_cleanly() {
    let dir = repo().join("tests/fixtures/fuzz");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let read = std::panic::catch_unwind(|| read_checked(&path));
        assert!(matches!(read, Ok(Ok(_))), "{}: {:?}", path.display(), read.map_err(|_| "panic"));
    }
}
