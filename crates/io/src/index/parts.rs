//! The part formats: key parts (`keys/`) and docs parts (`docs/`) of a segment, their
//! rows, writers and readers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::parquet_in::ParquetInput;
use crate::parquet_out::PartWriter;

/// Rows per row group of a key part: each has its own key range and bloom filter.
pub const KEY_ROW_GROUP_ROWS: usize = 16_384;
/// Rows per page of a key part: a key found reads its page, not its row group.
pub(super) const KEY_PAGE_ROWS: usize = 256;
/// False-positive rate of the key bloom filters.
pub(super) const KEY_BLOOM_FPP: f64 = 0.001;
/// Rows per row group and per page of a docs part.
pub(super) const DOC_ROW_GROUP_ROWS: usize = 8_192;
pub(super) const DOC_PAGE_ROWS: usize = 64;

/// The key partition of `key` among `partitions`: its top bits, so each partition is a
/// contiguous key range.
pub fn partition_of(key: u64, partitions: u32) -> u32 {
    ((u128::from(key) * u128::from(partitions)) >> 64) as u32
}

/// The `docs/` part that holds `doc_id` in a generation of `parts` parts.
pub fn doc_part_of(doc_id: u64, parts: u32) -> u32 {
    (neardup_core::hash::route(doc_id) % u64::from(parts.max(1))) as u32
}

/// A document of the index: a generation and the `doc_id` it had in that run. Ordered as
/// the runs and inputs were, so the smallest is the earliest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct IndexRef {
    /// Its generation.
    pub generation: u32,
    /// Its `doc_id` in that generation's run.
    pub doc: u64,
}

/// One row of a key part, ordered as the part is: by key, then document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KeyRow {
    /// The bucket or content key.
    pub key: u64,
    /// The document's generation.
    pub generation: u32,
    /// The document's `doc_id` in its run.
    pub doc: u64,
}

impl KeyRow {
    /// The document of the row.
    pub fn at(&self) -> IndexRef {
        IndexRef { generation: self.generation, doc: self.doc }
    }
}

/// One row of a docs part, ordered as the part is: by generation, then `doc_id`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexedDoc {
    /// Its generation.
    pub generation: u32,
    /// Its `doc_id` in its run.
    pub doc: u64,
    /// Its id.
    pub id: String,
    /// Its input file.
    pub source: String,
    /// The kept document of its cluster (itself when kept).
    pub kept: IndexRef,
    /// The kept document's id.
    pub kept_id: String,
    /// Hash of the kept document's normalised text.
    pub kept_content: u128,
    /// Hash of its normalised text.
    pub content: u128,
    /// Its signature: MinHash values or a SimHash fingerprint, little-endian.
    pub signature: Vec<u8>,
    /// Its distinct features (containment against the index).
    pub features: u32,
}

impl IndexedDoc {
    /// The document of the row.
    pub fn at(&self) -> IndexRef {
        IndexRef { generation: self.generation, doc: self.doc }
    }
}

pub(super) fn keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, false),
        Field::new("generation", DataType::Int32, false),
        Field::new("doc_id", DataType::Int64, false),
    ]))
}

pub(super) fn docs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("generation", DataType::Int32, false),
        Field::new("doc_id", DataType::Int64, false),
        Field::new("id", DataType::Utf8, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("kept_generation", DataType::Int32, false),
        Field::new("kept_doc_id", DataType::Int64, false),
        Field::new("kept_id", DataType::Utf8, false),
        Field::new("kept_content", DataType::Binary, false),
        Field::new("content", DataType::Binary, false),
        Field::new("signature", DataType::Binary, false),
        Field::new("features", DataType::Int64, false),
    ]))
}

pub(super) fn base_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(ParquetCompression::ZSTD(ZstdLevel::try_new(1).expect("valid level")))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by(format!("neardup {}", env!("CARGO_PKG_VERSION")))
}

pub(super) fn as_i64(v: u64) -> i64 {
    v as i64 // the bits: keys use all 64
}

pub(super) fn as_i32(v: u32) -> i32 {
    v as i32 // generations are far below 2^31
}

