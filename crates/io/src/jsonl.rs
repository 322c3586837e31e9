//! JSON Lines reader: one record per line, plain, gzip or zstd. Only the id and text fields
//! are decoded; every other field is skipped without allocating.

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use neardup_core::DocId;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::decompress::{Compression, decompressed};
use crate::error::{Error, Result};
use crate::input::{CountingFile, InputFile};
use crate::read_options::{OnReadError, ReadOptions, generated_id};
use crate::records::{InputDoc, Reason, Record, RejectedRecord, WebMeta};

/// Reads records from one JSONL file.
pub struct JsonlRecords {
    reader: Box<dyn BufRead + Send>,
    file: InputFile,
    fields: ReadOptions,
    on_error: OnReadError,
    line: u64,
    buf: Vec<u8>,
    done: bool,
    unreadable: Option<Record>,
    /// Reading a [`LineRange`]: the file offset of the next line, and where lines stop.
    pos: u64,
    end: Option<u64>,
    /// Zero bytes read past after the last gzip member.
    trailing_zeros: Arc<AtomicU64>,
}

/// The lines of a plain (uncompressed) JSONL file that start within `[start, end)`, the
/// first of them being line `lines_before + 1` of the file: so that several workers can
/// read one file, each its own byte range, and still number records as one reader would.
/// [`count_line_starts`] gives `lines_before` of a range from the ranges before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRange {
    /// First byte.
    pub start: u64,
    /// One past the last byte; a line that starts before it is read to its end.
    pub end: u64,
    /// Lines of the file that start before `start` (blank ones included).
    pub lines_before: u64,
}

/// The number of lines of the plain file `path` that start within `[start, end)` (blank
/// ones included): what a reader of that [`LineRange`] numbers. `end` is at most the file
/// size.
///
/// # Errors
/// [`Error::Open`] or [`Error::Read`] naming the file.
pub fn count_line_starts(path: &std::path::Path, start: u64, end: u64) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    if end <= start {
        return Ok(0);
    }
    let mut file = crate::input::CountingFile::open(path, None)
        .map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
    let read_err = |source| Error::Read { path: path.to_path_buf(), record: 0, source };
    // A line starts at 0 and after every line end before the last byte; those starting in
    // [start, end) are the line ends in [start - 1, end - 1), plus the first line.
    let (from, first) = if start == 0 { (0, 1) } else { (start - 1, 0) };
    file.seek(SeekFrom::Start(from)).map_err(read_err)?;
    let mut left = end - 1 - from;
    let mut count = first;
    let mut buf = vec![0u8; 1 << 20];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = file.read(&mut buf[..want]).map_err(read_err)?;
        if n == 0 {
            break;
        }
        count += count_newlines(&buf[..n]);
        left -= n as u64;
    }
    Ok(count)
}

/// The line ends in `bytes`, found with `memchr` (vector compares; a byte-at-a-time count
/// ran at about 2 GB/s, a pass over every byte of the input).
fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

impl JsonlRecords {
    /// Opens `file`, decompressing by its extension.
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened or its decoder cannot start.
    pub fn open(
        file: &InputFile,
        compression: Compression,
        fields: ReadOptions,
        on_error: OnReadError,
        bytes_read: Option<Arc<AtomicU64>>,
    ) -> Result<Self> {
        let open_err = |source| Error::Open { path: file.path.clone(), source };
        let raw = CountingFile::open_input(file, bytes_read).map_err(open_err)?;
        let raw = BufReader::with_capacity(1 << 16, raw);
        let trailing_zeros = Arc::default();
        let reader = decompressed(raw, compression, &trailing_zeros).map_err(open_err)?;
        Ok(JsonlRecords {
            reader: Box::new(BufReader::with_capacity(1 << 16, reader)),
            file: file.clone(),
            fields,
            on_error,
            line: 0,
            buf: Vec::new(),
            done: false,
            unreadable: None,
            pos: 0,
            end: None,
            trailing_zeros,
        })
    }

