//! Records that flow between operators (and between workers, so all are serialisable),
//! with their memory sizes for the spill limits.

use neardup_core::{BucketKey, ContentHash, DocId, MinHashSignature, Signature, SimHash};
use neardup_io::{RejectedRecord, WebMeta};
use neardup_text::Paragraph;
use serde::{Deserialize, Serialize};

use crate::storage::spill::MemSize;

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
    /// Its paragraphs, with paragraph-level dedup on.
    pub paragraphs: Vec<Paragraph>,
    /// With paragraph-level dedup on: the characters of its whole text as paragraphs are
    /// compared (short blocks too), of which its repeated paragraphs' are a share.
    pub paragraph_chars: u64,
}

/// What clustering and pair rows need of a document.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeInfo {
    /// Position in the input.
    pub doc: DocId,
    /// The record's id.
    pub id: String,
    /// Characters after normalisation (for the `longest` keep rule).
    pub chars: u64,
    /// Hash of the normalised text.
    pub content: ContentHash,
}

/// What grouping by normalised text needs of an accepted document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentKey {
    /// The document.
    pub node: NodeInfo,
    /// Whether it has a signature (enough features).
    pub matched: bool,
}

/// A record's claim to its id: the first claim (smallest `DocId`) owns the id. A rejected
/// record claims its id too; an accepted document carries what grouping by text needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdClaim {
    /// xxh3-128 of the id: equal ids have equal hashes, and distinct ids collide with
    /// probability 2^-128.
    pub id_hash: u128,
    /// The claiming record.
    pub doc: DocId,
    /// For an accepted document, its grouping key; `None` for a rejected record.
    pub accepted: Option<ContentKey>,
}

/// Everything a document's home worker keeps until the end, for its `documents/` row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocMeta {
    /// The record's id.
    pub id: String,
    /// Characters after normalisation.
    pub chars: u64,
    /// Distinct features.
    pub features: u32,
    /// Hash of the normalised text.
    pub content: ContentHash,
    /// Whether it took part in near-duplicate matching.
    pub matched: bool,
    /// Whether it represents its text among its exact copies: the one signed and matched
    /// and, with an index, indexed (with an index, texts too short to sign have one too).
    pub representative: bool,
    /// URL, fetch date and digest of a web page.
    pub web: Option<Box<WebMeta>>,
    /// Its paragraphs, with paragraph-level dedup on.
    pub paragraphs: Vec<Paragraph>,
    /// With paragraph-level dedup on: the characters of its whole text as paragraphs are
    /// compared (short blocks too), of which its repeated paragraphs' are a share.
    pub paragraph_chars: u64,
}

/// A representative's signature, on its home worker, for verifying candidates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigEntry {
    /// The document.
    pub node: NodeInfo,
    /// Its signature.
    pub signature: Signature,
    /// Its distinct features (containment).
    pub features: u32,
    /// Its feature set (exact-Jaccard verification only).
    pub feature_set: Vec<u64>,
}

impl SigEntry {
    /// The side verification compares.
    pub fn side(&self) -> neardup_core::Side<'_> {
        neardup_core::Side {
            signature: &self.signature,
            features: self.features,
            feature_set: &self.feature_set,
        }
    }
}

/// One LSH bucket membership: a band (MinHash) or table (SimHash) key and a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BucketRecord {
    /// The bucket.
    pub key: BucketKey,
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

/// What the home worker of candidates' first documents sends to the home workers of their
/// second ones: each first document's signature once per worker that holds seconds of it,
/// and the pairs, which a second's worker verifies with the signatures it was sent.
///
/// Ordered signatures first (by document), then pairs by `(b, a)`. The verifying stage keeps
/// signatures as they arrive and sorts only the pairs; the order puts signatures first
/// where both are sorted together (the stage's unit tests).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum HalfPair {
    /// The first document of some pairs with its signature, for the worker of index
    /// `worker`.
    First {
        /// The receiving worker's index.
        worker: u64,
        /// The document and its signature.
        entry: Box<SigEntry>,
    },
    /// A pair to verify at the home worker of `b`.
    Pair(Candidate),
}

impl HalfPair {
    fn order_key(&self) -> (bool, DocId, DocId) {
        match self {
            HalfPair::First { entry, .. } => (false, entry.node.doc, entry.node.doc),
            HalfPair::Pair(c) => (true, c.b, c.a),
        }
    }
}

