//! Inputs in object storage and behind HTTP: `s3://bucket/key` (or `s3a://`) and
//! `http://` / `https://` addresses, read through the Arrow project's `object_store` client.
//!
//! A remote input keeps its address as its [`InputFile`](crate::InputFile) path, so that
//! error messages, document sources and the input list name it as the user wrote it. Its
//! bytes come in as they arrive: [`RemoteReader`] streams one GET (from an offset after a
//! seek) through a small channel, so a `.warc.gz` is decompressed while it downloads and is
//! never held whole. Parquet reads the byte ranges it needs ([`RemoteObject`]).
//!
//! Requests run on one small tokio runtime per process, beside the dataflow's threads,
//! which only wait on channels. `object_store`'s own retries are off: a request that fails
//! for a transient reason (a timeout, a dropped connection, a 5xx or throttling answer) is
//! retried here with exponential backoff, a body cut off mid-stream resumes from the byte
//! it reached, and every retry is counted ([`retries`]) for `summary.json`. What cannot
//! succeed (not found, access denied) fails at once.
//!
//! Credentials and endpoints come from the environment as in the AWS tools:
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT`) for an S3-compatible server, `AWS_ALLOW_HTTP=true`
//! for one on plain http, `AWS_SKIP_SIGNATURE=true` for anonymous requests; without keys,
//! instance metadata.

use std::collections::HashMap;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::multipart::MultipartStore;
use object_store::path::Path as Key;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};
use tokio::runtime::Runtime;

pub(crate) mod read;
pub(crate) mod write;

pub use read::{RemoteObject, RemoteReader};
pub use write::{
    Condition, DEFAULT_PART_SIZE, PART_SIZE_ENV, Upload, delete, get, part_size, put_if,
};

/// Attempts of one request before its error is final.
const ATTEMPTS: u32 = 8;
/// Wait before the first retry; it doubles each time up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Chunks of a body buffered ahead of the reader (each as the server sent it, typically
/// 8 to 64 KiB).
const CHANNEL_CHUNKS: usize = 64;

/// Requests retried since the process started.
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// Requests retried since the process started (transient failures, including bodies cut
/// off and resumed).
pub fn retries() -> u64 {
    RETRIES.load(Ordering::Relaxed)
}

/// The schemes of object storage: S3 (and S3-compatible stores), Google Cloud Storage,
/// Azure Blob Storage.
const STORAGE_SCHEMES: [&str; 7] =
    ["s3://", "s3a://", "gs://", "az://", "azure://", "abfs://", "abfss://"];
/// The schemes read over HTTP.
const HTTP_SCHEMES: [&str; 2] = ["http://", "https://"];

/// Whether `path` is a remote address (object storage, `http://`, `https://`) rather than
/// a local path.
pub fn is_remote(path: &Path) -> bool {
    path.to_str()
        .is_some_and(|p| STORAGE_SCHEMES.iter().chain(&HTTP_SCHEMES).any(|s| p.starts_with(s)))
}

/// Whether `path` is an address that can be listed like a folder (object storage, not HTTP).
pub fn is_listable(path: &Path) -> bool {
    path.to_str().is_some_and(|p| STORAGE_SCHEMES.iter().any(|s| p.starts_with(s)))
}

/// The process's runtime for requests, made on first use.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("neardup-remote")
            .enable_all()
            .build()
            .expect("a tokio runtime for remote inputs")
    })
}

/// One object: its store and its key there.
#[derive(Clone)]
struct Location {
    store: Arc<dyn ObjectStore>,
    /// The same store's multipart uploads (object storage; HTTP is read only).
    multipart: Option<Arc<dyn MultipartStore>>,
    key: Key,
    /// The address as given, for messages.
    address: String,
    /// The version (ETag) every read must come from, when the object is pinned to the one
    /// its run listed: a read of another version fails instead of mixing two.
    version: Option<String>,
}

/// Splits an address into scheme, authority (bucket or host and port) and the rest.
fn split(address: &str) -> io::Result<(&str, &str, &str)> {
    let invalid =
        || io::Error::new(io::ErrorKind::InvalidInput, format!("not an address: {address}"));
    let (scheme, rest) = address.split_once("://").ok_or_else(invalid)?;
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(invalid());
    }
    Ok((scheme, authority, key))
}

