//! Inputs in object storage and over HTTP, read from real servers on 127.0.0.1: moto's
//! S3-compatible server (PyPI `moto[server]`, which `.ci/run` installs) and a small HTTP
//! file server in this file that answers ranges and can fail on purpose (serving a
//! gzipped paths file and its WET files, as Common Crawl publishes them). A run over remote
//! inputs must equal the same run over the same files on disk, and transient server faults
//! must cost retries, never records.
//! Outputs in object storage are tested in `object_outputs.rs`.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use neardup_io::read_documents;
use support::{S3, inputs, neardup, results, run, summary};

/// A loopback HTTP server of one folder's files: GET and HEAD, `Range: bytes=N-` and
/// `bytes=N-M`, one request per connection. `fail` answers the next GETs of `faulty` with
/// 503; `cut` sends the next GETs' headers and half their body, then closes the connection.
struct Files {
    port: u16,
    faulty: Arc<std::sync::Mutex<String>>,
    fail: Arc<AtomicUsize>,
    cut: Arc<AtomicUsize>,
    gets: Arc<AtomicUsize>,
    /// Body bytes sent.
    sent: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Files {
    fn serve(root: &Path) -> Files {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (fail, cut, gets, sent, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let root = root.to_path_buf();
        let faulty = Arc::new(std::sync::Mutex::new(String::new()));
        let thread = {
            let faulty = faulty.clone();
            let counters = [fail.clone(), cut.clone(), gets.clone(), sent.clone()];
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            stream.set_nonblocking(false).unwrap();
                            let faulty = faulty.lock().unwrap().clone();
                            let _ = answer(stream, &root, &faulty, &counters);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        Files { port, faulty, fail, cut, gets, sent, stop, thread: Some(thread) }
    }

    fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn take(counter: &AtomicUsize) -> bool {
    counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok()
}

/// Answers one request; `counters` are [fail, cut, gets, sent] as in [`Files`].
fn answer(
    stream: TcpStream,
    root: &Path,
    faulty: &str,
    counters: &[Arc<AtomicUsize>; 4],
) -> std::io::Result<()> {
    let [fail, cut, gets, sent] = counters;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/").to_string());
    let mut range = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("range: bytes=") {
            let (a, b) = value.trim().split_once('-').unwrap_or((value.trim(), ""));
            range = Some((a.parse::<usize>().unwrap_or(0), b.parse::<usize>().ok()));
        }
    }
    let mut out = stream;
    let bytes = std::fs::read(root.join(target.trim_start_matches('/'))).ok();
    let Some(bytes) = bytes else {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    };
    let faulty = !faulty.is_empty() && target.ends_with(faulty);
    if method == "GET" {
        gets.fetch_add(1, Ordering::Relaxed);
        if faulty && take(fail) {
            return out.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
    let (status, body, extra) = match range {
        Some((from, to)) if from < bytes.len() => {
            let to = to.map_or(bytes.len() - 1, |t| t.min(bytes.len() - 1));
            let header = format!("Content-Range: bytes {from}-{to}/{}\r\n", bytes.len());
            ("206 Partial Content", &bytes[from..=to], header)
        }
        _ => ("200 OK", &bytes[..], String::new()),
    };
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\n{extra}\
         Last-Modified: Wed, 25 Nov 2026 00:00:00 GMT\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method == "GET" {
        if faulty && take(cut) {
            out.write_all(&body[..body.len() / 2])?;
            sent.fetch_add(body.len() / 2, Ordering::Relaxed);
            return out.flush();
        }
        out.write_all(body)?;
        sent.fetch_add(body.len(), Ordering::Relaxed);
    }
    out.flush()
}

/// Runs `local` and its copy at `address` with `workers` into `dir` and checks they decide
/// alike.
fn same_local_and_remote(dir: &Path, local: &Path, address: &str, workers: &str) {
    let decide = |input: &std::ffi::OsStr, name: &str| {
        let out = dir.join(name);
        let mut cmd = neardup();
        cmd.args(["dedup", "-q", "-w", workers, "-o"]).arg(&out).arg("-i").arg(input);
        let done = run(cmd, Duration::from_secs(120));
        assert!(done.status.success(), "{done:?}");
        results(&out)
    };
    assert_eq!(decide(address.as_ref(), "remote"), decide(local.as_os_str(), "local"));
}

#[test]
fn an_s3_prefix_reads_like_the_same_folder_on_disk() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    s3.put("/crawl", b"");
    for (name, local) in inputs(dir.path()) {
        s3.put(&format!("/crawl/in/{name}"), &std::fs::read(local).unwrap());
    }
    // Skipped as on disk: hidden names, `.json` manifests, other formats.
    for skipped in ["_SUCCESS", ".hidden/x.jsonl", "_tmp/y.jsonl", "notes.json", "README.txt"] {
        s3.put(&format!("/crawl/in/{skipped}"), b"{\"id\":\"z\",\"text\":\"not an input\"}\n");
        if let Some(parent) = Path::new(skipped).parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir.path().join("in").join(parent)).unwrap();
        }
        std::fs::write(dir.path().join("in").join(skipped), b"{\"id\":\"z\",\"text\":\"x\"}\n")
            .unwrap();
    }
    // A neighbour whose name starts with the prefix is not inside it.
    s3.put("/crawl/in-other/x.jsonl", b"{\"id\":\"n\",\"text\":\"neighbour\"}\n");

    let local_out = dir.path().join("local");
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i"]).arg(dir.path().join("in")).arg("-o").arg(&local_out);
    cmd.arg("--write-kept").arg(dir.path().join("local-kept"));
    let local = run(cmd, Duration::from_secs(120));
    assert!(local.status.success(), "{local:?}");

    let remote_out = dir.path().join("remote");
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-i", "s3://crawl/in", "-o"]).arg(&remote_out);
    cmd.arg("--write-kept").arg(dir.path().join("remote-kept"));
    let remote = run(cmd, Duration::from_secs(120));
    assert!(remote.status.success(), "{remote:?}");

    assert_eq!(results(&remote_out), results(&local_out));
    let (r, l) = (summary(&remote_out), summary(&local_out));
    assert_eq!(r["counts"], l["counts"]);
    assert_eq!(r["input_files"], l["input_files"]);
    assert_eq!(r["remote_retries"], 0);
    let sources: Vec<String> = read_documents(&remote_out.join("documents"))
        .unwrap()
        .iter()
        .map(|d| d.source.to_string())
        .collect();
    assert!(sources.iter().all(|s| s.starts_with("s3://crawl/in/")), "{:?}", &sources[..3]);
    // The deduplicated dataset is the same, file for file.
    let kept = |root: &str| -> Vec<(String, Vec<u8>)> {
        neardup_io::kept_files(&dir.path().join(root))
            .unwrap()
            .iter()
            .map(|p| (p.file_name().unwrap().to_string_lossy().into(), std::fs::read(p).unwrap()))
            .collect()
    };
    let (remote_kept, local_kept) = (kept("remote-kept"), kept("local-kept"));
    let names: Vec<&String> = remote_kept.iter().map(|(n, _)| n).collect();
    assert!(names.iter().filter(|n| n.starts_with("0000")).count() == 6, "{names:?}");
    assert!(remote_kept == local_kept, "kept files differ: {names:?}");

    // A missing object and a missing bucket are errors naming them, before any output.
    for (input, said) in [
        ("s3://crawl/in/gone.jsonl", "no such object"),
        ("s3://crawl/typo", "no objects under this prefix"),
        ("s3://nobucket/in", "no such bucket \"nobucket\""),
    ] {
        let mut cmd = s3.neardup();
        cmd.args(["dedup", "-q", "-i", input, "-o"]).arg(dir.path().join("failed"));
        let failed = run(cmd, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert_eq!(failed.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(input) && stderr.contains(said), "{stderr}");
    }
}

#[test]
fn an_object_that_changes_during_a_run_fails_it_and_runs_inside_a_prefix_are_left_out() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    s3.put("/crawl", b"");
    let fixture = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/mixed.jsonl"),
    )
    .unwrap();
    s3.put("/crawl/in/a.jsonl", &fixture);
    // A run's outputs and kept dataset written below the input prefix.
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-i", "s3://crawl/in/", "-o", "s3://crawl/in/run1"]);
    cmd.args(["--write-kept", "s3://crawl/in/kept1"]);
    let first = run(cmd, Duration::from_secs(120));
    assert!(first.status.success(), "{first:?}");
    // The next run over the prefix (spelled with its slash) reads the input alone.
    let out = dir.path().join("again");
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-i", "s3://crawl/in/", "-o"]).arg(&out);
    let again = run(cmd, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(
        stderr.contains("s3://crawl/in/run1") && stderr.contains("s3://crawl/in/kept1"),
        "{stderr}"
    );
    assert_eq!(summary(&out)["input_files"], 1);

    // The object replaced while the run is held after reading it: the kept copy, read
    // again, would come from the new version; every read is pinned to the listed one.
    let go = dir.path().join("go");
    let mut cmd = s3.neardup();
    cmd.args(["dedup", "-q", "-i", "s3://crawl/in/a.jsonl", "-o"]).arg(dir.path().join("held"));
    cmd.arg("--write-kept").arg(dir.path().join("kept"));
    cmd.env("NEARDUP_FAILPOINTS", format!("after-reading-and-signing=wait:{}", go.display()));
    let mut held = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let (said, rest) = support::read_until(&mut held, "waiting for");
    let mut changed = fixture.clone();
    changed.extend_from_slice(b"{\"id\":\"late\",\"text\":\"written while the run read\"}\n");
    s3.put("/crawl/in/a.jsonl", &changed);
    std::fs::write(&go, b"").unwrap();
    let status = held.wait().unwrap();
    let rest = rest.join().unwrap();
    assert_eq!(status.code(), Some(1), "{said}{rest}");
    assert!(
        rest.contains("s3://crawl/in/a.jsonl") && rest.contains("changed since the run listed it"),
        "{rest}"
    );
    assert!(
        !dir.path().join("held/_SUCCESS").exists() && !dir.path().join("kept/_SUCCESS").exists()
    );
}

#[test]
fn reading_from_a_missing_bucket_fails_naming_it() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let truth = dir.path().join("truth.jsonl");
    std::fs::write(&truth, "{\"id\":\"a\",\"label\":\"x\"}\n{\"id\":\"b\",\"label\":\"x\"}\n")
        .unwrap();
    let (out, truth) = (out.to_str().unwrap(), truth.to_str().unwrap());
    let dedup = ["dedup", "-q", "-o", out];
    for (address, args) in [
        ("s3://absent/in/", [&dedup[..], &["-i", "s3://absent/in/"]].concat()),
        ("s3://absent/in/a.jsonl", [&dedup[..], &["-i", "s3://absent/in/a.jsonl"]].concat()),
        (
            "s3://absent/inputs.txt",
            [&dedup[..], &["--input-list", "s3://absent/inputs.txt"]].concat(),
        ),
        ("s3://absent/idx", vec!["index", "show", "--index", "s3://absent/idx"]),
        ("s3://absent/run", vec!["eval", "--truth", truth, "--run", "s3://absent/run"]),
    ] {
        let mut cmd = s3.neardup();
        cmd.args(args);
        let done = run(cmd, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success(), "{address}: {stderr}");
        assert!(stderr.contains(&format!("\"{address}")), "{address}: {stderr}");
        assert!(stderr.contains("no such bucket \"absent\""), "{address}: {stderr}");
        assert!(!stderr.contains('<'), "{address}: the server's XML: {stderr}");
    }
}

#[test]
fn http_inputs_stream_through_server_faults_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let served = Files::serve(&dir.path().join("in"));
    let names = ["web/crawl.wet.gz", "mixed.jsonl", "poems.jsonl.gz"];
    let local_out = dir.path().join("local");
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o"]).arg(&local_out).arg("-i");
    for name in names {
        cmd.arg(&files.iter().find(|(n, _)| n == name).unwrap().1);
    }
    assert!(run(cmd, Duration::from_secs(120)).status.success());