    /// Opens the lines of the plain JSONL `file` that start in `range`.
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened or positioned.
    pub fn open_range(
        file: &InputFile,
        fields: ReadOptions,
        on_error: OnReadError,
        bytes_read: Option<Arc<AtomicU64>>,
        range: LineRange,
    ) -> Result<Self> {
        use std::io::{Seek, SeekFrom};
        let open_err = |source| Error::Open { path: file.path.clone(), source };
        let mut raw = CountingFile::open_input(file, bytes_read).map_err(open_err)?;
        let mut pos = range.start;
        if range.start > 0 {
            // Back one byte and past the next line end: the first line starting at or
            // after `start` (the line that `start` cuts belongs to the range before).
            raw.seek(SeekFrom::Start(range.start - 1)).map_err(open_err)?;
            pos = range.start - 1;
        }
        let mut reader = BufReader::with_capacity(1 << 16, raw);
        if range.start > 0 {
            let mut skipped = Vec::new();
            pos += read_line_bounded(&mut reader, &mut skipped, 0).map_err(open_err)?.0;
        }
        Ok(JsonlRecords {
            reader: Box::new(reader),
            file: file.clone(),
            fields,
            on_error,
            line: range.lines_before,
            buf: Vec::new(),
            done: false,
            unreadable: None,
            pos,
            end: Some(range.end),
            trailing_zeros: Arc::default(),
        })
    }

    /// Zero bytes read past after the last gzip member so far: padding that `gzip -d`
    /// ignores, and so does this reader.
    pub fn trailing_zero_bytes(&self) -> u64 {
        self.trailing_zeros.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn parse_line(&self, doc: DocId) -> Record {
        parse_line(&self.file, &self.fields, doc, &self.buf)
    }

    /// The next line that is not blank, unparsed: for parsing elsewhere with
    /// [`parse_line`] (another worker); a line above the size limit is a `too_large`
    /// reject. Errors as for the records.
    pub fn next_line(&mut self) -> Option<Result<Item>> {
        self.next_raw().map(|r| {
            r.map(|raw| match raw {
                Raw::Line(doc) => Item::Line(RawLine { doc, bytes: std::mem::take(&mut self.buf) }),
                Raw::TooLarge(doc, bytes) => Item::Record(self.too_large(doc, bytes)),
            })
        })
    }

    fn too_large(&self, doc: DocId, bytes: u64) -> Record {
        Record::Reject(RejectedRecord {
            doc,
            id: None,
            reason: Reason::TooLarge,
            detail: format!(
                "the line has {bytes} bytes, above input.max_record_bytes = {}",
                self.fields.max_record_bytes
            ),
        })
    }

    /// Reads the next line that is not blank into `self.buf` (or past it, when it is above
    /// the size limit): its `DocId`, or what ends the file (an error, or an `unreadable`
    /// reject under [`OnReadError::Reject`]).
    fn next_raw(&mut self) -> Option<Result<Raw>> {
        while !self.done {
            if self.end.is_some_and(|end| self.pos >= end) {
                self.done = true; // the next line starts in the next range
                break;
            }
            self.buf.clear();
            let limit = usize::try_from(self.fields.max_record_bytes).unwrap_or(usize::MAX);
            let read = read_line_bounded(&mut self.reader, &mut self.buf, limit);
            let next_line = self.line + 1;
            match read {
                Ok((0, _)) => self.done = true,
                Ok((n, over)) => {
                    self.pos += n;
                    self.line = next_line;
                    if self.line > DocId::MAX_RECORD {
                        self.done = true;
                        return Some(Err(Error::TooManyRecords { path: self.file.path.clone() }));
                    }
                    let doc = DocId::new(self.file.index, self.line);
                    if over {
                        return Some(Ok(Raw::TooLarge(doc, n)));
                    }
                    if self.buf.iter().all(u8::is_ascii_whitespace) {
                        continue; // blank lines are not records
                    }
                    return Some(Ok(Raw::Line(doc)));
                }
                Err(source) => {
                    self.done = true;
                    let path = &self.file.path;
                    let fail =
                        |source| Error::Read { path: path.clone(), record: self.line, source };
                    match self.on_error.rest_of_file(source, fail, self.file.index, next_line) {
                        Ok(reject) => self.unreadable = Some(reject),
                        Err(e) => return Some(Err(e)),
                    }
                    return None;
                }
            }
        }
        None
    }

    /// Under [`OnReadError::Reject`], the reject that stands for the unreadable rest of the
    /// file, once reading has stopped there (taken once).
    pub fn take_unreadable(&mut self) -> Option<Record> {
        self.unreadable.take()
    }
}

/// What reading a line found.
enum Raw {
    /// A line, in the buffer.
    Line(DocId),
    /// A line of this many bytes, above the limit: read past, not held.
    TooLarge(DocId, u64),
}

/// Reads one line, with its line end, into `buf`, holding at most `limit` bytes of it
/// besides the line end; returns the line's bytes and whether it was longer (then `buf` is
/// empty and the line was read past in pieces, never held whole). A longer line of
/// whitespace only is not longer: it comes back empty, as the blank line it is.
///
/// # Errors
/// What the reader reports.
pub(crate) fn read_line_bounded(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<(u64, bool)> {
    let mut total = 0u64;
    let mut over = false;
    let mut blank = true;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((total, over && !blank));
        }
        let (used, ends) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if over {
            blank &= available[..used].iter().all(u8::is_ascii_whitespace);
        } else {
            let content = buf.len() + used - usize::from(ends);
            if content > limit {
                over = true;
                blank = buf.iter().chain(&available[..used]).all(u8::is_ascii_whitespace);
                buf.clear();
                buf.shrink_to(1 << 16);
            } else {
                buf.extend_from_slice(&available[..used]);
            }
        }
        reader.consume(used);
        total += used as u64;
        if ends {
            return Ok((total, over && !blank));
        }
    }
}

