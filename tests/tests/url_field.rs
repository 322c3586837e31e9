//! Crawl exports with a URL column (`input.url_field`, `url` by default): the pages of
//! `data-samples/web-templated` as JSON Lines and as Parquet with their URLs learn the same
//! templates and reach the same decisions as the web archive they were read from; without
//! URLs they are plain documents, and no template pass is run.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use neardup_e2e::{dedup, render_documents, repo, summary};
use neardup_io::{OnReadError, ReadOptions, Record, RecordReader};

/// The pages of the web archive as `(id, url, text)`, text as the archive reader extracts it.
fn pages() -> Vec<(String, String, String)> {
    let warc = repo().join("data-samples/web-templated/pages.warc.gz");
    let files = neardup_io::discover(&[warc], &[]).unwrap();
    let reader = RecordReader::open(&files[0], &ReadOptions::default(), OnReadError::Fail).unwrap();
    reader
        .filter_map(|r| match r.unwrap() {
            Record::Doc(d) => {
                let url = d.meta.and_then(|m| m.url).expect("archive pages have URLs");
                Some((d.id, url, d.text))
            }
            Record::Reject(_) => None,
        })
        .collect()
}

/// `documents/` without record numbers (the archive numbers its warcinfo record too).
fn decisions(out: &Path) -> Vec<String> {
    let mut rows: Vec<String> = render_documents(out)
        .lines()
        .map(|line| line.split_once('\t').unwrap().1.to_string())
        .collect();
    rows.sort();
    rows
}

fn write_jsonl(path: &Path, pages: &[(String, String, String)], url_key: &str) {
    let lines: Vec<String> = pages
        .iter()
        .map(|(id, url, text)| {
            serde_json::json!({ "id": id, url_key: url, "text": text }).to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn write_parquet(path: &Path, pages: &[(String, String, String)]) {
    let column = |pick: fn(&(String, String, String)) -> &str| {
        Arc::new(StringArray::from(pages.iter().map(pick).collect::<Vec<_>>()))
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![column(|p| &p.0), column(|p| &p.1), column(|p| &p.2)],
    )
    .unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn exports_with_urls_learn_the_templates_their_archive_does() {
    let dir = tempfile::tempdir().unwrap();
    let pages = pages();
    assert_eq!(pages.len(), 492);
    let warc = repo().join("data-samples/web-templated/pages.warc.gz");
    let from_warc = dir.path().join("warc");
    dedup(&warc, &from_warc, &["-w", "2"]).unwrap();
    let learned = &summary(&from_warc)["boilerplate"];
    assert!(learned["learned_lines"].as_u64().unwrap() > 0, "{learned}");

    let jsonl = dir.path().join("pages.jsonl");
    write_jsonl(&jsonl, &pages, "url");
    let parquet = dir.path().join("pages.parquet");
    write_parquet(&parquet, &pages);
    for (input, name) in [(&jsonl, "jsonl"), (&parquet, "parquet")] {
        let out = dir.path().join(name);
        dedup(input, &out, &["-w", "2"]).unwrap();
        assert_eq!(summary(&out)["boilerplate"], *learned, "{name}");
        assert_eq!(decisions(&out), decisions(&from_warc), "{name}");
    }

    // Another field name, set in a job file.
    let link = dir.path().join("link.jsonl");
    write_jsonl(&link, &pages, "link");
    let job = dir.path().join("link.toml");
    std::fs::write(&job, "[input]\nurl_field = \"link\"\n").unwrap();
    let out = dir.path().join("link");
    dedup(&link, &out, &["--job", job.to_str().unwrap()]).unwrap();
    assert_eq!(decisions(&out), decisions(&from_warc));
    // Without it the same file holds plain documents: no template pass, and the templates
    // join pages of one site.
    let out = dir.path().join("plain");
    dedup(&link, &out, &[]).unwrap();
    assert!(summary(&out)["boilerplate"].is_null());
    assert_ne!(decisions(&out), decisions(&from_warc));
}
