//! Shared by the command's tests: the repository and the built command ([`repo`],
//! [`neardup`]), runs with a deadline, and for the tests that run against servers on
//! 127.0.0.1, moto's S3-compatible server (PyPI `moto[server]`, which `.ci/run` installs),
//! started and stopped by [`S3`], and the inputs and readings the tests compare.
//!
//! Without `moto_server` (on PATH, in `NEARDUP_MOTO_SERVER`, or in `target/ci-venv`) each S3
//! test prints a `SKIPPED` line that `cargo test` shows and passes, unless
//! `NEARDUP_REQUIRE_S3=1`, which `.ci/run` sets.

// Each test file uses part of this.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use neardup_io::{read_documents, read_pairs};

/// The part size the tests upload with (the server below accepts parts this small), so
/// that kept files and parts of a few hundred kilobytes are multipart uploads.
pub const PART_SIZE: usize = 64 * 1024;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn neardup() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The loopback ports the processes of a distributed run listen on are chosen here, below the
/// kernel's ephemeral range (32768 and up on Linux): a port the kernel handed out with
/// `bind(":0")` and that the test released goes back to that range, and any outgoing
/// connection on the machine (another test's processes connecting) may be given it before
/// the run's process listens on it. Each test process starts at its own place (its pid).
const PROCESS_PORTS: std::ops::Range<u32> = 20_000..32_000;

/// `n` loopback ports that bind now, none handed out twice by this test process.
pub fn process_ports(n: usize) -> Vec<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let span = PROCESS_PORTS.end - PROCESS_PORTS.start;
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(7_919) % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    let mut ports = Vec::new();
    while ports.len() < n {
        let at = NEXT.fetch_add(1, Ordering::Relaxed) % span;
        let port = u16::try_from(PROCESS_PORTS.start + at).expect("a port");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    ports
}

/// A hostfile for `n` processes on loopback ports ([`process_ports`]), in `dir`.
pub fn hostfile(dir: &Path, n: usize) -> PathBuf {
    let text: String = process_ports(n).iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    let path = dir.join("hosts.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs a command with a deadline, so a hang fails the test instead of blocking it.
pub fn run(mut cmd: Command, limit: Duration) -> Output {
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
pub fn request(port: u16, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // A form content type would make moto's server parse the body as a form. moto refuses
    // anonymous reads but does not check signatures: any AWS4 authorization header passes.
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: \
         application/octet-stream\r\nContent-Length: {}\r\nAuthorization: AWS4-HMAC-SHA256 \
         Credential=test/20261125/us-east-1/s3/aws4_request, SignedHeaders=host, \
         Signature=0\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    read_answer(&mut stream)
}

/// Reads an HTTP/1.1 answer to the end of the connection: the status and the body (a
/// chunked body joined).
pub fn read_answer(stream: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let start = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(answer.len(), |i| i + 4);
    let head = String::from_utf8_lossy(&answer[..start]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = &answer[start..];
    let body =
        if head.contains("transfer-encoding: chunked") { unchunk(body) } else { body.to_vec() };
    (status, body)
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 2 + size + 2..];
    }
}

/// The server program `name` (from the variable `named_by`, PATH, or `ci_path` below the
/// repository), or `None` after saying the test skips (see [`neardup_testkit::skip`]); a
/// failure instead when `required_by` is set.
pub fn find_server(
    name: &str,
    named_by: &str,
    ci_path: &str,
    required_by: &str,
    install: &str,
) -> Option<PathBuf> {
    let candidates = [
        std::env::var(named_by).ok().map(PathBuf::from),
        Some(PathBuf::from(name)),
        Some(repo().join(ci_path)),
    ];
    let program = candidates
        .into_iter()
        .flatten()
        .find(|p| Command::new(p).arg("--help").output().is_ok_and(|o| o.status.success()));
    if program.is_none() {
        neardup_testkit::skip(&format!("{name} not found ({install})"), required_by);
    }
    program
}

/// A server a test started on a free loopback port, stopped when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `command(port)` on a free port and waits until `answers(port)` shows the
    /// listener is the server's, not another test's. The port is free when chosen, but
    /// another test may take it before the server binds it: a server that exits, or a
    /// listener that does not answer as it should, is started again on another port.
    pub fn start(
        name: &str,
        command: impl Fn(u16) -> Command,
        answers: impl Fn(u16) -> bool,
    ) -> Server {
        for _ in 0..5 {
            let port = free_port();
            let child = command(port).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            let mut server = Server { child, port };
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if server.child.try_wait().unwrap().is_some() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    if answers(port) {
                        return server;
                    }
                    break;
                }
                assert!(Instant::now() < deadline, "{name} did not start");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("{name} did not start on a free port in five tries")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// moto's S3 server on a free loopback port, stopped when dropped.
pub struct S3 {
    server: Server,
}

impl S3 {
    /// Starts the server, or says why not and returns `None` (a failure instead under
    /// `NEARDUP_REQUIRE_S3=1`).
    pub fn start() -> Option<S3> {
        let program = find_server(
            "moto_server",
            "NEARDUP_MOTO_SERVER",
            "target/ci-venv/bin/moto_server",
            "NEARDUP_REQUIRE_S3",
            "python3 -m venv target/ci-venv && target/ci-venv/bin/pip install 'moto[server]==5.2.5'",
        )?;
        let command = |port: u16| {
            let mut cmd = Command::new(&program);
            cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .env("S3_UPLOAD_PART_MIN_SIZE", PART_SIZE.to_string());
            cmd
        };
        // moto answers a bucket listing.
        let answers = |port| {
            let (status, body) = request(port, "GET", "/", b"");
            status == 200 && String::from_utf8_lossy(&body).contains("ListAllMyBuckets")
        };
        Some(S3 { server: Server::start("moto_server", command, answers) })
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    pub fn put(&self, path: &str, body: &[u8]) {
        let (status, answer) = request(self.port(), "PUT", path, body);
        assert_eq!(status, 200, "PUT {path}: {}", String::from_utf8_lossy(&answer));
    }

    /// `neardup` with this server as its S3 endpoint.
    pub fn neardup(&self) -> Command {
        let mut cmd = neardup();
        cmd.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port()))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1")
            .env("NEARDUP_UPLOAD_PART_SIZE", PART_SIZE.to_string())
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN");
        cmd
    }
}

impl S3 {
    /// The keys under `prefix` of `bucket` with their sizes, sorted (one page: up to 1000).
    pub fn list(&self, bucket: &str, prefix: &str) -> Vec<(String, u64)> {
        let (status, body) =
            request(self.port(), "GET", &format!("/{bucket}?list-type=2&prefix={prefix}"), b"");
        let text = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "{text}");
        let mut keys: Vec<(String, u64)> = text
            .split("<Contents>")
            .skip(1)
            .map(|c| {
                let field = |name: &str| {
                    let start = c.find(&format!("<{name}>")).unwrap() + name.len() + 2;
                    c[start..start + c[start..].find('<').unwrap()].to_string()
                };
                (field("Key"), field("Size").parse().unwrap())
            })
            .collect();
        keys.sort();
        keys
    }

    /// The object at `/bucket/key`, or `None` when there is none.
    pub fn get(&self, path: &str) -> Option<Vec<u8>> {
        let (status, body) = request(self.port(), "GET", path, b"");
        match status {
            200 => Some(body),
            404 => None,
            other => panic!("GET {path}: {other}: {}", String::from_utf8_lossy(&body)),
        }
    }

    /// Copies the objects under `prefix` of `bucket` into `dir`, keeping their relative names.
    pub fn download(&self, bucket: &str, prefix: &str, dir: &Path) {
        for (key, _) in self.list(bucket, prefix) {
            let local = dir.join(key.strip_prefix(prefix).unwrap().trim_start_matches('/'));
            std::fs::create_dir_all(local.parent().unwrap()).unwrap();
            std::fs::write(local, self.get(&format!("/{bucket}/{key}")).unwrap()).unwrap();
        }
    }
}

/// Reads the child's stderr until a line holds `needle`, then keeps reading it in the
/// background; returns the lines so far and the rest, once the child ends.
pub fn read_until(child: &mut Child, needle: &str) -> (String, std::thread::JoinHandle<String>) {
    let mut reader = std::io::BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        assert!(read > 0, "no line with {needle:?}: {seen}");
        seen.push_str(&line);
        if line.contains(needle) {
            break;
        }
    }
    let rest = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        rest
    });
    (seen, rest)
}

