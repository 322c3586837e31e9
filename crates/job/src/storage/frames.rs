//! The frames of spill files: each record is the length of its bincode as LEB128, then the
//! bincode. Readers take whole frames from a large buffer and decode each from memory, and
//! tell a file that ends between records from one cut inside a record, which is an error
//! naming the file (never a silently shorter file).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// An error of the spill files, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("cannot use spill file \"{}\"", .path.display())]
pub struct SpillError {
    /// The file.
    pub path: PathBuf,
    /// What failed.
    #[source]
    pub source: std::io::Error,
}

impl SpillError {
    /// An error of the file at `path`.
    pub(crate) fn at(path: &Path, source: impl Into<std::io::Error>) -> Self {
        SpillError { path: path.to_path_buf(), source: source.into() }
    }
}

/// A unique file name in a spill folder (shared by every spiller of a process).
fn run_path(dir: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
    dir.join(format!("run-{}-{n:08}.bin", std::process::id()))
}

/// A new file of a unique name in the spill folder `dir` (made when missing), buffered for
/// writing.
///
/// # Errors
/// When the folder or the file cannot be made.
pub(crate) fn create_run(dir: &Path) -> Result<(PathBuf, BufWriter<File>), SpillError> {
    let path = run_path(dir);
    std::fs::create_dir_all(dir).map_err(|e| SpillError::at(&path, e))?;
    let file = File::create(&path).map_err(|e| SpillError::at(&path, e))?;
    Ok((path, BufWriter::with_capacity(1 << 16, file)))
}

/// Bytes a frame reader asks the file for at a time.
const READ_CHUNK: usize = 1 << 17;

/// Writes records to a new spill file as frames.
pub(crate) struct FrameWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// The record being framed.
    record: Vec<u8>,
    bytes: u64,
}

impl FrameWriter {
    /// A new file of a unique name in `dir` (see [`create_run`]).
    ///
    /// # Errors
    /// When the folder or the file cannot be made.
    pub(crate) fn create(dir: &Path) -> Result<Self, SpillError> {
        let (path, out) = create_run(dir)?;
        Ok(FrameWriter { path, out, record: Vec::new(), bytes: 0 })
    }

    /// The file written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub(crate) fn write<T: Serialize>(&mut self, item: &T) -> Result<(), SpillError> {
        let written = write_frame(&mut self.out, &mut self.record, item)
            .map_err(|e| SpillError::at(&self.path, e))?;
        self.bytes += written;
        Ok(())
    }

    /// Bytes written so far: where the next record's frame starts.
    pub(crate) fn written(&self) -> u64 {
        self.bytes
    }

    /// Flushes the file; returns its path and the bytes written.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub(crate) fn finish(mut self) -> Result<(PathBuf, u64), SpillError> {
        self.out.flush().map_err(|e| SpillError::at(&self.path, e))?;
        Ok((self.path, self.bytes))
    }
}

/// Writes `item` to `out` as one frame, encoding it in `scratch`; returns the bytes written.
///
/// # Errors
/// When it cannot be encoded or written.
pub(crate) fn write_frame<T: Serialize>(
    out: &mut impl Write,
    scratch: &mut Vec<u8>,
    item: &T,
) -> std::io::Result<u64> {
    scratch.clear();
    bincode::serialize_into(&mut *scratch, item).map_err(std::io::Error::other)?;
    let mut head = [0u8; 10];
    let head = leb128(scratch.len() as u64, &mut head);
    out.write_all(head)?;
    out.write_all(scratch)?;
    Ok((head.len() + scratch.len()) as u64)
}

/// `n` as LEB128 in `out`; the bytes used.
fn leb128(mut n: u64, out: &mut [u8; 10]) -> &[u8] {
    let mut len = 0;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out[len] = byte;
            return &out[..=len];
        }
        out[len] = byte | 0x80;
        len += 1;
    }
}

/// What a [`FrameReader`] reads from: a file, or an object streamed from a store.
pub(crate) trait FrameSource: std::io::Read + std::io::Seek + Send {}

