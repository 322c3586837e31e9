//! The Parquet outputs: `pairs/` and `documents/` parts, written atomically, and read back.
//!
//! Column types are strings, signed integers, floats and booleans only, so Spark (which has
//! no unsigned integers), DuckDB, Polars and pyarrow read them as they are. A part is
//! written as a hidden `.part-NNNNN.parquet.inprogress` file and renamed when complete (in
//! object storage: uploaded under its name, visible once complete), so a failed run leaves
//! nothing that looks finished.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use neardup_core::{DocId, Measure};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::destination::OutFile;
use crate::error::{Error, Result};
use crate::records::{Decision, Reason, WebMeta};

/// Rows per Arrow batch handed to the Parquet writer.
const BATCH_ROWS: usize = 65_536;
/// Row groups are cut at this estimated encoded size.
const ROW_GROUP_BYTES: usize = 128 << 20;

/// Whether a pair shares its normalised text or was verified as a near duplicate.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    /// Same normalised text.
    Exact,
    /// Passed LSH and verification.
    Near,
}

impl PairKind {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            PairKind::Exact => "exact",
            PairKind::Near => "near",
        }
    }
}

/// One row of `pairs/`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairRow {
    /// The smaller id (string order).
    pub id_a: String,
    /// The larger id.
    pub id_b: String,
    /// Internal position of `id_a`.
    pub doc_a: DocId,
    /// Internal position of `id_b`.
    pub doc_b: DocId,
    /// Estimated Jaccard (MinHash), `1 - hamming/64` (SimHash), 1 for exact pairs.
    pub similarity: f64,
    /// Exact or near.
    pub kind: PairKind,
    /// What verified a near pair: Jaccard (MinHash at the threshold), containment (MinHash,
    /// most of the smaller document inside the larger) or Hamming distance (SimHash); none
    /// for exact pairs.
    pub measure: Option<Measure>,
    /// Containment of the smaller document's features in the larger (MinHash near pairs
    /// when `minhash.containment` is on).
    pub containment: Option<f64>,
    /// Hamming distance of the fingerprints (SimHash near pairs).
    pub hamming: Option<u32>,
    /// Bands agreeing completely (MinHash near pairs).
    pub matching_bands: Option<u32>,
}

/// One row of `documents/`: every input record appears exactly once.
#[derive(Clone, Debug, PartialEq)]
pub struct DocumentRow {
    /// Internal position.
    pub doc: DocId,
    /// The record's id, when it could be read.
    pub id: Option<String>,
    /// The input file.
    pub source: Arc<str>,
    /// Keep, remove or reject.
    pub decision: Decision,
    /// Id of the cluster's kept document (the document's own id when alone); none for rejects.
    pub cluster: Option<String>,
    /// Number of documents in the cluster; none for rejects.
    pub cluster_size: Option<u64>,
    /// For a removed document: the kept document's id.
    pub duplicate_of: Option<String>,
    /// For a document removed as a duplicate of one kept by an earlier run (`--index`):
    /// that run's name.
    pub duplicate_of_run: Option<String>,
    /// Why it was rejected or removed, or why a kept document was not matched.
    pub reason: Option<Reason>,
    /// Details of a reject.
    pub detail: Option<String>,
    /// For a removed document: whether it was verified directly against the kept one (false
    /// means connected through other documents).
    pub verified_with_kept: Option<bool>,
    /// Distinct features; none for rejects.
    pub features: Option<u32>,
    /// Characters after normalisation; none for rejects.
    pub chars: Option<u64>,
    /// URL, fetch date and digest of a web page.
    pub web: Option<Box<WebMeta>>,
    /// With paragraph-level dedup: the paragraphs a kept document repeats from one kept
    /// before it (none for removed documents and rejects).
    pub repeated: Option<Repeated>,
}

/// What paragraph-level dedup left out of a kept document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repeated {
    /// Paragraphs left out.
    pub paragraphs: u32,
    /// Their characters, as compared.
    pub chars: u64,
}

