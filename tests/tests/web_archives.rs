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

    // The Common Crawl WARC page and its WET conversion have the same text.
    let escopete: Vec<_> = docs
        .iter()
        .filter(|d| {
            d.web.as_ref().unwrap().url.as_deref() == Some("https://an.wikipedia.org/wiki/Escopete")
        })
        .collect();
    assert_eq!(escopete.len(), 2);
    let removed = escopete.iter().find(|d| d.decision == Decision::Remove).unwrap();
    assert_eq!(removed.reason, Some(Reason::ExactDuplicate));
    let pairs = read_pairs(&out.join("pairs")).unwrap();
    assert!(pairs.iter().any(|p| p.id_a == *escopete[0].id.as_ref().unwrap()
        || p.id_b == *escopete[0].id.as_ref().unwrap()));
}
