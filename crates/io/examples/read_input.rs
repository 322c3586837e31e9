//! Reads inputs with neardup's readers and nothing else, to time reading apart from
//! analysis (`bench/wet.sh` runs it under `/usr/bin/time`):
//!
//!     cargo run --release -p neardup-io --example read_input -- FILE_OR_FOLDER...
//!
//! Prints the documents, rejects and bytes of text read.

use neardup_io::{OnReadError, ReadOptions, Record, RecordReader, discover};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let (mut docs, mut rejects, mut bytes) = (0u64, 0u64, 0u64);
    for file in discover(&paths, &[])? {
        for record in RecordReader::open(&file, &ReadOptions::default(), OnReadError::Fail)? {
            match record? {
                Record::Doc(doc) => {
                    docs += 1;
                    bytes += doc.text.len() as u64;
                }
                Record::Reject(_) => rejects += 1,
            }
        }
    }
    println!("{docs} documents, {rejects} rejects, {bytes} bytes of text");
    Ok(())
}