/// A table of a segment whose rows lead with a key and are split by the key's partition,
/// sorted by key, with a bloom filter and a page index on the key: `keys/` ([`KeyRow`]:
/// bucket and content keys) and `paragraphs/` ([`HeldParagraph`](super::HeldParagraph): first occurrences of
/// paragraphs).
pub trait KeyTable: Ord + Sized {
    /// The table's folder in a segment.
    const FOLDER: &'static str;
    /// The row's key (stored as the bits of a signed integer, in column 0).
    fn key(&self) -> u64;
    /// The document of the row.
    fn at(&self) -> IndexRef;
    /// The table's schema: the key first.
    fn schema() -> SchemaRef;
    /// The rows as columns of [`KeyTable::schema`].
    fn columns(rows: &[Self]) -> Vec<ArrayRef>;
    /// The rows of a batch read back.
    ///
    /// # Errors
    /// [`Error::Damaged`] when the batch does not have the table's columns.
    fn decode(batch: &RecordBatch, path: &Path) -> Result<Vec<Self>>;
}

impl KeyTable for KeyRow {
    const FOLDER: &'static str = "keys";

    fn key(&self) -> u64 {
        self.key
    }

    fn at(&self) -> IndexRef {
        KeyRow::at(self)
    }

    fn schema() -> SchemaRef {
        keys_schema()
    }

    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        let mut key = Int64Builder::with_capacity(rows.len());
        let mut generation = Int32Builder::with_capacity(rows.len());
        let mut doc = Int64Builder::with_capacity(rows.len());
        for r in rows {
            key.append_value(as_i64(r.key));
            generation.append_value(as_i32(r.generation));
            doc.append_value(as_i64(r.doc));
        }
        vec![Arc::new(key.finish()), Arc::new(generation.finish()), Arc::new(doc.finish())]
    }

    fn decode(batch: &RecordBatch, path: &Path) -> Result<Vec<Self>> {
        key_rows(batch, path)
    }
}

/// Writes the part of one key partition of a [`KeyTable`] of one generation (or of a
/// merged segment), rows in key order.
pub struct KeyPartWriter<R: KeyTable = KeyRow>(PartWriter, std::marker::PhantomData<R>);

impl<R: KeyTable> KeyPartWriter<R> {
    /// Starts `segment_dir/<table>/part-{partition:05}.parquet`.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn create(segment_dir: &Path, partition: u32) -> Result<Self> {
        let key = ColumnPath::from("key");
        let props = base_properties()
            .set_max_row_group_row_count(Some(KEY_ROW_GROUP_ROWS))
            .set_data_page_row_count_limit(KEY_PAGE_ROWS)
            .set_write_batch_size(KEY_PAGE_ROWS)
            .set_column_bloom_filter_enabled(key.clone(), true)
            .set_column_bloom_filter_fpp(key.clone(), KEY_BLOOM_FPP)
            .set_column_bloom_filter_max_ndv(key, KEY_ROW_GROUP_ROWS as u64)
            .build();
        let dir = segment_dir.join(R::FOLDER);
        PartWriter::create_with(&dir, partition as usize, R::schema(), props)
            .map(|w| KeyPartWriter(w, std::marker::PhantomData))
    }

    /// Appends rows, which must continue the key order. All keys of a partition share
    /// their top bit (there are at least two partitions), so their unsigned order is also
    /// the order of the stored signed values.
    ///
    /// # Errors
    /// [`Error::Batch`] or [`Error::ParquetWrite`].
    pub fn write(&mut self, rows: &[R]) -> Result<()> {
        self.0.write_columns(R::columns(rows))
    }

    /// Finishes the part; returns the rows written.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] or [`Error::Write`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

/// Writes one docs part of a segment, rows in (generation, `doc_id`) order. Each row group
/// holds one generation, so its `doc_id` range bounds that generation's rows.
pub struct DocPartWriter {
    part: PartWriter,
    generation: Option<u32>,
}

