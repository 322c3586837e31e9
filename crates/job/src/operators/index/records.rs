//! The records that flow between the index stages.

use neardup_core::DocId;
use neardup_io::index::{IndexRef, IndexedDoc};
use serde::{Deserialize, Serialize};

use crate::operators::collect::Keyed;
use crate::storage::records::{Assignment, IndexedKept};
use crate::storage::spill::MemSize;

/// A key of a new representative, for the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexKey {
    /// A band or table key, or the content key.
    pub key: u64,
    /// The representative.
    pub doc: DocId,
}

impl MemSize for IndexKey {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// A new representative and an indexed document that share a key, ordered for fetching:
/// by the indexed document's segment, docs part, generation and `doc_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexCandidate {
    /// The indexed document's segment: its first generation.
    pub segment: u32,
    /// Its docs part.
    pub part: u32,
    /// The indexed document.
    pub old: IndexRef,
    /// The new document.
    pub new: DocId,
}

impl MemSize for IndexCandidate {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// An indexed document on its way to a new document it may match.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexedSide(pub IndexedDoc);

impl MemSize for IndexedSide {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.0.id.capacity()
            + self.0.source.capacity()
            + self.0.kept_id.capacity()
            + self.0.signature.capacity()
    }
}

/// A new document verified as a duplicate of an indexed one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexMatch {
    /// The new document.
    pub new: DocId,
    /// The indexed document it matches.
    pub old: IndexRef,
    /// The kept document of the indexed one's cluster.
    pub kept: IndexRef,
    /// Its id.
    pub kept_id: String,
    /// Its content hash.
    pub kept_content: u128,
    /// Jaccard estimate or `1 - hamming/64`; 1 for equal texts.
    pub similarity: f64,
}

impl MemSize for IndexMatch {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>() + self.kept_id.capacity()
    }
}

/// An earlier cluster that a new cluster joins, on its way to the new cluster's kept
/// document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OldLink {
    /// The earlier cluster's kept document.
    pub kept: IndexRef,
    /// Its id.
    pub kept_id: String,
    /// Its content hash.
    pub kept_content: u128,
    /// The new document whose match made the link, when it matched the kept document
    /// itself (so it is verified with it).
    pub direct: Option<DocId>,
}

impl MemSize for OldLink {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>() + self.kept_id.capacity()
    }
}

/// What the worker of an earlier cluster learns from one cluster of this run that joins
/// it, keyed by `(earlier kept document, tag, new DocId)`: tag 0 for the count, keyed by
/// the new cluster's kept document, sorted before tag 1 for the members.
pub type JoinedKey = Keyed<(IndexRef, u8, DocId), JoinedIn>;

/// A cluster of this run's part in the earlier cluster it joins.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum JoinedIn {
    /// The number of this run's documents in that cluster.
    Count(u64),
    /// A member's verdict, waiting for the earlier cluster's size.
    Member(Assignment),
}

impl MemSize for JoinedIn {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                JoinedIn::Count(_) => 0,
                JoinedIn::Member(a) => {
                    a.kept_id.capacity()
                        + a.indexed.as_ref().map_or(0, |ik| {
                            std::mem::size_of::<IndexedKept>() + ik.kept_id.capacity()
                        })
                }
            }
    }
}
