//! Reading documents and writing neardup's outputs.
//!
//! Inputs are JSON Lines (plain, `.gz`, `.zst`), Parquet and WARC/WET web archives, or
//! folders of them ([`discover`]). A [`RecordReader`] turns one file into [`Record`]s: a document, or a reject
//! that names its position and [`Reason`] (malformed JSON, invalid UTF-8, a missing or
//! mistyped field, empty text), so bad input never stops a run. Only a file that cannot be
//! opened or read further is an [`Error`], unless [`OnReadError::Reject`] counts it too.
//!
//! Outputs are Parquet parts (`pairs/`, `documents/`) written atomically by
//! [`PairsWriter`] and [`DocumentsWriter`], and read back by [`read_pairs`] and
//! [`read_documents`]. This crate knows nothing of signatures or dataflow.
//!
//! ```
//! use neardup_io::{ReadOptions, OnReadError, Record, RecordReader, discover};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.jsonl"), "{\"id\":\"x\",\"text\":\"hello\"}\nnot json\n").unwrap();
//! let files = discover(&[dir.path().to_path_buf()], &[]).unwrap();
//! let records: Vec<Record> = RecordReader::open(&files[0], &ReadOptions::default(), OnReadError::Fail)
//!     .unwrap()
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert!(matches!(&records[0], Record::Doc(d) if d.id == "x"));
//! assert!(matches!(&records[1], Record::Reject(r) if r.doc.record() == 2));
//! ```

mod decompress;
pub mod destination;
mod error;
pub mod failpoint;
mod files;
mod html;
pub mod index;
mod input;
mod jsonl;
mod kept;
mod kept_text;
mod lock;
mod paragraphs_out;
mod parquet_in;
mod parquet_out;
mod read_options;
mod reader;
mod records;
pub mod remote;
mod role;
mod warc;

pub use decompress::Compression;
pub use destination::{rename_durably, temporary_name, write_atomically};
pub use error::{Error, Result, panic_message};
pub use files::{FILE_LIST, FileList, folder_role, resolved_path};
pub use html::{decode_page, field_page_text, html_to_text};
pub use input::{Format, InputFile, check_unchanged, discover, input_list, is_regular};
pub use jsonl::{Item, JsonlRecords, LineRange, RawLine, count_line_starts, parse_line};
pub use kept::{KeptRecords, kept_file_name, kept_files, write_kept};
pub use kept_text::{with_field, without_ranges};
pub use lock::{FolderLock, LockHolder, TakenOver, host_name, process_gone, process_start};
pub use paragraphs_out::{ParagraphRow, ParagraphsWriter, paragraphs_schema, read_paragraphs};
pub use parquet_in::ParquetRecords;
pub use parquet_out::{
    DocumentRow, DocumentsWriter, PairKind, PairRow, PairsWriter, PartWriter, Repeated,
    documents_schema, documents_schema_with, pairs_schema, read_documents, read_pairs,
};
pub use read_options::{DEFAULT_MAX_RECORD_BYTES, OnReadError, ReadOptions};
pub use reader::{RecordReader, has_urls, wanted_documents};
pub use records::{Decision, InputDoc, OwnText, Reason, Record, RejectedRecord, WebMeta};
pub use role::Role;
pub use warc::WarcRecords;