/// The schema of `pairs/`.
pub fn pairs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id_a", DataType::Utf8, false),
        Field::new("id_b", DataType::Utf8, false),
        Field::new("similarity", DataType::Float64, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("hamming", DataType::Int32, true),
        Field::new("matching_bands", DataType::Int32, true),
        Field::new("doc_id_a", DataType::Int64, false),
        Field::new("doc_id_b", DataType::Int64, false),
        Field::new("measure", DataType::Utf8, true),
        Field::new("containment", DataType::Float64, true),
    ]))
}

/// The schema of `documents/`.
pub fn documents_schema() -> SchemaRef {
    documents_schema_with(false)
}

/// The schema of `documents/`, with the columns of paragraph-level dedup when
/// `paragraphs` (`repeated_paragraphs`, `repeated_chars`).
pub fn documents_schema_with(paragraphs: bool) -> SchemaRef {
    let mut fields = documents_fields();
    if paragraphs {
        fields.push(Field::new("repeated_paragraphs", DataType::Int32, true));
        fields.push(Field::new("repeated_chars", DataType::Int64, true));
    }
    Arc::new(Schema::new(fields))
}

fn documents_fields() -> Vec<Field> {
    vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("doc_id", DataType::Int64, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("record", DataType::Int64, false),
        Field::new("decision", DataType::Utf8, false),
        Field::new("cluster", DataType::Utf8, true),
        Field::new("cluster_size", DataType::Int64, true),
        Field::new("duplicate_of", DataType::Utf8, true),
        Field::new("duplicate_of_run", DataType::Utf8, true),
        Field::new("reason", DataType::Utf8, true),
        Field::new("detail", DataType::Utf8, true),
        Field::new("verified_with_kept", DataType::Boolean, true),
        Field::new("features", DataType::Int32, true),
        Field::new("chars", DataType::Int64, true),
        Field::new("url", DataType::Utf8, true),
        Field::new("date", DataType::Utf8, true),
        Field::new("digest", DataType::Utf8, true),
    ]
}

/// A `DocId` as an `Int64` column value (its top bit is never set).
pub(crate) fn doc_i64(doc: DocId) -> i64 {
    i64::try_from(doc.get()).expect("DocId keeps its top bit clear")
}

fn opt_i32(v: Option<u32>) -> Option<i32> {
    v.map(|x| i32::try_from(x).unwrap_or(i32::MAX))
}

fn opt_i64(v: Option<u64>) -> Option<i64> {
    v.map(|x| i64::try_from(x).unwrap_or(i64::MAX))
}

/// Writes one part file: a temporary hidden file renamed into place (or an upload
/// completed) by [`PartWriter::finish`].
pub struct PartWriter {
    path: PathBuf,
    writer: Option<ArrowWriter<OutFile>>,
    schema: SchemaRef,
    rows: u64,
}

impl PartWriter {
    /// Starts `dir/part-{part:05}.parquet` with `schema` and key-value `metadata`.
    ///
    /// # Errors
    /// [`Error::Write`] when the folder or file cannot be created.
    pub fn create(
        dir: &Path,
        part: usize,
        schema: SchemaRef,
        metadata: &[(String, String)],
    ) -> Result<Self> {
        let kv = metadata.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
        let props = WriterProperties::builder()
            .set_compression(ParquetCompression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            .set_key_value_metadata(Some(kv))
            .set_created_by(format!("neardup {}", env!("CARGO_PKG_VERSION")))
            .build();
        Self::create_with(dir, part, schema, props)
    }

    /// Starts `dir/part-{part:05}.parquet` with `schema` and writer properties `props`.
    ///
    /// # Errors
    /// [`Error::Write`] when the folder or file cannot be created.
    pub fn create_with(
        dir: &Path,
        part: usize,
        schema: SchemaRef,
        props: WriterProperties,
    ) -> Result<Self> {
        let path = dir.join(format!("part-{part:05}.parquet"));
        let file =
            OutFile::create(&path).map_err(|source| Error::Write { path: path.clone(), source })?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|source| Error::ParquetWrite { path: path.clone(), source })?;
        Ok(PartWriter { path, writer: Some(writer), schema, rows: 0 })
    }

