//! Reading an object: as a stream with seeking ([`RemoteReader`]), or by byte ranges for
//! Parquet ([`RemoteObject`]).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::Location;

/// A remote object read as a stream, with seeking (a seek starts a new request there).
pub struct RemoteReader {
    loc: Location,
    /// The position of the next byte handed out.
    pos: u64,
    body: Option<tokio::sync::mpsc::Receiver<io::Result<Bytes>>>,
    chunk: Bytes,
}

impl RemoteReader {
    /// Opens the object at `path`; nothing is requested until the first read.
    ///
    /// # Errors
    /// When `path` is not an address of a scheme that is read.
    pub fn open(path: &Path) -> io::Result<Self> {
        Self::open_version(path, None)
    }

    /// As [`RemoteReader::open`], every read from `version` (an ETag) when given: a read of
    /// another version fails.
    ///
    /// # Errors
    /// As [`RemoteReader::open`].
    pub fn open_version(path: &Path, version: Option<&str>) -> io::Result<Self> {
        let loc = Location::pinned(path, version)?;
        Ok(RemoteReader { loc, pos: 0, body: None, chunk: Bytes::new() })
    }
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            let body = match &mut self.body {
                Some(body) => body,
                None => self.body.insert(self.loc.stream(self.pos)),
            };
            match body.blocking_recv() {
                None => return Ok(0),
                Some(Err(e)) => {
                    self.body = None;
                    return Err(io::Error::new(
                        e.kind(),
                        format!("{} at byte {}: {e}", self.loc.address, self.pos),
                    ));
                }
                Some(Ok(bytes)) => self.chunk = bytes,
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RemoteReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => at,
            SeekFrom::Current(by) => self.pos.checked_add_signed(by).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
            })?,
            SeekFrom::End(by) => self.loc.head()?.0.checked_add_signed(by).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
            })?,
        };
        if target != self.pos {
            // Bytes already here are reused when the target lies inside them.
            let ahead = target.checked_sub(self.pos).filter(|d| *d <= self.chunk.len() as u64);
            match ahead {
                Some(d) => {
                    let _ = self.chunk.split_to(d as usize);
                }
                None => {
                    self.body = None;
                    self.chunk = Bytes::new();
                }
            }
            self.pos = target;
        }
        Ok(self.pos)
    }
}

/// Bytes fetched for a sequential read (a Parquet page header, tens of bytes): a small
/// page comes with its header in one request, a larger one by its own ranged request;
/// past the window a stream takes over. Larger windows fetch more of the columns not read.
const WINDOW: u64 = 16 * 1024;

/// A remote object read by byte ranges (Parquet: the footer, then the pages of the column
/// chunks read; columns and row groups not read are not fetched).
#[derive(Clone)]
pub struct RemoteObject {
    loc: Location,
    size: u64,
    /// The last window fetched for a sequential read: the page data asked for next is
    /// usually inside it.
    window: Arc<Mutex<Option<(u64, Bytes)>>>,
}

impl RemoteObject {
    /// The object at `path` of `size` bytes (as listed when the input was discovered: no
    /// request is made here), every read from `version` (an ETag) when given.
    ///
    /// # Errors
    /// When `path` is not an address of a scheme that is read.
    pub fn open(path: &Path, size: u64, version: Option<&str>) -> io::Result<Self> {
        let loc = Location::pinned(path, version)?;
        Ok(RemoteObject { loc, size, window: Arc::default() })
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// `len` bytes at `start` when the last window holds them.
    fn in_window(&self, start: u64, len: u64) -> Option<Bytes> {
        let window = self.window.lock().expect("window lock");
        let (at, bytes) = window.as_ref()?;
        let from = start.checked_sub(*at)?;
        (from + len <= bytes.len() as u64)
            .then(|| bytes.slice(from as usize..(from + len) as usize))
    }
}

impl parquet::file::reader::Length for RemoteObject {
    fn len(&self) -> u64 {
        self.size
    }
}

/// The rest of an object after a window, requested only if a read gets there.
struct Tail {
    loc: Location,
    at: u64,
    size: u64,
    reader: Option<RemoteReader>,
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.size {
            return Ok(0);
        }
        let (loc, at) = (&self.loc, self.at);
        let reader = self.reader.get_or_insert_with(|| RemoteReader {
            loc: loc.clone(),
            pos: at,
            body: None,
            chunk: Bytes::new(),
        });
        reader.read(buf)
    }
}

impl parquet::file::reader::ChunkReader for RemoteObject {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let end = (start + WINDOW).min(self.size).max(start);
        let block = match self.in_window(start, end - start) {
            Some(block) => block,
            None => {
                let block = self.get_bytes(start, (end - start) as usize)?;
                *self.window.lock().expect("window lock") = Some((start, block.clone()));
                block
            }
        };
        let tail = Tail { loc: self.loc.clone(), at: end, size: self.size, reader: None };
        Ok(Box::new(io::Cursor::new(block).chain(tail)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        if length == 0 {
            return Ok(Bytes::new());
        }
        if let Some(bytes) = self.in_window(start, length as u64) {
            return Ok(bytes);
        }
        self.loc
            .range(start..start + length as u64)
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
    }
}