impl DocPartWriter {
    /// Starts `segment_dir/docs/part-{part:05}.parquet`.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn create(segment_dir: &Path, part: u32) -> Result<Self> {
        let props = base_properties()
            .set_max_row_group_row_count(Some(DOC_ROW_GROUP_ROWS))
            .set_data_page_row_count_limit(DOC_PAGE_ROWS)
            .set_write_batch_size(DOC_PAGE_ROWS)
            .build();
        PartWriter::create_with(&segment_dir.join("docs"), part as usize, docs_schema(), props)
            .map(|part| DocPartWriter { part, generation: None })
    }

    /// Appends rows, which must continue the (generation, `doc_id`) order.
    ///
    /// # Errors
    /// [`Error::Batch`] or [`Error::ParquetWrite`].
    pub fn write(&mut self, mut rows: &[IndexedDoc]) -> Result<()> {
        while let Some(first) = rows.first() {
            if self.generation.is_some_and(|g| g != first.generation) {
                self.part.end_row_group()?;
            }
            self.generation = Some(first.generation);
            let same = rows.partition_point(|r| r.generation == first.generation);
            self.write_one_generation(&rows[..same])?;
            rows = &rows[same..];
        }
        Ok(())
    }

    fn write_one_generation(&mut self, rows: &[IndexedDoc]) -> Result<()> {
        let n = rows.len();
        let mut generation = Int32Builder::with_capacity(n);
        let mut doc = Int64Builder::with_capacity(n);
        let mut id = StringBuilder::new();
        let mut source = StringBuilder::new();
        let mut kept_generation = Int32Builder::with_capacity(n);
        let mut kept_doc = Int64Builder::with_capacity(n);
        let mut kept_id = StringBuilder::new();
        let mut kept_content = BinaryBuilder::new();
        let mut content = BinaryBuilder::new();
        let mut signature = BinaryBuilder::new();
        let mut features = Int64Builder::with_capacity(n);
        for r in rows {
            generation.append_value(as_i32(r.generation));
            doc.append_value(as_i64(r.doc));
            id.append_value(&r.id);
            source.append_value(&r.source);
            kept_generation.append_value(as_i32(r.kept.generation));
            kept_doc.append_value(as_i64(r.kept.doc));
            kept_id.append_value(&r.kept_id);
            kept_content.append_value(r.kept_content.to_le_bytes());
            content.append_value(r.content.to_le_bytes());
            signature.append_value(&r.signature);
            features.append_value(i64::from(r.features));
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(generation.finish()),
            Arc::new(doc.finish()),
            Arc::new(id.finish()),
            Arc::new(source.finish()),
            Arc::new(kept_generation.finish()),
            Arc::new(kept_doc.finish()),
            Arc::new(kept_id.finish()),
            Arc::new(kept_content.finish()),
            Arc::new(content.finish()),
            Arc::new(signature.finish()),
            Arc::new(features.finish()),
        ];
        self.part.write_columns(columns)
    }

    /// Finishes the part; returns the rows written.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] or [`Error::Write`].
    pub fn finish(self) -> Result<u64> {
        self.part.finish()
    }
}

/// The key part of `partition` in the segment in `segment_dir`.
pub fn key_part_path(segment_dir: &Path, partition: u32) -> PathBuf {
    table_part_path::<KeyRow>(segment_dir, partition)
}

/// The part of `partition` of table `R` in the segment in `segment_dir`.
pub fn table_part_path<R: KeyTable>(segment_dir: &Path, partition: u32) -> PathBuf {
    segment_dir.join(R::FOLDER).join(format!("part-{partition:05}.parquet"))
}

/// Docs part `part` of the segment in `segment_dir`.
pub fn doc_part_path(segment_dir: &Path, part: u32) -> PathBuf {
    segment_dir.join("docs").join(format!("part-{part:05}.parquet"))
}

pub(super) fn damaged(path: &Path, detail: &str) -> Error {
    Error::Damaged { path: path.to_path_buf(), detail: detail.to_string() }
}

pub(super) fn open_part(
    path: &Path,
    page_index: bool,
) -> Result<Option<ParquetRecordBatchReaderBuilder<ParquetInput>>> {
    let file = match ParquetInput::open(path, None, None) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Open { path: path.to_path_buf(), source }),
    };
    let policy = if page_index { PageIndexPolicy::Optional } else { PageIndexPolicy::Skip };
    let options = ArrowReaderOptions::new().with_page_index_policy(policy);
    ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map(Some)
        .map_err(|source| Error::Parquet { path: path.to_path_buf(), source })
}

pub(super) fn key_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<KeyRow>> {
    if batch.num_columns() != 3 {
        return Err(damaged(path, "a keys part without the 3 index columns"));
    }
    let key = batch.column(0).as_primitive::<Int64Type>().values();
    let generation = batch.column(1).as_primitive::<Int32Type>().values();
    let doc = batch.column(2).as_primitive::<Int64Type>().values();
    Ok(key
        .iter()
        .zip(generation.iter())
        .zip(doc.iter())
        .map(|((&k, &g), &d)| KeyRow { key: k as u64, generation: g as u32, doc: d as u64 })
        .collect())
}

