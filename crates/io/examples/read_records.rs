//! Prints what neardup reads from input files: one line per record (documents with their
//! id, URL and first characters; rejects with their reason), then skipped records by kind.
//!
//! `cargo run --release -p neardup-io --example read_records -- data-samples/warc`

use neardup_io::{OnReadError, ReadOptions, Record, RecordReader, discover};

fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    let files = discover(&paths, &[]).expect("inputs");
    for file in &files {
        let mut reader =
            RecordReader::open(file, &ReadOptions::default(), OnReadError::Reject).expect("open");
        println!("== {}", file.path.display());
        for record in reader.by_ref() {
            match record.expect("read") {
                Record::Doc(d) => {
                    let url = d.meta.as_ref().and_then(|m| m.url.clone()).unwrap_or_default();
                    let text: String =
                        d.text.chars().take(60).collect::<String>().replace('\n', " | ");
                    println!(
                        "{:>4} doc    {} {url} [{}] {text}",
                        d.doc.record(),
                        d.id,
                        d.text.chars().count()
                    );
                }
                Record::Reject(r) => {
                    println!("{:>4} reject {:?} {}", r.doc.record(), r.reason, r.detail)
                }
            }
        }
        if let Some(skipped) = reader.skipped() {
            println!("     skipped {skipped:?}");
        }
    }
}