/// A store and, for object storage, its multipart uploads.
type Stores = (Arc<dyn ObjectStore>, Option<Arc<dyn MultipartStore>>);

/// The store of `scheme://authority`, made once per process.
fn store(scheme: &str, authority: &str) -> io::Result<Stores> {
    static STORES: OnceLock<Mutex<HashMap<String, Stores>>> = OnceLock::new();
    let name = format!("{scheme}://{authority}");
    let mut stores = STORES.get_or_init(Default::default).lock().expect("stores lock");
    if let Some(s) = stores.get(&name) {
        return Ok(s.clone());
    }
    // Retries are ours (counted, and resuming a body where it stopped).
    let retry = RetryConfig { max_retries: 0, ..RetryConfig::default() };
    // No limit on a whole response: a body is read as fast as the job takes it, which may
    // pause while the dataflow drains. A server silent for a minute is a failure.
    let options = ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(10))
        .with_timeout_disabled()
        .with_read_timeout(Duration::from_secs(60));
    let made: Stores = match scheme {
        "s3" | "s3a" => {
            let mut builder =
                AmazonS3Builder::from_env().with_bucket_name(authority).with_retry(retry);
            // from_env reads AWS_ALLOW_HTTP; client options given here would replace it.
            builder =
                builder.with_client_options(options.with_allow_http(env_true("AWS_ALLOW_HTTP")));
            let s3 = Arc::new(builder.build().map_err(other)?);
            (s3.clone(), Some(s3))
        }
        "gs" => {
            // An emulator or proxy named by GOOGLE_BASE_URL may be on plain http.
            let plain = std::env::var("GOOGLE_BASE_URL").is_ok_and(|u| u.starts_with("http://"));
            let gcs = GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(authority)
                .with_retry(retry)
                .with_client_options(options.with_allow_http(plain))
                .build()
                .map_err(other)?;
            let gcs = Arc::new(gcs);
            (gcs.clone(), Some(gcs))
        }
        "az" | "azure" | "abfs" | "abfss" => {
            let builder = MicrosoftAzureBuilder::from_env().with_retry(retry);
            // `abfs://container@account.dfs.core.windows.net/...` names its account;
            // `az://container/...` takes it from AZURE_STORAGE_ACCOUNT_NAME.
            let builder = match authority.contains('@') {
                true => builder.with_url(name.clone()),
                false => builder.with_container_name(authority),
            };
            // from_env reads AZURE_ALLOW_HTTP; client options given here would replace it.
            let builder =
                builder.with_client_options(options.with_allow_http(env_true("AZURE_ALLOW_HTTP")));
            let azure = Arc::new(builder.build().map_err(other)?);
            (azure.clone(), Some(azure))
        }
        "http" | "https" => (
            Arc::new(
                HttpBuilder::new()
                    .with_url(name.clone())
                    .with_retry(retry)
                    // An http:// address asks for plain http.
                    .with_client_options(options.with_allow_http(scheme == "http"))
                    .build()
                    .map_err(other)?,
            ),
            None,
        ),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "unsupported scheme {scheme}:// (s3://, gs://, az:// and abfs://, http:// and https:// are read)"
                ),
            ));
        }
    };
    stores.insert(name, made.clone());
    Ok(made)
}

/// Whether the environment variable `name` is `true` (in any case).
fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

