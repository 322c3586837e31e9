//! Template statistics in the index: the pages that template learning reads again.
//!
//! Template learning counts, per host, the distinct pages and URLs each line is on (see
//! `neardup_text::Learner`). A batch of a weekly crawl may hold too few pages of a host
//! to learn its template, so each generation keeps a sample of its pages' lines: per host,
//! the [`TEMPLATE_PAGES_PER_HOST`] pages of least rank (a hash of the canonical URL, so the
//! sample is the same whatever the workers and an URL crawled again keeps its place). A
//! run learns from the index's sample of each host of its batch, the
//! [`TEMPLATE_PAGES_PER_HOST`] of least rank over every generation, plus every page of its
//! batch. As the sample is taken by rank over all generations, merging generations
//! ([`compact`](fn@super::compact), which keeps only that many per host) changes nothing a
//! run learns, and the sample's size is bounded by the hosts, not by the pages indexed.
//!
//! A row is a page: its host and rank, the generation and `doc_id` it had in its run (so a
//! forgotten document's row is passed over, and dropped by compaction), its URL, and the
//! key and canonical length of each of its lines (12 bytes a line, little-endian). Parts
//! (`<segment>/templates/part-NNNNN.parquet`, one per worker of the run that wrote them)
//! hold their rows in (host, rank) order.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;
use crate::parquet_out::PartWriter;

use super::parts::{IndexRef, PartRows, as_i32, as_i64, base_properties, damaged};

/// Pages per host a generation keeps, and a run learns from, at most: enough that the
/// share rule of template learning (a line on a tenth of a host's pages, and on at least
/// three) is decided by more than thirty pages.
pub const TEMPLATE_PAGES_PER_HOST: usize = 64;

/// Rows per row group of a templates part.
const TEMPLATE_ROW_GROUP_ROWS: usize = 4_096;

/// A page kept for template learning.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TemplatePage {
    /// Its host's key.
    pub host: u64,
    /// Its rank among the host's pages: the key of its canonical URL.
    pub rank: u64,
    /// Its generation.
    pub generation: u32,
    /// Its `doc_id` in that generation's run.
    pub doc: u64,
    /// Its URL.
    pub url: String,
    /// Its lines: key and canonical length.
    pub lines: Vec<(u64, u32)>,
}

impl TemplatePage {
    /// The document of the row.
    pub fn at(&self) -> IndexRef {
        IndexRef { generation: self.generation, doc: self.doc }
    }
}

fn templates_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Int64, false),
        Field::new("rank", DataType::Int64, false),
        Field::new("generation", DataType::Int32, false),
        Field::new("doc_id", DataType::Int64, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("lines", DataType::Binary, false),
    ]))
}

/// The templates part `part` of the segment in `segment_dir`.
pub fn template_part_path(segment_dir: &Path, part: u32) -> PathBuf {
    segment_dir.join("templates").join(format!("part-{part:05}.parquet"))
}

/// Writes one templates part, rows in (host, rank) order.
pub struct TemplatePartWriter(PartWriter);

impl TemplatePartWriter {
    /// Starts `segment_dir/templates/part-{part:05}.parquet`.
    ///
    /// # Errors
    /// [`crate::Error::Write`].
    pub fn create(segment_dir: &Path, part: u32) -> Result<Self> {
        let props = base_properties().set_max_row_group_row_count(Some(TEMPLATE_ROW_GROUP_ROWS));
        let dir = segment_dir.join("templates");
        PartWriter::create_with(&dir, part as usize, templates_schema(), props.build())
            .map(TemplatePartWriter)
    }

    /// Appends rows, which must continue the (host, rank) order.
    ///
    /// # Errors
    /// [`crate::Error::Batch`] or [`crate::Error::ParquetWrite`].
    pub fn write(&mut self, rows: &[TemplatePage]) -> Result<()> {
        let mut host = Int64Builder::with_capacity(rows.len());
        let mut rank = Int64Builder::with_capacity(rows.len());
        let mut generation = Int32Builder::with_capacity(rows.len());
        let mut doc = Int64Builder::with_capacity(rows.len());
        let mut url = StringBuilder::new();
        let mut lines = BinaryBuilder::new();
        let mut bytes = Vec::new();
        for r in rows {
            host.append_value(as_i64(r.host));
            rank.append_value(as_i64(r.rank));
            generation.append_value(as_i32(r.generation));
            doc.append_value(as_i64(r.doc));
            url.append_value(&r.url);
            bytes.clear();
            for (key, chars) in &r.lines {
                bytes.extend_from_slice(&key.to_le_bytes());
                bytes.extend_from_slice(&chars.to_le_bytes());
            }
            lines.append_value(&bytes);
        }
        self.0.write_columns(vec![
            Arc::new(host.finish()),
            Arc::new(rank.finish()),
            Arc::new(generation.finish()),
            Arc::new(doc.finish()),
            Arc::new(url.finish()),
            Arc::new(lines.finish()),
        ])
    }

