//! Paragraph-level dedup (`--paragraphs`) over web archives and over inputs signed by
//! `neardup sign` tasks: a web page's paragraphs are the lines of its main text, and
//! units signed by tasks carry the paragraphs the dedup run after them leaves out.

use std::path::Path;

use neardup_e2e::{dedup, neardup};
use neardup_io::read_paragraphs;

const NOTICE: &str = "This story was first published by our partner newsroom and is \
    republished here under its syndication licence; the views expressed are the author's own.";

const STORIES: [&str; 3] = [
    "The county library will open its new reading room next month after two years of work, \
     and the first exhibition will show maps of the river valley drawn three centuries ago.",
    "Farmers in the upper valley have started the hay harvest a week early this year, as the \
     dry spring left the meadows ready before the usual start of the season in late June.",
    "A small bakery on the harbour front has won the regional prize for its rye bread, made \
     to a recipe the owner's grandmother brought to the town when she arrived in the fifties.",
];

/// The ids and paragraph numbers of `paragraphs/`, with the id that keeps each, sorted.
fn left_out(out: &Path) -> Vec<(String, u32, String)> {
    let mut rows: Vec<_> = read_paragraphs(&out.join("paragraphs"))
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.paragraph, r.first_id))
        .collect();
    rows.sort();
    rows
}

/// A WARC response record of `url` whose page is `html`.
fn response(url: &str, html: &str) -> String {
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{html}");
    format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{}>\r\nWARC-Target-URI: {url}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        url.len(),
        block.len()
    )
}

#[test]
fn a_web_archives_pages_leave_out_the_notice_an_earlier_page_holds() {
    let dir = tempfile::tempdir().unwrap();
    let hosts =
        ["https://valley.example/a/1", "https://harbour.example/b/2", "https://hills.example/c/3"];
    let archive: String = hosts
        .iter()
        .zip(STORIES)
        .map(|(url, story)| {
            let html = format!(
                "<html><head><title>News</title></head><body><h1>Local news</h1><p>{story}</p><p>{NOTICE}</p></body></html>"
            );
            response(url, &html)
        })
        .collect();
    let input = dir.path().join("pages.warc");
    std::fs::write(&input, archive).unwrap();
    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    dedup(&input, &out, &["--paragraphs", "--write-kept", kept.to_str().unwrap()]).unwrap();
    let rows = left_out(&out);
    // The notice, a line of each page's main text, is left out of the later two pages.
    assert_eq!(rows.len(), 2, "{rows:?}");
    let docs = neardup_io::read_documents(&out.join("documents")).unwrap();
    let first =
        docs.iter().find(|d| d.web.as_ref().and_then(|w| w.url.as_deref()) == Some(hosts[0]));
    let first_id = first.unwrap().id.clone().unwrap();
    assert!(rows.iter().all(|r| r.2 == first_id && r.0 != first_id), "{rows:?}");
    // Kept web pages are written as they are, with the main text that was compared.
    let mut written = String::new();
    for entry in std::fs::read_dir(&kept).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gz") {
            let file = std::fs::File::open(&path).unwrap();
            std::io::Read::read_to_string(
                &mut flate2::read::MultiGzDecoder::new(file),
                &mut written,
            )
            .unwrap();
        }
    }
    let pages: Vec<serde_json::Value> =
        written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(pages.len(), 3);
    assert!(pages.iter().all(|p| p["main_text"].as_str().unwrap().contains(NOTICE)), "{pages:?}");
}

#[test]
fn units_signed_by_tasks_leave_out_what_one_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for (file, story) in STORIES.iter().enumerate() {
        let lines: Vec<String> = (0..2)
            .map(|n| {
                let text = format!(
                    "{story} ({file}.{n})\n\n{NOTICE}\n\nItem {file}.{n}: {}",
                    STORIES[(file + n + 1) % 3]
                );
                serde_json::json!({ "id": format!("d{file}-{n}"), "text": text }).to_string()
            })
            .collect();
        std::fs::write(input.join(format!("{file}.jsonl")), lines.join("\n") + "\n").unwrap();
    }
    let clean = dir.path().join("clean");
    dedup(&input, &clean, &["--paragraphs"]).unwrap();
    let out = dir.path().join("out");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    for task in ["0", "1"] {
        let args = ["sign", "-q", "-i", i, "-o", o, "--paragraphs", "--task", task, "--tasks", "2"];
        neardup(&args).unwrap();
    }
    dedup(&input, &out, &["--paragraphs"]).unwrap();
    let s = neardup_e2e::summary(&out);
    assert_eq!(
        s["work_area"]["units_reused"], 3,
        "every file was signed by a task: {}",
        s["work_area"]
    );
    assert!(!left_out(&clean).is_empty());
    assert_eq!(left_out(&out), left_out(&clean));
}