    pub(crate) fn write_columns(&mut self, columns: Vec<ArrayRef>) -> Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|source| Error::Batch { path: self.path.clone(), source })?;
        self.rows += batch.num_rows() as u64;
        self.writer
            .as_mut()
            .expect("not finished")
            .write(&batch)
            .map_err(|source| Error::ParquetWrite { path: self.path.clone(), source })
    }

    /// Ends the current row group, so that the next rows start a new one.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`].
    pub(crate) fn end_row_group(&mut self) -> Result<()> {
        self.writer
            .as_mut()
            .expect("not finished")
            .flush()
            .map_err(|source| Error::ParquetWrite { path: self.path.clone(), source })
    }

    /// Closes the file and makes it appear under its name (synced and renamed, or the upload
    /// completed); returns rows written. Dropped before, it leaves nothing behind.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] or [`Error::Write`].
    pub fn finish(mut self) -> Result<u64> {
        let writer = self.writer.take().expect("finish is called once");
        let file = writer
            .into_inner()
            .map_err(|source| Error::ParquetWrite { path: self.path.clone(), source })?;
        file.commit().map_err(|source| Error::Write { path: self.path.clone(), source })?;
        Ok(self.rows)
    }
}

/// Writes `pairs/` rows.
pub struct PairsWriter(PartWriter);

impl PairsWriter {
    /// Starts part `part` in `dir`.
    ///
    /// # Errors
    /// As [`PartWriter::create`].
    pub fn create(dir: &Path, part: usize, metadata: &[(String, String)]) -> Result<Self> {
        PartWriter::create(dir, part, pairs_schema(), metadata).map(PairsWriter)
    }

    /// Appends rows.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] when writing fails.
    pub fn write(&mut self, rows: &[PairRow]) -> Result<()> {
        for chunk in rows.chunks(BATCH_ROWS) {
            let mut id_a = StringBuilder::new();
            let mut id_b = StringBuilder::new();
            let mut similarity = Float64Builder::with_capacity(chunk.len());
            let mut kind = StringBuilder::new();
            let mut hamming = Int32Builder::with_capacity(chunk.len());
            let mut bands = Int32Builder::with_capacity(chunk.len());
            let mut doc_a = Int64Builder::with_capacity(chunk.len());
            let mut doc_b = Int64Builder::with_capacity(chunk.len());
            let mut measure = StringBuilder::new();
            let mut containment = Float64Builder::with_capacity(chunk.len());
            for r in chunk {
                id_a.append_value(&r.id_a);
                id_b.append_value(&r.id_b);
                similarity.append_value(r.similarity);
                kind.append_value(r.kind.as_str());
                hamming.append_option(opt_i32(r.hamming));
                bands.append_option(opt_i32(r.matching_bands));
                doc_a.append_value(doc_i64(r.doc_a));
                doc_b.append_value(doc_i64(r.doc_b));
                measure.append_option(r.measure.map(Measure::as_str));
                containment.append_option(r.containment);
            }
            self.0.write_columns(vec![
                Arc::new(id_a.finish()),
                Arc::new(id_b.finish()),
                Arc::new(similarity.finish()),
                Arc::new(kind.finish()),
                Arc::new(hamming.finish()),
                Arc::new(bands.finish()),
                Arc::new(doc_a.finish()),
                Arc::new(doc_b.finish()),
                Arc::new(measure.finish()),
                Arc::new(containment.finish()),
            ])?;
        }
        Ok(())
    }

    /// Completes the part; see [`PartWriter::finish`].
    ///
    /// # Errors
    /// As [`PartWriter::finish`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

/// Writes `documents/` rows.
pub struct DocumentsWriter {
    part: PartWriter,
    paragraphs: bool,
}

impl DocumentsWriter {
    /// Starts part `part` in `dir`.
    ///
    /// # Errors
    /// As [`PartWriter::create`].
    pub fn create(dir: &Path, part: usize, metadata: &[(String, String)]) -> Result<Self> {
        Self::create_with(dir, part, metadata, false)
    }