    // Two 503 answers, then the WET's body cut off halfway: retried, and resumed at the
    // byte it reached (of the same version), each retry counted once.
    *served.faulty.lock().unwrap() = "crawl.wet.gz".into();
    served.fail.store(2, Ordering::Relaxed);
    served.cut.store(1, Ordering::Relaxed);
    let remote_out = dir.path().join("remote");
    // The list is served too, gzipped with relative lines, as Common Crawl's wet.paths.gz.
    let lines: String = names.iter().map(|n| format!("{n}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(format!("# served on loopback\n{lines}").as_bytes()).unwrap();
    std::fs::write(dir.path().join("in/paths.gz"), gz.finish().unwrap()).unwrap();
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o"]).arg(&remote_out);
    cmd.args(["--input-list", &served.url("paths.gz"), "--input-base", &served.url("")]);
    let remote = run(cmd, Duration::from_secs(120));
    assert!(remote.status.success(), "{remote:?}");
    assert_eq!(results(&remote_out), results(&local_out));
    assert_eq!(summary(&remote_out)["counts"], summary(&local_out)["counts"]);
    assert_eq!(summary(&remote_out)["remote_retries"], 3);
    assert_eq!((served.fail.load(Ordering::Relaxed), served.cut.load(Ordering::Relaxed)), (0, 0));
    assert!(served.gets.load(Ordering::Relaxed) >= 7);

    // An address the server does not have is an error naming it.
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-o"]).arg(dir.path().join("failed"));
    cmd.args(["-i", &served.url("gone.wet.gz")]);
    let failed = run(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&served.url("gone.wet.gz")), "{stderr}");
}

#[test]
fn remote_parquet_reads_only_the_columns_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let parquet = &files.iter().find(|(n, _)| n == "tables/poems.parquet").unwrap().1;
    let served = Files::serve(&dir.path().join("in"));
    same_local_and_remote(dir.path(), parquet, &served.url("tables/poems.parquet"), "1");
    // The unread column is most of the file: ranged reads leave it on the server.
    let size = std::fs::metadata(parquet).unwrap().len() as usize;
    let sent = served.sent.load(Ordering::Relaxed);
    assert!(sent < size / 3, "{sent} of {size} bytes sent");
}

