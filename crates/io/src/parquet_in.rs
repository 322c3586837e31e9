//! Parquet reader: reads only the id, text and URL columns, in batches.

use std::fs::File;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use neardup_core::DocId;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::ParquetMetaData;

use crate::error::{Error, Result};
use crate::input::InputFile;
use crate::read_options::{OnReadError, ReadOptions, generated_id};
use crate::records::{InputDoc, Reason, Record, RejectedRecord, WebMeta};

/// The columns of a batch that records are made of.
struct Columns {
    text: ArrayRef,
    id: Option<ArrayRef>,
    url: Option<ArrayRef>,
}

/// Rows decoded per batch.
const BATCH_ROWS: usize = 4096;

/// Reads records from one Parquet file; the record number is the 1-based row number.
pub struct ParquetRecords {
    batches: ParquetRecordBatchReader,
    file: InputFile,
    fields: ReadOptions,
    /// The URL column's name, when the file has one of a string type.
    url: Option<String>,
    on_error: OnReadError,
    batch: Option<Columns>,
    row_in_batch: usize,
    record: u64,
    done: bool,
}

/// Checks that every column chunk the footer describes lies inside the file: a damaged
/// footer with negative or outlying offsets makes the Parquet reader panic, not fail.
///
/// # Errors
/// [`Error::Damaged`] naming the row group and column.
fn check_chunks(path: &std::path::Path, metadata: &ParquetMetaData, size: u64) -> Result<()> {
    for (g, group) in metadata.row_groups().iter().enumerate() {
        for (c, column) in group.columns().iter().enumerate() {
            let start = column.dictionary_page_offset().unwrap_or(column.data_page_offset());
            let length = column.compressed_size();
            let inside = start >= 0
                && length >= 0
                && (start as u64).checked_add(length as u64).is_some_and(|end| end <= size);
            if !inside {
                let detail = format!(
                    "row group {g} column {c} is said to take bytes {start}..+{length} of a {size}-byte file"
                );
                return Err(Error::Damaged { path: path.to_path_buf(), detail });
            }
        }
    }
    Ok(())
}

/// A Parquet input: a local file, or a remote object read by byte ranges (the footer,
/// then only the column chunks read).
pub(crate) enum ParquetInput {
    /// A local file.
    Local(File),
    /// An object in storage or behind HTTP.
    Remote(crate::remote::read::RemoteObject),
}

impl ParquetInput {
    /// Opens the file or object at `path`; an object's `size` is asked for when not known
    /// (from a listing), and its reads come from `version` (an ETag) when given.
    pub(crate) fn open(
        path: &std::path::Path,
        size: Option<u64>,
        version: Option<&str>,
    ) -> std::io::Result<Self> {
        if crate::remote::is_remote(path) {
            let size = match size {
                Some(size) => size,
                None => crate::remote::size(path)?,
            };
            crate::remote::read::RemoteObject::open(path, size, version).map(ParquetInput::Remote)
        } else {
            File::open(path).map(ParquetInput::Local)
        }
    }
}

impl parquet::file::reader::Length for ParquetInput {
    fn len(&self) -> u64 {
        match self {
            ParquetInput::Local(f) => f.metadata().map_or(u64::MAX, |m| m.len()),
            ParquetInput::Remote(r) => r.size(),
        }
    }
}

