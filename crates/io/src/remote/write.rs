//! Writing to object storage: objects appear whole or not at all.
//!
//! An object store has no rename, so nothing is written under a temporary name. A small
//! object is one PUT; a larger one is a multipart upload ([`Upload`]) whose parts are sent
//! while the next is filled, and which becomes visible under its final name only when the
//! upload completes. An upload dropped unfinished is aborted; one whose process was killed
//! stays incomplete on the server, invisible to readers and listings (a bucket's lifecycle
//! rule, `AbortIncompleteMultipartUpload`, removes such leftovers).
//!
//! Conditional writes ([`put_if`]: create-if-absent, or replace-if-unchanged by ETag) let
//! one of two writers win, which the index manifest and the locks rely on.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::Path;
use std::sync::OnceLock;

use bytes::Bytes;
use object_store::multipart::PartId;
use object_store::{MultipartId, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use super::{Location, missing_bucket, runtime, with_retries};

/// Bytes per part of a multipart upload unless [`PART_SIZE_ENV`] says otherwise. S3 wants
/// at least 5 MiB per part but the last.
pub const DEFAULT_PART_SIZE: usize = 8 << 20;
/// The environment variable that sets the part size of uploads, in bytes.
pub const PART_SIZE_ENV: &str = "NEARDUP_UPLOAD_PART_SIZE";
/// Parts of one object in flight while the next is filled.
const IN_FLIGHT: usize = 2;

/// The part size of uploads: [`PART_SIZE_ENV`] or [`DEFAULT_PART_SIZE`].
pub fn part_size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var(PART_SIZE_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|n: &usize| *n > 0)
            .unwrap_or(DEFAULT_PART_SIZE)
    })
}

fn read_only(loc: &Location) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{}: HTTP addresses are read only; write to object storage", loc.address),
    )
}

/// An object being written: bytes are buffered up to a part, and the first full part starts
/// a multipart upload. Visible under its name only after [`Upload::finish`].
pub struct Upload {
    loc: Location,
    part_size: usize,
    buf: Vec<u8>,
    upload: Option<MultipartId>,
    /// Parts sent and not yet confirmed, oldest first.
    sent: VecDeque<tokio::task::JoinHandle<Result<PartId, object_store::Error>>>,
    /// Parts confirmed, in order.
    parts: Vec<PartId>,
    written: u64,
    finished: bool,
}

impl Upload {
    /// Starts writing the object at `path`; nothing is sent until a part is full.
    ///
    /// # Errors
    /// When `path` is not an address, or an HTTP one (read only).
    pub fn create(path: &Path) -> io::Result<Self> {
        let loc = Location::of(path)?;
        if loc.multipart.is_none() {
            return Err(read_only(&loc));
        }
        Ok(Upload {
            loc,
            part_size: part_size(),
            buf: Vec::new(),
            upload: None,
            sent: VecDeque::new(),
            parts: Vec::new(),
            written: 0,
            finished: false,
        })
    }

    /// Sends the buffered bytes as the next part.
    fn send_part(&mut self) -> io::Result<()> {
        let store = self.loc.multipart.clone().expect("checked in create");
        let key = self.loc.key.clone();
        let id = match &self.upload {
            Some(id) => id.clone(),
            None => {
                let id = runtime()
                    .block_on(with_retries(|| store.create_multipart(&key)))
                    .map_err(|e| self.loc.error(e))?;
                self.upload.insert(id).clone()
            }
        };
        let data = PutPayload::from(Bytes::from(std::mem::take(&mut self.buf)));
        let index = self.parts.len() + self.sent.len();
        self.sent.push_back(runtime().spawn(async move {
            with_retries(|| store.put_part(&key, &id, index, data.clone())).await
        }));
        while self.sent.len() >= IN_FLIGHT {
            self.confirm_one()?;
        }
        Ok(())
    }

    /// Waits for the oldest part in flight.
    fn confirm_one(&mut self) -> io::Result<()> {
        let Some(part) = self.sent.pop_front() else { return Ok(()) };
        let part = runtime()
            .block_on(part)
            .map_err(|e| io::Error::other(format!("an upload task failed: {e}")))?
            .map_err(|e| self.loc.error(e))?;
        self.parts.push(part);
        crate::failpoint::crash("upload-part-written");
        Ok(())
    }

