//! The records a worker read in the first pass over the corpus, kept in order for the
//! passes after it, so that inputs are read, decompressed and parsed once (and a web
//! archive's HTML turned into text once).
//!
//! Records are encoded (bincode) into chunks of about [`CHUNK`] bytes, each followed by
//! the keys of its lines when the first pass computed them for template learning
//! ([`neardup_text::line_keys`]: a web page's lines are put in canonical form and hashed
//! once, for learning and for leaving the learned lines out). Chunks stay in
//! memory while they fit in the log's limit; once one does not, it and every later chunk
//! are compressed (zstd) and appended to one file in the worker's own folder, so a log is
//! read back in the order it was written: the chunks in memory, then the file. Holds: the
//! limit, and one chunk being written or read.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use neardup_io::Record;
use neardup_text::LineKey;

use crate::storage::spill::{RemoveDir, SpillError};

/// Bytes of encoded records per chunk.
const CHUNK: usize = 1 << 20;

/// The zstd level of spilled chunks: the fastest of the standard levels.
const LEVEL: i32 = 1;

/// One worker's records, in the order it read them.
pub(crate) struct RecordLog {
    memory: VecDeque<Vec<u8>>,
    memory_bytes: usize,
    limit_bytes: usize,
    chunk: Vec<u8>,
    path: PathBuf,
    writer: Option<(BufWriter<File>, zstd::bulk::Compressor<'static>)>,
    spilled_chunks: u64,
    spilled_bytes: u64,
    records: u64,
    _remove: RemoveDir,
}

impl std::fmt::Debug for RecordLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordLog")
            .field("records", &self.records)
            .field("memory_bytes", &self.memory_bytes)
            .field("spilled_bytes", &self.spilled_bytes)
            .finish_non_exhaustive()
    }
}

impl RecordLog {
    /// An empty log that holds up to `limit_bytes` in memory and spills the rest to a file
    /// in `dir` (created when first needed, removed with the log).
    pub(crate) fn new(dir: PathBuf, limit_bytes: usize) -> Self {
        RecordLog {
            memory: VecDeque::new(),
            memory_bytes: 0,
            limit_bytes,
            chunk: Vec::new(),
            path: dir.join("records.zst"),
            writer: None,
            spilled_chunks: 0,
            spilled_bytes: 0,
            records: 0,
            _remove: RemoveDir(dir),
        }
    }

    /// Appends `record` with the keys of its lines (empty when not computed).
    ///
    /// # Errors
    /// When a chunk cannot be written to the spill file.
    pub(crate) fn push(
        &mut self,
        record: &Record,
        lines: &[Option<LineKey>],
    ) -> Result<(), SpillError> {
        if self.chunk.capacity() == 0 {
            // Room for a chunk and the record that ends it, so it is rarely copied to grow.
            self.chunk.reserve_exact(CHUNK + CHUNK / 4);
        }
        bincode::serialize_into(&mut self.chunk, record).expect("records encode into memory");
        encode_lines(lines, &mut self.chunk);
        self.records += 1;
        if self.chunk.len() >= CHUNK { self.seal() } else { Ok(()) }
    }