impl<T: std::io::Read + std::io::Seek + Send> FrameSource for T {}

/// Reads the records of a spill file written by [`FrameWriter`], in order.
pub(crate) struct FrameReader {
    path: PathBuf,
    file: Box<dyn FrameSource>,
    buffer: Vec<u8>,
    /// Where in the file `buffer` starts.
    origin: u64,
    /// The unread bytes are `buffer[start..end]`.
    start: usize,
    end: usize,
    at_end: bool,
    /// Set by an error, after which the reader yields nothing.
    failed: bool,
    /// Bytes asked of the file at a time.
    read_size: usize,
}

impl FrameReader {
    /// Opens `path`.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub(crate) fn open(path: &Path) -> Result<Self, SpillError> {
        let file = File::open(path).map_err(|e| SpillError::at(path, e))?;
        Ok(Self::over(path, file))
    }

    /// Reads the frames `file` gives, which errors name as `path`: an object's stream, say.
    pub(crate) fn over(path: &Path, file: impl FrameSource + 'static) -> Self {
        FrameReader {
            path: path.to_path_buf(),
            file: Box::new(file),
            buffer: Vec::new(),
            origin: 0,
            start: 0,
            end: 0,
            at_end: false,
            failed: false,
            read_size: READ_CHUNK,
        }
    }

    /// Asks the file for `bytes` at a time (a frame longer than that is still read
    /// whole): for a reader that seeks over the records of other sequences, where a large
    /// read would mostly fetch theirs.
    pub(crate) fn reading(mut self, bytes: usize) -> Self {
        self.read_size = bytes.max(64);
        self
    }

    /// Where in the file the next frame starts.
    pub(crate) fn position(&self) -> u64 {
        self.origin + self.start as u64
    }

    /// Whether the frame at `offset` starts within the bytes already read.
    pub(crate) fn holds(&self, offset: u64) -> bool {
        offset >= self.origin && offset < self.origin + self.end as u64
    }

    /// Makes the frame at `offset` the next one: within the bytes already read when they
    /// hold it, else by seeking the file (dropping what was read).
    ///
    /// # Errors
    /// When the file cannot be seeked.
    pub(crate) fn seek(&mut self, offset: u64) -> Result<(), SpillError> {
        self.failed = false;
        if self.holds(offset) {
            self.start = (offset - self.origin) as usize;
            return Ok(());
        }
        use std::io::{Seek, SeekFrom};
        self.file.seek(SeekFrom::Start(offset)).map_err(|e| SpillError::at(&self.path, e))?;
        (self.origin, self.start, self.end, self.at_end) = (offset, 0, 0, false);
        Ok(())
    }

    /// The next record, `None` after the last one or after an error.
    pub(crate) fn next<T: DeserializeOwned>(&mut self) -> Option<Result<T, SpillError>> {
        self.next_unless(|_| false)
    }

    /// The next record whose bincode `skip` does not pass over (records passed over are
    /// not decoded), `None` after the last one or after an error.
    pub(crate) fn next_unless<T: DeserializeOwned>(
        &mut self,
        mut skip: impl FnMut(&[u8]) -> bool,
    ) -> Option<Result<T, SpillError>> {
        loop {
            if self.failed {
                return None;
            }
            let (from, length) = match self.frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            };
            let bytes = &self.buffer[from..from + length];
            if skip(bytes) {
                continue;
            }
            let record = bincode::deserialize(bytes)
                .map_err(|e| SpillError::at(&self.path, std::io::Error::other(e)));
            self.failed = record.is_err();
            return Some(record);
        }
    }

    /// Where the next frame's record bytes are in the buffer, and how many.
    fn frame(&mut self) -> Result<Option<(usize, usize)>, SpillError> {
        let unread = self.fill(10)?;
        if unread == 0 {
            return Ok(None);
        }
        let head = &self.buffer[self.start..self.start + unread.min(10)];
        let Some(used) = head.iter().position(|b| b & 0x80 == 0).map(|i| i + 1) else {
            return Err(if unread < 10 {
                self.cut()
            } else {
                self.damaged("a record length past 64 bits")
            });
        };
        let mut length = 0u64;
        for (i, b) in head[..used].iter().enumerate() {
            length |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        }
        let length = usize::try_from(length)
            .ok()
            .filter(|&l| l <= isize::MAX as usize / 2)
            .ok_or_else(|| self.damaged("a record length past the address space"))?;
        if self.fill(used + length)? < used + length {
            return Err(self.cut());
        }
        let from = self.start + used;
        self.start = from + length;
        Ok(Some((from, length)))
    }

    /// Reads until at least `want` bytes are unread or the file ends; the bytes unread.
    fn fill(&mut self, want: usize) -> Result<usize, SpillError> {
        if self.end - self.start < want && !self.at_end {
            self.origin += self.start as u64;
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buffer.len() < self.read_size {
                self.buffer.resize(self.read_size, 0);
            }
            while self.end < want {
                if self.end == self.buffer.len() {
                    // Doubling as bytes arrive: a damaged length is found short, never
                    // allocated for.
                    let grown = (self.buffer.len() * 2).min(want);
                    self.buffer.resize(grown, 0);
                }
                // No more than the read size at a time, whatever an earlier long frame grew
                // the buffer to.
                let limit = self.buffer.len().min(self.read_size.max(want));
                let into = &mut self.buffer[self.end..limit];
                let n = match std::io::Read::read(&mut self.file, into) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(SpillError::at(&self.path, e)),
                };
                if n == 0 {
                    self.at_end = true;
                    break;
                }
                self.end += n;
            }
        }
        Ok(self.end - self.start)
    }

    fn cut(&self) -> SpillError {
        self.damaged("the file ends inside a record")
    }

    fn damaged(&self, what: &str) -> SpillError {
        SpillError::at(&self.path, std::io::Error::new(std::io::ErrorKind::InvalidData, what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Item(u64, String);

    /// Every way of cutting a spill file short: at a frame boundary it reads as fewer
    /// records (a file never ends there unless written so), anywhere else it is an error
    /// naming the file; a damaged length is an error, not an allocation of that size.
    #[test]
    fn a_run_cut_inside_a_record_is_an_error_naming_the_file_not_a_shorter_run() {
        let dir = tempfile::tempdir().unwrap();
        let items: Vec<Item> = (0..40u64).map(|n| Item(n, "x".repeat(n as usize % 7))).collect();
        let mut out = FrameWriter::create(dir.path()).unwrap();
        let mut boundaries = vec![0u64];
        for item in &items {
            out.write(item).unwrap();
            boundaries.push(out.bytes);
        }
        let (path, bytes) = out.finish().unwrap();
        let whole = std::fs::read(&path).unwrap();
        assert_eq!(whole.len() as u64, bytes);
        let read = |bytes: &[u8]| -> Vec<Result<Item, SpillError>> {
            std::fs::write(&path, bytes).unwrap();
            let mut reader = FrameReader::open(&path).unwrap();
            std::iter::from_fn(|| reader.next()).collect()
        };
        for cut in 0..whole.len() {
            let got = read(&whole[..cut]);
            match boundaries.iter().position(|&b| b == cut as u64) {
                Some(records) => {
                    let got: Vec<Item> = got.into_iter().map(Result::unwrap).collect();
                    assert_eq!(got, items[..records], "cut at {cut}");
                }
                None => {
                    let error = got.last().unwrap().as_ref().unwrap_err();
                    assert_eq!(error.path, path, "cut at {cut}");
                    assert!(error.source.to_string().contains("ends inside a record"), "{error:?}");
                }
            }
        }
        // A length of 2^60 bytes in a short file, and one past 64 bits.
        for head in [vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10], vec![0xff; 12]] {
            let error = read(&[&head[..], b"abc"].concat()).pop().unwrap().unwrap_err();
            assert_eq!(error.path, path);
        }
    }
}