/// A line of a JSONL file, not yet parsed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RawLine {
    /// The record's position.
    pub doc: DocId,
    /// The line's bytes, with its line end.
    pub bytes: Vec<u8>,
}

/// Parses one line of the JSONL file `file` (record `doc`): a document, or a reject with
/// its reason. Only the id, text and URL fields are decoded.
pub fn parse_line(file: &InputFile, fields: &ReadOptions, doc: DocId, line: &[u8]) -> Record {
    let reject = |id: Option<String>, reason, detail: String| {
        Record::Reject(RejectedRecord { doc, id, reason, detail })
    };
    // A byte-order mark may start the file; it is not part of the first record.
    let bytes = match doc.record() {
        1 => line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line),
        _ => line,
    };
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        return reject(None, Reason::InvalidUtf8, "the line is not valid UTF-8".into());
    };
    let picker = Picker {
        fields: KeyMatch {
            id: fields.id.as_deref(),
            text: &fields.text,
            url: fields.url.as_deref(),
        },
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let picked = match picker.deserialize(&mut de).and_then(|p| de.end().map(|()| p)) {
        Ok(p) => p,
        Err(e) => return reject(None, Reason::MalformedJson, json_error_detail(&e)),
    };
    // A web page's URL: a string in the URL field (which may be the id field too).
    let url = match picked.url {
        Some(Value::String(url)) if !url.trim().is_empty() => Some(url),
        None if fields.url.is_some() && fields.url == fields.id => match &picked.id {
            Some(Value::String(url)) if !url.trim().is_empty() => Some(url.clone()),
            _ => None,
        },
        _ => None,
    };
    let meta = url.map(|url| Box::new(WebMeta { url: Some(url), ..WebMeta::default() }));
    let id = match (&fields.id, picked.id) {
        (None, _) => generated_id(file, doc.record()),
        (Some(_), Some(Value::String(s))) => s,
        (Some(_), Some(Value::Number(n))) if n.is_i64() || n.is_u64() => n.to_string(),
        (Some(name), None) => {
            return reject(None, Reason::MissingId, format!("no field \"{name}\""));
        }
        (Some(name), Some(Value::Null)) => {
            return reject(None, Reason::MissingId, format!("field \"{name}\" is null"));
        }
        (Some(name), Some(other)) => {
            let detail = format!("field \"{name}\" is {}, not a string or integer", kind(&other));
            return reject(None, Reason::InvalidId, detail);
        }
    };
    match picked.text {
        Some(Value::String(text)) if text.trim().is_empty() => {
            reject(Some(id), Reason::EmptyText, format!("field \"{}\" is empty", fields.text))
        }
        Some(Value::String(text)) => {
            let text = if meta.is_some() { crate::html::field_page_text(text) } else { text };
            Record::Doc(InputDoc { doc, id, text, meta })
        }
        None => reject(Some(id), Reason::MissingText, format!("no field \"{}\"", fields.text)),
        Some(Value::Null) => {
            reject(Some(id), Reason::MissingText, format!("field \"{}\" is null", fields.text))
        }
        Some(other) => {
            let detail = format!("field \"{}\" is {}, not a string", fields.text, kind(&other));
            reject(Some(id), Reason::TextNotString, detail)
        }
    }
}

impl Iterator for JsonlRecords {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_raw() {
            Some(Ok(Raw::Line(doc))) => Some(Ok(self.parse_line(doc))),
            Some(Ok(Raw::TooLarge(doc, bytes))) => Some(Ok(self.too_large(doc, bytes))),
            Some(Err(e)) => Some(Err(e)),
            None => self.take_unreadable().map(Ok),
        }
    }
}

/// The JSON type of a value, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// serde_json's message without its "line 1" (the record is one line; the file line is
/// reported separately). The line is parsed with its line end, so an error past it (a
/// string or object left open) is at the end of the line, which serde_json counts as
/// column 0 of the next.
fn json_error_detail(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(p) if e.line() > 1 => format!("{} at the end of the line", &msg[..p]),
        Some(p) => format!("{} at column {}", &msg[..p], e.column()),
        None => msg,
    }
}