impl Location {
    fn of(path: &Path) -> io::Result<Self> {
        let address = path.to_str().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "an address must be UTF-8")
        })?;
        let (scheme, authority, key) = split(address)?;
        if scheme.starts_with("http") && key.contains(['?', '%', '#']) {
            // The client would escape them again: `a%20b` would be asked for as `a%2520b`.
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{address}: addresses with a query or percent-escapes are not read yet"),
            ));
        }
        let key = Key::parse(key).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let (store, multipart) = store(scheme, authority)?;
        Ok(Location { store, multipart, key, address: address.to_string(), version: None })
    }

    /// As [`Location::of`], every read pinned to `version` when given.
    fn pinned(path: &Path, version: Option<&str>) -> io::Result<Self> {
        Ok(Location { version: version.map(str::to_string), ..Location::of(path)? })
    }

    /// Converts a client error about this object, keeping "not found" and "access denied"
    /// recognisable. A missing bucket (or container) is named. Only the client's own text
    /// is kept (its errors repeat their sources in it), and an XML error body a server sent
    /// is cut down to its code and message.
    fn error(&self, e: object_store::Error) -> io::Error {
        if missing_bucket(&e) {
            let (scheme, authority, _) = split(&self.address).unwrap_or_default();
            let azure = matches!(scheme, "az" | "azure" | "abfs" | "abfss");
            let noun = if azure { "container" } else { "bucket" };
            let name = authority.split('@').next().unwrap_or_default();
            return io::Error::other(format!("no such {noun} \"{name}\""));
        }
        let text = e.to_string();
        let (kind, text) = match &e {
            object_store::Error::NotFound { .. } => {
                (io::ErrorKind::NotFound, "no such object".into())
            }
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => {
                (io::ErrorKind::PermissionDenied, format!("access denied: {}", without_xml(&text)))
            }
            object_store::Error::AlreadyExists { .. } => (io::ErrorKind::AlreadyExists, text),
            object_store::Error::Precondition { .. } if self.version.is_some() => (
                io::ErrorKind::Other,
                "the object changed since the run listed it (its ETag is another): a run reads \
                 its inputs as they were when it started"
                    .into(),
            ),
            _ => (io::ErrorKind::Other, without_xml(&text)),
        };
        io::Error::new(kind, text)
    }
}

/// Whether `e` says the bucket (or container) is missing, not just the object: S3 and
/// Google Cloud Storage answer 404 with "NoSuchBucket" or "The specified bucket does not
/// exist", Azure with "ContainerNotFound".
fn missing_bucket(e: &object_store::Error) -> bool {
    let text = e.to_string();
    ["NoSuchBucket", "ContainerNotFound", "bucket does not exist"].iter().any(|c| text.contains(c))
}

/// `text` with the XML error body it ends with, as S3 and Azure send one, cut down to the
/// body's code and the first line of its message.
fn without_xml(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.to_string();
    };
    let body = &text[start..];
    let element = |name: &str| {
        let from = body.find(&format!("<{name}>"))? + name.len() + 2;
        let to = from + body[from..].find('<')?;
        Some(body[from..to].lines().next().unwrap_or_default().trim().to_string())
    };
    // Azure's bodies may start with a byte-order mark.
    let head = text[..start].trim_end_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    match (element("Code"), element("Message")) {
        (Some(code), Some(message)) => format!("{head} {code}: {message}"),
        (Some(code), None) => format!("{head} {code}"),
        _ => head.to_string(),
    }
}

fn other(e: object_store::Error) -> io::Error {
    io::Error::other(e)
}

/// Whether another attempt may succeed: network failures, timeouts, 5xx and throttling
/// answers arrive as `Generic`; a missing object, a refused credential or a bad request
/// will not change.
fn transient(e: &object_store::Error) -> bool {
    match e {
        object_store::Error::Generic { .. } => !refused(&e.to_string()),
        object_store::Error::JoinError { .. } => true,
        _ => false,
    }
}

/// Whether an error's text says no retry will change it: a client error (4xx) other than a
/// timeout (408) or throttling (429), such as a missing bucket; a redirect (another
/// region); a server that ignores ranges or sends no length. The client does not expose
/// the status or kind of a generic error, only its text.
fn refused(text: &str) -> bool {
    let client_error = text.match_indices("status code: ").any(|(at, found)| {
        let code = &text[at + found.len()..];
        (code.starts_with('4') && !code.starts_with("408") && !code.starts_with("429"))
            || code.starts_with('3')
    });
    const PERMANENT: [&str; 5] = ["redirect", "Range", "range", "Content-Length", "content-length"];
    client_error || PERMANENT.iter().any(|p| text.contains(p))
}

