//! Opening any input file as a stream of [`Record`]s.

use neardup_core::DocId;
use serde::{Deserialize, Serialize};

use crate::input::{Format, InputFile};
use crate::jsonl::{JsonlRecords, LineRange, RawLine};
use crate::parquet_in::ParquetRecords;
use crate::warc::WarcRecords;
use crate::{Reason, Record, RejectedRecord, Result};

/// What a reader takes from a record: the id and text fields (JSONL keys or Parquet
/// columns), and how large a record may be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldNames {
    /// The id field; `None` generates ids as `path:record`.
    pub id: Option<String>,
    /// The text field.
    pub text: String,
    /// A record with more bytes than this (a JSONL line, a web-archive record block or its
    /// inflated payload, a Parquet text value) is a `too_large` reject; lines and archive
    /// records that large are read past without being held in memory.
    #[serde(default = "default_max_record_bytes")]
    pub max_record_bytes: u64,
}

/// The record size limit a reader has unless told otherwise.
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 16 << 20;

fn default_max_record_bytes() -> u64 {
    DEFAULT_MAX_RECORD_BYTES
}

impl Default for FieldNames {
    fn default() -> Self {
        FieldNames {
            id: Some("id".into()),
            text: "text".into(),
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
        }
    }
}

/// What to do when a file cannot be opened or the rest of it cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnReadError {
    /// Fail the job with an error naming the file.
    #[default]
    Fail,
    /// Count what could not be read as one `unreadable` reject and go on.
    Reject,
}

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
    pub fn open(file: &InputFile, fields: &FieldNames, on_error: OnReadError) -> Result<Self> {
        Self::open_counting(file, fields, on_error, None)
    }

    /// As [`RecordReader::open`], adding the bytes read from the file to `bytes_read`
    /// as reading goes (JSONL and web archives; Parquet files are not counted).
    ///
    /// # Errors
    /// As [`RecordReader::open`].
    pub fn open_counting(
        file: &InputFile,
        fields: &FieldNames,
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
        match (opened, on_error) {
            (Err(e), OnReadError::Reject) => {
                Ok(RecordReader::Unopenable(Some(unreadable(file.index, 1, &e))))
            }
            (other, _) => other,
        }
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
        fields: &FieldNames,
        on_error: OnReadError,
        bytes_read: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
        range: LineRange,
    ) -> Result<Self> {
        debug_assert_eq!(file.format, Format::Jsonl(crate::Compression::None));
        match JsonlRecords::open_range(file, fields.clone(), on_error, bytes_read, range) {
            Ok(r) => Ok(RecordReader::Jsonl(r)),
            Err(e) if on_error == OnReadError::Reject => Ok(RecordReader::Unopenable(Some(
                unreadable(file.index, range.lines_before + 1, &e),
            ))),
            Err(e) => Err(e),
        }
    }

    /// Records read that are not documents, by kind (web archives only).
    pub fn skipped(&self) -> Option<&std::collections::BTreeMap<String, u64>> {
        match self {
            RecordReader::Warc(r) => Some(r.skipped()),
            _ => None,
        }
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
            Item::Record(Record::Doc(d)) => d.doc,
            Item::Record(Record::Reject(r)) => r.doc,
            Item::Line(line) => line.doc,
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

/// The id given to a record when no id field is configured: `path:record`.
pub(crate) fn generated_id(file: &InputFile, record: u64) -> String {
    format!("{}:{record}", file.path.display())
}

/// The reject standing for everything from `record` on of a damaged file.
pub(crate) fn unreadable(file_index: u32, record: u64, error: &dyn std::fmt::Display) -> Record {
    Record::Reject(RejectedRecord {
        doc: DocId::new(file_index, record.min(DocId::MAX_RECORD)),
        id: None,
        reason: Reason::Unreadable,
        detail: format!("the rest of the file could not be read: {error}"),
    })
}
