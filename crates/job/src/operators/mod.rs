//! The dataflow's operators, one per file, each an extension trait over a timely stream.
//!
//! The source sends its input in rounds (timely times) so that only a few rounds are in
//! flight at once. Every grouping operator collects its records across all rounds in
//! sorted runs that spill to disk past a limit ([`collect`]), and reduces them once its
//! input is complete, a batch per activation; its output is all at the first time. Each
//! module states what it holds in memory.
//!
//! May use: `error`, `settings`, `storage`, `reporting`, `input`.

pub(crate) mod assign_clusters;
pub(crate) mod buckets;
#[cfg(test)]
pub(crate) mod cluster_reference;
pub(crate) mod collect;
pub(crate) mod dedup_ids;
pub(crate) mod doc_store;
pub(crate) mod env;
pub(crate) mod exact_groups;
pub(crate) mod failure;
pub(crate) mod first_occurrences;
pub(crate) mod gather_reports;
pub(crate) mod index;
pub(crate) mod keep_units;
pub(crate) mod kept_paragraphs;
pub(crate) mod name_clusters;
pub(crate) mod propagate;
pub(crate) mod reduce_buckets;
pub(crate) mod sign_docs;
pub(crate) mod sink;
pub(crate) mod store;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod verify_candidates;
pub(crate) mod write_documents;
pub(crate) mod write_kept;
pub(crate) mod write_parts;
