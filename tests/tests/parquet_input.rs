//! Parquet input gives the same decisions as the same records in JSONL.

use std::io::Read;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use neardup_e2e::{dedup, repo};
use neardup_io::read_documents;
use parquet::arrow::ArrowWriter;

#[test]
fn parquet_and_jsonl_inputs_agree() {
    let mut text = String::new();
    let file =
        std::fs::File::open(repo().join("data-samples/zh-tang-poems/poems.jsonl.gz")).unwrap();
    flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text).unwrap();
    let rows: Vec<(String, String)> = text
        .lines()
        .take(3000)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("poems.jsonl");
    let lines: Vec<String> =
        rows.iter().map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string()).collect();
    std::fs::write(&jsonl, lines.join("\n")).unwrap();

    let parquet = dir.path().join("poems.parquet");
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::Int64, false),
        Field::new("doc", DataType::Utf8, false),
        Field::new("body", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows.len() as i64)),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0.as_str()))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
        ],
    )
    .unwrap();
    // Several row groups, so the reader crosses batch boundaries.
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(400))
        .build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(&parquet).unwrap(), schema, Some(props))
        .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();

    let decide = |input: &std::path::Path, extra: &[&str]| {
        let out = dir.path().join(input.file_name().unwrap()).with_extension("out");
        dedup(input, &out, &[&["-w", "2"], extra].concat()).unwrap();
        let mut docs: Vec<_> = read_documents(&out.join("documents"))
            .unwrap()
            .into_iter()
            .map(|d| (d.doc.record(), d.id, d.decision, d.cluster, d.reason))
            .collect();
        docs.sort_by_key(|d| d.0);
        docs
    };
    let from_jsonl = decide(&jsonl, &[]);
    let from_parquet = decide(&parquet, &["--id-field", "doc", "--text-field", "body"]);
    assert_eq!(from_jsonl.len(), 3000);
    assert!(from_jsonl.iter().any(|d| d.2 == neardup_io::Decision::Remove));
    assert_eq!(from_jsonl, from_parquet);
}
