//! The index of earlier runs (`--index DIR`): what a later batch is deduplicated against
//! without re-signing or rewriting the old corpus.
//!
//! ```text
//! DIR/index.json                    the manifest: settings, partitions, generations
//! DIR/<segment>/keys/part-NNNNN.parquet   (key, generation, doc_id) of one key partition
//! DIR/<segment>/docs/part-NNNNN.parquet   one row per indexed document, by (generation, doc_id)
//! ```
//!
//! Every run adds a **generation**, written as a **segment**: a folder of Parquet parts,
//! named with a token unique to the run. The manifest, rewritten atomically once all parts
//! of a run are in place, is the only commit point: a folder it does not list (a run that
//! failed) is ignored, and compaction removes it. Compaction ([`compact`]) merges the
//! segments of many generations into one, so that a lookup opens one part per partition
//! instead of one per run; every row carries its generation, so a merged segment still
//! says which run each document came from.
//!
//! `keys/` holds one row per bucket key of every indexed document (its bands or block
//! tables, and its content key for exact copies), partitioned by the key's top bits
//! ([`partition_of`]) and sorted by key in row groups of [`KEY_ROW_GROUP_ROWS`] rows, each
//! with a bloom filter on the key, in pages of 256 rows. A lookup ([`probe_keys`]) reads
//! the footer and page index, then for each row group whose key range holds a probed key
//! only its bloom filter, and of the keys the bloom filter lets through only the pages
//! whose range holds them: reading grows with the probes and their matches (a page per
//! match), and with the history only by the footers, page indexes and bloom filters (about
//! a byte and a half per key row).
//!
//! `docs/` holds, per document, what verification and the decision need: the id, the
//! content hash, the signature, and the cluster's kept document. Documents are split into
//! parts by [`doc_part_of`] and sorted by generation and `doc_id` in small pages, so
//! [`fetch_docs`] reads the `generation` and `doc_id` columns of the row groups that can
//! hold a wanted document, then only the pages holding wanted rows.
//!
//! Integers are signed (`Int64`, `Int32`) so Spark reads the parts; keys are the bits of the
//! unsigned key.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use crate::{Error, FolderLock, PartWriter, Result, TakenOver};

/// Version of the index layout; an index of another version is refused.
pub const FORMAT: u32 = 2;
/// The manifest's file name.
pub const MANIFEST: &str = "index.json";
/// Key partitions of a new index.
pub const DEFAULT_PARTITIONS: u32 = 64;
/// Rows per row group of a key part: each has its own key range and bloom filter.
pub const KEY_ROW_GROUP_ROWS: usize = 16_384;
/// Rows per page of a key part: a key found reads its page, not its row group.
const KEY_PAGE_ROWS: usize = 256;
/// False-positive rate of the key bloom filters.
const KEY_BLOOM_FPP: f64 = 0.001;
/// Documents per docs part of a merged segment, at most: a lookup reads each part that
/// holds candidates on one worker, so a large segment needs enough parts to spread them.
const MERGED_DOCS_PER_PART: u64 = 65_536;
/// Rows per row group and per page of a docs part.
const DOC_ROW_GROUP_ROWS: usize = 8_192;
const DOC_PAGE_ROWS: usize = 64;

/// One run's contribution to the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// 1, 2, ...: the order of runs; earlier generations' documents are "earlier".
    pub number: u32,
    /// Its folder in the index.
    pub folder: String,
    /// The run's name (the job's output folder unless given).
    pub run: String,
    /// The run's output folder, as an absolute path: a rerun of the same run (same name,
    /// same output) replaces the generation.
    #[serde(default)]
    pub output: String,
    /// When the run finished, seconds since the Unix epoch.
    pub created_unix: u64,
    /// Documents indexed (representatives of their texts).
    pub documents: u64,
    /// Key rows written.
    pub keys: u64,
    /// Parts of `docs/` of its segment: a document's part is [`doc_part_of`] its `doc_id`.
    pub doc_parts: u32,
    /// `doc_id`s taken out by [`forget`] whose key rows are still in its segment (they
    /// match nothing; compaction drops them), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forgotten: Vec<u64>,
}

/// A folder of the index and the generations whose rows it holds: one generation as a run
/// wrote it, or several merged by [`compact`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Its folder in the index.
    pub folder: String,
    /// Its generations, oldest first; the first names the segment.
    pub generations: Vec<u32>,
    /// Parts of its `docs/`.
    pub doc_parts: u32,
}

impl Segment {
    /// The number of its first generation, which names it among the segments.
    pub fn first(&self) -> u32 {
        self.generations[0]
    }
}

/// The manifest: what the index was built with, and its generations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`] of the writer.
    pub format: u32,
    /// The neardup version that last wrote it.
    pub neardup_version: String,
    /// Every setting signatures and bucket keys depend on, by name; a run must have the
    /// same values to use the index.
    pub settings: BTreeMap<String, String>,
    /// Key partitions.
    pub partitions: u32,
    /// Committed generations, oldest first.
    pub generations: Vec<Generation>,
}

impl Manifest {
    /// A manifest for a new, empty index.
    pub fn new(settings: BTreeMap<String, String>) -> Self {
        Manifest {
            format: FORMAT,
            neardup_version: env!("CARGO_PKG_VERSION").to_string(),
            settings,
            partitions: DEFAULT_PARTITIONS,
            generations: Vec::new(),
        }
    }

    /// The manifest of the index in `dir`, or `None` when `dir` does not exist or holds no
    /// manifest (an index yet to be made).
    ///
    /// # Errors
    /// [`Error::ReadFile`] when it cannot be read, [`Error::Damaged`] when it does not
    /// parse or has another format.
    pub fn load(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Damaged { path: path.clone(), detail: e.to_string() })?;
        if manifest.format != FORMAT {
            return Err(Error::Damaged {
                path,
                detail: format!(
                    "index format {} (this neardup reads format {FORMAT})",
                    manifest.format
                ),
            });
        }
        if manifest.partitions == 0 {
            return Err(Error::Damaged { path, detail: "0 key partitions".into() });
        }
        Ok(Some(manifest))
    }

    /// Writes the manifest atomically and durably: a hidden file, synced, renamed over the
    /// old one.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let mut json = serde_json::to_vec_pretty(self).expect("a manifest serialises");
        json.push(b'\n');
        crate::write_atomically(&dir.join(MANIFEST), &json)
    }

    /// Checks that a run with `settings` may use this index: every setting must be equal.
    ///
    /// # Errors
    /// [`Error::IncompatibleIndex`] naming the first setting that differs.
    pub fn check(&self, dir: &Path, settings: &BTreeMap<String, String>) -> Result<()> {
        let names = self.settings.keys().chain(settings.keys());
        for name in names {
            let (index, run) = (self.settings.get(name), settings.get(name));
            if index != run {
                let show = |v: Option<&String>| v.map_or("(not set)".to_string(), Clone::clone);
                return Err(Error::IncompatibleIndex {
                    path: dir.to_path_buf(),
                    setting: name.clone(),
                    index: show(index),
                    run: show(run),
                });
            }
        }
        Ok(())
    }

    /// The number the next generation gets.
    pub fn next_generation(&self) -> u32 {
        self.generations.last().map_or(1, |g| g.number + 1)
    }

    /// The generation numbered `number`.
    pub fn generation(&self, number: u32) -> Option<&Generation> {
        self.generations.iter().find(|g| g.number == number)
    }

    /// The segments, in the order of their generations: consecutive generations that share
    /// a folder form one segment.
    pub fn segments(&self) -> Vec<Segment> {
        let mut segments: Vec<Segment> = Vec::new();
        for g in &self.generations {
            match segments.last_mut() {
                Some(s) if s.folder == g.folder => s.generations.push(g.number),
                _ => segments.push(Segment {
                    folder: g.folder.clone(),
                    generations: vec![g.number],
                    doc_parts: g.doc_parts,
                }),
            }
        }
        segments
    }
}

