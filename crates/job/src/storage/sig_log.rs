//! The document store's signature log: every signed document's [`SigEntry`], kept in the
//! order the documents arrived, so a signature is written once and never sorted.
//!
//! The store sorts its documents by `DocId` to join them with their representative
//! markers; a signature (about 600 bytes with MinHash-128) would be most of every sorted
//! record, spilled in runs and merged, and then written again for verification. Instead
//! the store appends each signature here as its document arrives and sorts only the rest
//! of the document with the log position of its signature ([`LogAt`]). The log is held in
//! memory up to its limit, then all of it goes to one file, appended to as more arrive.
//!
//! The log holds every signed document's signature, copies and documents whose id was
//! taken included (which are known only later), until the last reader is done.
//!
//! The readers (the store's drain by the positions in its runs, then verification and the
//! index through the positions it keeps by `DocId`) ask for signatures in `DocId` order.
//! Each sending worker's documents arrive in `DocId` order, in batches, and a sender's
//! documents are a contiguous range of `DocId`s (whole files, or a byte range of each), so
//! the positions asked for mostly ascend through one sender's batches at a time, with the
//! other senders' batches between them. A [`LogReader`] keeps up to [`WINDOWS`] buffered
//! readers, takes the one nearest behind the position asked for (else the least recently
//! used), and asks the file for 16 KiB at a time, so it seeks over the other senders'
//! batches rather than reading them, and never reads record by record.

use std::sync::Arc;

use crate::storage::frames::{FrameReader, FrameWriter};
use crate::storage::records::SigEntry;
use crate::storage::spill::{MemSize, RemoveOnDrop, SpillError, grow_within};
use std::path::PathBuf;

/// Where a signature is in the log: an index into memory, or with [`IN_FILE`] set, the
/// offset of its frame in the file.
pub(crate) type LogAt = u64;

/// The bit of a [`LogAt`] that marks a file offset.
const IN_FILE: u64 = 1 << 63;

/// Buffered readers a [`LogReader`] keeps, one per ascending sequence it follows.
const WINDOWS: usize = 4;

/// Bytes a [`LogReader`]'s reader asks the file for at a time. Senders' documents arrive
/// in batches, so the log holds each sequence in runs between other senders' runs: a
/// reader that follows one sequence reads a little past the end of each of its runs and
/// seeks over the rest, where large reads would read every sequence it passes.
const LOG_READ_BYTES: usize = 16 << 10;

/// Signatures appended as their documents arrive.
pub(crate) struct SigLog {
    dir: PathBuf,
    limit_bytes: usize,
    memory: Vec<SigEntry>,
    memory_bytes: usize,
    file: Option<LogWriter>,
}

struct LogWriter {
    out: FrameWriter,
    keep: Arc<RemoveOnDrop>,
    /// Where the signatures held in memory before the file was made went in it.
    moved: Vec<u64>,
}

impl SigLog {
    /// An empty log that goes to a file in `dir` above `limit_bytes` held in memory.
    pub(crate) fn new(dir: PathBuf, limit_bytes: usize) -> Self {
        SigLog { dir, limit_bytes, memory: Vec::new(), memory_bytes: 0, file: None }
    }

    /// Appends `entry`; returns where it is.
    ///
    /// # Errors
    /// When the file cannot be made or written.
    pub(crate) fn push(&mut self, entry: SigEntry) -> Result<LogAt, SpillError> {
        if self.file.is_none()
            && self.memory.len() == self.memory.capacity()
            && !grow_within(&mut self.memory, self.limit_bytes.saturating_sub(self.memory_bytes))
        {
            self.start_file()?;
        }
        if let Some(file) = &mut self.file {
            let at = file.out.written();
            file.out.write(&entry)?;
            return Ok(at | IN_FILE);
        }
        let at = self.memory.len() as u64;
        self.memory_bytes += entry.mem_size();
        self.memory.push(entry);
        let slack = (self.memory.capacity() - self.memory.len()) * size_of::<SigEntry>();
        if self.memory_bytes + slack > self.limit_bytes {
            self.start_file()?;
        }
        Ok(at)
    }

