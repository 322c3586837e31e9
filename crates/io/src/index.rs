//! The index of earlier runs (`--index DIR`): what a later batch is deduplicated against
//! without re-signing or rewriting the old corpus.
//!
//! ```text
//! DIR/index.json                       the manifest: settings, partitions, generations
//! DIR/gen-000001-<token>/keys/part-NNNNN.parquet   (key, doc_id) of one key partition, by key
//! DIR/gen-000001-<token>/docs/part-NNNNN.parquet   one row per indexed document, by doc_id
//! ```
//!
//! Every run adds a **generation**: a folder of Parquet parts, named with a token unique to
//! the run. The manifest, rewritten atomically once all parts of a run are in place, is the
//! only commit point: a folder it does not list (a run that failed) is ignored, and
//! compaction removes it.
//!
//! `keys/` holds one row per bucket key of every indexed document (its bands or block
//! tables, and its content key for exact copies), partitioned by the key's top bits
//! ([`partition_of`]) and sorted by key in row groups of [`KEY_ROW_GROUP_ROWS`] rows, each
//! with a bloom filter on the key, in pages of 1,024 rows. A lookup ([`probe_keys`]) reads
//! the footer and page index, then for each row group whose key range holds a probed key
//! only its bloom filter, and of the keys the bloom filter lets through only the pages
//! whose range holds them: reading grows with the probes and their matches (a page per
//! match), and with the history only by the footers, page indexes and bloom filters (about
//! a byte and a half per key row).
//!
//! `docs/` holds, per document, what verification and the decision need: the id, the
//! content hash, the signature, and the cluster's kept document. Documents are split into
//! parts by [`doc_part_of`] and sorted by `doc_id` in small pages, so [`fetch_docs`] reads
//! the `doc_id` column of the row groups that can hold a wanted document, then only the
//! pages holding wanted rows.
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
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use crate::{Error, PartWriter, Result};

/// Version of the index layout; an index of another version is refused.
pub const FORMAT: u32 = 1;
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
    /// When the run finished, seconds since the Unix epoch.
    pub created_unix: u64,
    /// Documents indexed (representatives of their texts).
    pub documents: u64,
    /// Key rows written.
    pub keys: u64,
    /// Parts of `docs/`: a document's part is [`doc_part_of`] its `doc_id`.
    pub doc_parts: u32,
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

    /// Writes the manifest atomically: a hidden file, synced, renamed over the old one.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let path = dir.join(MANIFEST);
        let tmp = dir.join(format!(".{MANIFEST}.inprogress"));
        let json = serde_json::to_vec_pretty(self).expect("a manifest serialises");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = File::create(&tmp)?;
            f.write_all(&json)?;
            f.write_all(b"\n")?;
            f.sync_all()
        };
        write().map_err(|source| Error::Write { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, &path).map_err(|source| Error::Write { path, source })
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
}

/// The lock of an index that a run writes: a file made with `create_new`, removed when
/// the lock is dropped. One run at a time adds to an index.
#[derive(Debug)]
pub struct IndexLock(PathBuf);

impl IndexLock {
    /// Takes the lock of the index in `dir` (making `dir`), and checks that the index still
    /// has the generations of `read` (the manifest the run was configured with).
    ///
    /// # Errors
    /// [`Error::IndexBusy`] when another run holds it, [`Error::IndexChanged`] when a run
    /// added to the index since `read`, [`Error::Write`] when the file cannot be made.
    pub fn acquire(dir: &Path, read: &Manifest) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let path = dir.join(".lock");
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                use std::io::Write;
                let _ = writeln!(f, "pid {}", std::process::id());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::IndexBusy { path: dir.to_path_buf(), lock: path });
            }
            Err(source) => return Err(Error::Write { path, source }),
        }
        let lock = IndexLock(path);
        let now = Manifest::load(dir)?.map(|m| m.generations).unwrap_or_default();
        if now != read.generations {
            return Err(Error::IndexChanged { path: dir.to_path_buf() });
        }
        Ok(lock)
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
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

/// One row of a key part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KeyRow {
    /// The bucket or content key.
    pub key: u64,
    /// The document's `doc_id` in its run.
    pub doc: u64,
}

