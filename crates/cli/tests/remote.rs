//! Inputs in object storage and over HTTP, read from real servers on 127.0.0.1: moto's
//! S3-compatible server (PyPI `moto[server]`, which `.ci/run` installs) and a small HTTP
//! file server in this file that answers ranges and can fail on purpose (serving a
//! gzipped paths file and its WET files, as Common Crawl publishes them). A run over remote
//! inputs must equal the same run over the same files on disk, and transient server faults
//! must cost retries, never records.
//!
//! Without `moto_server` (on PATH, in `NEARDUP_MOTO_SERVER`, or in `target/ci-venv`) the S3
//! tests say so and pass, unless `NEARDUP_REQUIRE_S3=1`, which `.ci/run` sets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use neardup_io::{read_documents, read_pairs};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn neardup() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs a command with a deadline, so a hang fails the test instead of blocking it.
fn run(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("did not finish within {limit:?}: {:?}", child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// One HTTP/1.1 request on a fresh connection: the status and the body.
fn request(port: u16, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // A form content type would make moto's server parse the body as a form.
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: \
         application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let start = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(answer.len(), |i| i + 4);
    (status, answer[start..].to_vec())
}

/// moto's S3 server on a free loopback port, stopped when dropped.
struct S3 {
    child: Child,
    port: u16,
}

impl S3 {
    /// Starts the server, or says why not and returns `None` (a failure instead under
    /// `NEARDUP_REQUIRE_S3=1`).
    fn start() -> Option<S3> {
        let candidates = [
            std::env::var("NEARDUP_MOTO_SERVER").ok().map(PathBuf::from),
            Some(PathBuf::from("moto_server")),
            Some(repo().join("target/ci-venv/bin/moto_server")),
        ];
        let program = candidates
            .into_iter()
            .flatten()
            .find(|p| Command::new(p).arg("--help").output().is_ok_and(|o| o.status.success()));
        let Some(program) = program else {
            let message =
                "moto_server not found (pip install 'moto[server]'): S3 inputs not tested";
            assert!(std::env::var("NEARDUP_REQUIRE_S3").is_err(), "{message}");
            eprintln!("{message}");
            return None;
        };
        // The port is free when chosen, but another test may take it before the server
        // binds it: a server that exits is started again on another port.
        for _ in 0..5 {
            let port = free_port();
            let child = Command::new(&program)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut s3 = S3 { child, port };
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if s3.child.try_wait().unwrap().is_some() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // Ours, not another test's listener: moto answers a bucket listing.
                    let (status, body) = request(port, "GET", "/", b"");
                    if status == 200 && String::from_utf8_lossy(&body).contains("ListAllMyBuckets")
                    {
                        return Some(s3);
                    }
                    break;
                }
                assert!(Instant::now() < deadline, "moto_server did not start");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("moto_server did not start on a free port in five tries")
    }

    fn put(&self, path: &str, body: &[u8]) {
        let (status, answer) = request(self.port, "PUT", path, body);
        assert_eq!(status, 200, "PUT {path}: {}", String::from_utf8_lossy(&answer));
    }

    /// `neardup` with this server as its S3 endpoint.
    fn neardup(&self) -> Command {
        let mut cmd = neardup();
        cmd.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN");
        cmd
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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

/// What a run decided, without where its inputs were: documents by position, pairs by ids.
fn results(out: &Path) -> (Vec<String>, Vec<String>) {
    let mut docs = read_documents(&out.join("documents")).unwrap();
    docs.sort_by_key(|d| d.doc);
    let docs = docs
        .iter()
        .map(|d| {
            format!(
                "{:?} {:?} {} {:?} {:?} {:?}",
                d.doc,
                d.id,
                d.decision.as_str(),
                d.cluster,
                d.duplicate_of,
                d.reason.map(|r| r.as_str())
            )
        })
        .collect();
    let mut pairs: Vec<String> = read_pairs(&out.join("pairs"))
        .unwrap()
        .iter()
        .map(|p| format!("{} {} {} {:.6}", p.id_a, p.id_b, p.kind.as_str(), p.similarity))
        .collect();
    pairs.sort();
    (docs, pairs)
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
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

/// A Parquet file of poems (`id`, `text`) with a large column no run reads (`scan`, 4 KB
/// of digits per row), in row groups of 250.
fn write_parquet(path: &Path) {
    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let text =
        std::io::read_to_string(flate2::read::GzDecoder::new(std::fs::File::open(poems).unwrap()))
            .unwrap();
    let rows: Vec<serde_json::Value> =
        text.lines().take(2000).map(|l| serde_json::from_str(l).unwrap()).collect();
    let field = |r: &serde_json::Value, f: &str| r[f].as_str().unwrap().to_string();
    let mut state = 7u64;
    let scan: Vec<String> = (0..rows.len())
        .map(|_| {
            (0..4096)
                .map(|_| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    char::from(b'0' + (state >> 60) as u8 % 10)
                })
                .collect()
        })
        .collect();
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("scan", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| field(r, "id")))),
            Arc::new(StringArray::from_iter_values(scan)),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| field(r, "text")))),
        ],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(250))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// The same inputs in a local folder and their names under a prefix.
fn inputs(dir: &Path) -> Vec<(String, PathBuf)> {
    let samples = repo().join("data-samples");
    let mixed = repo().join("tests/fixtures/mixed.jsonl");
    let files = [
        ("poems.jsonl.gz", samples.join("zh-tang-poems/poems.jsonl.gz")),
        ("court/openings.jsonl.gz", samples.join("zh-court-openings/openings.jsonl.gz")),
        ("web/pages.warc.gz", samples.join("web-templated/pages.warc.gz")),
        ("web/crawl.wet.gz", samples.join("crawlset/pages.wet.gz")),
        ("mixed.jsonl", mixed),
    ];
    let mut made: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|(name, source)| {
            let local = dir.join("in").join(name);
            std::fs::create_dir_all(local.parent().unwrap()).unwrap();
            std::fs::copy(&source, &local).unwrap();
            (name.to_string(), local)
        })
        .collect();
    let parquet = dir.join("in/tables/poems.parquet");
    std::fs::create_dir_all(parquet.parent().unwrap()).unwrap();
    write_parquet(&parquet);
    made.push(("tables/poems.parquet".into(), parquet));
    made
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
        ("s3://nobucket/in", "NoSuchBucket"),
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
