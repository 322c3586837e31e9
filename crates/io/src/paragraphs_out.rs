//! The `paragraphs/` output of paragraph-level dedup: one row per paragraph left out of a
//! kept document because a document kept before it holds the same paragraph.

use std::path::Path;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{Int32Builder, Int64Builder, StringBuilder};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use neardup_core::DocId;

use crate::error::Result;
use crate::parquet_out::{PartWriter, doc_i64};

/// One paragraph left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParagraphRow {
    /// The document it was left out of.
    pub doc: DocId,
    /// That document's id.
    pub id: String,
    /// Its place among the document's blocks, from 0.
    pub paragraph: u32,
    /// Byte offset of its first character in the text the document was compared by (the
    /// record's text; a web page's main text, one block of its HTML a line).
    pub offset: u64,
    /// Its length in bytes there.
    pub len: u64,
    /// Its characters, as compared.
    pub chars: u32,
    /// Hash of its compared form (the same in every document that holds it).
    pub key: u64,
    /// The document that holds its first occurrence, which keeps it (its `doc_id` in its
    /// own run).
    pub first_doc: DocId,
    /// That document's id.
    pub first_id: String,
    /// With `--index`: the earlier run that holds it (`None`: this run).
    pub first_run: Option<String>,
}

/// The schema of `paragraphs/`. The key is a signed 64-bit column (its bits as they are),
/// since Spark has no unsigned integers.
pub fn paragraphs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("doc_id", DataType::Int64, false),
        Field::new("id", DataType::Utf8, false),
        Field::new("paragraph", DataType::Int32, false),
        Field::new("offset", DataType::Int64, false),
        Field::new("length", DataType::Int64, false),
        Field::new("chars", DataType::Int32, false),
        Field::new("key", DataType::Int64, false),
        Field::new("first_doc_id", DataType::Int64, false),
        Field::new("first_id", DataType::Utf8, false),
        Field::new("first_run", DataType::Utf8, true),
    ]))
}

/// Writes `paragraphs/` rows.
pub struct ParagraphsWriter(PartWriter);

impl ParagraphsWriter {
    /// Starts part `part` in `dir`.
    ///
    /// # Errors
    /// As [`PartWriter::create`].
    pub fn create(dir: &Path, part: usize, metadata: &[(String, String)]) -> Result<Self> {
        PartWriter::create(dir, part, paragraphs_schema(), metadata).map(ParagraphsWriter)
    }

    /// Appends rows.
    ///
    /// # Errors
    /// [`crate::Error::ParquetWrite`] when writing fails.
    pub fn write(&mut self, rows: &[ParagraphRow]) -> Result<()> {
        let n = rows.len();
        let mut doc = Int64Builder::with_capacity(n);
        let mut id = StringBuilder::new();
        let mut paragraph = Int32Builder::with_capacity(n);
        let mut offset = Int64Builder::with_capacity(n);
        let mut len = Int64Builder::with_capacity(n);
        let mut chars = Int32Builder::with_capacity(n);
        let mut key = Int64Builder::with_capacity(n);
        let mut first_doc = Int64Builder::with_capacity(n);
        let mut first_id = StringBuilder::new();
        let mut first_run = StringBuilder::new();
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        for r in rows {
            doc.append_value(doc_i64(r.doc));
            id.append_value(&r.id);
            paragraph.append_value(i32::try_from(r.paragraph).unwrap_or(i32::MAX));
            offset.append_value(int(r.offset));
            len.append_value(int(r.len));
            chars.append_value(i32::try_from(r.chars).unwrap_or(i32::MAX));
            key.append_value(i64::from_ne_bytes(r.key.to_ne_bytes()));
            first_doc.append_value(doc_i64(r.first_doc));
            first_id.append_value(&r.first_id);
            first_run.append_option(r.first_run.as_deref());
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(doc.finish()),
            Arc::new(id.finish()),
            Arc::new(paragraph.finish()),
            Arc::new(offset.finish()),
            Arc::new(len.finish()),
            Arc::new(chars.finish()),
            Arc::new(key.finish()),
            Arc::new(first_doc.finish()),
            Arc::new(first_id.finish()),
            Arc::new(first_run.finish()),
        ];
        self.0.write_columns(columns)
    }

    /// Completes the part; see [`PartWriter::finish`].
    ///
    /// # Errors
    /// As [`PartWriter::finish`].
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

/// Reads every row of the `paragraphs/` parts in `dir` (none when the folder is not there:
/// a run without paragraph-level dedup).
///
/// # Errors
/// When a part cannot be read.
pub fn read_paragraphs(dir: &Path) -> Result<Vec<ParagraphRow>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    let mut rows = Vec::new();
    if !crate::remote::is_remote(dir) && !dir.exists() {
        return Ok(rows);
    }
    crate::parquet_out::for_each_batch(dir, |b| {
        let col = |name: &str| b.column_by_name(name).expect("paragraphs schema").clone();
        let (doc, id, paragraph, offset) =
            (col("doc_id"), col("id"), col("paragraph"), col("offset"));
        let (len, chars, key) = (col("length"), col("chars"), col("key"));
        let (first_doc, first_id) = (col("first_doc_id"), col("first_id"));
        // Folders written before runs were named (no `first_run`) read as of this run.
        let first_run = b.column_by_name("first_run").cloned();
        let int = |a: &ArrayRef, i: usize| a.as_primitive::<Int64Type>().value(i);
        let small = |a: &ArrayRef, i: usize| a.as_primitive::<Int32Type>().value(i) as u32;
        for i in 0..b.num_rows() {
            rows.push(ParagraphRow {
                doc: DocId::from_raw(int(&doc, i) as u64),
                id: id.as_string::<i32>().value(i).to_string(),
                paragraph: small(&paragraph, i),
                offset: int(&offset, i) as u64,
                len: int(&len, i) as u64,
                chars: small(&chars, i),
                key: u64::from_ne_bytes(int(&key, i).to_ne_bytes()),
                first_doc: DocId::from_raw(int(&first_doc, i) as u64),
                first_id: first_id.as_string::<i32>().value(i).to_string(),
                first_run: first_run
                    .as_ref()
                    .filter(|c| c.is_valid(i))
                    .map(|c| c.as_string::<i32>().value(i).to_string()),
            });
        }
    })?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraph_rows_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let row = |record: u64, paragraph: u32| ParagraphRow {
            doc: DocId::new(0, record),
            id: format!("d{record}"),
            paragraph,
            offset: 10 * u64::from(paragraph),
            len: 120,
            chars: 110,
            key: u64::MAX - record,
            first_doc: DocId::new(0, 0),
            first_id: "d0".into(),
            first_run: (record == 3).then(|| "week-1".to_string()),
        };
        let rows = vec![row(1, 2), row(3, 0), row(3, 4)];
        let mut w = ParagraphsWriter::create(dir.path(), 0, &[]).unwrap();
        w.write(&rows).unwrap();
        assert_eq!(w.finish().unwrap(), 3);
        assert_eq!(read_paragraphs(dir.path()).unwrap(), rows);
        assert!(read_paragraphs(&dir.path().join("absent")).unwrap().is_empty());
    }
}
