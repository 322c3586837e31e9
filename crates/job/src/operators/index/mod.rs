//! Deduplicating against the index of earlier runs (`--index`), and adding this run to it.
//!
//! Three stages, after the document store:
//!
//! 1. [`ProbeIndex`](probe::ProbeIndex): the keys of this run's representatives (bands or block tables, and
//!    a content key for exact copies), exchanged by key partition. For each partition, in
//!    key order, the worker writes the new generation's key part and probes the same
//!    partition of every segment of the index ([`neardup_io::index::probe_keys`]); an
//!    indexed document sharing a key with a new one makes a candidate. Holds: its spill
//!    limit of keys, and one partition's keys at a time (a sixty-fourth of the run's keys).
//! 2. [`FetchIndexed`](fetch::FetchIndexed): candidates exchanged by the indexed document's segment and docs
//!    part; for each part, the indexed documents wanted are read at once
//!    ([`neardup_io::index::fetch_docs`]) and sent to the new document's home worker.
//!    Holds: its spill limit of candidates, and one part's wanted documents.
//! 3. [`VerifyIndexed`](verify::VerifyIndexed): at the new document's home worker, a merge join with the
//!    signatures of the store; equal content hashes make an exact match, otherwise the
//!    signatures are compared as for pairs within the run. Holds: its spill limit.
//!
//! Matches then reach the clusters in [`LinkClusters`](link::LinkClusters): each match is tied to the new
//! document's cluster (or the document alone), keyed by the cluster's kept document, so
//! that naming the cluster can hand every member the earlier kept document instead. As
//! several clusters of this run may join one earlier cluster, [`SizeJoined`](size::SizeJoined) then gathers
//! their members by the earlier kept document and gives them all one size.
//!
//! With paragraph-level dedup, `FirstOccurrences` probes the `paragraphs/` tables of the
//! index by key partition, and [`WriteHeld`](held::WriteHeld) writes the first occurrences
//! this run's kept documents hold to the new generation's `paragraphs/`.
//!
//! Its files use what `operators` may use (its `mod.rs`), and the other operators.

pub(crate) mod docs;
pub(crate) mod fetch;
pub(crate) mod held;
pub(crate) mod link;
pub(crate) mod probe;
pub(crate) mod records;
pub(crate) mod size;
pub(crate) mod verify;