    /// Bytes written to the spill file.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    fn seal(&mut self) -> Result<(), SpillError> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.chunk);
        if self.writer.is_none() && self.memory_bytes + chunk.capacity() <= self.limit_bytes {
            self.memory_bytes += chunk.capacity();
            self.memory.push_back(chunk);
            return Ok(());
        }
        let path = self.path.clone();
        let err = |source| SpillError { path: path.clone(), source };
        if self.writer.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(err)?;
            }
            let file = File::create(&self.path).map_err(err)?;
            let compressor = zstd::bulk::Compressor::new(LEVEL).map_err(err)?;
            self.writer = Some((BufWriter::with_capacity(1 << 16, file), compressor));
        }
        let (out, compressor) = self.writer.as_mut().expect("opened above");
        let packed = compressor.compress(&chunk).map_err(err)?;
        let header = [u64::try_from(chunk.len()).expect("fits"), packed.len() as u64];
        for word in header {
            out.write_all(&word.to_le_bytes()).map_err(err)?;
        }
        out.write_all(&packed).map_err(err)?;
        self.spilled_chunks += 1;
        self.spilled_bytes += 16 + packed.len() as u64;
        // The buffer is reused for the next chunk.
        self.chunk = chunk;
        self.chunk.clear();
        Ok(())
    }

    /// Ends writing: the last chunk is sealed and the file flushed.
    ///
    /// # Errors
    /// When the spill file cannot be written.
    pub(crate) fn finish(&mut self) -> Result<(), SpillError> {
        self.seal()?;
        self.chunk = Vec::new();
        if let Some((out, _)) = &mut self.writer {
            out.flush().map_err(|source| SpillError { path: self.path.clone(), source })?;
        }
        self.writer = None;
        Ok(())
    }

    /// Hands every record, with the keys of its lines, to `on_record` in order. With
    /// `consume`, the chunks held in memory are freed as they are read and the log is
    /// empty afterwards; otherwise it can be read again. Stops early, with `Ok(false)`,
    /// when `on_record` returns false.
    ///
    /// # Errors
    /// When the spill file cannot be read back.
    pub(crate) fn replay(
        &mut self,
        consume: bool,
        mut on_record: impl FnMut(Record, &[Option<LineKey>]) -> bool,
    ) -> Result<bool, SpillError> {
        let err = |source| SpillError { path: self.path.clone(), source };
        let damaged = |e: bincode::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        let mut lines = Vec::new();
        let mut read_chunk =
            |chunk: &[u8], on_record: &mut dyn FnMut(Record, &[Option<LineKey>]) -> bool| {
                let mut rest = chunk;
                while !rest.is_empty() {
                    let record = bincode::deserialize_from(&mut rest).map_err(damaged)?;
                    decode_lines(&mut rest, &mut lines)?;
                    if !on_record(record, &lines) {
                        return Ok(false);
                    }
                }
                Ok::<_, std::io::Error>(true)
            };
        if consume {
            while let Some(chunk) = self.memory.pop_front() {
                self.memory_bytes -= chunk.capacity();
                if !read_chunk(&chunk, &mut on_record).map_err(err)? {
                    return Ok(false);
                }
            }
        } else {
            for chunk in &self.memory {
                if !read_chunk(chunk, &mut on_record).map_err(err)? {
                    return Ok(false);
                }
            }
        }
        if self.spilled_chunks == 0 {
            return Ok(true);
        }
        let mut file = BufReader::with_capacity(1 << 16, File::open(&self.path).map_err(err)?);
        let mut decompressor = zstd::bulk::Decompressor::new().map_err(err)?;
        let (mut packed, mut chunk) = (Vec::new(), Vec::new());
        for _ in 0..self.spilled_chunks {
            let mut header = [0u8; 16];
            file.read_exact(&mut header).map_err(err)?;
            let word = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().expect("8"));
            let (raw, size) = (word(0) as usize, word(8) as usize);
            // Sizes from a damaged file must not abort the process for want of memory.
            let too_big = || std::io::Error::new(std::io::ErrorKind::InvalidData, "chunk too big");
            packed.clear();
            packed.try_reserve(size).map_err(|_| err(too_big()))?;
            packed.resize(size, 0);
            file.read_exact(&mut packed).map_err(err)?;
            chunk.clear();
            chunk.try_reserve(raw).map_err(|_| err(too_big()))?;
            decompressor.decompress_to_buffer(&packed, &mut chunk).map_err(err)?;
            if !read_chunk(&chunk, &mut on_record).map_err(err)? {
                return Ok(false);
            }
        }
        if consume {
            self.spilled_chunks = 0;
            let _ = std::fs::remove_file(&self.path);
        }
        Ok(true)
    }
}

/// Appends `lines`: their number, then per line its key (8 bytes, 0 for a line without
/// one: a key always has [`neardup_text::CONTENT_BIT`]) and, after a key, its characters.
/// Numbers are LEB128.
fn encode_lines(lines: &[Option<LineKey>], out: &mut Vec<u8>) {
    leb128(lines.len() as u64, out);
    for line in lines {
        match line {
            Some(key) => {
                out.extend_from_slice(&key.key.to_le_bytes());
                leb128(u64::from(key.chars), out);
            }
            None => out.extend_from_slice(&0u64.to_le_bytes()),
        }
    }
}