/// One row of a docs part.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexedDoc {
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

fn keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, false),
        Field::new("doc_id", DataType::Int64, false),
    ]))
}

fn docs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
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

/// Writes the key part of one partition of one generation, rows in key order.
pub struct KeyPartWriter(PartWriter);

impl KeyPartWriter {
    /// Starts `generation_dir/keys/part-{partition:05}.parquet`.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn create(generation_dir: &Path, partition: u32) -> Result<Self> {
        let key = ColumnPath::from("key");
        let props = base_properties()
            .set_max_row_group_row_count(Some(KEY_ROW_GROUP_ROWS))
            .set_data_page_row_count_limit(KEY_PAGE_ROWS)
            .set_write_batch_size(KEY_PAGE_ROWS)
            .set_column_bloom_filter_enabled(key.clone(), true)
            .set_column_bloom_filter_fpp(key.clone(), KEY_BLOOM_FPP)
            .set_column_bloom_filter_max_ndv(key, KEY_ROW_GROUP_ROWS as u64)
            .build();
        PartWriter::create_with(
            &generation_dir.join("keys"),
            partition as usize,
            keys_schema(),
            props,
        )
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
        let mut doc = Int64Builder::with_capacity(rows.len());
        for r in rows {
            key.append_value(as_i64(r.key));
            doc.append_value(as_i64(r.doc));
        }
        self.0.write_columns(vec![Arc::new(key.finish()), Arc::new(doc.finish())])
    }

    /// Finishes the part; returns the rows written.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] or [`Error::Write`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

/// Writes one docs part of a generation, rows in `doc_id` order.
pub struct DocPartWriter(PartWriter);

impl DocPartWriter {
    /// Starts `generation_dir/docs/part-{part:05}.parquet`.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn create(generation_dir: &Path, part: u32) -> Result<Self> {
        let props = base_properties()
            .set_max_row_group_row_count(Some(DOC_ROW_GROUP_ROWS))
            .set_data_page_row_count_limit(DOC_PAGE_ROWS)
            .set_write_batch_size(DOC_PAGE_ROWS)
            .build();
        PartWriter::create_with(&generation_dir.join("docs"), part as usize, docs_schema(), props)
            .map(DocPartWriter)
    }

    /// Appends rows, which must continue the `doc_id` order.
    ///
    /// # Errors
    /// [`Error::Batch`] or [`Error::ParquetWrite`].
    pub fn write(&mut self, rows: &[IndexedDoc]) -> Result<()> {
        let n = rows.len();
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
            doc.append_value(as_i64(r.doc));
            id.append_value(&r.id);
            source.append_value(&r.source);
            kept_generation.append_value(r.kept.generation as i32);
            kept_doc.append_value(as_i64(r.kept.doc));
            kept_id.append_value(&r.kept_id);
            kept_content.append_value(r.kept_content.to_le_bytes());
            content.append_value(r.content.to_le_bytes());
            signature.append_value(&r.signature);
        }
        let columns: Vec<ArrayRef> = vec![
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
        self.0.write_columns(columns)
    }

    /// Finishes the part; returns the rows written.
    ///
    /// # Errors
    /// [`Error::ParquetWrite`] or [`Error::Write`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
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

/// The `(min, max)` of Int64 column `column` in row group `rg`.
fn int64_range(
    builder: &ParquetRecordBatchReaderBuilder<File>,
    rg: usize,
    column: usize,
    path: &Path,
) -> Result<(i64, i64)> {
    match builder.metadata().row_group(rg).column(column).statistics() {
        Some(Statistics::Int64(s)) => match (s.min_opt(), s.max_opt()) {
            (Some(min), Some(max)) => Ok((*min, *max)),
            _ => Err(damaged(path, "a row group has no key range")),
        },
        _ => Err(damaged(path, "a row group has no key statistics")),
    }
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

/// Rows of the key part `partition` of the generation in `generation_dir` whose key is in
/// `keys` (sorted, distinct), in key order. A missing part (no keys fell in that partition)
/// has no rows.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn probe_keys(
    generation_dir: &Path,
    partition: u32,
    keys: &[u64],
    stats: &mut ProbeStats,
) -> Result<Vec<KeyRow>> {
    debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "probe keys sorted and distinct");
    let path = generation_dir.join("keys").join(format!("part-{partition:05}.parquet"));
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
        let (min, max) = int64_range(&builder, rg, 0, &path)?;
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
        let key = batch.column(0).as_primitive::<Int64Type>().values();
        let doc = batch.column(1).as_primitive::<Int64Type>().values();
        for (&k, &d) in key.iter().zip(doc.iter()) {
            while next < wanted.len() && wanted[next] < k {
                next += 1;
            }
            if next < wanted.len() && wanted[next] == k {
                found.push(KeyRow { key: k as u64, doc: d as u64 });
            }
        }
        // Row groups are read in order and keys ascend across them: `next` carries over.
    }
    found.sort_unstable();
    Ok(found)
}