/// One plain JSON Lines object and two workers: each worker reads its byte range, found
/// by seeking (ranged requests), as on disk.
#[test]
fn remote_json_lines_split_between_workers_by_byte_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let jsonl = &files.iter().find(|(n, _)| n == "mixed.jsonl").unwrap().1;
    let served = Files::serve(&dir.path().join("in"));
    let gets_before = served.gets.load(Ordering::Relaxed);
    same_local_and_remote(dir.path(), jsonl, &served.url("mixed.jsonl"), "2");
    // Counting line starts and reading: at least one ranged request per worker each.
    assert!(served.gets.load(Ordering::Relaxed) - gets_before >= 4);
}

/// Web pages are read in passes (templates are learned, for SimHash document frequencies
/// counted, before signing), but the archive is downloaded and parsed once: the first pass
/// keeps its records, in memory or spilled under a small budget, for the passes after it.
/// Only the report reads it again, up to the last document it quotes (the server sends
/// the whole body all the same).
#[test]
fn a_web_archive_is_downloaded_once_however_many_passes_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let local = &files.iter().find(|(n, _)| n == "web/pages.warc.gz").unwrap().1;
    let size = std::fs::metadata(local).unwrap().len() as usize;
    let served = Files::serve(&dir.path().join("in"));
    let cases: [&[&str]; 3] =
        [&[], &["--memory-budget", "1M"], &["--method", "simhash", "--memory-budget", "1M"]];
    for (i, args) in cases.iter().enumerate() {
        let decide = |input: &std::ffi::OsStr, name: &str| {
            let out = dir.path().join(format!("{name}-{i}"));
            let mut cmd = neardup();
            cmd.args(["dedup", "-q", "-w", "2", "-o"]).arg(&out).arg("-i").arg(input);
            cmd.args(*args);
            let done = run(cmd, Duration::from_secs(120));
            assert!(done.status.success(), "{done:?}");
            out
        };
        let (gets, sent) =
            (served.gets.load(Ordering::Relaxed), served.sent.load(Ordering::Relaxed));
        let remote = decide(served.url("web/pages.warc.gz").as_ref(), "remote");
        assert_eq!(served.gets.load(Ordering::Relaxed) - gets, 2, "{args:?}");
        assert_eq!(served.sent.load(Ordering::Relaxed) - sent, 2 * size, "{args:?}");
        let local = decide(local.as_os_str(), "local");
        assert_eq!(results(&remote), results(&local), "{args:?}");
        let s = summary(&remote);
        assert!(s["boilerplate"]["learned_lines"].as_u64().unwrap() > 0, "{s}");
        if !args.is_empty() {
            assert!(s["spilled_bytes"].as_u64().unwrap() > 0, "{s}");
        }
    }
}

