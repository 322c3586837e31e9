//! `--write-kept`: the deduplicated dataset round-trips. Kept JSONL lines are copied byte
//! for byte, kept Parquet rows keep every column, web pages become JSONL with their URLs
//! and the main text compared, and a rerun replaces the earlier copies.

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use neardup_e2e::{dedup, repo, summary};
use neardup_io::{Decision, read_documents};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn gunzip(path: &std::path::Path) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn kept_records_round_trip_in_their_own_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    // JSONL with extra fields (author, title, edition, truth), gzipped.
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    std::fs::copy(&poems, input.join("poems.jsonl.gz")).unwrap();
    // Parquet with an extra column.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("score", DataType::Int64, false),
    ]));
    let texts = [
        "the same text about a harbour at dawn",
        "the same text about a harbour at dawn",
        "another text entirely about mountains",
    ];
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["p1", "p2", "p3"])),
            Arc::new(StringArray::from(texts.to_vec())),
            Arc::new(Int64Array::from(vec![10, 20, 30])),
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(input.join("t.parquet")).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    std::fs::copy(
        repo().join("data-samples/warc/warcio_example.warc.gz"),
        input.join("ex.warc.gz"),
    )
    .unwrap();

    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(kept.join("00042-similar.jsonl"), "not from a run\n").unwrap();
    std::fs::write(kept.join("notes.txt"), "not ours").unwrap();
    // An earlier run over one more file: its copy of that file is stale afterwards.
    let extra = input.join("z-extra.jsonl");
    std::fs::write(&extra, "{\"id\":\"extra\",\"text\":\"only in the earlier run\"}\n").unwrap();
    dedup(&input, &out, &["--write-kept", kept.to_str().unwrap()]).unwrap();
    assert!(kept.join("00003-z-extra.jsonl").exists());
    std::fs::remove_file(&extra).unwrap();
    dedup(&input, &out, &["--write-kept", kept.to_str().unwrap(), "-w", "3"]).unwrap();
    assert!(kept.join("_SUCCESS").exists());
    assert!(!kept.join("00003-z-extra.jsonl").exists(), "stale copies are removed");
    assert!(kept.join("notes.txt").exists(), "other files are left alone");
    assert!(kept.join("00042-similar.jsonl").exists(), "even with a copy's kind of name");

    let docs = read_documents(&out.join("documents")).unwrap();
    let kept_ids: BTreeSet<String> =
        docs.iter().filter(|d| d.decision == Decision::Keep).filter_map(|d| d.id.clone()).collect();
    let summary = summary(&out);
    assert_eq!(summary["counts"]["kept_written"].as_u64().unwrap() as usize, kept_ids.len());

    // Files are numbered by their position in the sorted input list.
    let jsonl = gunzip(&kept.join("00001-poems.jsonl.gz"));
    let all = gunzip(&poems);
    let original: BTreeSet<&str> = all.lines().collect();
    let mut poem_ids = BTreeSet::new();
    for line in jsonl.lines() {
        assert!(original.contains(line), "a kept line differs from its original: {line}");
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("author").is_some() && v.get("truth").is_some(), "extra fields are kept");
        poem_ids.insert(v["id"].as_str().unwrap().to_string());
    }
    // 3,022 of the 5,000 poems are kept (with the web archive beside them, the run verifies
    // by containment too; 3,314 with n-grams as long in Chinese as in English, 3,580 before
    // han_fold took Unihan's variant forms).
    assert!(poem_ids.len() > 2950, "{} poems kept", poem_ids.len());
    assert!(poem_ids.iter().all(|id| kept_ids.contains(id)));

    let file = std::fs::File::open(kept.join("00002-t.parquet")).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(reader.schema().fields().len(), 3, "every column is kept");
    let rows: usize = reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 2, "one of the two identical texts is removed");

    let web = gunzip(&kept.join("00000-ex.warc.gz.jsonl.gz"));
    let page: serde_json::Value = serde_json::from_str(web.lines().next().unwrap()).unwrap();
    assert_eq!(page["url"], "http://example.com/");
    assert!(page["text"].as_str().unwrap().starts_with("Example Domain"));
}