impl parquet::file::reader::ChunkReader for ParquetInput {
    type T = Box<dyn std::io::Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(match self {
            ParquetInput::Local(f) => Box::new(f.get_read(start)?),
            ParquetInput::Remote(r) => Box::new(r.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        match self {
            ParquetInput::Local(f) => f.get_bytes(start, length),
            ParquetInput::Remote(r) => r.get_bytes(start, length),
        }
    }
}

impl ParquetRecords {
    /// Opens `file` and checks that its id and text columns exist and have usable types.
    /// The URL column is read when it exists with a string type.
    ///
    /// # Errors
    /// [`Error::Open`], [`Error::Parquet`], [`Error::MissingColumn`] or
    /// [`Error::ColumnType`], each naming the file.
    pub fn open(file: &InputFile, fields: ReadOptions, on_error: OnReadError) -> Result<Self> {
        let path = &file.path;
        let handle = ParquetInput::open(path, Some(file.bytes), file.remote_version())
            .map_err(|source| Error::Open { path: path.clone(), source })?;
        let size = parquet::file::reader::Length::len(&handle);
        let builder = ParquetRecordBatchReaderBuilder::try_new(handle)
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        check_chunks(path, builder.metadata(), size)?;
        let schema = builder.schema().clone();
        let find = |name: &str, setting| {
            schema.index_of(name).map_err(|_| Error::MissingColumn {
                path: path.clone(),
                column: name.to_string(),
                setting,
                available: schema.fields().iter().map(|f| f.name().clone()).collect(),
            })
        };
        let text_index = find(&fields.text, "text_field")?;
        let id_index = fields.id.as_deref().map(|id| find(id, "id_field")).transpose()?;
        check_type(file, &fields.text, schema.field(text_index).data_type(), true)?;
        let mut roots = vec![text_index];
        if let (Some(name), Some(index)) = (&fields.id, id_index) {
            check_type(file, name, schema.field(index).data_type(), false)?;
            roots.push(index);
        }
        let url = fields.url.as_deref().and_then(|name| {
            let index = schema.index_of(name).ok()?;
            check_type(file, name, schema.field(index).data_type(), true).ok()?;
            roots.push(index);
            Some(name.to_string())
        });
        roots.sort_unstable();
        roots.dedup();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let batches = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        Ok(ParquetRecords {
            batches,
            file: file.clone(),
            fields,
            url,
            on_error,
            batch: None,
            row_in_batch: 0,
            record: 0,
            done: false,
        })
    }

    /// Whether the file has a URL column that is read.
    pub fn has_urls(&self) -> bool {
        self.url.is_some()
    }

    fn load_batch(&mut self, batch: &RecordBatch) {
        let column = |name: &str| batch.column_by_name(name).expect("projected").clone();
        self.batch = Some(Columns {
            text: column(&self.fields.text),
            id: self.fields.id.as_deref().map(column),
            url: self.url.as_deref().map(column),
        });
        self.row_in_batch = 0;
    }

    fn row(&self, row: usize, doc: DocId) -> Record {
        let Columns { text, id, url } = self.batch.as_ref().expect("a batch is loaded");
        let reject = |id: Option<String>, reason, detail: String| {
            Record::Reject(RejectedRecord { doc, id, reason, detail })
        };
        let id = match id {
            None => generated_id(&self.file, doc.record()),
            Some(col) if col.is_null(row) => {
                let name = self.fields.id.as_deref().unwrap_or_default();
                return reject(None, Reason::MissingId, format!("column \"{name}\" is null"));
            }
            Some(col) => match id_value(col, row) {
                Ok(id) => id,
                Err(()) => {
                    let name = self.fields.id.as_deref().unwrap_or_default();
                    let detail = format!("column \"{name}\" is not valid UTF-8");
                    return reject(None, Reason::InvalidId, detail);
                }
            },
        };
        let name = &self.fields.text;
        if text.is_null(row) {
            return reject(Some(id), Reason::MissingText, format!("column \"{name}\" is null"));
        }
        let value = match text_value(text, row) {
            Ok(s) => s,
            Err(()) => {
                return reject(
                    Some(id),
                    Reason::InvalidUtf8,
                    format!("column \"{name}\" is not valid UTF-8"),
                );
            }
        };
        if value.len() as u64 > self.fields.max_record_bytes {
            let detail = format!(
                "column \"{name}\" has {} bytes, above input.max_record_bytes = {}",
                value.len(),
                self.fields.max_record_bytes
            );
            return reject(Some(id), Reason::TooLarge, detail);
        }
        if value.trim().is_empty() {
            return reject(Some(id), Reason::EmptyText, format!("column \"{name}\" is empty"));
        }
        // A web page's URL; a null or invalid one makes a document without.
        let url = url
            .as_ref()
            .filter(|col| !col.is_null(row))
            .and_then(|col| text_value(col, row).ok())
            .filter(|url| !url.trim().is_empty());
        let meta = url.map(|url| Box::new(WebMeta { url: Some(url), ..WebMeta::default() }));
        let text = if meta.is_some() { crate::html::field_page_text(value) } else { value };
        Record::Doc(InputDoc { doc, id, text, meta })
    }
}

impl Iterator for ParquetRecords {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let len = self.batch.as_ref().map_or(0, |c| c.text.len());
            if self.row_in_batch < len {
                let row = self.row_in_batch;
                self.row_in_batch += 1;
                self.record += 1;
                if self.record > DocId::MAX_RECORD {
                    self.done = true;
                    return Some(Err(Error::TooManyRecords { path: self.file.path.clone() }));
                }
                let doc = DocId::new(self.file.index, self.record);
                return Some(Ok(self.row(row, doc)));
            }
            // The Parquet decoder panics on some damaged pages instead of failing: such a
            // file is damaged like any other, not a crash of the run.
            let batches = &mut self.batches;
            let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| batches.next()))
                .unwrap_or_else(|panic| {
                    let message = crate::error::panic_message(&*panic).unwrap_or_default();
                    Some(Err(arrow_schema::ArrowError::ParquetError(format!(
                        "the decoder gave up on damaged data: {message}"
                    ))))
                });
            match next {
                None => self.done = true,
                Some(Ok(batch)) => self.load_batch(&batch),
                Some(Err(source)) => {
                    self.done = true;
                    let (path, record) = (&self.file.path, self.record);
                    let fail = |source| Error::Arrow { path: path.clone(), record, source };
                    return Some(self.on_error.rest_of_file(
                        source,
                        fail,
                        self.file.index,
                        record + 1,
                    ));
                }
            }
        }
        None
    }
}