/// Runs `request` until it succeeds, fails for good or has been tried [`ATTEMPTS`] times,
/// waiting longer after each transient failure.
async fn with_retries<T, F, Fut>(mut request: F) -> Result<T, object_store::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, object_store::Error>>,
{
    let mut wait = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match request().await {
            Err(e) if transient(&e) && attempt < ATTEMPTS => {
                RETRIES.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_BACKOFF);
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// The size of the object at `path`.
///
/// # Errors
/// When it does not exist, cannot be reached, or the address is not one.
pub fn size(path: &Path) -> io::Result<u64> {
    Location::of(path)?.head().map(|(size, _)| size)
}

/// The size of the object at `path` and its ETag, when the store gives one.
///
/// # Errors
/// As [`size`].
pub fn head(path: &Path) -> io::Result<(u64, Option<String>)> {
    Location::of(path)?.head()
}

/// An object found under a prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its address, in the scheme the prefix was given in.
    pub address: PathBuf,
    /// Its key below the prefix (`a/b.jsonl` for `s3://bucket/crawl/a/b.jsonl` under
    /// `s3://bucket/crawl`).
    pub relative: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its ETag, when the store gives one.
    pub e_tag: Option<String>,
}

/// The objects under the prefix `path` (as a folder: `s3://b/crawl` lists `s3://b/crawl/...`),
/// in no particular order.
///
/// # Errors
/// When the store cannot be listed.
pub fn list(path: &Path) -> io::Result<Vec<Listed>> {
    let loc = Location::of(path)?;
    let (scheme, authority, _) = split(&loc.address)?;
    let prefix = (!loc.key.as_ref().is_empty()).then_some(&loc.key);
    let listed = runtime().block_on(with_retries(|| {
        let stream = loc.store.list(prefix);
        async move { stream.collect::<Vec<_>>().await.into_iter().collect::<Result<Vec<_>, _>>() }
    }));
    // The store lists whole segments below the prefix: `crawl` never matches `crawl-old`.
    let skip = if loc.key.as_ref().is_empty() { 0 } else { loc.key.as_ref().len() + 1 };
    Ok(listed
        .map_err(|e| loc.error(e))?
        .into_iter()
        .map(|m| Listed {
            address: PathBuf::from(format!("{scheme}://{authority}/{}", m.location)),
            relative: m.location.as_ref().get(skip..).unwrap_or_default().to_string(),
            size: m.size,
            e_tag: m.e_tag,
        })
        .collect())
}

impl Location {
    fn head(&self) -> io::Result<(u64, Option<String>)> {
        let head = runtime().block_on(with_retries(|| self.store.head(&self.key)));
        let meta = head.map_err(|e| self.error(e))?;
        Ok((meta.size, meta.e_tag))
    }

    fn range(&self, range: Range<u64>) -> io::Result<Bytes> {
        let Some(version) = &self.version else {
            return runtime()
                .block_on(with_retries(|| self.store.get_range(&self.key, range.clone())))
                .map_err(|e| self.error(e));
        };
        let get = || async {
            let options = GetOptions {
                range: Some(GetRange::Bounded(range.clone())),
                if_match: Some(version.clone()),
                ..GetOptions::default()
            };
            self.store.get_opts(&self.key, options).await?.bytes().await
        };
        runtime().block_on(with_retries(get)).map_err(|e| self.error(e))
    }

    /// Starts streaming the object from byte `from` into a channel; the task stops when
    /// the receiver is dropped. A body cut off by a transient failure resumes at the byte
    /// it reached.
    fn stream(&self, from: u64) -> tokio::sync::mpsc::Receiver<io::Result<Bytes>> {
        let (send, receive) = tokio::sync::mpsc::channel(CHANNEL_CHUNKS);
        let loc = self.clone();
        runtime().spawn(async move {
            let mut at = from;
            let mut wait = FIRST_BACKOFF;
            let mut attempt = 1;
            // A resumed body must come from the version the first part came from (or the
            // one the object is pinned to).
            let mut version: Option<String> = loc.version.clone();
            loop {
                let options = GetOptions {
                    range: (at > 0).then_some(GetRange::Offset(at)),
                    if_match: version.clone(),
                    ..GetOptions::default()
                };
                let failure = match loc.store.get_opts(&loc.key, options).await {
                    Err(e) => e,
                    Ok(result) => {
                        version = version.or(result.meta.e_tag.clone());
                        let mut body = result.into_stream();
                        let mut cut = None;
                        while let Some(chunk) = body.next().await {
                            match chunk {
                                Ok(bytes) if bytes.is_empty() => {}
                                Ok(bytes) => {
                                    at += bytes.len() as u64;
                                    (attempt, wait) = (1, FIRST_BACKOFF);
                                    if send.send(Ok(bytes)).await.is_err() {
                                        return;
                                    }
                                }
                                Err(e) => {
                                    cut = Some(e);
                                    break;
                                }
                            }
                        }
                        match cut {
                            None => return,
                            Some(e) => e,
                        }
                    }
                };
                if transient(&failure) && attempt < ATTEMPTS {
                    RETRIES.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_BACKOFF);
                    attempt += 1;
                    continue;
                }
                let _ = send.send(Err(loc.error(failure))).await;
                return;
            }
        });
        receive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_told_from_paths() {
        for remote in [
            "s3://b/k.jsonl",
            "s3a://b/",
            "gs://b/p",
            "az://container/p",
            "abfss://c@account.dfs.core.windows.net/p",
            "http://127.0.0.1:8/x.wet.gz",
            "https://h/p",
        ] {
            assert!(is_remote(Path::new(remote)), "{remote}");
        }
        for local in ["data/x.jsonl", "/s3/b", "s3:/b/k", "./http://x"] {
            assert!(!is_remote(Path::new(local)), "{local}");
        }
        assert!(is_listable(Path::new("s3://b/prefix")));
        assert!(is_listable(Path::new("gs://b/prefix")) && is_listable(Path::new("az://c/p")));
        assert!(!is_listable(Path::new("https://h/p")));
        assert_eq!(split("s3://bucket/a/b.jsonl").unwrap(), ("s3", "bucket", "a/b.jsonl"));
        assert_eq!(split("https://h:8080").unwrap(), ("https", "h:8080", ""));
        assert!(split("s3:///k").is_err());
    }

    #[test]
    fn client_errors_are_not_retried_but_timeouts_and_throttling_are() {
        let text = |code: &str| {
            format!(
                "Error performing GET http://h/b in 3ms - Server returned non-2xx status code: {code}: body"
            )
        };
        assert!(refused(&text("404 Not Found")));
        assert!(refused(&text("403 Forbidden")));
        assert!(!refused(&text("429 Too Many Requests")));
        assert!(!refused(&text("408 Request Timeout")));
        assert!(!refused(&text("503 Service Unavailable")));
        assert!(!refused("error sending request: connection closed before message completed"));
        assert!(refused(&text("301 Moved Permanently")));
        assert!(refused(
            "Received redirect without LOCATION, this normally indicates an incorrectly configured region"
        ));
        assert!(refused("Requested an invalid range"));
    }

    #[test]
    fn an_xml_error_body_is_cut_down_to_its_code_and_message() {
        let s3 = "Error performing GET http://h/b?list-type=2 in 3ms - Server returned non-2xx \
                  status code: 403 Forbidden: <?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
                  <Error><Code>AccessDenied</Code><Message>Access Denied</Message>\
                  <RequestId>Kdrx1X9</RequestId></Error>";
        assert_eq!(
            without_xml(s3),
            "Error performing GET http://h/b?list-type=2 in 3ms - Server returned non-2xx \
             status code: 403 Forbidden: AccessDenied: Access Denied"
        );
        let azure = "Server returned non-2xx status code: 409 Conflict: \u{feff}<?xml \
                     version=\"1.0\"?><Error><Code>LeaseIdMissing</Code><Message>There is a \
                     lease.\nRequestId:5e1f\nTime:2026-11-27</Message></Error>";
        assert_eq!(
            without_xml(azure),
            "Server returned non-2xx status code: 409 Conflict: LeaseIdMissing: There is a lease."
        );
        assert_eq!(without_xml("connection refused"), "connection refused");
    }
}