    /// Starts part `part` in `dir`, with the columns of paragraph-level dedup when
    /// `paragraphs`.
    ///
    /// # Errors
    /// As [`PartWriter::create`].
    pub fn create_with(
        dir: &Path,
        part: usize,
        metadata: &[(String, String)],
        paragraphs: bool,
    ) -> Result<Self> {
        let schema = documents_schema_with(paragraphs);
        let part = PartWriter::create(dir, part, schema, metadata)?;
        Ok(DocumentsWriter { part, paragraphs })
    }

    /// Appends rows.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] when writing fails.
    pub fn write(&mut self, rows: &[DocumentRow]) -> Result<()> {
        for chunk in rows.chunks(BATCH_ROWS) {
            let n = chunk.len();
            let mut id = StringBuilder::new();
            let mut doc_id = Int64Builder::with_capacity(n);
            let mut source = StringBuilder::new();
            let mut record = Int64Builder::with_capacity(n);
            let mut decision = StringBuilder::new();
            let mut cluster = StringBuilder::new();
            let mut cluster_size = Int64Builder::with_capacity(n);
            let mut duplicate_of = StringBuilder::new();
            let mut duplicate_of_run = StringBuilder::new();
            let mut reason = StringBuilder::new();
            let mut detail = StringBuilder::new();
            let mut verified = BooleanBuilder::with_capacity(n);
            let mut features = Int32Builder::with_capacity(n);
            let mut chars = Int64Builder::with_capacity(n);
            let mut url = StringBuilder::new();
            let mut date = StringBuilder::new();
            let mut digest = StringBuilder::new();
            let mut repeated = Int32Builder::with_capacity(n);
            let mut repeated_chars = Int64Builder::with_capacity(n);
            for r in chunk {
                id.append_option(r.id.as_deref());
                doc_id.append_value(doc_i64(r.doc));
                source.append_value(&r.source);
                record.append_value(i64::try_from(r.doc.record()).expect("40-bit record"));
                decision.append_value(r.decision.as_str());
                cluster.append_option(r.cluster.as_deref());
                cluster_size.append_option(opt_i64(r.cluster_size));
                duplicate_of.append_option(r.duplicate_of.as_deref());
                duplicate_of_run.append_option(r.duplicate_of_run.as_deref());
                reason.append_option(r.reason.map(Reason::as_str));
                detail.append_option(r.detail.as_deref());
                verified.append_option(r.verified_with_kept);
                features.append_option(opt_i32(r.features));
                chars.append_option(opt_i64(r.chars));
                let web = r.web.as_deref();
                url.append_option(web.and_then(|w| w.url.as_deref()));
                date.append_option(web.and_then(|w| w.date.as_deref()));
                digest.append_option(web.and_then(|w| w.digest.as_deref()));
                repeated.append_option(opt_i32(r.repeated.map(|p| p.paragraphs)));
                repeated_chars.append_option(opt_i64(r.repeated.map(|p| p.chars)));
            }
            let mut columns: Vec<ArrayRef> = vec![
                Arc::new(id.finish()),
                Arc::new(doc_id.finish()),
                Arc::new(source.finish()),
                Arc::new(record.finish()),
                Arc::new(decision.finish()),
                Arc::new(cluster.finish()),
                Arc::new(cluster_size.finish()),
                Arc::new(duplicate_of.finish()),
                Arc::new(duplicate_of_run.finish()),
                Arc::new(reason.finish()),
                Arc::new(detail.finish()),
                Arc::new(verified.finish()),
                Arc::new(features.finish()),
                Arc::new(chars.finish()),
                Arc::new(url.finish()),
                Arc::new(date.finish()),
                Arc::new(digest.finish()),
            ];
            if self.paragraphs {
                columns.push(Arc::new(repeated.finish()));
                columns.push(Arc::new(repeated_chars.finish()));
            }
            self.part.write_columns(columns)?;
        }
        Ok(())
    }

