//! Opening any input file as a stream of [`Record`]s.

use crate::error::Result;
use crate::input::{Format, InputFile};
use crate::jsonl::{Item, JsonlRecords, LineRange};
use crate::parquet_in::ParquetRecords;
use crate::read_options::{OnReadError, ReadOptions};
use crate::records::{InputDoc, Record};
use crate::warc::WarcRecords;

/// Records of one input file, whatever its format.
pub enum RecordReader {
    /// A JSONL file.
    Jsonl(JsonlRecords),
    /// A Parquet file.
    Parquet(ParquetRecords),
    /// A WARC or WET file.
    Warc(WarcRecords),
    /// A file that could not be opened, under [`OnReadError::Reject`]: one reject.
    Unopenable(Option<Record>),
}

impl RecordReader {
    /// Opens `file` for reading records.
    ///
    /// # Errors
    /// Opening errors ([`crate::Error::Open`], [`crate::Error::Parquet`], a missing or
    /// unsupported column) under [`OnReadError::Fail`].
    pub fn open(file: &InputFile, fields: &ReadOptions, on_error: OnReadError) -> Result<Self> {
        Self::open_counting(file, fields, on_error, None)
    }

    /// As [`RecordReader::open`], adding the bytes read from the file to `bytes_read`
    /// as reading goes (JSONL and web archives; Parquet files are not counted).
    ///
    /// # Errors
    /// As [`RecordReader::open`].
    pub fn open_counting(
        file: &InputFile,
        fields: &ReadOptions,
        on_error: OnReadError,
        bytes_read: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> Result<Self> {
        let opened = match file.format {
            Format::Jsonl(c) => JsonlRecords::open(file, c, fields.clone(), on_error, bytes_read)
                .map(RecordReader::Jsonl),
            Format::Warc(c) => {
                WarcRecords::open(file, c, on_error, bytes_read, fields.max_record_bytes)
                    .map(RecordReader::Warc)
            }
            Format::Parquet => {
                ParquetRecords::open(file, fields.clone(), on_error).map(RecordReader::Parquet)
            }
        };
        opened.or_else(|e| {
            let reject = on_error.rest_of_file(e, |e| e, file.index, 1)?;
            Ok(RecordReader::Unopenable(Some(reject)))
        })
    }
}

/// Records of a JSON Lines file looked at to tell whether it holds web pages.
const URL_PROBE_RECORDS: usize = 8;

/// Whether `file` holds web pages (documents with URLs): a web archive; a Parquet file
/// with a string column named `fields.url`; a JSON Lines file with a string in that field
/// in one of its first records. Costs a footer or a few lines; a file that cannot be read
/// holds none (reading it later says why). Only regular files are looked into: what is
/// read from a pipe is gone, and opening one waits for its writer.
pub fn has_urls(file: &InputFile, fields: &ReadOptions) -> bool {
    let regular = || crate::input::is_regular(&file.path);
    match file.format {
        Format::Warc(_) => true,
        _ if fields.url.is_none() || !regular() => false,
        Format::Parquet => ParquetRecords::open(file, fields.clone(), OnReadError::Reject)
            .is_ok_and(|r| r.has_urls()),
        Format::Jsonl(c) => JsonlRecords::open(file, c, fields.clone(), OnReadError::Reject, None)
            .is_ok_and(|records| {
                records.take(URL_PROBE_RECORDS).any(|r| {
                    matches!(r, Ok(Record::Doc(d)) if d.meta.as_ref().is_some_and(|m| m.url.is_some()))
                })
            }),
    }
}

impl RecordReader {
    /// Opens the lines of the plain JSONL `file` that start in `range` (see [`LineRange`]),
    /// counting bytes read into `bytes_read` when given.
    ///
    /// # Errors
    /// As [`RecordReader::open`].
    pub fn open_range(
        file: &InputFile,
        fields: &ReadOptions,
        on_error: OnReadError,
        bytes_read: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
        range: LineRange,
    ) -> Result<Self> {
        debug_assert_eq!(file.format, Format::Jsonl(crate::decompress::Compression::None));
        match JsonlRecords::open_range(file, fields.clone(), on_error, bytes_read, range) {
            Ok(r) => Ok(RecordReader::Jsonl(r)),
            Err(e) => {
                let reject = on_error.rest_of_file(e, |e| e, file.index, range.lines_before + 1)?;
                Ok(RecordReader::Unopenable(Some(reject)))
            }
        }
    }

    /// Records read that are not documents, by kind (web archives only).
    pub fn skipped(&self) -> Option<&std::collections::BTreeMap<String, u64>> {
        match self {
            RecordReader::Warc(r) => Some(r.skipped()),
            _ => None,
        }
    }

