//! Identifiers: documents by input position, bucket keys, content hashes.

use serde::{Deserialize, Serialize};

/// Bits of a [`DocId`] that hold the record number within its file.
const RECORD_BITS: u32 = 40;
const RECORD_MASK: u64 = (1 << RECORD_BITS) - 1;

/// A document's internal identity: its position in the input.
///
/// Bits 40..63 hold the file's index in the sorted input list and the low 40 bits the
/// 1-based record number within the file; the top bit stays clear, so a `DocId` is also a
/// non-negative `i64` (the `doc_id` column). The order of `DocId`s is therefore input order,
/// independent of how files are split across workers: "first" always means smallest `DocId`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DocId(u64);

impl DocId {
    /// Largest file index a `DocId` can hold.
    pub const MAX_FILES: u32 = (1 << (63 - RECORD_BITS)) - 1;
    /// Largest record number a `DocId` can hold.
    pub const MAX_RECORD: u64 = RECORD_MASK;

    /// The document at 1-based `record` of input file `file_index`.
    ///
    /// # Panics
    /// If `file_index > MAX_FILES` or `record > MAX_RECORD`; the input planner rejects such
    /// inputs before any document is read.
    pub fn new(file_index: u32, record: u64) -> Self {
        assert!(file_index <= Self::MAX_FILES, "file index {file_index} exceeds DocId range");
        assert!(record <= Self::MAX_RECORD, "record {record} exceeds DocId range");
        DocId((u64::from(file_index) << RECORD_BITS) | record)
    }

    /// Rebuilds a `DocId` from [`DocId::get`].
    pub fn from_raw(raw: u64) -> Self {
        DocId(raw)
    }

    /// The raw value, as written to the `doc_id` column.
    pub fn get(self) -> u64 {
        self.0
    }

    /// Index of the input file in the sorted input list.
    pub fn file_index(self) -> u32 {
        (self.0 >> RECORD_BITS) as u32
    }

    /// 1-based record number within the file (the line number for JSONL).
    pub fn record(self) -> u64 {
        self.0 & RECORD_MASK
    }
}

/// The key of an LSH bucket: a hash of one band (MinHash) or one block table (SimHash),
/// with the band or table number mixed in, so different bands never share a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BucketKey(u64);

impl BucketKey {
    /// Wraps a key computed by this crate.
    pub fn new(raw: u64) -> Self {
        BucketKey(raw)
    }

    /// The raw key; keys are mixed hashes, so their low bits are uniform for routing.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// Hash of a document's normalised text: equal hashes mark exact duplicates.
///
/// 128 bits (xxh3-128), so that even among 10^12 documents an accidental collision, which
/// would remove a document as an exact copy of a different text, has probability below
/// 10^-14.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct ContentHash(u128);

impl ContentHash {
    /// Hashes normalised text under the job seed.
    pub fn of_text(text: &str, seed: u64) -> Self {
        let seed = crate::hash::derive_seed(seed, crate::hash::SeedPurpose::Content, 0);
        ContentHash(xxhash_rust::xxh3::xxh3_128_with_seed(text.as_bytes(), seed))
    }

    /// The raw hash.
    pub fn get(self) -> u128 {
        self.0
    }

    /// 64 well-mixed bits of the hash, for routing.
    pub fn route(self) -> u64 {
        (self.0 as u64) ^ ((self.0 >> 64) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_id_orders_by_file_then_record() {
        let a = DocId::new(0, 5);
        let b = DocId::new(0, 6);
        let c = DocId::new(1, 1);
        assert!(a < b && b < c);
        assert_eq!(c.file_index(), 1);
        assert_eq!(c.record(), 1);
        assert_eq!(DocId::from_raw(c.get()), c);
        let max = DocId::new(DocId::MAX_FILES, DocId::MAX_RECORD);
        assert_eq!(max.file_index(), DocId::MAX_FILES);
        assert_eq!(max.record(), DocId::MAX_RECORD);
        assert!(i64::try_from(max.get()).is_ok(), "every DocId fits the Int64 doc_id column");
    }

    #[test]
    #[should_panic(expected = "exceeds DocId range")]
    fn record_overflow_is_a_bug() {
        let _ = DocId::new(0, DocId::MAX_RECORD + 1);
    }
}