    /// Completes the part; see [`PartWriter::finish`].
    ///
    /// # Errors
    /// As [`PartWriter::finish`].
    pub fn finish(self) -> Result<u64> {
        self.part.finish()
    }
}

/// The finished part files in `dir` (a folder or a prefix), sorted, with the sizes a
/// listing gave.
fn part_files(dir: &Path) -> Result<Vec<(PathBuf, Option<u64>)>> {
    let open_err = |source| Error::Open { path: dir.to_path_buf(), source };
    let mut parts = Vec::new();
    let is_part = |name: &str| name.starts_with("part-") && name.ends_with(".parquet");
    if crate::remote::is_remote(dir) {
        for object in crate::remote::list(dir).map_err(open_err)? {
            if is_part(&object.relative) && !object.relative.contains('/') {
                parts.push((object.address, Some(object.size)));
            }
        }
    } else {
        for entry in std::fs::read_dir(dir).map_err(open_err)? {
            let path = entry.map_err(open_err)?.path();
            if path.file_name().and_then(|n| n.to_str()).is_some_and(is_part) {
                parts.push((path, None));
            }
        }
    }
    parts.sort();
    Ok(parts)
}

pub(crate) fn for_each_batch(dir: &Path, mut f: impl FnMut(&RecordBatch)) -> Result<()> {
    for (path, size) in part_files(dir)? {
        let file = crate::parquet_in::ParquetInput::open(&path, size, None)
            .map_err(|source| Error::Open { path: path.clone(), source })?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        for batch in reader {
            let batch =
                batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
            f(&batch);
        }
    }
    Ok(())
}

/// Reads every row of the `pairs/` parts in `dir`.
///
/// # Errors
/// When a part cannot be read.
pub fn read_pairs(dir: &Path) -> Result<Vec<PairRow>> {
    let mut rows = Vec::new();
    for_each_batch(dir, |b| {
        let s =
            |name: &str| b.column_by_name(name).expect("pairs schema").as_string::<i32>().clone();
        let i64s = |name: &str| {
            b.column_by_name(name).expect("pairs schema").as_primitive::<Int64Type>().clone()
        };
        let i32s = |name: &str| {
            b.column_by_name(name).expect("pairs schema").as_primitive::<Int32Type>().clone()
        };
        let (id_a, id_b, kind) = (s("id_a"), s("id_b"), s("kind"));
        let sim = b
            .column_by_name("similarity")
            .expect("pairs schema")
            .as_primitive::<Float64Type>()
            .clone();
        let (ham, bands, da, db) =
            (i32s("hamming"), i32s("matching_bands"), i64s("doc_id_a"), i64s("doc_id_b"));
        let opt = |a: &arrow_array::Int32Array, i: usize| {
            (!arrow_array::Array::is_null(a, i)).then(|| a.value(i) as u32)
        };
        let measure = s("measure");
        let containment = b
            .column_by_name("containment")
            .expect("pairs schema")
            .as_primitive::<Float64Type>()
            .clone();
        for i in 0..b.num_rows() {
            rows.push(PairRow {
                id_a: id_a.value(i).to_string(),
                id_b: id_b.value(i).to_string(),
                doc_a: DocId::from_raw(da.value(i) as u64),
                doc_b: DocId::from_raw(db.value(i) as u64),
                similarity: sim.value(i),
                kind: if kind.value(i) == "exact" { PairKind::Exact } else { PairKind::Near },
                measure: match arrow_array::Array::is_null(&measure, i) {
                    true => None,
                    false => match measure.value(i) {
                        "jaccard" => Some(Measure::Jaccard),
                        "containment" => Some(Measure::Containment),
                        _ => Some(Measure::Hamming),
                    },
                },
                containment: (!arrow_array::Array::is_null(&containment, i))
                    .then(|| containment.value(i)),
                hamming: opt(&ham, i),
                matching_bands: opt(&bands, i),
            });
        }
    })?;
    Ok(rows)
}

/// Reads every row of the `documents/` parts in `dir`.
///
/// # Errors
/// When a part cannot be read.
pub fn read_documents(dir: &Path) -> Result<Vec<DocumentRow>> {
    use arrow_array::Array;
    let mut rows = Vec::new();
    for_each_batch(dir, |b| {
        let col = |name: &str| b.column_by_name(name).expect("documents schema").clone();
        let (id, source, decision, cluster) =
            (col("id"), col("source"), col("decision"), col("cluster"));
        let (dup, reason, detail) = (col("duplicate_of"), col("reason"), col("detail"));
        let dup_run = col("duplicate_of_run");
        let (doc_id, size, chars) = (col("doc_id"), col("cluster_size"), col("chars"));
        let (verified, features) = (col("verified_with_kept"), col("features"));
        let (url, date, digest) = (col("url"), col("date"), col("digest"));
        // Only a run with paragraph-level dedup has these.
        let repeated =
            b.column_by_name("repeated_paragraphs").zip(b.column_by_name("repeated_chars"));
        let text = |a: &ArrayRef, i: usize| {
            (!a.is_null(i)).then(|| a.as_string::<i32>().value(i).to_string())
        };
        let int = |a: &ArrayRef, i: usize| {
            (!a.is_null(i)).then(|| a.as_primitive::<Int64Type>().value(i) as u64)
        };
        for i in 0..b.num_rows() {
            rows.push(DocumentRow {
                doc: DocId::from_raw(doc_id.as_primitive::<Int64Type>().value(i) as u64),
                id: text(&id, i),
                source: Arc::from(source.as_string::<i32>().value(i)),
                decision: Decision::parse(decision.as_string::<i32>().value(i))
                    .unwrap_or(Decision::Reject),
                cluster: text(&cluster, i),
                cluster_size: int(&size, i),
                duplicate_of: text(&dup, i),
                duplicate_of_run: text(&dup_run, i),
                reason: text(&reason, i).and_then(|r| Reason::parse(&r)),
                detail: text(&detail, i),
                verified_with_kept: (!verified.is_null(i)).then(|| verified.as_boolean().value(i)),
                features: (!features.is_null(i))
                    .then(|| features.as_primitive::<Int32Type>().value(i) as u32),
                chars: int(&chars, i),
                web: {
                    let web = WebMeta {
                        url: text(&url, i),
                        date: text(&date, i),
                        digest: text(&digest, i),
                        ..WebMeta::default()
                    };
                    (web != WebMeta::default()).then(|| Box::new(web))
                },
                repeated: repeated.filter(|(p, _)| !p.is_null(i)).map(|(p, c)| Repeated {
                    paragraphs: p.as_primitive::<Int32Type>().value(i) as u32,
                    chars: c.as_primitive::<Int64Type>().value(i) as u64,
                }),
            });
        }
    })?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    fn doc_row(record: u64, decision: Decision) -> DocumentRow {
        DocumentRow {
            doc: DocId::new(2, record),
            id: Some(format!("doc-{record}")),
            source: Arc::from("in/a.jsonl"),
            decision,
            cluster: (decision != Decision::Reject).then(|| "doc-1".to_string()),
            cluster_size: (decision != Decision::Reject).then_some(2),
            duplicate_of: (decision == Decision::Remove).then(|| "doc-1".to_string()),
            duplicate_of_run: (decision == Decision::Remove && record == 3)
                .then(|| "week-1".to_string()),
            reason: match decision {
                Decision::Keep => None,
                Decision::Remove => Some(Reason::NearDuplicate),
                Decision::Reject => Some(Reason::MalformedJson),
            },
            detail: (decision == Decision::Reject)
                .then(|| "expected value at column 1".to_string()),
            verified_with_kept: (decision == Decision::Remove).then_some(true),
            features: (decision != Decision::Reject).then_some(12),
            chars: (decision != Decision::Reject).then_some(40),
            web: (record == 2).then(|| {
                Box::new(WebMeta {
                    url: Some("https://example.com/a".into()),
                    date: Some("2024-05-01T00:00:00Z".into()),
                    ..WebMeta::default()
                })
            }),
            repeated: None,
        }
    }

    #[test]
    fn documents_and_pairs_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let docs_dir = dir.path().join("documents");
        let rows = vec![
            doc_row(1, Decision::Keep),
            doc_row(2, Decision::Remove),
            doc_row(3, Decision::Reject),
        ];
        let meta = vec![("neardup.config".to_string(), "{}".to_string())];
        let mut w = DocumentsWriter::create(&docs_dir, 0, &meta).unwrap();
        w.write(&rows).unwrap();
        assert_eq!(w.finish().unwrap(), 3);
        assert_eq!(read_documents(&docs_dir).unwrap(), rows);

        let pairs_dir = dir.path().join("pairs");
        let pairs = vec![
            PairRow {
                id_a: "a".into(),
                id_b: "b".into(),
                doc_a: DocId::new(0, 1),
                doc_b: DocId::new(0, 2),
                similarity: 0.875,
                kind: PairKind::Near,
                measure: Some(Measure::Containment),
                containment: Some(0.95),
                hamming: None,
                matching_bands: Some(3),
            },
            PairRow {
                id_a: "a".into(),
                id_b: "c".into(),
                doc_a: DocId::new(0, 1),
                doc_b: DocId::new(1, 2),
                similarity: 1.0,
                kind: PairKind::Exact,
                measure: None,
                containment: None,
                hamming: Some(0),
                matching_bands: None,
            },
        ];
        let mut w = PairsWriter::create(&pairs_dir, 7, &meta).unwrap();
        w.write(&pairs).unwrap();
        w.finish().unwrap();
        assert!(pairs_dir.join("part-00007.parquet").exists());
        assert_eq!(read_pairs(&pairs_dir).unwrap(), pairs);

        // Key-value metadata is in the file.
        let file = File::open(pairs_dir.join("part-00007.parquet")).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let kv = builder.metadata().file_metadata().key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "neardup.config" && k.value.as_deref() == Some("{}")));
    }

    fn any_document_row() -> impl proptest::strategy::Strategy<Value = DocumentRow> {
        use proptest::prelude::*;
        let text = || proptest::option::of("\\PC{0,10}");
        (
            (0u32..1000, 1u64..1_000_000, text(), "\\PC{1,10}", 0usize..3),
            (
                text(),
                proptest::option::of(any::<u64>()),
                text(),
                proptest::option::of(0usize..Reason::ALL.len()),
            ),
            (
                text(),
                proptest::option::of(any::<bool>()),
                proptest::option::of(any::<u32>()),
                proptest::option::of(0u64..i64::MAX as u64),
            ),
        )
            .prop_map(
                |(
                    (file, record, id, source, decision),
                    (cluster, size, dup, reason),
                    (detail, verified, features, chars),
                )| {
                    DocumentRow {
                        doc: DocId::new(file, record),
                        id,
                        source: Arc::from(source.as_str()),
                        decision: [Decision::Keep, Decision::Remove, Decision::Reject][decision],
                        cluster,
                        cluster_size: size.map(|n| n % (i64::MAX as u64)),
                        duplicate_of_run: dup.clone(),
                        duplicate_of: dup,
                        reason: reason.map(|r| Reason::ALL[r]),
                        detail,
                        verified_with_kept: verified,
                        features: features.map(|n| n % (i32::MAX as u32)),
                        chars,
                        web: None,
                        repeated: None,
                    }
                },
            )
    }

    proptest::proptest! {
        #[test]
        fn any_document_rows_round_trip(rows in proptest::collection::vec(any_document_row(), 0..30)) {
            let dir = tempfile::tempdir().unwrap();
            let mut w = DocumentsWriter::create(dir.path(), 3, &[]).unwrap();
            w.write(&rows).unwrap();
            proptest::prop_assert_eq!(w.finish().unwrap(), rows.len() as u64);
            proptest::prop_assert_eq!(read_documents(dir.path()).unwrap(), rows);
        }
    }

    #[test]
    fn an_unfinished_part_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let w = DocumentsWriter::create(dir.path(), 0, &[]).unwrap();
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