/// The lock of an index that a run or index command changes (`DIR/.lock`, see
/// [`FolderLock`]): one at a time.
#[derive(Debug)]
pub struct IndexLock {
    _lock: FolderLock,
    taken_over: Option<TakenOver>,
}

impl IndexLock {
    /// Takes the lock of the index in `dir` (making `dir`), and checks that the index still
    /// has the generations `read` (of the manifest the run was configured with).
    ///
    /// # Errors
    /// [`Error::Busy`] when another run holds it, [`Error::IndexChanged`] when a run
    /// added to the index since `read`, [`Error::Write`] when the file cannot be made.
    pub fn acquire(dir: &Path, read: &[Generation]) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let (lock, taken_over) = FolderLock::acquire(&dir.join(".lock"))?;
        let lock = IndexLock { _lock: lock, taken_over };
        let now = Manifest::load(dir)?.map(|m| m.generations).unwrap_or_default();
        if now != read {
            return Err(Error::IndexChanged { path: dir.to_path_buf() });
        }
        Ok(lock)
    }

    /// The lock of a run that had stopped, if this one took it over.
    pub fn taken_over(&self) -> Option<&TakenOver> {
        self.taken_over.as_ref()
    }
}

/// The folder name of generation `number` written by the run with `token`.
pub fn generation_folder(number: u32, token: &str) -> String {
    format!("gen-{number:06}-{token}")
}

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
}

impl IndexedDoc {
    /// The document of the row.
    pub fn at(&self) -> IndexRef {
        IndexRef { generation: self.generation, doc: self.doc }
    }
}

fn keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, false),
        Field::new("generation", DataType::Int32, false),
        Field::new("doc_id", DataType::Int64, false),
    ]))
}

fn docs_schema() -> SchemaRef {
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
    ]))
}

fn base_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(ParquetCompression::ZSTD(ZstdLevel::try_new(1).expect("valid level")))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by(format!("neardup {}", env!("CARGO_PKG_VERSION")))
}

fn as_i64(v: u64) -> i64 {
    v as i64 // the bits: keys use all 64
}

fn as_i32(v: u32) -> i32 {
    v as i32 // generations are far below 2^31
}

/// Writes the key part of one partition of one generation, rows in key order.
pub struct KeyPartWriter(PartWriter);

impl KeyPartWriter {
    /// Starts `segment_dir/keys/part-{partition:05}.parquet`.
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
        PartWriter::create_with(&segment_dir.join("keys"), partition as usize, keys_schema(), props)
            .map(KeyPartWriter)
    }

    /// Appends rows, which must continue the key order. All keys of a partition share
    /// their top bit (there are at least two partitions), so their unsigned order is also
    /// the order of the stored signed values.
    ///
    /// # Errors
    /// [`Error::Batch`] or [`Error::ParquetWrite`].
    pub fn write(&mut self, rows: &[KeyRow]) -> Result<()> {
        let mut key = Int64Builder::with_capacity(rows.len());
        let mut generation = Int32Builder::with_capacity(rows.len());
        let mut doc = Int64Builder::with_capacity(rows.len());
        for r in rows {
            key.append_value(as_i64(r.key));
            generation.append_value(as_i32(r.generation));
            doc.append_value(as_i64(r.doc));
        }
        self.0.write_columns(vec![
            Arc::new(key.finish()),
            Arc::new(generation.finish()),
            Arc::new(doc.finish()),
        ])
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

/// What a lookup read, for the benchmark and the run summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeStats {
    /// Parts opened (their footers read).
    pub parts: u64,
    /// Row groups whose key range holds a probed key (their bloom filters read).
    pub bloom_filters: u64,
    /// Row groups read.
    pub row_groups_read: u64,
    /// Rows decoded.
    pub rows_read: u64,
}