impl PartialEq for HalfPair {
    fn eq(&self, other: &Self) -> bool {
        self.order_key() == other.order_key()
    }
}
impl Eq for HalfPair {}
impl PartialOrd for HalfPair {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HalfPair {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

/// A verified or exact pair between two documents, `a.doc < b.doc`, for clustering.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Edge {
    /// The earlier document.
    pub a: NodeInfo,
    /// The later document.
    pub b: NodeInfo,
}

/// Where a document's cluster put it.
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
    /// Most pair hops from the kept document to a member.
    pub radius: u32,
    /// Whether this document and the kept one form a verified (or exact) pair.
    pub verified_with_kept: bool,
    /// With an index: the earlier kept document the cluster joins, which replaces `kept`.
    pub indexed: Option<Box<IndexedKept>>,
}

/// The kept document of an earlier run that a cluster of this run joins.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct IndexedKept {
    /// The earlier kept document (the earliest, when the cluster joins several).
    pub kept: neardup_io::index::IndexRef,
    /// Its id.
    pub kept_id: String,
    /// Its content hash.
    pub kept_content: u128,
}

/// What clustering needs of a document: its normalised length and content hash.
pub type ClusterInfo = (u64, ContentHash);

/// A document's place in its cluster, as clustering computes it (fixed size: the kept
/// document's id is attached later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Membership {
    /// The cluster's kept document.
    pub kept: DocId,
    /// Its content hash, to tell exact from near duplicates.
    pub kept_content: ContentHash,
    /// Documents in the cluster.
    pub cluster_size: u64,
    /// Most pair hops from the kept document to a member.
    pub radius: u32,
    /// Whether this document and the kept one form a verified (or exact) pair.
    pub verified_with_kept: bool,
}

impl MemSize for Membership {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Membership>()
    }
}

/// What a document's home worker learns about it, besides its own record, for its row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// A reader or signer rejected it.
    Rejected(RejectedRecord),
    /// An earlier record has its id.
    DuplicateId {
        /// The record that owns the id.
        first: DocId,
    },
    /// It is in a cluster.
    Assigned(Assignment),
}

fn opt_web(web: &Option<Box<WebMeta>>) -> usize {
    web.as_ref().map_or(0, |w| {
        std::mem::size_of::<WebMeta>()
            + [&w.url, &w.date, &w.digest]
                .iter()
                .map(|s| s.as_ref().map_or(0, String::capacity))
                .sum::<usize>()
    })
}

fn signature(s: &Option<Signature>) -> usize {
    match s {
        Some(Signature::MinHash(m)) => m.len() * 4,
        _ => 0,
    }
}

impl MemSize for NodeInfo {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<NodeInfo>() + self.id.capacity()
    }
}

impl MemSize for ContentKey {
    fn mem_size(&self) -> usize {
        self.node.mem_size() + 1
    }
}

impl MemSize for Option<ContentKey> {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Option<ContentKey>>()
            + self.as_ref().map_or(0, |c| c.node.id.capacity())
    }
}

impl MemSize for IdClaim {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<IdClaim>() + self.accepted.as_ref().map_or(0, |c| c.node.id.capacity())
    }
}

impl MemSize for SignedDoc {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<SignedDoc>()
            + self.id.capacity()
            + signature(&self.signature)
            + self.feature_set.capacity() * 8
            + opt_web(&self.web)
            + self.paragraphs.capacity() * std::mem::size_of::<Paragraph>()
    }
}

impl MemSize for DocMeta {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<DocMeta>()
            + self.id.capacity()
            + opt_web(&self.web)
            + self.paragraphs.capacity() * std::mem::size_of::<Paragraph>()
    }
}

impl MemSize for SigEntry {
    fn mem_size(&self) -> usize {
        let signature = match &self.signature {
            Signature::MinHash(m) => m.len() * 4,
            Signature::SimHash(_) => 0,
        };
        self.node.mem_size()
            + std::mem::size_of::<Signature>()
            + signature
            + self.feature_set.capacity() * 8
    }
}

impl MemSize for BucketRecord {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<BucketRecord>()
    }
}

impl MemSize for Candidate {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Candidate>()
    }
}

impl MemSize for HalfPair {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<HalfPair>()
            + match self {
                HalfPair::First { entry, .. } => entry.mem_size(),
                HalfPair::Pair(_) => 0,
            }
    }
}

impl MemSize for Verdict {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Verdict>()
            + match self {
                Verdict::Rejected(r) => {
                    r.detail.capacity() + r.id.as_ref().map_or(0, String::capacity)
                }
                Verdict::DuplicateId { .. } => 0,
                Verdict::Assigned(a) => {
                    a.kept_id.capacity()
                        + a.indexed.as_ref().map_or(0, |i| {
                            std::mem::size_of::<IndexedKept>() + i.kept_id.capacity()
                        })
                }
            }
    }
}

