//! How readers read: the fields they take from a record, how large a record may be, and
//! what they do when the rest of a file cannot be read. Below every reader.

use neardup_core::DocId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::input::InputFile;
use crate::records::{Reason, Record, RejectedRecord};

/// How a reader reads a record: the id, text and URL fields it takes (JSONL keys or Parquet
/// columns), and how large a record may be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadOptions {
    /// The id field; `None` generates ids as `path:record`.
    pub id: Option<String>,
    /// The text field.
    pub text: String,
    /// The field holding a web page's URL (`url` in C4, RefinedWeb, FineWeb, Dolma and
    /// CCNet exports); a record with a string there is a web page ([`crate::WebMeta`]).
    /// A record without the field, or with another type there, is not; a Parquet column of
    /// another type is not read. `None` reads no URLs. Web archives carry their own.
    #[serde(default)]
    pub url: Option<String>,
    /// A record with more bytes than this (a JSONL line, a web-archive record block or its
    /// inflated payload, a Parquet text value) is a `too_large` reject; lines and archive
    /// records that large are read past without being held in memory.
    #[serde(default = "default_max_record_bytes")]
    pub max_record_bytes: u64,
}

/// The record size limit a reader has unless told otherwise.
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 16 << 20;

fn default_max_record_bytes() -> u64 {
    DEFAULT_MAX_RECORD_BYTES
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            id: Some("id".into()),
            text: "text".into(),
            url: Some("url".into()),
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
        }
    }
}

/// What to do when a file cannot be opened or the rest of it cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnReadError {
    /// Fail the job with an error naming the file.
    #[default]
    Fail,
    /// Count what could not be read as one `unreadable` reject and go on.
    Reject,
}

impl OnReadError {
    /// What a reader gives when a file cannot be opened, or the rest of it from record
    /// `first_unread` on cannot be read, because of `source`: under `Fail`, the error
    /// `fail` makes of it; under `Reject`, one `unreadable` reject standing for the rest.
    ///
    /// # Errors
    /// The error `fail` makes, under [`OnReadError::Fail`].
    pub(crate) fn rest_of_file<E: std::fmt::Display>(
        self,
        source: E,
        fail: impl FnOnce(E) -> Error,
        file_index: u32,
        first_unread: u64,
    ) -> Result<Record> {
        match self {
            OnReadError::Fail => Err(fail(source)),
            OnReadError::Reject => Ok(Record::Reject(RejectedRecord {
                doc: DocId::new(file_index, first_unread.min(DocId::MAX_RECORD)),
                id: None,
                reason: Reason::Unreadable,
                detail: format!("the rest of the file could not be read: {source}"),
            })),
        }
    }
}

/// The id given to a record when no id field is configured: `path:record`.
pub(crate) fn generated_id(file: &InputFile, record: u64) -> String {
    format!("{}:{record}", file.path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_of_a_file_fails_or_is_one_reject() {
        let fail = |m: &str| Error::Damaged { path: "f.jsonl".into(), detail: m.to_string() };
        let error = OnReadError::Fail.rest_of_file("bad gzip", fail, 3, 7).unwrap_err();
        assert!(matches!(error, Error::Damaged { detail, .. } if detail == "bad gzip"));
        match OnReadError::Reject.rest_of_file("bad gzip", fail, 3, 7).unwrap() {
            Record::Reject(r) => {
                assert_eq!(r.doc, DocId::new(3, 7));
                assert_eq!(r.reason, Reason::Unreadable);
                assert_eq!(r.detail, "the rest of the file could not be read: bad gzip");
            }
            other => panic!("expected a reject, got {other:?}"),
        }
    }
}