    /// Moves the signatures held to a new file, where later ones go too.
    fn start_file(&mut self) -> Result<(), SpillError> {
        let out = FrameWriter::create(&self.dir)?;
        let keep = Arc::new(RemoveOnDrop(out.path().to_path_buf()));
        let mut file = LogWriter { out, keep, moved: Vec::with_capacity(self.memory.len()) };
        for entry in std::mem::take(&mut self.memory) {
            file.moved.push(file.out.written());
            file.out.write(&entry)?;
        }
        self.memory_bytes = 0;
        self.file = Some(file);
        Ok(())
    }

    /// Finishes appending: the log for reading, and the bytes written to its file.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub(crate) fn finish(self) -> Result<(SigLogFile, u64), SpillError> {
        let Some(LogWriter { out, keep, moved }) = self.file else {
            let log = SigLogFile { memory: Arc::new(self.memory), file: None };
            return Ok((log, 0));
        };
        let (_, bytes) = out.finish()?;
        let log = SigLogFile { memory: Arc::default(), file: Some((keep, Arc::new(moved))) };
        Ok((log, bytes))
    }
}

/// A finished [`SigLog`], shared by its readers; its file goes with the last of them.
#[derive(Clone)]
pub(crate) struct SigLogFile {
    memory: Arc<Vec<SigEntry>>,
    file: Option<(Arc<RemoveOnDrop>, Arc<Vec<u64>>)>,
}

impl SigLogFile {
    /// A reader of the log.
    pub(crate) fn reader(&self) -> LogReader {
        LogReader { windows: Vec::new(), log: self.clone(), uses: 0, read: None }
    }
}

/// Reads signatures of a [`SigLogFile`] by position.
pub(crate) struct LogReader {
    /// Up to [`WINDOWS`] readers of the file, each with the count of reads when it was last
    /// used (closed before the log may remove the file).
    windows: Vec<(FrameReader, u64)>,
    log: SigLogFile,
    uses: u64,
    /// The signature read last from the file, and where.
    read: Option<(u64, SigEntry)>,
}

impl LogReader {
    /// The log it reads.
    pub(crate) fn log(&self) -> &SigLogFile {
        &self.log
    }

    /// The signature at `at`.
    ///
    /// # Errors
    /// When the file cannot be read or holds no signature there.
    pub(crate) fn get(&mut self, at: LogAt) -> Result<&SigEntry, SpillError> {
        let Some((keep, moved)) = &self.log.file else {
            return Ok(&self.log.memory[at as usize]);
        };
        let offset = if at & IN_FILE == 0 { moved[at as usize] } else { at & !IN_FILE };
        if self.read.as_ref().is_some_and(|(o, _)| *o == offset) {
            return Ok(&self.read.as_ref().expect("just checked").1);
        }
        self.uses += 1;
        // The reader that holds the frame, else the one nearest before it (which goes on
        // reading its sequence), else a new one or the least recently used.
        let holding = self.windows.iter().position(|(r, _)| r.holds(offset));
        let before = || {
            let behind = |(i, (r, _)): (usize, &(FrameReader, u64))| {
                (r.position() <= offset).then(|| (offset - r.position(), i))
            };
            self.windows.iter().enumerate().filter_map(behind).min().map(|(_, i)| i)
        };
        let i = match holding.or_else(before) {
            Some(i) => i,
            None if self.windows.len() < WINDOWS => {
                self.windows.push((FrameReader::open(&keep.0)?.reading(LOG_READ_BYTES), 0));
                self.windows.len() - 1
            }
            None => {
                let lru = self.windows.iter().enumerate().min_by_key(|(_, (_, used))| *used);
                lru.map(|(i, _)| i).expect("WINDOWS readers")
            }
        };
        let (reader, used) = &mut self.windows[i];
        *used = self.uses;
        reader.seek(offset)?;
        let entry = match reader.next::<SigEntry>() {
            Some(entry) => entry?,
            None => {
                let missing = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("no signature at offset {offset}"),
                );
                return Err(SpillError::at(&keep.0, missing));
            }
        };
        Ok(&self.read.insert((offset, entry)).1)
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::{ContentHash, DocId, MinHashSignature, Signature};
    use proptest::prelude::*;

    use super::*;
    use crate::storage::records::NodeInfo;