fn open_part(
    path: &Path,
    page_index: bool,
) -> Result<Option<ParquetRecordBatchReaderBuilder<File>>> {
    let file = match File::open(path) {
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

/// The `(min, max)` of integer column `column` (Int64 or Int32) in row group `rg`.
fn column_range(
    builder: &ParquetRecordBatchReaderBuilder<File>,
    rg: usize,
    column: usize,
    path: &Path,
) -> Result<(i64, i64)> {
    let range = match builder.metadata().row_group(rg).column(column).statistics() {
        Some(Statistics::Int64(s)) => s.min_opt().copied().zip(s.max_opt().copied()),
        Some(Statistics::Int32(s)) => {
            s.min_opt().map(|&v| i64::from(v)).zip(s.max_opt().map(|&v| i64::from(v)))
        }
        _ => return Err(damaged(path, "a row group has no integer statistics")),
    };
    range.ok_or_else(|| damaged(path, "a row group has no range"))
}

/// The key part of `partition` in the segment in `segment_dir`.
pub fn key_part_path(segment_dir: &Path, partition: u32) -> PathBuf {
    segment_dir.join("keys").join(format!("part-{partition:05}.parquet"))
}

/// Docs part `part` of the segment in `segment_dir`.
pub fn doc_part_path(segment_dir: &Path, part: u32) -> PathBuf {
    segment_dir.join("docs").join(format!("part-{part:05}.parquet"))
}

fn damaged(path: &Path, detail: &str) -> Error {
    Error::Damaged { path: path.to_path_buf(), detail: detail.to_string() }
}

/// The pages of the key column of row group `rg`, as `(first row, end row, min key, max
/// key)`; one page spanning the row group when the file has no page index.
fn page_ranges(
    metadata: &parquet::file::metadata::ParquetMetaData,
    rg: usize,
    rows: usize,
) -> Vec<(usize, usize, i64, i64)> {
    use parquet::file::page_index::column_index::ColumnIndexMetaData;
    let index = metadata.page_index_for_row_group(rg);
    let (Some(ColumnIndexMetaData::INT64(column)), Some(offsets)) =
        (index.column_index(0), index.offset_index(0))
    else {
        return vec![(0, rows, i64::MIN, i64::MAX)];
    };
    let locations = offsets.page_locations();
    (0..locations.len())
        .map(|p| {
            let first = usize::try_from(locations[p].first_row_index).unwrap_or(0);
            let end = locations
                .get(p + 1)
                .map_or(rows, |l| usize::try_from(l.first_row_index).unwrap_or(rows));
            let min = column.min_value(p).copied().unwrap_or(i64::MIN);
            let max = column.max_value(p).copied().unwrap_or(i64::MAX);
            (first, end, min, max)
        })
        .collect()
}

/// Rows of the key part `partition` of the segment in `segment_dir` whose key is in `keys`
/// (sorted, distinct), in key order. A missing part (no keys fell in that partition) has no
/// rows.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn probe_keys(
    segment_dir: &Path,
    partition: u32,
    keys: &[u64],
    stats: &mut ProbeStats,
) -> Result<Vec<KeyRow>> {
    debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "probe keys sorted and distinct");
    let path = key_part_path(segment_dir, partition);
    let mut found = Vec::new();
    if keys.is_empty() {
        return Ok(found);
    }
    let Some(builder) = open_part(&path, true)? else { return Ok(found) };
    stats.parts += 1;
    // Keys are stored as i64 bits, so the stored order is the signed order: compare in it.
    let mut probes: Vec<i64> = keys.iter().map(|&k| as_i64(k)).collect();
    probes.sort_unstable();
    let metadata = builder.metadata().clone();
    let mut row_groups = Vec::new();
    let mut wanted: Vec<i64> = Vec::new();
    let mut selectors: Vec<RowSelector> = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let (min, max) = column_range(&builder, rg, 0, &path)?;
        let from = probes.partition_point(|&k| k < min);
        let to = probes.partition_point(|&k| k <= max);
        if from == to {
            continue;
        }
        stats.bloom_filters += 1;
        let bloom = builder
            .get_row_group_column_bloom_filter(rg, 0)
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let hits: Vec<i64> = probes[from..to]
            .iter()
            .copied()
            .filter(|k| bloom.as_ref().is_none_or(|b| b.check(k)))
            .collect();
        if hits.is_empty() {
            continue;
        }
        // Only the pages whose key range holds a hit (keys are sorted, so a key's rows
        // are in one page or a few adjacent ones); the whole row group without a page
        // index.
        let rows = usize::try_from(metadata.row_group(rg).num_rows()).unwrap_or(0);
        let pages = page_ranges(&metadata, rg, rows);
        let mut at = 0usize;
        let mut selected_any = false;
        for (first, end, page_min, page_max) in pages {
            let lo = hits.partition_point(|&k| k < page_min);
            if lo < hits.len() && hits[lo] <= page_max {
                if first > at {
                    selectors.push(RowSelector::skip(first - at));
                }
                selectors.push(RowSelector::select(end - first));
                stats.rows_read += (end - first) as u64;
                at = end;
                selected_any = true;
            }
        }
        if !selected_any {
            continue; // a bloom false positive outside every page's range
        }
        if rows > at {
            selectors.push(RowSelector::skip(rows - at));
        }
        row_groups.push(rg);
        wanted.extend(hits);
    }
    if row_groups.is_empty() {
        return Ok(found);
    }
    stats.row_groups_read += row_groups.len() as u64;
    let reader = builder
        .with_row_groups(row_groups)
        .with_row_selection(RowSelection::from(selectors))
        .with_batch_size(KEY_ROW_GROUP_ROWS)
        .build()
        .map_err(|source| Error::Parquet { path: path.clone(), source })?;
    let mut next = 0usize; // wanted is sorted: a merge join with the sorted rows
    for batch in reader {
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        for row in key_rows(&batch, &path)? {
            let k = as_i64(row.key);
            while next < wanted.len() && wanted[next] < k {
                next += 1;
            }
            if next < wanted.len() && wanted[next] == k {
                found.push(row);
            }
        }
        // Row groups are read in order and keys ascend across them: `next` carries over.
    }
    found.sort_unstable();
    Ok(found)
}

/// The documents `docs` (sorted, distinct) of docs part `part` of the segment in
/// `segment_dir`, in order; documents not in the part are left out.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn fetch_docs(
    segment_dir: &Path,
    part: u32,
    docs: &[IndexRef],
    stats: &mut ProbeStats,
) -> Result<Vec<IndexedDoc>> {
    debug_assert!(docs.windows(2).all(|w| w[0] < w[1]), "wanted documents sorted and distinct");
    let path = doc_part_path(segment_dir, part);
    let mut found = Vec::new();
    if docs.is_empty() {
        return Ok(found);
    }
    let Some(builder) = open_part(&path, true)? else { return Ok(found) };
    stats.parts += 1;
    // Row groups that can hold a wanted document. Rows are sorted by (generation, doc_id):
    // a wanted document is in a row group's range when its generation is strictly inside
    // the group's generation range, or is at an end of it with the doc_id in the group's
    // doc_id range (a superset of that generation's doc_ids in the group).
    let metadata = builder.metadata().clone();
    let mut row_groups = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let (g_min, g_max) = column_range(&builder, rg, 0, &path)?;
        let (d_min, d_max) = column_range(&builder, rg, 1, &path)?;
        let holds = |r: &IndexRef| {
            let (g, d) = (i64::from(r.generation), as_i64(r.doc));
            (g > g_min && g < g_max) || ((g == g_min || g == g_max) && d >= d_min && d <= d_max)
        };
        let from = docs.partition_point(|r| i64::from(r.generation) < g_min);
        let to = docs.partition_point(|r| i64::from(r.generation) <= g_max);
        if docs[from..to].iter().any(holds) {
            row_groups.push(rg);
        }
    }
    if row_groups.is_empty() {
        return Ok(found);
    }
    // First pass: the generation and doc_id columns of those row groups give the positions
    // of wanted rows.
    let mut selectors = Vec::new();
    let mut run_skip = 0usize;
    let mut run_select = 0usize;
    {
        // The same file again, with the metadata already read.
        let mask = ProjectionMask::roots(builder.parquet_schema(), [0, 1]);
        let file =
            File::open(&path).map_err(|source| Error::Open { path: path.clone(), source })?;
        let metadata = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let ids = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata)
            .with_projection(mask)
            .with_row_groups(row_groups.clone())
            .with_batch_size(DOC_ROW_GROUP_ROWS)
            .build()
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let mut next = 0usize;
        for batch in ids {
            let batch =
                batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
            stats.rows_read += batch.num_rows() as u64;
            let generation = batch.column(0).as_primitive::<Int32Type>().values();
            let doc = batch.column(1).as_primitive::<Int64Type>().values();
            for (&g, &d) in generation.iter().zip(doc.iter()) {
                let here = IndexRef { generation: g as u32, doc: d as u64 };
                while next < docs.len() && docs[next] < here {
                    next += 1;
                }
                let hit = next < docs.len() && docs[next] == here;
                if hit {
                    if run_skip > 0 {
                        selectors.push(RowSelector::skip(run_skip));
                        run_skip = 0;
                    }
                    run_select += 1;
                } else {
                    if run_select > 0 {
                        selectors.push(RowSelector::select(run_select));
                        run_select = 0;
                    }
                    run_skip += 1;
                }
            }
        }
    }
    if run_select > 0 {
        selectors.push(RowSelector::select(run_select));
    }
    let selection = RowSelection::from(selectors);
    if selection.row_count() == 0 {
        return Ok(found);
    }
    stats.row_groups_read += row_groups.len() as u64;
    // Second pass: all columns of the wanted rows only; the page index skips other pages.
    let reader = builder
        .with_row_groups(row_groups)
        .with_row_selection(selection)
        .with_batch_size(1024)
        .build()
        .map_err(|source| Error::Parquet { path: path.clone(), source })?;
    for batch in reader {
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        found.extend(doc_rows(&batch, &path)?);
    }
    Ok(found)
}

