//! Opening any input file as a stream of [`Record`]s.

use crate::input::{Format, InputFile};
use crate::jsonl::{Item, JsonlRecords, LineRange};
use crate::parquet_in::ParquetRecords;
use crate::read_options::{FieldNames, OnReadError};
use crate::warc::WarcRecords;
use crate::{Record, Result};

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
        opened.or_else(|e| {
            let reject = on_error.rest_of_file(e, |e| e, file.index, 1)?;
            Ok(RecordReader::Unopenable(Some(reject)))
        })
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