    fn entry(record: u64) -> SigEntry {
        let values = (0..128u32).map(|i| i.wrapping_mul(record as u32 + 7)).collect();
        SigEntry {
            node: NodeInfo {
                doc: DocId::new(0, record),
                id: format!("d{record}"),
                chars: record,
                content: ContentHash::of_text(&record.to_string(), 1),
            },
            signature: Signature::MinHash(MinHashSignature::from_values(values)),
            features: record as u32,
            // Every seventh one longer than a reader's 16 KiB reads (exact Jaccard keeps
            // every feature).
            feature_set: vec![
                record;
                if record.is_multiple_of(7) { 5000 } else { (record % 3) as usize }
            ],
        }
    }

    /// Logs `records` in that order under `limit_bytes`; the finished log, the bytes its
    /// file took and each record's position.
    fn log(
        dir: &std::path::Path,
        records: &[u64],
        limit_bytes: usize,
    ) -> (SigLogFile, u64, Vec<(u64, LogAt)>) {
        let mut log = SigLog::new(dir.to_path_buf(), limit_bytes);
        let at = records.iter().map(|&r| (r, log.push(entry(r)).unwrap())).collect();
        let (file, bytes) = log.finish().unwrap();
        (file, bytes, at)
    }

    #[test]
    fn a_log_within_its_limit_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (file, bytes, at) = log(dir.path(), &[3, 1, 2], 1 << 20);
        assert_eq!(bytes, 0);
        assert_eq!(std::fs::read_dir(dir.path()).map_or(0, |d| d.count()), 0);
        let mut reader = file.reader();
        for (record, at) in at {
            assert_eq!(reader.get(at).unwrap(), &entry(record));
        }
    }

    #[test]
    fn the_file_goes_with_the_last_reader() {
        let dir = tempfile::tempdir().unwrap();
        let (file, bytes, at) = log(dir.path(), &(1..=100).collect::<Vec<_>>(), 4 << 10);
        assert!(bytes > 100 * 500, "{bytes}");
        let mut reader = file.reader();
        drop(file);
        assert_eq!(reader.get(at[99].1).unwrap(), &entry(100));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        drop(reader);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_cut_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _, at) = log(dir.path(), &(1..=20).collect::<Vec<_>>(), 4 << 10);
        let path = file.file.as_ref().unwrap().0.0.clone();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let error = file.reader().get(at[19].1).unwrap_err();
        assert_eq!(error.path, path);
    }

    proptest! {
        /// Signatures logged in any order (here: several ascending senders, interleaved
        /// in batches, as they arrive) read back the same in `DocId` order or in any
        /// other, from memory or the file, those logged before the file was made included.
        #[test]
        fn signatures_read_back_whatever_the_order(
            senders in 1usize..7,
            batch in 1usize..40,
            limit in prop_oneof![Just(1usize << 24), 1024usize..16384],
            shuffled in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            // Sender s sends records s, s + senders, ... in batches of `batch`.
            let streams: Vec<Vec<u64>> = (0..senders)
                .map(|s| (1..=300u64).filter(|r| r % senders as u64 == s as u64).collect())
                .collect();
            let mut order = Vec::new();
            let mut next = vec![0; senders];
            let mut turn = seed as usize;
            while order.len() < 300 {
                // A pseudo-random sender among those with records left.
                let s = (0..senders)
                    .map(|k| (turn + k) % senders)
                    .find(|&s| next[s] < streams[s].len())
                    .expect("records are left");
                turn = turn.wrapping_mul(31).wrapping_add(17);
                let take = &streams[s][next[s]..(next[s] + batch).min(streams[s].len())];
                order.extend_from_slice(take);
                next[s] += take.len();
            }
            let (file, bytes, mut at) = log(dir.path(), &order, limit);
            prop_assert_eq!(bytes > 0, limit < 1 << 24);
            at.sort_unstable();
            if shuffled {
                let n = at.len();
                for i in 0..n {
                    at.swap(i, (seed as usize).wrapping_mul(i + 1) % n);
                }
            }
            let mut reader = file.reader();
            for (record, at) in at {
                prop_assert_eq!(reader.get(at).unwrap(), &entry(record));
                // Asked again, as the store's cursor may.
                prop_assert_eq!(reader.get(at).unwrap(), &entry(record));
            }
        }
    }
}