/// What a run decided, without where its inputs were: documents by position, pairs by ids.
pub fn results(out: &Path) -> (Vec<String>, Vec<String>) {
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

pub fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

/// A Parquet file of poems (`id`, `text`) with a large column no run reads (`scan`, 4 KB
/// of digits per row), in row groups of 250.
pub fn write_parquet(path: &Path) {
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
pub fn inputs(dir: &Path) -> Vec<(String, PathBuf)> {
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

/// A proxy on loopback in front of a server that can lose answers: the next `lose`
/// requests whose method and path start with `target` (like `PUT /crawl/idx/index.json`)
/// reach the server, but their answers are dropped and the client's connection closed, as
/// when a network fails after the server acted. One request per connection.
pub struct LossyProxy {
    pub port: u16,
    pub target: Arc<std::sync::Mutex<String>>,
    pub lose: Arc<std::sync::atomic::AtomicUsize>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LossyProxy {
    pub fn start(server: u16) -> LossyProxy {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Arc::new(std::sync::Mutex::new(String::new()));
        let (lose, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let thread = {
            let (target, lose, stop) = (target.clone(), lose.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            let (target, lose) = (target.clone(), lose.clone());
                            std::thread::spawn(move || {
                                let _ = relay(client, server, &target, &lose);
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        LossyProxy { port, target, lose, stop, thread: Some(thread) }
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Relays one request to `server` and its answer back, unless the answer is to be lost.
fn relay(
    mut client: TcpStream,
    server: u16,
    target: &std::sync::Mutex<String>,
    lose: &std::sync::atomic::AtomicUsize,
) -> std::io::Result<()> {
    use std::io::BufRead;
    client.set_nonblocking(false)?;
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = std::io::BufReader::new(client.try_clone()?);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let lower = line.to_ascii_lowercase();
        if let Some(n) = lower.strip_prefix("content-length:") {
            length = n.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("connection:") {
            continue;
        }
        if line == "\r\n" {
            head.push_str("Connection: close\r\n\r\n");
            break;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut upstream = TcpStream::connect(("127.0.0.1", server))?;
    upstream.write_all(head.as_bytes())?;
    upstream.write_all(&body)?;
    let mut answer = Vec::new();
    upstream.read_to_end(&mut answer)?;
    let wanted = target.lock().unwrap().clone();
    let lost = !wanted.is_empty()
        && head.starts_with(&wanted)
        && lose
            .fetch_update(
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
                |n| n.checked_sub(1),
            )
            .is_ok();
    if !lost {
        client.write_all(&answer)?;
    }
    client.shutdown(std::net::Shutdown::Both)
}