/// The fields of interest, as JSON values.
struct Picked {
    id: Option<Value>,
    text: Option<Value>,
    url: Option<Value>,
}

/// Deserializes a JSON object keeping only the id, text and URL fields.
struct Picker<'a> {
    fields: KeyMatch<'a>,
}

impl<'de> DeserializeSeed<'de> for Picker<'_> {
    type Value = Picked;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Picked, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Picker<'_> {
    type Value = Picked;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Picked, A::Error> {
        let mut picked = Picked { id: None, text: None, url: None };
        while let Some(key) = map.next_key_seed(self.fields)? {
            match key {
                Key::Id => picked.id = Some(map.next_value()?),
                Key::Text => picked.text = Some(map.next_value()?),
                Key::Url => picked.url = Some(map.next_value()?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(picked)
    }
}

enum Key {
    Id,
    Text,
    Url,
    Other,
}

/// Classifies an object key without allocating. A key that names two fields is the text,
/// then the id.
#[derive(Clone, Copy)]
struct KeyMatch<'a> {
    id: Option<&'a str>,
    text: &'a str,
    url: Option<&'a str>,
}

impl<'de> DeserializeSeed<'de> for KeyMatch<'_> {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyMatch<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(if key == self.text {
            Key::Text
        } else if Some(key) == self.id {
            Key::Id
        } else if Some(key) == self.url {
            Key::Url
        } else {
            Key::Other
        })
    }
}

/// What a reader yields: a record, or a JSONL line left for another worker to parse.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Item {
    /// A parsed record.
    Record(Record),
    /// An unparsed JSONL line (see [`crate::parse_line`]).
    Line(RawLine),
}

