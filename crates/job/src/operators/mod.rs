//! The dataflow's operators, one per file, each an extension trait over a timely stream.
//!
//! The source sends its input in rounds (timely times) so that only a few rounds are in
//! flight at once. Every grouping operator collects its records across all rounds in
//! sorted runs that spill to disk past a limit ([`collect`]), and reduces them once its
//! input is complete, a batch per activation; its output is all at the first time. Each
//! module states what it holds in memory.
//!
//! May use: `error`, `settings`, `storage`, `reporting`, `input`.

mod assign_clusters;
pub(crate) mod buckets;
#[cfg(test)]
mod cluster_reference;
pub(crate) mod collect;
mod dedup_ids;
pub(crate) mod doc_store;
mod exact_groups;
mod gather_reports;
pub(crate) mod index;
mod keep_units;
mod name_clusters;
pub(crate) mod propagate;
mod reduce_buckets;
mod sign_docs;
#[cfg(test)]
pub(crate) mod testing;
mod verify_candidates;
mod write_documents;
mod write_kept;
mod write_parts;

pub use assign_clusters::assign_clusters;
pub use collect::{Keyed, Spill};
pub use dedup_ids::{DedupIds, IdOutcome};
pub use doc_store::{DocStore, StoreDocs, StoreKey, Stored, count_in, doc_in, representative_in};
pub use exact_groups::{ExactGroups, Grouped};
pub use gather_reports::GatherReports;
pub use index::{
    FetchIndexed, IndexKey, IndexMatch, LinkClusters, ProbeIndex, SizeJoined, VerifyIndexed,
};
pub use keep_units::KeepUnits;
pub use name_clusters::NameClusters;
pub use reduce_buckets::ReduceBuckets;
pub use sign_docs::SignDocs;
pub use verify_candidates::{Near, VerifyCandidates};
pub use write_documents::WriteDocuments;
pub use write_kept::WriteKept;
pub use write_parts::{PartSink, WritePairs};
