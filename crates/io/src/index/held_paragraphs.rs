//! The `paragraphs/` table of a segment: the first occurrence of every paragraph the runs
//! of its generations kept (paragraph-level dedup, `--paragraphs`), so a later batch leaves
//! out the paragraphs an earlier run holds.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;

use super::parts::{IndexRef, KeyTable, as_i32, as_i64, damaged};

/// A paragraph whose first occurrence a run kept: one row of `paragraphs/`, ordered as the
/// part is (by key, then the earliest document).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeldParagraph {
    /// Hash of the paragraph's compared form.
    pub key: u64,
    /// The generation of the document that holds it.
    pub generation: u32,
    /// That document's `doc_id` in its run.
    pub doc: u64,
    /// Its place among the document's blocks, from 0.
    pub paragraph: u32,
    /// The document's id.
    pub id: String,
}

fn held_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, false),
        Field::new("generation", DataType::Int32, false),
        Field::new("doc_id", DataType::Int64, false),
        Field::new("paragraph", DataType::Int32, false),
        Field::new("id", DataType::Utf8, false),
    ]))
}

impl KeyTable for HeldParagraph {
    const FOLDER: &'static str = "paragraphs";

    fn key(&self) -> u64 {
        self.key
    }

    fn at(&self) -> IndexRef {
        IndexRef { generation: self.generation, doc: self.doc }
    }

    fn schema() -> SchemaRef {
        held_schema()
    }

    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        let n = rows.len();
        let mut key = Int64Builder::with_capacity(n);
        let mut generation = Int32Builder::with_capacity(n);
        let mut doc = Int64Builder::with_capacity(n);
        let mut paragraph = Int32Builder::with_capacity(n);
        let mut id = StringBuilder::new();
        for r in rows {
            key.append_value(as_i64(r.key));
            generation.append_value(as_i32(r.generation));
            doc.append_value(as_i64(r.doc));
            paragraph.append_value(as_i32(r.paragraph));
            id.append_value(&r.id);
        }
        vec![
            Arc::new(key.finish()),
            Arc::new(generation.finish()),
            Arc::new(doc.finish()),
            Arc::new(paragraph.finish()),
            Arc::new(id.finish()),
        ]
    }

    fn decode(batch: &RecordBatch, path: &Path) -> Result<Vec<Self>> {
        if batch.num_columns() != 5 {
            return Err(damaged(path, "a paragraphs part without the 5 index columns"));
        }
        let key = batch.column(0).as_primitive::<Int64Type>().values();
        let generation = batch.column(1).as_primitive::<Int32Type>().values();
        let doc = batch.column(2).as_primitive::<Int64Type>().values();
        let paragraph = batch.column(3).as_primitive::<Int32Type>().values();
        let Some(id) = batch.column(4).as_string_opt::<i32>() else {
            return Err(damaged(path, "a paragraphs part whose id column is not text"));
        };
        Ok((0..batch.num_rows())
            .map(|i| HeldParagraph {
                key: key[i] as u64,
                generation: generation[i] as u32,
                doc: doc[i] as u64,
                paragraph: paragraph[i] as u32,
                id: id.value(i).to_string(),
            })
            .collect())
    }
}