impl Item {
    /// The record's position.
    pub fn doc(&self) -> DocId {
        match self {
            Item::Record(record) => record.doc(),
            Item::Line(line) => line.doc,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;
    use std::path::Path;

    use super::*;
    use crate::input::Format;

    fn file(path: &Path, compression: Compression) -> InputFile {
        InputFile {
            index: 3,
            path: path.to_path_buf(),
            format: Format::Jsonl(compression),
            bytes: 0,
            version: None,
        }
    }

    #[test]
    fn newlines_are_counted_across_blocks_however_dense() {
        // Lengths around vector widths and past them, at every density, and a buffer
        // of nothing but line ends.
        let mut seed = 7u64;
        for len in [0, 1, 63, 64, 16_319, 16_320, 16_321, 40_000, 100_003] {
            for every in [1, 2, 7, 1000] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        if (seed >> 33).is_multiple_of(every) { b'\n' } else { b'x' }
                    })
                    .collect();
                let expected = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!(count_newlines(&bytes), expected, "{len} bytes, 1 in {every}");
            }
        }
        assert_eq!(count_newlines(&[b'\n'; 3 * 16_320 + 5]), 3 * 16_320 + 5);
    }

    proptest::proptest! {
        /// A line is rejected as invalid UTF-8 exactly when the standard library's check
        /// says so: overlong forms, surrogates, code points past U+10FFFF and sequences cut
        /// short, alone or among valid text, in either check's fast path (long ASCII runs).
        #[test]
        fn lines_are_rejected_as_invalid_utf8_exactly_as_std_would(
            pieces in proptest::collection::vec(0usize..12, 0..60),
        ) {
            const PIECES: [&[u8]; 12] = [
                b"abc", b"\xe4\xb8\xad", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xc0\xaf",
                b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe4\xb8", b"\x80", b"\xff",
                b"the quick brown fox jumps over the lazy dog ", b"\xf0\x9f",
            ];
            let text: Vec<u8> = pieces.iter().flat_map(|&p| PIECES[p].iter().copied()).collect();
            let mut line = b"{\"id\": \"a\", \"text\": \"x".to_vec();
            line.extend_from_slice(&text);
            line.extend_from_slice(b"\"}");
            let file = file(Path::new("a.jsonl"), Compression::None);
            let record = parse_line(&file, &ReadOptions::default(), DocId::new(3, 2), &line);
            let rejected = matches!(
                record,
                Record::Reject(RejectedRecord { reason: Reason::InvalidUtf8, .. })
            );
            proptest::prop_assert_eq!(rejected, std::str::from_utf8(&line).is_err());
        }

        /// Reading a file as ranges cut anywhere, each numbered from the line starts
        /// counted in the ranges before it, gives the records of one whole read: same
        /// lines, same numbers, none twice, blank lines, CRLF and a missing last line end
        /// included.
        #[test]
        fn ranges_cut_anywhere_read_as_the_whole_file(
            lines in proptest::collection::vec(0u8..5, 0..40),
            cuts in proptest::collection::vec(0.0f64..1.0, 0..4),
            last_end in proptest::bool::ANY,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("a.jsonl");
            let mut text = String::new();
            for (i, kind) in lines.iter().enumerate() {
                match kind {
                    0 => text.push('\n'),
                    1 => text.push_str("  \r\n"),
                    2 => text.push_str("not json\n"),
                    _ => text.push_str(&format!("{{\"id\":\"{i}\",\"text\":\"t{i}\"}}\r\n")),
                }
            }
            if !last_end && text.ends_with('\n') {
                text.pop();
            }
            std::fs::write(&path, &text).unwrap();
            let len = text.len() as u64;
            let f = InputFile { bytes: len, ..file(&path, Compression::None) };
            let whole: Vec<Record> = JsonlRecords::open(&f, Compression::None, ReadOptions::default(), OnReadError::Fail, None)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mut bounds: Vec<u64> = cuts.iter().map(|c| (c * len as f64) as u64).collect();
            bounds.extend([0, len]);
            bounds.sort_unstable();
            let mut pieces = Vec::new();
            let mut lines_before = 0;
            for w in bounds.windows(2) {
                let range = LineRange { start: w[0], end: w[1], lines_before };
                pieces.extend(
                    JsonlRecords::open_range(&f, ReadOptions::default(), OnReadError::Fail, None, range)
                        .unwrap()
                        .map(Result::unwrap),
                );
                lines_before += count_line_starts(&path, w[0], w[1]).unwrap();
            }
            proptest::prop_assert_eq!(pieces, whole);
            let all_lines = text.split_inclusive('\n').count() as u64;
            proptest::prop_assert_eq!(lines_before, all_lines);
        }
    }

    fn read_all(path: &Path, compression: Compression, fields: ReadOptions) -> Vec<Result<Record>> {
        JsonlRecords::open(&file(path, compression), compression, fields, OnReadError::Fail, None)
            .unwrap()
            .collect()
    }

    #[test]
    fn lines_above_the_limit_are_rejected_and_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl.gz");
        let mut gz = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        writeln!(gz, "{{\"id\":\"a\",\"text\":\"small\"}}").unwrap();
        writeln!(gz, "{{\"id\":\"b\",\"text\":\"{}\"}}", "x".repeat(300_000)).unwrap();
        writeln!(gz, "{{\"id\":\"c\",\"text\":\"after\"}}").unwrap();
        // A bomb: a long run of zero bytes and no line end.
        gz.write_all(&vec![0u8; 2 << 20]).unwrap();
        gz.finish().unwrap();
        let fields = ReadOptions { max_record_bytes: 100_000, ..ReadOptions::default() };
        let records = read_all(&path, Compression::Gzip, fields.clone());
        assert_eq!(
            reasons(&records),
            [(1, None), (2, Some(Reason::TooLarge)), (3, None), (4, Some(Reason::TooLarge))]
        );
        let Ok(Record::Reject(r)) = &records[1] else { panic!() };
        assert!(r.detail.contains("300") && r.detail.contains("max_record_bytes"), "{}", r.detail);
        // Read as lines for parsing elsewhere: the same rejects.
        let mut reader = JsonlRecords::open(
            &file(&path, Compression::Gzip),
            Compression::Gzip,
            fields,
            OnReadError::Fail,
            None,
        )
        .unwrap();
        let mut kinds = Vec::new();
        while let Some(item) = reader.next_line() {
            kinds.push(match item.unwrap() {
                Item::Line(l) => format!("line {}", l.doc.record()),
                Item::Record(Record::Reject(r)) => format!("{:?}", r.reason),
                Item::Record(Record::Doc(_)) => "doc".into(),
            });
        }
        assert_eq!(kinds, ["line 1", "TooLarge", "line 3", "TooLarge"]);
        // The bounded reader holds no more than the limit of a line.
        let mut buf = Vec::new();
        let mut long = std::io::BufReader::with_capacity(8, &b"0123456789abcdef\nnext\n"[..]);
        assert_eq!(read_line_bounded(&mut long, &mut buf, 4).unwrap(), (17, true));
        assert!(buf.is_empty());
        assert_eq!(read_line_bounded(&mut long, &mut buf, 4).unwrap(), (5, false));
        assert_eq!(buf, b"next\n");
    }

    fn reasons(records: &[Result<Record>]) -> Vec<(u64, Option<Reason>)> {
        records
            .iter()
            .map(|r| match r.as_ref().unwrap() {
                Record::Doc(d) => (d.doc.record(), None),
                Record::Reject(r) => (r.doc.record(), Some(r.reason)),
            })
            .collect()
    }

    #[test]
    fn every_bad_line_is_a_located_reject() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        let mut f = File::create(&path).unwrap();
        f.write_all(b"{\"id\": \"a\", \"text\": \"hello\", \"meta\": {\"x\": [1, 2]}}\n").unwrap();
        f.write_all(b"{not json}\n").unwrap();
        f.write_all(b"\n").unwrap();
        f.write_all(b"{\"id\": \"c\", \"text\": \"bad \xff byte\"}\n").unwrap();
        f.write_all(b"{\"id\": \"d\"}\n").unwrap();
        f.write_all(b"{\"id\": \"e\", \"text\": 5}\n").unwrap();
        f.write_all(b"{\"id\": \"f\", \"text\": \"   \"}\n").unwrap();
        f.write_all(b"{\"text\": \"no id\"}\n").unwrap();
        f.write_all(b"{\"id\": 17, \"text\": \"numeric id\"}\n").unwrap();
        f.write_all(b"{\"id\": [1], \"text\": \"x\"}\n").unwrap();
        f.write_all(b"[1, 2]\n").unwrap();
        f.write_all(b"{\"id\": \"k\", \"text\": \"ok\"} trailing\n").unwrap();
        f.write_all(b"{\"id\": \"l\", \"te\\u0078t\": \"escaped key\"}").unwrap();
        drop(f);
        let records = read_all(&path, Compression::None, ReadOptions::default());
        assert_eq!(
            reasons(&records),
            vec![
                (1, None),
                (2, Some(Reason::MalformedJson)),
                (4, Some(Reason::InvalidUtf8)),
                (5, Some(Reason::MissingText)),
                (6, Some(Reason::TextNotString)),
                (7, Some(Reason::EmptyText)),
                (8, Some(Reason::MissingId)),
                (9, None),
                (10, Some(Reason::InvalidId)),
                (11, Some(Reason::MalformedJson)),
                (12, Some(Reason::MalformedJson)),
                (13, None),
            ]
        );
        let Ok(Record::Doc(first)) = &records[0] else { panic!() };
        assert_eq!(
            (first.id.as_str(), first.text.as_str(), first.doc.file_index()),
            ("a", "hello", 3)
        );
        let Ok(Record::Doc(numeric)) = &records[7] else { panic!() };
        assert_eq!(numeric.id, "17");
        let Ok(Record::Reject(malformed)) = &records[1] else { panic!() };
        assert!(malformed.detail.contains("column"), "{}", malformed.detail);
    }

    #[test]
    fn a_byte_order_mark_does_not_reject_the_first_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.jsonl");
        std::fs::write(
            &path,
            b"\xEF\xBB\xBF{\"id\": \"a\", \"text\": \"x\"}\n\xEF\xBB\xBF{\"id\": \"b\"}\n",
        )
        .unwrap();
        let records = read_all(&path, Compression::None, ReadOptions::default());
        assert!(matches!(&records[0], Ok(Record::Doc(d)) if d.id == "a"));
        // Only at the start of the file: elsewhere it is a malformed line.
        assert!(matches!(&records[1], Ok(Record::Reject(r)) if r.reason == Reason::MalformedJson));
    }

    #[test]
    fn a_string_in_the_url_field_makes_a_web_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pages.jsonl");
        let lines = [
            r#"{"id": "a", "url": "https://s.example/a", "text": "x"}"#,
            r#"{"id": "b", "text": "x"}"#,
            r#"{"id": "c", "url": null, "text": "x"}"#,
            r#"{"id": "d", "url": {"href": "https://s.example/d"}, "text": "x"}"#,
            r#"{"text": "x", "link": "https://s.example/e", "id": "e"}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let url_of = |fields: ReadOptions| -> Vec<Option<String>> {
            read_all(&path, Compression::None, fields)
                .into_iter()
                .map(|r| match r {
                    Ok(Record::Doc(d)) => d.meta.and_then(|m| m.url),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let url = |u: &str| Some(u.to_string());
        assert_eq!(
            url_of(ReadOptions::default()),
            [url("https://s.example/a"), None, None, None, None]
        );
        let link = ReadOptions { url: Some("link".into()), ..ReadOptions::default() };
        assert_eq!(url_of(link), [None, None, None, None, url("https://s.example/e")]);
        assert_eq!(
            url_of(ReadOptions { url: None, ..ReadOptions::default() }),
            [const { None }; 5]
        );
        // The URL may be the id as well.
        let by_url = ReadOptions {
            id: Some("link".into()),
            url: Some("link".into()),
            ..ReadOptions::default()
        };
        let records = read_all(&path, Compression::None, by_url);
        let Ok(Record::Doc(d)) = &records[4] else { panic!() };
        assert_eq!(
            (d.id.as_str(), d.meta.as_ref().unwrap().url.as_deref()),
            ("https://s.example/e", Some("https://s.example/e"))
        );
    }

    #[test]
    fn reads_gzip_and_zstd_and_custom_fields() {
        let dir = tempfile::tempdir().unwrap();
        let body =
            b"{\"url\": \"u1\", \"content\": \"one\"}\n{\"url\": \"u2\", \"content\": \"two\"}\n";
        let gz = dir.path().join("a.jsonl.gz");
        let mut enc =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        enc.write_all(body).unwrap();
        enc.finish().unwrap();
        let zst = dir.path().join("a.jsonl.zst");
        std::fs::write(&zst, zstd::encode_all(&body[..], 3).unwrap()).unwrap();
        let fields = ReadOptions {
            id: Some("url".into()),
            text: "content".into(),
            ..ReadOptions::default()
        };
        for (path, c) in [(&gz, Compression::Gzip), (&zst, Compression::Zstd)] {
            let records = read_all(path, c, fields.clone());
            assert_eq!(records.len(), 2);
            let Ok(Record::Doc(d)) = &records[1] else { panic!() };
            assert_eq!((d.id.as_str(), d.text.as_str()), ("u2", "two"));
        }
        let generated = read_all(
            &gz,
            Compression::Gzip,
            ReadOptions { id: None, text: "content".into(), ..ReadOptions::default() },
        );
        let Ok(Record::Doc(d)) = &generated[0] else { panic!() };
        assert!(d.id.ends_with("a.jsonl.gz:1"), "{}", d.id);
    }

    proptest::proptest! {
        #[test]
        fn any_id_and_text_round_trip(
            docs in proptest::collection::vec(("\\PC{0,12}", "\\PC*\\S\\PC*"), 1..20),
            extra in proptest::option::of("\\PC{0,8}"),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.jsonl");
            let mut body = String::new();
            for (id, text) in &docs {
                let mut v = serde_json::json!({"text": text, "id": id});
                if let Some(x) = &extra {
                    v["nested"] = serde_json::json!({"id": x, "text": [x]});
                }
                body.push_str(&v.to_string());
                body.push('\n');
            }
            std::fs::write(&path, body).unwrap();
            let records = read_all(&path, Compression::None, ReadOptions::default());
            proptest::prop_assert_eq!(records.len(), docs.len());
            for (record, (id, text)) in records.iter().zip(&docs) {
                match record.as_ref().unwrap() {
                    Record::Doc(d) => {
                        proptest::prop_assert_eq!(&d.id, id);
                        proptest::prop_assert_eq!(&d.text, text);
                    }
                    Record::Reject(r) => proptest::prop_assert!(false, "rejected {:?}", r),
                }
            }
        }
    }

    #[test]
    fn truncated_gzip_is_an_error_or_a_counted_reject() {
        let dir = tempfile::tempdir().unwrap();
        let gz = dir.path().join("t.jsonl.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..2000 {
            writeln!(enc, "{{\"id\": \"{i}\", \"text\": \"document number {i} with some words\"}}")
                .unwrap();
        }
        let bytes = enc.finish().unwrap();
        std::fs::write(&gz, &bytes[..bytes.len() / 2]).unwrap();
        let zst = dir.path().join("t.jsonl.zst");
        let body: Vec<u8> = (0..2000)
            .flat_map(|i| format!("{{\"id\": \"{i}\", \"text\": \"document {i}\"}}\n").into_bytes())
            .collect();
        let compressed = zstd::encode_all(&body[..], 3).unwrap();
        std::fs::write(&zst, &compressed[..compressed.len() / 2]).unwrap();
        let records = read_all(&zst, Compression::Zstd, ReadOptions::default());
        assert!(
            matches!(records.last().unwrap(), Err(Error::Read { .. })),
            "zstd damage is an error"
        );
        let records = read_all(&gz, Compression::Gzip, ReadOptions::default());
        let err = records.last().unwrap().as_ref().unwrap_err();
        assert!(matches!(err, Error::Read { .. }));
        assert!(err.to_string().contains("t.jsonl.gz"), "{err}");

        let f = file(&gz, Compression::Gzip);
        let records: Vec<_> = JsonlRecords::open(
            &f,
            Compression::Gzip,
            ReadOptions::default(),
            OnReadError::Reject,
            None,
        )
        .unwrap()
        .collect();
        let Ok(Record::Reject(last)) = records.last().unwrap() else { panic!("expected a reject") };
        assert_eq!(last.reason, Reason::Unreadable);
        assert_eq!(last.doc.record() as usize, records.len());
    }

    /// The message of a read error and of its source.
    fn error_chain(error: &Error) -> String {
        let source = std::error::Error::source(error).map(ToString::to_string);
        format!("{error}: {}", source.unwrap_or_default())
    }

    #[test]
    fn zero_bytes_after_the_last_gzip_member_are_ignored_and_other_bytes_fail() {
        let dir = tempfile::tempdir().unwrap();
        let gzip = |text: &str| {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(text.as_bytes()).unwrap();
            enc.finish().unwrap()
        };
        let members = [
            gzip("{\"id\": \"a\", \"text\": \"first\"}\n"),
            gzip("{\"id\": \"b\", \"text\": \"second\"}\n"),
        ]
        .concat();
        // As `gzip -d` reads it: the two members, the zeros ignored.
        let padded = dir.path().join("padded.jsonl.gz");
        std::fs::write(&padded, [&members[..], &[0u8; 1000]].concat()).unwrap();
        let records = read_all(&padded, Compression::Gzip, ReadOptions::default());
        let ids: Vec<&str> = records
            .iter()
            .map(|r| match r {
                Ok(Record::Doc(d)) => d.id.as_str(),
                Ok(Record::Reject(r)) => panic!("{r:?}"),
                Err(e) => panic!("{}", error_chain(e)),
            })
            .collect();
        assert_eq!(ids, ["a", "b"]);
        let f = file(&padded, Compression::Gzip);
        let mut reader = JsonlRecords::open(
            &f,
            Compression::Gzip,
            ReadOptions::default(),
            OnReadError::Fail,
            None,
        )
        .unwrap();
        assert_eq!(reader.by_ref().count(), 2);
        assert_eq!(reader.trailing_zero_bytes(), 1000);
        // Other bytes after the last member fail the file, saying where they start.
        let at = format!("byte {}", members.len());
        for tail in [&b"garbage"[..], b"\0\0\0x\0", b"\x1f\x8b\x08garbage"] {
            let path = dir.path().join("tail.jsonl.gz");
            std::fs::write(&path, [&members[..], tail].concat()).unwrap();
            let records = read_all(&path, Compression::Gzip, ReadOptions::default());
            assert_eq!(records.len(), 3, "{tail:?}");
            let Some(Err(e)) = records.last() else { panic!("{records:?}") };
            let message = error_chain(e);
            assert!(message.contains("tail.jsonl.gz") && message.contains(&at), "{message}");
        }
        // `zstd -d` takes no trailing zero bytes: neither does the reader.
        let frame = zstd::encode_all(&b"{\"id\": \"a\", \"text\": \"first\"}\n"[..], 3).unwrap();
        let zst = dir.path().join("padded.jsonl.zst");
        std::fs::write(&zst, [&frame[..], &[0u8; 1000]].concat()).unwrap();
        let records = read_all(&zst, Compression::Zstd, ReadOptions::default());
        assert_eq!(records.len(), 2);
        let Some(Err(e)) = records.last() else { panic!("{records:?}") };
        let message = error_chain(e);
        let at = format!("byte {}", frame.len());
        assert!(message.contains("padded.jsonl.zst") && message.contains(&at), "{message}");
    }

    #[test]
    fn malformed_json_says_where_in_the_line() {
        let detail = |line: &str| {
            let e = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
            json_error_detail(&e)
        };
        assert_eq!(
            detail("{\"id\": \"a\", \"text\": \"cut\n"),
            "control character (\\u0000-\\u001F) found while parsing a string at the end of the line"
        );
        assert_eq!(
            detail("{\"id\": \"b\"\n"),
            "EOF while parsing an object at the end of the line"
        );
        assert_eq!(detail("{\"id\" 1}\n"), "expected `:` at column 7");
        // A field that is there but null is not called absent.
        let f = file(Path::new("n.jsonl"), Compression::None);
        let reject = |line: &str| match parse_line(
            &f,
            &ReadOptions::default(),
            DocId::new(3, 1),
            line.as_bytes(),
        ) {
            Record::Reject(r) => (r.reason, r.detail),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reject(r#"{"id": null, "text": "x"}"#),
            (Reason::MissingId, "field \"id\" is null".into())
        );
        assert_eq!(
            reject(r#"{"id": "a", "text": null}"#),
            (Reason::MissingText, "field \"text\" is null".into())
        );
        assert_eq!(reject(r#"{"id": "a"}"#), (Reason::MissingText, "no field \"text\"".into()));
    }
}
