//! `az://` outputs, kept dataset, index and inputs against Azurite, Microsoft's Azure Blob
//! Storage emulator, started on 127.0.0.1 by the test (npm `azurite`, which `.ci/run`
//! installs into `target/ci-node`). Without `azurite-blob` (on PATH, in
//! `NEARDUP_AZURITE`, or in `target/ci-node`) the test prints a `SKIPPED` line that
//! `cargo test` shows and passes, unless `NEARDUP_REQUIRE_AZURE=1`, which `.ci/run` sets.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use support::{Server, neardup, repo, results, run, summary};

/// Azurite's well-known account and key.
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Azurite's blob service on a free loopback port, stopped when dropped.
struct Azurite {
    server: Server,
}

impl Azurite {
    fn start() -> Option<Azurite> {
        let program = support::find_server(
            "azurite-blob",
            "NEARDUP_AZURITE",
            "target/ci-node/node_modules/.bin/azurite-blob",
            "NEARDUP_REQUIRE_AZURE",
            "npm install --prefix target/ci-node azurite@3.35.0",
        )?;
        let command = |port: u16| {
            let mut cmd = Command::new(&program);
            cmd.args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()]).args([
                "--inMemoryPersistence",
                "--skipApiVersionCheck",
                "--silent",
            ]);
            cmd
        };
        // Azurite answers a signed container listing.
        let answers = |port| request(port, "GET", "", "comp=list", &[], b"").0 == 200;
        Some(Azurite { server: Server::start("azurite-blob", command, answers) })
    }

    /// One signed request to this server (see [`request`]).
    fn request(
        &self,
        method: &str,
        path: &str,
        query: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Vec<u8>) {
        request(self.server.port, method, path, query, headers, body)
    }

    /// The blob names under `prefix` of `container`, sorted.
    fn list(&self, container: &str, prefix: &str) -> Vec<String> {
        let query = format!("comp=list&prefix={prefix}&restype=container");
        let (status, body) = self.request("GET", container, &query, &[], b"");
        let text = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "{text}");
        let mut names: Vec<String> = text
            .split("<Name>")
            .skip(1)
            .map(|s| s[..s.find("</Name>").unwrap()].to_string())
            .collect();
        names.sort();
        names
    }

    /// Copies the blobs under `prefix` of `container` into `dir`.
    fn download(&self, container: &str, prefix: &str, dir: &Path) {
        for name in self.list(container, prefix) {
            let (status, body) = self.request("GET", &format!("{container}/{name}"), "", &[], b"");
            assert_eq!(status, 200, "{name}");
            let local = dir.join(name.strip_prefix(prefix).unwrap().trim_start_matches('/'));
            std::fs::create_dir_all(local.parent().unwrap()).unwrap();
            std::fs::write(local, body).unwrap();
        }
    }

    /// `neardup` with this emulator as its Azure endpoint.
    fn neardup(&self) -> Command {
        let mut cmd = neardup();
        cmd.env("AZURE_STORAGE_USE_EMULATOR", "true")
            .env("AZURITE_BLOB_STORAGE_URL", format!("http://127.0.0.1:{}", self.server.port))
            .env("AZURE_ALLOW_HTTP", "true")
            .env("NEARDUP_UPLOAD_PART_SIZE", support::PART_SIZE.to_string());
        cmd
    }
}