/// JSON Lines with URLs learn templates too; one plain file and two workers read it by byte
/// ranges, which the first pass counts the line starts of. Later passes take that plan
/// and the records the first pass kept, so the file is fetched as often as by a run that
/// learns nothing.
#[test]
fn json_lines_with_urls_are_fetched_as_often_as_without_templates() {
    let dir = tempfile::tempdir().unwrap();
    let served_dir = dir.path().join("in");
    std::fs::create_dir_all(&served_dir).unwrap();
    let mut lines = String::new();
    for i in 0..400 {
        let host = ["a.example", "b.example", "c.example"][i % 3];
        // Two pages of every story, named in letters: a line that differs only in its
        // numbers is one line to template learning.
        let story: String = format!("{:x}", i / 2)
            .chars()
            .map(|c| (b'g' + c.to_digit(16).unwrap() as u8) as char)
            .collect();
        lines.push_str(&format!(
            "{{\"id\": \"p{i}\", \"url\": \"https://{host}/story/{i}\", \"text\": \
             \"Home | News | Sport\\nStory {story}: the harbour board met on day {story} and \
             agreed to repaint the old lighthouse before the winter storms arrive\\n\
             Copyright {host} all rights reserved\"}}\n"
        ));
    }
    std::fs::write(served_dir.join("pages.jsonl"), lines).unwrap();
    std::fs::write(dir.path().join("plain.toml"), "[boilerplate]\nenabled = false\n").unwrap();
    let served = Files::serve(&served_dir);
    let gets = |name: &str, args: &[&str]| {
        let before = served.gets.load(Ordering::Relaxed);
        let out = dir.path().join(name);
        let mut cmd = neardup();
        cmd.args(["dedup", "-q", "-w", "2", "-o"]).arg(&out);
        cmd.args(["-i", &served.url("pages.jsonl")]).args(args);
        let done = run(cmd, Duration::from_secs(120));
        assert!(done.status.success(), "{done:?}");
        (served.gets.load(Ordering::Relaxed) - before, summary(&out))
    };
    let plain_toml = dir.path().join("plain.toml");
    let (plain, _) = gets("plain", &["--job", plain_toml.to_str().unwrap()]);
    let (learned, s) = gets("learned", &[]);
    assert!(s["boilerplate"]["learned_from_pages"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(learned, plain, "GET requests with and without template learning");
}