fn check_type(file: &InputFile, column: &str, data_type: &DataType, text: bool) -> Result<()> {
    let strings = matches!(
        data_type,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    );
    let integers = data_type.is_integer();
    if strings || (!text && integers) {
        Ok(())
    } else {
        Err(Error::ColumnType {
            path: file.path.clone(),
            column: column.to_string(),
            data_type: data_type.to_string(),
            expected: if text { "a string" } else { "a string or integer" },
        })
    }
}

/// The string at `row` of a string or binary column; `Err` for invalid UTF-8.
fn text_value(col: &ArrayRef, row: usize) -> Result<String, ()> {
    let bytes: &[u8] = match col.data_type() {
        DataType::Utf8 => return Ok(col.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => return Ok(col.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => return Ok(col.as_string_view().value(row).to_string()),
        DataType::Binary => col.as_binary::<i32>().value(row),
        DataType::LargeBinary => col.as_binary::<i64>().value(row),
        DataType::BinaryView => col.as_binary_view().value(row),
        other => unreachable!("column type {other} was checked when the file was opened"),
    };
    String::from_utf8(bytes.to_vec()).map_err(|_| ())
}

/// The id at `row` of a string, binary or integer column, as a string.
/// The id at `row` of a string, binary or integer column, as a string; `Err` for bytes
/// that are not UTF-8 (converting them lossily could make distinct ids equal).
fn id_value(col: &ArrayRef, row: usize) -> Result<String, ()> {
    Ok(match col.data_type() {
        DataType::Int8 => col.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => col.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => col.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => col.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::UInt8 => col.as_primitive::<UInt8Type>().value(row).to_string(),
        DataType::UInt16 => col.as_primitive::<UInt16Type>().value(row).to_string(),
        DataType::UInt32 => col.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => col.as_primitive::<UInt64Type>().value(row).to_string(),
        _ => return text_value(col, row),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;

    use super::*;
    use crate::input::Format;

    fn write(path: &std::path::Path, batch: RecordBatch) {
        let mut w =
            ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    fn input(path: &std::path::Path) -> InputFile {
        InputFile {
            index: 1,
            path: path.to_path_buf(),
            format: Format::Parquet,
            bytes: 0,
            version: None,
        }
    }

    #[test]
    fn reads_rows_and_rejects_nulls_and_bad_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("doc", DataType::Int64, true),
            Field::new("body", DataType::Binary, true),
            Field::new("other", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![Some(10), Some(11), None, Some(13), Some(14)])),
                Arc::new(BinaryArray::from(vec![
                    Some(&b"hello"[..]),
                    None,
                    Some(&b"x"[..]),
                    Some(&b"\xff\xfe"[..]),
                    Some(&b"  "[..]),
                ])),
                Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e"])),
            ],
        )
        .unwrap();
        write(&path, batch);
        let fields =
            ReadOptions { id: Some("doc".into()), text: "body".into(), ..ReadOptions::default() };
        let records: Vec<Record> = ParquetRecords::open(&input(&path), fields, OnReadError::Fail)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let summary: Vec<(u64, Option<Reason>)> = records
            .iter()
            .map(|r| match r {
                Record::Doc(d) => (d.doc.record(), None),
                Record::Reject(r) => (r.doc.record(), Some(r.reason)),
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, None),
                (2, Some(Reason::MissingText)),
                (3, Some(Reason::MissingId)),
                (4, Some(Reason::InvalidUtf8)),
                (5, Some(Reason::EmptyText)),
            ]
        );
        let Record::Doc(d) = &records[0] else { panic!() };
        assert_eq!((d.id.as_str(), d.text.as_str(), d.doc.file_index()), ("10", "hello", 1));
    }

    #[test]
    fn binary_ids_that_are_not_utf8_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Binary, false),
            Field::new("text", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(BinaryArray::from(vec![&b"ok"[..], &b"\xff\x01"[..]])),
                Arc::new(StringArray::from(vec!["first text", "second text"])),
            ],
        )
        .unwrap();
        write(&path, batch);
        let records: Vec<Record> =
            ParquetRecords::open(&input(&path), ReadOptions::default(), OnReadError::Fail)
                .unwrap()
                .map(Result::unwrap)
                .collect();
        assert!(matches!(&records[0], Record::Doc(d) if d.id == "ok"));
        assert!(matches!(&records[1], Record::Reject(r) if r.reason == Reason::InvalidId));
    }

    #[test]
    fn missing_or_mistyped_columns_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.parquet");
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Int64, false)]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1]))]).unwrap();
        write(&path, batch);
        let err = ParquetRecords::open(&input(&path), ReadOptions::default(), OnReadError::Fail)
            .err()
            .unwrap();
        assert!(matches!(err, Error::MissingColumn { setting: "id_field", .. }), "{err}");
        assert!(
            err.to_string().contains("b.parquet") && err.to_string().contains("\"id\""),
            "{err}"
        );
        let fields = ReadOptions { id: None, text: "text".into(), ..ReadOptions::default() };
        let err = ParquetRecords::open(&input(&path), fields, OnReadError::Fail).err().unwrap();
        assert!(matches!(err, Error::ColumnType { .. }), "{err}");
    }

    #[test]
    fn a_string_url_column_makes_web_pages_another_type_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pages.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("text", DataType::Utf8, false),
            Field::new("url", DataType::Utf8, true),
            Field::new("rank", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "b"])),
                Arc::new(StringArray::from(vec!["first text", "second text"])),
                Arc::new(StringArray::from(vec![Some("https://s.example/a"), None])),
                Arc::new(Int64Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        write(&path, batch);
        let urls = |fields: ReadOptions| {
            let reader = ParquetRecords::open(&input(&path), fields, OnReadError::Fail).unwrap();
            let has = reader.has_urls();
            let urls: Vec<Option<String>> = reader
                .map(|r| match r.unwrap() {
                    Record::Doc(d) => d.meta.and_then(|m| m.url),
                    other => panic!("{other:?}"),
                })
                .collect();
            (has, urls)
        };
        assert_eq!(
            urls(ReadOptions::default()),
            (true, vec![Some("https://s.example/a".into()), None])
        );
        let rank = ReadOptions { url: Some("rank".into()), ..ReadOptions::default() };
        assert_eq!(urls(rank), (false, vec![None, None]));
        let missing = ReadOptions { url: Some("link".into()), ..ReadOptions::default() };
        assert_eq!(urls(missing), (false, vec![None, None]));
    }

    #[test]
    fn texts_above_the_limit_are_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("text", DataType::Utf8, false),
        ]));
        let texts = vec!["short".to_string(), "y".repeat(5000), "also short".to_string()];
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "b", "c"])),
                Arc::new(StringArray::from(texts)),
            ],
        )
        .unwrap();
        write(&path, batch);
        let fields = ReadOptions { max_record_bytes: 1000, ..ReadOptions::default() };
        let records: Vec<Record> = ParquetRecords::open(&input(&path), fields, OnReadError::Fail)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let reasons: Vec<Option<Reason>> = records
            .iter()
            .map(|r| match r {
                Record::Doc(_) => None,
                Record::Reject(r) => Some(r.reason),
            })
            .collect();
        assert_eq!(reasons, [None, Some(Reason::TooLarge), None]);
    }
}