pub(super) fn doc_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<IndexedDoc>> {
    if batch.num_columns() != 11 {
        return Err(damaged(path, "a docs part without the 11 index columns"));
    }
    let generation = batch.column(0).as_primitive::<Int32Type>();
    let doc = batch.column(1).as_primitive::<Int64Type>();
    let id = batch.column(2).as_string::<i32>();
    let source = batch.column(3).as_string::<i32>();
    let kept_generation = batch.column(4).as_primitive::<Int32Type>();
    let kept_doc = batch.column(5).as_primitive::<Int64Type>();
    let kept_id = batch.column(6).as_string::<i32>();
    let kept_content = batch.column(7).as_binary::<i32>();
    let content = batch.column(8).as_binary::<i32>();
    let signature = batch.column(9).as_binary::<i32>();
    let features = batch.column(10).as_primitive::<Int64Type>();
    let hash = |bytes: &[u8]| -> Result<u128> {
        let bytes: [u8; 16] =
            bytes.try_into().map_err(|_| damaged(path, "a content hash is not 16 bytes"))?;
        Ok(u128::from_le_bytes(bytes))
    };
    (0..batch.num_rows())
        .map(|i| {
            Ok(IndexedDoc {
                generation: generation.value(i) as u32,
                doc: doc.value(i) as u64,
                id: id.value(i).to_string(),
                source: source.value(i).to_string(),
                kept: IndexRef {
                    generation: kept_generation.value(i) as u32,
                    doc: kept_doc.value(i) as u64,
                },
                kept_id: kept_id.value(i).to_string(),
                kept_content: hash(kept_content.value(i))?,
                content: hash(content.value(i))?,
                signature: signature.value(i).to_vec(),
                features: u32::try_from(features.value(i))
                    .map_err(|_| damaged(path, "a feature count out of range"))?,
            })
        })
        .collect()
}

/// Calls `f` with the rows of docs part `part` of the segment in `segment_dir`, a batch at
/// a time, in order (never when the part does not exist).
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`], [`Error::Damaged`], or `f`'s.
pub fn for_each_docs_batch(
    segment_dir: &Path,
    part: u32,
    mut f: impl FnMut(Vec<IndexedDoc>) -> Result<()>,
) -> Result<()> {
    let path = doc_part_path(segment_dir, part);
    let mut rows = PartRows::open(&path, DOC_ROW_GROUP_ROWS, doc_rows)?;
    while let Some(batch) = rows.next_batch()? {
        f(batch)?;
    }
    Ok(())
}

/// The rows of one part (keys or docs), decoded a batch at a time.
pub(super) struct PartRows<T> {
    path: PathBuf,
    reader: Option<ParquetRecordBatchReader>,
    decode: fn(&RecordBatch, &Path) -> Result<Vec<T>>,
    rows: std::vec::IntoIter<T>,
}

impl<T> PartRows<T> {
    /// The rows of the part at `path` (none when it does not exist), `batch` at a time.
    pub(super) fn open(
        path: &Path,
        batch: usize,
        decode: fn(&RecordBatch, &Path) -> Result<Vec<T>>,
    ) -> Result<Self> {
        let reader = match open_part(path, false)? {
            Some(builder) => Some(
                builder
                    .with_batch_size(batch)
                    .build()
                    .map_err(|source| Error::Parquet { path: path.to_path_buf(), source })?,
            ),
            None => None,
        };
        Ok(PartRows { path: path.to_path_buf(), reader, decode, rows: Vec::new().into_iter() })
    }

    /// The next batch of rows, or `None` at the end.
    fn next_batch(&mut self) -> Result<Option<Vec<T>>> {
        let Some(batch) = self.reader.as_mut().and_then(Iterator::next) else { return Ok(None) };
        let path = &self.path;
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        (self.decode)(&batch, path).map(Some)
    }

    /// The next row, or `None` at the end.
    pub(super) fn next(&mut self) -> Result<Option<T>> {
        loop {
            if let Some(row) = self.rows.next() {
                return Ok(Some(row));
            }
            match self.next_batch()? {
                Some(batch) => self.rows = batch.into_iter(),
                None => return Ok(None),
            }
        }
    }
}