    /// Completes the object; returns its size. Until this returns, readers see no object
    /// (or the one it replaces).
    ///
    /// # Errors
    /// When a part, the completion or the single PUT fails for good.
    pub fn finish(mut self) -> io::Result<u64> {
        let (loc, written) = (self.loc.clone(), self.written);
        match self.upload.clone() {
            None => {
                let payload = PutPayload::from(Bytes::from(std::mem::take(&mut self.buf)));
                runtime()
                    .block_on(with_retries(|| loc.store.put(&loc.key, payload.clone())))
                    .map_err(|e| loc.error(e))?;
            }
            Some(id) => {
                if !self.buf.is_empty() {
                    self.send_part()?;
                }
                while !self.sent.is_empty() {
                    self.confirm_one()?;
                }
                let store = loc.multipart.clone().expect("checked in create");
                let parts = std::mem::take(&mut self.parts);
                let done = runtime().block_on(with_retries(|| {
                    store.complete_multipart(&loc.key, &id, parts.clone())
                }));
                if let Err(e) = done {
                    // A completion whose answer was lost is retried into "no such upload":
                    // the object is then there, whole.
                    let whole = matches!(e, object_store::Error::NotFound { .. })
                        && loc.head().is_ok_and(|(size, _)| size == written);
                    if !whole {
                        return Err(loc.error(e));
                    }
                }
            }
        }
        self.finished = true;
        Ok(written)
    }
}

impl Write for Upload {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(self.part_size - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        self.written += n as u64;
        if self.buf.len() == self.part_size {
            self.send_part()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for part in self.sent.drain(..) {
            part.abort();
        }
        if let (Some(id), Some(store)) = (self.upload.take(), self.loc.multipart.clone()) {
            // Best effort: what is left is invisible and a lifecycle rule removes it.
            let key = self.loc.key.clone();
            let _ = runtime().block_on(async move { store.abort_multipart(&key, &id).await });
        }
    }
}

/// How a conditional write may replace what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// Only if no object is there.
    Absent,
    /// Only if the object there has this ETag.
    Unchanged(String),
}

/// Writes `bytes` as the object at `path` if `condition` holds; returns the new ETag.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when the condition does not hold (another writer was
/// first); otherwise when the store refuses it or cannot be reached.
pub fn put_if(path: &Path, bytes: Vec<u8>, condition: &Condition) -> io::Result<Option<String>> {
    let loc = Location::of(path)?;
    if loc.multipart.is_none() {
        return Err(read_only(&loc));
    }
    let mode = match condition {
        Condition::Absent => PutMode::Create,
        Condition::Unchanged(e_tag) => {
            PutMode::Update(UpdateVersion { e_tag: Some(e_tag.clone()), version: None })
        }
    };
    let payload = PutPayload::from(Bytes::from(bytes));
    let attempts = std::cell::Cell::new(0u32);
    let put = runtime().block_on(with_retries(|| {
        attempts.set(attempts.get() + 1);
        let options = PutOptions { mode: mode.clone(), ..PutOptions::default() };
        loc.store.put_opts(&loc.key, payload.clone(), options)
    }));
    match put {
        Ok(result) => Ok(result.e_tag),
        Err(
            object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. },
        ) => {
            // After a retry, the condition may fail on our own write, whose answer was
            // lost: the object then holds exactly our bytes (every caller's bytes are
            // unique to the write: a token, a time, a generation's folder).
            if attempts.get() > 1
                && let Some((there, e_tag)) = get(path)?
                && payload.iter().flat_map(|chunk| chunk.iter()).eq(there.iter())
            {
                return Ok(e_tag);
            }
            Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{}: written by someone else meanwhile", loc.address),
            ))
        }
        Err(e) => Err(loc.error(e)),
    }
}

/// The object at `path` with its ETag, or `None` when there is none.
///
/// # Errors
/// When it cannot be read, or its bucket is missing.
pub fn get(path: &Path) -> io::Result<Option<(Bytes, Option<String>)>> {
    Ok(get_dated(path)?.map(|(bytes, e_tag, _)| (bytes, e_tag)))
}

/// [`get`], with when the store last changed the object (Unix seconds, by the store's
/// clock).
///
/// # Errors
/// As [`get`].
pub fn get_dated(path: &Path) -> io::Result<Option<(Bytes, Option<String>, u64)>> {
    let loc = Location::of(path)?;
    let got = runtime().block_on(with_retries(|| async {
        let result = loc.store.get(&loc.key).await?;
        let e_tag = result.meta.e_tag.clone();
        let modified = u64::try_from(result.meta.last_modified.timestamp()).unwrap_or(0);
        Ok((result.bytes().await?, e_tag, modified))
    }));
    match got {
        Ok(got) => Ok(Some(got)),
        Err(e @ object_store::Error::NotFound { .. }) if !missing_bucket(&e) => Ok(None),
        Err(e) => Err(loc.error(e)),
    }
}

/// Removes the object at `path`; one that is not there is no error.
///
/// # Errors
/// When the store refuses or cannot be reached.
pub fn delete(path: &Path) -> io::Result<()> {
    let loc = Location::of(path)?;
    if loc.multipart.is_none() {
        return Err(read_only(&loc));
    }
    match runtime().block_on(with_retries(|| loc.store.delete(&loc.key))) {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(loc.error(e)),
    }
}
