//! Records that flow between operators (and between workers, so all are serialisable).

use neardup_core::{ContentHash, DocId, Signature};
use neardup_io::WebMeta;
use serde::{Deserialize, Serialize};

/// A document after analysis and signing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedDoc {
    /// Position in the input.
    pub doc: DocId,
    /// The record's id.
    pub id: String,
    /// Hash of the normalised text.
    pub content: ContentHash,
    /// Characters after normalisation.
    pub chars: u64,
    /// Distinct features.
    pub features: u32,
    /// The signature, or `None` when the document has too few features to be matched.
    pub signature: Option<Signature>,
    /// Sorted distinct feature hashes, kept only for exact-Jaccard verification.
    pub feature_set: Vec<u64>,
    /// URL, fetch date and digest of a web page.
    pub web: Option<Box<WebMeta>>,
}

/// What the decision stage needs to know about an accepted document.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DocInfo {
    /// The record's id.
    pub id: String,
    /// Characters after normalisation.
    pub chars: u64,
    /// Distinct features.
    pub features: u32,
    /// Hash of the normalised text.
    pub content: ContentHash,
    /// Whether it took part in near-duplicate matching (enough features).
    pub matched: bool,
    /// URL, fetch date and digest of a web page.
    pub web: Option<Box<WebMeta>>,
}

/// What clustering needs of a document: its id, normalised length and content hash.
pub type ClusterInfo = (String, u64, ContentHash);

/// One LSH bucket membership: a band (MinHash) or table (SimHash) key and a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BucketRecord {
    /// The bucket.
    pub key: neardup_core::BucketKey,
    /// The member.
    pub doc: DocId,
}

/// Two documents that shared a bucket, `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Candidate {
    /// The earlier document.
    pub a: DocId,
    /// The later document.
    pub b: DocId,
}

/// A candidate with the first document's signature attached, on its way to the second.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HalfPair {
    /// The earlier document.
    pub a: DocId,
    /// The later document.
    pub b: DocId,
    /// Id of `a`.
    pub id_a: String,
    /// Signature of `a`.
    pub signature_a: Signature,
    /// Feature set of `a` (exact-Jaccard verification only).
    pub feature_set_a: Vec<u64>,
}

/// Where a removed document's cluster put it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Assignment {
    /// The cluster's kept document.
    pub kept: DocId,
    /// Its id (the cluster's name).
    pub kept_id: String,
    /// Its content hash, to tell exact from near duplicates.
    pub kept_content: ContentHash,
    /// Documents in the cluster.
    pub cluster_size: u64,
    /// Whether this document and the kept one form a verified (or exact) pair.
    pub verified_with_kept: bool,
}