/// The documents `docs` (sorted, distinct `doc_id`s) of docs part `part` of the generation
/// in `generation_dir`, in `doc_id` order; `doc_id`s not in the part are left out.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn fetch_docs(
    generation_dir: &Path,
    part: u32,
    docs: &[u64],
    stats: &mut ProbeStats,
) -> Result<Vec<IndexedDoc>> {
    debug_assert!(docs.windows(2).all(|w| w[0] < w[1]), "wanted documents sorted and distinct");
    let path = generation_dir.join("docs").join(format!("part-{part:05}.parquet"));
    let mut found = Vec::new();
    if docs.is_empty() {
        return Ok(found);
    }
    let Some(builder) = open_part(&path, true)? else { return Ok(found) };
    stats.parts += 1;
    let wanted: Vec<i64> = docs.iter().map(|&d| as_i64(d)).collect(); // doc_ids are < 2^63
    // Row groups that can hold a wanted document, and the rows of each.
    let metadata = builder.metadata().clone();
    let mut row_groups = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let (min, max) = int64_range(&builder, rg, 0, &path)?;
        if wanted.partition_point(|&d| d < min) < wanted.partition_point(|&d| d <= max) {
            row_groups.push(rg);
        }
    }
    if row_groups.is_empty() {
        return Ok(found);
    }
    // First pass: the doc_id column of those row groups gives the positions of wanted rows.
    let mut selectors = Vec::new();
    let mut run_skip = 0usize;
    let mut run_select = 0usize;
    {
        let mask = ProjectionMask::roots(builder.parquet_schema(), [0]);
        let file =
            File::open(&path).map_err(|source| Error::Open { path: path.clone(), source })?;
        let ids = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|source| Error::Parquet { path: path.clone(), source })?
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
            for &d in batch.column(0).as_primitive::<Int64Type>().values() {
                while next < wanted.len() && wanted[next] < d {
                    next += 1;
                }
                let hit = next < wanted.len() && wanted[next] == d;
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

fn doc_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<IndexedDoc>> {
    if batch.num_columns() != 9 {
        return Err(damaged(path, "a docs part without the 9 index columns"));
    }
    let doc = batch.column(0).as_primitive::<Int64Type>();
    let id = batch.column(1).as_string::<i32>();
    let source = batch.column(2).as_string::<i32>();
    let kept_generation = batch.column(3).as_primitive::<Int32Type>();
    let kept_doc = batch.column(4).as_primitive::<Int64Type>();
    let kept_id = batch.column(5).as_string::<i32>();
    let kept_content = batch.column(6).as_binary::<i32>();
    let content = batch.column(7).as_binary::<i32>();
    let signature = batch.column(8).as_binary::<i32>();
    let hash = |bytes: &[u8]| -> Result<u128> {
        let bytes: [u8; 16] =
            bytes.try_into().map_err(|_| damaged(path, "a content hash is not 16 bytes"))?;
        Ok(u128::from_le_bytes(bytes))
    };
    (0..batch.num_rows())
        .map(|i| {
            Ok(IndexedDoc {
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

/// Every row of docs part `part` of the generation in `generation_dir` (none when the part
/// does not exist).
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn read_docs_part(generation_dir: &Path, part: u32) -> Result<Vec<IndexedDoc>> {
    let path = generation_dir.join("docs").join(format!("part-{part:05}.parquet"));
    let Some(builder) = open_part(&path, false)? else { return Ok(Vec::new()) };
    let reader = builder
        .with_batch_size(DOC_ROW_GROUP_ROWS)
        .build()
        .map_err(|source| Error::Parquet { path: path.clone(), source })?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        rows.extend(doc_rows(&batch, &path)?);
    }
    Ok(rows)
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
}

/// Takes the documents with the given ids out of the index in `dir`, so they no longer
/// match new copies; when a listed document was the kept one of its cluster, the cluster's
/// other (removed) members go too, as nothing kept stands for them any more. Docs parts are
/// rewritten atomically, one at a time, and the manifest's document counts updated; key
/// rows of forgotten documents stay until compaction and match nothing.
///
/// # Errors
/// [`Error::Damaged`] when `dir` holds no index, or the errors of reading and writing parts.
pub fn forget(dir: &Path, ids: &std::collections::BTreeSet<String>) -> Result<Forgotten> {
    let Some(mut manifest) = Manifest::load(dir)? else {
        return Err(damaged(&dir.join(MANIFEST), "no index here"));
    };
    // First pass: the documents listed, wherever they are.
    let mut listed = std::collections::BTreeSet::new();
    let mut seen_ids = std::collections::BTreeSet::new();
    for g in &manifest.generations {
        let gen_dir = dir.join(&g.folder);
        for part in 0..g.doc_parts {
            for row in read_docs_part(&gen_dir, part)? {
                if ids.contains(&row.id) {
                    seen_ids.insert(row.id.clone());
                    listed.insert(IndexRef { generation: g.number, doc: row.doc });
                }
            }
        }
    }
    let mut report =
        Forgotten { unknown_ids: (ids.len() - seen_ids.len()) as u64, ..Forgotten::default() };
    if listed.is_empty() {
        return Ok(report);
    }
    // Second pass: rewrite the parts that hold a listed document or a member of a listed
    // kept document's cluster.
    for g in &mut manifest.generations {
        let gen_dir = dir.join(&g.folder);
        for part in 0..g.doc_parts {
            let rows = read_docs_part(&gen_dir, part)?;
            let before = rows.len();
            let mut kept_rows = Vec::with_capacity(before);
            for row in rows {
                let me = IndexRef { generation: g.number, doc: row.doc };
                if listed.contains(&me) {
                    report.listed += 1;
                } else if listed.contains(&row.kept) {
                    report.with_their_kept += 1;
                } else {
                    kept_rows.push(row);
                }
            }
            if kept_rows.len() == before {
                continue;
            }
            g.documents -= (before - kept_rows.len()) as u64;
            let mut w = DocPartWriter::create(&gen_dir, part)?;
            for chunk in kept_rows.chunks(DOC_ROW_GROUP_ROWS) {
                w.write(chunk)?;
            }
            w.finish()?;
        }
    }
    manifest.save(dir)?;
    Ok(report)
}

/// Where the folders of `manifest`'s generations are under `dir`.
pub fn generation_dirs(dir: &Path, manifest: &Manifest) -> Vec<(u32, PathBuf)> {
    manifest.generations.iter().map(|g| (g.number, dir.join(&g.folder))).collect()
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
                    (0..=(i % 3) as u64).map(move |d| KeyRow { key, doc: i as u64 * 10 + d })
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

    fn doc(d: u64) -> IndexedDoc {
        IndexedDoc {
            doc: d,
            id: format!("doc-{d}"),
            source: "a.jsonl".into(),
            kept: IndexRef { generation: 1, doc: d - d % 7 },
            kept_id: format!("doc-{}", d - d % 7),
            kept_content: u128::from(d - d % 7),
            content: u128::from(d) << 64 | u128::from(d * 3),
            signature: (d as u32..d as u32 + 32).flat_map(u32::to_le_bytes).collect(),
        }
    }

    #[test]
    fn fetching_reads_the_wanted_documents_only() {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<u64> = (1..30_000u64).map(|i| i * 3).collect();
        let mut w = DocPartWriter::create(dir.path(), 0).unwrap();
        for chunk in all.chunks(4096) {
            w.write(&chunk.iter().map(|&d| doc(d)).collect::<Vec<_>>()).unwrap();
        }
        w.finish().unwrap();

        // Some present, some between present ones, some beyond the end.
        let mut wanted: Vec<u64> = all.iter().step_by(997).copied().collect();
        wanted.extend([4, 5, 1_000_000]);
        wanted.sort_unstable();
        let mut stats = ProbeStats::default();
        let found = fetch_docs(dir.path(), 0, &wanted, &mut stats).unwrap();
        let expected: Vec<IndexedDoc> =
            wanted.iter().filter(|d| *d % 3 == 0 && **d < 90_000).map(|&d| doc(d)).collect();
        assert_eq!(found, expected);

        // One document: one row group's doc_id column is read, not the part.
        let mut stats = ProbeStats::default();
        let one = fetch_docs(dir.path(), 0, &[all[12_345]], &mut stats).unwrap();
        assert_eq!(one, vec![doc(all[12_345])]);
        assert_eq!(stats.row_groups_read, 1);
        assert!(stats.rows_read <= DOC_ROW_GROUP_ROWS as u64, "{stats:?}");
        assert!(fetch_docs(dir.path(), 3, &[3], &mut stats).unwrap().is_empty());
    }

    #[test]
    fn forgetting_a_kept_document_takes_its_cluster_out() {
        let dir = tempfile::tempdir().unwrap();
        let folder = generation_folder(1, "t");
        let gen_dir = dir.path().join(&folder);
        // Clusters of seven: doc 7k is kept, 7k+1..7k+6 point to it.
        let rows: Vec<IndexedDoc> = (7..70u64).map(doc).collect();
        let mut w = DocPartWriter::create(&gen_dir, 0).unwrap();
        w.write(&rows).unwrap();
        w.finish().unwrap();
        let mut m = Manifest::new(BTreeMap::new());
        m.generations.push(Generation {
            number: 1,
            folder,
            run: "r".into(),
            created_unix: 0,
            documents: rows.len() as u64,
            keys: 0,
            doc_parts: 1,
        });
        m.save(dir.path()).unwrap();

        // doc-14 is kept (its cluster: 14..=20); doc-30 is a removed member; one id is unknown.
        let ids = ["doc-14", "doc-30", "nowhere"].map(String::from).into_iter().collect();
        let report = forget(dir.path(), &ids).unwrap();
        assert_eq!(report, Forgotten { listed: 2, with_their_kept: 6, unknown_ids: 1 });
        let left: Vec<u64> = read_docs_part(&gen_dir, 0).unwrap().iter().map(|d| d.doc).collect();
        let expected: Vec<u64> =
            (7..70u64).filter(|d| !(14..=20).contains(d) && *d != 30).collect();
        assert_eq!(left, expected);
        let m = Manifest::load(dir.path()).unwrap().unwrap();
        assert_eq!(m.generations[0].documents, expected.len() as u64);
        // Fetching a forgotten document finds nothing.
        let mut stats = ProbeStats::default();
        assert!(fetch_docs(&gen_dir, 0, &[14, 30], &mut stats).unwrap().is_empty());
    }

    #[test]
    fn one_run_at_a_time_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        let read = Manifest::new(BTreeMap::new());
        let lock = IndexLock::acquire(&index, &read).unwrap();
        let e = IndexLock::acquire(&index, &read).unwrap_err().to_string();
        assert!(e.contains("being written by another run") && e.contains(".lock"), "{e}");
        drop(lock);
        // A run that read the index before another added to it must not commit over it.
        let mut newer = read.clone();
        newer.generations.push(Generation {
            number: 1,
            folder: generation_folder(1, "x"),
            run: "other".into(),
            created_unix: 0,
            documents: 0,
            keys: 0,
            doc_parts: 1,
        });
        newer.save(&index).unwrap();
        let e = IndexLock::acquire(&index, &read).unwrap_err().to_string();
        assert!(e.contains("changed after this run read it"), "{e}");
        assert!(!index.join(".lock").exists(), "a refused run leaves no lock");
        IndexLock::acquire(&index, &newer).unwrap();
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
            created_unix: 1,
            documents: 10,
            keys: 170,
            doc_parts: 2,
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