/// A `pairs/` row ordered as the part files are: by `(id_a, id_b)`, unique per pair.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairOut(pub neardup_io::PairRow);

impl PartialEq for PairOut {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for PairOut {}
impl PartialOrd for PairOut {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PairOut {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.0.id_a, &self.0.id_b, self.0.doc_a, self.0.doc_b).cmp(&(
            &other.0.id_a,
            &other.0.id_b,
            other.0.doc_a,
            other.0.doc_b,
        ))
    }
}

impl MemSize for PairOut {
    fn mem_size(&self) -> usize {
        self.0.mem_size()
    }
}

impl MemSize for neardup_io::PairRow {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<neardup_io::PairRow>() + self.id_a.capacity() + self.id_b.capacity()
    }
}

/// Mixed into a content hash to make a representative's content key, so content keys and
/// band keys never meet by design.
const CONTENT_KEY_SEED: u64 = 0x636f_6e74_656e_7431;

/// The content key of a text: its index key for exact copies.
pub fn content_key(content: ContentHash) -> u64 {
    let h = content.get();
    neardup_core::hash::route((h as u64) ^ ((h >> 64) as u64) ^ CONTENT_KEY_SEED)
}

/// The signature an index row holds, in the run's method.
pub(crate) fn decode_signature(bytes: &[u8], like: &Signature) -> Option<Signature> {
    match like {
        Signature::MinHash(_) => {
            if !bytes.len().is_multiple_of(4) {
                return None;
            }
            let values = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            Some(Signature::MinHash(MinHashSignature::from_values(values)))
        }
        Signature::SimHash(_) => {
            let bits: [u8; 8] = bytes.try_into().ok()?;
            Some(Signature::SimHash(SimHash::from_bits(u64::from_le_bytes(bits))))
        }
    }
}

/// A signature as an index row holds it: little-endian values.
pub fn encode_signature(signature: &Signature) -> Vec<u8> {
    match signature {
        Signature::MinHash(m) => m.values().iter().flat_map(|v| v.to_le_bytes()).collect(),
        Signature::SimHash(s) => s.bits().to_le_bytes().to_vec(),
    }
}

/// A paragraph of a kept document: its key, the document and its number.
pub type ParagraphKey = (u64, DocId, u32);

/// A document's item for `WriteDocuments`: the document, and 0 for its verdict or a
/// paragraph's number plus one.
pub type DocItemKey = (DocId, u32);

/// A paragraph of a kept document, on its way to the worker of its key (keyed by the
/// paragraph's key, the document and its number, so a key's documents meet in keep order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParagraphSeen {
    /// The document's id.
    pub id: String,
    /// Byte offset of the paragraph in the document's compared text.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Its characters, as compared.
    pub chars: u32,
}

impl MemSize for ParagraphSeen {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<ParagraphSeen>() + self.id.capacity()
    }
}

/// A paragraph of a kept document that a document kept before it holds, back on the
/// document's home worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatedParagraph {
    /// The paragraph, as its document's worker sent it.
    pub seen: ParagraphSeen,
    /// The paragraph's key.
    pub key: u64,
    /// The document that holds its first occurrence (its `doc_id` in its own run).
    pub first: DocId,
    /// That document's id.
    pub first_id: String,
    /// With an index: the generation of the earlier run that holds it (`None`: this run).
    pub first_generation: Option<u32>,
}

/// What a document's home worker writes its row from: the document's verdict, or one of
/// its repeated paragraphs (keyed by the document and 0 for the verdict, the paragraph's
/// number plus one for a paragraph, so a document's verdict comes before its paragraphs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DocItem {
    /// Its verdict.
    Verdict(Verdict),
    /// A paragraph left out of it.
    Repeated(RepeatedParagraph),
    /// Its paragraph (of this number) is the first occurrence of one a later document left
    /// out: removing it would lose that paragraph.
    HeldLater,
}

impl MemSize for DocItem {
    fn mem_size(&self) -> usize {
        match self {
            DocItem::Verdict(v) => v.mem_size(),
            DocItem::Repeated(r) => {
                std::mem::size_of::<DocItem>() + r.seen.id.capacity() + r.first_id.capacity()
            }
            DocItem::HeldLater => std::mem::size_of::<DocItem>(),
        }
    }
}