    /// Finishes the part; returns the rows written.
    ///
    /// # Errors
    /// [`crate::Error::ParquetWrite`] or [`crate::Error::Write`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

fn template_rows(batch: &RecordBatch, path: &Path) -> Result<Vec<TemplatePage>> {
    if batch.num_columns() != 6 {
        return Err(damaged(path, "a templates part without the 6 index columns"));
    }
    let host = batch.column(0).as_primitive::<Int64Type>();
    let rank = batch.column(1).as_primitive::<Int64Type>();
    let generation = batch.column(2).as_primitive::<Int32Type>();
    let doc = batch.column(3).as_primitive::<Int64Type>();
    let url = batch.column(4).as_string::<i32>();
    let lines = batch.column(5).as_binary::<i32>();
    (0..batch.num_rows())
        .map(|i| {
            let bytes = lines.value(i);
            if !bytes.len().is_multiple_of(12) {
                return Err(damaged(path, "a page's lines are not 12 bytes each"));
            }
            let lines = bytes
                .chunks_exact(12)
                .map(|c| {
                    let key = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
                    (key, u32::from_le_bytes(c[8..].try_into().expect("4 bytes")))
                })
                .collect();
            Ok(TemplatePage {
                host: host.value(i) as u64,
                rank: rank.value(i) as u64,
                generation: generation.value(i) as u32,
                doc: doc.value(i) as u64,
                url: url.value(i).to_string(),
                lines,
            })
        })
        .collect()
}

/// The rows of templates part `part` of the segment in `segment_dir`, in order, a row at a
/// time (none when the part does not exist).
pub struct TemplateRows(PartRows<TemplatePage>);

impl TemplateRows {
    /// Opens the part.
    ///
    /// # Errors
    /// [`crate::Error::Open`] or [`crate::Error::Parquet`].
    pub fn open(segment_dir: &Path, part: u32) -> Result<Self> {
        let path = template_part_path(segment_dir, part);
        PartRows::open(&path, TEMPLATE_ROW_GROUP_ROWS, template_rows).map(TemplateRows)
    }

    /// The next row, or `None` at the end.
    ///
    /// # Errors
    /// [`crate::Error::Parquet`], [`crate::Error::Arrow`] or [`crate::Error::Damaged`].
    pub fn next_row(&mut self) -> Result<Option<TemplatePage>> {
        self.0.next()
    }
}

/// Keeps, of rows in (host, rank) order, the first [`TEMPLATE_PAGES_PER_HOST`] distinct
/// ranks of each host: a page crawled again under the same URL is sampled once, as its
/// earliest row.
#[derive(Debug, Default)]
pub struct HostSample {
    host: Option<u64>,
    last_rank: Option<u64>,
    kept: usize,
}

impl HostSample {
    /// Whether the next row in order, of `host` at `rank`, is in the sample.
    pub fn keeps(&mut self, host: u64, rank: u64) -> bool {
        if self.host != Some(host) {
            (self.host, self.last_rank, self.kept) = (Some(host), None, 0);
        }
        if self.last_rank == Some(rank) || self.kept >= TEMPLATE_PAGES_PER_HOST {
            return false;
        }
        self.last_rank = Some(rank);
        self.kept += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(host: u64, rank: u64, generation: u32) -> TemplatePage {
        let lines = vec![(rank ^ 0xabc, 40), (u64::MAX, 7)];
        TemplatePage {
            host,
            rank,
            generation,
            doc: rank * 2,
            url: format!("https://h{host}/{rank}"),
            lines,
        }
    }

    #[test]
    fn rows_round_trip_and_a_sample_keeps_the_least_distinct_ranks_per_host() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows: Vec<TemplatePage> = (0..100).map(|r| page(1, r, 1)).collect();
        rows.insert(3, page(1, 2, 2)); // rank 2 again, a later generation
        rows.extend((0..3).map(|r| page(9, r, 1)));
        let mut writer = TemplatePartWriter::create(dir.path(), 0).unwrap();
        writer.write(&rows[..50]).unwrap();
        writer.write(&rows[50..]).unwrap();
        assert_eq!(writer.finish().unwrap(), 104);
        let mut read = TemplateRows::open(dir.path(), 0).unwrap();
        let mut back = Vec::new();
        while let Some(row) = read.next_row().unwrap() {
            back.push(row);
        }
        assert_eq!(back, rows);
        let mut sample = HostSample::default();
        let kept: Vec<_> = back.iter().filter(|r| sample.keeps(r.host, r.rank)).collect();
        assert_eq!(kept.len(), TEMPLATE_PAGES_PER_HOST + 3);
        assert!(kept.iter().all(|r| r.generation == 1));
        assert_eq!(kept[TEMPLATE_PAGES_PER_HOST - 1].rank, TEMPLATE_PAGES_PER_HOST as u64 - 1);
        // A part that does not exist has no rows.
        assert_eq!(TemplateRows::open(dir.path(), 7).unwrap().next_row().unwrap(), None);
    }
}