    /// Zero bytes read past after the file's last gzip member so far: padding that
    /// `gzip -d` ignores, and so do the readers.
    pub fn trailing_zero_bytes(&self) -> u64 {
        match self {
            RecordReader::Jsonl(r) => r.trailing_zero_bytes(),
            RecordReader::Warc(r) => r.trailing_zero_bytes(),
            _ => 0,
        }
    }
}

impl RecordReader {
    /// The next record; with `lines`, JSONL lines come unparsed, so that parsing, the
    /// larger part of reading JSONL, can be spread over workers. Errors as for the
    /// records.
    pub fn next_item(&mut self, lines: bool) -> Option<Result<Item>> {
        match self {
            RecordReader::Jsonl(r) if lines => match r.next_line() {
                Some(item) => Some(item),
                None => r.take_unreadable().map(|reject| Ok(Item::Record(reject))),
            },
            other => other.next().map(|r| r.map(Item::Record)),
        }
    }
}

/// The documents of `file` numbered in `records`, reading up to the last of them; records
/// that cannot be read are left out. Only these are decoded: the other lines of a JSON
/// Lines file are split off but not parsed, and the other records of a web archive are
/// read past without decoding their payloads or turning their HTML into text (Parquet
/// rows are read whole). For the report's excerpts, which want a few dozen documents; a
/// file that cannot be opened gives none.
pub fn wanted_documents(
    file: &InputFile,
    fields: &ReadOptions,
    records: &std::collections::BTreeSet<u64>,
) -> Vec<InputDoc> {
    let Some(&last) = records.last() else { return Vec::new() };
    let Ok(mut reader) = RecordReader::open(file, fields, OnReadError::Reject) else {
        return Vec::new();
    };
    if let RecordReader::Warc(warc) = &mut reader {
        warc.only(records.clone());
    }
    let mut found = Vec::new();
    while let Some(item) = reader.next_item(true) {
        let record = match item {
            Ok(Item::Line(line)) if records.contains(&line.doc.record()) => {
                crate::jsonl::parse_line(file, fields, line.doc, &line.bytes)
            }
            Ok(Item::Line(line)) if line.doc.record() < last => continue,
            Ok(Item::Line(_)) | Err(_) => break,
            Ok(Item::Record(record)) => record,
        };
        let Record::Doc(doc) = record else { continue };
        let at = doc.doc.record();
        if records.contains(&at) {
            found.push(doc);
        }
        if at >= last {
            break;
        }
    }
    found
}

impl Iterator for RecordReader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            RecordReader::Jsonl(r) => r.next(),
            RecordReader::Parquet(r) => r.next(),
            RecordReader::Warc(r) => r.next(),
            RecordReader::Unopenable(r) => r.take().map(Ok),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompress::Compression;

    fn jsonl(dir: &std::path::Path, name: &str, lines: &[&str]) -> InputFile {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        InputFile {
            index: 0,
            path,
            format: Format::Jsonl(Compression::None),
            bytes: 0,
            version: None,
        }
    }

    #[test]
    fn files_with_urls_in_their_first_records_hold_web_pages() {
        let dir = tempfile::tempdir().unwrap();
        let fields = ReadOptions::default();
        let plain = jsonl(dir.path(), "plain.jsonl", &[r#"{"id": "a", "text": "x"}"#; 20]);
        assert!(!has_urls(&plain, &fields));
        let mut lines = vec![r#"{"id": "a", "text": "x"}"#; 3];
        lines.push(r#"{"id": "b", "text": "x", "url": "https://s.example/b"}"#);
        let pages = jsonl(dir.path(), "pages.jsonl", &lines);
        assert!(has_urls(&pages, &fields));
        assert!(!has_urls(&pages, &ReadOptions { url: None, ..ReadOptions::default() }));
        let missing = InputFile { path: dir.path().join("missing.jsonl"), ..plain.clone() };
        assert!(!has_urls(&missing, &fields));
        let warc = InputFile { format: Format::Warc(Compression::Gzip), ..missing };
        assert!(has_urls(&warc, &fields));
    }

    /// The documents a full read gives at `records`, in order.
    fn read_at(file: &InputFile, records: &std::collections::BTreeSet<u64>) -> Vec<InputDoc> {
        let reader = RecordReader::open(file, &ReadOptions::default(), OnReadError::Reject);
        let docs = reader.unwrap().filter_map(|r| match r.unwrap() {
            Record::Doc(d) => Some(d),
            Record::Reject(_) => None,
        });
        docs.filter(|d| records.contains(&d.doc.record())).collect()
    }

    #[test]
    fn wanted_documents_are_those_a_full_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"id": "a", "text": "first"}"#,
            "not json",
            "",
            r#"{"id": "d", "text": "fourth", "url": "https://s.example/d"}"#,
            r#"{"id": "e"}"#,
            r#"{"id": "f", "text": "sixth"}"#,
            r#"{"id": "g", "text": "seventh"}"#,
        ];
        let file = jsonl(dir.path(), "mixed.jsonl", &lines);
        let sample = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../data-samples/warc")
                .join(name);
            let format = Format::of(&path).unwrap();
            InputFile { index: 3, path, format, bytes: 0, version: None }
        };
        let warc = sample("dolma_sample-0001.warc.gz");
        let wet = sample("cc_whirlwind.warc.wet.gz");
        let fields = ReadOptions::default();
        let sets: [&[u64]; 6] = [&[], &[1], &[2, 3, 5], &[1, 4, 6], &[7, 40], &[2, 4, 8, 12, 30]];
        for file in [&file, &warc, &wet] {
            for set in sets {
                let set = set.iter().copied().collect();
                let found = wanted_documents(file, &fields, &set);
                assert_eq!(found, read_at(file, &set), "{} {set:?}", file.path.display());
            }
        }
        // Each file holds documents among those records, so the sets above compare some.
        let all = (1..=40).collect();
        assert_eq!(wanted_documents(&file, &fields, &all).len(), 4);
        assert!(wanted_documents(&warc, &fields, &all).len() >= 10);
        assert_eq!(wanted_documents(&wet, &fields, &all).len(), 1);
        let missing = InputFile { path: dir.path().join("missing.jsonl"), ..file.clone() };
        assert!(wanted_documents(&missing, &fields, &all).is_empty());
    }

    /// A pipe is not opened: that would wait for a writer, and take the records it gives.
    #[cfg(unix)]
    #[test]
    fn pipes_are_not_looked_into() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success());
        let file = InputFile {
            index: 0,
            path,
            format: Format::Jsonl(Compression::None),
            bytes: 0,
            version: None,
        };
        assert!(!has_urls(&file, &ReadOptions::default()));
    }
}