/// A kept web page carries the text the run compared (`main_text`: without its site's
/// template lines and the lines outside its main text), beside the whole extracted text.
#[test]
fn kept_web_pages_carry_the_main_text_that_was_compared() {
    let dir = tempfile::tempdir().unwrap();
    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    let kept_flag = kept.to_str().unwrap();
    dedup(&repo().join("data-samples/web-templated"), &out, &["--write-kept", kept_flag]).unwrap();
    let web = gunzip(&kept.join("00000-pages.warc.gz.jsonl.gz"));
    let mut pages = 0;
    for line in web.lines() {
        let page: serde_json::Value = serde_json::from_str(line).unwrap();
        let (main, text) = (page["main_text"].as_str().unwrap(), page["text"].as_str().unwrap());
        // The site's navigation bar is in the page, not in what was compared.
        assert!(text.contains("登录 | 注册") && !main.contains("登录 | 注册"), "{text}");
        // The main text's lines are the page's, in order.
        let mut lines = text.lines();
        assert!(main.lines().all(|l| lines.any(|t| t == l)), "{main}");
        assert!(main.chars().count() > 40, "{main}");
        pages += 1;
    }
    assert!(pages > 10, "{pages} pages kept");
}

/// Names of the files below `dir`, relative to it, sorted.
fn files_below(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                names.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    names.sort();
    names
}

#[test]
fn a_folder_of_another_role_is_refused_and_keeps_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let text = |n: usize| format!("document {n} about the harbour, the tide and boat number {n}");
    let lines = |prefix: &str| -> String {
        (0..20).map(|n| format!("{{\"id\":\"{prefix}{n}\",\"text\":\"{}\"}}\n", text(n))).collect()
    };
    std::fs::write(a.join("a.jsonl"), lines("a")).unwrap();
    std::fs::write(b.join("b.jsonl"), lines("b")).unwrap();
    let (x, y, k) = (dir.path().join("x"), dir.path().join("y"), dir.path().join("k"));
    dedup(&a, &x, &[]).unwrap();
    dedup(&a, &y, &["--write-kept", k.to_str().unwrap()]).unwrap();
    let (outputs, kept) = (files_below(&x), files_below(&k));
    assert!(outputs.contains(&"_SUCCESS".to_string()) && kept.len() > 2, "{outputs:?} {kept:?}");

    // An earlier run's outputs given as the kept folder.
    let err = dedup(&b, &y, &["--write-kept", x.to_str().unwrap()]).unwrap_err();
    let message = format!("{err:#}");
    assert!(
        message.contains("the outputs of a run") && message.contains("--write-kept"),
        "{message}"
    );
    assert_eq!(files_below(&x), outputs, "the earlier run's outputs are untouched");
    // An earlier run's kept dataset given as the output folder.
    let err = dedup(&b, &k, &[]).unwrap_err();
    let message = format!("{err:#}");
    assert!(
        message.contains("the kept dataset of a run") && message.contains("--output"),
        "{message}"
    );
    assert_eq!(files_below(&k), kept, "the kept dataset is untouched");
    // An index is neither.
    let index = dir.path().join("index");
    dedup(&a, &dir.path().join("z"), &["--index", index.to_str().unwrap()]).unwrap();
    let err = dedup(&b, &index, &[]).unwrap_err();
    assert!(format!("{err:#}").contains("an index of runs"), "{err:#}");
    let err = dedup(&b, &dir.path().join("w"), &["--index", x.to_str().unwrap()]).unwrap_err();
    assert!(format!("{err:#}").contains("the outputs of a run"), "{err:#}");
    assert_eq!(files_below(&x), outputs);
}
