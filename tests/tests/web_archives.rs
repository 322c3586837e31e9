//! WARC and WET input end to end: documents keep their URL, date and digest, records that
//! are not documents are counted by kind, and a page equals its WET conversion.

use neardup_e2e::{dedup, repo, summary};
use neardup_io::{Decision, Reason, read_documents, read_pairs};

#[test]
fn web_archives_become_documents_with_their_urls() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let input = repo().join("data-samples/warc");
    dedup(&input, &out, &["-w", "2"]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    let summary = summary(&out);
    assert_eq!(docs.len() as u64, summary["counts"]["records"].as_u64().unwrap());
    let skipped = &summary["counts"]["skipped_records"];
    assert_eq!(skipped["request"], 57, "{skipped}");
    assert_eq!(skipped["revisit"], 1);
    assert_eq!(skipped["resource_not_web"], 4, "crawler logs stored as resources");
    assert!(docs.iter().all(|d| d.web.as_ref().and_then(|w| w.url.as_ref()).is_some()));
    assert!(docs.iter().all(|d| !d.web.as_ref().unwrap().url.as_ref().unwrap().starts_with('<')));

    // The Common Crawl WARC page and its WET conversion have the same text, cut into lines
    // alike but for a few: one is removed for the other (as a near duplicate where a line
    // that other sites share makes the archive's page keep its main text only).
    let escopete: Vec<_> = docs
        .iter()
        .filter(|d| {
            d.web.as_ref().unwrap().url.as_deref() == Some("https://an.wikipedia.org/wiki/Escopete")
        })
        .collect();
    assert_eq!(escopete.len(), 2);
    let removed = escopete.iter().find(|d| d.decision == Decision::Remove).unwrap();
    assert!(matches!(removed.reason, Some(Reason::ExactDuplicate | Reason::NearDuplicate)));
    let pairs = read_pairs(&out.join("pairs")).unwrap();
    assert!(pairs.iter().any(|p| p.id_a == *escopete[0].id.as_ref().unwrap()
        || p.id_b == *escopete[0].id.as_ref().unwrap()));
}

/// A WARC response record whose page says `body`.
fn response(id: &str, body: &str) -> String {
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>{body}</p>");
    format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <{id}>\r\nWARC-Target-URI: http://x.org/{id}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
}

/// `text` gzipped a member per record (each `WARC/1.` version starts one), as crawlers
/// write archives.
fn gzip_per_record(text: &str) -> Vec<u8> {
    let mut starts: Vec<usize> = text.match_indices("WARC/1.").map(|(at, _)| at).collect();
    starts.push(text.len());
    let mut bytes = Vec::new();
    for record in starts.windows(2) {
        let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut out, &text.as_bytes()[record[0]..record[1]]).unwrap();
        bytes.extend(out.finish().unwrap());
    }
    bytes
}

#[test]
fn a_record_cut_short_in_its_headers_is_one_reject_and_the_next_records_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let pages = [
        "The river froze early this winter and the ferry stopped running.",
        "A new bakery on the corner sells rye bread every Tuesday morning.",
        "Volunteers counted forty species of birds in the marsh last spring.",
        "The library extends its opening hours during the exam weeks.",
    ];
    let fragment = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:x>\r\n";
    let text = [
        response("a", pages[0]),
        fragment.to_string(),
        response("b", pages[1]),
        response("c", pages[2]),
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:y>\r\nWARC-Tar".to_string(),
        response("d", pages[3]),
        fragment.to_string(),
    ]
    .concat();
    // Plain, and gzipped a member per record as crawlers write archives.
    for (name, bytes) in
        [("cut.warc", text.clone().into_bytes()), ("cut.warc.gz", gzip_per_record(&text))]
    {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        dedup(&input, &out, &["-w", "2"]).unwrap();
        let mut rows = read_documents(&out.join("documents")).unwrap();
        rows.sort_by_key(|d| d.doc);
        let outline: Vec<String> = rows
            .iter()
            .map(|d| {
                let what = d.reason.map_or(d.decision.as_str(), |r| r.as_str());
                format!("{} {} {what}", d.doc.record(), d.id.as_deref().unwrap_or("-"))
            })
            .collect();
        assert_eq!(
            outline,
            [
                "1 <a> keep",
                "2 <urn:x> malformed_record",
                "3 <b> keep",
                "4 <c> keep",
                "5 <urn:y> malformed_record",
                "6 <d> keep",
                "7 <urn:x> malformed_record",
            ],
            "{name}: every record once, in documents/"
        );
        assert_eq!(summary(&out)["counts"]["records"], 7);
    }
}