/// One request to Azurite on `port`, signed with the account key (Shared Key): `path`
/// below the account, `query` as `a=b&c=d` (sorted by name).
fn request(
    port: u16,
    method: &str,
    path: &str,
    query: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let date = "Wed, 25 Nov 2026 00:00:00 GMT";
    let mut ms_headers: Vec<(String, String)> =
        vec![("x-ms-date".into(), date.into()), ("x-ms-version".into(), "2021-08-06".into())];
    ms_headers.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    ms_headers.sort();
    let canonical_headers: String = ms_headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let mut resource = format!("/{ACCOUNT}/{ACCOUNT}/{path}");
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap();
        resource.push_str(&format!("\n{k}:{v}"));
    }
    let length = if body.is_empty() { String::new() } else { body.len().to_string() };
    let content_type = "application/octet-stream";
    let to_sign = format!(
        "{method}\n\n\n{length}\n\n{content_type}\n\n\n\n\n\n\n{canonical_headers}{resource}"
    );
    let engine = base64::engine::general_purpose::STANDARD;
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &engine.decode(KEY).unwrap());
    let signature = engine.encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());

    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let target = if query.is_empty() {
        format!("/{ACCOUNT}/{path}")
    } else {
        format!("/{ACCOUNT}/{path}?{query}")
    };
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nAuthorization: SharedKey {ACCOUNT}:{signature}\r\n\
         Connection: close\r\n",
        port,
        body.len()
    );
    for (k, v) in &ms_headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    support::read_answer(&mut stream)
}

#[test]
fn azure_blob_storage_holds_outputs_kept_dataset_index_and_inputs() {
    let Some(azurite) = Azurite::start() else { return };
    let (status, body) = azurite.request("PUT", "crawl", "restype=container", &[], b"");
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
    let dir = tempfile::tempdir().unwrap();
    let samples = repo().join("data-samples");
    let inputs = [samples.join("zh-tang-poems/poems.jsonl.gz"), samples.join("zh-court-openings")];

    // Outputs, kept dataset and index in the container equal the same on disk.
    let (out, kept, index) =
        (dir.path().join("out"), dir.path().join("kept"), dir.path().join("idx"));
    let mut cmd = neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o"]).arg(&out).arg("--write-kept").arg(&kept);
    cmd.arg("--index").arg(&index).arg("-i").args(&inputs);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    let mut cmd = azurite.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o", "az://crawl/out", "--write-kept", "az://crawl/kept"]);
    cmd.args(["--index", "az://crawl/idx", "-i"]).args(&inputs);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    let fetched = dir.path().join("fetched");
    azurite.download("crawl", "out", &fetched.join("out"));
    azurite.download("crawl", "kept", &fetched.join("kept"));
    assert_eq!(results(&fetched.join("out")), results(&out));
    let kept_names = azurite.list("crawl", "kept/");
    assert_eq!(kept_names.len(), 4, "{kept_names:?}");
    for entry in std::fs::read_dir(&kept).unwrap() {
        let name = entry.unwrap().file_name();
        let remote = std::fs::read(fetched.join("kept").join(&name)).unwrap();
        assert!(remote == std::fs::read(kept.join(&name)).unwrap(), "{name:?} differs");
    }
    assert!(!azurite.list("crawl", "").iter().any(|n| n.ends_with(".lock")));

    // The kept dataset read back from the container: every record, nothing lost.
    let mut cmd = azurite.neardup();
    cmd.args(["dedup", "-q", "-i", "az://crawl/kept", "-o"]).arg(dir.path().join("again"));
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    assert_eq!(
        summary(&dir.path().join("again"))["counts"]["records"],
        summary(&out)["counts"]["kept"]
    );

    // The same inputs against the index in the container: all found in the first run.
    let mut cmd = azurite.neardup();
    cmd.args(["dedup", "-q", "-w", "2", "-o", "az://crawl/second", "--index", "az://crawl/idx"]);
    cmd.arg("-i").args(&inputs);
    let done = run(cmd, Duration::from_secs(120));
    assert!(done.status.success(), "{done:?}");
    azurite.download("crawl", "second", &fetched.join("second"));
    let second = summary(&fetched.join("second"));
    assert_eq!(second["counts"]["kept"], 0, "{second}");
    let (status, manifest) = azurite.request("GET", "crawl/idx/index.json", "", &[], b"");
    assert_eq!(status, 200);
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(manifest["generations"].as_array().unwrap().len(), 2);

    // A missing container is named, without the emulator's XML.
    let mut cmd = azurite.neardup();
    cmd.args(["dedup", "-q", "-o", "az://absent/out", "-i"]).args(&inputs);
    let done = run(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success(), "{stderr}");
    assert!(stderr.contains("\"az://absent/out/.lock\": no such container \"absent\""), "{stderr}");
}