fn leb128(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads what [`encode_lines`] wrote from the front of `rest` into `lines`.
fn decode_lines(rest: &mut &[u8], lines: &mut Vec<Option<LineKey>>) -> std::io::Result<()> {
    let damaged = || std::io::Error::new(std::io::ErrorKind::InvalidData, "damaged line keys");
    let number = |rest: &mut &[u8]| -> std::io::Result<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, tail) = rest.split_first().ok_or_else(damaged)?;
            *rest = tail;
            n |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(n);
            }
        }
        Err(damaged())
    };
    lines.clear();
    let count = number(rest)?;
    // Each line takes at least 8 bytes: a damaged count cannot reserve beyond the chunk.
    if count > (rest.len() / 8) as u64 {
        return Err(damaged());
    }
    lines.reserve(count as usize);
    for _ in 0..count {
        let (key, tail) = rest.split_first_chunk::<8>().ok_or_else(damaged)?;
        *rest = tail;
        let key = u64::from_le_bytes(*key);
        lines.push(match key {
            0 => None,
            key => {
                let chars = u32::try_from(number(rest)?).map_err(|_| damaged())?;
                Some(LineKey { key, chars })
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::DocId;
    use neardup_io::{InputDoc, Reason, RejectedRecord, WebMeta};

    fn records(n: u64) -> Vec<Record> {
        (0..n)
            .map(|i| {
                let doc = DocId::new(0, i);
                if i % 7 == 3 {
                    let reason = Reason::MalformedRecord;
                    let detail = format!("record {i}");
                    Record::Reject(RejectedRecord { doc, id: None, reason, detail })
                } else {
                    let url = Some(format!("https://example.org/{i}"));
                    Record::Doc(InputDoc {
                        doc,
                        id: format!("id-{i}"),
                        // Text that does not compress to nothing, some chunks' worth.
                        text: format!("{i} {}\n", "word ".repeat((i % 300) as usize)),
                        meta: Some(Box::new(WebMeta { url, ..WebMeta::default() })),
                    })
                }
            })
            .collect()
    }

    /// Line keys of every shape: none, keys without one, the largest values.
    fn lines(i: u64) -> Vec<Option<LineKey>> {
        match i % 4 {
            0 => Vec::new(),
            1 => vec![None],
            _ => (0..i % 50)
                .map(|j| {
                    let key = LineKey {
                        key: neardup_text::CONTENT_BIT | (i << 8) | j,
                        chars: 1 << (j % 32),
                    };
                    (j % 3 != 1).then_some(key)
                })
                .chain([Some(LineKey { key: u64::MAX, chars: u32::MAX })])
                .collect(),
        }
    }

    type Kept = (Record, Vec<Option<LineKey>>);

    fn kept(n: u64) -> Vec<Kept> {
        records(n).into_iter().zip(0..).map(|(r, i)| (r, lines(i))).collect()
    }

    fn write(dir: &std::path::Path, limit_bytes: usize, records: &[Kept]) -> RecordLog {
        let mut log = RecordLog::new(dir.join("log"), limit_bytes);
        records.iter().for_each(|(r, lines)| log.push(r, lines).unwrap());
        log.finish().unwrap();
        log
    }

    fn read(log: &mut RecordLog, consume: bool) -> Vec<Kept> {
        let mut out = Vec::new();
        assert!(
            log.replay(consume, |r, lines| {
                out.push((r, lines.to_vec()));
                true
            })
            .unwrap()
        );
        out
    }

    #[test]
    fn records_and_their_line_keys_come_back_in_order_from_memory_and_from_the_spill_file() {
        let dir = tempfile::tempdir().unwrap();
        let all = kept(6000);
        for limit in [usize::MAX, 3 * CHUNK, 0] {
            let mut log = write(dir.path(), limit, &all);
            let spilled = log.spilled_bytes();
            assert_eq!(spilled > 0, limit != usize::MAX, "limit {limit}: {log:?}");
            if limit == 0 {
                // Compressed, the spill file is far smaller than the records.
                let encoded: usize =
                    all.iter().map(|(r, _)| bincode::serialized_size(r).unwrap() as usize).sum();
                assert!(spilled * 4 < encoded as u64, "{spilled} of {encoded}");
            }
            // Read again as often as asked, then once more, freeing it.
            assert_eq!(read(&mut log, false), all);
            assert_eq!(read(&mut log, false), all);
            assert_eq!(read(&mut log, true), all);
            assert!(read(&mut log, true).is_empty());
            assert!(!dir.path().join("log/records.zst").exists());
            drop(log);
            assert!(!dir.path().join("log").exists(), "the folder goes with the log");
        }
    }

    #[test]
    fn damaged_line_keys_are_an_error_not_a_panic_or_a_huge_allocation() {
        let mut bytes = Vec::new();
        encode_lines(&lines(6), &mut bytes);
        let mut back = Vec::new();
        decode_lines(&mut &bytes[..], &mut back).unwrap();
        assert_eq!(back, lines(6));
        // Every cut, a count far beyond the bytes, a number that never ends.
        for cut in 0..bytes.len() {
            assert!(decode_lines(&mut &bytes[..cut], &mut back).is_err(), "cut at {cut}");
        }
        let mut huge = Vec::new();
        leb128(u64::MAX, &mut huge);
        assert!(decode_lines(&mut &huge[..], &mut back).is_err());
        assert!(decode_lines(&mut &[0xff; 11][..], &mut back).is_err());
        // A character count past u32.
        let mut wide = Vec::new();
        leb128(1, &mut wide);
        wide.extend_from_slice(&neardup_text::CONTENT_BIT.to_le_bytes());
        leb128(u64::from(u32::MAX) + 1, &mut wide);
        assert!(decode_lines(&mut &wide[..], &mut back).is_err());
    }

    #[test]
    fn a_replay_stops_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = write(dir.path(), CHUNK, &kept(3000));
        let mut seen = 0;
        assert!(
            !log.replay(false, |_, _| {
                seen += 1;
                seen < 2500
            })
            .unwrap()
        );
        assert_eq!(seen, 2500);
    }

    #[test]
    fn a_spill_file_that_cannot_be_written_or_read_back_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        let mut log = RecordLog::new(file.join("log"), 0);
        let error =
            kept(2000).iter().try_for_each(|(r, l)| log.push(r, l)).and_then(|()| log.finish());
        let error = error.unwrap_err();
        assert!(error.path.starts_with(&file), "{error:?}");

        // Cut short after it was written: reading it back fails, naming it.
        let mut log = write(dir.path(), 0, &kept(3000));
        let path = dir.path().join("log/records.zst");
        let size = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(size / 2).unwrap();
        let error = log.replay(true, |_, _| true).unwrap_err();
        assert_eq!(error.path, path);
    }
}