fn key_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<KeyRow>> {
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

fn doc_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<IndexedDoc>> {
    if batch.num_columns() != 10 {
        return Err(damaged(path, "a docs part without the 10 index columns"));
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
struct PartRows<T> {
    path: PathBuf,
    reader: Option<ParquetRecordBatchReader>,
    decode: fn(&RecordBatch, &Path) -> Result<Vec<T>>,
    rows: std::vec::IntoIter<T>,
}

impl<T> PartRows<T> {
    /// The rows of the part at `path` (none when it does not exist), `batch` at a time.
    fn open(
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
    fn next(&mut self) -> Result<Option<T>> {
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

/// The manifest of the index in `dir`, and its lock, for a command that changes it.
fn open_to_change(dir: &Path) -> Result<(Manifest, IndexLock)> {
    let Some(manifest) = Manifest::load(dir)? else {
        return Err(damaged(&dir.join(MANIFEST), "no index here"));
    };
    let lock = IndexLock::acquire(dir, &manifest.generations)?;
    Ok((manifest, lock))
}

/// What [`forget`] took out of an index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Documents whose id was listed.
    pub listed: u64,
    /// Documents taken out because the kept document of their cluster was listed.
    pub with_their_kept: u64,
    /// Listed ids found nowhere in the index.
    pub unknown_ids: u64,
    /// The lock of a run that had stopped, taken over, as a sentence.
    pub lock_taken_over: Option<String>,
}

/// Takes the documents with the given ids out of the index in `dir`, so they no longer
/// match new copies; when a listed document was the kept one of its cluster, the cluster's
/// other (removed) members go too, as nothing kept stands for them any more. Holds the
/// index lock. Docs parts are rewritten atomically, one at a time, then the manifest's
/// document counts and lists of forgotten documents are updated; key rows of forgotten
/// documents stay until [`compact`] and match nothing.
///
/// # Errors
/// [`Error::Damaged`] when `dir` holds no index, [`Error::Busy`], or the errors of
/// reading and writing parts.
pub fn forget(dir: &Path, ids: &std::collections::BTreeSet<String>) -> Result<Forgotten> {
    let (mut manifest, lock) = open_to_change(dir)?;
    let segments = manifest.segments();
    // First pass: the documents listed, wherever they are.
    // Parts holding a listed id or a row whose kept document has a listed id are marked
    // (an id may repeat across runs, so the second pass checks the kept document itself).
    let mut listed = std::collections::BTreeSet::new();
    let mut seen_ids = std::collections::BTreeSet::new();
    let mut marked = std::collections::BTreeSet::new();
    for (s, segment) in segments.iter().enumerate() {
        let segment_dir = dir.join(&segment.folder);
        for part in 0..segment.doc_parts {
            for_each_docs_batch(&segment_dir, part, |rows| {
                for row in rows {
                    if ids.contains(&row.id) {
                        seen_ids.insert(row.id.clone());
                        listed.insert(row.at());
                        marked.insert((s, part));
                    } else if ids.contains(&row.kept_id) {
                        marked.insert((s, part));
                    }
                }
                Ok(())
            })?;
        }
    }
    let mut report = Forgotten {
        unknown_ids: (ids.len() - seen_ids.len()) as u64,
        lock_taken_over: lock.taken_over().map(ToString::to_string),
        ..Forgotten::default()
    };
    if listed.is_empty() {
        return Ok(report);
    }
    // Second pass: rewrite the parts that hold a listed document or a member of a listed
    // kept document's cluster. A part is streamed into a new file, which replaces the old
    // one only when a row was left out (an unfinished writer leaves nothing behind).
    let mut gone: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (s, part) in marked {
        let segment_dir = dir.join(&segments[s].folder);
        let mut writer = DocPartWriter::create(&segment_dir, part)?;
        let mut removed = 0u64;
        for_each_docs_batch(&segment_dir, part, |rows| {
            let mut kept_rows = Vec::with_capacity(rows.len());
            for row in rows {
                let me = row.at();
                if listed.contains(&me) {
                    report.listed += 1;
                } else if listed.contains(&row.kept) {
                    report.with_their_kept += 1;
                } else {
                    kept_rows.push(row);
                    continue;
                }
                removed += 1;
                gone.entry(me.generation).or_default().push(me.doc);
            }
            writer.write(&kept_rows)
        })?;
        if removed > 0 {
            writer.finish()?;
        }
    }
    for g in &mut manifest.generations {
        if let Some(docs) = gone.remove(&g.number) {
            g.documents -= docs.len() as u64;
            g.forgotten.extend(docs);
            g.forgotten.sort_unstable();
            g.forgotten.dedup();
        }
    }
    manifest.save(dir)?;
    Ok(report)
}

/// What [`compact`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Segments before (one per run since the last compaction, plus the last compacted one).
    pub segments_before: u64,
    /// Generations in the merged segment.
    pub generations: u64,
    /// Documents in the merged segment.
    pub documents: u64,
    /// Key rows before and after.
    pub keys_before: u64,
    /// Key rows after: those of forgotten documents are dropped.
    pub keys_after: u64,
    /// Bytes of the segments before and after.
    pub bytes_before: u64,
    /// Bytes of the merged segment.
    pub bytes_after: u64,
    /// Folders no committed generation refers to (left by failed runs or compactions),
    /// removed.
    pub orphans_removed: Vec<String>,
    /// The merged segment's folder; `None` when there was nothing to merge.
    pub folder: Option<String>,
    /// The lock of a run that had stopped, taken over, as a sentence.
    pub lock_taken_over: Option<String>,
}

/// Merges every segment of the index in `dir` into one, dropping the key rows of
/// forgotten documents, and removes folders no committed generation refers to. Holds the
/// index lock. The merged segment is written beside the old ones and committed by the
/// manifest; only then are the old folders removed, so a failure at any point leaves the
/// index as it was (plus a folder the next compaction removes).
///
/// Reading streams every part once; memory holds a batch of every part being merged and
/// a row group of every new docs part.
///
/// # Errors
/// [`Error::Damaged`] when `dir` holds no index, [`Error::Busy`], or the errors of
/// reading and writing parts.
pub fn compact(dir: &Path) -> Result<Compacted> {
    let (mut manifest, lock) = open_to_change(dir)?;
    let segments = manifest.segments();
    let mut report = Compacted {
        segments_before: segments.len() as u64,
        generations: manifest.generations.len() as u64,
        documents: manifest.generations.iter().map(|g| g.documents).sum(),
        keys_before: manifest.generations.iter().map(|g| g.keys).sum(),
        lock_taken_over: lock.taken_over().map(ToString::to_string),
        ..Compacted::default()
    };
    report.orphans_removed = remove_orphans(dir, &segments)?;
    let forgotten: std::collections::HashSet<IndexRef> = manifest
        .generations
        .iter()
        .flat_map(|g| g.forgotten.iter().map(|&doc| IndexRef { generation: g.number, doc }))
        .collect();
    if segments.len() <= 1 && forgotten.is_empty() {
        report.keys_after = report.keys_before;
        report.bytes_before = segments.iter().map(|s| folder_bytes(&dir.join(&s.folder))).sum();
        report.bytes_after = report.bytes_before;
        return Ok(report);
    }
    let (first, last) = (segments[0].first(), manifest.generations.last().expect("some").number);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let folder = format!("gen-{first:06}-{last:06}-c{nanos:x}");
    let out = dir.join(&folder);
    let dirs: Vec<PathBuf> = segments.iter().map(|s| dir.join(&s.folder)).collect();

    // Keys: a k-way merge of each partition's parts, in (key, generation, doc_id) order.
    let mut keys_of: BTreeMap<u32, u64> = BTreeMap::new();
    for partition in 0..manifest.partitions {
        let mut readers = dirs
            .iter()
            .map(|d| PartRows::open(&key_part_path(d, partition), KEY_ROW_GROUP_ROWS, key_rows))
            .collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.next()? {
                heap.push(std::cmp::Reverse((row, i)));
            }
        }
        // Made at the first row: a partition without rows has no part.
        let mut writer: Option<KeyPartWriter> = None;
        let mut chunk = Vec::with_capacity(KEY_ROW_GROUP_ROWS);
        loop {
            let next = heap.pop();
            if let Some(std::cmp::Reverse((row, i))) = next {
                if let Some(following) = readers[i].next()? {
                    heap.push(std::cmp::Reverse((following, i)));
                }
                if !forgotten.contains(&row.at()) {
                    *keys_of.entry(row.generation).or_default() += 1;
                    chunk.push(row);
                }
            }
            let end = next.is_none();
            if chunk.len() == KEY_ROW_GROUP_ROWS || (end && !chunk.is_empty()) {
                if writer.is_none() {
                    writer = Some(KeyPartWriter::create(&out, partition)?);
                }
                writer.as_mut().expect("made above").write(&chunk)?;
                chunk.clear();
            }
            if end {
                break;
            }
        }
        if let Some(w) = writer {
            report.keys_after += w.finish()?;
        }
    }

    // Docs: each part is the same part of every segment, in generation order; a segment
    // written with another number of parts is split anew. As many parts as the most of any
    // segment, and more when there are more than MERGED_DOCS_PER_PART documents a part.
    let by_size = u32::try_from(report.documents.div_ceil(MERGED_DOCS_PER_PART)).unwrap_or(1024);
    let doc_parts = segments.iter().map(|s| s.doc_parts).max().unwrap_or(1).max(by_size).min(1024);
    // Every new part is open at once; each segment's parts are merged in (generation,
    // doc_id) order and each row goes to its new part, so every part is read once.
    let mut writers: Vec<(DocPartWriter, Vec<IndexedDoc>, u64)> = (0..doc_parts)
        .map(|part| DocPartWriter::create(&out, part).map(|w| (w, Vec::new(), 0)))
        .collect::<Result<_>>()?;
    for (segment, segment_dir) in segments.iter().zip(&dirs) {
        let mut readers = (0..segment.doc_parts)
            .map(|part| {
                PartRows::open(&doc_part_path(segment_dir, part), DOC_PAGE_ROWS * 16, doc_rows)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.next()? {
                heap.push(std::cmp::Reverse((row.at(), i, row)));
            }
        }
        while let Some(std::cmp::Reverse((_, i, row))) = heap.pop() {
            if let Some(next) = readers[i].next()? {
                heap.push(std::cmp::Reverse((next.at(), i, next)));
            }
            let (writer, buffer, rows) = &mut writers[doc_part_of(row.doc, doc_parts) as usize];
            buffer.push(row);
            *rows += 1;
            if buffer.len() == DOC_PAGE_ROWS * 16 {
                writer.write(buffer)?;
                buffer.clear();
            }
        }
    }
    for (mut writer, buffer, rows) in writers {
        writer.write(&buffer)?;
        if rows > 0 {
            writer.finish()?;
        }
    }

    for g in &mut manifest.generations {
        g.folder = folder.clone();
        g.doc_parts = doc_parts;
        g.keys = keys_of.get(&g.number).copied().unwrap_or(0);
        g.forgotten.clear();
    }
    manifest.neardup_version = env!("CARGO_PKG_VERSION").to_string();
    manifest.save(dir)?; // the commit point
    report.bytes_before = dirs.iter().map(|d| folder_bytes(d)).sum();
    report.bytes_after = folder_bytes(&out);
    for d in &dirs {
        std::fs::remove_dir_all(d).map_err(|source| Error::Write { path: d.clone(), source })?;
    }
    report.folder = Some(folder);
    Ok(report)
}

/// Removes the folders of `dir` named like segments that none of `segments` is.
/// Removes the segment folders (`gen-*`) of `dir` that `segments` do not list: what runs
/// that failed before their commit, or a compaction or replaced run killed after its
/// commit, left. Only for a holder of the index lock. Returns the folders removed.
///
/// # Errors
/// [`Error::ReadFile`] or [`Error::Write`] naming the folder.
pub fn remove_orphans(dir: &Path, segments: &[Segment]) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && name.starts_with("gen-") && !segments.iter().any(|s| s.folder == name) {
            let path = entry.path();
            std::fs::remove_dir_all(&path).map_err(|source| Error::Write { path, source })?;
            removed.push(name);
        }
    }
    removed.sort();
    Ok(removed)
}

/// Bytes of the files under `path`.
fn folder_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (splitmix64), so the tests need no seed handling.
    fn keys(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            })
            .collect()
    }

    #[test]
    fn partitions_are_contiguous_key_ranges() {
        assert_eq!(partition_of(0, 64), 0);
        assert_eq!(partition_of(u64::MAX, 64), 63);
        assert_eq!(partition_of(1 << 63, 2), 1);
        assert_eq!(partition_of((1 << 63) - 1, 2), 0);
        let mut sorted = keys(1, 1000);
        sorted.sort_unstable();
        let parts: Vec<u32> = sorted.iter().map(|&k| partition_of(k, 64)).collect();
        assert!(parts.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Writes `rows` of one partition (each with a bucket of one to three documents) and
    /// probes them: every probe finds exactly the rows a scan finds, in both halves of the
    /// key space (stored as negative and non-negative i64).
    #[test]
    fn probing_finds_exactly_the_rows_of_the_probed_keys() {
        let dir = tempfile::tempdir().unwrap();
        for partition in 0..2u32 {
            let gen_dir = dir.path().join(format!("g{partition}"));
            let mut rows: Vec<KeyRow> = keys(u64::from(partition) + 7, 40_000)
                .into_iter()
                .filter(|&k| partition_of(k, 2) == partition)
                .enumerate()
                .flat_map(|(i, key)| {
                    (0..=(i % 3) as u64).map(move |d| KeyRow {
                        key,
                        generation: 1 + (d % 2) as u32,
                        doc: i as u64 * 10 + d,
                    })
                })
                .collect();
            rows.sort_unstable();
            let mut w = KeyPartWriter::create(&gen_dir, partition).unwrap();
            for chunk in rows.chunks(5000) {
                w.write(chunk).unwrap();
            }
            assert_eq!(w.finish().unwrap(), rows.len() as u64);

            // Present keys: every fiftieth; absent: keys of the same partition never written.
            let mut probe: Vec<u64> = rows.iter().step_by(50).map(|r| r.key).collect();
            let absent: Vec<u64> = keys(99, 2000)
                .into_iter()
                .filter(|&k| partition_of(k, 2) == partition)
                .filter(|k| rows.binary_search_by_key(k, |r| r.key).is_err())
                .take(300)
                .collect();
            probe.extend(&absent);
            probe.sort_unstable();
            probe.dedup();
            let mut stats = ProbeStats::default();
            let found = probe_keys(&gen_dir, partition, &probe, &mut stats).unwrap();
            let expected: Vec<KeyRow> =
                rows.iter().filter(|r| probe.binary_search(&r.key).is_ok()).copied().collect();
            assert_eq!(found, expected);
            assert_eq!(stats.parts, 1);

            // One key: its page (or two, when its rows cross a page end), not its row group.
            let mut stats = ProbeStats::default();
            let one = rows[rows.len() / 2].key;
            let found = probe_keys(&gen_dir, partition, &[one], &mut stats).unwrap();
            assert!(!found.is_empty() && found.iter().all(|r| r.key == one));
            assert!(stats.rows_read <= 2 * KEY_PAGE_ROWS as u64 + 16, "{stats:?}");

            // Absent keys alone: bloom filters leave almost every row group unread.
            let mut stats = ProbeStats::default();
            let mut only_absent = absent.clone();
            only_absent.sort_unstable();
            assert!(probe_keys(&gen_dir, partition, &only_absent, &mut stats).unwrap().is_empty());
            let groups = rows.len().div_ceil(KEY_ROW_GROUP_ROWS) as u64;
            assert!(stats.bloom_filters >= groups.min(2), "{stats:?}");
            assert!(stats.row_groups_read <= 1, "absent keys read {stats:?}");
        }
        // A partition without a part has no rows.
        let mut stats = ProbeStats::default();
        assert!(probe_keys(dir.path(), 5, &[1, 2], &mut stats).unwrap().is_empty());
    }

    fn doc(generation: u32, d: u64) -> IndexedDoc {
        IndexedDoc {
            generation,
            doc: d,
            id: format!("doc-{generation}-{d}"),
            source: "a.jsonl".into(),
            kept: IndexRef { generation, doc: d - d % 7 },
            kept_id: format!("doc-{generation}-{}", d - d % 7),
            kept_content: u128::from(d - d % 7),
            content: u128::from(d) << 64 | u128::from(d * 3),
            signature: (d as u32..d as u32 + 32).flat_map(u32::to_le_bytes).collect(),
        }
    }

    /// Every row of docs part `part` of the segment in `segment_dir`.
    fn read_docs_part(segment_dir: &Path, part: u32) -> Result<Vec<IndexedDoc>> {
        let mut rows = Vec::new();
        for_each_docs_batch(segment_dir, part, |batch| {
            rows.extend(batch);
            Ok(())
        })?;
        Ok(rows)
    }

    fn at(generation: u32, doc: u64) -> IndexRef {
        IndexRef { generation, doc }
    }

    /// A part holding two generations with the same doc_ids: fetching finds exactly the
    /// wanted (generation, doc_id) pairs, reading one row group for one document.
    #[test]
    fn fetching_reads_the_wanted_documents_only() {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<u64> = (1..30_000u64).map(|i| i * 3).collect();
        let mut w = DocPartWriter::create(dir.path(), 0).unwrap();
        for g in [1, 2] {
            for chunk in all.chunks(4096) {
                w.write(&chunk.iter().map(|&d| doc(g, d)).collect::<Vec<_>>()).unwrap();
            }
        }
        w.finish().unwrap();

        // Some present in either generation, some between present ones, some beyond the
        // end, and a generation that is not there.
        let mut wanted: Vec<IndexRef> = all.iter().step_by(997).map(|&d| at(1, d)).collect();
        wanted.extend(all.iter().skip(5).step_by(1999).map(|&d| at(2, d)));
        wanted.extend([at(1, 4), at(2, 5), at(2, 1_000_000), at(3, 3)]);
        wanted.sort_unstable();
        let mut stats = ProbeStats::default();
        let found = fetch_docs(dir.path(), 0, &wanted, &mut stats).unwrap();
        let expected: Vec<IndexedDoc> = wanted
            .iter()
            .filter(|r| r.doc % 3 == 0 && r.doc < 90_000 && r.generation <= 2)
            .map(|r| doc(r.generation, r.doc))
            .collect();
        assert_eq!(found, expected);

        // One document: one row group's ids are read, not the part (a row group holds one
        // generation).
        for g in [1, 2] {
            let mut stats = ProbeStats::default();
            let one = fetch_docs(dir.path(), 0, &[at(g, all[12_345])], &mut stats).unwrap();
            assert_eq!(one, vec![doc(g, all[12_345])]);
            assert_eq!(stats.row_groups_read, 1);
            assert!(stats.rows_read <= DOC_ROW_GROUP_ROWS as u64, "{stats:?}");
        }
        assert!(fetch_docs(dir.path(), 3, &[at(1, 3)], &mut stats).unwrap().is_empty());
    }

    /// Writes a segment of the given generations' documents (split into `parts` docs parts)
    /// and of a key row per document and key in `keys_per_doc`; returns its generations.
    fn write_segment(
        index: &Path,
        folder: &str,
        docs: &[IndexedDoc],
        keys_per_doc: u64,
        parts: u32,
    ) -> Vec<Generation> {
        let segment_dir = index.join(folder);
        for part in 0..parts {
            let mut mine: Vec<IndexedDoc> =
                docs.iter().filter(|d| doc_part_of(d.doc, parts) == part).cloned().collect();
            mine.sort_unstable();
            let mut w = DocPartWriter::create(&segment_dir, part).unwrap();
            w.write(&mine).unwrap();
            w.finish().unwrap();
        }
        let mut rows: Vec<KeyRow> = docs
            .iter()
            .flat_map(|d| {
                (0..keys_per_doc).map(|k| KeyRow {
                    key: key_of(d.doc, k),
                    generation: d.generation,
                    doc: d.doc,
                })
            })
            .collect();
        rows.sort_unstable();
        for partition in 0..DEFAULT_PARTITIONS {
            let mine: Vec<KeyRow> = rows
                .iter()
                .filter(|r| partition_of(r.key, DEFAULT_PARTITIONS) == partition)
                .copied()
                .collect();
            if !mine.is_empty() {
                let mut w = KeyPartWriter::create(&segment_dir, partition).unwrap();
                w.write(&mine).unwrap();
                w.finish().unwrap();
            }
        }
        let mut numbers: Vec<u32> = docs.iter().map(|d| d.generation).collect();
        numbers.dedup();
        numbers
            .into_iter()
            .map(|number| {
                let documents = docs.iter().filter(|d| d.generation == number).count() as u64;
                Generation {
                    number,
                    folder: folder.to_string(),
                    run: format!("run-{number}"),
                    output: String::new(),
                    created_unix: 0,
                    documents,
                    keys: documents * keys_per_doc,
                    doc_parts: parts,
                    forgotten: Vec::new(),
                }
            })
            .collect()
    }

    /// Key `k` of document `d`: documents 7j..7j+6 share their first key (a bucket).
    fn key_of(d: u64, k: u64) -> u64 {
        if k == 0 { keys(d / 7, 1)[0] } else { keys(d * 31 + k, 1)[0] }
    }

    /// Every key row of an index, by probing every key of `docs`.
    fn probe_all(index: &Path, docs: &[IndexedDoc], keys_per_doc: u64) -> Vec<KeyRow> {
        let manifest = Manifest::load(index).unwrap().unwrap();
        let mut probes: Vec<u64> =
            docs.iter().flat_map(|d| (0..keys_per_doc).map(|k| key_of(d.doc, k))).collect();
        probes.sort_unstable();
        probes.dedup();
        let mut found = Vec::new();
        for segment in manifest.segments() {
            for partition in 0..manifest.partitions {
                let mine: Vec<u64> = probes
                    .iter()
                    .copied()
                    .filter(|&k| partition_of(k, manifest.partitions) == partition)
                    .collect();
                let mut stats = ProbeStats::default();
                found.extend(
                    probe_keys(&index.join(&segment.folder), partition, &mine, &mut stats).unwrap(),
                );
            }
        }
        found.sort_unstable();
        found
    }

    /// Every document of an index, by generation and doc_id.
    fn all_docs(index: &Path) -> Vec<IndexedDoc> {
        let manifest = Manifest::load(index).unwrap().unwrap();
        let mut docs = Vec::new();
        for segment in manifest.segments() {
            for part in 0..segment.doc_parts {
                docs.extend(read_docs_part(&index.join(&segment.folder), part).unwrap());
            }
        }
        docs.sort_unstable();
        docs
    }

    #[test]
    fn forgetting_a_kept_document_takes_its_cluster_out() {
        let dir = tempfile::tempdir().unwrap();
        let folder = generation_folder(1, "t");
        // Clusters of seven: doc 7k is kept, 7k+1..7k+6 point to it.
        let rows: Vec<IndexedDoc> = (7..70u64).map(|d| doc(1, d)).collect();
        let mut m = Manifest::new(BTreeMap::new());
        m.generations = write_segment(dir.path(), &folder, &rows, 2, 2);
        m.save(dir.path()).unwrap();

        // doc 14 is kept (its cluster: 14..=20); doc 30 is a removed member; one id is unknown.
        let ids = ["doc-1-14", "doc-1-30", "nowhere"].map(String::from).into_iter().collect();
        let report = forget(dir.path(), &ids).unwrap();
        assert_eq!(
            report,
            Forgotten { listed: 2, with_their_kept: 6, unknown_ids: 1, lock_taken_over: None }
        );
        let left: Vec<u64> = all_docs(dir.path()).iter().map(|d| d.doc).collect();
        let expected: Vec<u64> =
            (7..70u64).filter(|d| !(14..=20).contains(d) && *d != 30).collect();
        assert_eq!(left, expected);
        let m = Manifest::load(dir.path()).unwrap().unwrap();
        assert_eq!(m.generations[0].documents, expected.len() as u64);
        let gone: Vec<u64> = (14..=20).chain([30]).collect();
        assert_eq!(m.generations[0].forgotten, gone);
        // Fetching a forgotten document finds nothing.
        let mut stats = ProbeStats::default();
        for part in 0..2 {
            let wanted = [at(1, 14), at(1, 30)];
            let found = fetch_docs(&dir.path().join(&folder), part, &wanted, &mut stats).unwrap();
            assert!(found.is_empty());
        }
        assert!(!dir.path().join(".lock").exists());
    }

    /// Three segments (one already merged, written with other docs part counts), some
    /// documents forgotten, and a folder a failed run left: compaction gives one segment
    /// with every document and every key row but those of forgotten documents.
    #[test]
    fn compaction_merges_segments_and_drops_what_was_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path();
        let gen_docs = |g: u32, n: u64| (0..n).map(move |d| doc(g, d)).collect::<Vec<_>>();
        let merged: Vec<IndexedDoc> =
            gen_docs(1, 300).into_iter().chain(gen_docs(2, 200)).collect();
        let mut m = Manifest::new(BTreeMap::new());
        m.generations = write_segment(index, "gen-000001-000002-cx", &merged, 3, 2);
        m.generations.extend(write_segment(index, "gen-000003-a", &gen_docs(3, 250), 3, 3));
        m.generations.extend(write_segment(index, "gen-000004-b", &gen_docs(4, 120), 3, 2));
        m.save(index).unwrap();
        write_segment(index, "gen-000005-failed", &gen_docs(5, 10), 3, 1);
        let everything: Vec<IndexedDoc> = all_docs(index);
        assert_eq!(everything.len(), 870);
        let keys_before = probe_all(index, &everything, 3);
        assert_eq!(keys_before.len(), 870 * 3);

        // Generation 3's doc 70 is kept with 71..=76 in its cluster; generation 1's doc 5
        // is a removed member.
        let ids = ["doc-3-70", "doc-1-5"].map(String::from).into_iter().collect();
        assert_eq!(forget(index, &ids).unwrap().listed, 2);
        let live: Vec<IndexedDoc> = all_docs(index);
        assert_eq!(live.len(), 870 - 8);
        let keys_live = probe_all(index, &everything, 3);
        assert_eq!(keys_live, keys_before, "forgetting leaves the key rows");

        let report = compact(index).unwrap();
        assert_eq!(report.segments_before, 3);
        assert_eq!(report.generations, 4);
        assert_eq!(report.documents, 862);
        assert_eq!((report.keys_before, report.keys_after), (870 * 3, 862 * 3));
        assert_eq!(report.orphans_removed, vec!["gen-000005-failed".to_string()]);
        let folder = report.folder.clone().unwrap();
        assert!(folder.starts_with("gen-000001-000004-c"), "{folder}");
        let mut folders: Vec<String> = std::fs::read_dir(index)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        folders.sort();
        assert_eq!(folders, vec![folder.clone()], "old and orphan folders are gone");

        let m = Manifest::load(index).unwrap().unwrap();
        let segments = m.segments();
        assert_eq!(segments.len(), 1);
        assert_eq!((segments[0].generations.clone(), segments[0].doc_parts), (vec![1, 2, 3, 4], 3));
        assert!(m.generations.iter().all(|g| g.forgotten.is_empty()));
        let keys: Vec<u64> = m.generations.iter().map(|g| g.keys).collect();
        assert_eq!(keys, vec![299 * 3, 200 * 3, 243 * 3, 120 * 3]);
        assert_eq!(all_docs(index), live);
        let forgotten = |r: &KeyRow| {
            (r.generation == 3 && (70..=76).contains(&r.doc)) || (r.generation == 1 && r.doc == 5)
        };
        let expected: Vec<KeyRow> = keys_before.iter().filter(|r| !forgotten(r)).copied().collect();
        assert_eq!(probe_all(index, &everything, 3), expected);
        // Every live document is fetched from its part of the merged segment.
        let mut stats = ProbeStats::default();
        for part in 0..3 {
            let wanted: Vec<IndexRef> =
                live.iter().filter(|d| doc_part_of(d.doc, 3) == part).map(IndexedDoc::at).collect();
            let found = fetch_docs(&index.join(&folder), part, &wanted, &mut stats).unwrap();
            assert_eq!(found.len(), wanted.len());
        }

        // Nothing left to merge: the index stays as it is.
        let again = compact(index).unwrap();
        assert_eq!((again.segments_before, again.folder), (1, None));
        assert_eq!(Manifest::load(index).unwrap().unwrap(), m);
        assert!(!index.join(".lock").exists());
    }

    #[test]
    fn one_run_at_a_time_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        let read = Manifest::new(BTreeMap::new());
        let lock = IndexLock::acquire(&index, &read.generations).unwrap();
        let e = IndexLock::acquire(&index, &read.generations).unwrap_err().to_string();
        assert!(e.contains("held by another run") && e.contains(".lock"), "{e}");
        drop(lock);
        // A run that read the index before another added to it must not commit over it.
        let mut newer = read.clone();
        newer.generations.push(Generation {
            number: 1,
            folder: generation_folder(1, "x"),
            run: "other".into(),
            output: String::new(),
            created_unix: 0,
            documents: 0,
            keys: 0,
            doc_parts: 1,
            forgotten: Vec::new(),
        });
        newer.save(&index).unwrap();
        let e = IndexLock::acquire(&index, &read.generations).unwrap_err().to_string();
        assert!(e.contains("changed after this run read it"), "{e}");
        assert!(!index.join(".lock").exists(), "a refused run leaves no lock");
        IndexLock::acquire(&index, &newer.generations).unwrap();
    }

    #[test]
    fn manifests_round_trip_and_name_the_setting_that_differs() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::load(&dir.path().join("none")).unwrap(), None);
        let settings: BTreeMap<String, String> =
            [("method", "minhash"), ("minhash.bands", "16"), ("signature_version", "2")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let mut m = Manifest::new(settings.clone());
        assert_eq!(m.next_generation(), 1);
        m.generations.push(Generation {
            number: 1,
            folder: generation_folder(1, "abc"),
            run: "week-1".into(),
            output: "/runs/week-1".into(),
            created_unix: 1,
            documents: 10,
            keys: 170,
            doc_parts: 2,
            forgotten: Vec::new(),
        });
        m.save(dir.path()).unwrap();
        let loaded = Manifest::load(dir.path()).unwrap().unwrap();
        assert_eq!(loaded, m);
        assert_eq!(loaded.next_generation(), 2);
        loaded.check(dir.path(), &settings).unwrap();

        let mut other = settings.clone();
        other.insert("minhash.bands".into(), "21".into());
        let e = loaded.check(dir.path(), &other).unwrap_err().to_string();
        assert!(e.contains("minhash.bands = 16") && e.contains("minhash.bands = 21"), "{e}");
        other.remove("minhash.bands");
        let e = loaded.check(dir.path(), &other).unwrap_err().to_string();
        assert!(e.contains("(not set)"), "{e}");

        std::fs::write(dir.path().join(MANIFEST), "{\"format\": 99}").unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("index.json"), "{e}");
    }
}
